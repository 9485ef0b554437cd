/* Forward-mode formulas (derivatives.yaml keys naming outputs: `result:`, `result1:`, a
 * return's name, or several of them jointly): type-checked, and split into the terms tgen
 * compiles (tgf_fw_formula; joint keys are not compiled). Their scope is
 * the backward one less the gradients (grad, grads, grad_input_mask, retain_variables), plus
 * `<arg>_p` (the argument's primal value, of its type), `<arg>_t` (its tangent: Tensor,
 * Tensor?, Tensor[] or Tensor?[] as the argument) and `original_self_p`/`_t` (an in-place
 * op's self before it ran). `auto_element_wise` and `auto_linear` (PyTorch derives the formula
 * from the backward one) are accepted as whole formulas. Each formula gives the tangent of its
 * output: a Tensor, a Tensor[] for a Tensor[] output (or a Tensor, element i's, for
 * _foreach_ operators), a tuple of one per key for a joint key. */
#include <string.h>

#include "formula/formula_forms.h"
#include "formula/formula_plugins.h"
#include "base/strbuf.h"

static bool is_auto(const char *name)
{
    return !strcmp(name, "auto_element_wise") || !strcmp(name, "auto_linear");
}

/* <arg>_t compiles to a field of the forward context: the argument's tangent. */
static val lower_tangent(cc *c, const tgf_node *n, val a0)
{
    return plain(
        tgs_fmt(c->a, "n->%s_t", tga_ident(c->a, c->d->op->f->schema.args[n->index].name)));
}

static const tgf_form tangent_form = { "tangent", TGF_FORM_SYNTAX, .lower = lower_tangent };

/* `<arg>_p`, `<arg>_t`, `original_self_p` ...: NULL (c->failed false) when the name is none of
 * them. */
static tgf_node *forward_name(tgf_checker *c, const tgm_expr *e)
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
    if (!tga_kind_is_tensor(kind)) {
        tgf_fail(c, e->offset, "'%s': '%s' is a %s argument of '%s'; only tensors have tangents",
                 name, arg, tgf_kind_text(kind), s->full_name);
        return NULL;
    }
    tgf_node *n = tgf_builtin_node(c, e, &tangent_form, "tangent", kind, NULL, 0);
    n->index = ai;
    return n;
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

/* The arguments whose tangents node n reads (bit per argument index). */
static uint64_t tangents_read(const tgf_node *n)
{
    uint64_t r = 0;
    if (n->kind == TGF_BUILTIN && n->form == &tangent_form && n->index < 64)
        r |= (uint64_t)1 << n->index;
    for (int i = 0; i < n->nargs; i++) r |= tangents_read(n->args[i]);
    return r;
}

/* `text` with every identifier `from` (not a member: `.grad`) replaced by `to`. */
static const char *replace_ident(tgm_arena *a, const char *text, const char *from, const char *to)
{
    tgs_buf b;
    tgs_buf_init(&b);
    size_t n = strlen(from);
    for (const char *p = text; *p;) {
        bool start =
            p == text ||
            !(p[-1] == '_' || p[-1] == '.' || p[-1] == ':' || (p[-1] >= 'a' && p[-1] <= 'z') ||
              (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9'));
        char after = p[n];
        bool end = !(after == '_' || (after >= 'a' && after <= 'z') ||
                     (after >= 'A' && after <= 'Z') || (after >= '0' && after <= '9'));
        if (start && !strncmp(p, from, n) && end) {
            tgs_puts(&b, to);
            p += n;
        } else {
            tgs_printf(&b, "%c", *p++);
        }
    }
    return tgs_finish(&b, a);
}

static const tgf_node *find_helper(const tgf_node *n)
{
    if (n->kind == TGF_HELPER) return n;
    for (int i = 0; i < n->nargs; i++) {
        const tgf_node *h = find_helper(n->args[i]);
        if (h) return h;
    }
    return NULL;
}

/* The text auto_element_wise / auto_linear stand for (PyTorch's gen_variable_type rules):
 * the sum over the differentiable inputs of their backward formula with `grad` replaced by
 * the input's tangent; the operator itself called on the tangents. NULL with *why set when
 * the entry has no such form. */
static const char *auto_text(tgf_checker *c, const char *kind, const char **why)
{
    const tga_op *op = c->d->op;
    const tgm_derivative *dv = c->d->dv;
    tgs_list parts = { 0 };
    if (!strcmp(kind, "auto_element_wise")) {
        for (int k = 0; k < dv->nformulas; k++) {
            const tgm_formula *f = &dv->formulas[k];
            if (f->nvars != 1 || !strcmp(f->text, "non_differentiable")) continue;
            if (strstr(f->text, "not_implemented")) {
                *why = "auto_element_wise over a backward formula that is not implemented";
                return NULL;
            }
            const char *t = tgs_fmt(c->a, "%s_t", f->var_names[0]);
            tgs_list_addf(&parts, c->a, "(%s)", replace_ident(c->a, f->text, "grad", t));
        }
        if (!parts.n) {
            *why = "auto_element_wise without backward formulas";
            return NULL;
        }
        return tgs_list_join(&parts, c->a, " + ");
    }
    for (int i = 0; i < op->nargs; i++) {
        const char *name = op->f->schema.args[i].name;
        /* Only the differentiable inputs (a backward formula's key): an index stays itself. */
        bool differentiable = false;
        for (int k = 0; k < dv->nformulas && !differentiable; k++)
            for (int v = 0; v < dv->formulas[k].nvars; v++)
                differentiable |= !strcmp(dv->formulas[k].var_names[v], name) &&
                                  strcmp(dv->formulas[k].text, "non_differentiable");
        tgs_list_add(&parts, c->a,
                     tga_kind_is_tensor(op->args[i].kind) && differentiable
                         ? tgs_fmt(c->a, "%s_t", name)
                         : name);
    }
    return tgs_fmt(c->a, "%s(%s)", op->f->schema.base, tgs_list_join(&parts, c->a, ", "));
}

/* Splits e at its top-level + and - into terms[] (up to max); returns how many. */
static int split_terms(const tgm_expr *e, bool negate, tgf_fw_term *terms, const tgm_expr **exprs,
                       int n, int max)
{
    if (e->kind == TGM_EXPR_BINARY && (e->op == TGM_EOP_ADD || e->op == TGM_EOP_SUB) &&
        n + 2 <= max) {
        n = split_terms(e->args[0], negate, terms, exprs, n, max);
        return split_terms(e->args[1], e->op == TGM_EOP_SUB ? !negate : negate, terms, exprs, n,
                           max);
    }
    terms[n].negate = negate;
    exprs[n] = e;
    return n + 1;
}

#define MAX_TERMS 16

/* Starts checking f, the formula for an output key (or several): parses it and checks its keys;
 * false when there is nothing more to check (an error, or keys validate.c reported). */
static bool begin_one(tgf_checker *c, tgm_formula *f, tgf_fw_formula *out)
{
    const tga_op *op = c->d->op;
    c->f = f;
    c->failed = false;
    c->unchecked = false;
    c->quiet = false;
    out->src = f;
    out->output = -1;
    out->limit = "its formula is not compiled";
    tgf_syntax_error err;
    if (!f->expr && !tgf_parse_formula(c->a, f, &err)) {
        tgf_fail(c, err.offset, "%s", err.msg);
        return false;
    }
    for (int k = 0; k < f->nvars; k++) {
        /* the keys name the entry's outputs (validate.c reported any other) */
        int o = tgm_schema_output_index(&c->d->dv->schema, f->var_names[k]);
        if (o < 0 || o >= op->nrets) return false;
        tga_kind want = op->rets[o].kind;
        if (want != TGA_TENSOR && want != TGA_TENSOR_LIST) {
            tgm_error(f->vars_loc, "output '%s' of '%s' is %s; only tensor outputs have tangents",
                      f->var_names[k], op->f->schema.full_name, tgf_kind_text(want));
            c->errors++;
            return false;
        }
        out->output = o;
    }
    return true;
}

/* Joint keys: checked whole, not compiled. */
static void check_joint(tgf_checker *c, const tgm_formula *f, tgf_fw_formula *out)
{
    out->limit = "a joint forward formula for several outputs";
    tgf_node *root = tgf_check_expr(c, f->expr);
    if (!root || c->unchecked) {
        if (root) c->nunchecked++;
        return;
    }
    if (root->ntuple != f->nvars)
        tgf_fail(c, f->expr->offset,
                 "the joint forward formula for '%s' must give %d tensors (their tangents), "
                 "not %s",
                 f->vars, f->nvars, tgf_type_text(root));
}

/* auto_element_wise / auto_linear, expanded into the formula they stand for and parsed (what
 * does not check in it then makes the formula uncompiled rather than an error); NULL when
 * the entry has no such form (out->limit says why) or after an error. */
static const tgm_expr *expand_auto(tgf_checker *c, const tgm_formula *f, tgf_fw_formula *out)
{
    const char *kind = f->expr->name, *why = NULL;
    const char *text = auto_text(c, kind, &why);
    if (!text) {
        out->limit = why;
        return NULL;
    }
    tgm_formula *g = tgm_alloc(c->a, sizeof *g);
    *g = *f;
    g->text = text;
    g->expr = NULL;
    g->span = NULL;
    tgf_syntax_error err;
    if (!tgf_parse_formula(c->a, g, &err)) {
        tgm_error(f->loc, "%s of '%s' gives `%s`, which does not parse: %s", kind,
                  c->d->op->f->schema.full_name, text, err.msg);
        c->errors++;
        return NULL;
    }
    c->f = g;
    out->src = g;
    c->quiet = true;
    c->quiet_msg = NULL;
    return g->expr;
}

/* Checks term e of f into t: 1 when it gives the tangent and compiles, 0 when it stops the
 * formula (an error, or out->limit says why it is not compiled), -1 when it gives another
 * value and `split` (a scalar term, `scalar + where(...) * self_t`: the caller unsplits). */
static int check_term(tgf_checker *c, const tgm_formula *f, const tgm_expr *e, bool split,
                      tgf_fw_term *t, tgf_fw_formula *out)
{
    tgf_node *root = tgf_check_expr(c, e);
    if (c->quiet && c->failed) {
        out->limit = tgs_fmt(c->a, "its expansion `%s` does not check: %s", c->f->text,
                             c->quiet_msg ? c->quiet_msg : "?");
        c->quiet = false;
        return 0;
    }
    if (!root) return 0;
    if (c->unchecked || (root->type == TGA_UNSUPPORTED && !root->ntuple)) {
        c->nunchecked++;
        out->limit = "it uses a value of a type without a C mapping";
        return 0;
    }
    const char *want = expect_one(c->d, out->output, root);
    if (want && split) return -1;
    if (want) {
        tgf_fail(c, e->offset, "the forward formula for '%s' must give %s (its tangent), not %s",
                 f->vars, want, tgf_type_text(root));
        return 0;
    }
    t->root = root;
    t->tangents = tangents_read(root);
    const tgf_node *h = find_helper(root);
    if (h) {
        out->limit = tgs_fmt(c->a,
                             "it calls '%s' of the autograd vocabulary, which forward "
                             "formulas may not (only operators)",
                             h->callee->f->schema.base);
        return 0;
    }
    const tgf_node *u = tgf_c_unsupported(root);
    if (u) {
        out->limit =
            tgs_fmt(c->a, "tgen cannot compile '%s' (%s) to C yet",
                    u->kind == TGF_BUILTIN && u->c ? u->c : "this value", tgf_kind_text(u->type));
        return 0;
    }
    return 1;
}

/* Splits expr into its terms and checks each; out gets them when every one compiles. */
static void check_terms(tgf_checker *c, const tgm_formula *f, const tgm_expr *expr,
                        tgf_fw_formula *out)
{
    const tgm_expr *exprs[MAX_TERMS];
    tgf_fw_term terms[MAX_TERMS];
    int n = split_terms(expr, false, terms, exprs, 0, MAX_TERMS);
    for (int i = 0; i < n; i++) {
        int r = check_term(c, f, exprs[i], n > 1, &terms[i], out);
        if (r == 0) return;
        if (r < 0) { /* check the formula again as one term */
            n = 1;
            exprs[0] = expr;
            terms[0].negate = false;
            i = -1;
        }
    }
    /* A term that is a list cannot be added to another: only one-term list formulas. */
    if (n > 1 && c->d->op->rets[out->output].kind == TGA_TENSOR_LIST &&
        terms[0].root->type == TGA_TENSOR_LIST) {
        out->limit = "a sum of Tensor[] terms";
        return;
    }
    c->quiet = false;
    out->terms = tgm_alloc(c->a, sizeof *out->terms * (size_t)n);
    memcpy(out->terms, terms, sizeof *terms * (size_t)n);
    out->nterms = n;
    out->limit = NULL;
}

static void check_one(tgf_checker *c, tgm_formula *f, tgf_fw_formula *out)
{
    if (!begin_one(c, f, out)) return;
    if (is_not_implemented(f->expr)) {
        out->limit = f->expr->args[0]->str;
        return;
    }
    if (f->nvars > 1) {
        check_joint(c, f, out);
        return;
    }
    const tgm_expr *expr = f->expr;
    if (expr->kind == TGM_EXPR_NAME && is_auto(expr->name) && !(expr = expand_auto(c, f, out)))
        return;
    check_terms(c, f, expr, out);
}

int tgf_check_forward(tgf_derivs *ds, const tga_ops *ops, tgm_arena *a, int *nformulas)
{
    /* The checker's plug-ins for forward formulas: their names first, then those of backward
     * formulas (formula_deriv.c). */
    static const tgf_plugin *const plugins[] = { &tgf_forward_names, &tgf_cpp_forms, &tgf_operators,
                                                 &tgf_overloads, NULL };
    tgf_checker c = { .a = a, .ops = ops, .plugins = plugins, .vocab = ds->vocab, .forward = true };
    *nformulas = 0;
    for (int i = 0; i < ds->n; i++) {
        tgf_deriv *d = &ds->d[i];
        if (!d->op) continue;
        c.d = d;
        d->nfw = d->dv->nresult;
        d->fw = tgm_alloc(a, sizeof *d->fw * (size_t)(d->nfw + 1));
        for (int k = 0; k < d->dv->nresult; k++) {
            check_one(&c, &d->dv->result_formulas[k], &d->fw[k]);
            (*nformulas)++;
        }
    }
    ds->unchecked += c.nunchecked; /* counted with the backward ones: "not checked: ..." */
    return c.errors;
}

const tgf_plugin tgf_forward_names = { .name = forward_name };
