/* generated/tg_structured.c: glue kernels for structured_delegate and autogen entries. */
#include <string.h>

#include "emit_internal.h"

static const tga_arg *out_arg(const tga_op *op) {
    for (int i = 0; i < op->nargs; i++)
        if (tga_is_out_arg(op->args[i].arg)) return &op->args[i];
    return NULL;
}

static const char *glue_body(tge_ctx *c, const tga_op *op, const tga_kernel *k) {
    if (k->origin == TGA_KERNEL_STRUCTURED) return tgs_fmt(c->arena, "return %s(%s);", k->target, k->call_args);
    const tga_arg *out = out_arg(op);
    return tgs_fmt(c->arena,
                   "tg_tensor *tg_result = %s(%s);\n"
                   "if (!tg_result) return NULL;\n"
                   "tg_tensor *tg_out = tg__copy_to_out(\"%s\", %s, tg_result);\n"
                   "tg_release(tg_result);\n"
                   "return tg_out;",
                   k->target, k->call_args, op->opname, out ? out->name : "NULL");
}

static const char *glue(tge_ctx *c, const tgt_template *t, const tga_op *op, const tga_kernel *k) {
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(c->arena, op->f));
    tgt_set(e, "guard_begin", k->cuda_only ? "#ifdef TG_WITH_CUDA" : "");
    tgt_set(e, "guard_end", k->cuda_only ? "#endif" : "");
    tgt_set(e, "decl", tga_kernel_decl(c->arena, op, k->symbol));
    tgt_set(e, "body", glue_body(c, op, k));
    return tgt_render_str(t, e, c->arena);
}

void tge_emit_structured(tge_ctx *c) {
    tgt_template one = tge_template(c, "tg_structured_glue.c.in");
    tgs_list items = { 0 };
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        for (int k = 0; k < op->nkernels; k++)
            if (op->kernels[k].origin == TGA_KERNEL_STRUCTURED ||
                op->kernels[k].origin == TGA_KERNEL_AUTOGEN)
                tgs_list_add(&items, c->arena, glue(c, &one, op, &op->kernels[k]));
    }
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "glue", &items);
    tge_render_file(c, "tg_structured.c.in", e, c->opts->out_dir, "tg_structured.c");
}
