/* Helpers for the CUDA tests (tests/cuda): the skip rules every CUDA test follows (no CUDA
 * build, no device), random CPU inputs, their CUDA copies, and comparisons with a stated
 * metric. Everything is static; every test file links into one binary.
 *
 * Metric of cc_assert_close: for every element |cuda - cpu| <= atol + rtol * |cpu|, NaN only
 * against NaN, infinities equal; dtypes and shapes equal; the CUDA result lives on a CUDA
 * device. Each test states its bound (and why, when it is loose) next to the call. */
#ifndef CUDA_CMP_H
#define CUDA_CMP_H

#include "../ops/kt_util.h"
#include "tg_cover.h"

#define CC_SKIP_NO_CUDA_BUILD() cr_skip_test("built without CUDA (nvcc not found or CUDA=0)")

#ifdef TG_WITH_CUDA

/* Every CUDA test starts with this: skips visibly on a machine without a device. */
#define CC_REQUIRE_DEVICE(name)                                                        \
    do {                                                                               \
        if (!tg_cuda_is_available()) cr_skip_test("no CUDA device: %s not run", name); \
    } while (0)

/* A contiguous CPU tensor of `dt` with uniform values in [lo, hi) (integers: floored; bool:
 * lo 0, hi 2 gives both values), reproducible from `seed`. */
static inline tg_tensor *cc_rand(const int64_t *shape, int64_t ndim, tg_dtype dt, uint64_t seed,
                                 double lo, double hi)
{
    int64_t n = 1;
    for (int64_t i = 0; i < ndim; i++) n *= shape[i];
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    kt_fill_random(v, n, seed, lo, hi);
    if (tg_dtype_is_integral(dt, true))
        for (int64_t i = 0; i < n; i++) v[i] = floor(v[i]);
    tg_tensor *t = kt_tensor(v, shape, ndim, dt);
    free(v);
    cr_assert(t, "cc_rand: %s", tg_last_error());
    return t;
}

/* A contiguous copy of t on `dev` (a fresh leaf: empty there, then copy_). Call inside a
 * scope: the scope owns the results. */
static inline tg_tensor *cc_copy_to(tg_tensor *t, tg_device dev)
{
    tg_int_list size = { tg_tensor_sizes(t), tg_tensor_dim(t) };
    tg_tensor *d = tg_empty(size, .dtype = tg_tensor_dtype(t), .device = dev);
    cr_assert(d, "empty on %s: %s", dev.type == TG_CUDA ? "CUDA" : "CPU", tg_last_error());
    cr_assert(tg_copy_(d, t), "copy_: %s", tg_last_error());
    return d;
}

/* The same values on CUDA device 0. */
static inline tg_tensor *cc_cuda(tg_tensor *t)
{
    tg_tensor *r = cc_copy_to(t, TG_DEVICE_CUDA(0));
    cr_assert_eq(tg_tensor_device(r).type, TG_CUDA, "not a CUDA tensor");
    return r;
}

static inline void cc_assert_close(const tg_tensor *got, const tg_tensor *want, double rtol,
                                   double atol, const char *what)
{
    cr_assert(got, "%s: %s", what, tg_last_error());
    cr_assert(want, "%s (CPU): %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_device(got).type, TG_CUDA, "%s: result is not on the CUDA device", what);
    cr_assert_eq(tg_tensor_dtype(got), tg_tensor_dtype(want), "%s: dtype %s, CPU gives %s", what,
                 tg_dtype_name(tg_tensor_dtype(got)), tg_dtype_name(tg_tensor_dtype(want)));
    kt_assert_shape(got, tg_tensor_sizes(want), tg_tensor_dim(want));
    int64_t n = tg_tensor_numel(want);
    double *g = kt_values(got), *w = kt_values(want);
    for (int64_t i = 0; i < n; i++) {
        if (isnan(w[i]) || isnan(g[i])) {
            cr_assert(isnan(w[i]) && isnan(g[i]), "%s: element %lld is %g on CUDA, %g on CPU", what,
                      (long long)i, g[i], w[i]);
            continue;
        }
        if (isinf(w[i]) || isinf(g[i])) {
            cr_assert_eq(g[i], w[i], "%s: element %lld is %g on CUDA, %g on CPU", what,
                         (long long)i, g[i], w[i]);
            continue;
        }
        cr_assert(fabs(g[i] - w[i]) <= atol + rtol * fabs(w[i]),
                  "%s: element %lld is %.17g on CUDA, %.17g on CPU (rtol %g, atol %g)", what,
                  (long long)i, g[i], w[i], rtol, atol);
    }
    free(g);
    free(w);
}

/* Exact comparison (integers, bool, indices, max/min values). */
static inline void cc_assert_equal(const tg_tensor *got, const tg_tensor *want, const char *what)
{
    cc_assert_close(got, want, 0, 0, what);
}

/* The bound for a floating dtype whose result is computed in a wider type on both sides and
 * rounded once at the end (reductions, softmax): the storage type's rounding dominates. */
static inline double cc_round_tol(tg_dtype dt, double f32, double f64)
{
    switch (dt) {
    case TG_FLOAT64: return f64;
    case TG_FLOAT32: return f32;
    case TG_FLOAT16: return 2e-3; /* 2^-10 relative spacing, one or two roundings */
    default: return 1e-2;         /* bfloat16: 2^-7 */
    }
}

#endif
#endif
