/* Overload resolution for the formula checker (its plug-in tgf_overloads, formula_plugins.h):
 * a call's name is looked up among the operators (by base name, `f_symint` as `f`) and then
 * the autograd vocabulary, and the first overload whose parameters accept the arguments' types
 * is taken; otherwise the error says which overloads were tried. */
#include <stdlib.h>
#include <string.h>

#include "formula/formula_plugins.h"
#include "base/strbuf.h"

#define MAX_CANDIDATES 64

/* The optionals std::nullopt may be passed for: those with a value kind, and Generator?. */
static bool is_optional_kind(tga_kind k)
{
    return tgf_optional_value(k) != TGA_UNSUPPORTED || k == TGA_OPT_GENERATOR;
}

enum { NO, YES, YES_UNCHECKED };

/* Whether `arg` can be passed for parameter `p`; a bare int for an `int[N]` parameter is
 * accepted too (PyTorch's IntArrayRef converts from one int), and std::nullopt for any
 * optional. A parameter or argument of a type without a C mapping cannot be checked: it is
 * taken, and the formula counts as not yet checkable. */
static int accepts(const tga_arg *p, const tgf_node *arg)
{
    if (arg->ntuple) return NO;
    if (p->kind == TGA_UNSUPPORTED || arg->type == TGA_UNSUPPORTED) return YES_UNCHECKED;
    if ((int)arg->type == TGF_KIND_NONE) return is_optional_kind(p->kind) ? YES : NO;
    /* `{}`: C++ value-initializes the parameter: an undefined Tensor, std::nullopt. */
    if (tgf_empty_braces(arg) && (p->kind == TGA_TENSOR || is_optional_kind(p->kind))) return YES;
    if (arg->type >= TGA_KIND_COUNT) return NO;
    if (tgf_accepts(p->kind, arg->type)) return YES;
    return arg->type == TGA_INT && (p->kind == TGA_INT_LIST || p->kind == TGA_OPT_INT_LIST) &&
                   p->arg->type.list_size > 0
               ? YES
               : NO;
}

/* A parameter with a default (one of an unmapped type has no default_expr, but has one). */
static bool has_default(const tga_arg *p)
{
    return p->default_expr || (p->arg && p->arg->def.kind != TGM_DEF_NONE_GIVEN);
}

/* Whether op takes these arguments; *wild counts those taken without a check. */
static bool viable(const tga_op *op, tgf_node **args, int nargs, int *wild)
{
    int pi = 0;
    *wild = 0;
    for (int ai = 0; ai < nargs; ai++, pi++) {
        if (pi >= op->nargs) return false;
        if ((int)args[ai]->type == TGF_KIND_OPTIONS && !args[ai]->ntuple) {
            if (op->args[pi].kind != TGA_OPT_DTYPE && op->args[pi].kind != TGA_DTYPE) return false;
            while (pi + 1 < op->nargs && tgf_options_part(&op->args[pi + 1])) pi++;
            continue;
        }
        int mf = tgf_memory_format_options(op, pi, args[ai]);
        if (mf >= 0) { /* TensorOptions(memory_format): the group, then memory_format */
            pi = mf;
            continue;
        }
        int a = accepts(&op->args[pi], args[ai]);
        if (a == NO) return false;
        *wild += a == YES_UNCHECKED;
    }
    for (; pi < op->nargs; pi++)
        if (!has_default(&op->args[pi])) return false;
    return true;
}

static tgf_node *call_node(tgf_checker *c, const tgm_expr *src, const tga_op *op, tgf_node **args,
                           int nargs, bool helper)
{
    tgf_node *n = tgf_node_new(c, helper ? TGF_HELPER : TGF_CALL, TGA_UNSUPPORTED, src);
    n->callee = op;
    if (helper) n->c = op->cname;
    tgf_node_set_args(c, n, args, nargs);
    if (op->nrets == 1) {
        n->type = op->rets[0].kind;
        if (n->type == TGA_UNSUPPORTED) c->unchecked = true;
        return n;
    }
    for (int i = 0; i < op->nrets; i++)
        if (op->rets[i].kind != TGA_TENSOR && !c->for_gen) {
            /* (Tensor, Tensor[], ...): typed as a tuple; generated nodes cannot hold it. */
            tgf_limit(c, tgs_fmt(c->a,
                                 "it calls '%s', which returns a value other than a "
                                 "Tensor among several",
                                 op->f->schema.full_name));
        } else if (op->rets[i].kind != TGA_TENSOR) {
            tgf_fail(c, src->offset,
                     "'%s' returns a value other than a Tensor among several; "
                     "formulas cannot use it",
                     op->f->schema.full_name);
            return NULL;
        }
    n->ntuple = op->nrets;
    return n;
}

/* "(Tensor, int)" */
static const char *arg_types(tgf_checker *c, tgf_node **args, int nargs)
{
    tgs_list l = { 0 };
    for (int i = 0; i < nargs; i++) tgs_list_add(&l, c->a, tgf_type_text(args[i]));
    return tgs_fmt(c->a, "(%s)", tgs_list_join(&l, c->a, ", "));
}

/* The candidates for a call of `name`: the operators of that name (for `f_symint`, C++'s
 * SymInt spelling of an operator, those of `f`), then the vocabulary's functions. Returns how
 * many; *nops of them are operators. */
static int candidates(tgf_checker *c, const char *name, bool methods_only, const tga_op **cands,
                      int *nops)
{
    int n = tgf_find_ops(c->ops, name, cands, MAX_CANDIDATES);
    size_t len = strlen(name);
    if (n == 0 && len > 7 && !strcmp(name + len - 7, "_symint")) {
        char *base = tgm_strndup(c->a, name, len - 7);
        n = tgf_find_ops(c->ops, base, cands, MAX_CANDIDATES);
    }
    *nops = n;
    if (!methods_only) n += tgf_vocab_find(c->vocab, name, cands + n, MAX_CANDIDATES - n);
    return n;
}

static tgf_node *resolve(tgf_checker *c, const tgm_expr *src, size_t name_at, const char *name,
                         tgf_node **args, int nargs)
{
    const tga_op *cands[MAX_CANDIDATES];
    bool method = src->kind == TGM_EXPR_METHOD;
    int nops, n = candidates(c, name, method, cands, &nops);
    /* A helper under the name an older release gave it (formula_renames.c). */
    int renamed = n == 0 && !method && !c->ops->imports ? tgf_rename_find(name) : -1;
    if (renamed >= 0) n = candidates(c, tgf_rename_target(renamed), false, cands, &nops);
    if (n == 0) {
        if (c->ops->imports && !c->ops->imports->is_base) /* a library's formula: no vocabulary */
            tgf_fail(c, name_at,
                     "unknown %s '%s' (neither an operator of this library nor one of "
                     "tensorgen's)",
                     method ? "method" : "function", name);
        else if (method)
            tgf_fail(c, name_at,
                     "unknown method '%s' (no operator of that name in the native functions, "
                     "and not a built-in method)",
                     name);
        else
            tgf_fail(c, name_at,
                     "unknown function '%s' (neither an operator of the native functions nor a "
                     "function of the autograd vocabulary%s)",
                     name,
                     c->vocab && c->vocab->path
                         ? ""
                         : "; none was found: no autograd_functions.yaml beside the derivatives "
                           "file nor in a specs/ above tgen, see --autograd-functions");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        int wild;
        if (!viable(cands[i], args, nargs, &wild)) continue;
        if (wild) c->unchecked = true;
        if (renamed >= 0 && c->renamed) c->renamed[renamed]++;
        return call_node(c, src, cands[i], args, nargs, i >= nops);
    }
    /* Which overloads could take this many arguments at all? */
    int min_args = 1 << 30, max_args = 0;
    tgs_list tried = { 0 };
    bool count_ok = false;
    for (int i = 0; i < n; i++) {
        int req = 0;
        for (int k = 0; k < cands[i]->nargs; k++)
            if (!has_default(&cands[i]->args[k])) req = k + 1;
        min_args = req < min_args ? req : min_args;
        max_args = cands[i]->nargs > max_args ? cands[i]->nargs : max_args;
        count_ok |= nargs >= req && nargs <= cands[i]->nargs;
        tgs_list_add(&tried, c->a, cands[i]->f->schema.full_name);
    }
    if (!count_ok) {
        const char *range = min_args == max_args ? tgs_fmt(c->a, "%d", min_args)
                                                 : tgs_fmt(c->a, "%d to %d", min_args, max_args);
        tgf_fail(c, name_at, "'%s' takes %s argument%s, not %d", name, range,
                 max_args == 1 ? "" : "s", nargs);
        return NULL;
    }
    tgf_fail(c, name_at, "no overload of '%s' accepts %s; tried %s", name,
             arg_types(c, args, nargs), tgs_list_join(&tried, c->a, ", "));
    return NULL;
}

const tgf_plugin tgf_overloads = { .resolve = resolve };
