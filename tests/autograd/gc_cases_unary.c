/* Gradcheck cases of where, clamp and the unary operators (neg ... sign), functional and in place
 * (gradcheck.h).
 *
 * Each case is a small function of its inputs x[] that calls the operator and returns its
 * outputs in y[] (GC_FN, gradcheck.h). In-place operators run on a clone of x[0] (a leaf requiring
 * grad cannot be modified in place); operators that draw random numbers reseed a generator
 * inside the function, so that the finite differences see the same draw on every call. Inputs
 * are chosen away from the points where an operator is not differentiable (GC_AWAY0 for relu
 * and abs, GC_POS for log and sqrt, GC_DISTINCT for max and min, which would otherwise tie). */
#include "gradcheck.h"

/* ------------------------------------------------------------------ selection, clamping */

GC_FN(f_where) { return gc_y1(y, tg_where(x[0], x[1], x[2])); }
GC_FN(f_where_scalar_self) { return gc_y1(y, tg_where_scalar_self(x[0], 2, x[1])); }
GC_FN(f_where_scalar_other) { return gc_y1(y, tg_where_scalar_other(x[0], x[1], -2)); }
GC_FN(f_clamp) { return gc_y1(y, tg_clamp(x[0], .min = -0.3, .max = 0.4)); }
GC_FN(f_clamp_min) { return gc_y1(y, tg_clamp(x[0], .min = 0.1)); }
GC_FN(f_clamp_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_clamp_(s, .max = 0.2), y);
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
GC_FN(f_clamp_tensor_max) { return gc_y1(y, tg_clamp_tensor(x[0], .max = x[1])); }
GC_FN(f_clamp_tensor_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_clamp_tensor_(s, .min = x[1]), y);
}

/* ------------------------------------------------------------------ unary */

GC_FN(f_neg) { return gc_y1(y, tg_neg(x[0])); }
GC_FN(f_abs) { return gc_y1(y, tg_abs(x[0])); }
GC_FN(f_exp) { return gc_y1(y, tg_exp(x[0])); }
GC_FN(f_log) { return gc_y1(y, tg_log(x[0])); }
GC_FN(f_sqrt) { return gc_y1(y, tg_sqrt(x[0])); }
GC_FN(f_rsqrt) { return gc_y1(y, tg_rsqrt(x[0])); }
GC_FN(f_sin) { return gc_y1(y, tg_sin(x[0])); }
GC_FN(f_cos) { return gc_y1(y, tg_cos(x[0])); }
GC_FN(f_tanh) { return gc_y1(y, tg_tanh(x[0])); }
GC_FN(f_sigmoid) { return gc_y1(y, tg_sigmoid(x[0])); }
GC_FN(f_relu) { return gc_y1(y, tg_relu(x[0])); }
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
    return gc_inplace_result(s, op_(s), y);
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
    return gc_inplace_result(s, tg_exp_(s), y);
}
/* exp_ saves its result, which tanh_ then overwrites: backward must refuse (PyTorch does). */
GC_FN(f_exp_tanh_)
{
    tg_tensor *s = tg_clone(x[0]);
    tg_release(tg_exp_(s));
    return gc_inplace_result(s, tg_tanh_(s), y);
}

static const gc_case unary_cases[] = {
    /* selection and clamping */
    GC_CASE("where.self", "broadcast condition (3,4), (3,1), (1,4)", f_where,
            { MASK(3, 4), REAL(3, 1), REAL(1, 4) }),
    GC_CASE("where.self", "transposed, strided", f_where,
            { MASK(3, 4), REAL_T(3, 4), REAL_S(3, 4) }),
    GC_CASE("where.ScalarSelf", "where(c, 2, x)", f_where_scalar_self, { MASK(3, 4), REAL(3, 4) }),
    GC_CASE("where.ScalarOther", "where(c, x, -2)", f_where_scalar_other, { MASK(3, 4), REAL(4) }),
    GC_CASE("clamp", "[-0.3, 0.4]", f_clamp, { REAL(4, 5) }),
    GC_CASE("clamp", "min 0.1, transposed", f_clamp_min, { REAL_T(4, 5) }),
    GC_CASE("clamp_", "max 0.2", f_clamp_, { REAL(4, 5) }),
    GC_CASE("clamp.Tensor", "broadcast min (3,1) and max (1,4)", f_clamp_tensor,
            { REAL(3, 4), REAL(3, 1), REAL(1, 4) }),
    GC_CASE("clamp.Tensor", "max only", f_clamp_tensor_max, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("clamp_.Tensor", "min only", f_clamp_tensor_, { REAL(3, 4), REAL(4) }),

    /* unary */
    GC_CASE("neg", "strided", f_neg, { REAL_S(3, 4) }),
    GC_CASE("neg_", "clone", f_neg_, { REAL(3, 4) }),
    GC_CASE("abs", "away from 0", f_abs, { AWAY0(3, 4) }),
    GC_CASE("abs_", "away from 0", f_abs_, { AWAY0(3, 4) }),
    GC_CASE("exp", "contiguous", f_exp, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("exp", "transposed", f_exp, { REAL_T(3, 4) }, .gradgrad = true),
    GC_CASE("exp_", "clone", f_exp_, { REAL(3, 4) }),
    GC_CASE("exp_", "sin_ then exp_ on one clone", f_sin_exp_, { REAL(3, 4) }),
    GC_CASE("exp_", "exp_ then tanh_: exp_'s saved result modified", f_exp_tanh_, { REAL(3, 4) },
            .expect_error = "modified by an inplace operation"),
    GC_CASE("log", "positive, strided", f_log, { POS_S(3, 4) }),
    GC_CASE("log_", "positive", f_log_, { POS(3, 4) }),
    GC_CASE("sqrt", "positive", f_sqrt, { POS(3, 4) }),
    GC_CASE("sqrt_", "positive", f_sqrt_, { POS(3, 4) }),
    GC_CASE("rsqrt", "positive, transposed", f_rsqrt, { POS_T(3, 4) }),
    GC_CASE("rsqrt_", "positive", f_rsqrt_, { POS(3, 4) }),
    GC_CASE("sin", "strided", f_sin, { REAL_S(3, 4) }),
    GC_CASE("sin_", "clone", f_sin_, { REAL(3, 4) }),
    GC_CASE("cos", "transposed", f_cos, { REAL_T(3, 4) }),
    GC_CASE("cos_", "clone", f_cos_, { REAL(3, 4) }),
    GC_CASE("tanh", "contiguous", f_tanh, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("tanh", "strided", f_tanh, { REAL_S(3, 4) }, .gradgrad = true),
    GC_CASE("tanh_", "clone", f_tanh_, { REAL(3, 4) }),
    GC_CASE("sigmoid", "contiguous", f_sigmoid, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("sigmoid", "transposed", f_sigmoid, { REAL_T(3, 4) }, .gradgrad = true),
    GC_CASE("sigmoid_", "clone", f_sigmoid_, { REAL(3, 4) }),
    GC_CASE("relu", "away from 0", f_relu, { AWAY0(3, 4) }, .gradgrad = true),
    GC_CASE("relu", "away from 0, transposed", f_relu, { AWAY0_T(3, 4) }),
    GC_CASE("relu_", "away from 0", f_relu_, { AWAY0(3, 4) }),
    GC_CASE("sign", "zero gradient; x * sign(x) = |x|", f_sign, { AWAY0(3, 4) }),
};
GC_REGISTER(unary_cases);
