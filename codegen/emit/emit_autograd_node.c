/* A derivative entry's backward node (templates/tg_autograd_node.c.in): the struct holding
 * exactly what its formulas use (by how they use each input and output: the tensor, its sizes,
 * a number...), the formulas compiled to C (formula_c.c), and their table in file order, which
 * the runtime's tg__autograd_apply runs. */
#include "emit/emit_autograd.h"

static const char *node_type(tge_ctx *c, const tgf_deriv *d)
{
    return tgs_fmt(c->arena, "tg__node_%s", d->node_name);
}

/* The fields one input or output needs, by how the formulas use it. */
static void source_fields(tge_ctx *c, const tgf_deriv *d, bool out, int i, tga_kind kind,
                          tgs_list *fields)
{
    unsigned u = out ? d->output_uses[i] : d->input_uses[i];
    tgm_arena *a = c->arena;
    if (u & TGF_USE_TENSOR) {
        tgs_list_addf(fields, a, "tg_saved %s;", tgf_saved_field(a, d, out, i, TGF_USE_TENSOR));
        if (kind == TGA_OPT_TENSOR)
            tgs_list_addf(fields, a, "bool %s_defined;   /* not None */",
                          tgf_saved_field(a, d, out, i, 0));
        return;
    }
    static const struct {
        unsigned use;
        const char *ctype;
    } meta[] = { { TGF_USE_SIZES, "tg_saved_sizes" },
                 { TGF_USE_DIM, "int64_t" },
                 { TGF_USE_NUMEL, "int64_t" },
                 { TGF_USE_DTYPE, "tg_dtype" },
                 { TGF_USE_DEVICE, "tg_device" } };
    for (size_t k = 0; k < sizeof meta / sizeof meta[0]; k++) {
        bool implied = (meta[k].use & (TGF_USE_DIM | TGF_USE_NUMEL)) && (u & TGF_USE_SIZES);
        if ((u & meta[k].use) && !implied)
            tgs_list_addf(fields, a, "%s %s;", meta[k].ctype,
                          tgf_saved_field(a, d, out, i, meta[k].use));
    }
    if (u & TGF_USE_VALUE)
        tgs_list_addf(fields, a, "%s;%s",
                      tga_cdecl(a, kind, tgf_saved_field(a, d, out, i, TGF_USE_VALUE)),
                      kind == TGA_INT_LIST || kind == TGA_OPT_INT_LIST || kind == TGA_STR ||
                              kind == TGA_OPT_STR
                          ? "   /* points after the struct */"
                          : "");
}

static tgs_list node_fields(tge_ctx *c, const tgf_deriv *d)
{
    const tga_op *op = d->op;
    tgs_list fields = { 0 };
    tgs_list_add(&fields, c->arena, "tg_node base;");
    for (int i = 0; i < op->nargs; i++) source_fields(c, d, false, i, op->args[i].kind, &fields);
    for (int i = 0; i < op->nrets; i++) source_fields(c, d, true, i, op->rets[i].kind, &fields);
    for (int k = 0; k < d->nlist_sizes; k++)
        tgs_list_addf(&fields, c->arena, "tg_int_list %s;   /* points after the struct */",
                      tgf_list_size_field(c->arena, d, k));
    return fields;
}

static const char *fn_name(tge_ctx *c, const tgf_deriv *d, const tgf_formula *f)
{
    tgs_list l = { 0 };
    for (int k = 0; k < f->src->nvars; k++) tgs_list_add(&l, c->arena, f->src->var_names[k]);
    return tgs_fmt(c->arena, "%s_%s", d->node_name, tgs_list_join(&l, c->arena, "_"));
}

/* The table row of formula f (tg_ag_formula): when it runs, what it gives, how it is called. */
static const char *formula_row(tge_ctx *c, const tge_ag_templates *t, const tgf_deriv *d,
                               const tgf_formula *f)
{
    tgm_arena *a = c->arena;
    uint64_t needs = 0;
    bool elements = false;
    for (int k = 0; k < f->src->nvars; k++) {
        if (f->edges[k] < 0) elements = true; /* the elements of a Tensor[] */
        else if (f->edges[k] < 64) needs |= UINT64_C(1) << f->edges[k];
        else tgm_error(f->src->loc, "a formula for edge %d: tgen handles 64 at most", f->edges[k]);
    }
    tgt_env *e = tge_env(c);
    tgt_setf(e, "needs", "UINT64_C(0x%llx)", (unsigned long long)needs);
    tgt_setf(e, "from", "%d", elements ? d->nedges : -1);
    tgt_set(e, "what", "NULL");
    tgt_set(e, "fn", fn_name(c, d, f));
    if (f->root->kind == TGF_NOT_IMPL) {
        tgt_set(e, "kind", "TG_AGF_NOT_IMPL");
        tgt_set(e, "edge", "-1");
        tgt_set(e, "what", tgs_c_string(a, f->root->c));
        tgt_set(e, "form", "one");
        tgt_set(e, "fn", "NULL");
    } else if (f->src->nvars > 1 || tgf_formula_may_be_undefined(f)) {
        tgt_set(e, "kind", "TG_AGF_STATUS");
        tgt_set(e, "edge", "-1");
        tgt_set(e, "form", "status");
    } else if (f->edges[0] < 0) {
        tgt_set(e, "kind", "TG_AGF_LIST");
        tgt_setf(e, "edge", "%d", d->nedges);
        tgt_set(e, "what", tgs_c_string(a, f->src->vars));
        tgt_set(e, "form", "list");
    } else {
        tgt_set(e, "kind", "TG_AGF_ONE");
        tgt_setf(e, "edge", "%d", f->edges[0]);
        tgt_set(e, "form", "one");
    }
    return tgt_render_str(&t->formula, e, a);
}

const char *tge_ag_node(tge_ctx *c, const tge_ag_templates *t, const tgf_deriv *d,
                        const char **formulas_name, int *nformulas)
{
    tgt_env *e = tge_env(c);
    tgt_set(e, "node", d->node_name);
    tgt_set(e, "name_text", tgs_c_comment(c->arena, d->dv->name_text));
    *formulas_name = NULL;
    *nformulas = 0;
    if (d->limit) {
        tgt_set(e, "why", tgs_c_comment(c->arena, d->limit));
        return tgt_render_str(&t->not_generated, e, c->arena);
    }
    const char *type = node_type(c, d);
    tgs_list formulas = { 0 }, rows = { 0 }, table = { 0 };
    for (int i = 0; i < d->nformulas; i++) {
        const tgf_formula *f = &d->formulas[i];
        if (!f->root) continue;
        if (f->root->kind != TGF_NOT_IMPL)
            tgs_list_addf(&formulas, c->arena, "%s\n",
                          tgf_compile(c->arena, d, f, fn_name(c, d, f), type));
        tgs_list_add(&rows, c->arena, formula_row(c, t, d, f));
    }
    const char *name = tgs_fmt(c->arena, "%s_formulas", d->node_name);
    *formulas_name = tge_ag_table(c, t, "tg_ag_formula", name, &rows, &table);
    *nformulas = rows.n;
    tgt_set(e, "type", type);
    tgs_list fields = node_fields(c, d);
    tgt_set_list(e, "fields", &fields);
    tgt_set_list(e, "formulas", &formulas);
    tgt_set_list(e, "formula_table", &table);
    return tgt_render_str(&t->node, e, c->arena);
}
