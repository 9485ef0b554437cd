/* Operators that derivative formulas call where PyTorch calls a C++ helper of
 * FunctionsManual.cpp: sum_to_size, sum_backward, restore_reduced_dims, scale_grad_by_count,
 * permute_backward, slice_backward, select_backward, value_selecting_reduction_backward,
 * var_backward, prod_backward, sign, clamp_backward (+ .Tensor, _min, _max),
 * div_tensor_self_backward, div_tensor_other_backward, native_dropout_backward.
 *
 * All but slice_backward and select_backward are CompositeImplicitAutograd: they call public
 * tg_* operators only, so autograd records through them and a gradient computed with
 * create_graph is differentiable again. slice_backward and select_backward write into a
 * view (CompositeExplicitAutograd, with their own entries in specs/derivatives.yaml).
 * Every function returns a new reference, or NULL with an error recorded, and releases its
 * intermediates on every path. Kernels never know about autograd: these are plain compositions. */
#include "tg_kutil.h"
/* The public functions of the operators called here. */
#include "ops/arange.h"
#include "ops/clone.h"
#include "ops/copy.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/expand.h"
#include "ops/full_like.h"
#include "ops/ge.h"
#include "ops/gt.h"
#include "ops/le.h"
#include "ops/lt.h"
#include "ops/mean.h"
#include "ops/mm.h"
#include "ops/mul.h"
#include "ops/neg.h"
#include "ops/permute.h"
#include "ops/prod.h"
#include "ops/reshape.h"
#include "ops/select.h"
#include "ops/slice.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/t.h"
#include "ops/to.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "ops/where.h"
#include "ops/zeros.h"
#include "ops/zeros_like.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/clamp_backward.h"
#include "kernels/clamp_backward_max.h"
#include "kernels/clamp_backward_min.h"
#include "kernels/div_tensor_other_backward.h"
#include "kernels/div_tensor_self_backward.h"
#include "kernels/linear_weight_backward.h"
#include "kernels/native_dropout_backward.h"
#include "kernels/permute_backward.h"
#include "kernels/prod_backward.h"
#include "kernels/restore_reduced_dims.h"
#include "kernels/scale_grad_by_count.h"
#include "kernels/select_backward.h"
#include "kernels/sign.h"
#include "kernels/slice_backward.h"
#include "kernels/sum_backward.h"
#include "kernels/sum_to_size.h"
#include "kernels/value_selecting_reduction_backward.h"
#include "kernels/var_backward.h"
#include "composite_util.h"

#include <math.h>
#include <string.h>

/* t with a size-1 dim inserted at each of `dims` (wrapped against the final rank `ndim`),
 * in increasing order, so that t lines up with the unreduced tensor. */
static tg_tensor *unsqueeze_multiple(const char *op, tg_tensor *t, tg_int_list dims, int64_t ndim)
{
    bool at[TG_MAX_DIMS] = { false };
    if (ndim > TG_MAX_DIMS) return tg__error(op, "too many dimensions");
    for (int64_t i = 0; i < dims.len; i++) {
        int64_t d = tg__wrap_dim(op, dims.data[i], ndim);
        if (d < 0) return NULL;
        if (at[d])
            return tg__error(op, "dim %lld appears multiple times in the list of dims",
                             (long long)d);
        at[d] = true;
    }
    tg_tensor *r = tg_retain(t);
    for (int64_t d = 0; d < ndim && r; d++)
        if (at[d]) r = tg__then(r, tg_unsqueeze(r, d));
    return r;
}

/* ------------------------------------------------------------------ reductions */

/* self summed to `size`: the leading dims broadcasting added, and the dims where size is 1
 * and self's is not. PyTorch: "size {[3]} is not expandable to size {[2, 4]}." */
tg_tensor *tg__composite_sum_to_size(tg_tensor *self, tg_int_list size)
{
    char a[256], b[256];
    int64_t lead = self->ndim - size.len;
    bool ok = lead >= 0;
    for (int64_t i = 0; ok && i < size.len; i++)
        ok = size.data[i] == self->sizes[lead + i] || size.data[i] == 1;
    if (!ok)
        return tg__error("sum_to_size", "size {%s} is not expandable to size {%s}.",
                         tg__shape_str(a, sizeof a, size.data, size.len),
                         tg__shape_str(b, sizeof b, self->sizes, self->ndim));
    int64_t dims[TG_MAX_DIMS], n = 0;
    for (int64_t d = 0; d < self->ndim; d++)
        if (d < lead || (size.data[d - lead] == 1 && self->sizes[d] != 1)) dims[n++] = d;
    if (n == 0 && lead == 0) return tg_retain(self);
    tg_tensor *r =
        n ? tg_sum(self, .dim = ((tg_int_list){ .len = n, .data = dims }), .keepdim = true)
          : tg_retain(self);
    return tg__then(r, tg_reshape(r, size));
}

/* The gradient of sum(self, dims, keepdim), self of shape `sizes`: grad with the reduced dims
 * restored (size 1) and expanded (a view, no copy). */
tg_tensor *tg__composite_sum_backward(tg_tensor *grad, tg_int_list sizes, tg_int_list dims,
                                      bool keepdim)
{
    tg_tensor *g = !keepdim && sizes.len > 0 && dims.data && dims.len > 0
                       ? unsqueeze_multiple("sum_backward", grad, dims, sizes.len)
                       : tg_retain(grad);
    return tg__then(g, tg_expand(g, sizes));
}

tg_tensor *tg__composite_restore_reduced_dims(tg_tensor *output, tg_int_list dims, bool keepdim)
{
    if (keepdim || !dims.data || dims.len == 0) return tg_retain(output);
    return unsqueeze_multiple("restore_reduced_dims", output, dims, output->ndim + dims.len);
}

/* grad / count * mask, count = mask.sum(dims, keepdim=True): each selected element (a tie of
 * amax/amin) gets an equal share. */
tg_tensor *tg__composite_scale_grad_by_count(tg_tensor *grad, tg_tensor *mask, tg_int_list dims)
{
    tg_tensor *count = tg_sum(mask, .dim = dims, .keepdim = true);
    tg_tensor *share = tg_div(grad, count);
    return tg__then2(count, share, tg_mul(share, mask));
}

/* grad (*, out)^T @ input (*, in) -> (out, in), leading dims flattened; a 1-D input (in) with
 * grad (out) gives their outer product. */
tg_tensor *tg__composite_linear_weight_backward(tg_tensor *grad, tg_tensor *input)
{
    if (input->ndim == 1) {
        tg_tensor *g = tg_unsqueeze(grad, 1), *x = tg_unsqueeze(input, 0);
        tg_tensor *r = g && x ? tg_mm(g, x) : NULL;
        tg_release(g);
        tg_release(x);
        return r;
    }
    tg_tensor *g2 = input->ndim == 2 ? tg_retain(grad)
                                     : tg_reshape(grad, TG_INTS(-1, grad->sizes[grad->ndim - 1]));
    tg_tensor *x2 = input->ndim == 2
                        ? tg_retain(input)
                        : tg_reshape(input, TG_INTS(-1, input->sizes[input->ndim - 1]));
    tg_tensor *gt = g2 ? tg_t(g2) : NULL;
    tg_tensor *r = gt && x2 ? tg_mm(gt, x2) : NULL;
    tg_release(gt);
    tg_release(g2);
    tg_release(x2);
    return r;
}

/* grad permuted back: result dim dims[i] is grad dim i. */
tg_tensor *tg__composite_permute_backward(tg_tensor *grad, tg_int_list dims)
{
    if (dims.len != grad->ndim)
        return tg__error("permute_backward",
                         "number of dims (%lld) does not match grad.dim() = %lld",
                         (long long)dims.len, (long long)grad->ndim);
    int64_t inv[TG_MAX_DIMS];
    bool seen[TG_MAX_DIMS] = { false };
    for (int64_t i = 0; i < dims.len; i++) {
        int64_t d = tg__wrap_dim("permute_backward", dims.data[i], grad->ndim);
        if (d < 0) return NULL;
        if (seen[d])
            return tg__error("permute_backward", "permute(): duplicate dims are not allowed.");
        seen[d] = true;
        inv[d] = i;
    }
    return tg_permute(grad, ((tg_int_list){ .len = dims.len, .data = inv }));
}

/* Zeros of input_sizes (grad_output's dtype) with grad_output copied into view(zeros). */
static tg_tensor *scatter_into_zeros(tg_tensor *grad_output, tg_int_list input_sizes,
                                     tg_tensor *(*view)(tg_tensor *, void *), void *ctx)
{
    tg_tensor *z =
        tg_zeros(input_sizes, .dtype = grad_output->dtype, .device = grad_output->device);
    tg_tensor *v = z ? view(z, ctx) : NULL;
    tg_tensor *c = v ? tg_copy_(v, grad_output) : NULL;
    if (!c) {
        tg_release(v);
        tg_release(z);
        return NULL;
    }
    tg_release(c);
    tg_release(v);
    return z;
}

typedef struct slice_args {
    int64_t dim;
    tg_opt_int start, end;
    int64_t step;
} slice_args;

static tg_tensor *slice_view(tg_tensor *z, void *ctx)
{
    slice_args *s = ctx;
    return tg_slice(z, .dim = s->dim, .start = s->start, .end = s->end, .step = s->step);
}

tg_tensor *tg__composite_slice_backward(tg_tensor *grad_output, tg_int_list input_sizes,
                                        int64_t dim, tg_opt_int start, tg_opt_int end, int64_t step)
{
    slice_args s = { dim, start, end, step };
    return scatter_into_zeros(grad_output, input_sizes, slice_view, &s);
}

typedef struct select_args {
    int64_t dim, index;
} select_args;

static tg_tensor *select_view(tg_tensor *z, void *ctx)
{
    select_args *s = ctx;
    return tg_select(z, s->dim, s->index);
}

tg_tensor *tg__composite_select_backward(tg_tensor *grad_output, tg_int_list input_sizes,
                                         int64_t dim, int64_t index)
{
    select_args s = { dim, index };
    return scatter_into_zeros(grad_output, input_sizes, select_view, &s);
}

/* Zeros of `sizes` with grad at `indices` along dim: where(arange(n) == indices, grad, 0),
 * the arange laid along dim so that the comparison broadcasts to `sizes`. */
tg_tensor *tg__composite_value_selecting_reduction_backward(tg_tensor *grad, int64_t dim,
                                                            tg_tensor *indices, tg_int_list sizes,
                                                            bool keepdim)
{
    const char *op = "value_selecting_reduction_backward";
    if (sizes.len == 0) return tg_retain(grad);
    if (sizes.len > TG_MAX_DIMS) return tg__error(op, "too many dimensions");
    int64_t d = tg__wrap_dim(op, dim, sizes.len);
    if (d < 0) return NULL;
    int64_t shape[TG_MAX_DIMS];
    for (int64_t k = 0; k < sizes.len; k++) shape[k] = k == d ? sizes.data[d] : 1;
    tg_tensor *g = keepdim ? tg_retain(grad) : tg_unsqueeze(grad, d);
    tg_tensor *idx = keepdim ? tg_retain(indices) : tg_unsqueeze(indices, d);
    tg_tensor *ar = tg_arange(sizes.data[d], .dtype = TG_INT64, .device = grad->device);
    ar = tg__then(ar, tg_view(ar, ((tg_int_list){ .len = sizes.len, .data = shape })));
    tg_tensor *mask = tg__then2(ar, idx, tg_eq(ar, idx));
    return tg__then2(mask, g, tg_where_scalar_other(mask, g, 0));
}

/* 2 / (N - correction) * grad * (self - mean), N the number of reduced elements. Over all
 * dims with N <= correction PyTorch gives grad * (self == mean ? NaN : inf); so do we. */
tg_tensor *tg__composite_var_backward(tg_tensor *grad, tg_tensor *self, tg_int_list dim,
                                      tg_opt_int correction, bool keepdim)
{
    const char *op = "var_backward";
    int64_t corr = tg_is_none_int(correction) ? 1 : correction;
    bool all = !dim.data || dim.len == 0 || self->ndim == 0;
    int64_t n = 1;
    tg_tensor *g, *mean;
    if (all) {
        n = tg__numel(self);
        g = tg_retain(grad);
        mean = tg_mean(self);
    } else {
        for (int64_t i = 0; i < dim.len; i++) {
            int64_t d = tg__wrap_dim(op, dim.data[i], self->ndim);
            if (d < 0) return NULL;
            n *= self->sizes[d];
        }
        g = keepdim ? tg_retain(grad) : unsqueeze_multiple(op, grad, dim, self->ndim);
        mean = tg_mean(self, .dim = dim, .keepdim = true);
    }
    int64_t dof = n - corr;
    if (all && dof <= 0) {
        tg_tensor *eq = tg_eq(self, mean);
        tg_tensor *inf = tg_full_like(self, INFINITY);
        tg_tensor *w = tg__then2(eq, inf, tg_where_scalar_self(eq, NAN, inf));
        return tg__then2(g, mean, tg__then(w, tg_mul(g, w)));
    }
    tg_tensor *scaled = tg_mul_scalar(g, 2.0 / (double)dof);
    tg_tensor *centred = tg_sub(self, mean);
    tg_tensor *r = tg__then2(scaled, centred, tg_mul(scaled, centred));
    return tg__then2(g, mean, r);
}

/* The gradient of prod(input, dim, keepdim): grad times the product of the other elements of
 * each slice. Without zeros that is result / input. With zeros: an element that is the only
 * zero of its slice gets the product of the rest, every other element of a slice holding a
 * zero gets 0; input is replaced by 1 at zeros so nothing divides by zero (and the double
 * backward stays finite). */
tg_tensor *tg__composite_prod_backward(tg_tensor *grad, tg_tensor *input, tg_tensor *result,
                                       int64_t dim, bool keepdim)
{
    if (input->ndim == 0) return tg_retain(grad);
    int64_t d = tg__wrap_dim("prod_backward", dim, input->ndim);
    if (d < 0) return NULL;
    tg_tensor *g = keepdim ? tg_retain(grad) : tg_unsqueeze(grad, d);
    tg_tensor *r = keepdim ? tg_retain(result) : tg_unsqueeze(result, d);
    tg_tensor *zero = tg_eq_scalar(input, 0);
    tg_tensor *nzero = zero ? tg_sum(zero) : NULL;
    if (!g || !r || !nzero) {
        tg_release(g);
        tg_release(r);
        tg_release(zero);
        tg_release(nzero);
        return NULL;
    }
    tg_tensor *others;
    if (tg_item(nzero) == 0) {
        others = tg_div(r, input);
    } else {
        tg_tensor *safe = tg_where_scalar_self(zero, 1, input);
        tg_tensor *by_div = tg_div(r, safe);
        tg_tensor *count = tg_sum(zero, .dim = TG_INTS(d), .keepdim = true);
        tg_tensor *only_one = tg__then(count, tg_eq_scalar(count, 1));
        tg_tensor *rest = tg_prod_dim(safe, d, .keepdim = true);
        tg_tensor *at_zero = tg__then2(only_one, rest, tg_where_scalar_other(only_one, rest, 0));
        others = tg__then2(at_zero, by_div, tg_where(zero, at_zero, by_div));
        tg_release(safe);
    }
    tg_tensor *out = tg_mul(g, others);
    tg_release(others);
    tg_release(g);
    tg_release(r);
    tg_release(zero);
    tg_release(nzero);
    return out;
}

/* ------------------------------------------------------------------ pointwise */

/* -1, 0 or 1 in self's dtype ((self > 0) - (self < 0); NaN gives 0); bool is its own sign.
 * The comparisons are not differentiable, so neither is sign. */
tg_tensor *tg__composite_sign(tg_tensor *self)
{
    if (self->dtype == TG_BOOL) return tg_clone(self);
    tg_tensor *pos = tg_gt_scalar(self, 0), *neg = tg_lt_scalar(self, 0);
    tg_tensor *p = pos ? tg_to(pos, self->dtype) : NULL, *n = neg ? tg_to(neg, self->dtype) : NULL;
    tg_release(pos);
    tg_release(neg);
    return tg__then2(p, n, tg_sub(p, n));
}

/* grad where the bounds hold (min <= self <= max), else 0. */
static tg_tensor *where_mask(tg_tensor *mask, tg_tensor *grad, bool grad_where_true)
{
    tg_tensor *r = grad_where_true ? tg_where_scalar_other(mask, grad, 0)
                                   : tg_where_scalar_self(mask, 0, grad);
    return tg__then(mask, r);
}

static tg_tensor *both(tg_tensor *a, tg_tensor *b)
{
    return tg__then2(a, b, tg_mul(a, b)); /* logical and of two bool tensors */
}

tg_tensor *tg__composite_clamp_backward(tg_tensor *grad, tg_tensor *self, tg_opt_float min,
                                        tg_opt_float max)
{
    if (!tg_is_none_float(min) && !tg_is_none_float(max))
        return where_mask(both(tg_ge_scalar(self, min), tg_le_scalar(self, max)), grad, true);
    if (!tg_is_none_float(min)) return where_mask(tg_ge_scalar(self, min), grad, true);
    if (!tg_is_none_float(max)) return where_mask(tg_le_scalar(self, max), grad, true);
    return tg_retain(grad);
}

tg_tensor *tg__composite_clamp_backward_tensor(tg_tensor *grad, tg_tensor *self, tg_tensor *min,
                                               tg_tensor *max)
{
    if (min && max) return where_mask(both(tg_ge(self, min), tg_le(self, max)), grad, true);
    if (min) return where_mask(tg_ge(self, min), grad, true);
    if (max) return where_mask(tg_le(self, max), grad, true);
    return tg_retain(grad);
}

/* min's gradient: where min was the result, i.e. self < min and (with max) min < max. */
tg_tensor *tg__composite_clamp_backward_min(tg_tensor *grad, tg_tensor *self, tg_tensor *min,
                                            tg_tensor *max)
{
    if (!min) return tg_zeros_like(grad);
    if (max) return where_mask(both(tg_lt(self, min), tg_lt(min, max)), grad, true);
    return where_mask(tg_lt(self, min), grad, true);
}

/* max's gradient: where max was the result, i.e. self > max, or max < min (max wins then). */
tg_tensor *tg__composite_clamp_backward_max(tg_tensor *grad, tg_tensor *self, tg_tensor *min,
                                            tg_tensor *max)
{
    if (!max) return tg_zeros_like(grad);
    if (min) return where_mask(both(tg_le(self, max), tg_ge(max, min)), grad, false);
    return where_mask(tg_gt(self, max), grad, true);
}

/* div with a rounding mode (trunc, floor) is piecewise constant: zero gradients. */
tg_tensor *tg__composite_div_tensor_self_backward(tg_tensor *grad, tg_tensor *other,
                                                  const char *rounding_mode)
{
    if (rounding_mode) return tg_zeros_like(grad);
    return tg_div(grad, other);
}

/* -grad * self / other^2, computed as PyTorch does: -grad * ((self / other) / other). */
tg_tensor *tg__composite_div_tensor_other_backward(tg_tensor *grad, tg_tensor *self,
                                                   tg_tensor *other, const char *rounding_mode)
{
    if (rounding_mode) return tg_zeros_like(grad);
    tg_tensor *q = tg_div(self, other);
    q = tg__then(q, tg_div(q, other));
    tg_tensor *ng = tg_neg(grad);
    return tg__then2(q, ng, tg_mul(ng, q));
}

/* grad_output * mask * scale (mask is native_dropout's bool mask). */
tg_tensor *tg__composite_native_dropout_backward(tg_tensor *grad_output, tg_tensor *mask,
                                                 double scale)
{
    tg_tensor *m = tg_mul(grad_output, mask);
    return tg__then(m, tg_mul_scalar(m, scale));
}
