/* Gradcheck cases of the activation operators (gradcheck.h; run by
 * tests/autograd/test_gradcheck.c and, on CUDA against the CPU, tests/cuda/
 * test_cuda_grad_table.c): every operator with a derivative entry (leaky_relu, hardtanh,
 * hardswish, hardsigmoid, elu, their in-place forms and the backward operators with double
 * backward), plus the composites relu6 and feature_dropout (reseeded, so that the finite
 * differences see one draw).
 *
 * The operators are piecewise: inputs stay away from the kinks. GC_REAL values in [-1, 1) are
 * scaled by 4 where an operator's pieces lie at +-3 (hardswish, hardsigmoid: every piece is
 * reached, and no value comes within 1e-6 of a kink with these seeds); leaky_relu and elu take
 * GC_AWAY0 (+-[0.5, 1.5)); hardtanh's bounds are put between the values. */
#include "gradcheck.h"

/* op applied to a clone of x (a leaf that requires grad cannot be modified in place). */
static int in_place(tg_tensor *const *x, tg_tensor **y, tg_tensor *(*op_)(tg_tensor *))
{
    tg_tensor *s = tg_clone(x[0]);
    y[0] = op_(s);
    tg_release(s);
    return y[0] ? 1 : -1;
}

/* 4 * x, released by the caller. */
static tg_tensor *times4(tg_tensor *x) { return tg_mul_scalar(x, 4.0); }

static int scaled(tg_tensor *const *x, tg_tensor **y, tg_tensor *(*op)(tg_tensor *))
{
    tg_tensor *s = times4(x[0]);
    y[0] = op(s);
    tg_release(s);
    return y[0] ? 1 : -1;
}

/* ------------------------------------------------------------------ leaky_relu */

GC_FN(f_leaky_relu) { return gc_y1(y, tg_leaky_relu(x[0], .negative_slope = 0.2)); }
GC_FN(f_leaky_relu_neg) { return gc_y1(y, tg_leaky_relu(x[0], .negative_slope = -0.3)); }
static tg_tensor *leaky_relu_02_(tg_tensor *s) { return tg_leaky_relu_(s, .negative_slope = 0.2); }
GC_FN(f_leaky_relu_) { return in_place(x, y, leaky_relu_02_); }
GC_FN(f_leaky_relu_backward) { return gc_y1(y, tg_leaky_relu_backward(x[0], x[1], 0.2, false)); }
GC_FN(f_leaky_relu_backward_res) { return gc_y1(y, tg_leaky_relu_backward(x[0], x[1], 0.2, true)); }

/* ------------------------------------------------------------------ hardtanh, relu6 */

GC_FN(f_hardtanh) { return gc_y1(y, tg_hardtanh(x[0], .min_val = -0.55, .max_val = 0.45)); }
static tg_tensor *hardtanh_(tg_tensor *s)
{
    return tg_hardtanh_(s, .min_val = -0.55, .max_val = 0.45);
}
GC_FN(f_hardtanh_) { return in_place(x, y, hardtanh_); }
GC_FN(f_hardtanh_backward) { return gc_y1(y, tg_hardtanh_backward(x[0], x[1], -0.55, 0.45)); }
/* relu6(8 x): 0 below 0, linear, 6 above 0.75. */
GC_FN(f_relu6)
{
    tg_tensor *s = tg_mul_scalar(x[0], 8.0);
    y[0] = tg_relu6(s);
    tg_release(s);
    return 1;
}

/* ------------------------------------------------------------------ hardswish, hardsigmoid */

GC_FN(f_hardswish) { return scaled(x, y, tg_hardswish); }
/* in place on 4 * x (a new tensor, not the leaf) */
GC_FN(f_hardswish_) { return scaled(x, y, tg_hardswish_); }
GC_FN(f_hardswish_backward)
{
    tg_tensor *s = times4(x[1]);
    y[0] = tg_hardswish_backward(x[0], s);
    tg_release(s);
    return 1;
}
GC_FN(f_hardsigmoid) { return scaled(x, y, tg_hardsigmoid); }
/* in place on 4 * x (a new tensor, not the leaf) */
GC_FN(f_hardsigmoid_) { return scaled(x, y, tg_hardsigmoid_); }

/* ------------------------------------------------------------------ elu */

GC_FN(f_elu) { return gc_y1(y, tg_elu(x[0])); }
GC_FN(f_elu_params)
{
    return gc_y1(y, tg_elu(x[0], .alpha = 2.0, .scale = 1.5, .input_scale = 0.5));
}
static tg_tensor *elu_params_(tg_tensor *s)
{
    return tg_elu_(s, .alpha = 2.0, .scale = 1.5, .input_scale = 0.5);
}
GC_FN(f_elu_) { return in_place(x, y, elu_params_); }
GC_FN(f_elu_backward) { return gc_y1(y, tg_elu_backward(x[0], 2.0, 1.5, 0.5, false, x[1])); }
/* From the result: self_or_result is elu's result, so the function of x is elu_backward of
 * elu(x). */
GC_FN(f_elu_backward_res)
{
    tg_tensor *r = tg_elu(x[1], .alpha = 2.0, .scale = 1.5, .input_scale = 0.5);
    y[0] = tg_elu_backward(x[0], 2.0, 1.5, 0.5, true, r);
    tg_release(r);
    return 1;
}

/* ------------------------------------------------------------------ feature_dropout */

GC_FN(f_feature_dropout)
{
    tg_manual_seed(99);
    y[0] = tg_feature_dropout(x[0], 0.4, true);
    return 1;
}
GC_FN(f_feature_dropout_eval) { return gc_y1(y, tg_feature_dropout(x[0], 0.4, false)); }
static tg_tensor *feature_dropout_04_(tg_tensor *s)
{
    tg_manual_seed(99);
    return tg_feature_dropout_(s, 0.4, true);
}
GC_FN(f_feature_dropout_) { return in_place(x, y, feature_dropout_04_); }

static const gc_case activation_cases[] = {
    GC_CASE("leaky_relu", "slope 0.2", f_leaky_relu, { AWAY0(3, 4) }, .gradgrad = true),
    GC_CASE("leaky_relu", "slope -0.3, transposed", f_leaky_relu_neg, { AWAY0_T(3, 4) }),
    GC_CASE("leaky_relu_", "slope 0.2, from its result", f_leaky_relu_, { AWAY0(3, 4) },
            .gradgrad = true),
    GC_CASE("leaky_relu_backward", "broadcast (3,1), (1,4)", f_leaky_relu_backward,
            { REAL(3, 1), AWAY0(1, 4) }, .gradgrad = true),
    GC_CASE("leaky_relu_backward", "self_is_result, transposed", f_leaky_relu_backward_res,
            { REAL_T(3, 4), AWAY0_T(3, 4) }),
    GC_CASE("hardtanh", "(-0.55, 0.45)", f_hardtanh, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("hardtanh", "strided", f_hardtanh, { REAL_S(3, 4) }),
    GC_CASE("hardtanh_", "clone", f_hardtanh_, { REAL(3, 4) }),
    GC_CASE("hardtanh_backward", "broadcast", f_hardtanh_backward, { REAL(3, 1), REAL(3, 4) },
            .gradgrad = true),
    GC_CASE("relu6", "8 x", f_relu6, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("hardswish", "4 x, every piece", f_hardswish, { REAL(4, 5) }, .gradgrad = true),
    GC_CASE("hardswish", "transposed", f_hardswish, { REAL_T(3, 4) }),
    GC_CASE("hardswish_", "clone", f_hardswish_, { REAL(4, 5) }),
    GC_CASE("hardswish_backward", "self 4 x", f_hardswish_backward, { REAL(4, 5), REAL(4, 5) },
            .gradgrad = true),
    GC_CASE("hardsigmoid", "4 x, every piece", f_hardsigmoid, { REAL(4, 5) }),
    GC_CASE("hardsigmoid", "strided", f_hardsigmoid, { REAL_S(3, 4) }),
    GC_CASE("hardsigmoid_", "clone", f_hardsigmoid_, { REAL(4, 5) }),
    GC_CASE("elu", "defaults", f_elu, { AWAY0(3, 4) }, .gradgrad = true),
    GC_CASE("elu", "alpha 2, scale 1.5, input_scale 0.5, transposed", f_elu_params,
            { AWAY0_T(3, 4) }, .gradgrad = true),
    GC_CASE("elu_", "from its result", f_elu_, { AWAY0(3, 4) }, .gradgrad = true),
    GC_CASE("elu_backward", "broadcast", f_elu_backward, { REAL(3, 1), AWAY0(3, 4) },
            .gradgrad = true),
    GC_CASE("elu_backward", "is_result", f_elu_backward_res, { REAL(3, 4), AWAY0(3, 4) },
            .gradgrad = true),
    GC_CASE("feature_dropout", "p 0.4, train (reseeded)", f_feature_dropout, { REAL(4, 5, 2) }),
    GC_CASE("feature_dropout", "eval", f_feature_dropout_eval, { REAL(4, 5, 2) }),
    GC_CASE("feature_dropout_", "p 0.4, clone (reseeded)", f_feature_dropout_, { REAL(4, 5, 2) }),
};
GC_REGISTER(activation_cases);
