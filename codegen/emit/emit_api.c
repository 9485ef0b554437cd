/* generated/tensorgen_api.yaml: tensorgen's operators as an operator library sees them (tgen
 * --namespace NS --import FILE, docs/extending.md): every entry's schema, variants and C name,
 * so that a library's derivative formulas can call them, and its generated C names them as
 * tensorgen does. Only for tensorgen's own spec. */
#include "emit/emit_internal.h"

/* A YAML single-quoted scalar ('' for a quote): schemas hold quotes in string defaults. */
static const char *yaml_quoted(tge_ctx *c, const char *s)
{
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_puts(&b, "'");
    for (; *s; s++) {
        if (*s == '\'') tgs_puts(&b, "'");
        tgs_putn(&b, s, 1);
    }
    tgs_puts(&b, "'");
    return tgs_finish(&b, c->arena);
}

static const char *entry(tge_ctx *c, const tgt_template *t, const tga_op *op)
{
    const tgm_func *f = op->f;
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", yaml_quoted(c, tga_schema_line(c->arena, f)));
    tgt_set(e, "variants",
            f->variant_method && f->variant_function ? "function, method"
            : f->variant_method                      ? "method"
                                                     : "function");
    tgt_set(e, "cname", op->cname);
    return tgt_render_str(t, e, c->arena);
}

void tge_emit_api(tge_ctx *c)
{
    if (c->model->ns) return;
    tge_render_op_list_file(c, "tensorgen_api_entry.yaml.in", entry, "entries",
                            "tensorgen_api.yaml.in", "tensorgen_api.yaml");
}
