/* The scalar functions of the unary pointwise operators (generated/ufunc/unary_*.c and
 * unary_cuda.cu call them; `Generic: unary.<name>` in specs/native_functions.yaml): one small
 * function per operator and compute type, compiled by gcc for the CPU and by nvcc for the
 * device, so both backends compute the same thing.
 *
 * Compute types follow PyTorch: float16, bfloat16 and float32 compute in float (_f32; the
 * loops widen and round), float64 in double (_f64), and every integral dtype and bool in
 * int64_t (_i64) with two's-complement wrap-around, done in uint64_t so no signed overflow
 * (undefined behaviour in C) ever happens. Only neg, abs and relu have an integer form: the
 * others compute integer inputs in the default float dtype. float32 exp, log, tanh and
 * sigmoid are the project's own (pointwise_scalar.h); erf, log1p and expm1 are the C
 * library's, as PyTorch's scalar kernels call std::erf, ... */
#ifndef TG_UFUNC_UNARY_H
#define TG_UFUNC_UNARY_H

#include "pointwise_scalar.h"

static inline TG_HD float tg__pw_neg_f32(float x) { return -x; }
static inline TG_HD double tg__pw_neg_f64(double x) { return -x; }
static inline TG_HD int64_t tg__pw_neg_i64(int64_t x) { return (int64_t)(0 - (uint64_t)x); }

static inline TG_HD float tg__pw_abs_f32(float x) { return fabsf(x); }
static inline TG_HD double tg__pw_abs_f64(double x) { return fabs(x); }
static inline TG_HD int64_t tg__pw_abs_i64(int64_t x)
{
    return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
}

/* relu keeps NaN (NaN < 0 is false). */
static inline TG_HD float tg__pw_relu_f32(float x) { return x < 0 ? 0.0f : x; }
static inline TG_HD double tg__pw_relu_f64(double x) { return x < 0 ? 0.0 : x; }
static inline TG_HD int64_t tg__pw_relu_i64(int64_t x) { return x < 0 ? 0 : x; }

/* exp, log, tanh and sigmoid in float32: pointwise_scalar.h. */
static inline TG_HD double tg__pw_exp_f64(double x) { return exp(x); }
static inline TG_HD double tg__pw_log_f64(double x) { return log(x); }
static inline TG_HD double tg__pw_tanh_f64(double x) { return tanh(x); }
static inline TG_HD double tg__pw_sigmoid_f64(double x) { return 1.0 / (1.0 + exp(-x)); }

static inline TG_HD float tg__pw_sqrt_f32(float x) { return sqrtf(x); }
static inline TG_HD double tg__pw_sqrt_f64(double x) { return sqrt(x); }
static inline TG_HD float tg__pw_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }
static inline TG_HD double tg__pw_rsqrt_f64(double x) { return 1.0 / sqrt(x); }
static inline TG_HD float tg__pw_sin_f32(float x) { return sinf(x); }
static inline TG_HD double tg__pw_sin_f64(double x) { return sin(x); }
static inline TG_HD float tg__pw_cos_f32(float x) { return cosf(x); }
static inline TG_HD double tg__pw_cos_f64(double x) { return cos(x); }
static inline TG_HD float tg__pw_erf_f32(float x) { return erff(x); }
static inline TG_HD double tg__pw_erf_f64(double x) { return erf(x); }
static inline TG_HD float tg__pw_log1p_f32(float x) { return log1pf(x); }
static inline TG_HD double tg__pw_log1p_f64(double x) { return log1p(x); }
static inline TG_HD float tg__pw_expm1_f32(float x) { return expm1f(x); }
static inline TG_HD double tg__pw_expm1_f64(double x) { return expm1(x); }

#endif
