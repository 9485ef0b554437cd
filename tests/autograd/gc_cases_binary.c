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

GC_FN(f_add) { return gc_y1(y, tg_add(x[0], x[1])); }
GC_FN(f_add_alpha) { return gc_y1(y, tg_add(x[0], x[1], .alpha = 2)); }
GC_FN(f_add_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_add_(s, x[1], .alpha = 0.5), y);
}
GC_FN(f_add_scalar) { return gc_y1(y, tg_add_scalar(x[0], 1.5, .alpha = 2)); }
GC_FN(f_add_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_add_scalar_(s, -1), y);
}
GC_FN(f_sub) { return gc_y1(y, tg_sub(x[0], x[1])); }
GC_FN(f_sub_alpha) { return gc_y1(y, tg_sub(x[0], x[1], .alpha = 3)); }
GC_FN(f_sub_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_sub_(s, x[1], .alpha = 2), y);
}
GC_FN(f_sub_scalar) { return gc_y1(y, tg_sub_scalar(x[0], 1.5, .alpha = 2)); }
GC_FN(f_sub_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_sub_scalar_(s, 4), y);
}
GC_FN(f_mul) { return gc_y1(y, tg_mul(x[0], x[1])); }
/* The same tensor on both sides: the gradients of self and other add up (2 x). */
GC_FN(f_mul_self) { return gc_y1(y, tg_mul(x[0], x[0])); }
GC_FN(f_mul_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_mul_(s, x[1]), y);
}
GC_FN(f_mul_scalar) { return gc_y1(y, tg_mul_scalar(x[0], -2.5)); }
GC_FN(f_mul_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_mul_scalar_(s, 3), y);
}
GC_FN(f_div) { return gc_y1(y, tg_div(x[0], x[1])); }
GC_FN(f_div_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_div_(s, x[1]), y);
}
GC_FN(f_div_trunc) { return gc_y1(y, tg_div_mode(x[0], x[1], "trunc")); }
GC_FN(f_div_floor) { return gc_y1(y, tg_div_mode(x[0], x[1], "floor")); }
GC_FN(f_div_none) { return gc_y1(y, tg_div_mode(x[0], x[1], NULL)); }
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
GC_FN(f_div_scalar) { return gc_y1(y, tg_div_scalar(x[0], 4)); }
GC_FN(f_div_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_div_scalar_(s, -0.5), y);
}
GC_FN(f_pow) { return gc_y1(y, tg_pow(x[0], x[1])); }
GC_FN(f_pow_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_pow_(s, x[1]), y);
}
GC_FN(f_pow_scalar) { return gc_y1(y, tg_pow_scalar(x[0], 2.5)); }
GC_FN(f_pow_scalar_3) { return gc_y1(y, tg_pow_scalar(x[0], 3)); }
GC_FN(f_pow_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_pow_scalar_(s, -1.5), y);
}
GC_FN(f_pow_scalar_self) { return gc_y1(y, tg_pow_scalar_self(1.7, x[0])); }
GC_FN(f_maximum) { return gc_y1(y, tg_maximum(x[0], x[1])); }
GC_FN(f_minimum) { return gc_y1(y, tg_minimum(x[0], x[1])); }
/* Every element ties: each side gets half the gradient (the central difference agrees). */
GC_FN(f_maximum_tie) { return gc_y1(y, tg_maximum(x[0], x[0])); }
GC_FN(f_minimum_tie) { return gc_y1(y, tg_minimum(x[0], x[0])); }

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
    GC_CASE("add.Tensor", "broadcast (3,1) + (1,4)", f_add, { REAL(3, 1), REAL(1, 4) }),
    GC_CASE("add.Tensor", "transposed + strided, alpha 2", f_add_alpha,
            { REAL_T(3, 4), REAL_S(3, 4) }),
    GC_CASE("add.Tensor", "zero-dim + (2,3)", f_add, { REAL0, REAL(2, 3) }),
    GC_CASE("add_.Tensor", "(3,4) += (1,4) * 0.5", f_add_, { REAL(3, 4), REAL(1, 4) }),
    GC_CASE("add.Scalar", "x + 1.5 * 2", f_add_scalar, { REAL_T(3, 4) }),
    GC_CASE("add_.Scalar", "x -= 1", f_add_scalar_, { REAL(3, 4) }),
    GC_CASE("sub.Tensor", "broadcast (3,1) - (1,4)", f_sub, { REAL(3, 1), REAL(1, 4) }),
    GC_CASE("sub.Tensor", "strided - transposed, alpha 3", f_sub_alpha,
            { REAL_S(4, 3), REAL_T(4, 3) }),
    GC_CASE("sub_.Tensor", "(2,3,4) -= (3,1) * 2", f_sub_, { REAL(2, 3, 4), REAL(3, 1) }),
    GC_CASE("sub.Scalar", "x - 1.5 * 2", f_sub_scalar, { REAL(3, 4) }),
    GC_CASE("sub_.Scalar", "x -= 4", f_sub_scalar_, { REAL(3, 4) }),
    GC_CASE("mul.Tensor", "broadcast (3,1) * (1,4)", f_mul, { REAL(3, 1), REAL(1, 4) },
            .gradgrad = true),
    GC_CASE("mul.Tensor", "transposed * strided", f_mul, { REAL_T(3, 4), REAL_S(3, 4) },
            .gradgrad = true),
    GC_CASE("mul.Tensor", "x * x", f_mul_self, { REAL(5) }, .gradgrad = true),
    GC_CASE("mul_.Tensor", "(3,4) *= (3,1)", f_mul_, { REAL(3, 4), REAL(3, 1) }),
    GC_CASE("mul.Scalar", "x * -2.5", f_mul_scalar, { REAL_S(2, 3) }),
    GC_CASE("mul_.Scalar", "x *= 3", f_mul_scalar_, { REAL(2, 3) }),
    GC_CASE("div.Tensor", "broadcast (3,1) / (1,4)", f_div, { REAL(3, 1), POS(1, 4) },
            .gradgrad = true),
    GC_CASE("div.Tensor", "transposed / strided", f_div, { REAL_T(3, 4), POS_S(3, 4) },
            .gradgrad = true),
    GC_CASE("div_.Tensor", "(3,4) /= (4)", f_div_, { REAL(3, 4), POS(4) }),
    GC_CASE("div.Tensor_mode", "rounding_mode None", f_div_none, { REAL(3, 1), POS(1, 4) }),
    GC_CASE("div.Tensor_mode", "trunc: zero gradient", f_div_trunc, { REAL(3, 4), POS(3, 4) }),
    GC_CASE("div.Tensor_mode", "floor: zero gradient", f_div_floor, { REAL(3, 4), POS(4) }),
    GC_CASE("div_.Tensor_mode", "rounding_mode None", f_div_mode_, { REAL(3, 4), POS(3, 4) }),
    GC_CASE("div_.Tensor_mode", "floor: zero gradient", f_div_mode_floor_,
            { REAL(3, 4), POS(3, 4) }),
    GC_CASE("div.Scalar", "x / 4", f_div_scalar, { REAL(3, 4) }),
    GC_CASE("div_.Scalar", "x /= -0.5", f_div_scalar_, { REAL(3, 4) }),
    GC_CASE("pow.Tensor_Tensor", "broadcast (3,1) ** (1,4)", f_pow, { POS(3, 1), REAL(1, 4) },
            .gradgrad = true),
    GC_CASE("pow.Tensor_Tensor", "transposed ** strided", f_pow, { POS_T(3, 4), REAL_S(3, 4) }),
    GC_CASE("pow_.Tensor", "(3,4) **= (4)", f_pow_, { POS(3, 4), REAL(4) }),
    GC_CASE("pow.Tensor_Scalar", "x ** 2.5", f_pow_scalar, { POS(3, 4) }, .gradgrad = true),
    GC_CASE("pow.Tensor_Scalar", "x ** 3, negative x", f_pow_scalar_3, { REAL(3, 4) },
            .gradgrad = true),
    GC_CASE("pow_.Scalar", "x **= -1.5", f_pow_scalar_, { POS(3, 4) }),
    GC_CASE("pow.Scalar", "1.7 ** x", f_pow_scalar_self, { REAL(3, 4) }),
    GC_CASE("maximum", "broadcast (3,1), (1,4)", f_maximum, { REAL(3, 1), REAL(1, 4) }),
    GC_CASE("maximum", "ties: maximum(x, x)", f_maximum_tie, { REAL(3, 4) }),
    GC_CASE("minimum", "transposed, strided", f_minimum, { REAL_T(3, 4), REAL_S(3, 4) }),
    GC_CASE("minimum", "ties: minimum(x, x)", f_minimum_tie, { REAL(3, 4) }),

    /* comparisons */
    GC_CASE("eq.Tensor", "bool result", f_eq, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("ne.Tensor", "bool result", f_ne, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("lt.Tensor", "bool result", f_lt, { REAL(3, 1), REAL(1, 4) }),
    GC_CASE("le.Tensor", "bool result", f_le, { REAL(3, 4), REAL(4) }),
    GC_CASE("gt.Tensor", "bool result", f_gt, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("ge.Tensor", "bool result", f_ge, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("eq_.Tensor", "zero gradient", f_eq_, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("ne_.Tensor", "zero gradient", f_ne_, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("lt_.Tensor", "zero gradient", f_lt_, { REAL(3, 4), REAL(1, 4) }),
    GC_CASE("le_.Tensor", "zero gradient", f_le_, { REAL(3, 4), REAL(3, 1) }),
    GC_CASE("gt_.Tensor", "zero gradient", f_gt_, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("ge_.Tensor", "zero gradient", f_ge_, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("gt_.Scalar", "zero gradient", f_gt_scalar_, { REAL(3, 4) }),
};
GC_REGISTER(binary_cases);
