/* The backward helpers of the indexing operators, written with public operators so that they
 * differentiate again (double backward), as PyTorch's CompositeImplicitAutograd ones:
 * index_select_backward (zeros + index_add), gather_backward (zeros + scatter_add) and
 * scatter_reduce_backward (FunctionsManual.cpp's scatter_reduce_backward for "sum", "mean",
 * "amax" and "amin"; "prod" is refused). */
#include "tg_kutil.h"
#include "composite_util.h"

#include <string.h>

/* The public functions of the operators called here. */
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/gather.h"
#include "ops/index_add.h"
#include "ops/mul.h"
#include "ops/ones_like.h"
#include "ops/scatter.h"
#include "ops/scatter_add.h"
#include "ops/to.h"
#include "ops/where.h"
#include "ops/zeros.h"
#include "ops/zeros_like.h"

#include "kernels/gather_backward.h"
#include "kernels/index_select_backward.h"
#include "kernels/scatter_reduce_backward.h"

tg_tensor *tg__composite_index_select_backward(tg_tensor *grad, tg_int_list self_sizes, int64_t dim,
                                               tg_tensor *index)
{
    tg_tensor *z = tg_zeros(self_sizes, .dtype = grad->dtype, .device = grad->device);
    if (!z) return NULL;
    return tg__then(z, tg_index_add(z, dim, index, grad));
}

tg_tensor *tg__composite_gather_backward(tg_tensor *grad, tg_tensor *self, int64_t dim,
                                         tg_tensor *index, bool sparse_grad)
{
    (void)sparse_grad; /* dense gradients only */
    tg_int_list sizes = { .len = self->ndim, .data = self->sizes };
    tg_tensor *z = tg_zeros(sizes, .dtype = grad->dtype, .device = grad->device);
    if (!z) return NULL;
    return tg__then(z, tg_scatter_add(z, dim, index, grad));
}

/* Temporaries of one call, released together. */
typedef struct tmp_set {
    tg_tensor *t[16];
    int n;
    bool failed;
} tmp_set;

static tg_tensor *keep(tmp_set *s, tg_tensor *t)
{
    if (!t) s->failed = true;
    else s->t[s->n++] = t;
    return t;
}

static void drop(tmp_set *s)
{
    for (int i = 0; i < s->n; i++) tg_release(s->t[i]);
}

tg_tensors2 tg__composite_scatter_reduce_backward(tg_tensor *grad, tg_tensor *self, int64_t dim,
                                                  tg_tensor *index, tg_tensor *src,
                                                  const char *reduce, bool include_self,
                                                  tg_tensor *result)
{
    const char *op = "scatter_reduce_backward";
    tg_tensors2 r = { NULL, NULL };
    tmp_set s = { .n = 0, .failed = false };
    if (strcmp(reduce, "sum") == 0) {
        r.r0 = tg_retain(grad);
        r.r1 = tg_gather(grad, dim, index);
    } else if (strcmp(reduce, "mean") == 0) {
        /* N: how many values each position averaged (self counted when included), 0 -> 1 */
        tg_tensor *n0 = keep(&s, include_self ? tg_ones_like(grad) : tg_zeros_like(grad));
        tg_tensor *ones = s.failed ? NULL : keep(&s, tg_ones_like(src, .dtype = grad->dtype));
        tg_tensor *n1 = s.failed ? NULL : keep(&s, tg_scatter_add(n0, dim, index, ones));
        tg_tensor *z = s.failed ? NULL : keep(&s, tg_eq_scalar(n1, 0));
        tg_tensor *n = s.failed ? NULL : keep(&s, tg_where_scalar_self(z, 1, n1));
        tg_tensor *ns = s.failed ? NULL : keep(&s, tg_gather(n, dim, index));
        tg_tensor *gs = s.failed ? NULL : keep(&s, tg_gather(grad, dim, index));
        if (!s.failed) {
            r.r0 = tg_div(grad, n);
            r.r1 = tg_div(gs, ns);
        }
    } else if (strcmp(reduce, "amax") == 0 || strcmp(reduce, "amin") == 0) {
        /* the gradient is shared evenly between the values equal to the result */
        tg_tensor *value = keep(&s, tg_gather(result, dim, index));
        tg_tensor *se = s.failed ? NULL : keep(&s, tg_eq(self, result));
        tg_tensor *sr = s.failed ? NULL : keep(&s, tg_to(se, grad->dtype));
        tg_tensor *re = s.failed ? NULL : keep(&s, tg_eq(src, value));
        tg_tensor *rr = s.failed ? NULL : keep(&s, tg_to(re, grad->dtype));
        tg_tensor *cnt = s.failed ? NULL : keep(&s, tg_scatter_add(sr, dim, index, rr));
        tg_tensor *gd = s.failed ? NULL : keep(&s, tg_div(grad, cnt));
        tg_tensor *gg = s.failed ? NULL : keep(&s, tg_gather(gd, dim, index));
        if (!s.failed) {
            r.r0 = tg_mul(sr, gd);
            r.r1 = tg_mul(rr, gg);
        }
    } else if (strcmp(reduce, "prod") == 0) {
        tg__error(op, "the derivative of scatter_reduce with reduce=\"prod\" is not implemented");
    } else {
        tg__error(op, "Expected reduce argument to be one of sum, prod, mean, amax or amin, got %s",
                  reduce);
    }
    drop(&s);
    if (r.r0 && r.r1 && !include_self) {
        /* self's values took no part: no gradient where index wrote */
        r.r0 = tg__then(r.r0, tg_scatter_value(r.r0, dim, index, 0));
    }
    if (!r.r0 || !r.r1) {
        tg_release(r.r0);
        tg_release(r.r1);
        return (tg_tensors2){ NULL, NULL };
    }
    return r;
}
