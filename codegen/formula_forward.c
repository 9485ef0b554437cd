/* Forward-mode formulas (derivatives.yaml keys naming outputs: `result:`, `result1:`, a
 * return's name, or several of them jointly): type-checked, not generated yet. Their scope is
 * the backward one less the gradients (grad, grads, grad_input_mask, retain_variables), plus
 * `<arg>_p` (the argument's primal value, of its type), `<arg>_t` (its tangent: Tensor,
 * Tensor?, Tensor[] or Tensor?[] as the argument) and `original_self_p`/`_t` (an in-place
 * op's self before it ran). `auto_element_wise` and `auto_linear` (PyTorch derives the formula
 * from the backward one) are accepted as whole formulas. Each formula gives the tangent of its
 * output: a Tensor, a Tensor[] for a Tensor[] output (or a Tensor, element i's, for
 * _foreach_ operators), a tuple of one per key for a joint key. */
#include <string.h>

#include "formula_check.h"
#include "strbuf.h"

static bool is_tensor_kind(tga_kind k)
{
    return k == TGA_TENSOR || k == TGA_OPT_TENSOR || k == TGA_TENSOR_LIST ||
           k == TGA_OPT_TENSOR_LIST;
}

static bool is_auto(const char *name)
{
    return !strcmp(name, "auto_element_wise") || !strcmp(name, "auto_linear");
}

tgf_node *tgf_forward_name(tgf_checker *c, const tgm_expr *e)
{
    const tga_op *op = c->d->op;
    const tgm_schema *s = &op->f->schema;
    const char *name = e->name;
    size_t len = strlen(name);
    if (is_auto(name)) {
        tgf_fail(c, e->offset, "'%s' must be the whole formula", name);
        return NULL;
    }
    static const char *const backward_only[] = { "grad", "grads", "grad_input_mask",
                                                 "retain_variables" };
    for (size_t i = 0; i < sizeof backward_only / sizeof backward_only[0]; i++)
        if (!strcmp(name, backward_only[i]) && tgm_schema_arg_index(s, name) < 0) {
            tgf_fail(c, e->offset,
                     "'%s' is a name of backward formulas; a forward formula computes its "
                     "output's tangent from the arguments' (<argument>_t)",
                     name);
            return NULL;
        }
    if (len < 3 || name[len - 2] != '_' || (name[len - 1] != 'p' && name[len - 1] != 't'))
        return NULL;
    bool tangent = name[len - 1] == 't';
    const char *stem = tgm_strndup(c->a, name, len - 2);
    /* original_self_p: self before an in-place op wrote it (unless an argument has that name) */
    const char *arg = stem;
    if (!strncmp(stem, "original_", 9) && tgm_schema_arg_index(s, stem) < 0) arg = stem + 9;
    int ai = tgm_schema_arg_index(s, arg);
    if (ai < 0) {
        if (tgm_schema_output_index(s, stem) >= 0)
            tgf_fail(c, e->offset,
                     "'%s': '%s' is an output of '%s'; a forward formula reads its value as "
                     "'%s' and gives its tangent, it has no '_p' or '_t'",
                     name, stem, s->full_name, stem);
        else
            tgf_fail(c, e->offset,
                     "unknown name '%s' ('%s' is not an argument of '%s'; <argument>_p is an "
                     "argument's value, <argument>_t its tangent)",
                     name, stem, s->full_name);
        return NULL;
    }
    tga_kind kind = op->args[ai].kind;
    /* The formulas of _foreach_ operators are element i's: a list's _p and _t are its element. */
    if (!strncmp(s->base, "_foreach_", 9))
        kind = kind == TGA_TENSOR_LIST       ? TGA_TENSOR
               : kind == TGA_OPT_TENSOR_LIST ? TGA_OPT_TENSOR
                                             : kind;
    if (!tangent) {
        tgf_node *n = tgm_alloc(c->a, sizeof *n);
        n->kind = TGF_INPUT;
        n->type = kind;
        n->src = e;
        n->index = ai;
        return n;
    }
    if (!is_tensor_kind(kind)) {
        tgf_fail(c, e->offset, "'%s': '%s' is a %s argument of '%s'; only tensors have tangents",
                 name, arg, tgf_kind_text(kind), s->full_name);
        return NULL;
    }
    return tgf_builtin_node(c, e, "tangent", kind, NULL, 0);
}

/* `not_implemented("...")` (with a reason maybe) as the whole formula. */
static bool is_not_implemented(const tgm_expr *e)
{
    return e->kind == TGM_EXPR_CALL && !strcmp(e->name, "not_implemented") &&
           (e->nargs == 1 || e->nargs == 2) && e->args[0]->kind == TGM_EXPR_STR;
}

/* What a formula for output `o` of op must give: an error message's type, or NULL when
 * root fits. */
static const char *expect_one(const tgf_deriv *d, int o, const tgf_node *root)
{
    tga_kind want = d->op->rets[o].kind;
    if (root->ntuple) return "a Tensor";
    if (want == TGA_TENSOR)
        return root->type == TGA_TENSOR || root->type == TGA_OPT_TENSOR ? NULL : "a Tensor";
    if (want == TGA_TENSOR_LIST) {
        if (root->type == TGA_TENSOR_LIST) return NULL;
        bool per_element = !strncmp(d->op->f->schema.base, "_foreach_", 9);
        if (per_element && (root->type == TGA_TENSOR || root->type == TGA_OPT_TENSOR)) return NULL;
        return per_element ? "a Tensor (element i's tangent) or a Tensor[]" : "a Tensor[]";
    }
    return "";
}

static void check_one(tgf_checker *c, tgm_formula *f)
{
    const tga_op *op = c->d->op;
    c->f = f;
    c->failed = false;
    c->unchecked = false;
    tgf_syntax_error err;
    if (!f->expr && !tgf_parse_formula(c->a, f, &err)) {
        tgf_fail(c, err.offset, "%s", err.msg);
        return;
    }
    for (int k = 0; k < f->nvars; k++) {
        /* the keys name the entry's outputs (validate.c reported any other) */
        int o = tgm_schema_output_index(&c->d->dv->schema, f->var_names[k]);
        if (o < 0 || o >= op->nrets) return;
        tga_kind want = op->rets[o].kind;
        if (want != TGA_TENSOR && want != TGA_TENSOR_LIST) {
            tgm_error(f->vars_loc, "output '%s' of '%s' is %s; only tensor outputs have tangents",
                      f->var_names[k], op->f->schema.full_name, tgf_kind_text(want));
            c->errors++;
            return;
        }
    }
    if ((f->expr->kind == TGM_EXPR_NAME && is_auto(f->expr->name)) || is_not_implemented(f->expr))
        return;
    tgf_node *root = tgf_check_expr(c, f->expr);
    if (!root) return;
    if (root->type == TGA_UNSUPPORTED && !root->ntuple) c->unchecked = true;
    if (c->unchecked) {
        c->nunchecked++;
        return;
    }
    if (f->nvars > 1) {
        if (root->ntuple != f->nvars)
            tgf_fail(c, f->expr->offset,
                     "the joint forward formula for '%s' must give %d tensors (their tangents), "
                     "not %s",
                     f->vars, f->nvars, tgf_type_text(root));
        return;
    }
    const char *want =
        expect_one(c->d, tgm_schema_output_index(&c->d->dv->schema, f->var_names[0]), root);
    if (want)
        tgf_fail(c, f->expr->offset,
                 "the forward formula for '%s' must give %s (its tangent), not %s", f->vars, want,
                 tgf_type_text(root));
}

int tgf_check_forward(tgf_derivs *ds, const tga_ops *ops, tgm_arena *a, int *nformulas)
{
    tgf_checker c = { .a = a, .ops = ops, .vocab = ds->vocab, .forward = true };
    *nformulas = 0;
    for (int i = 0; i < ds->n; i++) {
        tgf_deriv *d = &ds->d[i];
        if (!d->op) continue;
        c.d = d;
        for (int k = 0; k < d->dv->nresult; k++) {
            check_one(&c, &d->dv->result_formulas[k]);
            (*nformulas)++;
        }
    }
    ds->unchecked += c.nunchecked; /* counted with the backward ones: "not checked: ..." */
    return c.errors;
}
