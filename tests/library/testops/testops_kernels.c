/* The kernels of the test operator library (testops.yaml), written as a library author
 * would: the public API only (tensorgen.h), each kernel including the generated header of
 * its operator (kernels/<op>.h, which declares it: the compiler checks the signature).
 * Errors name the operator: `return tg_set_error("testops::scale", ...)`. */
#include "tensorgen.h"

#include "testops/kernels/clamp_max.h"
#include "testops/kernels/mul_scaled.h"
#include "testops/kernels/scale.h"
#include "testops/kernels/scaled_square.h"
#include "testops/kernels/split_sign.h"
#include "testops/kernels/sum_with.h"
#include "testops/ops/scale.h"

/* self * factor, over contiguous float32/float64 data: a plain loop, the way a kernel that
 * computes itself (rather than through other operators) is written. out is (N), like self. */
tg_tensor *testops__cpu_scale_cpu(tg_tensor *self, double factor)
{
    tg_dtype dt = tg_tensor_dtype(self);
    if (dt != TG_FLOAT32 && dt != TG_FLOAT64)
        return tg_set_error("testops::scale", "expected a float32 or float64 tensor, got %s",
                            tg_dtype_name(dt));
    tg_tensor *x = tg_contiguous(self);
    tg_tensor *out = x ? tg_empty_like(x) : NULL;
    if (!out) {
        tg_release(x);
        return NULL;
    }
    int64_t n = tg_tensor_numel(x);
    if (dt == TG_FLOAT32) {
        const float *in = tg_tensor_data(x);
        float *o = tg_tensor_data(out);
        for (int64_t i = 0; i < n; i++) o[i] = (float)(in[i] * factor);
    } else {
        const double *in = tg_tensor_data(x);
        double *o = tg_tensor_data(out);
        for (int64_t i = 0; i < n; i++) o[i] = in[i] * factor;
    }
    tg_release(x);
    return out;
}

/* (above, below): self where self > threshold, else 0; and the rest. Built from tensorgen's
 * operators. */
testops_above_below testops__cpu_split_sign_cpu(tg_tensor *self, double threshold)
{
    testops_above_below r = { NULL, NULL };
    tg_tensor *mask = tg_gt_scalar(self, threshold), *not_mask = tg_le_scalar(self, threshold);
    if (mask && not_mask) {
        r.above = tg_where_scalar_other(mask, self, 0.0);
        r.below = tg_where_scalar_other(not_mask, self, 0.0);
    }
    tg_release(mask);
    tg_release(not_mask);
    if (!r.above || !r.below) {
        tg_release(r.above);
        tg_release(r.below);
        return (testops_above_below){ NULL, NULL };
    }
    return r;
}

/* factor * self^2 through the library's own operator and tensorgen's: autograd differentiates
 * it through theirs. */
tg_tensor *testops__composite_scaled_square(tg_tensor *self, double factor)
{
    tg_tensor *sq = tg_mul(self, self);
    tg_tensor *r = sq ? testops_scale(sq, .factor = factor) : NULL;
    tg_release(sq);
    return r;
}

/* In place, through copy_: a public operator writing into self bumps its version counter, so
 * autograd sees the write. */
tg_tensor *testops__cpu_clamp_max_cpu_(tg_tensor *self, double limit)
{
    tg_tensor *r = tg_clamp(self, .max = limit);
    tg_tensor *w = r ? tg_copy_(self, r) : NULL;
    tg_release(r);
    return w;
}

/* self + sum(more) - sum(less), each list given or None; a None `more` adds 100, so that a
 * caller sees None and the empty list arrive apart. Tensor[]? is a tg_tensor_list whose None
 * is TG_NO_TENSORS (tg_is_none_tensors). */
tg_tensor *testops__cpu_sum_with_cpu(tg_tensor *self, tg_tensor_list more, tg_tensor_list less)
{
    tg_tensor *acc = tg_is_none_tensors(more) ? tg_add_scalar(self, 100.0) : tg_clone(self);
    for (int64_t i = 0; acc && !tg_is_none_tensors(more) && i < more.len; i++) {
        tg_tensor *next = tg_add(acc, more.data[i]);
        tg_release(acc);
        acc = next;
    }
    for (int64_t i = 0; acc && !tg_is_none_tensors(less) && i < less.len; i++) {
        tg_tensor *next = tg_sub(acc, less.data[i]);
        tg_release(acc);
        acc = next;
    }
    return acc;
}

/* self = self * other * alpha, in place; self is the second argument. */
tg_tensor *testops__cpu_mul_scaled_cpu_(tg_tensor *other, tg_tensor *self, double alpha)
{
    tg_tensor *p = tg_mul(self, other);
    tg_tensor *r = p ? tg_mul_scalar(p, alpha) : NULL;
    tg_tensor *w = r ? tg_copy_(self, r) : NULL;
    tg_release(p);
    tg_release(r);
    return w;
}
