/* The tiled copy of a transposed matrix into a row-major one (tg__copy_transposed_2d), through
 * its two callers: copy_ (contiguous() of a t() view) and tg__copy_into (a transposed gradient
 * becoming a parameter's .grad). Checked element by element against the source's memory, for
 * each element size, for shapes that are and are not multiples of the tile, and with a power
 * of two stride. Metric: exact equality (a copy). */
#include <criterion/criterion.h>
#include <string.h>

#include "tensorgen.h"
#include "core/core.h"
#include "kt_util.h"

static const int64_t shapes[][2] = { { 37, 53 }, { 64, 512 }, { 512, 17 }, { 33, 1024 } };
static const tg_dtype dtypes[] = {
    TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_INT16, TG_INT64, TG_INT32
};

/* x (C, R), random values; t(x) is (R, C) with strides (1, R). */
static tg_tensor *source(int64_t R, int64_t C, tg_dtype dt)
{
    if (!tg_dtype_is_floating(dt)) return tg_randint_low(-30000, 30000, TG_INTS(C, R), .dtype = dt);
    tg_tensor *f = tg_randn(TG_INTS(C, R));
    tg_tensor *x = tg_to(f, dt, .copy = true);
    tg_release(f);
    return x;
}

static void expect_transpose_of(const tg_tensor *d, const tg_tensor *x, const char *what)
{
    int64_t R = tg_tensor_size(d, 0), C = tg_tensor_size(d, 1);
    size_t e = tg_dtype_size(tg_tensor_dtype(d));
    cr_assert(tg_tensor_is_contiguous(d), "%s: not contiguous", what);
    const char *dp = tg_tensor_data(d), *xp = tg_tensor_data(x);
    for (int64_t i = 0; i < R; i++)
        for (int64_t c = 0; c < C; c++)
            if (memcmp(dp + (size_t)(i * C + c) * e, xp + (size_t)(c * R + i) * e, e) != 0)
                cr_assert_fail("%s: element (%lld, %lld) of %lldx%lld %s differs", what,
                               (long long)i, (long long)c, (long long)R, (long long)C,
                               tg_dtype_name(tg_tensor_dtype(d)));
}

Test(copy_transposed, contiguous_and_copy_into_every_element_size)
{
    int64_t live = tg_live_tensors();
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
            int64_t R = shapes[k][0], C = shapes[k][1];
            tg_tensor *x = source(R, C, dtypes[t]);
            cr_assert(x, "%s", tg_last_error());
            tg_tensor *v = tg_t(x);
            tg_tensor *c = tg_contiguous(v);
            expect_transpose_of(c, x, "contiguous(t(x))");
            tg_tensor *d = tg_empty(TG_INTS(R, C), .dtype = dtypes[t]);
            cr_assert_eq(tg__copy_into("test", d, v), 0, "%s", tg_last_error());
            expect_transpose_of(d, x, "tg__copy_into");
            kt_release_all(d, c, v, x);
        }
    cr_expect_eq(tg_live_tensors(), live);
}
