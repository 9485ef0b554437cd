/* Checked formulas -> C. Every tensor an operator returns goes into its own temporary
 * (declared NULL at the top of the function, released at its end on every path), so a failing
 * call anywhere just jumps to the end: the function returns NULL (or -1) with the operator's
 * error recorded and leaks nothing. Scalars are plain C expressions, except size(d), which can
 * fail (a dimension out of range). Saved tensors are unpacked once, at the top, which is also
 * where a freed graph or an in-place modification is reported (tg_autograd_unpack). */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "formula/formula_forms.h"
#include "base/strbuf.h"

void tgf__c_line(cc *c, const char *fmt, ...)
{
    for (int i = 0; i <= c->depth; i++) tgs_puts(&c->body, "    ");
    va_list ap;
    va_start(ap, fmt);
    tgs_vprintf(&c->body, fmt, ap);
    va_end(ap);
    tgs_puts(&c->body, "\n");
}

const char *tgf__c_fail_jump(cc *c)
{
    c->gotos = true;
    return "goto done;";
}

/* A new temporary of C type `ctype`; tensors (and tuples of them) are released at the end. */
int tgf__c_temp(cc *c, const char *ctype, const tga_op *tuple_of)
{
    int k = c->ntemps++;
    if (tuple_of) {
        tgs_list_addf(&c->decls, c->a, "%s t%d = { 0 };", ctype, k);
        for (int i = 0; i < tuple_of->nrets; i++)
            tgs_list_addf(&c->releases, c->a, "tg_release(t%d.%s);", k, tuple_of->rets[i].name);
    } else if (!strcmp(ctype, "tg_tensor_list")) {
        if (k < 512) c->live[k] = c->is_list[k] = true;
        tgs_list_addf(&c->decls, c->a, "tg_tensor_list t%d = { NULL, 0 };", k);
        tgs_list_addf(&c->releases, c->a, "tg_tensor_list_release(t%d);", k);
    } else if (!strcmp(ctype, "tg_tensor *")) {
        if (k < 512) c->live[k] = true;
        tgs_list_addf(&c->decls, c->a, "tg_tensor *t%d = NULL;", k);
        tgs_list_addf(&c->releases, c->a, "tg_release(t%d);", k);
    } else {
        bool scalar = !strcmp(ctype, "int64_t") || !strcmp(ctype, "double") ||
                      !strcmp(ctype, "bool") || !strcmp(ctype, "tg_dtype");
        tgs_list_addf(&c->decls, c->a, "%s t%d = %s;", ctype, k, scalar ? "0" : "{ 0 }");
    }
    return k;
}

const char *tgf_saved_field(tgm_arena *a, const tgf_deriv *d, bool output, int index, unsigned use)
{
    const char *base;
    if (output) base = d->op->nrets == 1 ? "result" : tgs_fmt(a, "result%d", index);
    else {
        base = tga_ident(a, d->op->f->schema.args[index].name);
        if (!strcmp(base, "base") || !strcmp(base, "n")) /* the node header; the node */
            base = tgs_fmt(a, "%s_", base);
    }
    switch (use) {
    case TGF_USE_SIZES: return tgs_fmt(a, "%s_sizes", base);
    case TGF_USE_DIM: return tgs_fmt(a, "%s_dim", base);
    case TGF_USE_NUMEL: return tgs_fmt(a, "%s_numel", base);
    case TGF_USE_DTYPE: return tgs_fmt(a, "%s_scalar_type", base);
    case TGF_USE_DEVICE: return tgs_fmt(a, "%s_device", base);
    default: return base;
    }
}

const char *tgf_list_size_field(tgm_arena *a, const tgf_deriv *d, int k)
{
    const tgf_list_size *ls = &d->list_sizes[k];
    return tgs_fmt(a, "%s_size_%d", tga_ident(a, d->op->f->schema.args[ls->arg].name), k);
}

/* ------------------------------------------------------------------ saved values */

static void find_unpacks(cc *c, const tgf_node *n, bool as_meta)
{
    if (n->kind == TGF_INPUT || n->kind == TGF_OUTPUT) {
        bool out = n->kind == TGF_OUTPUT;
        unsigned uses = out ? c->d->output_uses[n->index] : c->d->input_uses[n->index];
        bool tensor = n->type == TGA_TENSOR || n->type == TGA_OPT_TENSOR;
        /* Metadata comes from the tensor itself when the node keeps the tensor anyway. */
        if (tensor && (!as_meta || (uses & TGF_USE_TENSOR)))
            (out ? c->unpack_out : c->unpack_in)[n->index] = true;
        return;
    }
    for (int i = 0; i < n->nargs; i++) find_unpacks(c, n->args[i], n->kind == TGF_META && i == 0);
}

static void emit_unpacks(cc *c)
{
    const tga_op *op = c->d->op;
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? op->nrets : op->nargs;
        for (int i = 0; i < n; i++) {
            if (!(pass ? c->unpack_out : c->unpack_in)[i]) continue;
            const char *f = tgf_saved_field(c->a, c->d, pass, i, TGF_USE_TENSOR);
            tgs_list_addf(&c->decls, c->a, "tg_tensor *s_%s = NULL;", f);
            tgs_list_addf(&c->releases, c->a, "tg_release(s_%s);", f);
            if (!pass && op->args[i].kind == TGA_OPT_TENSOR)
                tgf__c_line(
                    c, "if (n->%s_defined && !(s_%s = tg_autograd_unpack(&n->%s, &n->base))) %s", f,
                    f, f, tgf__c_fail_jump(c));
            else
                tgf__c_line(c, "if (!(s_%s = tg_autograd_unpack(&n->%s, &n->base))) %s", f, f,
                            tgf__c_fail_jump(c));
        }
    }
}

/* ------------------------------------------------------------------ expressions */

static const char *none_value(cc *c, tga_kind k);

/* The metadata of a saved input/output kept without its tensor. */
static const char *saved_meta(cc *c, const tgf_node *src, tgf_meta meta)
{
    bool out = src->kind == TGF_OUTPUT;
    unsigned uses = out ? c->d->output_uses[src->index] : c->d->input_uses[src->index];
    const char *sizes = tgf_saved_field(c->a, c->d, out, src->index, TGF_USE_SIZES);
    switch (meta) {
    case TGF_SIZES:
    case TGF_SIZE: return tgs_fmt(c->a, "tg__saved_sizes_list(&n->%s)", sizes);
    case TGF_DIM:
        return uses & TGF_USE_SIZES
                   ? tgs_fmt(c->a, "n->%s.ndim", sizes)
                   : tgs_fmt(c->a, "n->%s",
                             tgf_saved_field(c->a, c->d, out, src->index, TGF_USE_DIM));
    case TGF_NUMEL:
        return uses & TGF_USE_SIZES
                   ? tgs_fmt(c->a, "tg__gen_numel(tg__saved_sizes_list(&n->%s))", sizes)
                   : tgs_fmt(c->a, "n->%s",
                             tgf_saved_field(c->a, c->d, out, src->index, TGF_USE_NUMEL));
    case TGF_SCALAR_TYPE:
        return tgs_fmt(c->a, "n->%s", tgf_saved_field(c->a, c->d, out, src->index, TGF_USE_DTYPE));
    case TGF_DEVICE:
        return tgs_fmt(c->a, "n->%s", tgf_saved_field(c->a, c->d, out, src->index, TGF_USE_DEVICE));
    }
    return "0";
}

static val compile_meta(cc *c, const tgf_node *n)
{
    const tgf_node *src = n->args[0];
    const char *text = NULL;
    if (src->type == TGA_TENSOR_LIST) /* xs.size(d): saved when the op ran */
        return plain(tgs_fmt(c->a, "n->%s", tgf_list_size_field(c->a, c->d, n->index)));
    bool saved = !c->forward && (src->kind == TGF_INPUT || src->kind == TGF_OUTPUT) &&
                 !(src->kind == TGF_INPUT ? c->unpack_in : c->unpack_out)[src->index];
    if (saved) {
        text = saved_meta(c, src, n->meta);
    } else {
        const char *t = tgf__c_compile(c, src).c;
        switch (n->meta) {
        case TGF_SIZES:
        case TGF_SIZE: text = tgs_fmt(c->a, "tg__gen_sizes(%s)", t); break;
        case TGF_DIM: text = tgs_fmt(c->a, "tg_tensor_dim(%s)", t); break;
        case TGF_NUMEL: text = tgs_fmt(c->a, "tg_tensor_numel(%s)", t); break;
        case TGF_SCALAR_TYPE: text = tgs_fmt(c->a, "tg_tensor_dtype(%s)", t); break;
        case TGF_DEVICE: text = tgs_fmt(c->a, "tg_tensor_device(%s)", t); break;
        }
    }
    if (n->meta != TGF_SIZE) return plain(text);
    const char *d = tgf__c_compile(c, n->args[1]).c;
    int k = tgf__c_temp(c, "int64_t", NULL);
    tgf__c_line(c, "if (tg__gen_size(%s, %s, &t%d)) %s", text, d, k, tgf__c_fail_jump(c));
    return plain(tgs_fmt(c->a, "t%d", k));
}

/* std::nullopt (or an optional built empty) as a value of optional kind k. */
static const char *none_value(cc *c, tga_kind k)
{
    switch (k) {
    case TGA_OPT_INT: return "TG_NONE_INT";
    case TGA_OPT_DOUBLE: return "TG_NONE_FLOAT";
    case TGA_OPT_BOOL: return "TG_NONE_BOOL";
    case TGA_OPT_DTYPE: return "TG_DTYPE_NONE";
    case TGA_OPT_LAYOUT: return "TG_LAYOUT_NONE";
    case TGA_OPT_MEMORY_FORMAT: return "TG_MEMORY_FORMAT_NONE";
    case TGA_OPT_DEVICE: return "(tg_device){ TG_DEVICE_NONE, -1 }";
    case TGA_OPT_INT_LIST: return "TG_NO_INTS";
    case TGA_TENSOR_LIST_OR_NONE: return "TG_NO_TENSORS";
    case TGA_OPT_FLOAT_LIST:
    case TGA_OPT_BOOL_LIST:
    case TGA_OPT_STR_LIST: return tgs_fmt(c->a, "(%s){ NULL, 0 }", tga_ctype(k));
    default: return "NULL"; /* Tensor?, str?, Generator?, Storage? */
    }
}

/* `v` (of type have) as an argument for parameter kind `want`. */
static const char *convert(cc *c, const tga_arg *p, tga_kind have, const char *v)
{
    tga_kind want = p->kind;
    if (want == have) return v;
    if ((int)have == TGF_KIND_NONE) return none_value(c, want);
    switch (want) {
    case TGA_OPT_INT: return tgs_fmt(c->a, "(tg_opt_int)(%s)", v);
    case TGA_DOUBLE:
    case TGA_OPT_DOUBLE: return tgs_fmt(c->a, "(double)(%s)", v);
    case TGA_OPT_BOOL: return tgs_fmt(c->a, "(tg_opt_bool)(%s)", v);
    case TGA_INT_LIST:
    case TGA_OPT_INT_LIST:
        if (have == TGA_INT) { /* one int for an int[N]: N copies */
            tgs_list l = { 0 };
            for (int i = 0; i < p->arg->type.list_size; i++) tgs_list_add(&l, c->a, v);
            return tgs_fmt(c->a, "(tg_int_list){ .len = %d, .data = (const int64_t[]){ %s } }",
                           p->arg->type.list_size, tgs_list_join(&l, c->a, ", "));
        }
        return v;
    default: return v; /* Tensor/Tensor?, ScalarType?, str?: the same C type */
    }
}

/* The C value of each parameter of n's callee (NULL: omitted, its default): the arguments in
 * order, where `t.options()` fills dtype, layout, device and pin_memory at once (as the checker
 * matched them). */
static const char **call_values(cc *c, const tgf_node *n)
{
    const tga_op *op = n->callee;
    const char **vals = tgm_alloc(c->a, sizeof *vals * (size_t)(op->nargs + 1));
    int pi = 0;
    for (int ai = 0; ai < n->nargs && pi < op->nargs; ai++, pi++) {
        const tgf_node *arg = n->args[ai];
        int mf = tgf_memory_format_options(op, pi, arg);
        if (mf >= 0) { /* the options group keeps its defaults; memory_format gets the value */
            pi = mf;
            vals[pi] = convert(c, &op->args[pi], arg->type, tgf__c_compile(c, arg).c);
            continue;
        }
        if (tgf_empty_braces(arg) && op->args[pi].kind != arg->type) { /* `{}`: none */
            vals[pi] = op->args[pi].kind == TGA_TENSOR ? "NULL" : none_value(c, op->args[pi].kind);
            continue;
        }
        if ((int)arg->type != TGF_KIND_OPTIONS) {
            vals[pi] = convert(c, &op->args[pi], arg->type, tgf__c_compile(c, arg).c);
            continue;
        }
        const char *t = tgf__c_compile(c, arg->args[0]).c;
        vals[pi] = tgs_fmt(c->a, "tg_tensor_dtype(%s)", t);
        while (pi + 1 < op->nargs && tgf_options_part(&op->args[pi + 1])) {
            tga_kind k = op->args[++pi].kind;
            vals[pi] = k == TGA_OPT_LAYOUT   ? "TG_STRIDED"
                       : k == TGA_OPT_DEVICE ? tgs_fmt(c->a, "tg_tensor_device(%s)", t)
                                             : "TG_NONE_BOOL";
        }
    }
    return vals;
}

static const char *call_text(cc *c, const tgf_node *n)
{
    const tga_op *op = n->callee;
    tgs_list pos = { 0 }, opts = { 0 };
    const char **vals = call_values(c, n);
    if (n->kind == TGF_HELPER) { /* tg__grad_<name>(every argument, in order) */
        for (int i = 0; i < op->nargs; i++)
            tgs_list_add(&pos, c->a, vals[i] ? vals[i] : op->args[i].default_expr);
        return tgs_fmt(c->a, "%s(%s)", op->cname, tgs_list_join(&pos, c->a, ", "));
    }
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *p = &op->args[i];
        const char *v = vals[i] ? vals[i] : p->default_expr;
        if (p->default_expr) tgs_list_addf(&opts, c->a, ".%s = %s", p->name, v);
        else tgs_list_add(&pos, c->a, v);
    }
    if (op->opts_name)
        tgs_list_addf(&pos, c->a, "(%s){ %s }", op->opts_name, tgs_list_join(&opts, c->a, ", "));
    return tgs_fmt(c->a, "%s(%s)", op->fn_name, tgs_list_join(&pos, c->a, ", "));
}

/* Drops the tensors made for the arguments of a call once it returned: each temporary is
 * used once (formulas are trees), so backward holds no more intermediates than it needs.
 * (A list from tg__gen_sizes(t) points into t: it is an argument of this call or a deeper
 * one, so t is still alive when it is read.) */
static void drop_args(cc *c, int first, int last)
{
    for (int k = first; k < last && k < 512; k++)
        if (c->live[k]) {
            tgf__c_line(c, c->is_list[k] ? "TG__GEN_DROP_LIST(t%d);" : "TG__GEN_DROP(t%d);", k);
            c->live[k] = false;
        }
}

static val compile_call(cc *c, const tgf_node *n)
{
    const tga_op *op = n->callee;
    int first = c->ntemps;
    const char *call = call_text(c, n);
    int last = c->ntemps;
    if (n->ntuple) {
        int k = tgf__c_temp(c, op->ret_ctype, op);
        tgf__c_line(c, "t%d = %s;", k, call);
        /* An error leaves every field NULL (docs/c-api.md, "Results"); a backward function
         * may leave some undefined (no gradient for an input the mask does not ask for). */
        tgs_list none = { 0 };
        for (int i = 0; i < op->nrets; i++)
            tgs_list_addf(&none, c->a, "!t%d.%s", k, op->rets[i].name);
        tgf__c_line(c, "if (%s) %s", tgs_list_join(&none, c->a, " && "), tgf__c_fail_jump(c));
        drop_args(c, first, last);
        return (val){ tgs_fmt(c->a, "t%d", k), k };
    }
    if (n->type == TGA_TENSOR_LIST) { /* owned: the array and a reference per element */
        int k = tgf__c_temp(c, "tg_tensor_list", NULL);
        tgf__c_line(c, "if (!(t%d = %s).data) %s", k, call, tgf__c_fail_jump(c));
        drop_args(c, first, last);
        return (val){ tgs_fmt(c->a, "t%d", k), k };
    }
    if (n->type != TGA_TENSOR) { /* an int/float/bool result: no error channel */
        int k = tgf__c_temp(c, tga_ctype(n->type), NULL);
        tgf__c_line(c, "t%d = %s;", k, call);
        drop_args(c, first, last);
        return plain(tgs_fmt(c->a, "t%d", k));
    }
    int k = tgf__c_temp(c, "tg_tensor *", NULL);
    tgf__c_line(c, "if (!(t%d = %s)) %s", k, call, tgf__c_fail_jump(c));
    drop_args(c, first, last);
    return (val){ tgs_fmt(c->a, "t%d", k), k };
}

/* Stores v into temporary k: an owned tensor moves, a borrowed one is retained. */
static void store(cc *c, int k, const tgf_node *n, val v)
{
    if (n->type != TGA_TENSOR && n->type != TGA_OPT_TENSOR) tgf__c_line(c, "t%d = %s;", k, v.c);
    else if (v.temp >= 0) {
        tgf__c_line(c, "t%d = tg__gen_take(&t%d);", k, v.temp);
        if (v.temp < 512) c->live[v.temp] = false;
    } else tgf__c_line(c, "t%d = tg_retain(%s);", k, v.c);
}

/* `(a == b)` -> `a == b`, for `if (...)`: clang warns about doubled parentheses there. */
static const char *unparen(cc *c, const char *s)
{
    size_t n = strlen(s);
    if (n < 2 || s[0] != '(' || s[n - 1] != ')') return s;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
        if (depth == 0 && i < n - 1) return s; /* `(a) + (b)`: the outer ones are not a pair */
    }
    return tgm_strndup(c->a, s + 1, n - 2);
}

/* A branch of `?:` n: std::nullopt is the none value of the other branch's optional kind. */
static val branch(cc *c, const tgf_node *n, const tgf_node *b)
{
    if ((int)b->type == TGF_KIND_NONE) return plain(none_value(c, n->type));
    return tgf__c_compile(c, b);
}

/* A tuple of tensors (a call with several Tensor returns, std::tuple<...>() of undefined
 * tensors, or `?:` of either) into the tensor temporaries temps[0..n->ntuple), which own them
 * afterwards: each element is moved out of the call's result struct. */
static void compile_tuple(cc *c, const tgf_node *n, const int *temps)
{
    if (n->kind == TGF_BUILTIN) return; /* std::tuple<...>(): the temporaries stay NULL */
    if (n->kind == TGF_COND) {
        const char *cond = unparen(c, tgf__c_compile(c, n->args[0]).c);
        for (int b = 1; b <= 2; b++) {
            tgf__c_line(c, b == 1 ? "if (%s) {" : "} else {", cond);
            c->depth++;
            compile_tuple(c, n->args[b], temps);
            c->depth--;
        }
        tgf__c_line(c, "}");
        return;
    }
    val v = tgf__c_compile(c, n); /* a call: its result struct */
    for (int i = 0; i < n->ntuple; i++) {
        const char *field = n->callee->rets[i].name;
        tgf__c_line(c, "t%d = tg__gen_take(&%s.%s);", temps[i], v.c, field);
    }
}

static val compile_cond(cc *c, const tgf_node *n)
{
    const char *cond = unparen(c, tgf__c_compile(c, n->args[0]).c);
    int k = tgf__c_temp(c, tga_ctype(n->type), NULL);
    tgf__c_line(c, "if (%s) {", cond);
    c->depth++;
    store(c, k, n, branch(c, n, n->args[1]));
    c->depth--;
    tgf__c_line(c, "} else {");
    c->depth++;
    store(c, k, n, branch(c, n, n->args[2]));
    c->depth--;
    tgf__c_line(c, "}");
    bool tensor = n->type == TGA_TENSOR || n->type == TGA_OPT_TENSOR;
    return (val){ tgs_fmt(c->a, "t%d", k), tensor ? k : -1 };
}

static val compile_list(cc *c, const tgf_node *n)
{
    if (n->nargs == 0)
        return plain(n->type == TGA_INT_LIST ? "TG_INTS_EMPTY" : "(tg_tensor_list){ NULL, 0 }");
    tgs_list items = { 0 };
    for (int i = 0; i < n->nargs; i++) tgs_list_add(&items, c->a, tgf__c_compile(c, n->args[i]).c);
    const char *elems = tgs_list_join(&items, c->a, ", ");
    if (n->type == TGA_INT_LIST)
        return plain(tgs_fmt(c->a, "(tg_int_list){ .len = %d, .data = (const int64_t[]){ %s } }",
                             n->nargs, elems));
    return plain(
        tgs_fmt(c->a, "(tg_tensor_list){ (tg_tensor *const[]){ %s }, %d }", elems, n->nargs));
}

/* A C++ form (TGF_BUILTIN): its row's lowering (formula_forms.h), its first argument compiled
 * first. */
static val compile_form(cc *c, const tgf_node *n)
{
    const tgf_form *f = n->form;
    val a0 = n->nargs ? tgf__c_compile(c, n->args[0]) : plain("");
    if (f && f->lower) return f->lower(c, n, a0);
    /* c_text may use the argument twice ("%s.data[%s.len - 1]"): printf ignores what is left */
    return plain(f && f->c_text ? tgs_fmt(c->a, f->c_text, a0.c, a0.c) : "NULL");
}

val tgf__c_compile(cc *c, const tgf_node *n)
{
    switch (n->kind) {
    case TGF_LIT: return plain(n->c);
    case TGF_GRAD: c->uses_grads = true; return plain(tgs_fmt(c->a, "grads[%d]", n->index));
    case TGF_GRADS:
        c->uses_grads = true;
        return plain("((tg_tensor_list){ grads, n->base.num_outputs })");
    case TGF_INPUT:
    case TGF_OUTPUT: {
        bool out = n->kind == TGF_OUTPUT;
        const char *f = tgf_saved_field(c->a, c->d, out, n->index, TGF_USE_TENSOR);
        if (c->forward) return plain(tgs_fmt(c->a, "n->%s", f)); /* the live values */
        if (n->type == TGA_TENSOR || n->type == TGA_OPT_TENSOR)
            return plain(tgs_fmt(c->a, "s_%s", f));
        return plain(tgs_fmt(c->a, "n->%s", f));
    }
    case TGF_META: return compile_meta(c, n);
    case TGF_CALL:
    case TGF_HELPER: return compile_call(c, n);
    case TGF_BUILTIN: return compile_form(c, n); /* those tgf_c_unsupported accepts */
    case TGF_COP:
        if (n->nargs == 2 && (!strcmp(n->c, "==") || !strcmp(n->c, "!=")) &&
            (n->args[0]->type == TGA_STR || n->args[0]->type == TGA_OPT_STR) &&
            (n->args[1]->type == TGA_STR || n->args[1]->type == TGA_OPT_STR))
            /* strings compare by value (`reduce == "sum"`), not as pointers */
            return plain(tgs_fmt(c->a, "(%stg__gen_str_eq(%s, %s))", n->c[0] == '!' ? "!" : "",
                                 tgf__c_compile(c, n->args[0]).c, tgf__c_compile(c, n->args[1]).c));
        if (n->nargs == 1)
            return plain(tgs_fmt(c->a, "(%s%s)", n->c, tgf__c_compile(c, n->args[0]).c));
        return plain(tgs_fmt(c->a, "(%s %s %s)", tgf__c_compile(c, n->args[0]).c, n->c,
                             tgf__c_compile(c, n->args[1]).c));
    case TGF_COND: return compile_cond(c, n);
    case TGF_LIST: return compile_list(c, n);
    case TGF_NOT_IMPL: break;
    }
    return plain("NULL");
}

/* ------------------------------------------------------------------ what compiles */

/* Whether the C emitter compiles form node n: its form has a lowering that takes n. */
static bool form_lowers(const tgf_node *n)
{
    const tgf_form *f = n->form;
    return f && (f->lower || f->c_text) && (!f->lowers || f->lowers(n));
}

const tgf_node *tgf_c_unsupported(const tgf_node *n)
{
    if (n->kind == TGF_NOT_IMPL) return NULL;
    /* A helper's C prototype comes from its schema: every type needs a C mapping (a tuple of
     * tensors gets a result struct of its own). */
    if (n->kind == TGF_HELPER && !tgf_vocab_prototype_ok(n->callee)) return n;
    /* Tuples: of calls, std::tuple<...>() (the form with several values: compile_tuple leaves
     * its temporaries NULL) and `?:` of them (compile_tuple). */
    if (n->kind == TGF_BUILTIN && n->ntuple) return NULL;
    bool tuple_call =
        (n->kind == TGF_CALL || n->kind == TGF_HELPER || n->kind == TGF_COND) && n->ntuple;
    bool is_call = n->kind == TGF_CALL || n->kind == TGF_HELPER;
    if ((n->kind == TGF_BUILTIN && !form_lowers(n)) ||
        (!tuple_call && (n->type == TGA_UNSUPPORTED || n->type >= TGA_KIND_COUNT) &&
         !(n->kind == TGF_BUILTIN &&
           ((int)n->type == TGF_KIND_NONE || (int)n->type == TGF_KIND_OPTIONS))))
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

/* ------------------------------------------------------------------ functions */

/* Whether the compiled body reads the node (the forward frame) `n`. */
static bool reads_n(const cc *c)
{
    for (const char *p = c->body.data; p && (p = strstr(p, "n->")); p++)
        if (p == c->body.data || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) return true;
    return false;
}

/* Appends the statements, several to a line of at most 100 columns; a run of declarations
 * `tg_tensor *x = NULL;` becomes one declaration. */
static void put_packed(tgs_buf *b, tgm_arena *a, const tgs_list *stmts)
{
    static const char decl[] = "tg_tensor *";
    const size_t type_len = sizeof decl - 2; /* "tg_tensor " */
    tgs_buf line;
    tgs_buf_init(&line);
    bool in_decl = false; /* line is "tg_tensor *x = NULL, *y = NULL;" so far */
    for (int i = 0; i <= stmts->n; i++) {
        const char *s = i < stmts->n ? stmts->items[i] : NULL;
        size_t n = s ? strlen(s) : 0;
        bool is_decl =
            s && !strncmp(s, decl, sizeof decl - 1) && n > 8 && !strcmp(s + n - 8, " = NULL;");
        /* a declaration's variable without the type and the ';': "*x = NULL" */
        const char *var = is_decl ? tgs_fmt(a, "%.*s", (int)(n - type_len - 1), s + type_len) : s;
        if (s && line.len && in_decl == is_decl && line.len + 2 + strlen(var) <= 96) {
            if (is_decl) line.len--; /* its ';' */
            tgs_printf(&line, is_decl ? ", %s;" : " %s", var);
            continue;
        }
        if (line.len) tgs_printf(b, "    %.*s\n", (int)line.len, line.data);
        line.len = 0;
        if (s) tgs_puts(&line, is_decl ? tgs_fmt(a, "tg_tensor %s;", var) : s);
        in_decl = is_decl;
    }
    tgs_buf_free(&line);
}

/* The top of a compiled function: `self` declares `n` from the parameter `param` (or the
 * parameter is marked unused), then the locals and the temporaries, then the body. */
static void assemble(cc *c, tgs_buf *b, const char *self, const char *param, tgs_list *locals)
{
    if (reads_n(c)) tgs_printf(b, "    %s\n", self);
    else tgs_printf(b, "    (void)%s;\n", param);
    /* the tensor temporaries first, so that they pack into few declarations */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->decls.n; i++)
            if ((strncmp(c->decls.items[i], "tg_tensor *", 11) == 0) == (pass == 0))
                tgs_list_add(locals, c->a, c->decls.items[i]);
    put_packed(b, c->a, locals);
}

/* The end of a compiled function: the body, the error label, the releases, the return. */
static void finish(cc *c, tgs_buf *b, const char *result)
{
    tgs_puts(b, c->body.data ? c->body.data : "");
    if (c->gotos) tgs_puts(b, "done:\n");
    put_packed(b, c->a, &c->releases);
    tgs_printf(b, "    return %s;\n}\n", result);
    tgs_buf_free(&c->body);
}

bool tgf_formula_may_be_undefined(const tgf_formula *f)
{
    return f->src->nvars == 1 && f->edges[0] >= 0 && f->root->type == TGA_OPT_TENSOR;
}

const char *tgf_compile(tgm_arena *a, const tgf_deriv *d, const tgf_formula *f, const char *fn,
                        const char *node_type)
{
    cc c = { .a = a, .d = d, .f = f };
    tgs_buf_init(&c.body);
    c.unpack_in = tgm_alloc(a, sizeof(bool) * (size_t)(d->op->nargs + 1));
    c.unpack_out = tgm_alloc(a, sizeof(bool) * (size_t)(d->op->nrets + 1));
    find_unpacks(&c, f->root, false);
    emit_unpacks(&c);
    bool joint = f->src->nvars > 1;
    int *tuple = tgm_alloc(a, sizeof *tuple * (size_t)(f->root->ntuple + 1));
    val v = plain("");
    if (joint && f->root->kind != TGF_CALL && f->root->kind != TGF_HELPER) {
        for (int k = 0; k < f->root->ntuple; k++) tuple[k] = tgf__c_temp(&c, "tg_tensor *", NULL);
        compile_tuple(&c, f->root, tuple);
    } else {
        v = tgf__c_compile(&c, f->root);
    }
    bool list = f->root->type == TGA_TENSOR_LIST;
    bool opt = tgf_formula_may_be_undefined(f);
    if (list && v.temp >= 0) {
        tgf__c_line(&c, "tg_r = tg__gen_take_list(&%s);", v.c);
    } else if (list) { /* borrowed (grads, a list literal): the caller gets its own */
        tgf__c_line(&c, "tg_r = tg__gen_list_copy(%s);", v.c);
    } else if (joint && f->root->kind != TGF_CALL && f->root->kind != TGF_HELPER) {
        /* `?:` of tuples: the elements went into tensor temporaries (compile_tuple). */
        for (int k = 0; k < f->src->nvars; k++)
            tgf__c_line(
                &c,
                "if (tg__node_needs_input_grad(&n->base, %d)) {\n%8sout[%d] = t%d;\n%8st%d = "
                "NULL;\n    }",
                f->edges[k], "", f->edges[k], tuple[k], "", tuple[k]);
        tgf__c_line(&c, "tg_rc = 0;");
    } else if (joint) {
        const tga_op *op = f->root->callee;
        for (int k = 0; k < f->src->nvars; k++)
            tgf__c_line(
                &c, "if (tg__node_needs_input_grad(&n->base, %d)) out[%d] = tg__gen_take(&%s.%s);",
                f->edges[k], f->edges[k], v.c, op->rets[k].name);
        tgf__c_line(&c, "tg_rc = 0;");
    } else if (v.temp >= 0) {
        tgf__c_line(&c, "tg_r = tg__gen_take(&%s);", v.c);
    } else {
        tgf__c_line(&c, "tg_r = tg_retain(%s);", v.c);
    }
    if (opt) { /* NULL is "no gradient", not an error: the status says which */
        tgf__c_line(&c, "out[%d] = tg_r;", f->edges[0]);
        tgf__c_line(&c, "tg_rc = 0;");
    }

    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "/* %s: %s */\n", tgs_c_comment(c.a, f->src->vars),
               tgs_c_comment(c.a, f->src->text));
    if (joint || opt)
        tgs_printf(
            &b, "static int %s(tg_node *tg_nd, tg_tensor *const *grads, tg_tensor **out)\n{\n", fn);
    else if (list)
        tgs_printf(&b, "static tg_tensor_list %s(tg_node *tg_nd, tg_tensor *const *grads)\n{\n",
                   fn);
    else tgs_printf(&b, "static tg_tensor *%s(tg_node *tg_nd, tg_tensor *const *grads)\n{\n", fn);
    const char *self = tgs_fmt(a, "%s *n = (%s *)tg_nd;", node_type, node_type);
    tgs_list locals = { 0 };
    if (joint || opt) tgs_list_add(&locals, a, "int tg_rc = -1;");
    if (!joint)
        tgs_list_add(&locals, a,
                     list ? "tg_tensor_list tg_r = { NULL, 0 };" : "tg_tensor *tg_r = NULL;");
    assemble(&c, &b, self, "tg_nd", &locals);
    if (!c.uses_grads) tgs_puts(&b, "    (void)grads;\n");
    finish(&c, &b, joint || opt ? "tg_rc" : "tg_r");
    return tgs_finish(&b, a);
}

const char *tgf_compile_forward(tgm_arena *a, const tgf_deriv *d, const tgf_node *root,
                                const char *fn, const char *ctx_type, const char *comment)
{
    cc c = { .a = a, .d = d, .forward = true };
    tgs_buf_init(&c.body);
    val v = tgf__c_compile(&c, root);
    bool list = root->type == TGA_TENSOR_LIST;
    if (list && v.temp >= 0) {
        tgf__c_line(&c, "tg_r = tg__gen_take_list(&%s);", v.c);
    } else if (list) {
        tgf__c_line(&c, "tg_r = tg__gen_list_copy(%s);", v.c);
    } else if (v.temp >= 0) {
        tgf__c_line(&c, "tg_r = tg__gen_take(&%s);", v.c);
    } else {
        tgf__c_line(&c, "tg_r = tg_retain(%s);", v.c);
    }
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "/* %s */\n", tgs_c_comment(a, comment));
    tgs_printf(&b, "static %s%s(void *tg_frame)\n{\n", list ? "tg_tensor_list " : "tg_tensor *",
               fn);
    tgs_list locals = { 0 };
    tgs_list_add(&locals, a,
                 list ? "tg_tensor_list tg_r = { NULL, 0 };" : "tg_tensor *tg_r = NULL;");
    assemble(&c, &b, tgs_fmt(a, "%s *n = tg_frame;", ctx_type), "tg_frame", &locals);
    finish(&c, &b, "tg_r");
    return tgs_finish(&b, a);
}
