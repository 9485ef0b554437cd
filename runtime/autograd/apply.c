/* A generated node at backward (record.h, "backward"). Its apply runs its formulas in file
 * order, each when one of the edges it gives a gradient for needs one, with the caller's scope
 * suspended (the temporaries of a formula are its own to release); the first failure stops
 * the rest, and the engine releases what out[] already holds. Its release_saved drops the
 * tensors it saved, as its type's save table lists them. */
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

void tg__autograd_release_saved(tg_node *n)
{
    const tg_ag_node_type *type = (const tg_ag_node_type *)n->vt;
    for (int i = 0; i < type->nsaves; i++) {
        void *field = tg__ag_field(n, type->saves[i].to);
        if (type->saves[i].kind == TG_AG_SAVE_TENSOR) {
            tg_autograd_saved_release(field);
        } else if (type->saves[i].kind == TG_AG_SAVE_TENSORS) {
            /* emptied: release_saved runs after backward and again when the node dies */
            tg_tensor_list_release(*(tg_tensor_list *)field);
            *(tg_tensor_list *)field = (tg_tensor_list){ NULL, 0 };
        }
    }
}
