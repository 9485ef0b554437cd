/* The scalar functions of the vision activations (`Generic: activation.<name>`): leaky_relu,
 * hardswish, hardsigmoid, elu and the backward operators of those and of hardtanh, in the
 * compute types of ufunc/unary.h. Each is the scalar definition of PyTorch 1.13's CPU kernel
 * (the lambda its vectorised loop is meant to match; its CUDA kernel computes the same); the
 * Scalar parameters arrive converted to the compute type (float for float16, bfloat16 and
 * float32, as PyTorch's CUDA kernels use opmath). Where PyTorch's AVX2 loop differs from its
 * own scalar lambda (NaN inputs of the backward operators, hardswish_backward at exactly 3),
 * these follow the scalar lambda. */
#ifndef TG_UFUNC_ACTIVATION_H
#define TG_UFUNC_ACTIVATION_H

#include "pointwise_scalar.h"

/* self > 0 ? self : self * negative_slope. NaN stays NaN, -0 stays -0 (-0 * slope). */
static inline TG_HD float tg__pw_leaky_relu_f32(float x, float slope)
{
    return x > 0.0f ? x : x * slope;
}
static inline TG_HD double tg__pw_leaky_relu_f64(double x, double slope)
{
    return x > 0.0 ? x : x * slope;
}

/* self > 0 ? grad : grad * negative_slope (self is leaky_relu's input or, with a slope >= 0,
 * its result: both have the input's sign). NaN in self takes the slope. */
static inline TG_HD float tg__pw_leaky_relu_backward_f32(float g, float x, float slope,
                                                         bool self_is_result)
{
    return x > 0.0f ? g : g * slope;
}
static inline TG_HD double tg__pw_leaky_relu_backward_f64(double g, double x, double slope,
                                                          bool self_is_result)
{
    return x > 0.0 ? g : g * slope;
}

/* hardtanh's gradient: 0 at and beyond the bounds, grad between them (and for NaN). */
static inline TG_HD float tg__pw_hardtanh_backward_f32(float g, float x, float lo, float hi)
{
    return (x <= lo || x >= hi) ? 0.0f : g;
}
static inline TG_HD double tg__pw_hardtanh_backward_f64(double g, double x, double lo, double hi)
{
    return (x <= lo || x >= hi) ? 0.0 : g;
}

/* min(max(x + 3, 0), 6) with std::max/std::min's rule (the first argument when the
 * comparison is false), so NaN propagates. */
static inline TG_HD float tg__pw_relu6_of_shift_f32(float x)
{
    float t = x + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    return 6.0f < t ? 6.0f : t;
}
static inline TG_HD double tg__pw_relu6_of_shift_f64(double x)
{
    double t = x + 3.0;
    t = t < 0.0 ? 0.0 : t;
    return 6.0 < t ? 6.0 : t;
}

/* hardswish: x * min(max(x + 3, 0), 6) / 6, multiplied first (-inf gives NaN: -inf * 0). */
static inline TG_HD float tg__pw_hardswish_f32(float x)
{
    return x * tg__pw_relu6_of_shift_f32(x) / 6.0f;
}
static inline TG_HD double tg__pw_hardswish_f64(double x)
{
    return x * tg__pw_relu6_of_shift_f64(x) / 6.0;
}

/* hardswish_backward: 0 below -3, grad * (x / 3 + 0.5) on [-3, 3] (so -0.5 grad at -3 and
 * 1.5 grad at 3), grad above 3 and for NaN. */
static inline TG_HD float tg__pw_hardswish_backward_f32(float g, float x)
{
    return x < -3.0f ? 0.0f : x <= 3.0f ? g * (x / 3.0f + 0.5f) : g;
}
static inline TG_HD double tg__pw_hardswish_backward_f64(double g, double x)
{
    return x < -3.0 ? 0.0 : x <= 3.0 ? g * (x / 3.0 + 0.5) : g;
}

/* hardsigmoid: min(max(x + 3, 0), 6) / 6. */
static inline TG_HD float tg__pw_hardsigmoid_f32(float x)
{
    return tg__pw_relu6_of_shift_f32(x) / 6.0f;
}
static inline TG_HD double tg__pw_hardsigmoid_f64(double x)
{
    return tg__pw_relu6_of_shift_f64(x) / 6.0;
}

/* hardsigmoid_backward: grad / 6 strictly inside (-3, 3), else 0 (NaN too). PyTorch's
 * constant is scalar_t(1.0f / 6.0f): 1/6 rounded to float, for float64 as well. */
static inline TG_HD float tg__pw_hardsigmoid_backward_f32(float g, float x)
{
    return (x > -3.0f && x < 3.0f) ? g * (1.0f / 6.0f) : 0.0f;
}
static inline TG_HD double tg__pw_hardsigmoid_backward_f64(double g, double x)
{
    return (x > -3.0 && x < 3.0) ? g * (double)(1.0f / 6.0f) : 0.0;
}

/* elu with negcoef = alpha * scale (rounded in the compute type, as PyTorch's alpha.to<T>() *
 * scale.to<T>()), poscoef = scale, negiptcoef = input_scale: x <= 0 ? (exp(x * negiptcoef) -
 * 1) * negcoef : x * poscoef. PyTorch 1.13's CPU kernel subtracts 1 from exp (no expm1); so
 * does this. float32's exp is tg__pw_exp_f32 on both backends. */
static inline TG_HD float tg__pw_elu_f32(float x, float alpha, float scale, float input_scale)
{
    const float negcoef = tg__pw_mul_rn_f32(alpha, scale);
    return x <= 0.0f ? (tg__pw_exp_f32(x * input_scale) - 1.0f) * negcoef : x * scale;
}
static inline TG_HD double tg__pw_elu_f64(double x, double alpha, double scale, double input_scale)
{
    const double negcoef = tg__pw_mul_rn_f64(alpha, scale);
    return x <= 0.0 ? (exp(x * input_scale) - 1.0) * negcoef : x * scale;
}

/* elu_backward, b = self_or_result: where b <= 0, grad * negiptcoef * (b + negcoef) from the
 * result, grad * negiptcoef * negcoef * exp(b * negiptcoef) from the input (left to right, as
 * PyTorch); grad * poscoef elsewhere (NaN included). */
static inline TG_HD float tg__pw_elu_backward_f32(float g, float b, float alpha, float scale,
                                                  float input_scale, bool is_result)
{
    const float negcoef = tg__pw_mul_rn_f32(alpha, scale);
    if (b > 0.0f || b != b) return g * scale;
    return is_result ? g * input_scale * (b + negcoef)
                     : g * input_scale * negcoef * tg__pw_exp_f32(b * input_scale);
}
static inline TG_HD double tg__pw_elu_backward_f64(double g, double b, double alpha, double scale,
                                                   double input_scale, bool is_result)
{
    const double negcoef = tg__pw_mul_rn_f64(alpha, scale);
    if (b > 0.0 || b != b) return g * scale;
    return is_result ? g * input_scale * (b + negcoef)
                     : g * input_scale * negcoef * exp(b * input_scale);
}

#endif
