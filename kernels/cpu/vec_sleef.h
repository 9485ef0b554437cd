/* Vector math from SLEEF (libsleef, the library PyTorch's CPU kernels use) for the functions
 * that have no vector form of our own (exp_f32_vec.h has float32 exp, log, tanh, sigmoid):
 * float32 sin and cos, float64 exp, log, tanh, sin, cos and sigmoid, in the vocabulary of
 * vec_f32.h (tg_vf: float32 lanes, tg_vd: float64 lanes, as wide as the capability).
 *
 * kernels/cpu/cap/ compiles this once per capability, and each build calls that capability's
 * SLEEF variant by name, never SLEEF's own dispatcher (which could pick an instruction set
 * other than the one tensorgen chose): ..._u10avx512f with AVX-512, ..._u10avx2 with AVX2,
 * ..._u10sse2 otherwise. All are SLEEF's 1.0-ulp ("u10") functions; the AVX2 and AVX-512
 * variants (which use FMA) agree bit for bit, the SSE2 ones may differ from them by an ulp.
 * Off x86 the lanes go through libm's scalar functions.
 *
 * Included only by the files of kernels/cpu/cap/. */
#ifndef TG_VEC_SLEEF_H
#define TG_VEC_SLEEF_H

#include <math.h>

#include "vec_f32.h"

#if defined(__x86_64__) || defined(__i386__)
#include <sleef.h>

#if defined(__AVX512F__)
typedef __m512 tg__vf_native;
typedef __m512d tg__vd_native;
#define TG__SLEEF_F32(fn) Sleef_##fn##f16_u10avx512f
#define TG__SLEEF_F64(fn) Sleef_##fn##d8_u10avx512f
#elif defined(__AVX2__)
typedef __m256 tg__vf_native;
typedef __m256d tg__vd_native;
#define TG__SLEEF_F32(fn) Sleef_##fn##f8_u10avx2
#define TG__SLEEF_F64(fn) Sleef_##fn##d4_u10avx2
#else
typedef __m128 tg__vf_native;
typedef __m128d tg__vd_native;
#define TG__SLEEF_F32(fn) Sleef_##fn##f4_u10sse2
#define TG__SLEEF_F64(fn) Sleef_##fn##d2_u10sse2
#endif

#else
typedef tg_vf tg__vf_native;
typedef tg_vd tg__vd_native;
#define TG__SLEEF_F32(fn) 0 /* no SLEEF: tg__vf_apply takes libm's function */
#define TG__SLEEF_F64(fn) 0
#endif

/* SLEEF's float32 / float64 function f on every lane; off x86, libm's function on each lane.
 * Always inlined, so f is a direct call. */
typedef tg__vf_native (*tg__vf_native_fn)(tg__vf_native);
typedef tg__vd_native (*tg__vd_native_fn)(tg__vd_native);

static inline __attribute__((always_inline)) tg_vf tg__vf_apply(tg__vf_native_fn f,
                                                                float (*scalar)(float), tg_vf v)
{
#if defined(__x86_64__) || defined(__i386__)
    (void)scalar;
    return (tg_vf)f((tg__vf_native)v);
#else
    (void)f;
    for (int i = 0; i < TG_VF_LANES; i++) v[i] = scalar(v[i]);
    return v;
#endif
}

static inline __attribute__((always_inline)) tg_vd tg__vd_apply(tg__vd_native_fn f,
                                                                double (*scalar)(double), tg_vd v)
{
#if defined(__x86_64__) || defined(__i386__)
    (void)scalar;
    return (tg_vd)f((tg__vd_native)v);
#else
    (void)f;
    for (int i = 0; i < TG_VF_LANES / 2; i++) v[i] = scalar(v[i]);
    return v;
#endif
}

static inline tg_vf tg__vf_sin(tg_vf v) { return tg__vf_apply(TG__SLEEF_F32(sin), sinf, v); }
static inline tg_vf tg__vf_cos(tg_vf v) { return tg__vf_apply(TG__SLEEF_F32(cos), cosf, v); }
static inline tg_vd tg__vd_sin(tg_vd v) { return tg__vd_apply(TG__SLEEF_F64(sin), sin, v); }
static inline tg_vd tg__vd_cos(tg_vd v) { return tg__vd_apply(TG__SLEEF_F64(cos), cos, v); }
static inline tg_vd tg__vd_exp(tg_vd v) { return tg__vd_apply(TG__SLEEF_F64(exp), exp, v); }
static inline tg_vd tg__vd_log(tg_vd v) { return tg__vd_apply(TG__SLEEF_F64(log), log, v); }
static inline tg_vd tg__vd_tanh(tg_vd v) { return tg__vd_apply(TG__SLEEF_F64(tanh), tanh, v); }

/* e^x. SLEEF's expd returns +inf from 709.78271114955743 on, a hair below where e^x overflows
 * (709.782712893384); those lanes take libm's exp. */
static inline tg_vd tg__vd_exp_full(tg_vd v)
{
    typedef int64_t tg_vl __attribute__((vector_size(sizeof(tg_vd))));
    tg_vd r = tg__vd_exp(v);
    tg_vl late = (v > 709.78271114955742) & (v <= 709.782712893384);
    int64_t any = 0;
    for (int i = 0; i < TG_VF_LANES / 2; i++) any |= late[i];
    if (any)
        for (int i = 0; i < TG_VF_LANES / 2; i++)
            if (late[i]) r[i] = exp(v[i]);
    return r;
}

/* sigmoid(x) = 1 / (1 + e^-x), as tg__pw_sigmoid_f64 computes it. */
static inline tg_vd tg__vd_sigmoid(tg_vd v) { return 1.0 / (1.0 + tg__vd_exp_full(-v)); }

#endif
