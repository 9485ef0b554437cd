/* The reductions' contiguous loops (reduce_loops.h), compiled once per CPU capability.
 *
 * Sums accumulate in double in several independent accumulators (the adds of one accumulator
 * form a dependency chain; several chains keep the adder busy). The sums are written once in the
 * vector vocabulary of vec_f32.h (the capability's width), the element-wise row adds as plain
 * loops the compiler vectorises. */
#include "core/core.h"
#include "reduce_loops.h"

#include "vec_f32.h"

#include <stdbool.h>

/* float32 sum: every element widened to double and added into four vector accumulators
 * (four independent add chains), so the result is the double sum of the floats up to double
 * rounding, which the CUDA kernels match (they accumulate in double too). Adding groups in
 * float first would double the in-cache speed (the conversions are the limit there, not
 * memory) but costs float-level error (~3 * 2^-24 * sum|x|), more than CUDA's and than the
 * CPU/CUDA comparisons allow; at 16M elements the loop is memory-bound either way. The order
 * is fixed (then the lanes in order), so the result does not depend on the compiler or the
 * thread count (reduce.c's chunks are fixed too). */
static double lanes_sum(tg_vd a)
{
    double s = 0;
    for (int k = 0; k < TG_VF_LANES / 2; k++) s += a[k];
    return s;
}

static double sum_f32(const float *x, int64_t n)
{
    tg_vd a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };
    int64_t i = 0;
    for (; i + 2 * TG_VF_LANES <= n; i += 2 * TG_VF_LANES) {
        tg_vf v = tg__vf_load(x + i), w = tg__vf_load(x + i + TG_VF_LANES);
        a0 += tg__vf_lo_f64(v);
        a1 += tg__vf_hi_f64(v);
        a2 += tg__vf_lo_f64(w);
        a3 += tg__vf_hi_f64(w);
    }
    double s = lanes_sum((a0 + a1) + (a2 + a3));
    for (; i < n; i++) s += x[i];
    return s;
}

/* float64 sum: four vector accumulators (four independent add chains). */
static double sum_f64(const double *x, int64_t n)
{
    const int64_t L = TG_VF_LANES / 2; /* doubles in a tg_vd */
    tg_vd a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };
    int64_t i = 0;
    for (; i + 4 * L <= n; i += 4 * L) {
        tg_vd v[4];
        memcpy(v, x + i, sizeof v);
        a0 += v[0];
        a1 += v[1];
        a2 += v[2];
        a3 += v[3];
    }
    double s = lanes_sum((a0 + a1) + (a2 + a3));
    for (; i < n; i++) s += x[i];
    return s;
}

/* The largest (mx) or smallest float of x[0..n), n >= 1, ignoring NaNs; *nan is set when
 * there is one (the caller returns NaN then). Two vector accumulators; lanes merged at the end,
 * so between equal values (+0 and -0) the one kept may differ from a sequential scan's. */
static inline __attribute__((always_inline)) float extreme_f32(const float *x, int64_t n, bool mx,
                                                               bool *nan)
{
    tg_vf b0 = tg__vf_splat(x[0]), b1 = b0;
    tg_vi bad = { 0 };
    int64_t i = 0;
    for (; i + 2 * TG_VF_LANES <= n; i += 2 * TG_VF_LANES) {
        tg_vf v = tg__vf_load(x + i), w = tg__vf_load(x + i + TG_VF_LANES);
        bad |= (v != v) | (w != w);
        b0 = tg__vf_select(mx ? v > b0 : v < b0, v, b0);
        b1 = tg__vf_select(mx ? w > b1 : w < b1, w, b1);
    }
    float best = x[0];
    bool found_nan = false;
    for (int k = 0; k < TG_VF_LANES; k++) {
        found_nan |= bad[k] != 0;
        best = mx ? (b0[k] > best ? b0[k] : best) : (b0[k] < best ? b0[k] : best);
        best = mx ? (b1[k] > best ? b1[k] : best) : (b1[k] < best ? b1[k] : best);
    }
    for (; i < n; i++) {
        found_nan |= x[i] != x[i];
        best = mx ? (x[i] > best ? x[i] : best) : (x[i] < best ? x[i] : best);
    }
    *nan = found_nan;
    return best;
}

static float max_f32(const float *x, int64_t n, bool *nan) { return extreme_f32(x, n, true, nan); }
static float min_f32(const float *x, int64_t n, bool *nan) { return extreme_f32(x, n, false, nan); }

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

const tg_reduce_loops TG_CAP_NAME(tg__reduce_loops) = {
    .sum_f32 = sum_f32,
    .sum_f64 = sum_f64,
    .add_row_f32 = add_row_f32,
    .add_row_f64 = add_row_f64,
    .max_f32 = max_f32,
    .min_f32 = min_f32,
};
