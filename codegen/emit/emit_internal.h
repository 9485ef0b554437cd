/* Shared by emit.c (the driver), emit_ctx.c (the context) and the emitters (emit_*.c): the
 * emission context and its output files. Emitters call only emit_ctx.c and the api and
 * template stages, never emit.c or one another. */
#ifndef TGEN_EMIT_INTERNAL_H
#define TGEN_EMIT_INTERNAL_H

#include "api/api.h"
#include "emit/emit.h"
#include "emit/template.h"

typedef struct tge_file {
    const char *path; /* where it is written */
    const char *text; /* its whole content */
} tge_file;

/* The operators sharing one schema base name (`add` for add.Tensor, add_.Tensor, add.out),
 * in spec order: each group gets its own headers, generated/ops/<base>.h and
 * generated/kernels/<base>.h, so that adding an operator adds files instead of changing the
 * ones every kernel includes (docs/generated-code.md, "Headers"). */
typedef struct tge_group {
    const char *base;
    const tga_op **ops;
    int n;
} tge_group;

typedef struct tge_ctx {
    const tgm_model *model;
    const tge_options *opts;
    tgm_arena *arena; /* everything emitted lives here until tge_emit_all returns */
    tga_ops ops;
    const char *source; /* "specs/native_functions.yaml", for the generated-by line */
    tge_file *files;    /* arena array: one per operator header plus the fixed files */
    int nfiles, files_cap;
    tge_group *groups; /* tge_groups(), NULL until first asked */
    int ngroups;
} tge_ctx;

/* ---- the context (emit_ctx.c) ---- */
/* Loads templates/<name>; errors are reported and counted by tgm_error. */
tgt_template tge_template(tge_ctx *c, const char *name);
/* A fresh environment holding ${source} and the library's names: ${prefix} ("tg", "myops"),
 * ${PREFIX} ("TG"), ${table} (its op table, "tg__ops") and ${ns} ("aten", "myops"). */
tgt_env *tge_env(tge_ctx *c);
/* The name of a generated file of this library: "tg_ops.h" (or "myops_ops.h") for "ops.h". */
const char *tge_out_name(tge_ctx *c, const char *suffix);
/* Where the per-operator headers of `kind` ("ops", "kernels") go, relative to the output
 * directory and as they are included: "ops" for tensorgen's own (installed as
 * <prefix>/include/tensorgen/ops/<op>.h), "myops/ops" for a library's, so that a library's
 * operator `relu` does not shadow ops/relu.h on an include path that has both. */
const char *tge_op_dir(tge_ctx *c, const char *kind);
/* Queues `text` for writing to <dir>/<name> (nothing is written before all files render). */
void tge_add_file(tge_ctx *c, const char *dir, const char *name, const char *text);
/* The groups of c->ops in order of first appearance (computed once, kept in c). */
const tge_group *tge_groups(tge_ctx *c, int *n);
/* "ADD" for `add`: the base in an include guard. */
const char *tge_guard_name(tge_ctx *c, const char *base);
/* Renders templates/<template_name> under e and queues it as <dir>/<name>. */
void tge_render_file(tge_ctx *c, const char *template_name, const tgt_env *e, const char *dir,
                     const char *name);
/* item(c, t, op) for every operator in op order, t being templates/<item_template>. */
typedef const char *(*tge_op_item)(tge_ctx *c, const tgt_template *t, const tga_op *op);
tgs_list tge_per_op(tge_ctx *c, const char *item_template, tge_op_item item);
/* The shape of a file that is one list of per-operator items: renders item(c, t, op) for every
 * operator into the list hole `hole` of templates/<file_template>, queued as
 * generated/<name>. */
void tge_render_op_list_file(tge_ctx *c, const char *item_template, tge_op_item item,
                             const char *hole, const char *file_template, const char *name);

/* ---- one emitter per generated file, called by emit.c ---- */
void tge_emit_ops_h(tge_ctx *c);      /* generated/tg_ops.h */
void tge_emit_kernels_h(tge_ctx *c);  /* generated/tg_kernels.h */
void tge_emit_ops_c(tge_ctx *c);      /* generated/tg_ops.c */
void tge_emit_register(tge_ctx *c);   /* generated/tg_register.c */
void tge_emit_structured(tge_ctx *c); /* generated/tg_structured.c */
void tge_emit_boxed(tge_ctx *c);      /* generated/tg_boxed.c */
void tge_emit_op_list(tge_ctx *c);    /* generated/tg_op_list.h */
void tge_emit_autograd(tge_ctx *c);   /* generated/tg_autograd.c, tg_grad_op_list.h */
/* emit_forward.c (forward mode, inside tg_autograd.c): an entry's context struct and compiled
 * forward terms (NULL when none compiles); an operator's tg__fwk_<op> running `below_call` and
 * then its tangents (NULL when no output can have one). */
struct tgf_deriv;
const char *tge_forward_entry_code(tge_ctx *c, const struct tgf_deriv *d);
const char *tge_forward_kernel_code(tge_ctx *c, const tga_op *op, const struct tgf_deriv *d,
                                    const char *below_call);
/* The lines a recording kernel adds: before the op runs (whether inputs have tangents; self's
 * copy for an in-place op), on its failure, and after its history is recorded (the tangents,
 * so that their computation is recorded against the outputs' history); "" for none. node:
 * the kernel's node expression (a Tensor[]-returning op makes it after running: only the lines
 * after use it then). */
void tge_forward_record(tge_ctx *c, const tga_op *op, const struct tgf_deriv *d, const char *node,
                        const char **before, const char **release, const char **after);
void tge_emit_ufunc(tge_ctx *c); /* generated/ufunc/: the kernels of pointwise operators */
void tge_emit_docs(tge_ctx *c);  /* docs/ops.md */
void tge_emit_api(tge_ctx *c);   /* generated/tensorgen_api.yaml (tensorgen's spec only) */

#endif
