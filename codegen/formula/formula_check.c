/* The formula checker's core: tgm_expr -> tgf_node. Resolves every name against the
 * derivative entry's schema (grad, grads[i], inputs, outputs), types metadata, lists and
 * indexing, and asks its plug-ins (formula_check.h) for the rest: the C++ forms, the operators
 * (`a * b` is a call of `mul`), the calls (first functional overload of that base name whose
 * parameters accept the arguments, in spec order). The first error of a formula is reported, at
 * the node it concerns; the rest of that formula is skipped (later errors would be
 * consequences). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "formula/formula_check.h"
#include "base/strbuf.h"

void tgf_limit(tgf_checker *c, const char *why)
{
    if (c->forward) return; /* forward formulas are not generated at all yet */
    c->gen_limited = true;
    if (!c->d->limit) c->d->limit = why;
}

void tgf_fail(tgf_checker *c, size_t offset, const char *fmt, ...)
{
    if (c->failed) return;
    c->failed = true;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->quiet) { /* an expansion tgen made (auto_element_wise): a reason, not an error */
        c->quiet_msg = tgm_strdup(c->a, msg);
        return;
    }
    c->errors++;
    /* Binary operators report at the end of their left operand: point at the operator. */
    while (c->f->text[offset] == ' ') offset++;
    tgm_error(tgf_loc(c->f, offset), "%s", msg);
}

/* ------------------------------------------------------------------ plug-ins */

typedef enum { ASK_NAME, ASK_CALL, ASK_METHOD, ASK_CONSTRUCT, ASK_OPERATORS } ask_hook;

/* Asks the plug-ins' hook h in table order, until one gives a node or an error. */
static tgf_node *ask(tgf_checker *c, ask_hook h, const tgm_expr *e, tgf_node **args)
{
    for (const tgf_plugin *const *p = c->plugins; *p; p++) {
        const tgf_plugin *pl = *p;
        tgf_node *n = NULL;
        switch (h) {
        case ASK_NAME: n = pl->name ? pl->name(c, e) : NULL; break;
        case ASK_CALL: n = pl->call ? pl->call(c, e) : NULL; break;
        case ASK_METHOD: n = pl->method ? pl->method(c, e, args) : NULL; break;
        case ASK_CONSTRUCT: n = pl->construct ? pl->construct(c, e) : NULL; break;
        case ASK_OPERATORS: n = pl->operators ? pl->operators(c, e) : NULL; break;
        }
        if (n || c->failed) return n;
    }
    return NULL;
}

tgf_node *tgf_resolve_call(tgf_checker *c, const tgm_expr *src, size_t name_at, const char *name,
                           tgf_node **args, int nargs)
{
    for (const tgf_plugin *const *p = c->plugins; *p; p++) {
        tgf_node *n = (*p)->resolve ? (*p)->resolve(c, src, name_at, name, args, nargs) : NULL;
        if (n || c->failed) return n;
    }
    tgf_fail(c, name_at, "unknown function '%s'", name); /* a table without overloads */
    return NULL;
}

const tgf_form *tgf_find_form(const tgf_checker *c, const char *syntax)
{
    for (const tgf_plugin *const *p = c->plugins; *p; p++) {
        const tgf_form *f = (*p)->form ? (*p)->form(syntax) : NULL;
        if (f) return f;
    }
    return NULL;
}

/* ------------------------------------------------------------------ nodes */

tgf_node *tgf_node_new(tgf_checker *c, tgf_node_kind kind, tga_kind type, const tgm_expr *src)
{
    tgf_node *n = tgm_alloc(c->a, sizeof *n);
    n->kind = kind;
    n->type = type;
    n->src = src;
    return n;
}

void tgf_node_set_args(tgf_checker *c, tgf_node *n, tgf_node **args, int nargs)
{
    n->nargs = nargs;
    n->args = tgm_alloc(c->a, sizeof *n->args * (size_t)(nargs ? nargs : 1));
    if (nargs) memcpy(n->args, args, sizeof *args * (size_t)nargs);
}

tgf_node *tgf_builtin_node(tgf_checker *c, const tgm_expr *src, const tgf_form *form,
                           const char *what, int type, tgf_node **args, int nargs)
{
    tgf_node *n = tgf_node_new(c, TGF_BUILTIN, (tga_kind)type, src);
    n->c = what;
    n->form = form;
    tgf_node_set_args(c, n, args, nargs);
    if (type == TGA_UNSUPPORTED) c->unchecked = true;
    return n;
}

static bool is_tensor(const tgf_node *n)
{
    return n->type == TGA_TENSOR || n->type == TGA_OPT_TENSOR;
}
static bool is_number(const tgf_node *n) { return n->type == TGA_INT || n->type == TGA_DOUBLE; }

static const char *type_text(const tgf_node *n)
{
    return n->ntuple ? "a tuple of tensors" : tgf_kind_text(n->type);
}

/* ------------------------------------------------------------------ names */

/* The gradient of schema output i (`grad_<name>`, or what grads[k] maps to). The node holds
 * the gradient of output i at grads[i]. */
static tgf_node *output_grad_node(tgf_checker *c, const tgm_expr *src, int i)
{
    const tga_op *op = c->d->op;
    if (c->d->list_output) {
        tgf_fail(c, src->offset,
                 "'%s' returns Tensor[]: use 'grads', the gradients of its "
                 "elements (a Tensor[])",
                 op->f->schema.full_name);
        return NULL;
    }
    if (!c->d->output_diff[i]) {
        tgf_fail(c, src->offset, "output %d of '%s' is not differentiable, so it has no gradient",
                 i, op->f->schema.full_name);
        return NULL;
    }
    if (!tga_kind_is_tensor(op->rets[i].kind)) {
        tgf_fail(c, src->offset, "output %d of '%s' is not a Tensor, so it has no gradient", i,
                 op->f->schema.full_name);
        return NULL;
    }
    tgf_node *n = tgf_node_new(c, TGF_GRAD, TGA_TENSOR, src);
    n->index = i;
    return n;
}

/* `grads[index]`, or `grad` (index 0): the gradient of the index-th differentiable output, as
 * PyTorch numbers them (with `output_differentiability: [False, True, True]`, grads[1] is
 * output 2's). */
static tgf_node *grad_node(tgf_checker *c, const tgm_expr *src, int64_t index)
{
    const tga_op *op = c->d->op;
    int ndiff = c->d->ndiff;
    if (c->d->list_output) return output_grad_node(c, src, 0); /* its error */
    /* Range-checked at full width: narrowing first turned grads[4294967296] into grads[0]. */
    if (index < 0 || index >= ndiff) {
        const char *name = op->f->schema.full_name;
        if (ndiff == op->nrets)
            tgf_fail(c, src->offset, "'%s' has %d output%s, so there is no grads[%lld]", name,
                     op->nrets, op->nrets == 1 ? "" : "s", (long long)index);
        else if (ndiff == 0)
            tgf_fail(c, src->offset, "no output of '%s' is differentiable, so it has no gradient",
                     name);
        else
            tgf_fail(c, src->offset,
                     "'%s' has %d differentiable output%s of %d (gradients are numbered over the "
                     "differentiable outputs, as in PyTorch), so there is no grads[%lld]",
                     name, ndiff, ndiff == 1 ? "" : "s", op->nrets, (long long)index);
        return NULL;
    }
    return output_grad_node(c, src, c->d->diff_outputs[index]);
}

/* `grads`: the gradients of every output (of every element of a Tensor[] output), zeros for
 * those that got none, as one Tensor[]. */
static tgf_node *grads_node(tgf_checker *c, const tgm_expr *src)
{
    const tga_op *op = c->d->op;
    for (int i = 0; i < op->nrets; i++)
        if (!c->d->output_diff[i]) {
            tgf_fail(c, src->offset,
                     "'grads' of '%s' would include output %d, which is not "
                     "differentiable; use grads[i]",
                     op->f->schema.full_name, i);
            return NULL;
        }
    return tgf_node_new(c, TGF_GRADS, TGA_TENSOR_LIST, src);
}

static tgf_node *check_name(tgf_checker *c, const tgm_expr *e)
{
    const tga_op *op = c->d->op;
    const tgm_schema *s = &op->f->schema;
    if (!strcmp(e->name, "grad") && !c->forward) return grad_node(c, e, 0);
    for (int i = 0; i < s->nargs; i++)
        if (!strcmp(s->args[i].name, e->name)) {
            if (op->args[i].kind == TGA_TENSOR_LIST && !c->for_gen) {
                /* typed as what it is; generated nodes cannot save it */
                tgf_limit(c, tgs_fmt(c->a,
                                     "it reads the Tensor[] argument '%s' whole (a node "
                                     "saves only its elements' sizes)",
                                     e->name));
            } else if (op->args[i].kind == TGA_TENSOR_LIST) {
                tgf_fail(c, e->offset,
                         "Tensor[] argument '%s' can only be used as '%s.size(d)' "
                         "(each element's size along d; saving tensor lists is not supported)",
                         e->name, e->name);
                return NULL;
            }
            tgf_node *n = tgf_node_new(c, TGF_INPUT, op->args[i].kind, e);
            n->index = i;
            return n;
        }
    int out = tgm_schema_output_index(s, e->name);
    if (out >= 0) {
        tgf_node *n = tgf_node_new(c, TGF_OUTPUT, op->rets[out].kind, e);
        n->index = out;
        /* An int, float or bool output is saved by value, like an argument. */
        bool scalar = n->type == TGA_INT || n->type == TGA_DOUBLE || n->type == TGA_BOOL;
        if (scalar) return n;
        if (n->type != TGA_TENSOR && !c->for_gen) {
            /* an int output: generated nodes save tensors only */
            tgf_limit(c, tgs_fmt(c->a, "it reads output '%s', which is not a Tensor", e->name));
        } else if (n->type != TGA_TENSOR) {
            tgf_fail(c, e->offset, "output '%s' of '%s' is not a Tensor", e->name, s->full_name);
            return NULL;
        }
        return n;
    }
    if (!strcmp(e->name, "grads") && !c->forward) return grads_node(c, e);
    /* <output>_return: an output whose name an argument has too (symeig's eigenvectors). */
    size_t len = strlen(e->name);
    if (len > 7 && !strcmp(e->name + len - 7, "_return")) {
        const char *stem = tgm_strndup(c->a, e->name, len - 7);
        int o = tgm_schema_output_index(s, stem);
        if (o >= 0 && tgm_schema_arg_index(s, stem) >= 0) {
            tgf_node *n = tgf_node_new(c, TGF_OUTPUT, op->rets[o].kind, e);
            n->index = o;
            return n;
        }
    }
    /* i: the element index of the formulas of _foreach_ operators (element-wise on lists). */
    if (!strcmp(e->name, "i") && !strncmp(s->base, "_foreach_", 9))
        return tgf_builtin_node(c, e, NULL, "i", TGA_INT, NULL, 0);
    /* grad_<output name>: that output's gradient (PyTorch names them so in joint formulas). */
    if (!strncmp(e->name, "grad_", 5) && !c->forward) {
        int gout = tgm_schema_output_index(s, e->name + 5);
        if (gout >= 0) return output_grad_node(c, e, gout);
    }
    /* <arg>_t of forward formulas, M_PI, std::nullopt ...: the plug-ins' names */
    tgf_node *b = ask(c, ASK_NAME, e, NULL);
    if (b || c->failed) return b;
    if (!strcmp(e->name, "result"))
        tgf_fail(c, e->offset, "'%s' has %d outputs: use result0..result%d%s", s->full_name,
                 s->nrets, s->nrets - 1, s->rets[0].name ? " or the return names" : "");
    else if (c->forward)
        tgf_fail(c, e->offset,
                 "unknown name '%s' (not an argument, an output, nor <argument>_p or "
                 "<argument>_t of '%s')",
                 e->name, s->full_name);
    else
        tgf_fail(c, e->offset,
                 "unknown name '%s' (not grad, grads[i], an argument or an output "
                 "of '%s')",
                 e->name, s->full_name);
    return NULL;
}

/* `result[i]`, `grads[i]` of an op returning Tensor[] (the _foreach_ entries: element i), with
 * a non-literal index; NULL when e is not one. */
static tgf_node *list_output_element(tgf_checker *c, const tgm_expr *e)
{
    const tgm_expr *base = e->args[0], *ix = e->args[1];
    if (!c->d->list_output || base->kind != TGM_EXPR_NAME || ix->kind == TGM_EXPR_INT ||
        ((strcmp(base->name, "grads") || c->forward) && strcmp(base->name, "result")))
        return NULL;
    tgf_node *i = tgf_check_expr(c, ix);
    if (!i) return NULL;
    if (i->type != TGA_INT) {
        tgf_fail(c, ix->offset, "the index of '%s' must be an int, not %s", base->name,
                 type_text(i));
        return NULL;
    }
    return tgf_builtin_node(c, e, NULL, base->name, TGA_TENSOR, &i, 1);
}

/* The kind of an element of a list kind (an element of a value not yet checkable is not
 * either), or TGA_KIND_COUNT for a kind that is no list. */
static tga_kind element_kind(tga_kind list)
{
    switch (list) {
    case TGA_INT_LIST: return TGA_INT;
    case TGA_TENSOR_LIST: return TGA_TENSOR;
    case TGA_OPT_TENSOR_LIST: return TGA_OPT_TENSOR;
    case TGA_FLOAT_LIST: return TGA_DOUBLE;
    case TGA_BOOL_LIST: return TGA_BOOL;
    case TGA_STR_LIST: return TGA_STR;
    case TGA_UNSUPPORTED: return TGA_UNSUPPORTED;
    default: return TGA_KIND_COUNT;
    }
}

static tgf_node *check_index(tgf_checker *c, const tgm_expr *e)
{
    const tgm_expr *base = e->args[0], *ix = e->args[1];
    tgf_node *elem = list_output_element(c, e);
    if (elem || c->failed) return elem;
    if (base->kind != TGM_EXPR_NAME || strcmp(base->name, "grads") || c->forward) {
        /* An element of an int[] (an int) or of a value not yet checkable (a mask's bool). */
        tgf_node *args[2];
        if (!(args[0] = tgf_check_expr(c, base)) || !(args[1] = tgf_check_expr(c, ix))) return NULL;
        tga_kind elem = element_kind(args[0]->type);
        if (elem != TGA_KIND_COUNT && args[1]->type == TGA_INT && !args[0]->ntuple)
            return tgf_builtin_node(c, e, tgf_find_form(c, "[]"), "[]", elem, args, 2);
        tgf_fail(c, e->offset,
                 "only 'grads' (grads[i]) and lists (with an int) can be indexed, not %s",
                 type_text(args[0]));
        return NULL;
    }
    if (ix->kind != TGM_EXPR_INT) {
        tgf_fail(c, ix->offset, "the index of 'grads' must be an integer literal");
        return NULL;
    }
    return grad_node(c, e, ix->i);
}

/* ------------------------------------------------------------------ methods */

static const struct {
    const char *name;
    tgf_meta meta;
    tga_kind type;
    int nargs;
} metas[] = {
    { "sizes", TGF_SIZES, TGA_INT_LIST, 0 }, { "sym_sizes", TGF_SIZES, TGA_INT_LIST, 0 },
    { "size", TGF_SIZE, TGA_INT, 1 },        { "sym_size", TGF_SIZE, TGA_INT, 1 },
    { "dim", TGF_DIM, TGA_INT, 0 },          { "numel", TGF_NUMEL, TGA_INT, 0 },
    { "sym_numel", TGF_NUMEL, TGA_INT, 0 },  { "scalar_type", TGF_SCALAR_TYPE, TGA_DTYPE, 0 },
    { "device", TGF_DEVICE, TGA_DEVICE, 0 },
};

/* Whether a node's value is known when the op runs (literals, non-tensor arguments and C
 * operators on them), so that the recording kernel can evaluate it. */
static bool known_at_record(const tgf_node *n)
{
    if (n->kind == TGF_LIT) return true;
    if (n->kind == TGF_INPUT) return !tga_kind_is_tensor(n->type);
    if (n->kind != TGF_COP) return false;
    for (int i = 0; i < n->nargs; i++)
        if (!known_at_record(n->args[i])) return false;
    return true;
}

/* The Tensor[] input a method is called on, or -1. */
static int list_receiver(tgf_checker *c, const tgm_expr *e)
{
    const tgm_expr *r = e->args[0];
    const tga_op *op = c->d->op;
    if (r->kind != TGM_EXPR_NAME) return -1;
    for (int i = 0; i < op->nargs; i++)
        if (!strcmp(op->f->schema.args[i].name, r->name))
            return op->args[i].kind == TGA_TENSOR_LIST ? i : -1;
    return -1;
}

/* `xs.size(d)` of a Tensor[] input: an int[], saved by value when the op runs. */
static tgf_node *check_list_size(tgf_checker *c, const tgm_expr *e, int arg)
{
    const char *name = e->args[0]->name;
    if (strcmp(e->name, "size") && strcmp(e->name, "sym_size")) {
        tgf_fail(c, e->name_offset,
                 "'%s' is a Tensor[]: of its metadata only '%s.size(d)' (each "
                 "element's size along d, an int[]) is available",
                 name, name);
        return NULL;
    }
    if (e->nargs == 1 && !strcmp(e->name, "size")) { /* xs.size(): how many (std::vector's) */
        tgf_node *recv = tgf_node_new(c, TGF_INPUT, TGA_TENSOR_LIST, e->args[0]);
        recv->index = arg;
        return tgf_builtin_node(c, e, NULL, "size", TGA_INT, &recv, 1);
    }
    if (e->nargs != 2) {
        tgf_fail(c, e->name_offset, "'%s()' takes one int argument (the dimension)", e->name);
        return NULL;
    }
    tgf_node *dim = tgf_check_expr(c, e->args[1]);
    if (!dim) return NULL;
    if (c->forward && dim->type == TGA_INT) { /* nothing is saved for forward formulas */
        tgf_node *recv = tgf_node_new(c, TGF_INPUT, TGA_TENSOR_LIST, e->args[0]);
        recv->index = arg;
        tgf_node *args[2] = { recv, dim };
        return tgf_builtin_node(c, e, NULL, "size", TGA_INT_LIST, args, 2);
    }
    if (dim->type != TGA_INT || !known_at_record(dim)) {
        tgf_fail(c, e->args[1]->offset,
                 "the dimension of '%s.size()' must be an int literal or "
                 "int argument (it is read when the op runs), not %s",
                 name, dim->type != TGA_INT ? type_text(dim) : "a value computed in backward");
        return NULL;
    }
    if (c->d->nlist_sizes == TGF_MAX_LIST_SIZES) {
        tgf_fail(c, e->offset, "more than %d uses of Tensor[] sizes in one entry",
                 TGF_MAX_LIST_SIZES);
        return NULL;
    }
    tgf_node *recv = tgf_node_new(c, TGF_INPUT, TGA_TENSOR_LIST, e->args[0]);
    recv->index = arg;
    tgf_node *n = tgf_node_new(c, TGF_META, TGA_INT_LIST, e);
    n->meta = TGF_SIZE;
    n->index = c->d->nlist_sizes;
    c->d->list_sizes[c->d->nlist_sizes++] = (tgf_list_size){ arg, dim };
    tgf_node *args[2] = { recv, dim };
    tgf_node_set_args(c, n, args, 2);
    return n;
}

static tgf_node *check_method(tgf_checker *c, const tgm_expr *e)
{
    tgf_node *args[64];
    if (e->nargs > 64) {
        tgf_fail(c, e->offset, "too many arguments");
        return NULL;
    }
    int list_arg = list_receiver(c, e);
    if (list_arg >= 0) return check_list_size(c, e, list_arg);
    for (int i = 0; i < e->nargs; i++)
        if (!(args[i] = tgf_check_expr(c, e->args[i]))) return NULL;
    tgf_node *recv = args[0];
    if (e->arrow) {
        /* opt->m(): a method of an optional's value (C++: its operator->). */
        if (recv->type != TGA_OPT_TENSOR) {
            tgf_fail(c, e->name_offset, "'->%s()' on %s: '->' reaches the value of a Tensor?",
                     e->name, type_text(recv));
            return NULL;
        }
        tgf_node *v =
            tgf_builtin_node(c, e->args[0], tgf_find_form(c, "->"), "value", TGA_TENSOR, &recv, 1);
        args[0] = recv = v;
    }
    for (size_t m = 0; m < sizeof metas / sizeof metas[0]; m++) {
        if (strcmp(e->name, metas[m].name) || !is_tensor(recv)) continue;
        if (recv->type == TGA_OPT_TENSOR) {
            tgf_fail(c, e->name_offset, "'%s()' of a Tensor? (it may be None)", e->name);
            return NULL;
        }
        if (e->nargs - 1 != metas[m].nargs) {
            tgf_fail(c, e->name_offset, "'%s()' takes %s", e->name,
                     metas[m].nargs ? "one int argument (the dimension)" : "no arguments");
            return NULL;
        }
        if (metas[m].nargs && args[1]->type != TGA_INT) {
            tgf_fail(c, e->args[1]->offset, "the dimension of 'size()' must be an int, not %s",
                     type_text(args[1]));
            return NULL;
        }
        tgf_node *n = tgf_node_new(c, TGF_META, metas[m].type, e);
        n->meta = metas[m].meta;
        tgf_node_set_args(c, n, args, e->nargs);
        return n;
    }
    /* Operators first (a method is an operator called on its first argument), then the
     * built-in methods (defined(), options(), of optionals and Scalars ...). */
    const tga_op *found[1];
    if (is_tensor(recv) && tgf_find_ops(c->ops, e->name, found, 1))
        return tgf_resolve_call(c, e, e->name_offset, e->name, args, e->nargs);
    tgf_node *b = ask(c, ASK_METHOD, e, args);
    if (b || c->failed) return b;
    if (!is_tensor(recv)) {
        tgf_fail(c, e->name_offset,
                 "'.%s()' called on %s: methods are operators called on a "
                 "Tensor, the metadata of one, or the built-in methods of docs/autograd.md",
                 e->name, type_text(recv));
        return NULL;
    }
    return tgf_resolve_call(c, e, e->name_offset, e->name, args, e->nargs);
}

static tgf_node *check_call(tgf_checker *c, const tgm_expr *e)
{
    if (!strcmp(e->name, "not_implemented")) {
        tgf_fail(c, e->name_offset, "not_implemented(\"...\") must be the whole formula");
        return NULL;
    }
    tgf_node *b = ask(c, ASK_CALL, e, NULL);
    if (b || c->failed) return b;
    tgf_node *args[64];
    if (e->nargs > 64) {
        tgf_fail(c, e->offset, "too many arguments");
        return NULL;
    }
    for (int i = 0; i < e->nargs; i++)
        if (!(args[i] = tgf_check_expr(c, e->args[i]))) return NULL;
    return tgf_resolve_call(c, e, e->name_offset, e->name, args, e->nargs);
}

static tgf_node *check_list(tgf_checker *c, const tgm_expr *e)
{
    tgf_node *args[64];
    if (e->nargs > 64) {
        tgf_fail(c, e->offset, "a list literal has at most 64 elements");
        return NULL;
    }
    tga_kind elem = TGA_INT;
    /* {{0, 0}}: C++ brace elision (a std::array initialised by a list) is the inner list. */
    if (e->nargs == 1 && e->args[0]->kind == TGM_EXPR_LIST) return tgf_check_expr(c, e->args[0]);
    for (int i = 0; i < e->nargs; i++)
        if (!(args[i] = tgf_check_expr(c, e->args[i]))) return NULL;
    /* Lists of bools (masks such as {true, false}): a bool[N]; with an unmapped value among
     * them, not yet checkable. */
    bool bools = e->nargs > 0, unmapped = false;
    for (int i = 0; i < e->nargs; i++) {
        bools &=
            !args[i]->ntuple && (args[i]->type == TGA_BOOL || args[i]->type == TGA_UNSUPPORTED);
        unmapped |= args[i]->type == TGA_UNSUPPORTED;
    }
    if (bools)
        return tgf_builtin_node(c, e, tgf_find_form(c, "{}"), "{}",
                                unmapped ? TGA_UNSUPPORTED : TGA_BOOL_LIST, args, e->nargs);
    for (int i = 0; i < e->nargs; i++) {
        tga_kind k = args[i]->type == TGA_OPT_TENSOR ? TGA_TENSOR : args[i]->type;
        if (i == 0 && k == TGA_TENSOR) elem = TGA_TENSOR;
        if (args[i]->ntuple || (k != TGA_INT && k != TGA_TENSOR) || k != elem) {
            tgf_fail(c, e->args[i]->offset,
                     "list elements must be all ints or all tensors; "
                     "element %d is %s",
                     i, type_text(args[i]));
            return NULL;
        }
    }
    tgf_node *n = tgf_node_new(c, TGF_LIST, elem == TGA_INT ? TGA_INT_LIST : TGA_TENSOR_LIST, e);
    tgf_node_set_args(c, n, args, e->nargs);
    return n;
}

/* ------------------------------------------------------------------ expressions */

/* n, what the plug-ins made of e, which no plug-in takes when NULL without an error. */
static tgf_node *asked(tgf_checker *c, tgf_node *n, const tgm_expr *e)
{
    if (!n && !c->failed) tgf_fail(c, e->offset, "this is not part of the formula language");
    return n;
}

tgf_node *tgf_check_expr(tgf_checker *c, const tgm_expr *e)
{
    if (c->failed) return NULL;
    tgf_node *n;
    switch (e->kind) {
    case TGM_EXPR_INT:
        n = tgf_node_new(c, TGF_LIT, TGA_INT, e);
        n->c = tgs_fmt(c->a, "INT64_C(%lld)", (long long)e->i);
        return n;
    case TGM_EXPR_FLOAT:
        n = tgf_node_new(c, TGF_LIT, TGA_DOUBLE, e);
        n->c = tgs_fmt(c->a, "%.17g", e->f);
        if (!strpbrk(n->c, ".eEn")) n->c = tgs_fmt(c->a, "%s.0", n->c);
        return n;
    case TGM_EXPR_BOOL:
        n = tgf_node_new(c, TGF_LIT, TGA_BOOL, e);
        n->c = e->b ? "true" : "false";
        return n;
    case TGM_EXPR_STR:
        n = tgf_node_new(c, TGF_LIT, TGA_STR, e);
        n->c = tgs_c_string(c->a, e->str);
        return n;
    case TGM_EXPR_NAME: return check_name(c, e);
    case TGM_EXPR_INDEX: return check_index(c, e);
    case TGM_EXPR_CALL: return check_call(c, e);
    case TGM_EXPR_METHOD: return check_method(c, e);
    case TGM_EXPR_LIST: return check_list(c, e);
    case TGM_EXPR_UNARY:
    case TGM_EXPR_BINARY:
    case TGM_EXPR_COND: return asked(c, ask(c, ASK_OPERATORS, e, NULL), e);
    case TGM_EXPR_GET:
    case TGM_EXPR_CTOR: return asked(c, ask(c, ASK_CONSTRUCT, e, NULL), e);
    case TGM_EXPR_LAMBDA:
        tgf_fail(c, e->offset, "a lambda can only be the second argument of fmap");
        return NULL;
    }
    return NULL;
}

/* ------------------------------------------------------------------ helpers for operators */

tgf_node *tgf_cop(tgf_checker *c, const tgm_expr *src, const char *op, tga_kind type, tgf_node *l,
                  tgf_node *r)
{
    tgf_node *n = tgf_node_new(c, TGF_COP, type, src);
    n->c = op;
    tgf_node *args[2] = { l, r };
    tgf_node_set_args(c, n, args, r ? 2 : 1);
    return n;
}

tgf_node *tgf_lit(tgf_checker *c, const tgm_expr *src, tga_kind type, const char *text)
{
    tgf_node *n = tgf_node_new(c, TGF_LIT, type, src);
    n->c = text;
    return n;
}

tgf_node *tgf_cond(tgf_checker *c, const tgm_expr *src, tga_kind type, tgf_node **args)
{
    tgf_node *n = tgf_node_new(c, TGF_COND, type, src);
    tgf_node_set_args(c, n, args, 3);
    return n;
}

bool tgf_is_tensor(const tgf_node *n) { return is_tensor(n); }
bool tgf_is_number(const tgf_node *n) { return is_number(n); }
const char *tgf_type_text(const tgf_node *n) { return type_text(n); }
