/* Whole derivative entries: which inputs get next edges (the formula keys, in file order),
 * what each formula must produce (one Tensor, or a tuple of one per key of a joint formula),
 * what the node must save (tgf_deriv.input_uses / output_uses), the node's name, and which
 * operators record it (the entry's own, plus in-place siblings of a functional entry). */
#include <stdio.h>
#include <string.h>

#include "formula/formula_plugins.h"
#include "base/strbuf.h"

static const tga_op *op_of(const tga_ops *ops, const tgm_func *f)
{
    const tga_op *op = tgm__map_get(ops->by_name, f->schema.full_name);
    return op && op->f == f ? op : NULL;
}

/* `not_implemented("name")` as the whole formula, maybe with a reason: a string, or a C++
 * constant's name (PyTorch's `kCudnnDoubleBackwardMsg`), kept as its text. */
static bool is_not_implemented(const tgm_expr *e)
{
    return e->kind == TGM_EXPR_CALL && !strcmp(e->name, "not_implemented") &&
           (e->nargs == 1 || e->nargs == 2) && e->args[0]->kind == TGM_EXPR_STR &&
           (e->nargs == 1 || e->args[1]->kind == TGM_EXPR_STR || e->args[1]->kind == TGM_EXPR_NAME);
}

/* Marks what the node must save for the inputs and outputs a formula reads. */
static void mark_uses(tgf_deriv *d, const tgf_node *n, bool as_meta, tgf_meta meta)
{
    /* xs.size(d) of a Tensor[]: saved as d->list_sizes (its dim is read when the op runs). */
    if (n->kind == TGF_META && n->args[0]->type == TGA_TENSOR_LIST) return;
    if (n->kind == TGF_INPUT || n->kind == TGF_OUTPUT) {
        unsigned *uses =
            n->kind == TGF_INPUT ? &d->input_uses[n->index] : &d->output_uses[n->index];
        bool tensor = n->type == TGA_TENSOR || n->type == TGA_OPT_TENSOR;
        if (!tensor) *uses |= TGF_USE_VALUE;
        else if (!as_meta) *uses |= TGF_USE_TENSOR;
        else
            *uses |= meta == TGF_SCALAR_TYPE ? TGF_USE_DTYPE
                     : meta == TGF_DEVICE    ? TGF_USE_DEVICE
                     : meta == TGF_DIM       ? TGF_USE_DIM
                     : meta == TGF_NUMEL     ? TGF_USE_NUMEL
                                             : TGF_USE_SIZES;
        return;
    }
    if (n->kind == TGF_GRAD || n->kind == TGF_GRADS) d->uses_grads = true;
    for (int i = 0; i < n->nargs; i++)
        mark_uses(d, n->args[i], n->kind == TGF_META && i == 0, n->meta);
}

/* Assigns next edges to the formula's keys; false after an error. */
static bool assign_edges(tgf_checker *c, tgf_formula *tf, int *nedges, int *edge_arg)
{
    const tgm_formula *f = tf->src;
    const tga_op *op = c->d->op;
    tf->edges = tgm_alloc(c->a, sizeof *tf->edges * (size_t)f->nvars);
    for (int k = 0; k < f->nvars; k++) {
        int ai = tgm_schema_arg_index(&op->f->schema, f->var_names[k]);
        if (ai < 0) return false; /* validate.c reported it */
        tga_kind kind = op->args[ai].kind;
        if (kind == TGA_TENSOR_LIST) {
            /* The formula gives a Tensor[] of one gradient per element (or is not_implemented);
             * the elements get the edges after the fixed ones, so one list per entry. */
            const char *why = f->nvars > 1          ? "in a joint formula"
                              : c->d->list_arg >= 0 ? "for two Tensor[] arguments of one entry"
                                                    : NULL;
            if (why && !c->for_gen) { /* a limit of the nodes tgen generates, not of typing */
                tgf_limit(c, tgs_fmt(c->a, "gradients of Tensor[] argument '%s' %s",
                                     f->var_names[k], why));
                tf->edges[k] = -1;
                continue;
            }
            if (why) {
                tgm_error(f->vars_loc, "gradients of Tensor[] argument '%s' are not supported %s",
                          f->var_names[k], why);
                c->errors++;
                return false;
            }
            c->d->list_arg = ai;
            tf->edges[k] = -1;
            continue;
        }
        if (kind != TGA_TENSOR && kind != TGA_OPT_TENSOR) {
            tgm_error(f->vars_loc, "'%s' is a %s argument of '%s'; only tensors have gradients",
                      f->var_names[k], tgf_kind_text(kind), op->f->schema.full_name);
            c->errors++;
            return false;
        }
        edge_arg[*nedges] = ai;
        tf->edges[k] = (*nedges)++;
    }
    return true;
}

static void check_formula(tgf_checker *c, tgf_formula *tf)
{
    tgm_formula *f = (tgm_formula *)tf->src;
    c->f = f;
    c->failed = false;
    tgf_syntax_error err;
    if (!f->expr && !tgf_parse_formula(c->a, f, &err)) {
        tgf_fail(c, err.offset, "%s", err.msg);
        return;
    }
    if (is_not_implemented(f->expr)) {
        tf->root = tgm_alloc(c->a, sizeof *tf->root);
        tf->root->kind = TGF_NOT_IMPL;
        tf->root->src = f->expr;
        tf->root->c = f->expr->args[0]->str;
        return;
    }
    c->unchecked = false;
    tgf_node *root = tgf_check_expr(c, f->expr);
    if (!root) return;
    /* A value not yet checkable as the whole gradient: nor is the formula. */
    if (root->type == TGA_UNSUPPORTED && !root->ntuple) c->unchecked = true;
    if (c->unchecked) {
        c->nunchecked++;
        if (!c->d->limit)
            c->d->limit =
                tgs_fmt(c->a, "the formula for '%s' uses a type without a C mapping", f->vars);
        return; /* no root: the emitter must not compile it (tgf_deriv stays incomplete) */
    }
    /* The formulas of _foreach_ operators give element i's gradient (PyTorch applies them
     * per element); tgen generates no node for that yet. */
    bool per_element = !strncmp(c->d->op->f->schema.base, "_foreach_", 9) &&
                       root->type == TGA_TENSOR && !c->for_gen;
    if (per_element)
        tgf_limit(c, "the formulas of _foreach_ operators give each element's gradient");
    if (tf->edges[0] < 0 && f->nvars == 1 && root->type != TGA_TENSOR_LIST && !per_element) {
        tgf_fail(c, f->expr->offset,
                 "the formula for '%s' (a Tensor[] argument) must give a "
                 "Tensor[] (one gradient per element), not %s",
                 f->vars, tgf_type_text(root));
        return;
    }
    /* Tensor?: an undefined tensor (Tensor(), `c ? t : Tensor()`) is "no gradient". */
    if (f->nvars == 1 && tf->edges[0] >= 0 && root->type != TGA_TENSOR &&
        root->type != TGA_OPT_TENSOR) {
        tgf_fail(c, f->expr->offset, "the formula for '%s' must give a Tensor, not %s", f->vars,
                 tgf_type_text(root));
        return;
    }
    if (f->nvars > 1 && root->ntuple != f->nvars) {
        tgf_fail(c, f->expr->offset,
                 "the joint formula for '%s' must give %d tensors (a call of "
                 "an operator with %d Tensor returns), not %s",
                 f->vars, f->nvars, f->nvars, tgf_type_text(root));
        return;
    }
    tf->root = root;
    mark_uses(c->d, root, false, TGF_SIZES);
}

/* Whether op's returns are tensors, or tensors with ints, floats and bools among them (attention
 * ops' max_q): the node has an output per return, with history on the tensors only, and the
 * scalars are saved by value when a formula reads them. */
static bool tensor_returns(const tga_op *op)
{
    bool tensor = false;
    for (int i = 0; i < op->nrets; i++) {
        tga_kind k = op->rets[i].kind;
        tensor |= k == TGA_TENSOR;
        if (k != TGA_TENSOR && k != TGA_INT && k != TGA_DOUBLE && k != TGA_BOOL) return false;
    }
    return tensor;
}

static bool check_entry_op(tgf_checker *c, const tgm_derivative *dv, const tga_op *op)
{
    /* Out= and mutable entries, non-tensor returns: tgen generates no node for them yet, but
     * their formulas type-check like any others. */
    if (!c->for_gen) {
        bool limited =
            !tensor_returns(op) && !(op->nrets == 1 && op->rets[0].kind == TGA_TENSOR_LIST &&
                                     op->f->kind == TGM_KIND_FUNCTIONAL);
        if (op->f->kind != TGM_KIND_FUNCTIONAL && op->f->kind != TGM_KIND_INPLACE)
            tgf_limit(c, op->f->kind == TGM_KIND_OUT
                             ? "it is an out= operator"
                             : "it is a mutable operator (it writes to an argument)");
        else if (limited) tgf_limit(c, "the operator returns a value other than a Tensor");
        return true;
    }
    if (op->f->kind != TGM_KIND_FUNCTIONAL && op->f->kind != TGM_KIND_INPLACE) {
        tgm_error(dv->name_loc,
                  "'%s' is an out= function; derivatives are declared for the "
                  "functional (and in-place) variants",
                  dv->schema.full_name);
        return false;
    }
    if (op->nrets == 1 && op->rets[0].kind == TGA_TENSOR_LIST) {
        if (op->f->kind == TGM_KIND_FUNCTIONAL) return true;
        tgm_error(dv->name_loc,
                  "'%s' returns Tensor[] in place; only functional operators "
                  "returning Tensor[] are differentiable",
                  dv->schema.full_name);
        return false;
    }
    for (int i = 0; i < op->nrets && !tensor_returns(op); i++)
        if (op->rets[i].kind != TGA_TENSOR) {
            tgm_error(dv->name_loc,
                      "'%s' returns %s; only operators returning tensors are "
                      "differentiable",
                      dv->schema.full_name, tgf_kind_text(op->rets[i].kind));
            return false;
        }
    return true;
}

/* Whether every argument and return of op has a C type (tga_build_ops reported the others). */
static bool has_c_view(const tga_op *op)
{
    for (int i = 0; i < op->nargs; i++)
        if (op->args[i].kind == TGA_UNSUPPORTED) return false;
    for (int i = 0; i < op->nrets; i++)
        if (op->rets[i].kind == TGA_UNSUPPORTED) return false;
    return true;
}

static void check_entry(tgf_checker *c, const tgm_derivative *dv, tgf_deriv *d, int number)
{
    c->gen_limited = false;
    d->dv = dv;
    d->op = op_of(c->ops, dv->func);
    c->d = d;
    if (d->op && !has_c_view(d->op)) {
        c->nskipped++;
        d->op = NULL;
        return;
    }
    if (!d->op || !check_entry_op(c, dv, d->op)) {
        c->errors += d->op != NULL;
        d->op = NULL;
        return;
    }
    const tga_op *op = d->op;
    d->node_name = tgs_fmt(c->a, "%s%d", tgf_node_base_name(c->a, dv->schema.base), number);
    d->input_uses = tgm_alloc(c->a, sizeof(unsigned) * (size_t)(op->nargs + 1));
    d->output_uses = tgm_alloc(c->a, sizeof(unsigned) * (size_t)(op->nrets + 1));
    d->output_diff = tgm_alloc(c->a, sizeof(bool) * (size_t)(op->nrets + 1));
    d->diff_outputs = tgm_alloc(c->a, sizeof(int) * (size_t)(op->nrets + 1));
    for (int i = 0; i < op->nrets; i++) {
        d->output_diff[i] = !dv->output_differentiability || i >= dv->noutput_diff ||
                            dv->output_differentiability[i];
        /* torchgen's differentiable outputs, which the node's gradients are numbered by: those
         * marked True, or without the list every tensor output. */
        if (dv->output_differentiability ? d->output_diff[i] : tga_kind_is_tensor(op->rets[i].kind))
            d->diff_outputs[d->ndiff++] = i;
    }
    int nvars = 0;
    for (int i = 0; i < dv->nformulas; i++) nvars += dv->formulas[i].nvars;
    d->edge_arg = tgm_alloc(c->a, sizeof(int) * (size_t)(nvars + 1));
    d->list_arg = -1;
    d->list_output = op->nrets == 1 && op->rets[0].kind == TGA_TENSOR_LIST;
    d->formulas = tgm_alloc(c->a, sizeof *d->formulas * (size_t)(dv->nformulas + 1));
    d->nformulas = dv->nformulas;
    for (int i = 0; i < dv->nformulas; i++) {
        d->formulas[i].src = &dv->formulas[i];
        if (assign_edges(c, &d->formulas[i], &d->nedges, d->edge_arg))
            check_formula(c, &d->formulas[i]);
    }
    c->ngen_limited += c->gen_limited;
}

int tgf_check_all(const tgm_model *m, const tga_ops *ops, tgm_arena *a, bool for_gen,
                  tgf_derivs *out)
{
    tgf_vocab *vocab = tgm_alloc(a, sizeof *vocab);
    int vocab_errors = tgf_vocab_load(a, m->autograd_functions, m->nautograd_functions, vocab);
    /* The checker's plug-ins for backward formulas, in the order they are asked. */
    static const tgf_plugin *const plugins[] = { &tgf_cpp_forms, &tgf_operators, &tgf_overloads,
                                                 NULL };
    tgf_checker c = { .a = a,
                      .ops = ops,
                      .plugins = plugins,
                      .vocab = vocab,
                      .errors = vocab_errors,
                      .for_gen = for_gen };
    out->renamed = c.renamed = tgm_alloc(a, sizeof *c.renamed * (size_t)tgf_renames_count());
    memset(c.renamed, 0, sizeof *c.renamed * (size_t)tgf_renames_count());
    out->n = 0;
    out->d = NULL;
    out->by_op = NULL;
    out->unchecked = out->skipped = out->gen_limited = 0;
    out->vocab = vocab;
    /* A broken vocabulary: the formulas' errors would mostly be its consequences. */
    if (vocab_errors) return vocab_errors;
    out->n = m->nderivs;
    out->d = tgm_alloc(a, sizeof *out->d * (size_t)(m->nderivs + 1));
    out->by_op = tgm_alloc(a, sizeof *out->by_op * (size_t)(ops->n + 1));
    /* N of XBackwardN counts the entries of the same node base name before this one (a counter
     * per name: recounting the earlier entries was quadratic). Counted by the CamelCase name,
     * not the operator's base, since conj_physical and conj_physical_, or _indices and indices,
     * share one ("ConjPhysicalBackward0" and "...1", as in PyTorch). */
    tgm_name_map *seen = tgm__map_new(a);
    int *counts = tgm_alloc(a, sizeof *counts * (size_t)(m->nderivs + 1));
    for (int i = 0; i < m->nderivs; i++) {
        const tgm_derivative *dv = m->derivs[i];
        const char *base = tgf_node_base_name(a, dv->schema.base);
        int *count = tgm__map_put(seen, base, &counts[i]);
        if (!count) count = &counts[i];
        int number = (*count)++;
        if (dv->func) check_entry(&c, dv, &out->d[i], number);
    }
    for (int i = 0; i < m->nderivs; i++) {
        const tgf_deriv *d = &out->d[i];
        if (d->op) out->by_op[d->op->index] = d;
    }
    /* In-place variants record their functional sibling's node (same arguments by name and
     * position: validate.c pairs them by signature). */
    for (int i = 0; i < ops->n; i++) {
        const tgm_func *f = ops->ops[i].f;
        if (out->by_op[i] || f->kind != TGM_KIND_INPLACE || !f->functional) continue;
        const tga_op *fn = op_of(ops, f->functional);
        if (fn && out->by_op[fn->index] && ops->ops[i].nrets == 1)
            out->by_op[i] = out->by_op[fn->index];
    }
    out->unchecked = c.nunchecked;
    out->skipped = c.nskipped;
    out->gen_limited = c.ngen_limited;
    return c.errors;
}

/* What type-checks but cannot be generated yet: formulas using values of types without a C
 * mapping (not yet checkable, so without a checked tree) and the built-in C++ constructs the
 * C emitter does not compile. Returns the errors reported. */
int tgf_gen_limits(const tgf_derivs *ds)
{
    int errors = 0;
    for (int i = 0; i < ds->n; i++) {
        const tgf_deriv *d = &ds->d[i];
        for (int k = 0; d->op && k < d->nformulas; k++) {
            const tgf_formula *f = &d->formulas[k];
            const tgf_node *u = f->root ? tgf_c_unsupported(f->root) : NULL;
            if (!f->root) {
                tgm_error(tgf_loc(f->src, 0),
                          "the formula for '%s' uses a type without a C mapping; tgen cannot "
                          "generate it yet",
                          f->src->vars);
                errors++;
            } else if (u) {
                tgm_error(tgf_loc(f->src, u->src ? u->src->offset : 0),
                          "tgen cannot compile '%s' (%s) to C yet",
                          u->kind == TGF_BUILTIN && u->c ? u->c : "this value",
                          tgf_kind_text(u->type));
                errors++;
            }
        }
    }
    return errors;
}

void tgf_mark_limits(tgf_derivs *ds, tgm_arena *a)
{
    for (int i = 0; i < ds->n; i++) {
        tgf_deriv *d = &ds->d[i];
        for (int k = 0; d->op && !d->limit && k < d->nformulas; k++) {
            const tgf_formula *f = &d->formulas[k];
            const tgf_node *u = f->root ? tgf_c_unsupported(f->root) : NULL;
            if (!f->root) /* not yet checkable (check_formula gave the reason) */
                d->limit = tgs_fmt(a, "the formula for '%s' uses a type without a C mapping",
                                   f->src->vars);
            else if (u)
                d->limit = tgs_fmt(a, "tgen cannot compile '%s' (%s) to C yet",
                                   u->kind == TGF_BUILTIN && u->c ? u->c : "this value",
                                   tgf_kind_text(u->type));
        }
    }
}

int tgf_check_model(const tgm_model *m, bool for_gen, int *unchecked, int *skipped,
                    int *gen_limited, const char **renamed)
{
    tgm_arena *a = tgm_arena_new();
    int before = tgm_error_count();
    tga_ops ops;
    /* The view is complete enough to check formulas against even with errors (an op whose
     * types have no C mapping is skipped by check_entry). */
    tga_build_ops(m, a, &ops);
    tgf_derivs ds;
    int errors = tgf_check_all(m, &ops, a, for_gen, &ds), nforward;
    /* Forward formulas too (with a usable vocabulary: ds.n is 0 without one). */
    errors += tgf_check_forward(&ds, &ops, a, &nforward);
    if (errors == 0 && for_gen) tgf_gen_limits(&ds);
    /* Entries --gen makes failing nodes of: past the limits, or (checked, error-free) with a
     * construct the C emitter does not compile. */
    if (errors == 0 && !for_gen) {
        tgf_mark_limits(&ds, a);
        ds.gen_limited = 0;
        for (int i = 0; i < ds.n; i++) ds.gen_limited += ds.d[i].op && ds.d[i].limit;
    }
    if (gen_limited) *gen_limited = ds.gen_limited;
    if (unchecked) *unchecked = ds.unchecked;
    if (skipped) *skipped = ds.skipped;
    if (renamed) *renamed = tgf_renames_note(m->arena, ds.renamed);
    tgm_arena_free(a);
    return tgm_error_count() - before;
}
