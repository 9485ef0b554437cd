/* The reductions' contiguous loops (reduce_loops.h), compiled once per CPU capability.
 *
 * Sums accumulate in double in several independent accumulators (the adds of one accumulator
 * form a dependency chain; several chains keep the adder busy); float32 sums first add groups
 * of elements in float as a balanced tree (see sum_f32). With AVX2/AVX-512 the sums are
 * written with intrinsics; otherwise (and for the element-wise row adds) plain loops that
 * the compiler vectorises as the capability allows, with named accumulators in a fixed
 * order, so the result does not depend on the compiler. */
#include "core/core.h"
#include "reduce_loops.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

/* float32 sum. Converting every float to double (the old loop: one cvtps2pd per four
 * elements) made the conversion port, not memory, the limit: ~75 GB/s against PyTorch's ~110
 * on 2 threads. Instead each group of eight vectors is added as a balanced tree in float
 * (three roundings, each relative 2^-24, on partial sums of eight elements) and only the group
 * total is widened into the double accumulators: one conversion per 64 (AVX2) or 128
 * (AVX-512) elements. The error stays ~3 * 2^-24 * sum|x| whatever n is, below PyTorch's
 * float32 cascade sum, and the order is fixed, so the result does not depend on the compiler
 * or the thread count (reduce.c's chunks are fixed too). */
#if defined(__AVX512F__)
static double sum_f32(const float *x, int64_t n)
{
    __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 256 <= n; i += 256) { /* two groups: four independent double chains */
        const float *p = x + i, *q = x + i + 128;
        __m512 s = _mm512_add_ps(
            _mm512_add_ps(_mm512_add_ps(_mm512_loadu_ps(p), _mm512_loadu_ps(p + 16)),
                          _mm512_add_ps(_mm512_loadu_ps(p + 32), _mm512_loadu_ps(p + 48))),
            _mm512_add_ps(_mm512_add_ps(_mm512_loadu_ps(p + 64), _mm512_loadu_ps(p + 80)),
                          _mm512_add_ps(_mm512_loadu_ps(p + 96), _mm512_loadu_ps(p + 112))));
        __m512 t = _mm512_add_ps(
            _mm512_add_ps(_mm512_add_ps(_mm512_loadu_ps(q), _mm512_loadu_ps(q + 16)),
                          _mm512_add_ps(_mm512_loadu_ps(q + 32), _mm512_loadu_ps(q + 48))),
            _mm512_add_ps(_mm512_add_ps(_mm512_loadu_ps(q + 64), _mm512_loadu_ps(q + 80)),
                          _mm512_add_ps(_mm512_loadu_ps(q + 96), _mm512_loadu_ps(q + 112))));
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm512_castps512_ps256(s)));
        a1 = _mm512_add_pd(
            a1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1))));
        a2 = _mm512_add_pd(a2, _mm512_cvtps_pd(_mm512_castps512_ps256(t)));
        a3 = _mm512_add_pd(
            a3, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1))));
    }
    for (; i + 8 <= n; i += 8) /* short tails: widen directly, exact */
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm256_loadu_ps(x + i)));
    double s = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)));
    for (; i < n; i++) s += x[i];
    return s;
}
#elif defined(__AVX2__)
static double sum_f32(const float *x, int64_t n)
{
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 128 <= n; i += 128) { /* two groups: four independent double chains */
        const float *p = x + i, *q = x + i + 64;
        __m256 s = _mm256_add_ps(
            _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)),
                          _mm256_add_ps(_mm256_loadu_ps(p + 16), _mm256_loadu_ps(p + 24))),
            _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(p + 32), _mm256_loadu_ps(p + 40)),
                          _mm256_add_ps(_mm256_loadu_ps(p + 48), _mm256_loadu_ps(p + 56))));
        __m256 t = _mm256_add_ps(
            _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(q + 8)),
                          _mm256_add_ps(_mm256_loadu_ps(q + 16), _mm256_loadu_ps(q + 24))),
            _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(q + 32), _mm256_loadu_ps(q + 40)),
                          _mm256_add_ps(_mm256_loadu_ps(q + 48), _mm256_loadu_ps(q + 56))));
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(s)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1)));
        a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm256_castps256_ps128(t)));
        a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm256_extractf128_ps(t, 1)));
    }
    for (; i + 4 <= n; i += 4) /* short tails: widen directly, exact */
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
    a0 = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3));
    double t[4];
    _mm256_storeu_pd(t, a0);
    double s = (t[0] + t[1]) + (t[2] + t[3]);
    for (; i < n; i++) s += x[i];
    return s;
}
#else
/* The same tree over groups of 8 x 4 floats, in plain C for SSE2 (the compiler vectorises
 * the lane loops). */
static double sum_f32(const float *x, int64_t n)
{
    double a[4] = { 0 };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const float *p = x + i;
        for (int k = 0; k < 4; k++)
            a[k] += (double)(((p[k] + p[k + 4]) + (p[k + 8] + p[k + 12])) +
                             ((p[k + 16] + p[k + 20]) + (p[k + 24] + p[k + 28])));
    }
    double s = (a[0] + a[1]) + (a[2] + a[3]);
    for (; i < n; i++) s += x[i];
    return s;
}
#endif

#if defined(__AVX2__)
static double sum_f64(const double *x, int64_t n)
{
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_add_pd(a0, _mm256_loadu_pd(x + i));
        a1 = _mm256_add_pd(a1, _mm256_loadu_pd(x + i + 4));
        a2 = _mm256_add_pd(a2, _mm256_loadu_pd(x + i + 8));
        a3 = _mm256_add_pd(a3, _mm256_loadu_pd(x + i + 12));
    }
    a0 = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3));
    double t[4];
    _mm256_storeu_pd(t, a0);
    double s = (t[0] + t[1]) + (t[2] + t[3]);
    for (; i < n; i++) s += x[i];
    return s;
}
#else
static double sum_f64(const double *x, int64_t n)
{
    double a[4] = { 0 };
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++) a[k] += x[i + k];
    double s = (a[0] + a[1]) + (a[2] + a[3]);
    for (; i < n; i++) s += x[i];
    return s;
}
#endif

static void add_row_f32(double *acc, const float *x, int64_t n)
{
#pragma omp simd
    for (int64_t k = 0; k < n; k++) acc[k] += x[k];
}

static void add_row_f64(double *acc, const double *x, int64_t n)
{
#pragma omp simd
    for (int64_t k = 0; k < n; k++) acc[k] += x[k];
}

const tg_reduce_loops TG_CAP_NAME(tg__reduce_loops) = { sum_f32, sum_f64, add_row_f32,
                                                        add_row_f64 };
