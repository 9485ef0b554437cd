/* The scalar functions of the language-model activations (`Generic: activation_lm.<name>`):
 * gelu, silu, mish, softplus, log_sigmoid and their backward operators, PyTorch 1.13's CPU
 * scalar kernels written in C. float32 computes in float (expf, erff, tanhf, log1pf of the C
 * library on the host, CUDA's on the device), float64 in double. gelu's float32 forward and
 * backward on the CPU go through vector code instead (kernels/cpu/vec/activation_lm.h, the same
 * formulas). */
#ifndef TG_UFUNC_ACTIVATION_LM_H
#define TG_UFUNC_ACTIVATION_LM_H

#include "core/core.h" /* tg__fail, for the approximate argument */
#include "pointwise_scalar.h"

/* gelu's constants: sqrt(1/2); sqrt(2/pi) (tanh's kBeta); 0.044715 (kKappa); 1/sqrt(2 pi). */
#define TG_GELU_SQRT1_2 0.70710678118654752440
#define TG_GELU_BETA 0.79788456080286535588
#define TG_GELU_KAPPA 0.044715
#define TG_GELU_PDF 0.39894228040143267794

/* gelu's approximate argument, "none" (0) or "tanh" (1); else PyTorch's error and -1. */
static inline int tg__pw_gelu_approximate(const char *op, const char *approximate)
{
    if (approximate && strcmp(approximate, "tanh") == 0) return 1;
    if (approximate && strcmp(approximate, "none") == 0) return 0;
    return tg__fail(op, "approximate argument must be either none or tanh.");
}
static inline int tg__pw_gelu_backward_approximate(const char *op, const char *approximate)
{
    return tg__pw_gelu_approximate(op, approximate);
}

/* gelu, approximate 'none': x * 0.5 * (1 + erf(x / sqrt 2)); 'tanh': 0.5 * x * (1 + tanh(
 * beta * (x + kappa * x^3))). */
static inline TG_HD float tg__pw_gelu_f32(float x, int tanh_approx)
{
    if (tanh_approx) {
        const float inner = (float)TG_GELU_BETA * (x + (float)TG_GELU_KAPPA * x * x * x);
        return 0.5f * x * (1.0f + tanhf(inner));
    }
    return x * 0.5f * (1.0f + erff(x * (float)TG_GELU_SQRT1_2));
}
static inline TG_HD double tg__pw_gelu_f64(double x, int tanh_approx)
{
    if (tanh_approx) {
        const double inner = TG_GELU_BETA * (x + TG_GELU_KAPPA * x * x * x);
        return 0.5 * x * (1.0 + tanh(inner));
    }
    return x * 0.5 * (1.0 + erf(x * TG_GELU_SQRT1_2));
}

/* gelu_backward: g * gelu'(x). 'none': cdf + x * pdf; 'tanh': 0.5 * (1 + t) + 0.5 * x *
 * (1 - t^2) * beta * (1 + 3 kappa x^2), t = tanh(beta * (x + kappa x^3)). */
static inline TG_HD float tg__pw_gelu_backward_f32(float g, float x, int tanh_approx)
{
    if (tanh_approx) {
        const float x_sq = x * x;
        const float t = tanhf((float)TG_GELU_BETA * (x + (float)TG_GELU_KAPPA * x_sq * x));
        const float inner_derivative =
            (float)TG_GELU_BETA * (1.0f + 3.0f * (float)TG_GELU_KAPPA * x_sq);
        return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * inner_derivative);
    }
    const float cdf = 0.5f * (1.0f + erff(x * (float)TG_GELU_SQRT1_2));
    return g * (cdf + x * ((float)TG_GELU_PDF * expf(-0.5f * x * x)));
}
static inline TG_HD double tg__pw_gelu_backward_f64(double g, double x, int tanh_approx)
{
    if (tanh_approx) {
        const double x_sq = x * x;
        const double t = tanh(TG_GELU_BETA * (x + TG_GELU_KAPPA * x_sq * x));
        const double inner_derivative = TG_GELU_BETA * (1.0 + 3.0 * TG_GELU_KAPPA * x_sq);
        return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner_derivative);
    }
    const double cdf = 0.5 * (1.0 + erf(x * TG_GELU_SQRT1_2));
    return g * (cdf + x * (TG_GELU_PDF * exp(-0.5 * x * x)));
}

/* silu: x / (1 + e^-x). */
static inline TG_HD float tg__pw_silu_f32(float x) { return x / (1.0f + expf(-x)); }
static inline TG_HD double tg__pw_silu_f64(double x) { return x / (1.0 + exp(-x)); }

/* silu_backward: g * s * (1 + x * (1 - s)), s = 1 / (1 + e^-x). */
static inline TG_HD float tg__pw_silu_backward_f32(float g, float x)
{
    const float s = 1.0f / (1.0f + expf(-x));
    return g * s * (1.0f + x * (1.0f - s));
}
static inline TG_HD double tg__pw_silu_backward_f64(double g, double x)
{
    const double s = 1.0 / (1.0 + exp(-x));
    return g * s * (1.0 + x * (1.0 - s));
}

/* mish: x * tanh(log1p(e^x)). */
static inline TG_HD float tg__pw_mish_f32(float x) { return x * tanhf(log1pf(expf(x))); }
static inline TG_HD double tg__pw_mish_f64(double x) { return x * tanh(log1p(exp(x))); }

/* mish_backward: g * (t + x * s * (1 - t^2)), t = tanh(log1p(e^x)), s = sigmoid(x). */
static inline TG_HD float tg__pw_mish_backward_f32(float g, float x)
{
    const float s = 1.0f / (1.0f + expf(-x));
    const float t = tanhf(log1pf(expf(x)));
    return g * (t + x * s * (1.0f - t * t));
}
static inline TG_HD double tg__pw_mish_backward_f64(double g, double x)
{
    const double s = 1.0 / (1.0 + exp(-x));
    const double t = tanh(log1p(exp(x)));
    return g * (t + x * s * (1.0 - t * t));
}

/* softplus: x where x * beta > threshold, else log1p(e^(x beta)) / beta. */
static inline TG_HD float tg__pw_softplus_f32(float x, float beta, float threshold)
{
    return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta;
}
static inline TG_HD double tg__pw_softplus_f64(double x, double beta, double threshold)
{
    return x * beta > threshold ? x : log1p(exp(x * beta)) / beta;
}

/* softplus_backward: g where x * beta > threshold, else g * z / (z + 1), z = e^(x beta). */
static inline TG_HD float tg__pw_softplus_backward_f32(float g, float x, float beta,
                                                       float threshold)
{
    const float z = expf(x * beta);
    return x * beta > threshold ? g : g * z / (z + 1.0f);
}
static inline TG_HD double tg__pw_softplus_backward_f64(double g, double x, double beta,
                                                        double threshold)
{
    const double z = exp(x * beta);
    return x * beta > threshold ? g : g * z / (z + 1.0);
}

/* log_sigmoid_forward: output = min(x, 0) - log1p(b), buffer b = e^-|x|; log_sigmoid_backward:
 * g * (max_deriv - sign * b / (1 + b)) with max_deriv = 1, sign = 1 where x < 0, else 0, -1
 * (= g * sigmoid(-x)), b recomputed from x as PyTorch's CUDA kernel does (the buffer
 * argument is not read). NaN stays NaN (through b). */
static inline TG_HD float tg__pw_log_sigmoid_buffer_f32(float x) { return expf(-fabsf(x)); }
static inline TG_HD double tg__pw_log_sigmoid_buffer_f64(double x) { return exp(-fabs(x)); }
static inline TG_HD float tg__pw_log_sigmoid_f32(float x)
{
    return (x < 0.0f ? x : 0.0f) - log1pf(expf(-fabsf(x)));
}
static inline TG_HD double tg__pw_log_sigmoid_f64(double x)
{
    return (x < 0.0 ? x : 0.0) - log1p(exp(-fabs(x)));
}
static inline TG_HD float tg__pw_log_sigmoid_backward_f32(float g, float x, float buffer)
{
    const bool neg = x < 0.0f;
    const float b = expf(-fabsf(x));
    return ((neg ? 1.0f : 0.0f) - (neg ? 1.0f : -1.0f) * (b / (1.0f + b))) * g;
}
static inline TG_HD double tg__pw_log_sigmoid_backward_f64(double g, double x, double buffer)
{
    const bool neg = x < 0.0;
    const double b = exp(-fabs(x));
    return ((neg ? 1.0 : 0.0) - (neg ? 1.0 : -1.0) * (b / (1.0 + b))) * g;
}

#endif
