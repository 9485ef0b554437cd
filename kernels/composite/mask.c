/* The functional masked_fill overloads (CompositeExplicitAutograd, as PyTorch's): self and mask
 * broadcast against each other, self's values are cloned into a new contiguous tensor of that
 * shape and masked_fill_ (kernels/cpu/mask.c, kernels/cuda/mask.cu) writes the value. Their
 * derivatives are in specs/derivatives.yaml. */
#include "tg_kutil.h"
#include "mask_checks.h"
/* The public functions of the operators called here. */
#include "ops/clone.h"
#include "ops/expand.h"
#include "ops/masked_fill.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/masked_fill.h"
#include "composite_util.h"

/* A contiguous copy of self broadcast against mask's shape (PyTorch's expand_outplace), or
 * NULL with the broadcasting error. */
static tg_tensor *broadcast_clone(const char *op, tg_tensor *self, tg_tensor *mask)
{
    int64_t nd = self->ndim > mask->ndim ? self->ndim : mask->ndim;
    int64_t shape[TG_MAX_DIMS];
    for (int64_t d = 0; d < nd; d++) {
        int64_t ds = d - (nd - self->ndim), dm = d - (nd - mask->ndim);
        int64_t a = ds >= 0 ? self->sizes[ds] : 1, b = dm >= 0 ? mask->sizes[dm] : 1;
        if (a != b && a != 1 && b != 1)
            return tg__error(op,
                             "The size of tensor a (%lld) must match the size of tensor b (%lld) "
                             "at non-singleton dimension %lld",
                             (long long)a, (long long)b, (long long)d);
        shape[d] = a == 1 ? b : a;
    }
    tg_int_list size = { .len = nd, .data = shape };
    tg_tensor *e = tg_expand(self, size);
    if (!e) return NULL;
    return tg__then(e, tg_clone(e, .memory_format = TG_CONTIGUOUS_FORMAT));
}

tg_tensor *tg__composite_masked_fill_scalar(tg_tensor *self, tg_tensor *mask, double value)
{
    if (tg__masked_fill_check("masked_fill", mask, NULL) != 0) return NULL;
    tg_tensor *r = broadcast_clone("masked_fill", self, mask);
    if (!r) return NULL;
    return tg__then(r, tg_masked_fill_scalar_(r, mask, value));
}

tg_tensor *tg__composite_masked_fill_tensor(tg_tensor *self, tg_tensor *mask, tg_tensor *value)
{
    if (tg__masked_fill_check("masked_fill", mask, value) != 0) return NULL;
    tg_tensor *r = broadcast_clone("masked_fill", self, mask);
    if (!r) return NULL;
    return tg__then(r, tg_masked_fill_(r, mask, value));
}
