/* The emitters' entry point: everything tgen writes from a validated model. */
#ifndef TGEN_EMIT_H
#define TGEN_EMIT_H

#include "model.h"

typedef struct tgen_emit_options {
    const char *templates_dir;    /* templates/ */
    const char *out_dir;          /* generated/ */
    const char *docs_dir;         /* docs/ (the operator reference goes here); NULL: skip */
    const char *source_desc;      /* "specs/native_functions.yaml, specs/derivatives.yaml" for headers */
} tgen_emit_options;

/* Renders every output file in memory first; reports errors as `file:line:col: error:` against
 * the spec entry at fault (unsupported C type, C-name collision, missing kernel name, ...) and,
 * only when there were none, writes each file whose text changed (via a temporary file and
 * rename, so no partial output is ever left). Returns the number of errors. */
int tgen_emit_all(const tgm_model *m, const tgen_emit_options *o);

#endif
