/* The reductions' contiguous loops (reduce_loops.h), compiled once per CPU capability.
 *
 * Sums accumulate in double in several independent accumulators (the adds of one accumulator
 * form a dependency chain; several chains keep the adder busy); float32 sums first add groups
 * of elements in float as a balanced tree (see sum_f32). The sums are written once in the
 * vector vocabulary of vec_f32.h (the capability's width), the element-wise row adds as plain
 * loops the compiler vectorises. */
#include "core/core.h"
#include "reduce_loops.h"

#include "vec_f32.h"

/* float32 sum. Converting every float to double (one conversion per lane) made the conversion,
 * not memory, the limit: ~75 GB/s against PyTorch's ~110 on 2 threads. Instead each group of
 * eight vectors is added as a balanced tree in float (three roundings, each relative 2^-24,
 * on partial sums of eight elements) and only the group total is widened into the double
 * accumulators: one conversion per 8 vectors. The error stays ~3 * 2^-24 * sum|x| whatever n
 * is, below PyTorch's float32 cascade sum, and the order is fixed (two groups per step, their
 * halves into four double accumulators, then the lanes in order), so the result does
 * not depend on the compiler or the thread count (reduce.c's chunks are fixed too); it does
 * depend on the capability's lane count. */
static inline tg_vf tree8(const float *p)
{
    const int L = TG_VF_LANES;
    return ((tg__vf_load(p) + tg__vf_load(p + L)) +
            (tg__vf_load(p + 2 * L) + tg__vf_load(p + 3 * L))) +
           ((tg__vf_load(p + 4 * L) + tg__vf_load(p + 5 * L)) +
            (tg__vf_load(p + 6 * L) + tg__vf_load(p + 7 * L)));
}

static double lanes_sum(tg_vd a)
{
    double s = 0;
    for (int k = 0; k < TG_VF_LANES / 2; k++) s += a[k];
    return s;
}

static double sum_f32(const float *x, int64_t n)
{
    const int64_t group = 8 * TG_VF_LANES;
    tg_vd a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };
    int64_t i = 0;
    for (; i + 2 * group <= n; i += 2 * group) { /* two groups: four double chains */
        tg_vf s = tree8(x + i), t = tree8(x + i + group);
        a0 += tg__vf_lo_f64(s);
        a1 += tg__vf_hi_f64(s);
        a2 += tg__vf_lo_f64(t);
        a3 += tg__vf_hi_f64(t);
    }
    for (; i + TG_VF_LANES <= n; i += TG_VF_LANES) { /* short tails: widen directly, exact */
        tg_vf v = tg__vf_load(x + i);
        a0 += tg__vf_lo_f64(v);
        a1 += tg__vf_hi_f64(v);
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
