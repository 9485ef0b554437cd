/* CUDA factory and random kernels against the CPU kernels: fill_, arange (start_out),
 * linspace.out, eye.m_out, uniform_, normal_, random_.
 *
 * The deterministic factories must equal the CPU's results exactly in every dtype: both
 * compute each element with the same formula in the same type, and the CUDA kernels use
 * unfused (_rn) arithmetic so that nvcc cannot contract it into fused multiply-adds. They are
 * checked into contiguous and non-contiguous (transposed) CUDA tensors.
 *
 * The random fills use their own counter-based streams (Philox), so their values differ from
 * the CPU's; they are checked for range, for distribution (sample mean and standard deviation
 * within 5 standard errors), for reproducibility under tg_manual_seed, and for refusing what
 * the CPU refuses with the same words.
 *
 * Built in every build: without TG_WITH_CUDA one test skips ("built without CUDA"), without a
 * device every test skips naming itself. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cmp.h"

/* Which CUDA kernels these cases compare (tests/cuda/test_cuda_coverage.c); declared in
 * every build. */
#ifdef TG_CUDA_COVERS
TG_CUDA_COVERS("fill_.Scalar", "arange.start_out", "linspace.out", "eye.m_out", "uniform_",
               "normal_", "random_.from");
#endif

#ifndef TG_WITH_CUDA

Test(cuda_factory, not_built) { CC_SKIP_NO_CUDA_BUILD(); }

#else

static const tg_dtype cf_dtypes[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16, TG_INT64,
                                      TG_INT32,   TG_INT16,   TG_INT8,    TG_UINT8,    TG_BOOL };
#define CF_NDTYPES (sizeof cf_dtypes / sizeof cf_dtypes[0])

static tg_tensor *cf_empty(const int64_t *shape, int64_t ndim, tg_dtype dt, bool cuda)
{
    tg_int_list size = { shape, ndim };
    tg_tensor *t = cuda ? tg_empty(size, .dtype = dt, .device = TG_DEVICE_CUDA(0))
                        : tg_empty(size, .dtype = dt);
    cr_assert(t, "empty: %s", tg_last_error());
    return t;
}

/* got (CUDA) equals want (CPU) exactly; releases both. */
static void cf_check_exact(tg_tensor *got, tg_tensor *want, const char *what)
{
    cr_assert(want, "%s on CPU: %s", what, tg_last_error());
    cr_assert(got, "%s on CUDA: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_device(got).type, TG_CUDA, "%s: not on the CUDA device", what);
    cr_assert_eq(tg_tensor_dtype(got), tg_tensor_dtype(want), "%s: dtype", what);
    kt_assert_shape(got, tg_tensor_sizes(want), tg_tensor_dim(want));
    double *w = kt_values(want);
    kt_assert_close(got, w, tg_tensor_numel(want), 0, 0, what);
    free(w);
    tg_release(got);
    tg_release(want);
}

Test(cuda_factory, fill_every_dtype_contiguous_and_strided)
{
    CC_REQUIRE_DEVICE("cuda_factory::fill_every_dtype_contiguous_and_strided");
    kt_live base = kt_live_now();
    const int64_t shape[2] = { 37, 41 };
    for (size_t d = 0; d < CF_NDTYPES; d++) {
        char what[64];
        snprintf(what, sizeof what, "fill_ %s", tg_dtype_name(cf_dtypes[d]));
        tg_tensor *c = cf_empty(shape, 2, cf_dtypes[d], false),
                  *g = cf_empty(shape, 2, cf_dtypes[d], true);
        cf_check_exact(tg_fill_(g, 3), tg_fill_(c, 3), what);
        tg_tensor *ct = tg_transpose(c, 0, 1), *gt = tg_transpose(g, 0, 1);
        cf_check_exact(tg_fill_(gt, 1), tg_fill_(ct, 1), what);
        cf_check_exact(tg_retain(g), tg_retain(c), what); /* the base sees the strided fill */
        tg_release(c);
        tg_release(g);
        tg_release(ct);
        tg_release(gt);
    }
    tg_tensor *g = cf_empty(shape, 2, TG_UINT8, true);
    cr_assert_null(tg_fill_(g, 300));
    kt_assert_error("value cannot be converted to type uint8_t without overflow");
    tg_release(g);
    kt_assert_no_leak(base);
}

Test(cuda_factory, arange_linspace_eye_every_dtype)
{
    CC_REQUIRE_DEVICE("cuda_factory::arange_linspace_eye_every_dtype");
    kt_live base = kt_live_now();
    for (size_t d = 0; d < CF_NDTYPES; d++) {
        tg_dtype dt = cf_dtypes[d];
        if (dt == TG_BOOL) continue; /* arange/linspace refuse or degenerate on bool alike */
        char what[96];
        const int64_t zero[1] = { 0 };
        tg_tensor *c = cf_empty(zero, 1, dt, false), *g = cf_empty(zero, 1, dt, true);
        snprintf(what, sizeof what, "arange(-3, 90, 0.75) %s", tg_dtype_name(dt));
        cf_check_exact(tg_arange_start_out(-3, 90, g, .step = tg_dtype_is_floating(dt) ? 0.75 : 1),
                       tg_arange_start_out(-3, 90, c, .step = tg_dtype_is_floating(dt) ? 0.75 : 1),
                       what);
        tg_release(c);
        tg_release(g);

        c = cf_empty(zero, 1, dt, false);
        g = cf_empty(zero, 1, dt, true);
        snprintf(what, sizeof what, "linspace(-5, 100, 1001) %s", tg_dtype_name(dt));
        cf_check_exact(tg_linspace_out(-5, 100, 1001, g), tg_linspace_out(-5, 100, 1001, c), what);
        tg_release(c);
        tg_release(g);

        const int64_t sq[2] = { 5, 7 };
        c = cf_empty(sq, 2, dt, false);
        g = cf_empty(sq, 2, dt, true);
        snprintf(what, sizeof what, "eye(5, 7) %s", tg_dtype_name(dt));
        cf_check_exact(tg_eye_m_out(5, 7, g), tg_eye_m_out(5, 7, c), what);
        tg_release(c);
        tg_release(g);

        /* into a transposed (non-contiguous) out of the final shape */
        const int64_t tsq[2] = { 7, 5 };
        tg_tensor *cb = cf_empty(tsq, 2, dt, false), *gb = cf_empty(tsq, 2, dt, true);
        c = tg_transpose(cb, 0, 1);
        g = tg_transpose(gb, 0, 1);
        snprintf(what, sizeof what, "eye(5, 7) %s into a transposed out", tg_dtype_name(dt));
        cf_check_exact(tg_eye_m_out(5, 7, g), tg_eye_m_out(5, 7, c), what);
        tg_release(c);
        tg_release(g);
        tg_release(cb);
        tg_release(gb);
    }
    const int64_t one[1] = { 1 };
    tg_tensor *g = cf_empty(one, 1, TG_FLOAT32, true);
    cr_assert_null(tg_arange_start_out(5, 1, g, .step = 1));
    kt_assert_error("upper bound and larger bound inconsistent with step sign");
    cr_assert_null(tg_linspace_out(0, 1, -2, g));
    kt_assert_error("number of steps must be non-negative");
    cr_assert_null(tg_eye_m_out(-1, 2, g));
    kt_assert_error("n must be greater or equal to 0, got -1");
    tg_release(g);
    kt_assert_no_leak(base);
}

/* Sample mean and standard deviation of a tensor's values. */
static void cf_moments(const tg_tensor *t, double *mean, double *sd)
{
    int64_t n = tg_tensor_numel(t);
    double *v = kt_values(t), s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) s2 += (v[i] - *mean) * (v[i] - *mean);
    *sd = sqrt(s2 / (double)(n - 1));
    free(v);
}

Test(cuda_factory, uniform_and_normal_distributions)
{
    CC_REQUIRE_DEVICE("cuda_factory::uniform_and_normal_distributions");
    kt_live base = kt_live_now();
    static const tg_dtype fl[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16 };
    const int64_t shape[2] = { 257, 129 }; /* n = 33153, not a multiple of 4 */
    const double n = 257.0 * 129.0;
    for (size_t d = 0; d < sizeof fl / sizeof fl[0]; d++) {
        tg_tensor *g = cf_empty(shape, 2, fl[d], true), *gt = tg_transpose(g, 0, 1);
        tg_tensor *r = tg_uniform_(gt, .from = -2, .to = 6);
        cr_assert(r, "uniform_: %s", tg_last_error());
        double *v = kt_values(g), mean, sd;
        for (int64_t i = 0; i < (int64_t)n; i++)
            cr_assert(v[i] >= -2 && v[i] <= 6, "uniform_ %s: value %g outside [-2, 6)",
                      tg_dtype_name(fl[d]), v[i]);
        free(v);
        cf_moments(g, &mean, &sd); /* U(-2, 6): mean 2, sd 8 / sqrt(12) */
        cr_assert(fabs(mean - 2) < 5 * (8 / sqrt(12)) / sqrt(n), "uniform_ %s: mean %g",
                  tg_dtype_name(fl[d]), mean);
        cr_assert(fabs(sd - 8 / sqrt(12)) < 0.05, "uniform_ %s: sd %g", tg_dtype_name(fl[d]), sd);
        tg_release(r);
        r = tg_normal_(g, .mean = 1.5, .std = 3);
        cr_assert(r, "normal_: %s", tg_last_error());
        cf_moments(g, &mean, &sd);
        cr_assert(fabs(mean - 1.5) < 5 * 3 / sqrt(n), "normal_ %s: mean %g", tg_dtype_name(fl[d]),
                  mean);
        cr_assert(fabs(sd - 3) < 0.1, "normal_ %s: sd %g", tg_dtype_name(fl[d]), sd);
        tg_release(r);
        tg_release(g);
        tg_release(gt);
    }
    kt_assert_no_leak(base);
}

Test(cuda_factory, random_ranges_and_reproducibility)
{
    CC_REQUIRE_DEVICE("cuda_factory::random_ranges_and_reproducibility");
    kt_live base = kt_live_now();
    const int64_t shape[1] = { 4099 };
    for (size_t d = 0; d < CF_NDTYPES; d++) {
        tg_dtype dt = cf_dtypes[d];
        int64_t to = dt == TG_BOOL ? 2 : 10;
        tg_tensor *g = cf_empty(shape, 1, dt, true);
        tg_tensor *r = tg_random_(g, 0, TG_OPT_INT(to));
        cr_assert(r, "random_ %s: %s", tg_dtype_name(dt), tg_last_error());
        double *v = kt_values(g);
        bool seen[10] = { false };
        for (int64_t i = 0; i < 4099; i++) {
            cr_assert(v[i] >= 0 && v[i] < (double)to && v[i] == floor(v[i]), "random_ %s: value %g",
                      tg_dtype_name(dt), v[i]);
            seen[(int)v[i]] = true;
        }
        for (int64_t k = 0; k < to; k++)
            cr_assert(seen[k], "random_ %s never drew %lld", tg_dtype_name(dt), (long long)k);
        free(v);
        tg_release(r);
        tg_release(g);
    }

    /* The same seed gives the same values; the next call gives new ones. */
    const int64_t big[1] = { 1000 };
    tg_tensor *a = cf_empty(big, 1, TG_FLOAT32, true), *b = cf_empty(big, 1, TG_FLOAT32, true);
    tg_manual_seed(1234);
    tg_release(tg_normal_(a));
    tg_manual_seed(1234);
    tg_release(tg_normal_(b));
    double *va = kt_values(a);
    kt_assert_close(b, va, 1000, 0, 0, "normal_ after the same seed");
    tg_release(tg_normal_(b));
    double *vb = kt_values(b);
    int same = 0;
    for (int i = 0; i < 1000; i++) same += va[i] == vb[i];
    cr_assert_lt(same, 10, "the second call repeated %d of 1000 values", same);
    free(va);
    free(vb);
    tg_release(a);
    tg_release(b);
    kt_assert_no_leak(base);
}

Test(cuda_factory, random_errors_match_the_cpu)
{
    CC_REQUIRE_DEVICE("cuda_factory::random_errors_match_the_cpu");
    kt_live base = kt_live_now();
    const int64_t shape[1] = { 4 };
    tg_tensor *i = cf_empty(shape, 1, TG_INT64, true), *f = cf_empty(shape, 1, TG_FLOAT32, true);
    cr_assert_null(tg_uniform_(i));
    kt_assert_error("\"check_uniform_bounds\" not implemented for 'Long'");
    cr_assert_null(tg_uniform_(f, .from = 2, .to = 1));
    kt_assert_error("uniform_ expects to return a [from, to) range, but found from=2 > to=1");
    cr_assert_null(tg_normal_(f, .std = -1));
    kt_assert_error("normal expects std >= 0.0, but found std -1");
    cr_assert_null(tg_normal_(i));
    kt_assert_error("not implemented for 'Long'");
    cr_assert_null(tg_random_(i, 5, TG_OPT_INT(5)));
    kt_assert_error("random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
    tg_release(i);
    tg_release(f);
    kt_assert_no_leak(base);
}

#endif
