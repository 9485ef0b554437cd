/* The CUDA side of the test harness (kt_util.h): the skip rules every CUDA test follows (no
 * CUDA build, no device), random CPU inputs and their copies on a device. The value table
 * (kt_case.h, tests/values/) compares every case on CUDA with the CPU through these; the plain
 * tests of tests/cuda/ (the runtime, the allocator, random streams, device-only errors) use
 * them directly. */
#ifndef KT_CUDA_H
#define KT_CUDA_H

#include "kt_util.h"
#include "tg_cover.h"

#define KT_SKIP_NO_CUDA_BUILD() cr_skip_test("built without CUDA (nvcc not found or CUDA=0)")

/* Every device test starts with this: skips visibly on a machine without a device. */
#define KT_REQUIRE_DEVICE(name)                                                        \
    do {                                                                               \
        if (!tg_cuda_is_available()) cr_skip_test("no CUDA device: %s not run", name); \
    } while (0)

/* A contiguous CPU tensor of `dt` with uniform values in [lo, hi) (integers: floored; bool: lo
 * 0, hi 2 gives both values), reproducible from `seed`. Inside a scope, the scope owns it. */
static inline tg_tensor *kt_rand(const int64_t *shape, int64_t ndim, tg_dtype dt, uint64_t seed,
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
    cr_assert(t, "kt_rand: %s", tg_last_error());
    return t;
}

/* A contiguous copy of t on `dev` (a fresh leaf: empty there, then copy_). Call inside a
 * scope: the scope owns the result. */
static inline tg_tensor *kt_copy_to(tg_tensor *t, tg_device dev)
{
    tg_int_list size = { .len = tg_tensor_dim(t), .data = tg_tensor_sizes(t) };
    tg_tensor *d = tg_empty(size, .dtype = tg_tensor_dtype(t), .device = dev);
    cr_assert(d, "empty on %s: %s", dev.type == TG_CUDA ? "CUDA" : "CPU", tg_last_error());
    cr_assert(tg_copy_(d, t), "copy_: %s", tg_last_error());
    return d;
}

/* The same values on CUDA device 0. */
static inline tg_tensor *kt_cuda(tg_tensor *t)
{
    tg_tensor *r = kt_copy_to(t, TG_DEVICE_CUDA(0));
    cr_assert_eq(tg_tensor_device(r).type, TG_CUDA, "not a CUDA tensor");
    return r;
}

/* got (on CUDA) against want (on the CPU): kt_assert_same_values, and got lives on the device. */
static inline void kt_assert_cuda_close(const tg_tensor *got, const tg_tensor *want, double rtol,
                                        double atol, const char *what)
{
    cr_assert(got, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_device(got).type, TG_CUDA, "%s: result is not on the CUDA device", what);
    kt_assert_same_values(got, want, rtol, atol, what);
}

#endif
