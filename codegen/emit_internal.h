/* Shared by emit.c and the emit_*.c files: the emission context and its output files. */
#ifndef TGEN_EMIT_INTERNAL_H
#define TGEN_EMIT_INTERNAL_H

#include "api.h"
#include "emit.h"
#include "template.h"

#define TGE_MAX_FILES 16

typedef struct tge_file {
    const char *path;          /* where it is written */
    const char *text;          /* its whole content */
} tge_file;

typedef struct tge_ctx {
    const tgm_model *model;
    const tgen_emit_options *opts;
    tgm_arena *arena;          /* everything emitted lives here until tgen_emit_all returns */
    tga_ops ops;
    const char *source;        /* "specs/native_functions.yaml", for the generated-by line */
    tge_file files[TGE_MAX_FILES];
    int nfiles;
} tge_ctx;

/* Loads templates/<name>; errors are reported and counted by tgm_error. */
tgt_template tge_template(tge_ctx *c, const char *name);
/* A fresh environment holding ${source}. */
tgt_env *tge_env(tge_ctx *c);
/* Queues `text` for writing to <dir>/<name> (nothing is written before all files render). */
void tge_add_file(tge_ctx *c, const char *dir, const char *name, const char *text);

/* One emitter per generated file. */
void tge_emit_ops_h(tge_ctx *c);         /* generated/tg_ops.h */
void tge_emit_kernels_h(tge_ctx *c);     /* generated/tg_kernels.h */
void tge_emit_ops_c(tge_ctx *c);         /* generated/tg_ops.c */
void tge_emit_register(tge_ctx *c);      /* generated/tg_register.c */
void tge_emit_structured(tge_ctx *c);    /* generated/tg_structured.c */
void tge_emit_boxed(tge_ctx *c);         /* generated/tg_boxed.c */
void tge_emit_op_list(tge_ctx *c);       /* generated/tg_op_list.h */
void tge_emit_autograd(tge_ctx *c);      /* generated/tg_autograd.c, tg_grad_op_list.h */
void tge_emit_docs(tge_ctx *c);          /* docs/ops.md */

/* Helpers used by several emitters (emit.c). */
/* "tg_tensor *tg_add_fn(tg_tensor *self, tg_tensor *other, tg_add_opts opts)" */
const char *tge_public_prototype(tge_ctx *c, const tga_op *op);
/* The positional parameters of the public function ("tg_tensor *self, tg_tensor *other"). */
const char *tge_positional_params(tge_ctx *c, const tga_op *op);
/* The value a public function returns on error: "NULL", "(tg_values_indices){ 0 }", ... */
const char *tge_error_value(tge_ctx *c, const tga_op *op);
/* The options struct of an op with defaulted arguments, each default in a comment ("" else);
 * emit_ops_h.c. */
const char *tge_opts_struct(tge_ctx *c, const tga_op *op);

#endif
