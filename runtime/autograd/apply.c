/* The apply of a generated node (record.h, "backward"): its formulas in file order, each run
 * when one of the edges it gives a gradient for needs one, with the caller's scope suspended
 * (the temporaries of a formula are its own to release). The first failure stops the rest;
 * the engine releases what out[] already holds. */
#include "autograd/autograd_private.h"
#include "autograd/formula_glue.h"
#include "autograd/record.h"

static bool needed(const tg_node *n, const tg_ag_formula *f)
{
    for (uint64_t bits = f->needs; bits; bits &= bits - 1)
        if (tg__node_needs_input_grad(n, __builtin_ctzll(bits))) return true;
    return f->from >= 0 && tg__gen_needs_from(n, f->from);
}

static int run(const tg_ag_formula *f, tg_node *n, tg_tensor *const *grads, tg_tensor **out)
{
    switch ((tg_ag_formula_kind)f->kind) {
    case TG_AGF_ONE: return (out[f->edge] = f->fn.one(n, grads)) ? 0 : -1;
    case TG_AGF_LIST: return tg__gen_distribute(n, f->edge, f->fn.list(n, grads), out, f->what);
    case TG_AGF_STATUS: return f->fn.status(n, grads, out);
    case TG_AGF_NOT_IMPL: return tg_autograd_not_implemented(f->what);
    }
    return -1;
}

int tg__autograd_apply(tg_node *n, tg_tensor *const *grads, tg_tensor **out)
{
    const tg_ag_node_type *type = (const tg_ag_node_type *)n->vt; /* vt is its first member */
    int sc = tg_scope_suspend(), rc = 0;
    for (int i = 0; rc == 0 && i < type->nformulas; i++)
        if (needed(n, &type->formulas[i])) rc = run(&type->formulas[i], n, grads, out);
    tg_scope_resume(sc);
    return rc;
}
