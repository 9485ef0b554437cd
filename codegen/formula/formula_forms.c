/* The C++ forms of PyTorch's formulas (docs/autograd.md, "C++ forms"): what is neither an
 * operator nor an autograd vocabulary function, but part of C++ or of ATen's classes, and so
 * has no schema to be declared with. One row each (formula_forms.h) says how the checker types
 * it and how formula_c.c lowers it to C:
 *
 *   names      M_PI and the other <math.h> constants (float literals), std::nullopt,
 *              MemoryFormat::Contiguous and the other memory formats, c10::kStrided and the
 *              other layouts, at::Reduction::Mean ..., grad_input_mask (bool[N]),
 *              retain_variables (bool), the parameter of fmap's lambda
 *   calls      GradMode::is_enabled(), Tensor(), IntArrayRef(x), TensorGeometry(t),
 *              std::sqrt(x), fmap(list, lambda), not_implemented_list("..."),
 *              isDifferentiableType(st); sqrt(x) ... of numbers (<cmath>)
 *   methods    of a Tensor: defined(), options(), layout(), dtype(), strides(),
 *              is_contiguous(), suggest_memory_format(), requires_grad(), is_cpu() ...;
 *              of an optional: has_value(), value(), value_or(x);
 *              of a Scalar: conj(), toDouble(), toFloat(), isComplex() ...;
 *              of an int[]: size(), back(), front(), vec(), empty(); of a Device: is_cpu() ...
 *   templates  std::get<i>(tuple), std::tuple<Tensor...>() (undefined tensors),
 *              std::vector<int64_t>(n, v), std::vector<Tensor>(n), std::optional<T>(x),
 *              OptionalArrayRef<SymInt>(x)
 *   syntax     xs[i] of a list, {true, false}, opt->m(), *opt, !opt: typed by the checker's
 *              core and operators, which find these rows by their syntax (tgf_find_form)
 *
 * The rows, one array per site (where the form is written), are the checker's plug-in
 * tgf_cpp_forms (formula_plugins.h). A form without a lowering, or whose `lowers` refuses a
 * node, is one tgen does not compile to C yet (tgf_c_unsupported): its entries become failing
 * nodes. */
#include <stdlib.h>
#include <string.h>

#include "formula/formula_forms.h"
#include "formula/formula_plugins.h"
#include "base/strbuf.h"

static const char *unqualified(const char *name)
{
    for (const char *p; (p = strstr(name, "::"));) name = p + 2;
    return name;
}

static const char *text_of(const tgf_form *f) { return f->text ? f->text : f->name; }

/* The classes (TGF_CLASS_*) a value of type t belongs to. */
static unsigned classes_of(int t)
{
    unsigned k = 0;
    if (t == TGA_TENSOR || t == TGA_OPT_TENSOR) k |= TGF_CLASS_TENSOR;
    if (tgf_optional_value((tga_kind)t) != TGA_UNSUPPORTED) k |= TGF_CLASS_OPTIONAL;
    if (t == TGA_INT || t == TGA_DOUBLE) k |= TGF_CLASS_NUMBER;
    if (t == TGA_INT) k |= TGF_CLASS_INT;
    if (t == TGA_INT_LIST) k |= TGF_CLASS_INT_LIST;
    if (t == TGA_TENSOR_LIST) k |= TGF_CLASS_TENSOR_LIST;
    if (t == TGA_DEVICE) k |= TGF_CLASS_DEVICE;
    if (t == TGA_DTYPE) k |= TGF_CLASS_DTYPE;
    if (t == TGA_UNSUPPORTED) k |= TGF_CLASS_UNMAPPED;
    return k;
}

static bool check_args(tgf_checker *c, const tgm_expr *e, tgf_node **args)
{
    for (int i = 0; i < e->nargs; i++)
        if (!(args[i] = tgf_check_expr(c, e->args[i]))) return false;
    return true;
}

static tgf_node *arity(tgf_checker *c, const tgm_expr *e, const char *what, int n)
{
    tgf_fail(c, e->name_offset, "'%s' takes %d argument%s, not %d", what, n, n == 1 ? "" : "s",
             e->nargs);
    return NULL;
}

/* ------------------------------------------------------------------ typing: names, calls */

static tgf_node *check_name(tgf_checker *c, const tgm_expr *e, const tgf_form *f, tgf_node **args)
{
    return tgf_builtin_node(c, e, f, f->as_written ? e->name : text_of(f), f->type, NULL, 0);
}

/* Names only backward formulas have: they are about gradients. */
static tgf_node *check_backward_name(tgf_checker *c, const tgm_expr *e, const tgf_form *f,
                                     tgf_node **args)
{
    return c->forward ? NULL : check_name(c, e, f, args);
}

/* A constant: a float literal (M_PI), an int one (at::Reduction::Mean). */
static tgf_node *check_constant(tgf_checker *c, const tgm_expr *e, const tgf_form *f,
                                tgf_node **args)
{
    const char *text = f->type == TGA_INT ? tgs_fmt(c->a, "INT64_C(%lld)", (long long)f->value)
                                          : tgs_fmt(c->a, "%.17g", f->value);
    return tgf_lit(c, e, f->type, text);
}

/* A call of f->nargs arguments (0 or 1, of f->classes). More than 8 arguments: not a form (the
 * call is resolved like any other). */
static tgf_node *check_call(tgf_checker *c, const tgm_expr *e, const tgf_form *f, tgf_node **args)
{
    if (e->nargs > 8) return NULL;
    if (e->nargs != f->nargs) return arity(c, e, e->name, f->nargs);
    if (!check_args(c, e, args)) return NULL;
    if (f->nargs && !(classes_of(args[0]->type) & f->classes)) {
        tgf_fail(c, e->args[0]->offset, "'%s' of %s%s", e->name, tgf_type_text(args[0]),
                 f->not_class);
        return NULL;
    }
    int type = f->type == TGF_TYPE_OF_ARG ? (int)args[0]->type : f->type;
    return tgf_builtin_node(c, e, f, text_of(f), type, args, f->nargs);
}

/* fmap(list, [](T x){ return ...; }): the lambda applied to each element of an int[]. */
static tgf_node *check_fmap(tgf_checker *c, const tgm_expr *e, const tgf_form *f, tgf_node **args)
{
    if (e->nargs != 2) return arity(c, e, "fmap", 2);
    tgf_node *list = tgf_check_expr(c, e->args[0]);
    if (!list) return NULL;
    if (list->type != TGA_INT_LIST) {
        tgf_fail(c, e->args[0]->offset, "fmap maps an int[], not %s", tgf_type_text(list));
        return NULL;
    }
    const tgm_expr *lam = e->args[1];
    if (lam->kind != TGM_EXPR_LAMBDA) {
        tgf_fail(c, lam->offset, "the second argument of fmap must be a lambda");
        return NULL;
    }
    const char *t = unqualified(lam->str);
    if (strcmp(t, "int64_t") && strcmp(t, "SymInt") && strcmp(t, "int")) {
        tgf_fail(c, lam->offset, "the lambda's parameter must be an int (int64_t, SymInt), not %s",
                 lam->str);
        return NULL;
    }
    /* The body sees the parameter as an int; other names are the formula's. */
    const char *outer = c->lambda_param;
    c->lambda_param = lam->name;
    tgf_node *body = tgf_check_expr(c, lam->args[0]);
    c->lambda_param = outer;
    if (!body) return NULL;
    if (body->type != TGA_INT) {
        tgf_fail(c, lam->args[0]->offset, "the lambda of fmap must give an int, not %s",
                 tgf_type_text(body));
        return NULL;
    }
    tgf_node *la[2] = { list, body };
    return tgf_builtin_node(c, e, f, f->name, TGA_INT_LIST, la, 2);
}

/* The gradient of a Tensor[] argument that has none (PyTorch's list form of not_implemented). */
static tgf_node *check_not_implemented_list(tgf_checker *c, const tgm_expr *e, const tgf_form *f,
                                            tgf_node **args)
{
    if (e->nargs > 8) return NULL;
    if (e->nargs < 1 || e->nargs > 2 || e->args[0]->kind != TGM_EXPR_STR ||
        (e->nargs == 2 && e->args[1]->kind != TGM_EXPR_STR && e->args[1]->kind != TGM_EXPR_NAME)) {
        tgf_fail(c, e->name_offset,
                 "%s(\"name\"[, reason]) takes a string and a string or constant", e->name);
        return NULL;
    }
    return tgf_builtin_node(c, e, f, f->name, TGA_TENSOR_LIST, NULL, 0);
}

/* sqrt(M_PI): <cmath>'s function of one or two numbers, where the operator takes tensors. */
static tgf_node *check_cmath(tgf_checker *c, const tgm_expr *e, const tgf_form *f, tgf_node **args)
{
    bool numbers = e->nargs >= 1 && tgf_is_number(args[0]) &&
                   (e->nargs == 1 || (e->nargs == 2 && tgf_is_number(args[1])));
    return numbers ? tgf_builtin_node(c, e, f, f->name, TGA_DOUBLE, args, e->nargs) : NULL;
}

/* ------------------------------------------------------------------ typing: methods */

/* A method without arguments (f->nargs 0), or of any (-1). */
static tgf_node *check_method(tgf_checker *c, const tgm_expr *e, const tgf_form *f, tgf_node **args)
{
    if (f->nargs == 0 && e->nargs != 1) {
        tgf_fail(c, e->name_offset, "'%s()' takes no arguments", e->name);
        return NULL;
    }
    int type = f->type == TGF_TYPE_OF_VALUE ? (int)tgf_optional_value(args[0]->type) : f->type;
    return tgf_builtin_node(c, e, f, e->name, type, args, e->nargs);
}

/* is_contiguous(memory_format) is the tensor method with an argument. */
static tgf_node *check_is_contiguous(tgf_checker *c, const tgm_expr *e, const tgf_form *f,
                                     tgf_node **args)
{
    if (e->nargs != 2) return check_method(c, e, f, args);
    if (args[1]->type != TGA_MEMORY_FORMAT) {
        tgf_fail(c, e->args[1]->offset, "is_contiguous() takes a MemoryFormat, not %s",
                 tgf_type_text(args[1]));
        return NULL;
    }
    return tgf_builtin_node(c, e, f, e->name, TGA_BOOL, args, 2);
}

static tgf_node *check_value_or(tgf_checker *c, const tgm_expr *e, const tgf_form *f,
                                tgf_node **args)
{
    tga_kind inner = tgf_optional_value(args[0]->type);
    if (e->nargs != 2) {
        tgf_fail(c, e->name_offset, "'value_or()' takes one argument");
        return NULL;
    }
    bool ok = args[1]->type == inner || tgf_accepts(inner, args[1]->type) ||
              (inner == TGA_INT_LIST && args[1]->type == TGA_INT);
    if (!ok) {
        tgf_fail(c, e->args[1]->offset, "value_or() of %s takes %s, not %s", tgf_type_text(args[0]),
                 tgf_kind_text(inner), tgf_type_text(args[1]));
        return NULL;
    }
    return tgf_builtin_node(c, e, f, e->name, inner, args, 2);
}

/* ------------------------------------------------------------------ typing: templates */

/* "Tensor", "at::Tensor" -> Tensor; "int64_t", "c10::SymInt" -> int; ... */
static int targ_kind(const char *t)
{
    const char *b = unqualified(t);
    if (!strcmp(b, "Tensor")) return TGA_TENSOR;
    if (!strcmp(b, "int64_t") || !strcmp(b, "SymInt") || !strcmp(b, "int")) return TGA_INT;
    if (!strcmp(b, "double")) return TGA_DOUBLE;
    if (!strcmp(b, "Scalar")) return TGA_DOUBLE;
    if (!strcmp(b, "bool")) return TGA_BOOL;
    if (!strcmp(b, "ScalarType")) return TGA_DTYPE;
    return TGA_UNSUPPORTED;
}

static int first_targ_kind(const tgm_expr *e)
{
    return e->ntargs ? targ_kind(e->targs[0]) : TGA_UNSUPPORTED;
}

static tgf_node *check_get(tgf_checker *c, const tgm_expr *e, const tgf_form *f, tgf_node **args)
{
    if (e->ntargs != 1 || e->nargs != 1) {
        tgf_fail(c, e->offset, "std::get takes one index and one tuple: std::get<i>(t)");
        return NULL;
    }
    const char *idx = e->targs[0];
    char *end;
    long i = strtol(idx, &end, 10);
    if (*end || end == idx) {
        tgf_fail(c, e->offset, "the index of std::get must be an integer, not '%s'", idx);
        return NULL;
    }
    tgf_node *t = tgf_check_expr(c, e->args[0]);
    if (!t) return NULL;
    if (!t->ntuple) {
        tgf_fail(c, e->args[0]->offset, "std::get<%ld> of %s, not a tuple of tensors", i,
                 tgf_type_text(t));
        return NULL;
    }
    if (i < 0 || i >= t->ntuple) {
        tgf_fail(c, e->offset, "std::get<%ld> of a tuple of %d tensors (indices 0 to %d)", i,
                 t->ntuple, t->ntuple - 1);
        return NULL;
    }
    tgf_node *n = tgf_builtin_node(c, e, f, f->name, TGA_TENSOR, &t, 1);
    n->index = (int)i;
    return n;
}

/* std::tuple<Tensor, ...>(): a tuple of undefined tensors (no gradient for any). */
static tgf_node *check_tuple(tgf_checker *c, const tgm_expr *e, const tgf_form *f, tgf_node **args)
{
    for (int i = 0; i < e->ntargs; i++)
        if (targ_kind(e->targs[i]) != TGA_TENSOR) {
            tgf_fail(c, e->offset, "std::tuple<...> of formulas holds tensors, not '%s'",
                     e->targs[i]);
            return NULL;
        }
    if (e->nargs) {
        tgf_fail(c, e->offset, "std::tuple<...>() takes no arguments here (undefined tensors)");
        return NULL;
    }
    tgf_node *n = tgf_builtin_node(c, e, f, text_of(f), TGA_TENSOR, NULL, 0);
    n->type = TGA_UNSUPPORTED; /* a tuple's type is `ntuple`, as for calls */
    n->ntuple = e->ntargs;
    return n;
}

/* std::vector<int64_t>(n, v) / std::vector<Tensor>(n): n copies of v / undefined tensors. */
static tgf_node *check_vector(tgf_checker *c, const tgm_expr *e, const tgf_form *f, tgf_node **args)
{
    int k0 = first_targ_kind(e);
    if (e->ntargs != 1 || (k0 != TGA_INT && k0 != TGA_TENSOR)) return NULL;
    int want = k0 == TGA_INT ? 2 : 1;
    if (e->nargs != want || args[0]->type != TGA_INT || (want == 2 && args[1]->type != TGA_INT)) {
        tgf_fail(c, e->offset, "std::vector<%s>(%s) takes %s", e->targs[0],
                 want == 2 ? "n, value" : "n", want == 2 ? "two ints" : "one int");
        return NULL;
    }
    return tgf_builtin_node(c, e, f, text_of(f), k0 == TGA_INT ? TGA_INT_LIST : TGA_TENSOR_LIST,
                            args, e->nargs);
}

/* std::optional<T>(x) of a Tensor, int, double, bool or ScalarType, and
 * OptionalArrayRef<SymInt>(list) (the row of type int[]?): the optional holding x. */
static tgf_node *check_optional(tgf_checker *c, const tgm_expr *e, const tgf_form *f,
                                tgf_node **args)
{
    int k0 = first_targ_kind(e);
    bool array_ref = f->type == TGA_OPT_INT_LIST;
    int opt = array_ref ? (k0 == TGA_INT ? TGA_OPT_INT_LIST : TGA_UNSUPPORTED)
                        : (int)tgf_optional_of((tga_kind)k0);
    if (e->ntargs != 1 || opt == TGA_UNSUPPORTED) return NULL;
    int want = array_ref ? TGA_INT_LIST : k0;
    if (e->nargs != 1 || !(tgf_accepts(want, args[0]->type) || args[0]->type == TGA_UNSUPPORTED)) {
        tgf_fail(c, e->offset, "'%s<%s>' takes one %s", e->name, e->targs[0], tgf_kind_text(want));
        return NULL;
    }
    return tgf_builtin_node(c, e, f, f->name, opt, args, 1);
}

/* ------------------------------------------------------------------ lowering */

static tga_kind arg_kind(const tgf_node *n)
{
    return n->nargs ? n->args[0]->type : TGA_UNSUPPORTED;
}

#define P(...) plain(tgs_fmt(c->a, __VA_ARGS__))

/* Whether `v` of optional kind k holds a value (C text). */
static const char *opt_has(cc *c, tga_kind k, const char *v)
{
    switch (k) {
    case TGA_OPT_INT: return tgs_fmt(c->a, "(!tg_is_none_int(%s))", v);
    case TGA_OPT_DOUBLE: return tgs_fmt(c->a, "(!tg_is_none_float(%s))", v);
    case TGA_OPT_BOOL: return tgs_fmt(c->a, "(!tg_is_none_bool(%s))", v);
    case TGA_OPT_INT_LIST:
    case TGA_OPT_FLOAT_LIST:
    case TGA_OPT_BOOL_LIST:
    case TGA_OPT_STR_LIST: return tgs_fmt(c->a, "(%s.data != NULL)", v);
    case TGA_OPT_DTYPE: return tgs_fmt(c->a, "(%s != TG_DTYPE_NONE)", v);
    case TGA_OPT_LAYOUT: return tgs_fmt(c->a, "(%s != TG_LAYOUT_NONE)", v);
    case TGA_OPT_MEMORY_FORMAT: return tgs_fmt(c->a, "(%s != TG_MEMORY_FORMAT_NONE)", v);
    case TGA_OPT_DEVICE: return tgs_fmt(c->a, "(%s.type != TG_DEVICE_NONE)", v);
    default: return tgs_fmt(c->a, "(%s != NULL)", v); /* Tensor?, str? */
    }
}

/* The value an optional holds: the same C value (a bool? is a signed char: 0 or 1 then). */
static const char *opt_value(cc *c, tga_kind k, const char *v)
{
    return k == TGA_OPT_BOOL ? tgs_fmt(c->a, "(%s != 0)", v) : v;
}

/* The node's first argument itself: TensorGeometry(t), OptionalArrayRef(xs), xs.vec(). */
static val lower_same(cc *c, const tgf_node *n, val a0) { return a0; }

static val lower_has_value(cc *c, const tgf_node *n, val a0)
{
    return plain(opt_has(c, arg_kind(n), a0.c));
}

static val lower_not(cc *c, const tgf_node *n, val a0)
{
    return P("(!%s)", opt_has(c, arg_kind(n), a0.c));
}

/* opt.value(), *opt, opt->: a Tensor? stays the same (owned) value. */
static val lower_value(cc *c, const tgf_node *n, val a0)
{
    return arg_kind(n) == TGA_OPT_TENSOR ? a0 : plain(opt_value(c, arg_kind(n), a0.c));
}

static val lower_value_or(cc *c, const tgf_node *n, val a0)
{
    tga_kind k0 = arg_kind(n);
    return P("(%s ? %s : %s)", opt_has(c, k0, a0.c), opt_value(c, k0, a0.c),
             tgf__c_compile(c, n->args[1]).c);
}

/* std::optional<T>(x): x as an optional of kind n->type. */
static val lower_optional(cc *c, const tgf_node *n, val a0)
{
    switch ((int)n->type) {
    case TGA_OPT_INT: return P("(tg_opt_int)(%s)", a0.c);
    case TGA_OPT_DOUBLE: return P("(tg_opt_float)(%s)", a0.c);
    case TGA_OPT_BOOL: return P("(tg_opt_bool)(%s)", a0.c);
    case TGA_OPT_TENSOR: return a0;
    default: return plain(a0.c);
    }
}

static val lower_int_array_ref(cc *c, const tgf_node *n, val a0)
{
    return arg_kind(n) == TGA_INT
               ? P("(tg_int_list){ .len = 1, .data = (const int64_t[]){ %s } }", a0.c)
               : a0;
}

static val lower_index(cc *c, const tgf_node *n, val a0)
{
    return P("%s.data[%s]", a0.c, tgf__c_compile(c, n->args[1]).c);
}

/* {true, false}: a bool[N] literal. */
static val lower_bool_list(cc *c, const tgf_node *n, val a0)
{
    tgs_list items = { 0 };
    tgs_list_add(&items, c->a, a0.c);
    for (int i = 1; i < n->nargs; i++) tgs_list_add(&items, c->a, tgf__c_compile(c, n->args[i]).c);
    return P("(tg_bool_list){ (const bool[]){ %s }, %d }", tgs_list_join(&items, c->a, ", "),
             n->nargs);
}

/* Which inputs of the formula need a gradient (PyTorch's grad_input_mask), as a bool[N]. */
static val lower_input_mask(cc *c, const tgf_node *n, val a0)
{
    tgs_list l = { 0 };
    for (int k = 0; k < c->f->src->nvars; k++)
        if (c->f->edges[k] < 0)
            tgs_list_addf(&l, c->a, "tg__gen_needs_from(&n->base, %d)", c->d->nedges);
        else tgs_list_addf(&l, c->a, "tg__node_needs_input_grad(&n->base, %d)", c->f->edges[k]);
    return P("(tg_bool_list){ (const bool[]){ %s }, %d }", tgs_list_join(&l, c->a, ", "),
             c->f->src->nvars);
}

static val lower_lambda_param(cc *c, const tgf_node *n, val a0) { return plain(c->lambda_var); }

/* std::vector<int64_t>(n, v) (a0 is n) and fmap(list, lambda) (a0 is the list): an int list
 * in an owned temporary, filled by a loop; the lambda's body is C on the element. */
static val lower_int_fill(cc *c, const tgf_node *n, val a0)
{
    bool map = n->form->site == TGF_FORM_CALL; /* fmap(list, ...), not std::vector(n, v) */
    int k = c->ntemps++;
    tgs_list_addf(&c->decls, c->a, "tg_int_list t%d = { .len = 0, .data = NULL };", k);
    tgs_list_addf(&c->releases, c->a, "tg__gen_ints_free(t%d);", k);
    const char *len = map ? tgs_fmt(c->a, "%s.len", a0.c) : a0.c;
    tgf__c_line(c, "if (!(t%d = tg__gen_ints_new(%s)).data) %s", k, len, tgf__c_fail_jump(c));
    const char *outer = c->lambda_var;
    c->lambda_var = tgs_fmt(c->a, "%s.data[tg_j]", a0.c);
    const char *v = tgf__c_compile(c, n->args[1]).c;
    c->lambda_var = outer;
    tgf__c_line(c, "for (int64_t tg_j = 0; tg_j < t%d.len; tg_j++)", k);
    tgf__c_line(c, "    ((int64_t *)t%d.data)[tg_j] = %s;", k, v);
    return plain(tgs_fmt(c->a, "t%d", k));
}

/* std::get<i>: moves element i out of the tuple temporary of a call. */
static val lower_get(cc *c, const tgf_node *n, val a0)
{
    int k = tgf__c_temp(c, "tg_tensor *", NULL);
    const char *field = n->args[0]->callee->rets[n->index].name;
    tgf__c_line(c, "t%d = tg__gen_take(&%s.%s);", k, a0.c, field);
    return (val){ tgs_fmt(c->a, "t%d", k), k };
}

/* <cmath> on numbers: std::sqrt(x), sqrt(x), pow(x, y) ... (abs is fabs). */
static val lower_cmath(cc *c, const tgf_node *n, val a0)
{
    const char *fn = strncmp(n->c, "std::", 5) ? n->c : n->c + 5;
    if (!strcmp(fn, "abs")) fn = "fabs";
    if (n->nargs == 2)
        return P("%s((double)(%s), (double)(%s))", fn, a0.c, tgf__c_compile(c, n->args[1]).c);
    return P("%s((double)(%s))", fn, a0.c);
}

#undef P

/* Of a list value, not of a Tensor[] input (whose elements a node does not save). */
static bool not_of_list_input(const tgf_node *n)
{
    return !(n->args[0]->kind == TGF_INPUT &&
             (n->args[0]->type == TGA_TENSOR_LIST || n->args[0]->type == TGA_OPT_TENSOR_LIST));
}
static bool not_tensor(const tgf_node *n) { return n->type != TGA_TENSOR; }
static bool no_argument(const tgf_node *n) { return n->nargs == 1; }
static bool int_list(const tgf_node *n) { return n->type == TGA_INT_LIST; }
/* std::get takes a tuple that a call returned (a tuple temporary). */
static bool of_call(const tgf_node *n)
{
    return n->args[0]->kind == TGF_CALL || n->args[0]->kind == TGF_HELPER;
}

/* Whether n is C on numbers only (literals, the lambda's parameter, C operators): the body of
 * fmap's lambda is evaluated in a loop, with no temporaries of its own. */
static bool pure_c(const tgf_node *n)
{
    if (n->kind != TGF_LIT && n->kind != TGF_COP &&
        !(n->kind == TGF_BUILTIN && n->form && n->form->match == TGF_MATCH_LAMBDA))
        return false;
    for (int i = 0; i < n->nargs; i++)
        if (!pure_c(n->args[i])) return false;
    return true;
}
static bool body_is_c(const tgf_node *n) { return pure_c(n->args[1]); }

/* ------------------------------------------------------------------ the table */

/* The fields of each kind of row, for short: `{ "M_PI", CONSTANT(3.14...) }`. */
#define CONSTANT(v) TGF_FORM_NAME, .type = TGA_DOUBLE, .value = v, .check = check_constant
#define REDUCTION(v)                                                                \
    TGF_FORM_NAME, TGF_MATCH_QUALIFIED, "Reduction::", .type = TGA_INT, .value = v, \
                                                       .check = check_constant
#define MEMORY_FORMAT                                                                \
    TGF_FORM_NAME, TGF_MATCH_QUALIFIED, "MemoryFormat::", .type = TGA_MEMORY_FORMAT, \
                                                          .as_written = true, .check = check_name
#define LAYOUT TGF_FORM_NAME, TGF_MATCH_BARE, .type = TGA_LAYOUT, .check = check_name
#define CALL1(m, cls, bad, t) \
    TGF_FORM_CALL, m, .classes = cls, .not_class = bad, .type = t, .nargs = 1, .check = check_call
#define CMATH TGF_FORM_CMATH, .check = check_cmath, .lower = lower_cmath
#define METHOD(cls, t) TGF_FORM_METHOD, .classes = cls, .type = t, .check = check_method
#define SYNTAX TGF_FORM_SYNTAX

/* The receivers of methods, for short. */
enum {
    T = TGF_CLASS_TENSOR,
    OPT = TGF_CLASS_OPTIONAL,
    NUM = TGF_CLASS_NUMBER,
    INTS = TGF_CLASS_INT_LIST,
    TENSORS = TGF_CLASS_TENSOR_LIST,
    DEV = TGF_CLASS_DEVICE,
};

/* The rows of each site are tried in order; the only names two rows of a site share are the
 * methods of different receivers (a Tensor's is_cpu() and a Device's). */

/* Names; the lambda's parameter first (it may be called anything). */
static const tgf_form names[] = {
    { "lambda parameter", TGF_FORM_NAME, TGF_MATCH_LAMBDA, .type = TGA_INT, .check = check_name,
      .lower = lower_lambda_param },
    { "M_PI", CONSTANT(3.14159265358979323846) },
    { "M_PI_2", CONSTANT(1.57079632679489661923) },
    { "M_PI_4", CONSTANT(0.78539816339744830962) },
    { "M_1_PI", CONSTANT(0.31830988618379067154) },
    { "M_2_PI", CONSTANT(0.63661977236758134308) },
    { "M_2_SQRTPI", CONSTANT(1.12837916709551257390) },
    { "M_SQRT2", CONSTANT(1.41421356237309504880) },
    { "M_SQRT1_2", CONSTANT(0.70710678118654752440) },
    { "M_E", CONSTANT(2.7182818284590452354) },
    { "M_LN2", CONSTANT(0.69314718055994530942) },
    { "M_LN10", CONSTANT(2.30258509299404568402) },
    { "M_LOG2E", CONSTANT(1.4426950408889634074) },
    { "M_LOG10E", CONSTANT(0.43429448190325182765) },
    /* at::Reduction::None, Mean, Sum: the int values of loss functions' `reduction`. */
    { "None", REDUCTION(0) },
    { "Mean", REDUCTION(1) },
    { "Sum", REDUCTION(2) },
    /* named as written (at::MemoryFormat::Contiguous) */
    { "Contiguous", MEMORY_FORMAT, .c_text = "TG_CONTIGUOUS_FORMAT" },
    { "Preserve", MEMORY_FORMAT, .c_text = "TG_PRESERVE_FORMAT" },
    { "ChannelsLast", MEMORY_FORMAT, .c_text = "TG_CHANNELS_LAST" },
    { "ChannelsLast3d", MEMORY_FORMAT, .c_text = "TG_CHANNELS_LAST_3D" },
    { "nullopt", TGF_FORM_NAME, TGF_MATCH_BARE, .type = TGF_KIND_NONE, .check = check_name,
      .c_text = "NULL" },
    /* Every tensorgen tensor is strided: the other layouts are values no tensor has. */
    { "kStrided", LAYOUT, .c_text = "TG_STRIDED" },
    { "kSparse", LAYOUT, .c_text = "((tg_layout)1)" },
    { "kSparseCsr", LAYOUT, .c_text = "((tg_layout)2)" },
    { "kSparseCsc", LAYOUT, .c_text = "((tg_layout)3)" },
    { "kSparseBsr", LAYOUT, .c_text = "((tg_layout)4)" },
    { "kSparseBsc", LAYOUT, .c_text = "((tg_layout)5)" },
    { "kMkldnn", LAYOUT, .c_text = "((tg_layout)6)" },
    { "kJagged", LAYOUT, .c_text = "((tg_layout)7)" },
    /* Which inputs of the formula need a gradient: std::array<bool, N>, a bool[N]. */
    { "grad_input_mask", TGF_FORM_NAME, .type = TGA_BOOL_LIST, .check = check_backward_name,
      .lower = lower_input_mask },
    /* Whether backward keeps the graph (retain_graph), a property of the engine's call:
     * conservatively true (the copy PyTorch makes when the graph is retained is kept). */
    { "retain_variables", TGF_FORM_NAME, .type = TGA_BOOL, .check = check_backward_name,
      .c_text = "true" },
};

/* Calls, found before their arguments are checked. */
static const tgf_form calls[] = {
    { "fmap", TGF_FORM_CALL, .type = TGA_INT_LIST, .check = check_fmap, .lower = lower_int_fill,
      .lowers = body_is_c },
    { "is_enabled", TGF_FORM_CALL, TGF_MATCH_QUALIFIED, "GradMode", .type = TGA_BOOL,
      .text = "GradMode::is_enabled", .check = check_call, .c_text = "tg_is_grad_enabled()" },
    /* an undefined tensor */
    { "Tensor", TGF_FORM_CALL, .type = TGA_OPT_TENSOR, .check = check_call, .c_text = "NULL" },
    { "at::Tensor", TGF_FORM_CALL, .type = TGA_OPT_TENSOR, .text = "Tensor", .check = check_call,
      .c_text = "NULL" },
    /* the int[] of one int, or an int[] itself */
    { "IntArrayRef", TGF_FORM_CALL, TGF_MATCH_BARE, .classes = INTS | TGF_CLASS_INT,
      .not_class = " (an int[] or an int)", .type = TGA_INT_LIST, .nargs = 1, .check = check_call,
      .lower = lower_int_array_ref },
    { "SymIntArrayRef", TGF_FORM_CALL, TGF_MATCH_BARE, .classes = INTS | TGF_CLASS_INT,
      .not_class = " (an int[] or an int)", .type = TGA_INT_LIST, .nargs = 1, .text = "IntArrayRef",
      .check = check_call, .lower = lower_int_array_ref },
    /* Sizes, strides and offset of a tensor: the tensor itself stands for them (the
     * vocabulary writes a TensorGeometry parameter Tensor; the node saves the tensor). */
    { "TensorGeometry", CALL1(TGF_MATCH_BARE, T, ", not a Tensor", TGF_TYPE_OF_ARG),
      .lower = lower_same },
    { "std::sqrt", CALL1(TGF_MATCH_EXACT, NUM, ", not a number", TGA_DOUBLE),
      .lower = lower_cmath },
    { "std::exp", CALL1(TGF_MATCH_EXACT, NUM, ", not a number", TGA_DOUBLE), .lower = lower_cmath },
    { "std::log", CALL1(TGF_MATCH_EXACT, NUM, ", not a number", TGA_DOUBLE), .lower = lower_cmath },
    { "std::abs", CALL1(TGF_MATCH_EXACT, NUM, ", not a number", TGA_DOUBLE), .lower = lower_cmath },
    { "isDifferentiableType",
      CALL1(TGF_MATCH_BARE, TGF_CLASS_DTYPE, ", not a ScalarType", TGA_BOOL),
      .c_text = "tg_dtype_is_floating(%s)" },
    { "isComplexType", CALL1(TGF_MATCH_BARE, TGF_CLASS_DTYPE, ", not a ScalarType", TGA_BOOL),
      .c_text = "((void)(%s), false)" },
    { "isFloatingType", CALL1(TGF_MATCH_BARE, TGF_CLASS_DTYPE, ", not a ScalarType", TGA_BOOL),
      .c_text = "tg_dtype_is_floating(%s)" },
    { "not_implemented_list", TGF_FORM_CALL, .check = check_not_implemented_list },
};

/* <cmath> of numbers, found once the arguments are checked (of tensors: the operators). */
static const tgf_form cmath[] = {
    { "sqrt", CMATH }, { "exp", CMATH }, { "log", CMATH }, { "abs", CMATH }, { "pow", CMATH },
};

/* Methods, of a Tensor (or Tensor?) first. */
static const tgf_form methods[] = {
    { "defined", METHOD(T, TGA_BOOL), .c_text = "(%s != NULL)" },
    { "layout", METHOD(T, TGA_LAYOUT), .c_text = "((void)%s, TG_STRIDED)" },
    { "dtype", METHOD(T, TGA_DTYPE), .c_text = "tg_tensor_dtype(%s)" },
    { "strides", METHOD(T, TGA_INT_LIST), .c_text = "tg__gen_strides(%s)" },
    { "sym_strides", METHOD(T, TGA_INT_LIST), .c_text = "tg__gen_strides(%s)" },
    { "storage_offset", METHOD(T, TGA_INT), .c_text = "tg_tensor_storage_offset(%s)" },
    { "sym_storage_offset", METHOD(T, TGA_INT), .c_text = "tg_tensor_storage_offset(%s)" },
    { "suggest_memory_format", METHOD(T, TGA_MEMORY_FORMAT),
      .c_text = "((void)%s, TG_CONTIGUOUS_FORMAT)" },
    { "requires_grad", METHOD(T, TGA_BOOL), .c_text = "tg_tensor_requires_grad(%s)" },
    { "is_cpu", METHOD(T, TGA_BOOL), .c_text = "(tg_tensor_device(%s).type == TG_CPU)" },
    { "is_cuda", METHOD(T, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_xpu", METHOD(T, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_mps", METHOD(T, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_sparse", METHOD(T, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_sparse_csr", METHOD(T, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_mkldnn", METHOD(T, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_nested", METHOD(T, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_meta", METHOD(T, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "sym_blocksize", METHOD(T, TGA_OPT_INT_LIST), .c_text = "TG_NO_INTS" },
    /* of a Device */
    { "is_cpu", METHOD(DEV, TGA_BOOL), .c_text = "(%s.type == TG_CPU)" },
    { "is_cuda", METHOD(DEV, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_xpu", METHOD(DEV, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_mps", METHOD(DEV, TGA_BOOL), .c_text = "((void)%s, false)" },
    { "is_meta", METHOD(DEV, TGA_BOOL), .c_text = "((void)%s, false)" },
    /* of a Scalar (or an int): Scalars are real here */
    { "conj", METHOD(NUM, TGA_DOUBLE), .c_text = "((double)(%s))" },
    { "toDouble", METHOD(NUM, TGA_DOUBLE), .c_text = "((double)(%s))" },
    { "toFloat", METHOD(NUM, TGA_DOUBLE), .c_text = "((double)(%s))" },
    { "toComplexDouble", METHOD(NUM, TGA_DOUBLE), .c_text = "((double)(%s))" },
    { "toLong", METHOD(NUM, TGA_INT), .c_text = "((int64_t)(%s))" },
    { "isComplex", METHOD(NUM, TGA_BOOL), .c_text = "((void)(%s), false)" },
    { "isFloatingPoint", METHOD(NUM, TGA_BOOL) },
    { "isIntegral", METHOD(NUM, TGA_BOOL) },
    /* of an int: a SymInt's concrete value (`t.sym_size(0).expect_int()`); ints are concrete */
    { "expect_int", METHOD(TGF_CLASS_INT, TGA_INT), .lower = lower_same },
    /* of an int[] */
    { "back", METHOD(INTS, TGA_INT), .c_text = "%s.data[%s.len - 1]" },
    { "front", METHOD(INTS, TGA_INT), .c_text = "%s.data[0]" },
    { "empty", METHOD(INTS, TGA_BOOL), .c_text = "(%s.len == 0)" },
    /* the methods with more to say: the length of an int[] or of a Tensor[] value (a Tensor[]
     * input's elements are not saved: formula_check.c types its size(d)) */
    { "size", TGF_FORM_METHOD, .classes = INTS | TENSORS, .type = TGA_INT, .check = check_method,
      .c_text = "%s.len", .lowers = not_of_list_input },
    { "vec", TGF_FORM_METHOD, .classes = INTS, .type = TGA_INT_LIST, .check = check_method,
      .lower = lower_same },
    { "is_contiguous", TGF_FORM_METHOD, .classes = T, .type = TGA_BOOL,
      .check = check_is_contiguous, .c_text = "tg_tensor_is_contiguous(%s)",
      .lowers = no_argument },
    /* a TensorOptions: compiled only as a call's dtype, layout, device and pin_memory
     * arguments, from the tensor itself (formula_c.c, call_values) */
    { "options", TGF_FORM_METHOD, .classes = T, .type = TGF_KIND_OPTIONS, .check = check_method,
      .lower = lower_same },
    { "has_value", TGF_FORM_METHOD, .classes = OPT, .type = TGA_BOOL, .check = check_method,
      .lower = lower_has_value },
    { "value", TGF_FORM_METHOD, .classes = OPT, .type = TGF_TYPE_OF_VALUE, .check = check_method,
      .lower = lower_value },
    { "value_or", TGF_FORM_METHOD, .classes = OPT, .check = check_value_or, .lower = lower_value_or,
      .lowers = not_tensor },
    { "to", TGF_FORM_METHOD, .classes = NUM, .type = TGA_DOUBLE, .nargs = -1,
      .check = check_method },
    /* any method of a value not yet checkable: not either */
    { NULL, TGF_FORM_METHOD, .classes = TGF_CLASS_UNMAPPED, .type = TGA_UNSUPPORTED, .nargs = -1,
      .check = check_method },
};

/* Templates, found once their arguments are checked. */
static const tgf_form templates[] = {
    { "tuple", TGF_FORM_TEMPLATE, TGF_MATCH_BARE, .text = "std::tuple", .check = check_tuple },
    { "vector", TGF_FORM_TEMPLATE, TGF_MATCH_BARE, .text = "std::vector", .check = check_vector,
      .lower = lower_int_fill, .lowers = int_list },
    { "optional", TGF_FORM_TEMPLATE, TGF_MATCH_BARE, .check = check_optional,
      .lower = lower_optional },
    { "OptionalArrayRef", TGF_FORM_TEMPLATE, TGF_MATCH_BARE, .type = TGA_OPT_INT_LIST,
      .check = check_optional, .lower = lower_same },
};

static const tgf_form get[] = {
    { "std::get", TGF_FORM_GET, .check = check_get, .lower = lower_get, .lowers = of_call },
};

/* Syntax the checker types where it builds the node: xs[i] of a list (an element), {true,
 * false} (a bool[N]), opt->m() (the value of a Tensor?), *opt (the value of an optional), !opt
 * (whether it is None). */
static const tgf_form syntax[] = {
    { "[]", SYNTAX, .lower = lower_index, .lowers = not_of_list_input },
    { "{}", SYNTAX, .lower = lower_bool_list },
    { "->", SYNTAX, .lower = lower_value },
    { "*", SYNTAX, .lower = lower_value },
    { "!", SYNTAX, .lower = lower_not },
};

#define ROWS(a)                   \
    {                             \
        a, sizeof a / sizeof a[0] \
    }
static const struct {
    const tgf_form *rows;
    size_t n;
} sites[] = {
    [TGF_FORM_NAME] = ROWS(names),         [TGF_FORM_CALL] = ROWS(calls),
    [TGF_FORM_CMATH] = ROWS(cmath),        [TGF_FORM_METHOD] = ROWS(methods),
    [TGF_FORM_TEMPLATE] = ROWS(templates), [TGF_FORM_GET] = ROWS(get),
    [TGF_FORM_SYNTAX] = ROWS(syntax),
};

/* ------------------------------------------------------------------ the plug-in */

/* Whether row f is one for `name` (bare: without its namespaces), of a receiver of `classes`. */
static bool matches(const tgf_checker *c, const tgf_form *f, const char *name, const char *bare,
                    unsigned classes)
{
    if (f->site == TGF_FORM_METHOD)
        return (f->classes & classes) && (!f->name || !strcmp(f->name, name));
    if (f->site == TGF_FORM_GET) return true;
    switch (f->match) {
    case TGF_MATCH_EXACT: return !strcmp(name, f->name);
    case TGF_MATCH_BARE: return !strcmp(bare, f->name);
    case TGF_MATCH_QUALIFIED: return !strcmp(bare, f->name) && strstr(name, f->qual);
    case TGF_MATCH_LAMBDA: return c->lambda_param && !strcmp(name, c->lambda_param);
    }
    return false;
}

/* Asks the rows of `site` that match `name` (a method's: and its receiver args[0]), in order,
 * until one types e. */
static tgf_node *ask_rows(tgf_checker *c, tgf_form_site site, const tgm_expr *e, const char *name,
                          tgf_node **args)
{
    unsigned classes = site == TGF_FORM_METHOD ? classes_of(args[0]->type) : 0;
    const char *bare = unqualified(name);
    for (size_t i = 0; i < sites[site].n; i++) {
        const tgf_form *f = &sites[site].rows[i];
        if (!matches(c, f, name, bare, classes)) continue;
        tgf_node *n = f->check(c, e, f, args);
        if (n || c->failed) return n;
    }
    return NULL;
}

static tgf_node *form_name(tgf_checker *c, const tgm_expr *e)
{
    return ask_rows(c, TGF_FORM_NAME, e, e->name, NULL);
}

static tgf_node *form_call(tgf_checker *c, const tgm_expr *e)
{
    tgf_node *args[8];
    return ask_rows(c, TGF_FORM_CALL, e, e->name, args);
}

/* <cmath> is called as a function: a method or an operator of the language is a tensor's. */
static tgf_node *form_cmath(tgf_checker *c, const tgm_expr *src, size_t name_at, const char *name,
                            tgf_node **args, int nargs)
{
    return src->kind == TGM_EXPR_CALL ? ask_rows(c, TGF_FORM_CMATH, src, name, args) : NULL;
}

static tgf_node *form_method(tgf_checker *c, const tgm_expr *e, tgf_node **args)
{
    return ask_rows(c, TGF_FORM_METHOD, e, e->name, args);
}

static tgf_node *form_construct(tgf_checker *c, const tgm_expr *e)
{
    if (e->kind == TGM_EXPR_GET) return ask_rows(c, TGF_FORM_GET, e, "", NULL);
    tgf_node *args[4];
    if (e->nargs > 4) {
        tgf_fail(c, e->offset, "too many arguments to '%s<...>'", e->name);
        return NULL;
    }
    if (!check_args(c, e, args)) return NULL;
    tgf_node *n = ask_rows(c, TGF_FORM_TEMPLATE, e, e->name, args);
    if (!n && !c->failed)
        tgf_fail(c, e->offset, "the template '%s<...>' is not part of the formula language",
                 e->name);
    return n;
}

static const tgf_form *form_of_syntax(const char *name)
{
    for (size_t i = 0; i < sizeof syntax / sizeof syntax[0]; i++)
        if (!strcmp(syntax[i].name, name)) return &syntax[i];
    return NULL;
}

const tgf_plugin tgf_cpp_forms = {
    .name = form_name,
    .call = form_call,
    .resolve = form_cmath,
    .method = form_method,
    .construct = form_construct,
    .form = form_of_syntax,
};
