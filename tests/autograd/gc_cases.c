/* The gradcheck table: one or more cases per differentiable operator (gradcheck.h).
 *
 * Each case is a small function of its inputs x[] that calls the operator and returns its
 * outputs in y[]. In-place operators run on a clone of x[0] (a leaf requiring grad cannot be
 * modified in place); operators that draw random numbers reseed a generator inside the
 * function, so that the finite differences see the same draw on every call. Inputs are chosen
 * away from the points where an operator is not differentiable (GC_AWAY0 for relu and abs,
 * GC_POS for log and sqrt, GC_DISTINCT for max and min, which would otherwise tie). */
#include "gradcheck.h"

#define GC_FN(name) static int name(tg_tensor *const *x, tg_tensor **y)

/* In-place operators: self is a clone of x[0]; the result is the op's return value. */
static int inplace_result(tg_tensor *self, tg_tensor *r, tg_tensor **y)
{
    tg_release(self);
    y[0] = r;
    return 1;
}

/* ------------------------------------------------------------------ fills */

GC_FN(f_fill_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_fill_(s, 2.5), y);
}
GC_FN(f_zero_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_zero_(s), y);
}
/* The filled tensor times x[1]: the gradient reaches x[1] only. */
GC_FN(f_fill_mul)
{
    tg_tensor *s = tg_clone(x[0]);
    tg_release(tg_fill_(s, 1.5));
    y[0] = tg_mul(s, x[1]);
    tg_release(s);
    return 1;
}
GC_FN(f_uniform_)
{
    tg_generator *g = tg_generator_new(7);
    tg_tensor *s = tg_clone(x[0]);
    int n = inplace_result(s, tg_uniform_(s, .from = -2, .to = 2, .generator = g), y);
    tg_generator_free(g);
    return n;
}
GC_FN(f_normal_)
{
    tg_generator *g = tg_generator_new(7);
    tg_tensor *s = tg_clone(x[0]);
    int n = inplace_result(s, tg_normal_(s, .mean = 1, .std = 2, .generator = g), y);
    tg_generator_free(g);
    return n;
}
GC_FN(f_random_)
{
    tg_generator *g = tg_generator_new(7);
    tg_tensor *s = tg_clone(x[0]);
    int n = inplace_result(s, tg_random_(s, 0, TG_OPT_INT(10), .generator = g), y);
    tg_generator_free(g);
    return n;
}
/* *_like factories read only metadata: their result does not require grad. */
GC_FN(f_zeros_like)
{
    y[0] = tg_zeros_like(x[0]);
    y[1] = tg_add(x[0], y[0]);
    return 2;
}
GC_FN(f_ones_like)
{
    y[0] = tg_ones_like(x[0]);
    return 1;
}
GC_FN(f_empty_like)
{
    tg_tensor *e = tg_empty_like(x[0]);
    y[0] = tg_mul_scalar(x[0], 2);
    y[1] = tg_fill_(e, 1);
    tg_release(e);
    return 2;
}
GC_FN(f_full_like)
{
    y[0] = tg_full_like(x[0], 3);
    return 1;
}
GC_FN(f_rand_like)
{
    y[0] = tg_mul_scalar(x[0], 1);
    tg_tensor *r = tg_rand_like(x[0]);
    y[1] = tg_fill_(r, 0);
    tg_release(r);
    return 2;
}
GC_FN(f_randn_like)
{
    y[0] = tg_mul_scalar(x[0], 1);
    tg_tensor *r = tg_randn_like(x[0]);
    y[1] = tg_fill_(r, 0);
    tg_release(r);
    return 2;
}
GC_FN(f_randint_like)
{
    y[0] = tg_mul_scalar(x[0], 1);
    tg_tensor *r = tg_randint_like(x[0], 5);
    y[1] = tg_fill_(r, 0);
    tg_release(r);
    return 2;
}
GC_FN(f_randint_like_low)
{
    y[0] = tg_mul_scalar(x[0], 1);
    tg_tensor *r = tg_randint_like_low(x[0], 1, 5);
    y[1] = tg_fill_(r, 0);
    tg_release(r);
    return 2;
}

/* ------------------------------------------------------------------ binary arithmetic */

GC_FN(f_add)
{
    y[0] = tg_add(x[0], x[1]);
    return 1;
}
GC_FN(f_add_alpha)
{
    y[0] = tg_add(x[0], x[1], .alpha = 2);
    return 1;
}
GC_FN(f_add_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_add_(s, x[1], .alpha = 0.5), y);
}
GC_FN(f_add_scalar)
{
    y[0] = tg_add_scalar(x[0], 1.5, .alpha = 2);
    return 1;
}
GC_FN(f_add_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_add_scalar_(s, -1), y);
}
GC_FN(f_sub)
{
    y[0] = tg_sub(x[0], x[1]);
    return 1;
}
GC_FN(f_sub_alpha)
{
    y[0] = tg_sub(x[0], x[1], .alpha = 3);
    return 1;
}
GC_FN(f_sub_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_sub_(s, x[1], .alpha = 2), y);
}
GC_FN(f_sub_scalar)
{
    y[0] = tg_sub_scalar(x[0], 1.5, .alpha = 2);
    return 1;
}
GC_FN(f_sub_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_sub_scalar_(s, 4), y);
}
GC_FN(f_mul)
{
    y[0] = tg_mul(x[0], x[1]);
    return 1;
}
/* The same tensor on both sides: the gradients of self and other add up (2 x). */
GC_FN(f_mul_self)
{
    y[0] = tg_mul(x[0], x[0]);
    return 1;
}
GC_FN(f_mul_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_mul_(s, x[1]), y);
}
GC_FN(f_mul_scalar)
{
    y[0] = tg_mul_scalar(x[0], -2.5);
    return 1;
}
GC_FN(f_mul_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_mul_scalar_(s, 3), y);
}
GC_FN(f_div)
{
    y[0] = tg_div(x[0], x[1]);
    return 1;
}
GC_FN(f_div_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_div_(s, x[1]), y);
}
GC_FN(f_div_trunc)
{
    y[0] = tg_div_mode(x[0], x[1], "trunc");
    return 1;
}
GC_FN(f_div_floor)
{
    y[0] = tg_div_mode(x[0], x[1], "floor");
    return 1;
}
GC_FN(f_div_none)
{
    y[0] = tg_div_mode(x[0], x[1], NULL);
    return 1;
}
GC_FN(f_div_mode_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_div_mode_(s, x[1], NULL), y);
}
GC_FN(f_div_mode_floor_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_div_mode_(s, x[1], "floor"), y);
}
GC_FN(f_div_scalar)
{
    y[0] = tg_div_scalar(x[0], 4);
    return 1;
}
GC_FN(f_div_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_div_scalar_(s, -0.5), y);
}
GC_FN(f_pow)
{
    y[0] = tg_pow(x[0], x[1]);
    return 1;
}
GC_FN(f_pow_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_pow_(s, x[1]), y);
}
GC_FN(f_pow_scalar)
{
    y[0] = tg_pow_scalar(x[0], 2.5);
    return 1;
}
GC_FN(f_pow_scalar_3)
{
    y[0] = tg_pow_scalar(x[0], 3);
    return 1;
}
GC_FN(f_pow_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_pow_scalar_(s, -1.5), y);
}
GC_FN(f_pow_scalar_self)
{
    y[0] = tg_pow_scalar_self(1.7, x[0]);
    return 1;
}
GC_FN(f_maximum)
{
    y[0] = tg_maximum(x[0], x[1]);
    return 1;
}
GC_FN(f_minimum)
{
    y[0] = tg_minimum(x[0], x[1]);
    return 1;
}
/* Every element ties: each side gets half the gradient (the central difference agrees). */
GC_FN(f_maximum_tie)
{
    y[0] = tg_maximum(x[0], x[0]);
    return 1;
}
GC_FN(f_minimum_tie)
{
    y[0] = tg_minimum(x[0], x[0]);
    return 1;
}

/* ------------------------------------------------------------------ comparisons */
/* The bool results are not differentiable; the in-place forms on a floating self are, with a
 * zero gradient. */
GC_FN(f_eq)
{
    y[0] = tg_eq(x[0], x[1]);
    y[1] = tg_add(x[0], x[1]);
    return 2;
}
GC_FN(f_ne)
{
    y[0] = tg_ne(x[0], x[1]);
    y[1] = tg_add(x[0], x[1]);
    return 2;
}
GC_FN(f_lt)
{
    y[0] = tg_lt(x[0], x[1]);
    y[1] = tg_add(x[0], x[1]);
    return 2;
}
GC_FN(f_le)
{
    y[0] = tg_le(x[0], x[1]);
    y[1] = tg_add(x[0], x[1]);
    return 2;
}
GC_FN(f_gt)
{
    y[0] = tg_gt(x[0], x[1]);
    y[1] = tg_add(x[0], x[1]);
    return 2;
}
GC_FN(f_ge)
{
    y[0] = tg_ge(x[0], x[1]);
    y[1] = tg_add(x[0], x[1]);
    return 2;
}
GC_FN(f_eq_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_eq_(s, x[1]), y);
}
GC_FN(f_ne_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_ne_(s, x[1]), y);
}
GC_FN(f_lt_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_lt_(s, x[1]), y);
}
GC_FN(f_le_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_le_(s, x[1]), y);
}
GC_FN(f_gt_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_gt_(s, x[1]), y);
}
GC_FN(f_ge_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_ge_(s, x[1]), y);
}
GC_FN(f_gt_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_gt_scalar_(s, 0), y);
}

/* ------------------------------------------------------------------ selection, clamping */

GC_FN(f_where)
{
    y[0] = tg_where(x[0], x[1], x[2]);
    return 1;
}
GC_FN(f_where_scalar_self)
{
    y[0] = tg_where_scalar_self(x[0], 2, x[1]);
    return 1;
}
GC_FN(f_where_scalar_other)
{
    y[0] = tg_where_scalar_other(x[0], x[1], -2);
    return 1;
}
GC_FN(f_clamp)
{
    y[0] = tg_clamp(x[0], .min = TG_SOME(-0.3), .max = TG_SOME(0.4));
    return 1;
}
GC_FN(f_clamp_min)
{
    y[0] = tg_clamp(x[0], .min = TG_SOME(0.1));
    return 1;
}
GC_FN(f_clamp_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_clamp_(s, .max = TG_SOME(0.2)), y);
}
/* min = x[1] - 0.5 and max = x[2] + 0.5 (so that min < max mostly), both differentiated. */
GC_FN(f_clamp_tensor)
{
    tg_scope_begin();
    tg_tensor *lo = tg_sub_scalar(x[1], 0.5), *hi = tg_add_scalar(x[2], 0.5);
    y[0] = tg_scope_keep(tg_clamp_tensor(x[0], .min = lo, .max = hi));
    tg_scope_end();
    return 1;
}
GC_FN(f_clamp_tensor_max)
{
    y[0] = tg_clamp_tensor(x[0], .max = x[1]);
    return 1;
}
GC_FN(f_clamp_tensor_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_clamp_tensor_(s, .min = x[1]), y);
}

/* ------------------------------------------------------------------ unary */

GC_FN(f_neg)
{
    y[0] = tg_neg(x[0]);
    return 1;
}
GC_FN(f_abs)
{
    y[0] = tg_abs(x[0]);
    return 1;
}
GC_FN(f_exp)
{
    y[0] = tg_exp(x[0]);
    return 1;
}
GC_FN(f_log)
{
    y[0] = tg_log(x[0]);
    return 1;
}
GC_FN(f_sqrt)
{
    y[0] = tg_sqrt(x[0]);
    return 1;
}
GC_FN(f_rsqrt)
{
    y[0] = tg_rsqrt(x[0]);
    return 1;
}
GC_FN(f_sin)
{
    y[0] = tg_sin(x[0]);
    return 1;
}
GC_FN(f_cos)
{
    y[0] = tg_cos(x[0]);
    return 1;
}
GC_FN(f_tanh)
{
    y[0] = tg_tanh(x[0]);
    return 1;
}
GC_FN(f_sigmoid)
{
    y[0] = tg_sigmoid(x[0]);
    return 1;
}
GC_FN(f_relu)
{
    y[0] = tg_relu(x[0]);
    return 1;
}
GC_FN(f_sign)
{
    y[0] = tg_sign(x[0]);
    y[1] = tg_mul(x[0], y[0]);
    return 2;
}
/* In place: clone, apply, return the clone. */
static int unary_(tg_tensor *const *x, tg_tensor **y, tg_tensor *(*op_)(tg_tensor *))
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, op_(s), y);
}
GC_FN(f_neg_) { return unary_(x, y, tg_neg_); }
GC_FN(f_abs_) { return unary_(x, y, tg_abs_); }
GC_FN(f_exp_) { return unary_(x, y, tg_exp_); }
GC_FN(f_log_) { return unary_(x, y, tg_log_); }
GC_FN(f_sqrt_) { return unary_(x, y, tg_sqrt_); }
GC_FN(f_rsqrt_) { return unary_(x, y, tg_rsqrt_); }
GC_FN(f_sin_) { return unary_(x, y, tg_sin_); }
GC_FN(f_cos_) { return unary_(x, y, tg_cos_); }
GC_FN(f_tanh_) { return unary_(x, y, tg_tanh_); }
GC_FN(f_sigmoid_) { return unary_(x, y, tg_sigmoid_); }
GC_FN(f_relu_) { return unary_(x, y, tg_relu_); }
/* Two in-place ops in a row on one clone: sin_ saves its input (a copy of the values before
 * the op), exp_ its result; neither is modified after being saved. */
GC_FN(f_sin_exp_)
{
    tg_tensor *s = tg_clone(x[0]);
    tg_release(tg_sin_(s));
    return inplace_result(s, tg_exp_(s), y);
}
/* exp_ saves its result, which tanh_ then overwrites: backward must refuse (PyTorch does). */
GC_FN(f_exp_tanh_)
{
    tg_tensor *s = tg_clone(x[0]);
    tg_release(tg_exp_(s));
    return inplace_result(s, tg_tanh_(s), y);
}

/* ------------------------------------------------------------------ reductions */

GC_FN(f_sum_all)
{
    y[0] = tg_sum(x[0]);
    return 1;
}
GC_FN(f_sum_dim1_keep)
{
    y[0] = tg_sum(x[0], .dim = TG_INTS(1), .keepdim = true);
    return 1;
}
GC_FN(f_sum_dims02)
{
    y[0] = tg_sum(x[0], .dim = TG_INTS(0, -1));
    return 1;
}
GC_FN(f_mean_all)
{
    y[0] = tg_mean(x[0]);
    return 1;
}
GC_FN(f_mean_dim0_keep)
{
    y[0] = tg_mean(x[0], .dim = TG_INTS(0), .keepdim = true);
    return 1;
}
GC_FN(f_mean_dims)
{
    y[0] = tg_mean(x[0], .dim = TG_INTS(-1, 1));
    return 1;
}
GC_FN(f_prod_all)
{
    y[0] = tg_prod(x[0]);
    return 1;
}
GC_FN(f_prod_dim)
{
    y[0] = tg_prod_dim(x[0], 1);
    return 1;
}
GC_FN(f_prod_dim_keep)
{
    y[0] = tg_prod_dim(x[0], 0, .keepdim = true);
    return 1;
}
GC_FN(f_amax_dim)
{
    y[0] = tg_amax(x[0], .dim = TG_INTS(1));
    return 1;
}
GC_FN(f_amax_all)
{
    y[0] = tg_amax(x[0]);
    return 1;
}
GC_FN(f_amin_dims_keep)
{
    y[0] = tg_amin(x[0], .dim = TG_INTS(0, 2), .keepdim = true);
    return 1;
}
GC_FN(f_amin_all)
{
    y[0] = tg_amin(x[0]);
    return 1;
}
GC_FN(f_max_all)
{
    y[0] = tg_max(x[0]);
    return 1;
}
GC_FN(f_min_all)
{
    y[0] = tg_min(x[0]);
    return 1;
}
GC_FN(f_max_dim)
{
    tg_values_indices r = tg_max_dim(x[0], 1);
    y[0] = r.values;
    y[1] = r.indices;
    return 2;
}
GC_FN(f_max_dim_keep)
{
    tg_values_indices r = tg_max_dim(x[0], 0, .keepdim = true);
    y[0] = r.values;
    y[1] = r.indices;
    return 2;
}
GC_FN(f_min_dim)
{
    tg_values_indices r = tg_min_dim(x[0], -1);
    y[0] = r.values;
    y[1] = r.indices;
    return 2;
}
GC_FN(f_var_dim)
{
    y[0] = tg_var(x[0], .dim = TG_INTS(1));
    return 1;
}
GC_FN(f_var_all_c0)
{
    y[0] = tg_var(x[0], .correction = TG_SOME(0));
    return 1;
}
GC_FN(f_var_keep)
{
    y[0] = tg_var(x[0], .dim = TG_INTS(0), .keepdim = true);
    return 1;
}
GC_FN(f_std_dim)
{
    y[0] = tg_std(x[0], .dim = TG_INTS(-1));
    return 1;
}
GC_FN(f_std_all)
{
    y[0] = tg_std(x[0]);
    return 1;
}

/* ------------------------------------------------------------------ matrix products */

GC_FN(f_mm)
{
    y[0] = tg_mm(x[0], x[1]);
    return 1;
}
GC_FN(f_bmm)
{
    y[0] = tg_bmm(x[0], x[1]);
    return 1;
}
GC_FN(f_addmm)
{
    y[0] = tg_addmm(x[0], x[1], x[2]);
    return 1;
}
GC_FN(f_addmm_ab)
{
    y[0] = tg_addmm(x[0], x[1], x[2], .beta = 0.5, .alpha = -2);
    return 1;
}
GC_FN(f_addmm_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_addmm_(s, x[1], x[2], .beta = 2, .alpha = 0.5), y);
}
GC_FN(f_matmul)
{
    y[0] = tg_matmul(x[0], x[1]);
    return 1;
}

/* ------------------------------------------------------------------ views and shapes */

GC_FN(f_as_strided)
{
    y[0] = tg_as_strided(x[0], TG_INTS(2, 2), TG_INTS(1, 2));
    return 1;
}
GC_FN(f_view)
{
    y[0] = tg_view(x[0], TG_INTS(2, 6));
    return 1;
}
GC_FN(f_view_flat)
{
    y[0] = tg_view(x[0], TG_INTS(-1));
    return 1;
}
GC_FN(f_reshape)
{
    y[0] = tg_reshape(x[0], TG_INTS(6, 2));
    return 1;
}
GC_FN(f_transpose)
{
    y[0] = tg_transpose(x[0], 0, 2);
    return 1;
}
GC_FN(f_t)
{
    y[0] = tg_t(x[0]);
    return 1;
}
GC_FN(f_permute)
{
    y[0] = tg_permute(x[0], TG_INTS(2, 0, 1));
    return 1;
}
GC_FN(f_squeeze)
{
    y[0] = tg_squeeze(x[0]);
    return 1;
}
GC_FN(f_squeeze_dim)
{
    y[0] = tg_squeeze_dim(x[0], 1);
    return 1;
}
GC_FN(f_unsqueeze)
{
    y[0] = tg_unsqueeze(x[0], 1);
    return 1;
}
GC_FN(f_unsqueeze_last)
{
    y[0] = tg_unsqueeze(x[0], -1);
    return 1;
}
GC_FN(f_expand)
{
    y[0] = tg_expand(x[0], TG_INTS(2, 3, 4));
    return 1;
}
/* An expanded view, then an op that reads every element. */
GC_FN(f_expand_mul)
{
    tg_tensor *e = tg_expand(x[0], TG_INTS(3, 4));
    y[0] = tg_mul(e, x[1]);
    tg_release(e);
    return 1;
}
GC_FN(f_slice)
{
    y[0] = tg_slice(x[0], .dim = 0, .start = TG_SOME(1), .end = TG_SOME(5), .step = 2);
    return 1;
}
GC_FN(f_slice_neg)
{
    y[0] = tg_slice(x[0], .dim = -1, .start = TG_SOME(-3));
    return 1;
}
GC_FN(f_select)
{
    y[0] = tg_select(x[0], 1, 2);
    return 1;
}
GC_FN(f_select_neg)
{
    y[0] = tg_select(x[0], 0, -1);
    return 1;
}
GC_FN(f_flatten)
{
    y[0] = tg_flatten(x[0], .start_dim = 1);
    return 1;
}
GC_FN(f_contiguous)
{
    y[0] = tg_contiguous(x[0]);
    return 1;
}
GC_FN(f_slice_backward)
{
    y[0] = tg_slice_backward(x[0], TG_INTS(5, 4), 0, TG_OPT_INT(1), TG_OPT_INT(5), 2);
    return 1;
}
GC_FN(f_select_backward)
{
    y[0] = tg_select_backward(x[0], TG_INTS(3, 4), 1, 2);
    return 1;
}
GC_FN(f_cat)
{
    y[0] = tg_cat(TG_TENSORS(x[0], x[1]), .dim = 1);
    return 1;
}
GC_FN(f_stack)
{
    y[0] = tg_stack(TG_TENSORS(x[0], x[1]));
    return 1;
}
/* A view of a non-leaf modified in place, then read through its base. */
GC_FN(f_view_inplace_base)
{
    tg_tensor *s = tg_clone(x[0]);
    tg_tensor *v = tg_select(s, 0, 1);
    tg_release(tg_mul_(v, x[1]));
    tg_release(v);
    y[0] = s;
    return 1;
}

/* ------------------------------------------------------------------ copies and conversions */

GC_FN(f_clone)
{
    y[0] = tg_clone(x[0]);
    return 1;
}
GC_FN(f_to_copy)
{
    y[0] = tg__to_copy(x[0]);
    return 1;
}
GC_FN(f_to_copy_f32)
{
    y[0] = tg__to_copy(x[0], .dtype = TG_FLOAT32);
    return 1;
}
GC_FN(f_to_f32)
{
    y[0] = tg_to(x[0], TG_FLOAT32);
    return 1;
}
GC_FN(f_to_copy_flag)
{
    y[0] = tg_to(x[0], TG_FLOAT64, .copy = true);
    return 1;
}
GC_FN(f_copy_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace_result(s, tg_copy_(s, x[1]), y);
}

/* ------------------------------------------------------------------ softmax */

GC_FN(f__softmax)
{
    y[0] = tg__softmax(x[0], 1, false);
    return 1;
}
GC_FN(f__softmax_d0)
{
    y[0] = tg__softmax(x[0], 0, false);
    return 1;
}
GC_FN(f__log_softmax)
{
    y[0] = tg__log_softmax(x[0], -1, false);
    return 1;
}
GC_FN(f_softmax)
{
    y[0] = tg_softmax(x[0], 1);
    return 1;
}
GC_FN(f_log_softmax)
{
    y[0] = tg_log_softmax(x[0], 1);
    return 1;
}
GC_FN(f_softmax_bwd)
{
    y[0] = tg__softmax_backward_data(x[0], x[1], 1, TG_FLOAT64);
    return 1;
}
GC_FN(f_log_softmax_bwd)
{
    y[0] = tg__log_softmax_backward_data(x[0], x[1], 1, TG_FLOAT64);
    return 1;
}
GC_FN(f_threshold_backward)
{
    y[0] = tg_threshold_backward(x[0], x[1], 0);
    return 1;
}
GC_FN(f_threshold_backward_05)
{
    y[0] = tg_threshold_backward(x[0], x[1], 0.5);
    return 1;
}

/* ------------------------------------------------------------------ layers and losses */

GC_FN(f_linear)
{
    y[0] = tg_linear(x[0], x[1], .bias = x[2]);
    return 1;
}
GC_FN(f_linear_nobias)
{
    y[0] = tg_linear(x[0], x[1]);
    return 1;
}
GC_FN(f_mse_loss)
{
    y[0] = tg_mse_loss(x[0], x[1]);
    return 1;
}
GC_FN(f_mse_loss_sum)
{
    y[0] = tg_mse_loss(x[0], x[1], .reduction = 2);
    return 1;
}
GC_FN(f_mse_loss_none)
{
    y[0] = tg_mse_loss(x[0], x[1], .reduction = 0);
    return 1;
}
GC_FN(f_nll_loss)
{
    y[0] = tg_nll_loss(x[0], x[1]);
    return 1;
}
GC_FN(f_nll_loss_w)
{
    y[0] = tg_nll_loss(x[0], x[1], .weight = x[2], .ignore_index = 1);
    return 1;
}
GC_FN(f_nll_loss_none)
{
    y[0] = tg_nll_loss(x[0], x[1], .reduction = 0);
    return 1;
}
GC_FN(f_nll_loss_forward)
{
    tg_output_total_weight r = tg_nll_loss_forward(x[0], x[1], NULL, 1, -100);
    y[0] = r.output;
    y[1] = r.total_weight;
    return 2;
}
GC_FN(f_nll_loss_forward_sum_w)
{
    tg_output_total_weight r = tg_nll_loss_forward(x[0], x[1], x[2], 2, 3);
    y[0] = r.output;
    y[1] = r.total_weight;
    return 2;
}
/* total_weight is computed from the same target (no grad): its mean divides by it. */
GC_FN(f_nll_loss_backward)
{
    tg_output_total_weight r = { NULL, NULL };
    TG_NO_GRAD {
        r = tg_nll_loss_forward(x[1], x[2], NULL, 1, -100);
    }
    y[0] = tg_nll_loss_backward(x[0], x[1], x[2], NULL, 1, -100, r.total_weight);
    tg_release(r.output);
    tg_release(r.total_weight);
    return 1;
}
GC_FN(f_cross_entropy)
{
    y[0] = tg_cross_entropy(x[0], x[1]);
    return 1;
}
GC_FN(f_cross_entropy_ls)
{
    y[0] = tg_cross_entropy(x[0], x[1], .label_smoothing = 0.1, .reduction = 2);
    return 1;
}
GC_FN(f_cross_entropy_probs)
{
    y[0] = tg_cross_entropy(x[0], x[1]);
    return 1;
}
/* Dropout draws from the default generator: reseed so every call draws the same mask. */
GC_FN(f_dropout)
{
    tg_manual_seed(11);
    y[0] = tg_dropout(x[0], 0.4, true);
    return 1;
}
GC_FN(f_dropout_eval)
{
    y[0] = tg_dropout(x[0], 0.4, false);
    return 1;
}
GC_FN(f_native_dropout)
{
    tg_manual_seed(11);
    tg_tensors2 r = tg_native_dropout(x[0], 0.3, TG_OPT_BOOL(true));
    y[0] = r.r0;
    y[1] = r.r1;
    return 2;
}
GC_FN(f_native_dropout_backward)
{
    tg_tensor *mask = tg_gt_scalar(x[1], 0);
    y[0] = tg_native_dropout_backward(x[0], mask, 2.0);
    tg_release(mask);
    return 1;
}

/* ------------------------------------------------------------------ helpers (composites) */

GC_FN(f_sum_to_size)
{
    y[0] = tg_sum_to_size(x[0], TG_INTS(3, 1));
    return 1;
}
GC_FN(f_sum_backward)
{
    y[0] = tg_sum_backward(x[0], TG_INTS(3, 4), TG_INTS(1), false);
    return 1;
}
GC_FN(f_permute_backward)
{
    y[0] = tg_permute_backward(x[0], TG_INTS(2, 0, 1));
    return 1;
}
GC_FN(f_var_backward)
{
    y[0] = tg_var_backward(x[0], x[1], TG_INTS(1), TG_NONE_INT, false);
    return 1;
}

/* ------------------------------------------------------------------ the table */

static const gc_case cases[] = {
    /* fills: the old values get no gradient */
    { "fill_.Scalar", "fill a clone", f_fill_, { REAL(3, 4) } },
    { "fill_.Scalar", "filled clone times x1", f_fill_mul, { REAL(3, 4), REAL(3, 4) } },
    { "zero_", "zero a clone", f_zero_, { REAL(2, 3) } },
    { "uniform_", "seeded generator", f_uniform_, { REAL(3, 4) } },
    { "normal_", "seeded generator", f_normal_, { REAL(3, 4) } },
    { "random_.from", "seeded generator", f_random_, { REAL(3, 4) } },
    { "empty_like", "result does not require grad", f_empty_like, { REAL(2, 3) } },
    { "zeros_like", "result does not require grad", f_zeros_like, { REAL(2, 3) } },
    { "ones_like", "result does not require grad", f_ones_like, { REAL(2, 3) } },
    { "full_like", "result does not require grad", f_full_like, { REAL(2, 3) } },
    { "rand_like", "result does not require grad", f_rand_like, { REAL(2, 3) } },
    { "randn_like", "result does not require grad", f_randn_like, { REAL(2, 3) } },
    { "randint_like", "result does not require grad", f_randint_like, { REAL(2, 3) } },
    { "randint_like.low_dtype",
      "result does not require grad",
      f_randint_like_low,
      { REAL(2, 3) } },

    /* binary arithmetic */
    { "add.Tensor", "broadcast (3,1) + (1,4)", f_add, { REAL(3, 1), REAL(1, 4) } },
    { "add.Tensor", "transposed + strided, alpha 2", f_add_alpha, { REAL_T(3, 4), REAL_S(3, 4) } },
    { "add.Tensor", "zero-dim + (2,3)", f_add, { REAL0, REAL(2, 3) } },
    { "add_.Tensor", "(3,4) += (1,4) * 0.5", f_add_, { REAL(3, 4), REAL(1, 4) } },
    { "add.Scalar", "x + 1.5 * 2", f_add_scalar, { REAL_T(3, 4) } },
    { "add_.Scalar", "x -= 1", f_add_scalar_, { REAL(3, 4) } },
    { "sub.Tensor", "broadcast (3,1) - (1,4)", f_sub, { REAL(3, 1), REAL(1, 4) } },
    { "sub.Tensor", "strided - transposed, alpha 3", f_sub_alpha, { REAL_S(4, 3), REAL_T(4, 3) } },
    { "sub_.Tensor", "(2,3,4) -= (3,1) * 2", f_sub_, { REAL(2, 3, 4), REAL(3, 1) } },
    { "sub.Scalar", "x - 1.5 * 2", f_sub_scalar, { REAL(3, 4) } },
    { "sub_.Scalar", "x -= 4", f_sub_scalar_, { REAL(3, 4) } },
    { "mul.Tensor",
      "broadcast (3,1) * (1,4)",
      f_mul,
      { REAL(3, 1), REAL(1, 4) },
      .gradgrad = true },
    { "mul.Tensor",
      "transposed * strided",
      f_mul,
      { REAL_T(3, 4), REAL_S(3, 4) },
      .gradgrad = true },
    { "mul.Tensor", "x * x", f_mul_self, { REAL(5) }, .gradgrad = true },
    { "mul_.Tensor", "(3,4) *= (3,1)", f_mul_, { REAL(3, 4), REAL(3, 1) } },
    { "mul.Scalar", "x * -2.5", f_mul_scalar, { REAL_S(2, 3) } },
    { "mul_.Scalar", "x *= 3", f_mul_scalar_, { REAL(2, 3) } },
    { "div.Tensor", "broadcast (3,1) / (1,4)", f_div, { REAL(3, 1), POS(1, 4) }, .gradgrad = true },
    { "div.Tensor",
      "transposed / strided",
      f_div,
      { REAL_T(3, 4), POS_S(3, 4) },
      .gradgrad = true },
    { "div_.Tensor", "(3,4) /= (4)", f_div_, { REAL(3, 4), POS(4) } },
    { "div.Tensor_mode", "rounding_mode None", f_div_none, { REAL(3, 1), POS(1, 4) } },
    { "div.Tensor_mode", "trunc: zero gradient", f_div_trunc, { REAL(3, 4), POS(3, 4) } },
    { "div.Tensor_mode", "floor: zero gradient", f_div_floor, { REAL(3, 4), POS(4) } },
    { "div_.Tensor_mode", "rounding_mode None", f_div_mode_, { REAL(3, 4), POS(3, 4) } },
    { "div_.Tensor_mode", "floor: zero gradient", f_div_mode_floor_, { REAL(3, 4), POS(3, 4) } },
    { "div.Scalar", "x / 4", f_div_scalar, { REAL(3, 4) } },
    { "div_.Scalar", "x /= -0.5", f_div_scalar_, { REAL(3, 4) } },
    { "pow.Tensor_Tensor",
      "broadcast (3,1) ** (1,4)",
      f_pow,
      { POS(3, 1), REAL(1, 4) },
      .gradgrad = true },
    { "pow.Tensor_Tensor", "transposed ** strided", f_pow, { POS_T(3, 4), REAL_S(3, 4) } },
    { "pow_.Tensor", "(3,4) **= (4)", f_pow_, { POS(3, 4), REAL(4) } },
    { "pow.Tensor_Scalar", "x ** 2.5", f_pow_scalar, { POS(3, 4) }, .gradgrad = true },
    { "pow.Tensor_Scalar", "x ** 3, negative x", f_pow_scalar_3, { REAL(3, 4) }, .gradgrad = true },
    { "pow_.Scalar", "x **= -1.5", f_pow_scalar_, { POS(3, 4) } },
    { "pow.Scalar", "1.7 ** x", f_pow_scalar_self, { REAL(3, 4) } },
    { "maximum", "broadcast (3,1), (1,4)", f_maximum, { REAL(3, 1), REAL(1, 4) } },
    { "maximum", "ties: maximum(x, x)", f_maximum_tie, { REAL(3, 4) } },
    { "minimum", "transposed, strided", f_minimum, { REAL_T(3, 4), REAL_S(3, 4) } },
    { "minimum", "ties: minimum(x, x)", f_minimum_tie, { REAL(3, 4) } },

    /* comparisons */
    { "eq.Tensor", "bool result", f_eq, { REAL(3, 4), REAL(3, 4) } },
    { "ne.Tensor", "bool result", f_ne, { REAL(3, 4), REAL(3, 4) } },
    { "lt.Tensor", "bool result", f_lt, { REAL(3, 1), REAL(1, 4) } },
    { "le.Tensor", "bool result", f_le, { REAL(3, 4), REAL(4) } },
    { "gt.Tensor", "bool result", f_gt, { REAL(3, 4), REAL(3, 4) } },
    { "ge.Tensor", "bool result", f_ge, { REAL(3, 4), REAL(3, 4) } },
    { "eq_.Tensor", "zero gradient", f_eq_, { REAL(3, 4), REAL(3, 4) } },
    { "ne_.Tensor", "zero gradient", f_ne_, { REAL(3, 4), REAL(3, 4) } },
    { "lt_.Tensor", "zero gradient", f_lt_, { REAL(3, 4), REAL(1, 4) } },
    { "le_.Tensor", "zero gradient", f_le_, { REAL(3, 4), REAL(3, 1) } },
    { "gt_.Tensor", "zero gradient", f_gt_, { REAL(3, 4), REAL(3, 4) } },
    { "ge_.Tensor", "zero gradient", f_ge_, { REAL(3, 4), REAL(3, 4) } },
    { "gt_.Scalar", "zero gradient", f_gt_scalar_, { REAL(3, 4) } },

    /* selection and clamping */
    { "where.self",
      "broadcast condition (3,4), (3,1), (1,4)",
      f_where,
      { MASK(3, 4), REAL(3, 1), REAL(1, 4) } },
    { "where.self", "transposed, strided", f_where, { MASK(3, 4), REAL_T(3, 4), REAL_S(3, 4) } },
    { "where.ScalarSelf", "where(c, 2, x)", f_where_scalar_self, { MASK(3, 4), REAL(3, 4) } },
    { "where.ScalarOther", "where(c, x, -2)", f_where_scalar_other, { MASK(3, 4), REAL(4) } },
    { "clamp", "[-0.3, 0.4]", f_clamp, { REAL(4, 5) } },
    { "clamp", "min 0.1, transposed", f_clamp_min, { REAL_T(4, 5) } },
    { "clamp_", "max 0.2", f_clamp_, { REAL(4, 5) } },
    { "clamp.Tensor",
      "broadcast min (3,1) and max (1,4)",
      f_clamp_tensor,
      { REAL(3, 4), REAL(3, 1), REAL(1, 4) } },
    { "clamp.Tensor", "max only", f_clamp_tensor_max, { REAL(3, 4), REAL(3, 4) } },
    { "clamp_.Tensor", "min only", f_clamp_tensor_, { REAL(3, 4), REAL(4) } },

    /* unary */
    { "neg", "strided", f_neg, { REAL_S(3, 4) } },
    { "neg_", "clone", f_neg_, { REAL(3, 4) } },
    { "abs", "away from 0", f_abs, { AWAY0(3, 4) } },
    { "abs_", "away from 0", f_abs_, { AWAY0(3, 4) } },
    { "exp", "contiguous", f_exp, { REAL(3, 4) }, .gradgrad = true },
    { "exp", "transposed", f_exp, { REAL_T(3, 4) }, .gradgrad = true },
    { "exp_", "clone", f_exp_, { REAL(3, 4) } },
    { "exp_", "sin_ then exp_ on one clone", f_sin_exp_, { REAL(3, 4) } },
    { "exp_",
      "exp_ then tanh_: exp_'s saved result modified",
      f_exp_tanh_,
      { REAL(3, 4) },
      .expect_error = "modified by an inplace operation" },
    { "log", "positive, strided", f_log, { POS_S(3, 4) } },
    { "log_", "positive", f_log_, { POS(3, 4) } },
    { "sqrt", "positive", f_sqrt, { POS(3, 4) } },
    { "sqrt_", "positive", f_sqrt_, { POS(3, 4) } },
    { "rsqrt", "positive, transposed", f_rsqrt, { POS_T(3, 4) } },
    { "rsqrt_", "positive", f_rsqrt_, { POS(3, 4) } },
    { "sin", "strided", f_sin, { REAL_S(3, 4) } },
    { "sin_", "clone", f_sin_, { REAL(3, 4) } },
    { "cos", "transposed", f_cos, { REAL_T(3, 4) } },
    { "cos_", "clone", f_cos_, { REAL(3, 4) } },
    { "tanh", "contiguous", f_tanh, { REAL(3, 4) }, .gradgrad = true },
    { "tanh", "strided", f_tanh, { REAL_S(3, 4) }, .gradgrad = true },
    { "tanh_", "clone", f_tanh_, { REAL(3, 4) } },
    { "sigmoid", "contiguous", f_sigmoid, { REAL(3, 4) }, .gradgrad = true },
    { "sigmoid", "transposed", f_sigmoid, { REAL_T(3, 4) }, .gradgrad = true },
    { "sigmoid_", "clone", f_sigmoid_, { REAL(3, 4) } },
    { "relu", "away from 0", f_relu, { AWAY0(3, 4) }, .gradgrad = true },
    { "relu", "away from 0, transposed", f_relu, { AWAY0_T(3, 4) } },
    { "relu_", "away from 0", f_relu_, { AWAY0(3, 4) } },
    { "sign", "zero gradient; x * sign(x) = |x|", f_sign, { AWAY0(3, 4) } },

    /* reductions */
    { "sum.dim_IntList", "everything, transposed", f_sum_all, { REAL_T(3, 4) }, .gradgrad = true },
    { "sum.dim_IntList", "dim 1, keepdim", f_sum_dim1_keep, { REAL(3, 4) }, .gradgrad = true },
    { "sum.dim_IntList", "dims (0, -1) of (2,3,4), strided", f_sum_dims02, { REAL_S(2, 3, 4) } },
    { "sum.dim_IntList", "zero-dim", f_sum_all, { REAL0 } },
    { "mean.dim", "everything", f_mean_all, { REAL(3, 4) } },
    { "mean.dim", "dim 0, keepdim, transposed", f_mean_dim0_keep, { REAL_T(3, 4) } },
    { "mean.dim", "dims (-1, 1) of (2,3,4)", f_mean_dims, { REAL(2, 3, 4) } },
    { "prod", "everything", f_prod_all, { AWAY0(2, 3) } },
    { "prod.dim_int", "dim 1", f_prod_dim, { AWAY0(3, 4) } },
    { "prod.dim_int", "dim 0, keepdim, transposed", f_prod_dim_keep, { AWAY0_T(3, 4) } },
    { "amax", "dim 1", f_amax_dim, { DISTINCT(3, 4) } },
    { "amax", "everything, transposed", f_amax_all, { DISTINCT_T(3, 4) } },
    { "amin", "dims (0, 2), keepdim", f_amin_dims_keep, { DISTINCT(2, 3, 4) } },
    { "amin", "everything", f_amin_all, { DISTINCT(3, 4) } },
    { "max", "everything", f_max_all, { DISTINCT(3, 4) } },
    { "min", "everything", f_min_all, { DISTINCT(3, 4) } },
    { "max.dim", "dim 1 (indices not differentiable)", f_max_dim, { DISTINCT(3, 4) } },
    { "max.dim", "dim 0, keepdim, transposed", f_max_dim_keep, { DISTINCT_T(3, 4) } },
    { "min.dim", "dim -1 of (2,3,4)", f_min_dim, { DISTINCT(2, 3, 4) } },
    { "var.correction", "dim 1", f_var_dim, { REAL(3, 4) } },
    { "var.correction", "everything, correction 0, transposed", f_var_all_c0, { REAL_T(3, 4) } },
    { "var.correction", "dim 0, keepdim", f_var_keep, { REAL(3, 4) } },
    { "std.correction", "dim -1", f_std_dim, { REAL(3, 4) } },
    { "std.correction", "everything, strided", f_std_all, { REAL_S(3, 4) } },

    /* matrix products */
    { "mm", "(3,4) @ (4,2)", f_mm, { REAL(3, 4), REAL(4, 2) }, .gradgrad = true },
    { "mm", "transposed @ strided", f_mm, { REAL_T(3, 4), REAL_S(4, 2) }, .gradgrad = true },
    { "bmm", "(2,3,4) @ (2,4,2), transposed", f_bmm, { REAL_T(2, 3, 4), REAL(2, 4, 2) } },
    { "addmm", "bias (2) broadcast", f_addmm, { REAL(2), REAL(3, 4), REAL(4, 2) } },
    { "addmm",
      "beta 0.5, alpha -2, transposed",
      f_addmm_ab,
      { REAL(3, 2), REAL_T(3, 4), REAL(4, 2) } },
    { "addmm_", "beta 2, alpha 0.5", f_addmm_, { REAL(3, 2), REAL(3, 4), REAL_T(4, 2) } },
    { "matmul", "vector . vector", f_matmul, { REAL(4), REAL(4) } },
    { "matmul", "matrix @ vector", f_matmul, { REAL_T(3, 4), REAL(4) } },
    { "matmul", "batched (2,3,4) @ (4,2)", f_matmul, { REAL(2, 3, 4), REAL(4, 2) } },

    /* views and shapes */
    { "as_strided",
      "not implemented: fails at backward naming it",
      f_as_strided,
      { REAL(2, 3) },
      .expect_error = "as_strided" },
    { "view", "(3,4) -> (2,6)", f_view, { REAL(3, 4) } },
    { "view", "(2,3,2) -> (-1)", f_view_flat, { REAL(2, 3, 2) } },
    { "reshape", "of a transposed input (copies)", f_reshape, { REAL_T(3, 4) } },
    { "transpose.int", "dims 0, 2", f_transpose, { REAL(2, 3, 4) } },
    { "t", "of a strided input", f_t, { REAL_S(3, 4) } },
    { "permute", "(2, 0, 1)", f_permute, { REAL_T(2, 3, 4) } },
    { "squeeze", "(3,1,4,1)", f_squeeze, { REAL(3, 1, 4, 1) } },
    { "squeeze.dim", "dim 1 of (3,1,4)", f_squeeze_dim, { REAL(3, 1, 4) } },
    { "unsqueeze", "dim 1", f_unsqueeze, { REAL(3, 4) } },
    { "unsqueeze", "dim -1, transposed", f_unsqueeze_last, { REAL_T(3, 4) } },
    { "expand", "(3,1) -> (2,3,4)", f_expand, { REAL(3, 1) } },
    { "expand", "(4) -> (3,4) times x1", f_expand_mul, { REAL(4), REAL(3, 4) } },
    { "slice.Tensor", "dim 0 [1:5:2]", f_slice, { REAL(5, 4) } },
    { "slice.Tensor", "dim -1 [-3:], transposed", f_slice_neg, { REAL_T(3, 5) } },
    { "slice.Tensor",
      "a view of a clone modified in place",
      f_view_inplace_base,
      { REAL(3, 4), REAL(4) } },
    { "select.int", "dim 1, index 2", f_select, { REAL(3, 4) } },
    { "select.int", "dim 0, index -1, strided", f_select_neg, { REAL_S(3, 4) } },
    { "flatten.using_ints", "start_dim 1", f_flatten, { REAL(2, 3, 4) } },
    { "contiguous", "of a transposed input", f_contiguous, { REAL_T(3, 4) } },
    { "slice_backward", "(2,4) into (5,4) [1:5:2]", f_slice_backward, { REAL(2, 4) } },
    { "select_backward", "(3) into (3,4) at [:, 2]", f_select_backward, { REAL(3) } },
    /* cat's Tensor[] input: one gradient per element (more cases, and split, unbind, chunk,
     * in test_gradcheck_lists.c); stack is cat of unsqueezed inputs. */
    { "cat", "dim 1", f_cat, { REAL(3, 2), REAL(3, 4) } },
    { "stack", "dim 0", f_stack, { REAL(3, 2), REAL(3, 2) } },

    /* copies and conversions */
    { "clone", "transposed", f_clone, { REAL_T(3, 4) } },
    { "_to_copy", "float64 -> float64", f_to_copy, { REAL_S(3, 4) } },
    { "_to_copy",
      "float64 -> float32 (eps 1e-3: float32 rounding)",
      f_to_copy_f32,
      { REAL(3, 4) },
      .eps = 1e-3 },
    { "to.dtype",
      "float64 -> float32 (eps 1e-3: float32 rounding)",
      f_to_f32,
      { REAL(3, 4) },
      .eps = 1e-3 },
    { "to.dtype", "copy=True", f_to_copy_flag, { REAL(3, 4) } },
    { "copy_", "(1,4) broadcast into a clone", f_copy_, { REAL(3, 4), REAL(1, 4) } },
    { "copy_", "transposed into a clone", f_copy_, { REAL(3, 4), REAL_T(3, 4) } },

    /* softmax */
    { "_softmax", "dim 1", f__softmax, { REAL(3, 5) } },
    { "_softmax", "dim 0, transposed", f__softmax_d0, { REAL_T(3, 5) } },
    { "_log_softmax", "dim -1, strided", f__log_softmax, { REAL_S(3, 5) } },
    { "softmax.int", "dim 1", f_softmax, { REAL(3, 5) }, .gradgrad = true },
    { "log_softmax.int", "dim 1", f_log_softmax, { REAL(3, 5) }, .gradgrad = true },
    { "_softmax_backward_data",
      "grad_output and output",
      f_softmax_bwd,
      { REAL(3, 4), REAL(3, 4) } },
    { "_log_softmax_backward_data",
      "grad_output and output",
      f_log_softmax_bwd,
      { REAL(3, 4), REAL(3, 4) } },
    { "threshold_backward", "threshold 0", f_threshold_backward, { REAL(3, 4), AWAY0(3, 4) } },
    { "threshold_backward",
      "threshold 0.5, transposed",
      f_threshold_backward_05,
      { REAL_T(3, 4), POS(3, 4) } },

    /* layers and losses */
    { "linear", "(5,3) x (4,3)^T + (4)", f_linear, { REAL(5, 3), REAL(4, 3), REAL(4) } },
    { "linear", "no bias, batched (2,5,3)", f_linear_nobias, { REAL(2, 5, 3), REAL_T(4, 3) } },
    { "linear",
      "1-D input (weight's gradient is an outer product)",
      f_linear,
      { REAL(3), REAL(4, 3), REAL(4) },
      .gradgrad = true },
    { "mse_loss", "mean", f_mse_loss, { REAL(3, 4), REAL(3, 4) }, .gradgrad = true },
    { "mse_loss", "sum, target broadcast", f_mse_loss_sum, { REAL(3, 4), REAL(4) } },
    { "mse_loss", "none, transposed", f_mse_loss_none, { REAL_T(3, 4), CONST(3, 4) } },
    { "nll_loss", "mean", f_nll_loss, { REAL(4, 5), INDEX(5, 4) } },
    { "nll_loss",
      "weight, ignore_index 1",
      f_nll_loss_w,
      { REAL(6, 3),
        INDEX(3, 6),
        { .used = true, .ndim = 1, .shape = { 3 }, .domain = GC_POS, .constant = true } } },
    { "nll_loss", "none", f_nll_loss_none, { REAL_T(4, 5), INDEX(5, 4) } },
    { "nll_loss_forward", "mean", f_nll_loss_forward, { REAL(4, 5), INDEX(5, 4) } },
    { "nll_loss_forward",
      "sum, weight, ignore_index 3",
      f_nll_loss_forward_sum_w,
      { REAL(6, 4),
        INDEX(4, 6),
        { .used = true, .ndim = 1, .shape = { 4 }, .domain = GC_POS, .constant = true } } },
    { "nll_loss_backward",
      "grad_output and self",
      f_nll_loss_backward,
      { REAL0, REAL(4, 5), INDEX(5, 4) } },
    { "cross_entropy_loss",
      "class indices, mean",
      f_cross_entropy,
      { REAL(4, 5), INDEX(5, 4) },
      .gradgrad = true },
    { "cross_entropy_loss",
      "label smoothing 0.1, sum",
      f_cross_entropy_ls,
      { REAL_T(4, 5), INDEX(5, 4) } },
    { "cross_entropy_loss",
      "class probabilities",
      f_cross_entropy_probs,
      { REAL(4, 5), CONST(4, 5) } },
    { "dropout", "p 0.4, train (reseeded)", f_dropout, { REAL(4, 5) } },
    { "dropout", "eval", f_dropout_eval, { REAL(4, 5) } },
    { "native_dropout", "p 0.3 (reseeded)", f_native_dropout, { REAL(4, 5) } },
    { "native_dropout_backward",
      "scale 2",
      f_native_dropout_backward,
      { REAL(4, 5), CONST(4, 5) } },

    /* helper operators the formulas call */
    { "sum_to_size", "(3,4) -> (3,1)", f_sum_to_size, { REAL(3, 4) } },
    { "sum_backward", "dim 1", f_sum_backward, { REAL(3) } },
    { "permute_backward", "(2,0,1)", f_permute_backward, { REAL(4, 2, 3) } },
    { "var_backward", "dim 1", f_var_backward, { REAL(3), REAL(3, 4) } },
};

GC_REGISTER(cases);
