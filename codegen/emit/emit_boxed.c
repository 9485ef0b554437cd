/* generated/tg_boxed_<k>.c: one boxed caller per operator, in the shard of its group. */
#include <string.h>

#include "emit/emit_internal.h"

/* "return tg__push_tensors(tg_s, (tg_tensor *[]){ tg_r.values, tg_r.indices }, 2);" */
static const char *push_results(tge_ctx *c, const tga_op *op)
{
    if (op->nrets == 0) return "return tg_r ? -1 : 0;"; /* `-> ()`: the kernel's status */
    if (!op->ret_struct) {
        tga_kind k = op->rets[0].kind;
        if (k == TGA_TENSOR) return "return tg__push_tensors(tg_s, &tg_r, 1);";
        if (k == TGA_TENSOR_LIST) return "return tg__push_tensor_list(tg_s, tg_r);";
        return tgs_fmt(c->arena, "return tg__push_%s(tg_s, tg_r);", tga_box_suffix(k));
    }
    bool all_tensors = true;
    for (int r = 0; r < op->nrets; r++) all_tensors = all_tensors && op->rets[r].kind == TGA_TENSOR;
    tgs_list fields = { 0 };
    if (all_tensors) {
        for (int r = 0; r < op->nrets; r++)
            tgs_list_addf(&fields, c->arena, "tg_r.%s", op->rets[r].name);
        return tgs_fmt(c->arena, "return tg__push_tensors(tg_s, (tg_tensor *[]){ %s }, %d);",
                       tgs_list_join(&fields, c->arena, ", "), op->nrets);
    }
    /* Mixed results: tensors first checked one by one. */
    tgs_buf b;
    tgs_buf_init(&b);
    for (int r = 0; r < op->nrets; r++) {
        if (op->rets[r].kind == TGA_TENSOR)
            tgs_printf(&b, "if (tg__push_tensors(tg_s, &tg_r.%s, 1)) return -1;\n",
                       op->rets[r].name);
        else if (op->rets[r].kind == TGA_TENSOR_LIST)
            tgs_printf(&b, "if (tg__push_tensor_list(tg_s, tg_r.%s)) return -1;\n",
                       op->rets[r].name);
        else
            tgs_printf(&b, "tg__push_%s(tg_s, tg_r.%s);\n", tga_box_suffix(op->rets[r].kind),
                       op->rets[r].name);
    }
    tgs_puts(&b, "return 0;");
    return tgs_finish(&b, c->arena);
}

static const char *caller(tge_ctx *c, const tgt_template *t, const tga_op *op)
{
    tgs_list decls = { 0 }, unbox = { 0 }, args = { 0 };
    if (op->nargs)
        tgs_list_addf(&decls, c->arena, "const tg_ivalue *tg_a = &tg_s->v[tg_s->n - %d];",
                      op->nargs);
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *ca = &op->args[i];
        tgs_list_addf(&decls, c->arena, "%s;", tga_cdecl(c->arena, ca->kind, ca->name));
        tgs_list_addf(
            &unbox, c->arena,
            "if (tg__unbox_%s(&tg_a[%d], &%s)) return tg__boxed_bad_arg(tg_s, %d, %d, \"%s\", \"%s\", \"%s\");",
            tga_box_suffix(ca->kind), i, ca->name, op->nargs, i, op->row_name, ca->arg->name,
            tga_type_text(c->arena, &ca->arg->type));
        tgs_list_add(&args, c->arena, ca->name);
    }
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(c->arena, op->f));
    tgt_set(e, "name", op->boxed_name);
    tgt_setf(e, "nargs", "%d", op->nargs);
    tgt_set(e, "full_name", op->row_name);
    tgt_set_list(e, "decls", &decls);
    tgt_set_list(e, "unbox", &unbox);
    tgt_set(e, "result_decl", tga_var_decl(c->arena, op->ret_ctype, "tg_r"));
    tgt_set(e, "kfn", op->kfn_type);
    tgt_set(e, "args", tgs_list_join(&args, c->arena, ", "));
    tgt_set(e, "push", push_results(c, op));
    return tgt_render_str(t, e, c->arena);
}

void tge_emit_boxed(tge_ctx *c)
{
    static const char *const sections[] = { "callers" };
    tge_shard_kind *k = tge_shard_kind_get(c, "boxed", "tg_boxed.c.in", sections, 1);
    tgt_template t = tge_template(c, "tg_boxed_caller.c.in");
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        int s = tge_shard_of(c, op->f->schema.base);
        tge_shard_include(c, k, s, tge_op_header(c, "kernels", op));
        tge_shard_add(c, k, s, 0, caller(c, &t, op));
    }
}
