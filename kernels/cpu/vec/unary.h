/* The hand-vectorised forms of unary pointwise operators (`CPUVector: unary.<name>` in
 * specs/native_functions.yaml), included only by generated/ufunc/unary_cap.c, which is
 * compiled once per CPU capability: array maps out[i] = f(x[i]) over contiguous arrays, every
 * element (the tail too, through one zero-padded vector) through the vector code, as wide as
 * the capability (vec_f32.h). The CPU computes every element of that compute type through
 * them (ufunc.c), so a result depends only on its value and the capability.
 *   - float32 exp, log, tanh, sigmoid: the project's own (exp_f32_vec.h), bit for bit the
 *     scalar functions of pointwise_scalar.h, which the device uses;
 *   - float32 sin and cos, float64 exp, log, tanh, sin, cos, sigmoid: SLEEF's (vec_sleef.h),
 *     within 1 ulp. */
#ifndef TG_VEC_UNARY_H
#define TG_VEC_UNARY_H

#include "exp_f32_vec.h"
#include "vec_sleef.h"

static inline void tg__vec_exp_f32(float *out, const float *x, int64_t n)
{
    tg__vf_map_all(tg__vf_exp, out, x, n);
}
static inline void tg__vec_log_f32(float *out, const float *x, int64_t n)
{
    tg__vf_map_all(tg__vf_log, out, x, n);
}
static inline void tg__vec_tanh_f32(float *out, const float *x, int64_t n)
{
    tg__vf_map_all(tg__vf_tanh, out, x, n);
}
static inline void tg__vec_sigmoid_f32(float *out, const float *x, int64_t n)
{
    tg__vf_map_all(tg__vf_sigmoid, out, x, n);
}
static inline void tg__vec_sin_f32(float *out, const float *x, int64_t n)
{
    tg__vf_map_all(tg__vf_sin, out, x, n);
}
static inline void tg__vec_cos_f32(float *out, const float *x, int64_t n)
{
    tg__vf_map_all(tg__vf_cos, out, x, n);
}

static inline void tg__vec_exp_f64(double *out, const double *x, int64_t n)
{
    tg__vd_map_all(tg__vd_exp_full, out, x, n);
}
static inline void tg__vec_log_f64(double *out, const double *x, int64_t n)
{
    tg__vd_map_all(tg__vd_log, out, x, n);
}
static inline void tg__vec_tanh_f64(double *out, const double *x, int64_t n)
{
    tg__vd_map_all(tg__vd_tanh, out, x, n);
}
static inline void tg__vec_sigmoid_f64(double *out, const double *x, int64_t n)
{
    tg__vd_map_all(tg__vd_sigmoid, out, x, n);
}
static inline void tg__vec_sin_f64(double *out, const double *x, int64_t n)
{
    tg__vd_map_all(tg__vd_sin, out, x, n);
}
static inline void tg__vec_cos_f64(double *out, const double *x, int64_t n)
{
    tg__vd_map_all(tg__vd_cos, out, x, n);
}

#endif
