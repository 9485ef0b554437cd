/* The operators of the formula language, desugared (docs/generated-code.md, "Autograd"); the
 * checker's plug-in tgf_operators (formula_plugins.h):
 *
 *   Tensor op Tensor, Tensor op number   a call of add/sub/mul/div, eq/ne/lt/le/gt/ge, resolved
 *                                        like any call (so `grad * 2` is mul.Scalar)
 *   number + Tensor, number * Tensor     the same call with the operands swapped
 *   number - Tensor                      add(neg(t), n)
 *   number / Tensor                      mul(reciprocal(t), n), or mul(pow(t, -1), n) when the
 *                                        spec has no reciprocal
 *   number < Tensor (any comparison)     the mirrored comparison: gt(t, n)
 *   -Tensor                              neg(t)
 *   numbers, bools, ScalarTypes          C operators (int op int stays int, as in C)
 *   *opt, !opt                           an optional's value, whether it is None (C++ forms:
 *                                        formula_forms.c says how they compile)
 *   c ? a : b                            c a bool; a and b of one type (int and Scalar mix to
 *                                        Scalar); only the chosen branch is evaluated */
#include <string.h>

#include "formula/formula_plugins.h"

static const struct {
    tgm_expr_op op;
    const char *c, *fn, *mirror;
} ops[] = {
    { TGM_EOP_ADD, "+", "add", NULL },
    { TGM_EOP_SUB, "-", "sub", NULL },
    { TGM_EOP_MUL, "*", "mul", NULL },
    { TGM_EOP_DIV, "/", "div", NULL },
    { TGM_EOP_EQ, "==", "eq", "eq" },
    { TGM_EOP_NE, "!=", "ne", "ne" },
    { TGM_EOP_LT, "<", "lt", "gt" },
    { TGM_EOP_LE, "<=", "le", "ge" },
    { TGM_EOP_GT, ">", "gt", "lt" },
    { TGM_EOP_GE, ">=", "ge", "le" },
    { TGM_EOP_AND, "&&", NULL, NULL },
    { TGM_EOP_OR, "||", NULL, NULL },
    /* On tensors the element-wise operators of bool tensors; on bools C's. */
    { TGM_EOP_BITAND, "&", "bitwise_and", NULL },
    { TGM_EOP_BITOR, "|", "bitwise_or", NULL },
};

static int find(tgm_expr_op op)
{
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        if (ops[i].op == op) return i;
    return 0;
}

/* The operator's position in the text (between its operands), for errors. */
static size_t op_at(const tgm_expr *e)
{
    const tgm_expr *l = e->args[0];
    return l->offset + l->len;
}

static tgf_node *call2(tgf_checker *c, const tgm_expr *e, const char *fn, tgf_node *a, tgf_node *b)
{
    tgf_node *args[2] = { a, b };
    return tgf_resolve_call(c, e, op_at(e), fn, args, b ? 2 : 1);
}

/* number / Tensor: reciprocal(t) * n. */
static tgf_node *scalar_over_tensor(tgf_checker *c, const tgm_expr *e, tgf_node *n, tgf_node *t)
{
    const tga_op *found[1];
    tgf_node *inv;
    if (tgf_find_ops(c->ops, "reciprocal", found, 1)) {
        inv = call2(c, e, "reciprocal", t, NULL);
    } else {
        inv = call2(c, e, "pow", t, tgf_lit(c, e, TGA_INT, "INT64_C(-1)"));
    }
    if (inv && n->kind == TGF_LIT && (!strcmp(n->c, "INT64_C(1)") || !strcmp(n->c, "1.0")))
        return inv; /* 1 / t */
    return inv ? call2(c, e, "mul", inv, n) : NULL;
}

static tgf_node *binary(tgf_checker *c, const tgm_expr *e, tgf_node *l, tgf_node *r)
{
    int k = find(e->op);
    bool logical = e->op == TGM_EOP_AND || e->op == TGM_EOP_OR;
    bool comparison = ops[k].mirror != NULL;
    if (l->ntuple || r->ntuple) {
        tgf_fail(c, op_at(e), "operator '%s' on a tuple of tensors", ops[k].c);
        return NULL;
    }
    /* A value not yet checkable (an element of a mask): the result is not either, except
     * that a logical operator or a comparison gives a bool. */
    if (l->type == TGA_UNSUPPORTED || r->type == TGA_UNSUPPORTED) {
        tgf_node *args[2] = { l, r };
        return tgf_builtin_node(c, e, NULL, ops[k].c,
                                logical || comparison ? TGA_BOOL : TGA_UNSUPPORTED, args, 2);
    }
    if ((e->op == TGM_EOP_BITAND || e->op == TGM_EOP_BITOR) && l->type == TGA_BOOL &&
        r->type == TGA_BOOL)
        return tgf_cop(c, e, ops[k].c, TGA_BOOL, l, r);
    if (!logical && tgf_is_tensor(l) && (tgf_is_tensor(r) || tgf_is_number(r)))
        return call2(c, e, ops[k].fn, l, r);
    bool bitwise = e->op == TGM_EOP_BITAND || e->op == TGM_EOP_BITOR;
    if (!logical && !bitwise && tgf_is_number(l) && tgf_is_tensor(r)) {
        if (comparison) return call2(c, e, ops[k].mirror, r, l);
        switch (e->op) {
        case TGM_EOP_ADD:
        case TGM_EOP_MUL: return call2(c, e, ops[k].fn, r, l);
        case TGM_EOP_SUB: {
            tgf_node *neg = call2(c, e, "neg", r, NULL);
            return neg ? call2(c, e, "add", neg, l) : NULL;
        }
        default: return scalar_over_tensor(c, e, l, r);
        }
    }
    if (!logical && !bitwise && tgf_is_number(l) && tgf_is_number(r)) {
        tga_kind t = comparison                                 ? TGA_BOOL
                     : l->type == TGA_INT && r->type == TGA_INT ? TGA_INT
                                                                : TGA_DOUBLE;
        return tgf_cop(c, e, ops[k].c, t, l, r);
    }
    bool same_enum = l->type == r->type && (l->type == TGA_BOOL || l->type == TGA_DTYPE ||
                                            l->type == TGA_LAYOUT || l->type == TGA_STR);
    if ((logical && l->type == TGA_BOOL && r->type == TGA_BOOL) ||
        ((e->op == TGM_EOP_EQ || e->op == TGM_EOP_NE) && same_enum))
        return tgf_cop(c, e, ops[k].c, TGA_BOOL, l, r);
    tgf_fail(c, op_at(e), "operator '%s' cannot combine %s and %s", ops[k].c, tgf_type_text(l),
             tgf_type_text(r));
    return NULL;
}

static tgf_node *unary(tgf_checker *c, const tgm_expr *e, tgf_node *x)
{
    if (e->op == TGM_EOP_NEG && tgf_is_tensor(x))
        return tgf_resolve_call(c, e, e->offset, "neg", &x, 1);
    if ((e->op == TGM_EOP_NEG || e->op == TGM_EOP_PLUS) && tgf_is_number(x))
        return e->op == TGM_EOP_PLUS ? x : tgf_cop(c, e, "-", x->type, x, NULL);
    if (e->op == TGM_EOP_PLUS && tgf_is_tensor(x)) return x;
    if (e->op == TGM_EOP_NOT && x->type == TGA_BOOL) return tgf_cop(c, e, "!", TGA_BOOL, x, NULL);
    if (x->type == TGA_UNSUPPORTED && !x->ntuple) /* not yet checkable: nor is the result */
        return tgf_builtin_node(c, e, NULL, "unary",
                                e->op == TGM_EOP_NOT ? TGA_BOOL : TGA_UNSUPPORTED, &x, 1);
    /* `*opt`: the value of an optional (`!opt` is whether it is None). */
    tga_kind value = tgf_optional_value(x->type);
    if ((e->op == TGM_EOP_DEREF || e->op == TGM_EOP_NOT) && value != TGA_UNSUPPORTED &&
        !x->ntuple) {
        const char *op = e->op == TGM_EOP_NOT ? "!" : "*";
        return tgf_builtin_node(c, e, tgf_find_form(c, op), op,
                                e->op == TGM_EOP_NOT ? TGA_BOOL : value, &x, 1);
    }
    tgf_fail(c, e->offset, "operator '%s' cannot apply to %s",
             e->op == TGM_EOP_NOT     ? "!"
             : e->op == TGM_EOP_NEG   ? "-"
             : e->op == TGM_EOP_DEREF ? "*"
                                      : "+",
             tgf_type_text(x));
    return NULL;
}

static tgf_node *cond(tgf_checker *c, const tgm_expr *e, tgf_node **args)
{
    tgf_node *a = args[1], *b = args[2];
    /* A condition not yet checkable (an unmapped mask's element combined with `&`): taken, the
     * formula already counts as not yet checkable. */
    bool unmapped = args[0]->type == TGA_UNSUPPORTED && !args[0]->ntuple;
    if (!unmapped && (args[0]->type != TGA_BOOL || args[0]->ntuple)) {
        tgf_fail(c, e->args[0]->offset, "the condition of '?:' must be a bool, not %s",
                 tgf_type_text(args[0]));
        return NULL;
    }
    if (a->ntuple || b->ntuple) {
        /* `grad.defined() ? f(...) : std::tuple<Tensor, Tensor>()`: tuples of one size. */
        if (a->ntuple != b->ntuple) {
            tgf_fail(c, e->args[2]->offset,
                     "the branches of '?:' are tuples of different sizes (%d and %d)", a->ntuple,
                     b->ntuple);
            return NULL;
        }
        tgf_node *n = tgf_cond(c, e, TGA_UNSUPPORTED, args);
        n->ntuple = a->ntuple;
        return n;
    }
    /* std::nullopt in one branch: the other's optional type. */
    if ((int)a->type == TGF_KIND_NONE || (int)b->type == TGF_KIND_NONE) {
        tgf_node *v = (int)a->type == TGF_KIND_NONE ? b : a;
        bool optional = v->type == TGA_OPT_TENSOR || v->type == TGA_OPT_INT_LIST ||
                        v->type == TGA_OPT_INT || v->type == TGA_OPT_DOUBLE ||
                        v->type == TGA_OPT_BOOL || v->type == TGA_OPT_DTYPE;
        if (!optional) {
            tgf_fail(c, e->offset,
                     "std::nullopt in one branch of '?:' needs an optional in the other, not %s",
                     tgf_type_text(v));
            return NULL;
        }
        return tgf_cond(c, e, v->type, args);
    }
    if (a->type == TGA_UNSUPPORTED || b->type == TGA_UNSUPPORTED)
        return tgf_builtin_node(c, e, NULL, "?:", TGA_UNSUPPORTED, args, 3);
    /* A list literal lives in its branch's block only (a C compound literal). */
    if (a->kind == TGF_LIST || b->kind == TGF_LIST) {
        tgf_fail(c, (a->kind == TGF_LIST ? e->args[1] : e->args[2])->offset,
                 "a branch of '?:' cannot be a list literal");
        return NULL;
    }
    /* Branches hold one owned value; a list would need ownership per element (a limit of the
     * C emitter, not of typing: --check takes it). */
    if (a->type == TGA_TENSOR_LIST && b->type == TGA_TENSOR_LIST && !c->for_gen) {
        tgf_limit(c, "a branch of '?:' is a Tensor[]");
        return tgf_cond(c, e, TGA_TENSOR_LIST, args);
    }
    if (a->type == TGA_TENSOR_LIST || b->type == TGA_TENSOR_LIST) {
        tgf_fail(c, (a->type == TGA_TENSOR_LIST ? e->args[1] : e->args[2])->offset,
                 "a branch of '?:' cannot be a Tensor[]");
        return NULL;
    }
    tga_kind t = a->type == b->type                     ? a->type
                 : tgf_is_number(a) && tgf_is_number(b) ? TGA_DOUBLE
                 : tgf_is_tensor(a) && tgf_is_tensor(b) ? TGA_OPT_TENSOR
                                                        : TGA_UNSUPPORTED;
    if (t == TGA_UNSUPPORTED) {
        tgf_fail(c, e->args[2]->offset, "the branches of '?:' have different types: %s and %s",
                 tgf_type_text(a), tgf_type_text(b));
        return NULL;
    }
    return tgf_cond(c, e, t, args);
}

static tgf_node *check_operator(tgf_checker *c, const tgm_expr *e)
{
    tgf_node *args[3];
    for (int i = 0; i < e->nargs; i++)
        if (!(args[i] = tgf_check_expr(c, e->args[i]))) return NULL;
    switch (e->kind) {
    case TGM_EXPR_UNARY: return unary(c, e, args[0]);
    case TGM_EXPR_BINARY: return binary(c, e, args[0], args[1]);
    default: return cond(c, e, args);
    }
}

const tgf_plugin tgf_operators = { .operators = check_operator };
