/* Shared helpers for the runtime's Criterion tests: a leak check run after every test, tensor
 * makers, and tiny hand-written kernels built on the iterator (the generated operators are not
 * used here, so the runtime is tested on its own). */
#ifndef RT_TEST_H
#define RT_TEST_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

/* Every test must leave no tensor or storage alive and no error recorded unless it clears it. */
static inline void rt_leak_check(void)
{
    cr_expect_eq(tg_live_tensors(), 0, "leaked %lld tensors", (long long)tg_live_tensors());
    cr_expect_eq(tg_live_storages(), 0, "leaked %lld storages", (long long)tg_live_storages());
}

static inline tg_tensor *rt_f32(const float *v, const int64_t *sizes, int64_t nd)
{
    return tg_tensor_from_data(v, sizes, nd, TG_FLOAT32);
}

/* arange(n) reshaped to `sizes`, in `dtype`. */
static inline tg_tensor *rt_arange(const int64_t *sizes, int64_t nd, tg_dtype dtype)
{
    tg_tensor *t = tg__empty("test", sizes, nd, dtype, TG_DEVICE_CPU);
    int64_t n = tg__numel(t);
    for (int64_t i = 0; i < n; i++)
        tg__store_double((char *)tg_tensor_data(t) + i * (int64_t)tg_dtype_size(dtype), dtype,
                         (double)i);
    return t;
}

static inline void rt_expect_values(const tg_tensor *t, const double *want, int64_t n)
{
    cr_assert_eq(tg_tensor_numel(t), n);
    double got[4096];
    cr_assert(n <= 4096);
    cr_assert_eq(tg_tensor_to_doubles(t, got, n), 0);
    for (int64_t i = 0; i < n; i++)
        cr_expect(fabs(got[i] - want[i]) <= 1e-6 * (1 + fabs(want[i])),
                  "element %lld: got %g, want %g", (long long)i, got[i], want[i]);
}

/* out = a + b computed in the iterator's dtype through doubles (any dtype, any strides). */
static inline void rt_add_loop(char **d, const int64_t *s, int64_t n, void *ctx)
{
    const tg_iter *it = ctx;
    for (int64_t i = 0; i < n; i++) {
        double a = tg__load_double(d[1] + i * s[1], it->dtypes[1]);
        double b = tg__load_double(d[2] + i * s[2], it->dtypes[2]);
        tg__store_double(d[0] + i * s[0], it->dtypes[0], a + b);
    }
}

/* A binary op through the iterator, as a structured kernel would write it. */
static inline tg_tensor *rt_add(tg_tensor *a, tg_tensor *b, tg_tensor *out, int flags)
{
    tg_iter it;
    tg_tensor *outs[1] = { out };
    tg_tensor *ins[2] = { a, b };
    if (tg__iter_build(&it, "add", flags, outs, 1, ins, 2)) return NULL;
    tg__iter_for_each(&it, rt_add_loop, &it);
    return tg__iter_finish(&it, 0);
}

#endif
