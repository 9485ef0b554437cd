/* generated/tg_boxed_<k>.c: one boxed caller per operator, in the shard of its group; and, for
 * tensorgen's own spec, generated/tg_boxing.h: the boxing helpers of the schema types, from the
 * type table. */
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

/* ------------------------------------------------------------------ tg_boxing.h */

/* C text of a table value as an expression of type ctype: a brace list becomes a compound
 * literal ("(tg_int_list){ .len = TG_NONE_LEN, .data = NULL }"). */
static const char *typed(tge_ctx *c, const char *ctype, const char *value)
{
    return value[0] == '{' ? tgs_fmt(c->arena, "(%s)%s", ctype, value) : value;
}

/* The holes of kind k's templates. An optional kind's plain kind is the one whose suffix is
 * its own without "opt_". */
static tgt_env *kind_env(tge_ctx *c, tga_kind k)
{
    const tga_kind_info *r = tga_kind_row(k);
    tgt_env *e = tge_env(c);
    tgt_set(e, "spellings", r->spellings);
    tgt_set(e, "spelling", tga_kind_text(c->arena, k));
    tgt_set(e, "ctype", r->ctype);
    tgt_set(e, "v_decl", tga_cdecl(c->arena, k, "v"));
    tgt_set(e, "out_decl", tga_cdecl(c->arena, k, "*out"));
    tgt_set(e, "suffix", r->suffix);
    tgt_set(e, "tag", r->tag);
    tgt_set(e, "member", tga_kind_member(k));
    tgt_set(e, "none", typed(c, r->ctype, r->none));
    tgt_set(e, "error", r->error);
    tgt_setf(e, "empty", "tg__empty_%s_storage", r->suffix);
    if (!tga_kind_is_optional(k)) return e;
    const char *plain = r->suffix + strlen("opt_");
    tga_kind pk = TGA_UNSUPPORTED;
    for (int i = TGA_UNSUPPORTED + 1; i < TGA_KIND_COUNT && !pk; i++)
        if (!strcmp(tga_box_suffix((tga_kind)i), plain)) pk = (tga_kind)i;
    const char *at = strstr(r->some, "%s");
    const char *some =
        at ? tgs_fmt(c->arena, "%.*svalue%s", (int)(at - r->some), r->some, at + 2) : "value";
    tgt_set(e, "plain", plain);
    tgt_set(e, "plain_spelling", pk ? tga_kind_text(c->arena, pk) : plain);
    tgt_set(e, "plain_decl", tga_cdecl(c->arena, pk ? pk : k, "value"));
    tgt_set(e, "some", typed(c, r->ctype, some));
    return e;
}

/* Renders templates/tg_boxing_<name>.h.in for kind k into out. */
static void render_kind(tge_ctx *c, tgs_list *out, const char *name, tga_kind k)
{
    tgt_template t = tge_template(c, tgs_fmt(c->arena, "tg_boxing_%s.h.in", name));
    const char *text = tgt_render_str(&t, kind_env(c, k), c->arena);
    if (text) tgs_list_add(out, c->arena, text);
}

/* The helpers of every kind whose form is generated: the plain kinds first, then the optional
 * ones (which call their plain kind's). Only for tensorgen's own spec: an operator library's
 * generated code includes the installed tg_boxing.h through dispatch/op_glue.h. */
static void emit_boxing(tge_ctx *c)
{
    if (c->model->ns) return;
    tgs_list items = { 0 };
    for (int pass = 0; pass < 2; pass++)
        for (int i = TGA_UNSUPPORTED + 1; i < TGA_KIND_COUNT; i++) {
            tga_kind k = (tga_kind)i;
            const char *form = tga_kind_row(k)->form;
            if (!strcmp(form, "written") || !strcmp(form, "opt_written") || !strcmp(form, "alias"))
                continue;
            if (tga_kind_is_optional(k) != (pass == 1)) continue;
            render_kind(c, &items, form, k);
            if (tga_kind_is_optional(k)) render_kind(c, &items, "optional", k);
            if (tga_kind_is_result(k))
                render_kind(c, &items, tgs_fmt(c->arena, "%s_result", form), k);
        }
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "kinds", &items);
    tge_render_file(c, "tg_boxing.h.in", e, c->opts->out_dir, tge_out_name(c, "boxing.h"));
}

void tge_emit_boxed(tge_ctx *c)
{
    emit_boxing(c);
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
