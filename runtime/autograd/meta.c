/* A tensor's autograd meta (.grad, grad_fn and output number, the weak AccumulateGrad
 * pointer, hooks, retain_grad) and the public functions over it: set_grad, is_leaf, detach,
 * retain_grad, register_hook, grad_fn. The meta is allocated on first need: most tensors
 * never have one. */
#include "autograd/autograd_private.h"

#include <stdlib.h>

struct tg_autograd_meta *tg__autograd_meta_get(tg_tensor *t)
{
    struct tg_autograd_meta *m = __atomic_load_n(&t->autograd, __ATOMIC_ACQUIRE);
    if (m) return m;
    m = tg__ag_block_alloc(sizeof *m);
    if (!m) return tg__error("autograd", "out of memory allocating autograd metadata");
    *m = (struct tg_autograd_meta){ 0 };
    /* A leaf shared by threads (a parameter) may get its meta from two forwards at once, even
     * when its reference count is 1: the threads may all borrow the caller's reference. */
    struct tg_autograd_meta *expected = NULL;
    if (!__atomic_compare_exchange_n(&t->autograd, &expected, m, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        tg__ag_block_free(m);
        return expected;
    }
    return m;
}

/* Called by core's tensor_destroy, through the hook registered below. The accumulator, if
 * any, is already gone: it held the tensor. */
static void autograd_meta_free(struct tg_autograd_meta *m)
{
    if (!m) return;
    tg_node *fn = m->grad_fn;
    if (fn && m->retains_grad) {
        /* The retain entry is a weak pointer to the dying tensor: remove it. The tensor's
         * address is recovered from the entry that names it. */
        for (struct tg_hook_list **l = &fn->pre_hooks; *l; l = &(*l)->next) {
            tg_tensor *r = (*l)->retain;
            if (r && r->autograd == m) {
                tg__hook_list_remove_retain(&fn->pre_hooks, r);
                break;
            }
        }
    }
    tg__hook_list_free(m->hooks);
    tg__fw_grads_free(m->fw);
    tg_tensor *g = m->grad;
    tg__ag_block_free(m);
    tg_release(g);
    tg_autograd_node_release(fn);
}

/* Core frees a dying tensor's meta through this hook (core never calls autograd by name). A
 * constructor registers it: every meta is made by tg__autograd_meta_get above, in this file,
 * so the hook is set before any tensor has a meta. */
__attribute__((constructor)) static void register_meta_free(void)
{
    tg__register_autograd_meta_free(autograd_meta_free);
}

tg_tensor *tg__autograd_meta_grad(const struct tg_autograd_meta *cm)
{
    struct tg_autograd_meta *m = (struct tg_autograd_meta *)cm;
    tg__meta_lock(m);
    tg_tensor *g = tg_retain(m->grad);
    tg__meta_unlock(m);
    return g;
}

tg_tensor *tg_tensor_grad(const tg_tensor *t)
{
    if (!t || !t->autograd) return NULL;
    return tg_scope_track(tg__autograd_meta_grad(t->autograd));
}

void tg_tensor_set_grad(tg_tensor *t, tg_tensor *grad)
{
    if (!t) return;
    if (grad == t) {
        tg__error("set_grad", "can't assign Variable as its own grad");
        return;
    }
    if (grad) {
        char a[256], b[256];
        bool same = grad->ndim == t->ndim;
        for (int64_t i = 0; same && i < t->ndim; i++) same = grad->sizes[i] == t->sizes[i];
        if (!same) {
            tg__error("set_grad", "assigned grad has data of a different size: %s vs %s",
                      tg__shape_str(a, sizeof a, grad->sizes, grad->ndim),
                      tg__shape_str(b, sizeof b, t->sizes, t->ndim));
            return;
        }
        if (grad->dtype != t->dtype) {
            tg__error("set_grad", "assigned grad has data of a different type");
            return;
        }
        if (grad->device.type != t->device.type || grad->device.index != t->device.index) {
            tg__error("set_grad", "assigned grad has data located on a different device");
            return;
        }
    } else if (!t->autograd) {
        return;
    }
    struct tg_autograd_meta *m = tg__autograd_meta_get(t);
    if (!m) return;
    tg_retain(grad);
    tg__meta_lock(m);
    tg_tensor *old = m->grad;
    m->grad = grad;
    tg__meta_unlock(m);
    tg_release(old);
}

bool tg_tensor_is_leaf(const tg_tensor *t) { return t && (!t->autograd || !t->autograd->grad_fn); }

tg_tensor *tg_tensor_detach(tg_tensor *t)
{
    if (!t) return NULL;
    return tg_scope_track(tg__detached_alias(t));
}

void tg_tensor_retain_grad(tg_tensor *t)
{
    if (!t) return;
    if (!t->requires_grad) {
        tg__error("retain_grad", "can't retain_grad on Tensor that has requires_grad=False");
        return;
    }
    if (tg_tensor_is_leaf(t) || t->autograd->retains_grad) return; /* leaves keep .grad */
    struct tg_autograd_meta *m = t->autograd;
    if (tg__hook_list_append(&m->grad_fn->pre_hooks, NULL, NULL, t, m->output_nr) == 0)
        m->retains_grad = true;
}

int tg_tensor_register_hook(tg_tensor *t, tg_grad_hook fn, void *ctx)
{
    if (!t) return -1;
    if (!fn) return tg__fail("register_hook", "hook is NULL");
    if (!t->requires_grad)
        return tg__fail("register_hook", "cannot register a hook on a tensor that doesn't require "
                                         "gradient");
    if (!tg_tensor_is_leaf(t)) {
        struct tg_autograd_meta *m = t->autograd;
        return tg__hook_list_append(&m->grad_fn->pre_hooks, fn, ctx, NULL, m->output_nr);
    }
    struct tg_autograd_meta *m = tg__autograd_meta_get(t);
    if (!m) return -1;
    tg__meta_lock(m);
    int r = tg__hook_list_append(&m->hooks, fn, ctx, NULL, 0);
    tg__meta_unlock(m);
    return r;
}

tg_node *tg_tensor_grad_fn(const tg_tensor *t)
{
    return t && t->autograd ? t->autograd->grad_fn : NULL;
}
