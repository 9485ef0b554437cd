/* Which autograd kernel each operator gets (docs/generated-code.md, "Autograd"):
 *   - a derivative entry (its own, or for an in-place op its functional sibling's): records
 *     the entry's node;
 *   - an out= variant: refuses arguments that require grad, like PyTorch;
 *   - a function with Tensor inputs and Tensor outputs, no entry and no
 *     CompositeImplicitAutograd kernel: records a node whose backward fails naming the op (so
 *     forward works and backward fails clearly, instead of silently not flowing);
 *   - anything else (factories, CompositeImplicitAutograd, mutable ops) keeps its slot.
 * The kernel replaces whatever a written kernel put in the autograd slot: a
 * CompositeImplicitAutograd op with a formula uses the formula. */
#include <string.h>

#include "api/api.h"
#include "api/api_internal.h"
#include "base/strbuf.h"

/* The derivatives entry of f, through a map from each entry's function (by full name) to the
 * entry, built once: a scan of the entries per op was quadratic in the spec's size. */
static const tgm_derivative *entry_of(const tgm_name_map *by_func, const tgm_func *f)
{
    const tgm_derivative *dv = f ? tgm__map_get(by_func, f->schema.full_name) : NULL;
    return dv && dv->func == f ? dv : NULL;
}

static bool has_slot(const tga_op *op, int slot)
{
    for (int k = 0; k < op->nkernels; k++)
        if (op->kernels[k].slots & slot) return true;
    return false;
}

static bool tensor_in_out(const tga_op *op)
{
    bool in = false;
    for (int i = 0; i < op->nargs; i++) in |= tga_kind_is_tensor(op->args[i].kind);
    if (op->nrets == 1 && op->rets[0].kind == TGA_TENSOR_LIST) /* a node output per element */
        return in;
    for (int i = 0; i < op->nrets; i++)
        if (op->rets[i].kind != TGA_TENSOR) return false;
    return in && op->nrets > 0;
}

static tga_autograd kind_of(const tgm_name_map *by_func, tga_op *op)
{
    const tgm_func *f = op->f;
    bool fn_or_inplace = f->kind == TGM_KIND_FUNCTIONAL || f->kind == TGM_KIND_INPLACE;
    op->deriv = entry_of(by_func, f);
    if (!op->deriv && f->kind == TGM_KIND_INPLACE && op->nrets == 1)
        op->deriv = entry_of(by_func, f->functional);
    if (op->deriv && fn_or_inplace) return TGA_AUTOGRAD_RECORD;
    /* A mutable operator with an entry (batch norm's running statistics): tgen generates no
     * node for it yet, so its kernel records one whose backward fails with the reason
     * (formula_deriv.c sets it; docs/autograd.md, "Limits of generated nodes"). */
    if (op->deriv && f->kind == TGM_KIND_MUTABLE && tensor_in_out(op)) return TGA_AUTOGRAD_RECORD;
    op->deriv = NULL;
    if (f->kind == TGM_KIND_OUT && tensor_in_out(op)) return TGA_AUTOGRAD_OUT;
    if (fn_or_inplace && tensor_in_out(op) && !has_slot(op, TGA_SLOT_AUTOGRAD))
        return TGA_AUTOGRAD_NOT_IMPL;
    return TGA_AUTOGRAD_NONE;
}

int tga_assign_autograd(const tgm_model *m, tgm_arena *a, tga_ops *ops)
{
    /* tensorgen's own spec without derivatives (a test's) has no autograd; a library's
     * operators record NotImplemented nodes even then: a gradient must never stop silently
     * at an operator that has no formula. */
    if (m->nderivs == 0 && !m->ns) return 0;
    tgm_name_map *by_func = tgm__map_new(a);
    for (int i = 0; i < m->nderivs; i++)
        if (m->derivs[i]->func)
            tgm__map_put(by_func, m->derivs[i]->func->schema.full_name, m->derivs[i]);
    int errors = 0;
    for (int i = 0; i < ops->n; i++) {
        tga_op *op = &ops->ops[i];
        if (op->nrets == 0) { /* `-> ()`: no output to record a node on */
            const tgm_derivative *dv = entry_of(by_func, op->f);
            if (dv) {
                tgm_error(dv->name_loc,
                          "'%s' returns nothing; only operators returning tensors are "
                          "differentiable",
                          op->f->schema.full_name);
                errors++;
            }
            continue;
        }
        op->autograd = kind_of(by_func, op);
        if (op->autograd == TGA_AUTOGRAD_NONE) continue;
        tga_kernel *k = tgm_alloc(a, sizeof *k * (size_t)(op->nkernels + 1));
        if (op->nkernels) memcpy(k, op->kernels, sizeof *k * (size_t)op->nkernels);
        for (int j = 0; j < op->nkernels; j++) k[j].slots &= ~TGA_SLOT_AUTOGRAD;
        op->kernels = k;
        k = &op->kernels[op->nkernels++];
        k->symbol = tgs_fmt(a, "%s__autograd_kernel_%s", op->prefix, op->cname);
        k->key = TGM_KEY_OTHER;
        k->slots = TGA_SLOT_AUTOGRAD;
        k->origin = TGA_KERNEL_AUTOGRAD;
        k->loc = op->deriv ? op->deriv->loc : op->f->loc;
    }
    return errors;
}
