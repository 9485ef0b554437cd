/* The composites of advanced indexing, written with public operators so that they
 * differentiate (again): index_put (clone + index_put_), index_backward (PyTorch's
 * _index_put_impl_(zeros, indices, grad, accumulate=True) as a functional index_put),
 * masked_select (self and mask broadcast, then index.Tensor with the mask: the true positions
 * in row-major order) and masked_select_backward (zeros of the broadcast shape, grad put at
 * the mask, summed back to input's shape). */
#include "tg_kutil.h"
#include "composite_util.h"

/* The public functions of the operators called here. */
#include "ops/clone.h"
#include "ops/expand.h"
#include "ops/index.h"
#include "ops/index_put.h"
#include "ops/reshape.h"
#include "ops/sum_to_size.h"
#include "ops/zeros.h"

#include "kernels/index_backward.h"
#include "kernels/index_put.h"
#include "kernels/masked_select.h"
#include "kernels/masked_select_backward.h"

tg_tensor *tg__composite_index_put(tg_tensor *self, tg_tensor_list indices, tg_tensor *values,
                                   bool accumulate)
{
    tg_tensor *c = tg_clone(self);
    if (!c) return NULL;
    return tg__then(c, tg_index_put_(c, indices, values, .accumulate = accumulate));
}

tg_tensor *tg__composite_index_backward(tg_tensor *zeros_like_self, tg_tensor_list indices,
                                        tg_tensor *grad)
{
    return tg_index_put(zeros_like_self, indices, grad, .accumulate = true);
}

/* The broadcast shape of a and b into s (PyTorch's infer_size message); its ndim, or -1. */
static int64_t broadcast2(const char *op, const tg_tensor *a, const tg_tensor *b, int64_t *s)
{
    int64_t n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int64_t i = 0; i < n; i++) {
        int64_t da = i - (n - a->ndim), db = i - (n - b->ndim);
        int64_t x = da >= 0 ? a->sizes[da] : 1, y = db >= 0 ? b->sizes[db] : 1;
        if (x != y && x != 1 && y != 1) {
            tg__error(op,
                      "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                      "non-singleton dimension %lld",
                      (long long)x, (long long)y, (long long)i);
            return -1;
        }
        s[i] = x == 1 ? y : x;
    }
    return n;
}

/* The 1-element views of a 0-dim operand and its 0-dim mask (which has no dims to expand into
 * positions). True with both set; false (error recorded) with what was made in *a1, *m1 and the
 * rest NULL: the caller releases both. */
static bool one_element_views(tg_tensor *a, tg_tensor *m, tg_tensor **a1, tg_tensor **m1)
{
    int64_t one = 1;
    tg_int_list s1 = { .len = 1, .data = &one };
    *a1 = tg_reshape(a, s1);
    *m1 = *a1 ? tg_reshape(m, s1) : NULL;
    return *m1 != NULL;
}

tg_tensor *tg__composite_masked_select(tg_tensor *self, tg_tensor *mask)
{
    const char *op = "masked_select";
    if (mask->dtype != TG_BOOL) return tg__error(op, "masked_select: expected BoolTensor for mask");
    int64_t s[TG_MAX_DIMS];
    int64_t n = broadcast2(op, self, mask, s);
    if (n < 0) return NULL;
    tg_int_list size = { .len = n, .data = s };
    tg_tensor *se = tg_expand(self, size);
    tg_tensor *me = se ? tg_expand(mask, size) : NULL;
    tg_tensor *r = NULL;
    if (me) {
        /* a 0-dim mask has no dims to expand into positions: index its 1-element view */
        if (n == 0) {
            tg_tensor *se1, *me1;
            if (one_element_views(se, me, &se1, &me1)) r = tg_index(se1, TG_TENSORS(me1));
            tg_release(se1);
            tg_release(me1);
        } else {
            r = tg_index(se, TG_TENSORS(me));
        }
    }
    tg_release(se);
    tg_release(me);
    return r;
}

tg_tensor *tg__composite_masked_select_backward(tg_tensor *grad, tg_tensor *input, tg_tensor *mask)
{
    const char *op = "masked_select_backward";
    int64_t s[TG_MAX_DIMS];
    int64_t n = broadcast2(op, input, mask, s);
    if (n < 0) return NULL;
    tg_int_list size = { .len = n, .data = s },
                isize = { .len = input->ndim, .data = input->sizes };
    tg_tensor *z = tg_zeros(size, .dtype = grad->dtype, .device = grad->device);
    tg_tensor *me = z ? tg_expand(mask, size) : NULL;
    tg_tensor *r = NULL;
    if (me) {
        if (n == 0) {
            tg_tensor *z1, *me1;
            tg_tensor *p = one_element_views(z, me, &z1, &me1)
                               ? tg_index_put(z1, TG_TENSORS(me1), grad)
                               : NULL;
            r = p ? tg_reshape(p, size) : NULL;
            tg_release(p);
            tg_release(z1);
            tg_release(me1);
        } else {
            r = tg_index_put(z, TG_TENSORS(me), grad);
        }
    }
    tg_release(z);
    tg_release(me);
    return r ? tg__then(r, tg_sum_to_size(r, isize)) : NULL;
}
