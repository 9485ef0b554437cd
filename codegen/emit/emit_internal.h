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

typedef struct tge_shard_kind tge_shard_kind;

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
    int nshards;              /* tge_nshards(), 0 until first asked */
    tge_shard_kind **sharded; /* the kinds of sharded file, in the order first asked */
    int nsharded, sharded_cap;
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
/* The op table row of op (emitted in its shard of <prefix>_ops_<k>.c): "tg__row_add". */
const char *tge_row_name(tge_ctx *c, const tga_op *op);
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

/* ---- shards (emit_shard.c; docs/generated-code.md, "Shards") ----
 * The sources that grow with the operator count are written in shards by operator group,
 * torchgen's write_sharded: group `base` always lands in shard tge_shard_of(c, base) of every
 * kind, so that adding an operator rewrites one shard of each and recompiles nothing else. A
 * shard includes only the headers of what it names. Emitters add code to the named sections
 * of a kind's shards; emit.c renders every shard once all emitters ran, as
 * <prefix>_<kind>_<k>.c (<prefix>_<kind>.c when there is one shard), and removes the shards
 * of an earlier run that this one did not write. */
/* How many shards each kind has: a power of two, about 48 groups a shard (one for a small
 * library); it changes only when the operator count doubles. */
int tge_nshards(tge_ctx *c);
int tge_shard_of(tge_ctx *c, const char *base);
/* The kind `kind` ("ops", "autograd"), rendered through templates/<file_template> with one
 * list hole per section, ${includes} and ${shard}; made on first use. */
tge_shard_kind *tge_shard_kind_get(tge_ctx *c, const char *kind, const char *file_template,
                                   const char *const *sections, int nsections);
void tge_shard_add(tge_ctx *c, tge_shard_kind *k, int shard, int section, const char *text);
/* The same, unless the shard has the text already (a declaration several items need). */
void tge_shard_add_once(tge_ctx *c, tge_shard_kind *k, int shard, int section, const char *text);
/* `#include "<header>"` in the shard, once. */
void tge_shard_include(tge_ctx *c, tge_shard_kind *k, int shard, const char *header);
/* The header of op's group of `dir` ("ops", "kernels"): its library's, or tensorgen's for an
 * operator a library imports. */
const char *tge_op_header(tge_ctx *c, const char *dir, const tga_op *op);
/* Whether an argument is an int list option whose default is a list, not None: its options
 * macro passes TG__DEFAULT_LEN and the function puts the default in (emit_ops_c.c). */
bool tge_int_list_default(const tga_arg *ca);
/* For emit.c: renders every shard into the context's files; whether a file name is that of
 * a shard of one of the kinds (one an earlier run wrote and this one did not is removed). */
void tge_render_shards(tge_ctx *c);
bool tge_is_shard_name(tge_ctx *c, const char *file_name);

/* ---- one emitter per generated file, called by emit.c ---- */
/* The sections of the "ops" shards (<prefix>_ops_<k>.c): the int list defaults of options
 * structs and the stubs (emit_ops_c.c), the table rows (emit_register.c). */
enum { TGE_OPS_DEFAULTS, TGE_OPS_ROWS, TGE_OPS_STUBS, TGE_OPS_SECTIONS };
extern const char *const tge_ops_sections[TGE_OPS_SECTIONS];
void tge_emit_ops_h(tge_ctx *c);      /* generated/tg_ops.h */
void tge_emit_kernels_h(tge_ctx *c);  /* generated/tg_kernels.h */
void tge_emit_ops_c(tge_ctx *c);      /* generated/tg_ops.c */
void tge_emit_register(tge_ctx *c);   /* generated/tg_register.c */
void tge_emit_structured(tge_ctx *c); /* generated/tg_structured.c */
void tge_emit_boxed(tge_ctx *c);      /* generated/tg_boxed.c */
void tge_emit_op_list(tge_ctx *c);    /* generated/tg_op_list.h */
void tge_emit_autograd(tge_ctx *c);   /* generated/tg_autograd.c, tg_grad_op_list.h */
void tge_emit_ufunc(tge_ctx *c);      /* generated/ufunc/: the kernels of pointwise operators */
void tge_emit_docs(tge_ctx *c);       /* docs/ops.md */
void tge_emit_api(tge_ctx *c);        /* generated/tensorgen_api.yaml (tensorgen's spec only) */

#endif
