/* The hand-vectorised gelu and gelu_backward in float32 (`CPUVector: activation_lm.gelu` and
 * `activation_lm.gelu_backward`), included only by generated/ufunc/activation_lm_cap.c, which
 * is compiled once per CPU capability: the formulas of tg__pw_gelu_f32 and
 * tg__pw_gelu_backward_f32 (kernels/common/ufunc/activation_lm.h) on whole vectors, with the
 * vector exp and tanh of exp_f32_vec.h (the project's float32 exp and tanh, bit for bit;
 * SLEEF's tanhf costs three times as much here). 'none' uses the erf below (SLEEF's erff
 * costs about three times as much too), within 2 ulp of erff for |z| <= 1 and 1.2 ulp of 1
 * above, which gelu turns into an error below 3e-7 absolute (|x| * 0.5 * the error of erf) or
 * 4 ulp relative. They are the only float32 gelu of the CPU: every float32, float16 and
 * bfloat16 element goes through them (ufunc.c), the tail too. */
#ifndef TG_VEC_ACTIVATION_LM_H
#define TG_VEC_ACTIVATION_LM_H

#include "exp_f32_vec.h"
#include "ufunc/activation_lm.h"

/* erf(z) for float32 lanes: z * P(z^2) for |z| <= 1; 1 - exp(-z^2) * Q(1/|z|) above, with the
 * sign of z. P and Q are least-squares fits (relative error) of erf(z) / z on [0, 1] and of
 * erfc(z) exp(z^2) on 1/z in [1/4, 1] (erfc(4) = 1.5e-8 is below float32's resolution of 1,
 * and Q extrapolates to the finite Q(0) for larger z, where exp(-z^2) is 0). NaN stays NaN,
 * +-inf gives +-1. */
static inline tg_vf tg__vf_erf(tg_vf z)
{
    const tg_vu sign = (tg_vu)z & 0x80000000u;
    const tg_vf a = (tg_vf)((tg_vu)z ^ sign);
    const tg_vf z2 = z * z;
    tg_vf p = tg__vf_splat(7.898066371e-05f);
    p = p * z2 - 8.024311698e-04f;
    p = p * z2 + 5.190048821e-03f;
    p = p * z2 - 2.685480602e-02f;
    p = p * z2 + 1.128361236e-01f;
    p = p * z2 - 3.761262884e-01f;
    p = p * z2 + 1.128379167e+00f;
    const tg_vf small = a * p;
    /* Every lane in [0, 1] (most of a network's activations): the tail branch is not needed
     * (the select below would discard it), so skip its exp and division. */
    const tg_vi big = a > 1.0f;
    int any_big = 0;
    for (int i = 0; i < TG_VF_LANES; i++) any_big |= big[i];
    if (!any_big) return (tg_vf)((tg_vu)small | sign);
    const tg_vf t = 1.0f / a;
    tg_vf q = tg__vf_splat(-1.007641349e-02f);
    q = q * t + 3.165923552e-02f;
    q = q * t + 1.720391422e-02f;
    q = q * t - 2.342589087e-01f;
    q = q * t + 4.915410884e-01f;
    q = q * t - 4.692467668e-01f;
    q = q * t + 4.135375550e-02f;
    q = q * t + 5.591441379e-01f;
    q = q * t + 2.635122419e-04f;
    const tg_vf large = 1.0f - tg__vf_exp(-z2) * q;
    const tg_vf r = tg__vf_select(a <= 1.0f, small, large);
    return (tg_vf)((tg_vu)r | sign);
}

/* x * 0.5 * (1 + erf(x / sqrt 2)) */
static inline tg_vf tg__vf_gelu_none(tg_vf x)
{
    return x * 0.5f * (1.0f + tg__vf_erf(x * (float)TG_GELU_SQRT1_2));
}

/* 0.5 * x * (1 + tanh(beta * (x + kappa * x^3))) */
static inline tg_vf tg__vf_gelu_tanh(tg_vf x)
{
    const tg_vf inner = (float)TG_GELU_BETA * (x + (float)TG_GELU_KAPPA * x * x * x);
    return 0.5f * x * (1.0f + tg__vf_tanh(inner));
}

/* g * (cdf + x * pdf): tg__pw_gelu_backward_f32's 'none' formula. */
static inline tg_vf tg__vf_gelu_backward_none(tg_vf g, tg_vf x)
{
    const tg_vf cdf = 0.5f * (1.0f + tg__vf_erf(x * (float)TG_GELU_SQRT1_2));
    const tg_vf pdf = (float)TG_GELU_PDF * tg__vf_exp(-0.5f * x * x);
    return g * (cdf + x * pdf);
}

/* g * (0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2)): the 'tanh' formula. */
static inline tg_vf tg__vf_gelu_backward_tanh(tg_vf g, tg_vf x)
{
    const tg_vf x_sq = x * x;
    const tg_vf t = tg__vf_tanh((float)TG_GELU_BETA * (x + (float)TG_GELU_KAPPA * x_sq * x));
    const tg_vf inner_derivative =
        (float)TG_GELU_BETA * (1.0f + 3.0f * (float)TG_GELU_KAPPA * x_sq);
    return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * inner_derivative);
}

/* f over whole vectors of g and x, the tail through zero-padded buffers. */
static inline __attribute__((always_inline)) void
tg__vf_map2_all(tg_vf (*f)(tg_vf, tg_vf), float *out, const float *g, const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + TG_VF_LANES <= n; i += TG_VF_LANES)
        tg__vf_store(out + i, f(tg__vf_load(g + i), tg__vf_load(x + i)));
    if (i == n) return;
    float gb[TG_VF_LANES] = { 0 }, xb[TG_VF_LANES] = { 0 };
    memcpy(gb, g + i, (size_t)(n - i) * sizeof *gb);
    memcpy(xb, x + i, (size_t)(n - i) * sizeof *xb);
    tg__vf_store(gb, f(tg__vf_load(gb), tg__vf_load(xb)));
    memcpy(out + i, gb, (size_t)(n - i) * sizeof *gb);
}

/* out[i] = gelu(x[i]) and out[i] = g[i] * gelu'(x[i]) over contiguous arrays; approximate 1 is
 * 'tanh', 0 'none'. */
static inline void tg__vec_gelu_f32(float *out, const float *x, int64_t n, int approximate)
{
    if (approximate) tg__vf_map_all(tg__vf_gelu_tanh, out, x, n);
    else tg__vf_map_all(tg__vf_gelu_none, out, x, n);
}
static inline void tg__vec_gelu_backward_f32(float *out, const float *g, const float *x, int64_t n,
                                             int approximate)
{
    if (approximate) tg__vf_map2_all(tg__vf_gelu_backward_tanh, out, g, x, n);
    else tg__vf_map2_all(tg__vf_gelu_backward_none, out, g, x, n);
}

#endif
