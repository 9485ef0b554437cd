/* Built-in typing of the C++ in PyTorch's formulas (docs/autograd.md, "C++ forms"): what is
 * neither an operator nor an autograd vocabulary function, but part of C++ or of ATen's
 * classes, and so has no schema to be declared with:
 *
 *   names      M_PI and the other <math.h> constants (float literals), std::nullopt,
 *              MemoryFormat::Contiguous and the other memory formats,
 *              grad_input_mask (bool[N]), retain_variables (bool), grad_<output name>,
 *              c10::kStrided and the other layouts
 *   calls      GradMode::is_enabled(), Tensor(), IntArrayRef(x), TensorGeometry(t),
 *              std::sqrt(x), fmap(list, lambda), not_implemented_list("..."),
 *              isDifferentiableType(st)
 *   methods    of a Tensor: defined(), options(), layout(), dtype(), strides(),
 *              is_contiguous(), suggest_memory_format(), requires_grad(), is_cpu() ...;
 *              of an optional: has_value(), value(), value_or(x), and `->` (its value's);
 *              of a Scalar: conj(), toDouble(), toFloat(), isComplex() ...;
 *              of an int[]: size(), back(), front(), vec()
 *   templates  std::get<i>(tuple), std::tuple<Tensor...>() (undefined tensors),
 *              std::vector<int64_t>(n, v), std::vector<Tensor>(n), std::optional<T>(x),
 *              OptionalArrayRef<SymInt>(x)
 *
 * They type-check here; formula_c.c compiles them (compile_builtin), all but the few that
 * tgf_c_builtin_ok refuses (tgf_c_unsupported: their entries become failing nodes). */
#include <stdlib.h>
#include <string.h>

#include "formula/formula_check.h"
#include "base/strbuf.h"

tgf_node *tgf_builtin_node(tgf_checker *c, const tgm_expr *src, const char *what, int type,
                           tgf_node **args, int nargs)
{
    tgf_node *n = tgm_alloc(c->a, sizeof *n);
    n->kind = TGF_BUILTIN;
    n->type = (tga_kind)type;
    n->src = src;
    n->c = what;
    n->nargs = nargs;
    n->args = tgm_alloc(c->a, sizeof *n->args * (size_t)(nargs ? nargs : 1));
    if (nargs) memcpy(n->args, args, sizeof *args * (size_t)nargs);
    if (type == TGA_UNSUPPORTED) c->unchecked = true;
    return n;
}

/* The kind of an optional's value; TGA_UNSUPPORTED when k is not optional. */
static tga_kind unwrap(int k)
{
    switch (k) {
    case TGA_OPT_TENSOR: return TGA_TENSOR;
    case TGA_OPT_INT: return TGA_INT;
    case TGA_OPT_INT_LIST: return TGA_INT_LIST;
    case TGA_OPT_DOUBLE: return TGA_DOUBLE;
    case TGA_OPT_BOOL: return TGA_BOOL;
    case TGA_OPT_DTYPE: return TGA_DTYPE;
    case TGA_OPT_LAYOUT: return TGA_LAYOUT;
    case TGA_OPT_DEVICE: return TGA_DEVICE;
    case TGA_OPT_MEMORY_FORMAT: return TGA_MEMORY_FORMAT;
    case TGA_OPT_STR: return TGA_STR;
    default: return TGA_UNSUPPORTED;
    }
}

/* ------------------------------------------------------------------ names */

static const struct {
    const char *name;
    double value;
} constants[] = {
    { "M_PI", 3.14159265358979323846 },     { "M_PI_2", 1.57079632679489661923 },
    { "M_PI_4", 0.78539816339744830962 },   { "M_1_PI", 0.31830988618379067154 },
    { "M_2_PI", 0.63661977236758134308 },   { "M_2_SQRTPI", 1.12837916709551257390 },
    { "M_SQRT2", 1.41421356237309504880 },  { "M_SQRT1_2", 0.70710678118654752440 },
    { "M_E", 2.7182818284590452354 },       { "M_LN2", 0.69314718055994530942 },
    { "M_LN10", 2.30258509299404568402 },   { "M_LOG2E", 1.4426950408889634074 },
    { "M_LOG10E", 0.43429448190325182765 },
};

static const char *const layouts[] = { "kStrided",   "kSparse",    "kSparseCsr", "kSparseCsc",
                                       "kSparseBsr", "kSparseBsc", "kMkldnn",    "kJagged" };

static const char *unqualified(const char *name)
{
    for (const char *p; (p = strstr(name, "::"));) name = p + 2;
    return name;
}

tgf_node *tgf_builtin_name(tgf_checker *c, const tgm_expr *e)
{
    const char *name = e->name;
    if (c->lambda_param && !strcmp(name, c->lambda_param))
        return tgf_builtin_node(c, e, "lambda parameter", TGA_INT, NULL, 0);
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        if (!strcmp(name, constants[i].name)) {
            const char *text = tgs_fmt(c->a, "%.17g", constants[i].value);
            return tgf_lit(c, e, TGA_DOUBLE, text);
        }
    const char *bare = unqualified(name);
    if (!strcmp(bare, "nullopt")) return tgf_builtin_node(c, e, "nullopt", TGF_KIND_NONE, NULL, 0);
    static const char *const formats[] = { "Contiguous", "Preserve", "ChannelsLast",
                                           "ChannelsLast3d" };
    if (strstr(name, "MemoryFormat::"))
        for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
            if (!strcmp(bare, formats[i]))
                return tgf_builtin_node(c, e, name, TGA_MEMORY_FORMAT, NULL, 0);
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (!strcmp(bare, layouts[i])) return tgf_builtin_node(c, e, bare, TGA_LAYOUT, NULL, 0);
    /* at::Reduction::None, Mean, Sum: the int values of loss functions' `reduction`. */
    static const char *const reductions[] = { "None", "Mean", "Sum" };
    if (strstr(name, "Reduction::"))
        for (size_t i = 0; i < sizeof reductions / sizeof reductions[0]; i++)
            if (!strcmp(bare, reductions[i]))
                return tgf_lit(c, e, TGA_INT, tgs_fmt(c->a, "INT64_C(%zu)", i));
    /* Which inputs of the formula need a gradient: std::array<bool, N>, a bool[N]. */
    if (c->forward) return NULL; /* forward formulas have no gradients */
    if (!strcmp(name, "grad_input_mask"))
        return tgf_builtin_node(c, e, name, TGA_BOOL_LIST, NULL, 0);
    /* Whether backward keeps the graph (retain_graph): a property of the engine's call. */
    if (!strcmp(name, "retain_variables")) return tgf_builtin_node(c, e, name, TGA_BOOL, NULL, 0);
    return NULL;
}

/* ------------------------------------------------------------------ calls */

static bool check_args(tgf_checker *c, const tgm_expr *e, tgf_node **args, int from)
{
    for (int i = from; i < e->nargs; i++)
        if (!(args[i] = tgf_check_expr(c, e->args[i]))) return false;
    return true;
}

static tgf_node *arity(tgf_checker *c, const tgm_expr *e, const char *what, int n)
{
    tgf_fail(c, e->name_offset, "'%s' takes %d argument%s, not %d", what, n, n == 1 ? "" : "s",
             e->nargs);
    return NULL;
}

/* fmap(list, [](T x){ return ...; }): the lambda applied to each element of an int[]. */
static tgf_node *check_fmap(tgf_checker *c, const tgm_expr *e)
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
    tgf_node *args[2] = { list, body };
    return tgf_builtin_node(c, e, "fmap", TGA_INT_LIST, args, 2);
}

tgf_node *tgf_builtin_call(tgf_checker *c, const tgm_expr *e)
{
    const char *name = e->name, *bare = unqualified(name);
    tgf_node *args[8];
    if (!strcmp(name, "fmap")) return check_fmap(c, e);
    if (e->nargs > 8) return NULL;
    if (!strcmp(bare, "is_enabled") && strstr(name, "GradMode")) {
        if (e->nargs) return arity(c, e, name, 0);
        return tgf_builtin_node(c, e, "GradMode::is_enabled", TGA_BOOL, NULL, 0);
    }
    if (!strcmp(name, "Tensor") || !strcmp(name, "at::Tensor")) {
        if (e->nargs) return arity(c, e, name, 0);
        return tgf_builtin_node(c, e, "Tensor", TGA_OPT_TENSOR, NULL, 0); /* undefined */
    }
    if (!strcmp(bare, "IntArrayRef") || !strcmp(bare, "SymIntArrayRef")) {
        if (e->nargs != 1) return arity(c, e, name, 1);
        if (!check_args(c, e, args, 0)) return NULL;
        if (args[0]->type != TGA_INT_LIST && args[0]->type != TGA_INT) {
            tgf_fail(c, e->args[0]->offset, "'%s' of %s (an int[] or an int)", name,
                     tgf_type_text(args[0]));
            return NULL;
        }
        return tgf_builtin_node(c, e, "IntArrayRef", TGA_INT_LIST, args, 1);
    }
    if (!strcmp(bare, "TensorGeometry")) {
        if (e->nargs != 1) return arity(c, e, name, 1);
        if (!check_args(c, e, args, 0)) return NULL;
        if (!tgf_is_tensor(args[0])) {
            tgf_fail(c, e->args[0]->offset, "'%s' of %s, not a Tensor", name,
                     tgf_type_text(args[0]));
            return NULL;
        }
        /* Sizes, strides and offset of a tensor: the tensor itself stands for them (the
         * vocabulary writes a TensorGeometry parameter Tensor; the node saves the tensor). */
        return tgf_builtin_node(c, e, "TensorGeometry", args[0]->type, args, 1);
    }
    if (!strcmp(name, "std::sqrt") || !strcmp(name, "std::exp") || !strcmp(name, "std::log") ||
        !strcmp(name, "std::abs")) {
        if (e->nargs != 1) return arity(c, e, name, 1);
        if (!check_args(c, e, args, 0)) return NULL;
        if (!tgf_is_number(args[0])) {
            tgf_fail(c, e->args[0]->offset, "'%s' of %s, not a number", name,
                     tgf_type_text(args[0]));
            return NULL;
        }
        return tgf_builtin_node(c, e, name, TGA_DOUBLE, args, 1);
    }
    if (!strcmp(bare, "isDifferentiableType") || !strcmp(bare, "isComplexType") ||
        !strcmp(bare, "isFloatingType")) {
        if (e->nargs != 1) return arity(c, e, name, 1);
        if (!check_args(c, e, args, 0)) return NULL;
        if (args[0]->type != TGA_DTYPE) {
            tgf_fail(c, e->args[0]->offset, "'%s' of %s, not a ScalarType", name,
                     tgf_type_text(args[0]));
            return NULL;
        }
        return tgf_builtin_node(c, e, bare, TGA_BOOL, args, 1);
    }
    /* The gradient of a Tensor[] argument that has none (PyTorch's list form of
     * not_implemented). */
    if (!strcmp(name, "not_implemented_list")) {
        if (e->nargs < 1 || e->nargs > 2 || e->args[0]->kind != TGM_EXPR_STR ||
            (e->nargs == 2 && e->args[1]->kind != TGM_EXPR_STR &&
             e->args[1]->kind != TGM_EXPR_NAME)) {
            tgf_fail(c, e->name_offset,
                     "%s(\"name\"[, reason]) takes a string and a string or constant", name);
            return NULL;
        }
        return tgf_builtin_node(c, e, name, TGA_TENSOR_LIST, NULL, 0);
    }
    return NULL;
}

/* ------------------------------------------------------------------ methods */

static const struct {
    const char *name;
    int type;
} tensor_methods[] = {
    { "defined", TGA_BOOL },
    { "options", TGF_KIND_OPTIONS },
    { "layout", TGA_LAYOUT },
    { "dtype", TGA_DTYPE },
    { "strides", TGA_INT_LIST },
    { "sym_strides", TGA_INT_LIST },
    { "storage_offset", TGA_INT },
    { "sym_storage_offset", TGA_INT },
    { "is_contiguous", TGA_BOOL },
    { "suggest_memory_format", TGA_MEMORY_FORMAT },
    { "requires_grad", TGA_BOOL },
    { "is_cpu", TGA_BOOL },
    { "is_cuda", TGA_BOOL },
    { "is_xpu", TGA_BOOL },
    { "is_mps", TGA_BOOL },
    { "is_sparse", TGA_BOOL },
    { "is_sparse_csr", TGA_BOOL },
    { "is_mkldnn", TGA_BOOL },
    { "is_nested", TGA_BOOL },
    { "is_meta", TGA_BOOL },
    { "sym_blocksize", TGA_OPT_INT_LIST },
};

static const struct {
    const char *name;
    int type; /* -1: the receiver's own type */
} scalar_methods[] = {
    { "conj", -1 },
    { "toDouble", TGA_DOUBLE },
    { "toFloat", TGA_DOUBLE },
    { "toComplexDouble", -1 },
    { "toLong", TGA_INT },
    { "to", -1 },
    { "isComplex", TGA_BOOL },
    { "isFloatingPoint", TGA_BOOL },
    { "isIntegral", TGA_BOOL },
};

static tgf_node *no_args(tgf_checker *c, const tgm_expr *e, const char *what, int type,
                         tgf_node **args)
{
    if (e->nargs != 1) {
        tgf_fail(c, e->name_offset, "'%s()' takes no arguments", e->name);
        return NULL;
    }
    return tgf_builtin_node(c, e, what, type, args, 1);
}

tgf_node *tgf_builtin_method(tgf_checker *c, const tgm_expr *e, tgf_node **args)
{
    tgf_node *recv = args[0];
    const char *m = e->name;
    int t = recv->type;
    if (t == TGA_TENSOR || t == TGA_OPT_TENSOR) {
        for (size_t i = 0; i < sizeof tensor_methods / sizeof tensor_methods[0]; i++)
            if (!strcmp(m, tensor_methods[i].name)) {
                /* is_contiguous(memory_format) is the one with an argument. */
                if (!strcmp(m, "is_contiguous") && e->nargs == 2) {
                    if (args[1]->type != TGA_MEMORY_FORMAT) {
                        tgf_fail(c, e->args[1]->offset,
                                 "is_contiguous() takes a MemoryFormat, not %s",
                                 tgf_type_text(args[1]));
                        return NULL;
                    }
                    return tgf_builtin_node(c, e, m, TGA_BOOL, args, 2);
                }
                return no_args(c, e, m, tensor_methods[i].type, args);
            }
    }
    tga_kind inner = unwrap(t);
    if (inner != TGA_UNSUPPORTED) {
        if (!strcmp(m, "has_value")) return no_args(c, e, m, TGA_BOOL, args);
        if (!strcmp(m, "value")) return no_args(c, e, m, inner, args);
        if (!strcmp(m, "value_or")) {
            if (e->nargs != 2) {
                tgf_fail(c, e->name_offset, "'value_or()' takes one argument");
                return NULL;
            }
            bool ok = args[1]->type == inner || tgf_accepts(inner, args[1]->type) ||
                      (inner == TGA_INT_LIST && args[1]->type == TGA_INT);
            if (!ok) {
                tgf_fail(c, e->args[1]->offset, "value_or() of %s takes %s, not %s",
                         tgf_type_text(recv), tgf_kind_text(inner), tgf_type_text(args[1]));
                return NULL;
            }
            return tgf_builtin_node(c, e, m, inner, args, 2);
        }
    }
    if (t == TGA_DOUBLE || t == TGA_INT) {
        for (size_t i = 0; i < sizeof scalar_methods / sizeof scalar_methods[0]; i++)
            if (!strcmp(m, scalar_methods[i].name)) {
                int type = scalar_methods[i].type < 0 ? TGA_DOUBLE : scalar_methods[i].type;
                if (!strcmp(m, "to")) return tgf_builtin_node(c, e, m, type, args, e->nargs);
                return no_args(c, e, m, type, args);
            }
    }
    if (t == TGA_INT_LIST) {
        if (!strcmp(m, "size") || !strcmp(m, "back") || !strcmp(m, "front"))
            return no_args(c, e, m, TGA_INT, args);
        if (!strcmp(m, "vec")) return no_args(c, e, m, TGA_INT_LIST, args);
        if (!strcmp(m, "empty")) return no_args(c, e, m, TGA_BOOL, args);
    }
    if (t == TGA_TENSOR_LIST && !strcmp(m, "size")) return no_args(c, e, m, TGA_INT, args);
    if (t == TGA_DEVICE && (!strcmp(m, "is_cpu") || !strcmp(m, "is_cuda") || !strcmp(m, "is_xpu") ||
                            !strcmp(m, "is_mps") || !strcmp(m, "is_meta")))
        return no_args(c, e, m, TGA_BOOL, args);
    if (t == TGA_UNSUPPORTED) /* a method of a value not yet checkable: not either */
        return tgf_builtin_node(c, e, m, TGA_UNSUPPORTED, args, e->nargs);
    return NULL;
}

/* ------------------------------------------------------------------ templates */

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

static tgf_node *check_get(tgf_checker *c, const tgm_expr *e)
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
    tgf_node *n = tgf_builtin_node(c, e, "std::get", TGA_TENSOR, &t, 1);
    n->index = (int)i;
    return n;
}

tgf_node *tgf_builtin_template(tgf_checker *c, const tgm_expr *e)
{
    if (e->kind == TGM_EXPR_GET) return check_get(c, e);
    const char *name = unqualified(e->name);
    tgf_node *args[4];
    if (e->nargs > 4) {
        tgf_fail(c, e->offset, "too many arguments to '%s<...>'", e->name);
        return NULL;
    }
    if (!check_args(c, e, args, 0)) return NULL;
    int k0 = e->ntargs ? targ_kind(e->targs[0]) : TGA_UNSUPPORTED;
    if (!strcmp(name, "tuple")) {
        /* std::tuple<Tensor, ...>(): a tuple of undefined tensors (no gradient for any). */
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
        tgf_node *n = tgf_builtin_node(c, e, "std::tuple", TGA_TENSOR, NULL, 0);
        n->type = TGA_UNSUPPORTED; /* a tuple's type is `ntuple`, as for calls */
        n->ntuple = e->ntargs;
        return n;
    }
    if (!strcmp(name, "vector") && e->ntargs == 1 && (k0 == TGA_INT || k0 == TGA_TENSOR)) {
        /* std::vector<int64_t>(n, v) / std::vector<Tensor>(n): n copies of v / undefined. */
        int want = k0 == TGA_INT ? 2 : 1;
        if (e->nargs != want || args[0]->type != TGA_INT ||
            (want == 2 && args[1]->type != TGA_INT)) {
            tgf_fail(c, e->offset, "std::vector<%s>(%s) takes %s", e->targs[0],
                     want == 2 ? "n, value" : "n", want == 2 ? "two ints" : "one int");
            return NULL;
        }
        return tgf_builtin_node(c, e, "std::vector", k0 == TGA_INT ? TGA_INT_LIST : TGA_TENSOR_LIST,
                                args, e->nargs);
    }
    /* std::optional<T>(x) of a Tensor, int, double, bool or ScalarType, and
     * OptionalArrayRef<SymInt>(list): the optional holding x. */
    static const struct {
        int value, opt;
    } optionals[] = { { TGA_TENSOR, TGA_OPT_TENSOR },
                      { TGA_INT, TGA_OPT_INT },
                      { TGA_DOUBLE, TGA_OPT_DOUBLE },
                      { TGA_BOOL, TGA_OPT_BOOL },
                      { TGA_DTYPE, TGA_OPT_DTYPE } };
    bool array_ref = !strcmp(name, "OptionalArrayRef") && k0 == TGA_INT;
    for (size_t i = 0; e->ntargs == 1 && i < sizeof optionals / sizeof optionals[0]; i++) {
        if (!(array_ref || (!strcmp(name, "optional") && k0 == optionals[i].value))) continue;
        int want = array_ref ? TGA_INT_LIST : optionals[i].value;
        if (e->nargs != 1 ||
            !(tgf_accepts(want, args[0]->type) || args[0]->type == TGA_UNSUPPORTED)) {
            tgf_fail(c, e->offset, "'%s<%s>' takes one %s", e->name, e->targs[0],
                     tgf_kind_text(want));
            return NULL;
        }
        return tgf_builtin_node(c, e, name, array_ref ? TGA_OPT_INT_LIST : optionals[i].opt, args,
                                1);
    }
    tgf_fail(c, e->offset, "the template '%s<...>' is not part of the formula language", e->name);
    return NULL;
}

/* ------------------------------------------------------------------ the C emitter's limits */

const tgf_node *tgf_c_unsupported(const tgf_node *n)
{
    if (n->kind == TGF_NOT_IMPL) return NULL;
    /* A helper's C prototype comes from its schema: every type needs a C mapping (a tuple of
     * tensors gets a result struct of its own). */
    if (n->kind == TGF_HELPER && !tgf_vocab_prototype_ok(n->callee)) return n;
    /* Tuples: of calls, std::tuple<...>() and `?:` of them (compile_tuple). */
    bool tuple_call = (n->kind == TGF_CALL || n->kind == TGF_HELPER || n->kind == TGF_COND ||
                       (n->kind == TGF_BUILTIN && !strcmp(n->c, "std::tuple"))) &&
                      n->ntuple;
    if (tuple_call && n->kind == TGF_BUILTIN) return NULL;
    bool is_call = n->kind == TGF_CALL || n->kind == TGF_HELPER;
    if ((n->kind == TGF_BUILTIN && !tgf_c_builtin_ok(n)) ||
        (!tuple_call && (n->type == TGA_UNSUPPORTED || n->type >= TGA_KIND_COUNT) &&
         !(n->kind == TGF_BUILTIN &&
           ((int)n->type == TGF_KIND_NONE || (int)n->type == TGF_KIND_OPTIONS))))
        return n;
    /* std::get takes a tuple that a call returned (a tuple temporary). */
    if (n->kind == TGF_BUILTIN && !strcmp(n->c, "std::get") &&
        !(n->args[0]->kind == TGF_CALL || n->args[0]->kind == TGF_HELPER))
        return n;
    for (int i = 0; i < n->nargs; i++) {
        /* std::nullopt only as an argument: the parameter's kind gives its C value. */
        if ((int)n->args[i]->type == TGF_KIND_NONE && !is_call && n->kind != TGF_COND)
            return n->args[i];
        /* x.options() only as the dtype, layout, device, pin_memory arguments of a call. */
        if ((int)n->args[i]->type == TGF_KIND_OPTIONS && !is_call) return n->args[i];
        const tgf_node *u = tgf_c_unsupported(n->args[i]);
        if (u) return u;
    }
    return NULL;
}
