/* Gradcheck cases of binary arithmetic (add, sub, mul, div, pow, maximum, minimum; Tensor and
 * Scalar forms, in place) and the comparisons (zero gradient) (gradcheck.h).
 *
 * Each case is a small function of its inputs x[] that calls the operator and returns its
 * outputs in y[] (GC_FN, gradcheck.h). In-place operators run on a clone of x[0] (a leaf requiring
 * grad cannot be modified in place); operators that draw random numbers reseed a generator
 * inside the function, so that the finite differences see the same draw on every call. Inputs
 * are chosen away from the points where an operator is not differentiable (GC_AWAY0 for relu
 * and abs, GC_POS for log and sqrt, GC_DISTINCT for max and min, which would otherwise tie). */
#include "gradcheck.h"

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
    return gc_inplace_result(s, tg_add_(s, x[1], .alpha = 0.5), y);
}
GC_FN(f_add_scalar)
{
    y[0] = tg_add_scalar(x[0], 1.5, .alpha = 2);
    return 1;
}
GC_FN(f_add_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_add_scalar_(s, -1), y);
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
    return gc_inplace_result(s, tg_sub_(s, x[1], .alpha = 2), y);
}
GC_FN(f_sub_scalar)
{
    y[0] = tg_sub_scalar(x[0], 1.5, .alpha = 2);
    return 1;
}
GC_FN(f_sub_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_sub_scalar_(s, 4), y);
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
    return gc_inplace_result(s, tg_mul_(s, x[1]), y);
}
GC_FN(f_mul_scalar)
{
    y[0] = tg_mul_scalar(x[0], -2.5);
    return 1;
}
GC_FN(f_mul_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_mul_scalar_(s, 3), y);
}
GC_FN(f_div)
{
    y[0] = tg_div(x[0], x[1]);
    return 1;
}
GC_FN(f_div_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_div_(s, x[1]), y);
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
    return gc_inplace_result(s, tg_div_mode_(s, x[1], NULL), y);
}
GC_FN(f_div_mode_floor_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_div_mode_(s, x[1], "floor"), y);
}
GC_FN(f_div_scalar)
{
    y[0] = tg_div_scalar(x[0], 4);
    return 1;
}
GC_FN(f_div_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_div_scalar_(s, -0.5), y);
}
GC_FN(f_pow)
{
    y[0] = tg_pow(x[0], x[1]);
    return 1;
}
GC_FN(f_pow_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_pow_(s, x[1]), y);
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
    return gc_inplace_result(s, tg_pow_scalar_(s, -1.5), y);
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
    return gc_inplace_result(s, tg_eq_(s, x[1]), y);
}
GC_FN(f_ne_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_ne_(s, x[1]), y);
}
GC_FN(f_lt_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_lt_(s, x[1]), y);
}
GC_FN(f_le_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_le_(s, x[1]), y);
}
GC_FN(f_gt_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_gt_(s, x[1]), y);
}
GC_FN(f_ge_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_ge_(s, x[1]), y);
}
GC_FN(f_gt_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_gt_scalar_(s, 0), y);
}

static const gc_case binary_cases[] = {
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
};
GC_REGISTER(binary_cases);
