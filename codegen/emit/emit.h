/* The emitters' entry point: everything tgen writes from a validated model. */
#ifndef TGEN_EMIT_H
#define TGEN_EMIT_H

#include "spec/model.h"

typedef struct tge_options {
    const char *templates_dir; /* templates/ */
    const char *out_dir;       /* generated/ */
    const char *docs_dir;      /* docs/ (the operator reference goes here); NULL: skip */
    const char *source_desc; /* "specs/native_functions.yaml, specs/derivatives.yaml" for headers */
} tge_options;

/* Renders every output file in memory first; reports errors as `file:line:col: error:` against
 * the spec entry at fault (unsupported C type, C-name collision, missing kernel name, ...) and,
 * only when there were none, writes each file whose text changed (via a temporary file and
 * rename, so no partial output is ever left). Returns the number of errors. */
int tge_emit_all(const tgm_model *m, const tge_options *o);

#endif
