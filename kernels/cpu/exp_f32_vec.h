/* float32 exp (and sigmoid, log, tanh: see below) over contiguous arrays with AVX-512: the same arithmetic as tg__pw_exp_f32
 * (pointwise_scalar.h), operation for operation, so results are bit-identical to the scalar
 * reference (the tests check that). Two things make it about twice as fast as the
 * auto-vectorised scalar function:
 *   - 2^n is applied with vscalefps, which multiplies by 2^n with a single rounding: the same
 *     result as the reference's (p * 2^(n/2)) * 2^(n - n/2), whose first product is exact;
 *   - n stays a float, so there are no integer conversions or shifts.
 * The multiplies and adds are kept separate (no FMA) because the reference is compiled with
 * -std=c11, where gcc does not contract them.
 * With AVX2 (8 lanes, no vscalefps) the reference's own scaling is done in integers:
 * n = bits(t) - bits(magic), n1 = n / 2 (truncating, as C does), 2^n1 and 2^(n - n1) built
 * from their exponent bits, y = (p * 2^n1) * 2^(n - n1): again operation for operation the
 * reference, so again bit-identical. The baseline build (SSE2) does the same on 4 lanes
 * (tg__exp128; gcc does not vectorise the scalar function there, so without it the default
 * capability ran exp one element at a time). Without SSE2 (off x86) this processes nothing
 * and the caller's loop over tg__pw_exp_f32 does all the work.
 * Included only by the per-capability files (kernels/cpu/cap/), which are compiled with the
 * flags that define __AVX512F__ / __AVX2__. */
#ifndef TG_EXP_F32_VEC_H
#define TG_EXP_F32_VEC_H

#include <stdint.h>
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__AVX512F__)
/* exp of 16 lanes, bit-identical to tg__pw_exp_f32 on each. */
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
#elif defined(__AVX2__)
/* exp of 8 lanes, bit-identical to tg__pw_exp_f32 on each. */
static inline __m256 tg__exp256(__m256 v)
{
    const __m256 hi = _mm256_set1_ps(88.72283935546875f), lo = _mm256_set1_ps(-103.97283172607422f);
    const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
    const __m256 ln2_hi = _mm256_set1_ps(0.693359375f), ln2_lo = _mm256_set1_ps(-2.12194440e-4f);
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    const __m256 c0 = _mm256_set1_ps(1.9875691500e-4f), c1 = _mm256_set1_ps(1.3981999507e-3f);
    const __m256 c2 = _mm256_set1_ps(8.3334519073e-3f), c3 = _mm256_set1_ps(4.1665795894e-2f);
    const __m256 c4 = _mm256_set1_ps(1.6666665459e-1f), c5 = _mm256_set1_ps(5.0000001201e-1f);
    const __m256 one = _mm256_set1_ps(1.0f), inf = _mm256_set1_ps(__builtin_inff());
    const __m256i bias = _mm256_set1_epi32(127);
    __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    __m256 too_big = _mm256_cmp_ps(v, hi, _CMP_GT_OQ);
    __m256 too_small = _mm256_cmp_ps(v, lo, _CMP_LT_OQ);
    __m256 xc = _mm256_blendv_ps(v, hi, too_big);
    xc = _mm256_blendv_ps(xc, lo, too_small);
    xc = _mm256_andnot_ps(is_nan, xc); /* NaN lanes become 0, as in the reference */

    __m256 t = _mm256_add_ps(_mm256_mul_ps(xc, log2e), magic);
    __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
    __m256 nf = _mm256_sub_ps(t, magic);
    __m256 r = _mm256_sub_ps(xc, _mm256_mul_ps(nf, ln2_hi));
    r = _mm256_sub_ps(r, _mm256_mul_ps(nf, ln2_lo));

    __m256 p = c0;
    p = _mm256_add_ps(_mm256_mul_ps(p, r), c1);
    p = _mm256_add_ps(_mm256_mul_ps(p, r), c2);
    p = _mm256_add_ps(_mm256_mul_ps(p, r), c3);
    p = _mm256_add_ps(_mm256_mul_ps(p, r), c4);
    p = _mm256_add_ps(_mm256_mul_ps(p, r), c5);
    p = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(p, r), r), r), one);

    /* n1 = n / 2 rounded toward zero: add the sign bit before the arithmetic shift */
    __m256i n1 = _mm256_srai_epi32(_mm256_add_epi32(ni, _mm256_srli_epi32(ni, 31)), 1);
    __m256i n2 = _mm256_sub_epi32(ni, n1);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);

    y = _mm256_blendv_ps(y, inf, too_big);
    y = _mm256_andnot_ps(too_small, y);
    y = _mm256_blendv_ps(y, _mm256_add_ps(v, v), is_nan);
    return y;
}
#elif defined(__SSE2__)
/* exp of 4 lanes with SSE2 only (the baseline build): the AVX2 form with the blends done as
 * and/andnot/or; bit-identical to tg__pw_exp_f32 on each. */
static inline __m128 tg__exp128(__m128 v)
{
    const __m128 hi = _mm_set1_ps(88.72283935546875f), lo = _mm_set1_ps(-103.97283172607422f);
    const __m128 log2e = _mm_set1_ps(1.44269504088896341f);
    const __m128 ln2_hi = _mm_set1_ps(0.693359375f), ln2_lo = _mm_set1_ps(-2.12194440e-4f);
    const __m128 magic = _mm_set1_ps(12582912.0f);
    const __m128 one = _mm_set1_ps(1.0f), inf = _mm_set1_ps(__builtin_inff());
    const __m128i bias = _mm_set1_epi32(127);
    __m128 is_nan = _mm_cmpunord_ps(v, v);
    __m128 too_big = _mm_cmpgt_ps(v, hi);
    __m128 too_small = _mm_cmplt_ps(v, lo);
    __m128 xc = _mm_or_ps(_mm_andnot_ps(too_big, v), _mm_and_ps(too_big, hi));
    xc = _mm_or_ps(_mm_andnot_ps(too_small, xc), _mm_and_ps(too_small, lo));
    xc = _mm_andnot_ps(is_nan, xc); /* NaN lanes become 0, as in the reference */

    __m128 t = _mm_add_ps(_mm_mul_ps(xc, log2e), magic);
    __m128i ni = _mm_sub_epi32(_mm_castps_si128(t), _mm_castps_si128(magic));
    __m128 nf = _mm_sub_ps(t, magic);
    __m128 r = _mm_sub_ps(xc, _mm_mul_ps(nf, ln2_hi));
    r = _mm_sub_ps(r, _mm_mul_ps(nf, ln2_lo));

    __m128 p = _mm_set1_ps(1.9875691500e-4f);
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.3981999507e-3f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(8.3334519073e-3f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(4.1665795894e-2f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.6666665459e-1f));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(5.0000001201e-1f));
    p = _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_mul_ps(p, r), r), r), one);

    /* n1 = n / 2 rounded toward zero: add the sign bit before the arithmetic shift */
    __m128i n1 = _mm_srai_epi32(_mm_add_epi32(ni, _mm_srli_epi32(ni, 31)), 1);
    __m128i n2 = _mm_sub_epi32(ni, n1);
    __m128 s1 = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n1, bias), 23));
    __m128 s2 = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n2, bias), 23));
    __m128 y = _mm_mul_ps(_mm_mul_ps(p, s1), s2);

    y = _mm_or_ps(_mm_andnot_ps(too_big, y), _mm_and_ps(too_big, inf));
    y = _mm_andnot_ps(too_small, y);
    y = _mm_or_ps(_mm_andnot_ps(is_nan, y), _mm_and_ps(is_nan, _mm_add_ps(v, v)));
    return y;
}
#endif

/* Computes out[i] = exp(x[i]) for a prefix of [0, n) that is a multiple of 16 (8 with AVX2)
 * and returns its length; the caller finishes the rest. */
static inline int64_t tg__exp_f32_vec(float *out, const float *x, int64_t n)
{
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, tg__exp512(_mm512_loadu_ps(x + i)));
#elif defined(__AVX2__)
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, tg__exp256(_mm256_loadu_ps(x + i)));
#elif defined(__SSE2__)
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(out + i, tg__exp128(_mm_loadu_ps(x + i)));
#else
    (void)out;
    (void)x;
    (void)n;
#endif
    return i;
}

/* sigmoid(x) = 1 / (1 + exp(-x)), as tg__pw_sigmoid_f32 computes it (a correctly rounded
 * division of the same exp), so again bit-identical; same prefix contract as above. */
static inline int64_t tg__sigmoid_f32_vec(float *out, const float *x, int64_t n)
{
    int64_t i = 0;
#if defined(__AVX512F__)
    const __m512 one = _mm512_set1_ps(1.0f), sign = _mm512_set1_ps(-0.0f);
    for (; i + 16 <= n; i += 16) {
        __m512 e = tg__exp512(_mm512_castsi512_ps(_mm512_xor_si512(
            _mm512_castps_si512(_mm512_loadu_ps(x + i)), _mm512_castps_si512(sign))));
        _mm512_storeu_ps(out + i, _mm512_div_ps(one, _mm512_add_ps(one, e)));
    }
#elif defined(__AVX2__)
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    for (; i + 8 <= n; i += 8) {
        __m256 e = tg__exp256(_mm256_xor_ps(_mm256_loadu_ps(x + i), sign));
        _mm256_storeu_ps(out + i, _mm256_div_ps(one, _mm256_add_ps(one, e)));
    }
#elif defined(__SSE2__)
    const __m128 one = _mm_set1_ps(1.0f), sign = _mm_set1_ps(-0.0f);
    for (; i + 4 <= n; i += 4) {
        __m128 e = tg__exp128(_mm_xor_ps(_mm_loadu_ps(x + i), sign));
        _mm_storeu_ps(out + i, _mm_div_ps(one, _mm_add_ps(one, e)));
    }
#else
    (void)out;
    (void)x;
    (void)n;
#endif
    return i;
}

/* log and tanh, operation for operation tg__pw_log_f32 / tg__pw_tanh_f32 (pointwise_scalar.h
 * explains the methods), so again bit-identical; same prefix contract as exp. The special
 * inputs go through the main arithmetic with whatever bits they have and are replaced at the
 * end, as in the scalar functions' selects. */
#if defined(__AVX512F__)
static inline __m512 tg__log512(__m512 x)
{
    const __m512 ln2_hi = _mm512_set1_ps(0.693359375f), ln2_lo = _mm512_set1_ps(-2.12194440e-4f);
    const __m512i sqrt_half = _mm512_set1_epi32(0x3f3504f3), mant = _mm512_set1_epi32(0x007fffff);
    const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f),
                 half = _mm512_set1_ps(0.5f);
    __mmask16 sub = _mm512_cmp_ps_mask(x, _mm512_set1_ps(1.17549435e-38f), _CMP_LT_OQ);
    __m512 xs = _mm512_mask_mul_ps(x, sub, x, _mm512_set1_ps(33554432.0f));
    __m512i t = _mm512_sub_epi32(_mm512_castps_si512(xs), sqrt_half);
    __m512i e = _mm512_mask_sub_epi32(_mm512_srai_epi32(t, 23), sub, _mm512_srai_epi32(t, 23),
                                      _mm512_set1_epi32(25));
    __m512 m = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_and_si512(t, mant), sqrt_half));
    __m512 f = _mm512_sub_ps(m, one);
    __m512 s = _mm512_div_ps(f, _mm512_add_ps(two, f));
    __m512 z = _mm512_mul_ps(s, s);
    __m512 r = _mm512_set1_ps(2.2222222e-1f);
    r = _mm512_add_ps(_mm512_mul_ps(r, z), _mm512_set1_ps(2.8571429e-1f));
    r = _mm512_add_ps(_mm512_mul_ps(r, z), _mm512_set1_ps(4.0000001e-1f));
    r = _mm512_add_ps(_mm512_mul_ps(r, z), _mm512_set1_ps(6.6666669e-1f));
    r = _mm512_mul_ps(r, z);
    __m512 hfsq = _mm512_mul_ps(_mm512_mul_ps(half, f), f);
    __m512 ef = _mm512_cvtepi32_ps(e);
    __m512 lo = _mm512_add_ps(_mm512_mul_ps(s, _mm512_add_ps(hfsq, r)), _mm512_mul_ps(ef, ln2_lo));
    __m512 y = _mm512_add_ps(_mm512_mul_ps(ef, ln2_hi), _mm512_add_ps(_mm512_sub_ps(f, hfsq), lo));

    const __m512 inf = _mm512_set1_ps(__builtin_inff());
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, inf, _CMP_EQ_OQ), y, x);
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), y,
                             _mm512_set1_ps(__builtin_nanf("")));
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ), y,
                             _mm512_set1_ps(-__builtin_inff()));
    y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, _mm512_add_ps(x, x));
    return y;
}

static inline __m512 tg__tanh512(__m512 x)
{
    const __m512 sign = _mm512_set1_ps(-0.0f), one = _mm512_set1_ps(1.0f);
    __m512 a =
        _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_castps_si512(sign), _mm512_castps_si512(x)));
    __m512 z = _mm512_mul_ps(x, x);
    __m512 p = _mm512_set1_ps(-5.7041571e-3f);
    p = _mm512_add_ps(_mm512_mul_ps(p, z), _mm512_set1_ps(2.0637978e-2f));
    p = _mm512_add_ps(_mm512_mul_ps(p, z), _mm512_set1_ps(-5.3739198e-2f));
    p = _mm512_add_ps(_mm512_mul_ps(p, z), _mm512_set1_ps(1.3331433e-1f));
    p = _mm512_add_ps(_mm512_mul_ps(p, z), _mm512_set1_ps(-3.3333281e-1f));
    __m512 small = _mm512_add_ps(x, _mm512_mul_ps(x, _mm512_mul_ps(z, p)));
    small = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ), small, x);
    __m512 e = tg__exp512(_mm512_add_ps(a, a));
    __m512 big = _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, one)));
    big = _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_castps_si512(big),
                        _mm512_and_si512(_mm512_castps_si512(x), _mm512_castps_si512(sign))));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(0.625f), _CMP_LT_OQ), big,
                                small);
}
#elif defined(__AVX2__)
static inline __m256 tg__log256(__m256 x)
{
    const __m256 ln2_hi = _mm256_set1_ps(0.693359375f), ln2_lo = _mm256_set1_ps(-2.12194440e-4f);
    const __m256i sqrt_half = _mm256_set1_epi32(0x3f3504f3), mant = _mm256_set1_epi32(0x007fffff);
    const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f),
                 half = _mm256_set1_ps(0.5f);
    __m256 sub = _mm256_cmp_ps(x, _mm256_set1_ps(1.17549435e-38f), _CMP_LT_OQ);
    __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(33554432.0f)), sub);
    __m256i t = _mm256_sub_epi32(_mm256_castps_si256(xs), sqrt_half);
    __m256i e = _mm256_sub_epi32(_mm256_srai_epi32(t, 23),
                                 _mm256_and_si256(_mm256_castps_si256(sub), _mm256_set1_epi32(25)));
    __m256 m = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_and_si256(t, mant), sqrt_half));
    __m256 f = _mm256_sub_ps(m, one);
    __m256 s = _mm256_div_ps(f, _mm256_add_ps(two, f));
    __m256 z = _mm256_mul_ps(s, s);
    __m256 r = _mm256_set1_ps(2.2222222e-1f);
    r = _mm256_add_ps(_mm256_mul_ps(r, z), _mm256_set1_ps(2.8571429e-1f));
    r = _mm256_add_ps(_mm256_mul_ps(r, z), _mm256_set1_ps(4.0000001e-1f));
    r = _mm256_add_ps(_mm256_mul_ps(r, z), _mm256_set1_ps(6.6666669e-1f));
    r = _mm256_mul_ps(r, z);
    __m256 hfsq = _mm256_mul_ps(_mm256_mul_ps(half, f), f);
    __m256 ef = _mm256_cvtepi32_ps(e);
    __m256 lo = _mm256_add_ps(_mm256_mul_ps(s, _mm256_add_ps(hfsq, r)), _mm256_mul_ps(ef, ln2_lo));
    __m256 y = _mm256_add_ps(_mm256_mul_ps(ef, ln2_hi), _mm256_add_ps(_mm256_sub_ps(f, hfsq), lo));

    const __m256 inf = _mm256_set1_ps(__builtin_inff()), zero = _mm256_setzero_ps();
    y = _mm256_blendv_ps(y, x, _mm256_cmp_ps(x, inf, _CMP_EQ_OQ));
    y = _mm256_blendv_ps(y, _mm256_set1_ps(__builtin_nanf("")), _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
    y = _mm256_blendv_ps(y, _mm256_set1_ps(-__builtin_inff()), _mm256_cmp_ps(x, zero, _CMP_EQ_OQ));
    y = _mm256_blendv_ps(y, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return y;
}

static inline __m256 tg__tanh256(__m256 x)
{
    const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
    __m256 a = _mm256_andnot_ps(sign, x);
    __m256 z = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(-5.7041571e-3f);
    p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(2.0637978e-2f));
    p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(-5.3739198e-2f));
    p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(1.3331433e-1f));
    p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(-3.3333281e-1f));
    __m256 small = _mm256_add_ps(x, _mm256_mul_ps(x, _mm256_mul_ps(z, p)));
    small = _mm256_blendv_ps(small, x, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
    __m256 e = tg__exp256(_mm256_add_ps(a, a));
    __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
    big = _mm256_or_ps(big, _mm256_and_ps(x, sign));
    return _mm256_blendv_ps(big, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
}
#endif

static inline int64_t tg__log_f32_vec(float *out, const float *x, int64_t n)
{
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, tg__log512(_mm512_loadu_ps(x + i)));
#elif defined(__AVX2__)
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, tg__log256(_mm256_loadu_ps(x + i)));
#else
    (void)out;
    (void)x;
    (void)n;
#endif
    return i;
}

static inline int64_t tg__tanh_f32_vec(float *out, const float *x, int64_t n)
{
    int64_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, tg__tanh512(_mm512_loadu_ps(x + i)));
#elif defined(__AVX2__)
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, tg__tanh256(_mm256_loadu_ps(x + i)));
#else
    (void)out;
    (void)x;
    (void)n;
#endif
    return i;
}

#endif
