/* Checked formulas -> C, part two: the built-in C++ forms of PyTorch's formulas that the
 * checker types (formula_builtin.c): optionals, tensor metadata and layouts, int lists built
 * in loops, std::get of tuples, <cmath> and the other forms of docs/autograd.md. */
#include <string.h>

#include "formula/formula_c_internal.h"

/* Whether `value` of optional kind k holds a value (C text). */
static const char *opt_has(cc *c, tga_kind k, const char *v)
{
    switch (k) {
    case TGA_OPT_INT:
    case TGA_OPT_DOUBLE:
    case TGA_OPT_BOOL: return tgs_fmt(c->a, "%s.has_value", v);
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

/* The value an optional holds (the same C value, but for the {has_value, value} structs). */
static const char *opt_value(cc *c, tga_kind k, const char *v)
{
    if (k == TGA_OPT_INT || k == TGA_OPT_DOUBLE || k == TGA_OPT_BOOL)
        return tgs_fmt(c->a, "%s.value", v);
    return v;
}

/* `v` of type have as an optional of kind want (std::optional<T>(x)). */
static const char *opt_of(cc *c, tga_kind want, const char *v)
{
    switch (want) {
    case TGA_OPT_INT: return tgs_fmt(c->a, "(tg_opt_int){ true, %s }", v);
    case TGA_OPT_DOUBLE: return tgs_fmt(c->a, "(tg_opt_float){ true, (double)(%s) }", v);
    case TGA_OPT_BOOL: return tgs_fmt(c->a, "(tg_opt_bool){ true, %s }", v);
    default: return v;
    }
}

/* std::vector<int64_t>(n, v) (a0 is n) and fmap(list, lambda) (a0 is the list): an int list
 * in an owned temporary, filled by a loop; the lambda's body is C on the element. */
static val compile_int_fill(cc *c, const tgf_node *n, val a0)
{
    bool map = !strcmp(n->c, "fmap");
    int k = c->ntemps++;
    tgs_list_addf(&c->decls, c->a, "tg_int_list t%d = { NULL, 0 };", k);
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

/* Which inputs of the formula need a gradient (PyTorch's grad_input_mask), as a bool[N]. */
static const char *input_mask(cc *c)
{
    tgs_list l = { 0 };
    for (int k = 0; k < c->f->src->nvars; k++)
        if (c->f->edges[k] < 0)
            tgs_list_addf(&l, c->a, "tg__gen_needs_from(&n->base, %d)", c->d->nedges);
        else tgs_list_addf(&l, c->a, "tg__node_needs_input_grad(&n->base, %d)", c->f->edges[k]);
    return tgs_fmt(c->a, "(tg_bool_list){ (const bool[]){ %s }, %d }",
                   tgs_list_join(&l, c->a, ", "), c->f->src->nvars);
}

static const char *const tensor_false[] = { "is_cuda",       "is_xpu",    "is_mps",    "is_sparse",
                                            "is_sparse_csr", "is_mkldnn", "is_nested", "is_meta" };
static const char *const layout_names[] = { "kStrided",   "kSparse",    "kSparseCsr", "kSparseCsc",
                                            "kSparseBsr", "kSparseBsc", "kMkldnn",    "kJagged" };

static bool among(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return true;
    return false;
}
#define AMONG(s, names) among(s, names, sizeof names / sizeof names[0])

/* The built-in forms the C emitter compiles (compile_builtin): a value, or a method of a value,
 * whose C is a runtime call, a field or a constant. */
static const char *const simple_builtins[] = {
    "tangent",
    "defined",
    "dtype",
    "layout",
    "strides",
    "sym_strides",
    "storage_offset",
    "sym_storage_offset",
    "is_contiguous",
    "suggest_memory_format",
    "requires_grad",
    "is_cpu",
    "has_value",
    "value",
    "value_or",
    "*",
    "!",
    "conj",
    "toDouble",
    "toFloat",
    "toComplexDouble",
    "toLong",
    "isComplex",
    "size",
    "back",
    "front",
    "vec",
    "empty",
    "[]",
    "GradMode::is_enabled",
    "retain_variables",
    "nullopt",
    "Tensor",
    "IntArrayRef",
    "std::sqrt",
    "std::exp",
    "std::log",
    "std::abs",
    "sqrt",
    "exp",
    "log",
    "abs",
    "pow",
    "optional",
    "OptionalArrayRef",
    "std::get",
    "grad_input_mask",
    "{}",
    "sym_blocksize",
    "isDifferentiableType",
    "isComplexType",
    "isFloatingType",
    "TensorGeometry",
    "options",
    "std::vector",
    "fmap",
    "lambda parameter",
};

/* Whether n is C on numbers only (literals, the lambda's parameter, C operators): the body of
 * fmap's lambda is evaluated in a loop, with no temporaries of its own. */
static bool pure_c(const tgf_node *n)
{
    if (n->kind != TGF_LIT && n->kind != TGF_COP &&
        !(n->kind == TGF_BUILTIN && !strcmp(n->c, "lambda parameter")))
        return false;
    for (int i = 0; i < n->nargs; i++)
        if (!pure_c(n->args[i])) return false;
    return true;
}

bool tgf_c_builtin_ok(const tgf_node *n)
{
    const char *w = n->c ? n->c : "";
    if (!strcmp(w, "std::vector")) return n->type == TGA_INT_LIST;
    if (!strcmp(w, "fmap")) return pure_c(n->args[1]);
    if (!strcmp(w, "size") || !strcmp(w, "[]")) /* of a list value, not of a Tensor[] input */
        return !(n->args[0]->kind == TGF_INPUT &&
                 (n->args[0]->type == TGA_TENSOR_LIST || n->args[0]->type == TGA_OPT_TENSOR_LIST));
    if (!strcmp(w, "value_or")) return n->type != TGA_TENSOR;
    if (!strcmp(w, "is_contiguous")) return n->nargs == 1;
    if (strstr(w, "MemoryFormat::") || AMONG(w, layout_names) || AMONG(w, tensor_false))
        return true;
    /* the device's methods (is_cpu() ...) of a Device value */
    if (n->nargs == 1 && n->args[0]->type == TGA_DEVICE) return !strcmp(w, "is_cpu");
    return AMONG(w, simple_builtins);
}

val tgf__c_builtin(cc *c, const tgf_node *n)
{
    const char *w = n->c;
    val a0 = n->nargs ? tgf__c_compile(c, n->args[0]) : plain("");
    tga_kind k0 = n->nargs ? n->args[0]->type : TGA_UNSUPPORTED;
    const char *x = a0.c;
#define P(...) plain(tgs_fmt(c->a, __VA_ARGS__))
    if (!strcmp(w, "tangent")) /* a forward formula's <arg>_t: a field of its context */
        return P("n->%s_t", tga_ident(c->a, c->d->op->f->schema.args[n->index].name));
    if (!strcmp(w, "grad_input_mask")) return plain(input_mask(c));
    if (!strcmp(w, "retain_variables")) return plain("true"); /* conservative: keep a copy */
    if (!strcmp(w, "GradMode::is_enabled")) return plain("tg_is_grad_enabled()");
    if (!strcmp(w, "Tensor") || !strcmp(w, "nullopt") || !strcmp(w, "sym_blocksize"))
        return plain(n->type == TGA_OPT_INT_LIST ? "(tg_int_list){ NULL, 0 }" : "NULL");
    if (strstr(w, "MemoryFormat::")) {
        const char *b = strrchr(w, ':') + 1;
        return plain(!strcmp(b, "Contiguous")     ? "TG_CONTIGUOUS_FORMAT"
                     : !strcmp(b, "Preserve")     ? "TG_PRESERVE_FORMAT"
                     : !strcmp(b, "ChannelsLast") ? "TG_CHANNELS_LAST"
                                                  : "TG_CHANNELS_LAST_3D");
    }
    /* Every tensorgen tensor is strided: the other layouts are values no tensor has. */
    for (size_t i = 0; i < sizeof layout_names / sizeof layout_names[0]; i++)
        if (!strcmp(w, layout_names[i]))
            return i ? P("((tg_layout)%d)", (int)i) : plain("TG_STRIDED");
    if (!strcmp(w, "layout")) return P("((void)%s, TG_STRIDED)", x);
    if (AMONG(w, tensor_false)) return P("((void)%s, false)", x);
    if (!strcmp(w, "is_cpu"))
        return k0 == TGA_DEVICE ? P("(%s.type == TG_CPU)", x)
                                : P("(tg_tensor_device(%s).type == TG_CPU)", x);
    if (!strcmp(w, "defined")) return P("(%s != NULL)", x);
    if (!strcmp(w, "dtype")) return P("tg_tensor_dtype(%s)", x);
    if (!strcmp(w, "strides") || !strcmp(w, "sym_strides")) return P("tg__gen_strides(%s)", x);
    if (!strcmp(w, "storage_offset") || !strcmp(w, "sym_storage_offset"))
        return P("tg_tensor_storage_offset(%s)", x);
    if (!strcmp(w, "is_contiguous")) return P("tg_tensor_is_contiguous(%s)", x);
    if (!strcmp(w, "suggest_memory_format")) return P("((void)%s, TG_CONTIGUOUS_FORMAT)", x);
    if (!strcmp(w, "requires_grad")) return P("tg_tensor_requires_grad(%s)", x);
    if (!strcmp(w, "has_value")) return plain(opt_has(c, k0, x));
    if (!strcmp(w, "!")) return P("(!%s)", opt_has(c, k0, x));
    if (!strcmp(w, "value") || !strcmp(w, "*")) /* a Tensor? stays the same (owned) value */
        return k0 == TGA_OPT_TENSOR ? a0 : plain(opt_value(c, k0, x));
    if (!strcmp(w, "value_or"))
        return P("(%s ? %s : %s)", opt_has(c, k0, x), opt_value(c, k0, x),
                 tgf__c_compile(c, n->args[1]).c);
    if (!strcmp(w, "toLong")) return P("((int64_t)(%s))", x);
    if (!strcmp(w, "isComplex")) return P("((void)(%s), false)", x); /* Scalars are real here */
    if (!strcmp(w, "conj") || !strcmp(w, "toDouble") || !strcmp(w, "toFloat") ||
        !strcmp(w, "toComplexDouble"))
        return P("((double)(%s))", x);
    if (!strcmp(w, "size")) return P("%s.len", x);
    if (!strcmp(w, "back")) return P("%s.data[%s.len - 1]", x, x);
    if (!strcmp(w, "front")) return P("%s.data[0]", x);
    if (!strcmp(w, "empty")) return P("(%s.len == 0)", x);
    if (!strcmp(w, "vec") || !strcmp(w, "OptionalArrayRef") || !strcmp(w, "TensorGeometry"))
        return a0;
    if (!strcmp(w, "[]")) return P("%s.data[%s]", x, tgf__c_compile(c, n->args[1]).c);
    if (!strcmp(w, "IntArrayRef"))
        return k0 == TGA_INT ? P("(tg_int_list){ (const int64_t[]){ %s }, 1 }", x) : a0;
    if (!strcmp(w, "optional"))
        return n->type == TGA_OPT_TENSOR ? a0 : plain(opt_of(c, n->type, x));
    if (!strcmp(w, "isDifferentiableType") || !strcmp(w, "isFloatingType"))
        return P("tg_dtype_is_floating(%s)", x);
    if (!strcmp(w, "isComplexType")) return P("((void)(%s), false)", x);
    if (!strcmp(w, "{}")) { /* a bool[N] literal */
        tgs_list items = { 0 };
        tgs_list_add(&items, c->a, x);
        for (int i = 1; i < n->nargs; i++)
            tgs_list_add(&items, c->a, tgf__c_compile(c, n->args[i]).c);
        return P("(tg_bool_list){ (const bool[]){ %s }, %d }", tgs_list_join(&items, c->a, ", "),
                 n->nargs);
    }
    if (!strcmp(w, "std::vector") || !strcmp(w, "fmap")) /* an int list filled here */
        return compile_int_fill(c, n, a0);
    if (!strcmp(w, "lambda parameter")) return plain(c->lambda_var);
    if (!strcmp(w, "std::get")) { /* moves element index out of the tuple temporary */
        int k = tgf__c_temp(c, "tg_tensor *", NULL);
        const char *field = n->args[0]->callee->rets[n->index].name;
        tgf__c_line(c, "t%d = tg__gen_take(&%s.%s);", k, x, field);
        return (val){ tgs_fmt(c->a, "t%d", k), k };
    }
    /* <cmath> on numbers */
    const char *fn = strncmp(w, "std::", 5) ? w : w + 5;
    if (!strcmp(fn, "abs")) fn = "fabs";
    if (n->nargs == 2)
        return P("%s((double)(%s), (double)(%s))", fn, x, tgf__c_compile(c, n->args[1]).c);
    return P("%s((double)(%s))", fn, x);
#undef P
}
