/* The CUDA random streams: uniform_, normal_, random_, feature_dropout, native_dropout and
 * multinomial draw from the device's own counter-based (Philox) streams, so their values are
 * not the CPU's and the value table (tests/values/) cannot compare them: they are checked here
 * for range, for distribution (sample mean and standard deviation within 5 standard errors,
 * chi-square at the 0.1% level with a fixed seed), for their structure (whole channels,
 * output == input * mask / (1 - p)) and for reproducibility under a seed. The argument checks
 * they share with the CPU are value-table cases (values_factory.c). */
#include "kt_cuda.h"

TG_CUDA_COVERS("uniform_", "normal_", "random_.from", "multinomial.out", "native_dropout");

#ifndef TG_WITH_CUDA
Test(cuda_random, skipped) { KT_SKIP_NO_CUDA_BUILD(); }
#else

static tg_tensor *empty_cuda(const int64_t *shape, int64_t ndim, tg_dtype dt)
{
    tg_int_list size = { .len = ndim, .data = shape };
    tg_tensor *t = tg_empty(size, .dtype = dt, .device = TG_DEVICE_CUDA(0));
    cr_assert(t, "empty: %s", tg_last_error());
    return t;
}

static const tg_dtype all_dtypes[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16, TG_INT64,
                                       TG_INT32,   TG_INT16,   TG_INT8,    TG_UINT8,    TG_BOOL };

/* Sample mean and standard deviation of a tensor's values. */
static void moments(const tg_tensor *t, double *mean, double *sd)
{
    int64_t n = tg_tensor_numel(t);
    double *v = kt_values(t), s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) s2 += (v[i] - *mean) * (v[i] - *mean);
    *sd = sqrt(s2 / (double)(n - 1));
    free(v);
}

Test(cuda_random, uniform_and_normal_distributions)
{
    KT_REQUIRE_DEVICE("cuda_random::uniform_and_normal_distributions");
    kt_live base = kt_live_now();
    static const tg_dtype fl[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16 };
    const int64_t shape[2] = { 257, 129 }; /* n = 33153, not a multiple of 4 */
    const double n = 257.0 * 129.0;
    for (size_t d = 0; d < sizeof fl / sizeof fl[0]; d++) {
        tg_tensor *g = empty_cuda(shape, 2, fl[d]), *gt = tg_transpose(g, 0, 1);
        tg_tensor *r = tg_uniform_(gt, .from = -2, .to = 6);
        cr_assert(r, "uniform_: %s", tg_last_error());
        double *v = kt_values(g), mean, sd;
        for (int64_t i = 0; i < (int64_t)n; i++)
            cr_assert(v[i] >= -2 && v[i] <= 6, "uniform_ %s: value %g outside [-2, 6)",
                      tg_dtype_name(fl[d]), v[i]);
        free(v);
        moments(g, &mean, &sd); /* U(-2, 6): mean 2, sd 8 / sqrt(12) */
        cr_assert(fabs(mean - 2) < 5 * (8 / sqrt(12)) / sqrt(n), "uniform_ %s: mean %g",
                  tg_dtype_name(fl[d]), mean);
        cr_assert(fabs(sd - 8 / sqrt(12)) < 0.05, "uniform_ %s: sd %g", tg_dtype_name(fl[d]), sd);
        tg_release(r);
        r = tg_normal_(g, .mean = 1.5, .std = 3);
        cr_assert(r, "normal_: %s", tg_last_error());
        moments(g, &mean, &sd);
        cr_assert(fabs(mean - 1.5) < 5 * 3 / sqrt(n), "normal_ %s: mean %g", tg_dtype_name(fl[d]),
                  mean);
        cr_assert(fabs(sd - 3) < 0.1, "normal_ %s: sd %g", tg_dtype_name(fl[d]), sd);
        tg_release(r);
        tg_release(g);
        tg_release(gt);
    }
    kt_assert_no_leak(base);
}

Test(cuda_random, random_ranges_and_reproducibility)
{
    KT_REQUIRE_DEVICE("cuda_random::random_ranges_and_reproducibility");
    kt_live base = kt_live_now();
    const int64_t shape[1] = { 4099 };
    for (size_t d = 0; d < (sizeof all_dtypes / sizeof all_dtypes[0]); d++) {
        tg_dtype dt = all_dtypes[d];
        int64_t to = dt == TG_BOOL ? 2 : 10;
        tg_tensor *g = empty_cuda(shape, 1, dt);
        tg_tensor *r = tg_random_(g, 0, to);
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
    tg_tensor *a = empty_cuda(big, 1, TG_FLOAT32), *b = empty_cuda(big, 1, TG_FLOAT32);
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

/* feature_dropout on the device: whole (N, C) channels, zero or input / (1 - p). */
Test(cuda_random, feature_dropout_on_device)
{
    KT_REQUIRE_DEVICE("cuda_random::feature_dropout_on_device");
    kt_live base = kt_live_now();
    tg_scope_begin();
    static const int64_t shape[4] = { 16, 32, 3, 3 };
    tg_manual_seed(5);
    tg_tensor *x = kt_rand(shape, 4, TG_FLOAT32, 8, 1, 2), *xd = kt_cuda(x);
    tg_tensor *r = tg_feature_dropout(xd, 0.5, true);
    cr_assert(r && tg_tensor_device(r).type == TG_CUDA, "%s", tg_last_error());
    double *rv = kt_values(r), *xv = kt_values(x);
    int64_t kept = 0;
    for (int64_t ch = 0; ch < 16 * 32; ch++) {
        bool keep = rv[ch * 9] != 0;
        kept += keep;
        for (int k = 0; k < 9; k++) {
            double want = keep ? xv[ch * 9 + k] * 2 : 0;
            cr_assert(fabs(rv[ch * 9 + k] - want) <= 1e-6 * want, "channel %lld: %g, expected %g",
                      (long long)ch, rv[ch * 9 + k], want);
        }
    }
    cr_assert(kept > 256 - 100 && kept < 256 + 100, "kept %lld of 512 channels", (long long)kept);
    free(rv);
    free(xv);
    tg_scope_end();
    kt_assert_no_leak(base);
}

/* The CUDA stream of draws differs from the CPU's, so dropout is checked by its definition:
 * output == input * mask / (1 - p) exactly (computed on the CPU from the CUDA mask), the kept
 * fraction within 5 sigma of 1 - p, and train = false as identity. */
Test(cuda_random, native_dropout)
{
    KT_REQUIRE_DEVICE("cuda_random::native_dropout");
    kt_live base = kt_live_now();
    /* the bound of round_tol: float64 1e-15, float32 1e-7, float16 2e-3, bfloat16 1e-2 */
    static const double tol[4] = { 1e-7, 1e-15, 2e-3, 1e-2 };
    for (size_t t = 0; t < 4; t++) {
        tg_dtype dt = all_dtypes[t];
        tg_scope_begin();
        int64_t n = 1 << 16;
        tg_tensor *x = kt_rand(&n, 1, dt, 8, -2, 2), *g = kt_cuda(x);
        double p = 0.3;
        tg_tensors2 r = tg_native_dropout(g, p, true);
        cr_assert(r.r0 && r.r1, "native_dropout: %s", tg_last_error());
        cr_assert_eq(tg_tensor_dtype(r.r1), TG_BOOL);
        double *m = kt_values(r.r1), *y = kt_values(r.r0), *xv = kt_values(x);
        int64_t kept = 0;
        for (int64_t i = 0; i < n; i++) kept += m[i] != 0;
        double q = 1 - p, sigma = sqrt(n * p * q);
        cr_assert(fabs((double)kept - n * q) < 5 * sigma, "kept %lld of %lld for p = %g",
                  (long long)kept, (long long)n, p);
        tg_tensor *mask_cpu = kt_copy_to(r.r1, TG_DEVICE_CPU);
        double scale = 1 / q;
        tg_tensor *want = tg_mul(tg_mul(x, mask_cpu), kt_tensor(&scale, NULL, 0, dt));
        kt_assert_cuda_close(r.r0, want, tol[t], 0, "dropout output = x * mask * scale");
        free(m);
        free(y);
        free(xv);
        tg_tensors2 e = tg_native_dropout(g, p, false);
        kt_assert_cuda_close(e.r0, x, 0, 0, "dropout eval is the identity");
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

Test(cuda_random, multinomial_statistics_and_seed)
{
    KT_REQUIRE_DEVICE("cuda_random::multinomial_statistics_and_seed");
    kt_live base = kt_live_now();
    tg_scope_begin();
    /* chi-square critical values at p = 0.001 for 3 degrees of freedom */
    const double crit3 = 16.266;
    const double w[6] = { 1, 0, 2, 3, 0, 4 };
    tg_tensor *p = kt_cuda(kt_tensor(w, (int64_t[]){ 6 }, 1, TG_FLOAT32));
    tg_generator *g = tg_generator_new(5);
    enum { M = 20000 };
    tg_tensor *s = tg_multinomial(p, M, .replacement = true, .generator = g);
    cr_assert(s, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_device(s).type, TG_CUDA);
    double *v = kt_values(s), counts[6] = { 0 };
    for (int i = 0; i < M; i++) counts[(int)v[i]]++;
    free(v);
    double x = 0;
    for (int j = 0; j < 6; j++) {
        if (w[j] == 0) {
            cr_expect_eq(counts[j], 0, "zero-weight category %d drawn", j);
            continue;
        }
        double e = M * w[j] / 10;
        x += (counts[j] - e) * (counts[j] - e) / e;
    }
    cr_expect_lt(x, crit3, "chi-square %g", x);
    /* the same seed, the same samples (with and without replacement) */
    for (int repl = 0; repl < 2; repl++) {
        tg_generator_manual_seed(g, 11);
        tg_tensor *a = tg_multinomial(p, 4, .replacement = repl, .generator = g);
        tg_generator_manual_seed(g, 11);
        tg_tensor *b = tg_multinomial(p, 4, .replacement = repl, .generator = g);
        kt_assert_cuda_close(a, b, 0, 0, "same seed");
    }
    /* without replacement: 2-D, each row a permutation of its positive categories */
    double rows[3 * 8];
    kt_fill_random(rows, 24, 3, 0.1, 1);
    tg_tensor *p2 = kt_cuda(kt_tensor(rows, (int64_t[]){ 3, 8 }, 2, TG_FLOAT64));
    tg_tensor *perm = tg_multinomial(p2, 8, .generator = g);
    cr_assert(perm, "%s", tg_last_error());
    v = kt_values(perm);
    for (int r = 0; r < 3; r++) {
        bool seen[8] = { false };
        for (int t = 0; t < 8; t++) {
            int c = (int)v[r * 8 + t];
            cr_assert(c >= 0 && c < 8 && !seen[c], "row %d: %d repeated or bad", r, c);
            seen[c] = true;
        }
    }
    free(v);
    /* the value checks */
    const double bad[3] = { 1, -1, 1 };
    tg_tensor *pb = kt_cuda(kt_tensor(bad, (int64_t[]){ 3 }, 1, TG_FLOAT32));
    cr_expect_null(tg_multinomial(pb, 1));
    kt_assert_error("probability tensor contains either `inf`, `nan` or element < 0");
    tg_tensor *pz = kt_cuda(tg_zeros(TG_INTS(2, 3)));
    cr_expect_null(tg_multinomial(pz, 1, .replacement = true));
    kt_assert_error("invalid multinomial distribution (sum of probabilities <= 0)");
    tg_generator_free(g);
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
