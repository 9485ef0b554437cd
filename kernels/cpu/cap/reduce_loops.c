/* The reductions' contiguous loops (reduce_loops.h), compiled once per CPU capability.
 *
 * Sums accumulate in double in several independent accumulators (the adds of one accumulator
 * form a dependency chain; eight chains keep the adder busy). With AVX2 the float32 sum is
 * written with intrinsics; otherwise (and for the element-wise row adds) plain loops that
 * the compiler vectorises as the capability allows: eight named accumulators in a fixed
 * order, so the result does not depend on the compiler. */
#include "core/core.h"
#include "reduce_loops.h"

#if defined(__AVX2__)
#include <immintrin.h>

static double sum_f32(const float *x, int64_t n)
{
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v0)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v0, 1)));
        a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm256_castps256_ps128(v1)));
        a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm256_extractf128_ps(v1, 1)));
        a4 = _mm256_add_pd(a4, _mm256_cvtps_pd(_mm256_castps256_ps128(v2)));
        a5 = _mm256_add_pd(a5, _mm256_cvtps_pd(_mm256_extractf128_ps(v2, 1)));
        a6 = _mm256_add_pd(a6, _mm256_cvtps_pd(_mm256_castps256_ps128(v3)));
        a7 = _mm256_add_pd(a7, _mm256_cvtps_pd(_mm256_extractf128_ps(v3, 1)));
    }
    a0 = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3));
    a4 = _mm256_add_pd(_mm256_add_pd(a4, a5), _mm256_add_pd(a6, a7));
    a0 = _mm256_add_pd(a0, a4);
    double t[4];
    _mm256_storeu_pd(t, a0);
    double s = (t[0] + t[1]) + (t[2] + t[3]);
    for (; i < n; i++) s += x[i];
    return s;
}

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
static double sum_f32(const float *x, int64_t n)
{
    double a[8] = { 0 };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) a[k] += x[i + k];
    double s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    for (; i < n; i++) s += x[i];
    return s;
}

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
