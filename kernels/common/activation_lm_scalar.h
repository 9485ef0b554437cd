/* Scalar definitions of the language-model activations (gelu, silu, mish, softplus and their
 * backward operators), PyTorch 1.13's CPU scalar kernels written in C: the one definition the
 * CPU reference loops (kernels/cpu/activation_lm.c) and the CUDA kernels
 * (kernels/cuda/activation_lm.cu) share. float32 computes in float (expf, erff, tanhf, log1pf
 * of the C library on the host, CUDA's on the device), float64 in double. gelu's float32
 * forward on the CPU goes through vector code instead (kernels/cpu/cap/activation_lm_loops.c,
 * the same formula with SLEEF's erff / tanhf). Compiles as C and as CUDA C++. */
#ifndef TG_ACTIVATION_LM_SCALAR_H
#define TG_ACTIVATION_LM_SCALAR_H

#include "pointwise_scalar.h" /* TG_PW */

/* erf, log1p, expm1 (unary operators: kernels/cpu/unary.c, cap/unary_loops.c,
 * kernels/cuda/unary.cu): the C library's, as PyTorch's scalar kernels call std::erf, ... */
TG_PW float tg__pw_erf_f32(float x) { return erff(x); }
TG_PW double tg__pw_erf_f64(double x) { return erf(x); }
TG_PW float tg__pw_log1p_f32(float x) { return log1pf(x); }
TG_PW double tg__pw_log1p_f64(double x) { return log1p(x); }
TG_PW float tg__pw_expm1_f32(float x) { return expm1f(x); }
TG_PW double tg__pw_expm1_f64(double x) { return expm1(x); }

/* gelu's constants: sqrt(1/2); sqrt(2/pi) (tanh's kBeta); 0.044715 (kKappa); 1/sqrt(2 pi). */
#define TG_GELU_SQRT1_2 0.70710678118654752440
#define TG_GELU_BETA 0.79788456080286535588
#define TG_GELU_KAPPA 0.044715
#define TG_GELU_PDF 0.39894228040143267794

/* gelu, approximate 'none': x * 0.5 * (1 + erf(x / sqrt 2)); 'tanh': 0.5 * x * (1 + tanh(
 * beta * (x + kappa * x^3))). */
TG_PW float tg__pw_gelu_f32(float x, bool tanh_approx)
{
    if (tanh_approx) {
        const float inner = (float)TG_GELU_BETA * (x + (float)TG_GELU_KAPPA * x * x * x);
        return 0.5f * x * (1.0f + tanhf(inner));
    }
    return x * 0.5f * (1.0f + erff(x * (float)TG_GELU_SQRT1_2));
}
TG_PW double tg__pw_gelu_f64(double x, bool tanh_approx)
{
    if (tanh_approx) {
        const double inner = TG_GELU_BETA * (x + TG_GELU_KAPPA * x * x * x);
        return 0.5 * x * (1.0 + tanh(inner));
    }
    return x * 0.5 * (1.0 + erf(x * TG_GELU_SQRT1_2));
}

/* gelu_backward: g * gelu'(x). 'none': cdf + x * pdf; 'tanh': 0.5 * (1 + t) + 0.5 * x *
 * (1 - t^2) * beta * (1 + 3 kappa x^2), t = tanh(beta * (x + kappa x^3)). */
#define TG__GELU_BACKWARD(T, ERF, EXP, TANH)                                                  \
    if (tanh_approx) {                                                                        \
        const T x_sq = x * x;                                                                 \
        const T inner = (T)TG_GELU_BETA * (x + (T)TG_GELU_KAPPA * x_sq * x);                  \
        const T t = TANH(inner);                                                              \
        const T left_derivative = (T)0.5 * ((T)1 + t);                                        \
        const T inner_derivative = (T)TG_GELU_BETA * ((T)1 + (T)3 * (T)TG_GELU_KAPPA * x_sq); \
        const T right_derivative = (T)0.5 * x * ((T)1 - t * t) * inner_derivative;            \
        return g * (left_derivative + right_derivative);                                      \
    }                                                                                         \
    const T cdf = (T)0.5 * ((T)1 + ERF(x * (T)TG_GELU_SQRT1_2));                              \
    const T pdf = (T)TG_GELU_PDF * EXP((T)-0.5 * x * x);                                      \
    return g * (cdf + x * pdf);

TG_PW float tg__pw_gelu_backward_f32(float g, float x, bool tanh_approx){
    TG__GELU_BACKWARD(float, erff, expf, tanhf)
} TG_PW double tg__pw_gelu_backward_f64(double g, double x, bool tanh_approx)
{
    TG__GELU_BACKWARD(double, erf, exp, tanh)
}
#undef TG__GELU_BACKWARD

/* silu: x / (1 + e^-x). */
TG_PW float tg__pw_silu_f32(float x) { return x / (1.0f + expf(-x)); }
TG_PW double tg__pw_silu_f64(double x) { return x / (1.0 + exp(-x)); }

/* silu_backward: g * s * (1 + x * (1 - s)), s = 1 / (1 + e^-x). */
TG_PW float tg__pw_silu_backward_f32(float g, float x)
{
    const float s = 1.0f / (1.0f + expf(-x));
    return g * s * (1.0f + x * (1.0f - s));
}
TG_PW double tg__pw_silu_backward_f64(double g, double x)
{
    const double s = 1.0 / (1.0 + exp(-x));
    return g * s * (1.0 + x * (1.0 - s));
}

/* mish: x * tanh(log1p(e^x)). */
TG_PW float tg__pw_mish_f32(float x) { return x * tanhf(log1pf(expf(x))); }
TG_PW double tg__pw_mish_f64(double x) { return x * tanh(log1p(exp(x))); }

/* mish_backward: g * (t + x * s * (1 - t^2)), t = tanh(log1p(e^x)), s = sigmoid(x). */
TG_PW float tg__pw_mish_backward_f32(float g, float x)
{
    const float s = 1.0f / (1.0f + expf(-x));
    const float t = tanhf(log1pf(expf(x)));
    return g * (t + x * s * (1.0f - t * t));
}
TG_PW double tg__pw_mish_backward_f64(double g, double x)
{
    const double s = 1.0 / (1.0 + exp(-x));
    const double t = tanh(log1p(exp(x)));
    return g * (t + x * s * (1.0 - t * t));
}

/* softplus: x where x * beta > threshold, else log1p(e^(x beta)) / beta. */
TG_PW float tg__pw_softplus_f32(float x, float beta, float threshold)
{
    return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta;
}
TG_PW double tg__pw_softplus_f64(double x, double beta, double threshold)
{
    return x * beta > threshold ? x : log1p(exp(x * beta)) / beta;
}

/* softplus_backward: g where x * beta > threshold, else g * z / (z + 1), z = e^(x beta). */
TG_PW float tg__pw_softplus_backward_f32(float g, float x, float beta, float threshold)
{
    const float z = expf(x * beta);
    return x * beta > threshold ? g : g * z / (z + 1.0f);
}
TG_PW double tg__pw_softplus_backward_f64(double g, double x, double beta, double threshold)
{
    const double z = exp(x * beta);
    return x * beta > threshold ? g : g * z / (z + 1.0);
}

/* log_sigmoid_forward: output = min(x, 0) - log1p(b), buffer b = e^-|x|; log_sigmoid_backward:
 * g * (max_deriv - sign * b / (1 + b)) with max_deriv = 1, sign = 1 where x < 0, else 0, -1
 * (= g * sigmoid(-x)). NaN stays NaN (through b). */
TG_PW float tg__pw_log_sigmoid_buffer_f32(float x) { return expf(-fabsf(x)); }
TG_PW double tg__pw_log_sigmoid_buffer_f64(double x) { return exp(-fabs(x)); }
TG_PW float tg__pw_log_sigmoid_f32(float x)
{
    return (x < 0.0f ? x : 0.0f) - log1pf(expf(-fabsf(x)));
}
TG_PW double tg__pw_log_sigmoid_f64(double x) { return (x < 0.0 ? x : 0.0) - log1p(exp(-fabs(x))); }
TG_PW float tg__pw_log_sigmoid_backward_f32(float g, float x)
{
    const bool neg = x < 0.0f;
    const float b = expf(-fabsf(x));
    return ((neg ? 1.0f : 0.0f) - (neg ? 1.0f : -1.0f) * (b / (1.0f + b))) * g;
}
TG_PW double tg__pw_log_sigmoid_backward_f64(double g, double x)
{
    const bool neg = x < 0.0;
    const double b = exp(-fabs(x));
    return ((neg ? 1.0 : 0.0) - (neg ? 1.0 : -1.0) * (b / (1.0 + b))) * g;
}

#endif
