/* The public API: generated/tg_ops.h (the op enum and an include of every operator's
 * header), generated/tg_op_types.h (result structs) and generated/ops/<op>.h (one per
 * operator: options structs, functions and the macros that fill options with the schema's
 * defaults). */
#include <string.h>

#include "emit/emit_internal.h"

/* `#define tg_add(self, other, ...) tg_add_fn((self), (other), (tg_add_opts){ .alpha = 1,
 * __VA_ARGS__ })`: the defaults first, so the caller's designated initializers override them. */
static const char *options_macro(tge_ctx *c, const tga_op *op)
{
    if (!op->opts_name) return "";
    tgs_list params = { 0 }, args = { 0 }, defaults = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *ca = &op->args[i];
        if (ca->default_expr) {
            tgs_list_addf(&defaults, c->arena, ".%s = %s", ca->name,
                          tge_int_list_default(ca) ? "{ .len = TG__DEFAULT_LEN, .data = NULL }"
                                                   : ca->default_expr);
        } else {
            tgs_list_add(&params, c->arena, ca->name);
            tgs_list_addf(&args, c->arena, "(%s)", ca->name);
        }
    }
    tgs_list_add(&params, c->arena, "...");
    tgs_list_addf(&args, c->arena, "(%s){ %s, __VA_ARGS__ }", op->opts_name,
                  tgs_list_join(&defaults, c->arena, ", "));
    return tgs_fmt(c->arena, "#define %s_%s(%s) \\\n    %s(%s)", op->prefix, op->cname,
                   tgs_list_join(&params, c->arena, ", "), op->fn_name,
                   tgs_list_join(&args, c->arena, ", "));
}

/* The doc comment's body: the spec's `doc:` wrapped at ~92 columns, plus ownership notes. */
static const char *doc_lines(tge_ctx *c, const tga_op *op)
{
    tgs_buf b;
    tgs_buf_init(&b);
    const char *doc = op->f->doc ? tgs_c_comment(c->arena, op->f->doc) : NULL;
    if (doc && *doc) {
        int col = 0;
        tgs_puts(&b, " *");
        col = 2;
        const char *p = doc;
        while (*p) {
            while (*p == ' ' || *p == '\n' || *p == '\t') p++;
            if (!*p) break;
            size_t n = strcspn(p, " \n\t");
            if (col + 1 + (int)n > 92 && col > 2) {
                tgs_puts(&b, "\n *");
                col = 2;
            }
            tgs_puts(&b, " ");
            tgs_putn(&b, p, n);
            col += 1 + (int)n;
            p += n;
        }
        tgs_puts(&b, "\n");
    }
    const tgm_schema *s = &op->f->schema;
    if (op->nrets == 0) /* `-> ()`: a status */
        tgs_printf(&b, " * %sReturns 0, or -1 with the error recorded.\n",
                   s->inplace                    ? "In place. "
                   : op->f->kind == TGM_KIND_OUT ? "Writes into the out= tensors. "
                                                 : "");
    else if (s->inplace) tgs_puts(&b, " * In place: returns a new reference to `self`.\n");
    else if (op->f->kind == TGM_KIND_OUT)
        tgs_puts(&b, " * Writes into the out= tensor and returns a new reference to it.\n");
    tgs_printf(&b, " * Kernel%s: ", op->nkernels == 1 ? "" : "s");
    for (int i = 0; i < op->nkernels; i++)
        tgs_printf(&b, "%s%s", i ? ", " : "", op->kernels[i].symbol);
    tgs_puts(&b, ".");
    return tgs_finish(&b, c->arena);
}

static const char *op_decl(tge_ctx *c, const tgt_template *t, const tga_op *op)
{
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(c->arena, op->f));
    tgt_set(e, "doc", doc_lines(c, op));
    tgt_set(e, "opts_struct", tga_opts_struct(c->arena, op));
    tgs_list arrays = { 0 };
    for (int i = 0; i < op->nargs; i++)
        if (op->args[i].default_array)
            tgs_list_addf(&arrays, c->arena, "extern const %s %s[];",
                          tga_list_elem_ctype(op->args[i].kind), op->args[i].default_array);
    tgt_set_list(e, "default_arrays", &arrays);
    tgt_setf(e, "prototype", "%s;", tga_public_prototype(c->arena, op));
    tgt_set(e, "macro", options_macro(c, op));
    return tgt_render_str(t, e, c->arena);
}

/* Result structs, each once (several ops share tg_values_indices). */
static void result_structs(tge_ctx *c, tgs_list *out)
{
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        if (!op->ret_struct) continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen =
                c->ops.ops[j].ret_struct && strcmp(c->ops.ops[j].ret_struct, op->ret_struct) == 0;
        if (seen) continue;
        tgs_buf b;
        tgs_buf_init(&b);
        tgs_printf(&b, "typedef struct %s {\n", op->ret_struct);
        for (int r = 0; r < op->nrets; r++)
            tgs_printf(&b, "    %s;\n", tga_cdecl(c->arena, op->rets[r].kind, op->rets[r].name));
        tgs_printf(&b, "} %s;\n\n", op->ret_struct);
        tgs_list_add(out, c->arena, tgs_finish(&b, c->arena));
    }
}

void tge_emit_ops_h(tge_ctx *c)
{
    tgs_list enums = { 0 }, structs = { 0 }, headers = { 0 };
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        tgs_list_addf(&enums, c->arena, "%s,   /* %s */", op->enum_name,
                      tgs_c_comment(c->arena, op->f->schema.full_name));
    }
    result_structs(c, &structs);
    if (structs.n == 0) tgs_list_add(&structs, c->arena, "/* (none) */\n");
    tgt_env *types = tge_env(c);
    tgt_set_list(types, "result_structs", &structs);
    tgt_set(types, "int_constants", tga_int_constants(c->arena));
    tge_render_file(c, "tg_op_types.h.in", types, c->opts->out_dir, tge_out_name(c, "op_types.h"));

    /* One header per operator: its entries' declarations, in spec order. */
    tgt_template decl = tge_template(c, "tg_ops_decl.h.in");
    int ngroups = 0;
    const tge_group *groups = tge_groups(c, &ngroups);
    for (int g = 0; g < ngroups; g++) {
        tgs_list decls = { 0 };
        for (int i = 0; i < groups[g].n; i++)
            tgs_list_add(&decls, c->arena, op_decl(c, &decl, groups[g].ops[i]));
        tgt_env *e = tge_env(c);
        tgt_set(e, "base", groups[g].base);
        tgt_set(e, "guard", tge_guard_name(c, groups[g].base));
        tgt_set_list(e, "op_decls", &decls);
        tge_render_file(c, "tg_ops_op.h.in", e, c->opts->out_dir,
                        tgs_fmt(c->arena, "%s/%s.h", tge_op_dir(c, "ops"), groups[g].base));
        tgs_list_addf(&headers, c->arena, "#include \"%s/%s.h\"", tge_op_dir(c, "ops"),
                      groups[g].base);
    }
    if (headers.n == 0) tgs_list_add(&headers, c->arena, "/* (none) */");
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "op_enum", &enums);
    tgt_set_list(e, "op_headers", &headers);
    tge_render_file(c, "tg_ops.h.in", e, c->opts->out_dir, tge_out_name(c, "ops.h"));
}
