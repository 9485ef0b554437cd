/* float32 exp, sigmoid, log and tanh over contiguous arrays, written once with GCC's vector
 * extensions: the vector width is the capability's this file is compiled for (16 lanes with
 * AVX-512, 8 with AVX2, 4 with SSE2; kernels/cpu/cap/ builds it once per capability), and the
 * compiler emits that capability's instructions. Each function repeats its scalar reference in
 * kernels/common/pointwise_scalar.h (tg__pw_exp_f32, _sigmoid_f32, _log_f32, _tanh_f32)
 * operation for operation, so every capability gives the reference's bits (tests/ops/
 * test_vecmath.c and test_pointwise.c check that):
 *   - multiplies and adds stay separate (no FMA): the reference is compiled with -std=c11,
 *     where gcc does not contract them, and so is this;
 *   - the reference's selects (`y = cond ? a : b`) are bit selects on the comparison masks;
 *   - exp's scaling by 2^n is the reference's own, in integers: n1 = n / 2 (truncating),
 *     2^n1 and 2^(n - n1) built from exponent bits, y = (p * 2^n1) * 2^(n - n1).
 * Special inputs go through the arithmetic with whatever bits they have and are replaced at
 * the end, as in the references.
 *
 * Included by the per-capability code only: the vector forms of the pointwise operators
 * (kernels/cpu/vec/unary.h, vec/activation_lm.h). */
#ifndef TG_EXP_F32_VEC_H
#define TG_EXP_F32_VEC_H

#include "vec_f32.h"

#include <stdint.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__)
/* exp on 16 lanes with AVX-512's own instructions: 2^n applied with vscalefps (one rounding:
 * the same result as the reference's (p * 2^(n/2)) * 2^(n - n/2), whose first product is
 * exact) and the selects on mask registers; ~1.4x the generic form below, for which gcc turns
 * each comparison into a mask register and back. Bit-identical to tg__pw_exp_f32 too. */
static inline __m512 tg__exp512(__m512 v)
{
    const __m512 hi = _mm512_set1_ps(88.72283935546875f), lo = _mm512_set1_ps(-103.97283172607422f);
    const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
    const __m512 ln2_hi = _mm512_set1_ps(0.693359375f), ln2_lo = _mm512_set1_ps(-2.12194440e-4f);
    const __m512 magic = _mm512_set1_ps(12582912.0f);
    const __m512 c0 = _mm512_set1_ps(1.9875691500e-4f), c1 = _mm512_set1_ps(1.3981999507e-3f);
    const __m512 c2 = _mm512_set1_ps(8.3334519073e-3f), c3 = _mm512_set1_ps(4.1665795894e-2f);
    const __m512 c4 = _mm512_set1_ps(1.6666665459e-1f), c5 = _mm512_set1_ps(5.0000001201e-1f);
    const __m512 one = _mm512_set1_ps(1.0f), inf = _mm512_set1_ps(__builtin_inff());
    __mmask16 is_nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    __mmask16 too_big = _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ);
    __mmask16 too_small = _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ);
    /* Clamp; NaN lanes become 0 (as in the reference) and are replaced at the end. */
    __m512 xc = _mm512_mask_blend_ps(too_big, v, hi);
    xc = _mm512_mask_blend_ps(too_small, xc, lo);
    xc = _mm512_mask_blend_ps(is_nan, xc, _mm512_setzero_ps());

    __m512 t = _mm512_add_ps(_mm512_mul_ps(xc, log2e), magic);
    __m512 nf = _mm512_sub_ps(t, magic);
    __m512 r = _mm512_sub_ps(xc, _mm512_mul_ps(nf, ln2_hi));
    r = _mm512_sub_ps(r, _mm512_mul_ps(nf, ln2_lo));

    __m512 p = c0;
    p = _mm512_add_ps(_mm512_mul_ps(p, r), c1);
    p = _mm512_add_ps(_mm512_mul_ps(p, r), c2);
    p = _mm512_add_ps(_mm512_mul_ps(p, r), c3);
    p = _mm512_add_ps(_mm512_mul_ps(p, r), c4);
    p = _mm512_add_ps(_mm512_mul_ps(p, r), c5);
    p = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(p, r), r), r), one);

    __m512 y = _mm512_scalef_ps(p, nf);
    y = _mm512_mask_blend_ps(too_big, y, inf);
    y = _mm512_mask_blend_ps(too_small, y, _mm512_setzero_ps());
    y = _mm512_mask_blend_ps(is_nan, y, _mm512_add_ps(v, v));
    return y;
}
#endif

/* tg__pw_exp_f32 on every lane. */
static inline tg_vf tg__vf_exp(tg_vf x)
{
#if defined(__AVX512F__)
    return (tg_vf)tg__exp512((__m512)x);
#endif
    const float hi_limit = 88.72283935546875f, lo_limit = -103.97283172607422f;
    const float round_magic = 12582912.0f;
    tg_vf xc = tg__vf_select(x > hi_limit, tg__vf_splat(hi_limit), x);
    xc = tg__vf_select(xc < lo_limit, tg__vf_splat(lo_limit), xc);
    xc = tg__vf_select(xc == xc, xc, tg__vf_splat(0.0f));

    tg_vf t = xc * 1.44269504088896341f + round_magic;
    tg_vi n = (tg_vi)((tg_vu)t - (tg_vu)tg__vf_splat(round_magic));
    tg_vf nf = t - round_magic;
    tg_vf r = xc - nf * 0.693359375f;
    r = r - nf * -2.12194440e-4f;

    static const float poly[] = { 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                                  1.6666665459e-1f, 5.0000001201e-1f };
    tg_vf p = tg__vf_splat(1.9875691500e-4f);
    for (int k = 0; k < 5; k++) p = p * r + poly[k]; /* Horner, as the reference */
    p = p * r * r + r + 1.0f;

    tg_vi n1 = (n + (tg_vi)((tg_vu)n >> 31)) >> 1; /* n / 2, truncating like C's */
    tg_vi n2 = n - n1;
    tg_vf y =
        (p * tg__vf_from_bits((tg_vu)(n1 + 127) << 23)) * tg__vf_from_bits((tg_vu)(n2 + 127) << 23);

    y = tg__vf_select(x > hi_limit, tg__vf_splat(__builtin_inff()), y);
    y = tg__vf_select(x < lo_limit, tg__vf_splat(0.0f), y);
    return tg__vf_select(x == x, y, x + x);
}

/* tg__pw_log_f32 on every lane. */
static inline tg_vf tg__vf_log(tg_vf x)
{
    const uint32_t sqrt_half = 0x3f3504f3;
    tg_vi sub = x < 1.17549435e-38f;
    tg_vf xs = tg__vf_select(sub, x * 33554432.0f, x);
    tg_vu t = (tg_vu)xs - sqrt_half;
    tg_vi e = ((tg_vi)t >> 23) - (sub & 25);
    tg_vf m = tg__vf_from_bits((t & 0x007fffffu) + sqrt_half);
    tg_vf f = m - 1.0f;
    tg_vf s = f / (2.0f + f);
    tg_vf z = s * s;
    static const float poly[] = { 2.8571429e-1f, 4.0000001e-1f, 6.6666669e-1f };
    tg_vf r = tg__vf_splat(2.2222222e-1f);
    for (int k = 0; k < 3; k++) r = r * z + poly[k];
    r = r * z;
    tg_vf hfsq = 0.5f * f * f;
    tg_vf ef = __builtin_convertvector(e, tg_vf);
    tg_vf y = ef * 0.693359375f + ((f - hfsq) + (s * (hfsq + r) + ef * -2.12194440e-4f));

    y = tg__vf_select(x == __builtin_inff(), x, y);
    y = tg__vf_select(x < 0.0f, tg__vf_splat(__builtin_nanf("")), y);
    y = tg__vf_select(x == 0.0f, tg__vf_splat(-__builtin_inff()), y);
    return tg__vf_select(x == x, y, x + x);
}

/* tg__pw_tanh_f32 on every lane. */
static inline tg_vf tg__vf_tanh(tg_vf x)
{
    const tg_vu sign = (tg_vu)tg__vf_splat(-0.0f);
    tg_vf a = tg__vf_from_bits((tg_vu)x & ~sign);
    tg_vf z = x * x;
    static const float poly[] = { 2.0637978e-2f, -5.3739198e-2f, 1.3331433e-1f, -3.3333281e-1f };
    tg_vf p = tg__vf_splat(-5.7041571e-3f);
    for (int k = 0; k < 4; k++) p = p * z + poly[k];
    tg_vf small = x + x * (z * p);
    small = tg__vf_select(x == 0.0f, x, small);
    tg_vf big = 1.0f - 2.0f / (tg__vf_exp(a + a) + 1.0f);
    big = tg__vf_from_bits((tg_vu)big | ((tg_vu)x & sign));
    return tg__vf_select(a < 0.625f, small, big);
}

/* sigmoid(x) = 1 / (1 + exp(-x)), as tg__pw_sigmoid_f32 computes it. */
static inline tg_vf tg__vf_sigmoid(tg_vf x) { return 1.0f / (1.0f + tg__vf_exp(-x)); }

#endif
