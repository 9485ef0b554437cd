/* The float32 softmax / log_softmax row (softmax_rows.h, softmax.c), compiled once per CPU
 * capability: the portable three passes everywhere, and with AVX2 + FMA the same passes in
 * intrinsics, whose exp is exp256_nonpos, the AVX2 form of tg__pw_exp_f32 (same algorithm and
 * constants) specialised to x <= 0; rows whose max is not finite, and vector tails, use
 * tg__pw_exp_f32 itself. */
#include "core/core.h"
#include "pointwise_scalar.h"
#include "softmax_rows.h"

#include <math.h>

/* Portable float32 row, the same three passes. */
static void softmax_row_f32(const float *x, float *y, int64_t n, bool lg)
{
    float m = -INFINITY, s = 0;
    for (int64_t k = 0; k < n; k++) {
        if (x[k] != x[k]) {
            m = NAN;
            break;
        }
        m = x[k] > m ? x[k] : m;
    }
    for (int64_t k = 0; k < n; k++) {
        float e = tg__pw_exp_f32(x[k] - m);
        if (!lg) y[k] = e;
        s += e;
    }
    float c = m + logf(s), r = 1.0f / s;
    for (int64_t k = 0; k < n; k++) y[k] = lg ? x[k] - c : y[k] * r;
}

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

/* e^x for x <= 0 (softmax feeds it x - max, never NaN: rows with a non-finite max take the
 * scalar path). The algorithm and constants of tg__pw_exp_f32: n = round(x / ln 2),
 * r = x - n ln 2 (Cody-Waite), e^r by Cephes' polynomial, times 2^n. Restricting the domain
 * drops the overflow, NaN and split-scale (subnormal) cases: n is in [-126, 0] so 2^n is one
 * normal exponent, and x below -87.34 (where e^x < FLT_MIN) gives 0. Half the instructions of
 * the general version; results agree with it wherever e^x >= FLT_MIN. */
static inline __m256 exp256_nonpos(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.33654475f); /* ln(FLT_MIN) */
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 xc = _mm256_max_ps(x, lo);
    __m256 t = _mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), magic);
    __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
    __m256 nf = _mm256_sub_ps(t, magic);
    __m256 r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(0.693359375f), xc);
    r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256 scale =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
    return _mm256_and_ps(_mm256_mul_ps(p, scale), _mm256_cmp_ps(x, lo, _CMP_GE_OQ));
}

static inline float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Row max; NaN anywhere gives NaN. */
static float row_max_avx2(const float *x, int64_t n)
{
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, bad = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        __m256 a = _mm256_loadu_ps(x + k), b = _mm256_loadu_ps(x + k + 8);
        m0 = _mm256_max_ps(m0, a);
        m1 = _mm256_max_ps(m1, b);
        bad = _mm256_or_ps(bad, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
    }
    m0 = _mm256_max_ps(m0, m1);
    float t[8], m = -INFINITY;
    _mm256_storeu_ps(t, m0);
    for (int i = 0; i < 8; i++) m = t[i] > m ? t[i] : m;
    if (_mm256_movemask_ps(bad)) return NAN;
    for (; k < n; k++) {
        if (x[k] != x[k]) return NAN;
        m = x[k] > m ? x[k] : m;
    }
    return m;
}

/* One float32 row. `tmp` (n floats, L1-resident) holds exp(x - m) between passes 2 and 3 so
 * that y is written exactly once, with non-temporal stores when y is 32-byte aligned: the row
 * never has to be read into the cache before being overwritten (no write-allocate traffic). */
static void softmax_row_avx2(const float *x, float *y, float *tmp, int64_t n, bool lg)
{
    float m = row_max_avx2(x, n);
    if (!isfinite(m)) { /* NaN, or an infinite max: the general exp handles those rows */
        softmax_row_f32(x, y, n, lg);
        return;
    }
    __m256 vm = _mm256_set1_ps(m), s0 = _mm256_setzero_ps(), s1 = s0;
    float *e = lg ? NULL : tmp;
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        __m256 a = exp256_nonpos(_mm256_sub_ps(_mm256_loadu_ps(x + k), vm));
        __m256 b = exp256_nonpos(_mm256_sub_ps(_mm256_loadu_ps(x + k + 8), vm));
        if (e) {
            _mm256_storeu_ps(e + k, a);
            _mm256_storeu_ps(e + k + 8, b);
        }
        s0 = _mm256_add_ps(s0, a);
        s1 = _mm256_add_ps(s1, b);
    }
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; k < n; k++) {
        float v = tg__pw_exp_f32(x[k] - m);
        if (e) e[k] = v;
        s += v;
    }
    bool nt = ((uintptr_t)y & 31) == 0;
    if (lg) {
        float c = m + logf(s);
        __m256 vc = _mm256_set1_ps(c);
        for (k = 0; k + 8 <= n; k += 8) {
            __m256 v = _mm256_sub_ps(_mm256_loadu_ps(x + k), vc);
            if (nt) _mm256_stream_ps(y + k, v);
            else _mm256_storeu_ps(y + k, v);
        }
        for (; k < n; k++) y[k] = x[k] - c;
    } else {
        float r = 1.0f / s;
        __m256 vr = _mm256_set1_ps(r);
        for (k = 0; k + 8 <= n; k += 8) {
            __m256 v = _mm256_mul_ps(_mm256_loadu_ps(e + k), vr);
            if (nt) _mm256_stream_ps(y + k, v);
            else _mm256_storeu_ps(y + k, v);
        }
        for (; k < n; k++) y[k] = e[k] * r;
    }
}

static void finish_avx2(void)
{
    _mm_sfence(); /* order the non-temporal stores before the caller reads y */
}

/* exp_shift_f32: eight lanes at a time through exp256_nonpos when x - shift is at most 0 and
 * not NaN in every lane (a lane a rounding above the shift, or NaN, takes tg__pw_exp_f32). */
static float exp_shift_avx2(float *x, int64_t n, float shift)
{
    const __m256 vs = _mm256_set1_ps(shift), zero = _mm256_setzero_ps();
    __m256 acc = zero;
    float s = 0;
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + k), vs);
        if (_mm256_movemask_ps(_mm256_cmp_ps(d, zero, _CMP_NLE_UQ)) == 0) {
            __m256 e = exp256_nonpos(d);
            _mm256_storeu_ps(x + k, e);
            acc = _mm256_add_ps(acc, e);
        } else {
            for (int i = 0; i < 8; i++) {
                x[k + i] = tg__pw_exp_f32(x[k + i] - shift);
                s += x[k + i];
            }
        }
    }
    for (; k < n; k++) {
        x[k] = tg__pw_exp_f32(x[k] - shift);
        s += x[k];
    }
    return s + hsum256(acc);
}

const tg_softmax_rows TG_CAP_NAME(tg__softmax_rows) = { softmax_row_avx2, finish_avx2,
                                                        exp_shift_avx2 };
#else
static void row_portable(const float *x, float *y, float *tmp, int64_t n, bool lg)
{
    (void)tmp;
    softmax_row_f32(x, y, n, lg);
}

static void finish_none(void) {}

static float exp_shift_portable(float *x, int64_t n, float shift)
{
    float s = 0;
    for (int64_t k = 0; k < n; k++) {
        x[k] = tg__pw_exp_f32(x[k] - shift);
        s += x[k];
    }
    return s;
}
const tg_softmax_rows TG_CAP_NAME(tg__softmax_rows) = { row_portable, finish_none,
                                                        exp_shift_portable };
#endif
