/* CUDA reductions against the CPU kernels on the same random inputs: sum, mean, prod, amax,
 * amin, max.dim, min.dim, argmax, argmin, var, std (kernels/cuda/reduce.cu).
 *
 * Inputs: a 24x33x17 tensor, contiguous and as two non-contiguous views (permute(2, 0, 1), and
 * a slice with step 2 along dim 1), in every dtype each op accepts; dims: all, each single
 * dim, {0, 2}, with and without keepdim. Large cases exercise the split (many blocks per
 * output) full reduction, the vertical (thread-per-output) path and short rows.
 *
 * Bounds: integers, bool, max/min values and all indices exact. Floating sums, means and
 * products accumulate in double on both devices, in different orders: float64 1e-12 relative,
 * float32 1e-6 (the final rounding to float plus the order of ~1e4 double additions),
 * float16 2e-3 and bfloat16 1e-2 (their rounding). var/std: Welford (CUDA) against two-pass
 * (CPU), both in double: float64 1e-10, float32 1e-5. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("sum.IntList_out", "mean.out", "prod.int_out", "amax.out", "amin.out", "max.dim_max",
               "min.dim_min", "argmax.out", "argmin.out", "var.correction_out",
               "std.correction_out");

#ifndef TG_WITH_CUDA
Test(cuda_reduce, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

enum {
    K_SUM,
    K_MEAN,
    K_PROD,
    K_AMAX,
    K_AMIN,
    K_MAXDIM,
    K_MINDIM,
    K_ARGMAX,
    K_ARGMIN,
    K_VAR,
    K_STD,
    K_COUNT
};
static const char *const kind_names[K_COUNT] = { "sum",    "mean",    "prod",    "amax",
                                                 "amin",   "max.dim", "min.dim", "argmax",
                                                 "argmin", "var",     "std" };

static tg_tensor *view_of(tg_tensor *x, int view)
{
    if (view == 1) return tg_permute(x, TG_INTS(2, 0, 1));
    if (view == 2) return tg_slice(x, .dim = 1, .step = 2);
    return x; /* views and x alike belong to the open scope */
}

/* Runs one reduction; dims NULL = all dims. Returns values and indices (either may be NULL). */
static tg_values_indices run(int kind, tg_tensor *x, const int64_t *dims, int64_t nd, bool keepdim)
{
    tg_values_indices r = { NULL, NULL };
    tg_int_list dl = dims ? (tg_int_list){ dims, nd } : TG_NO_INTS;
    tg_int_list al = dims ? dl : TG_INTS_EMPTY;
    tg_opt_int d1 = dims ? TG_OPT_INT(dims[0]) : TG_NONE_INT;
    int64_t d0 = dims ? dims[0] : 0;
    switch (kind) {
    case K_SUM: r.values = tg_sum(x, .dim = dl, .keepdim = keepdim); break;
    case K_MEAN: r.values = tg_mean(x, .dim = dl, .keepdim = keepdim); break;
    case K_PROD: r.values = tg_prod_dim(x, d0, .keepdim = keepdim); break;
    case K_AMAX: r.values = tg_amax(x, .dim = al, .keepdim = keepdim); break;
    case K_AMIN: r.values = tg_amin(x, .dim = al, .keepdim = keepdim); break;
    case K_MAXDIM: r = tg_max_dim(x, d0, .keepdim = keepdim); break;
    case K_MINDIM: r = tg_min_dim(x, d0, .keepdim = keepdim); break;
    case K_ARGMAX: r.indices = tg_argmax(x, .dim = d1, .keepdim = keepdim); break;
    case K_ARGMIN: r.indices = tg_argmin(x, .dim = d1, .keepdim = keepdim); break;
    case K_VAR:
        r.values = tg_var(x, .dim = dl, .correction = TG_OPT_INT(1), .keepdim = keepdim);
        break;
    case K_STD:
        r.values = tg_std(x, .dim = dl, .correction = TG_OPT_INT(0), .keepdim = keepdim);
        break;
    }
    return r;
}

static bool accepts(int kind, tg_dtype dt)
{
    bool fl = tg_dtype_is_floating(dt);
    if (kind == K_MEAN || kind == K_VAR || kind == K_STD) return fl;
    return true;
}

static double tol_for(int kind, tg_dtype dt)
{
    if (!tg_dtype_is_floating(dt) || kind == K_AMAX || kind == K_AMIN || kind == K_MAXDIM ||
        kind == K_MINDIM)
        return 0;
    if (kind == K_VAR || kind == K_STD) return cc_round_tol(dt, 1e-5, 1e-10);
    return cc_round_tol(dt, 1e-6, 1e-12);
}

static void compare(int kind, tg_tensor *xc, tg_tensor *xg, const int64_t *dims, int64_t nd,
                    bool keepdim, const char *what)
{
    tg_values_indices want = run(kind, xc, dims, nd, keepdim);
    tg_values_indices got = run(kind, xg, dims, nd, keepdim);
    double tol = tol_for(kind, tg_tensor_dtype(xc));
    if (want.values) cc_assert_close(got.values, want.values, tol, tol, what);
    if (want.indices) cc_assert_equal(got.indices, want.indices, what);
    cr_assert(want.values || want.indices, "%s (CPU): %s", what, tg_last_error());
}

static const tg_dtype all_dtypes[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16, TG_INT64,
                                       TG_INT32,   TG_INT16,   TG_INT8,    TG_UINT8,    TG_BOOL };

static void sweep(int kind)
{
    int64_t shape[3] = { 24, 33, 17 };
    static const int64_t dimsets[][2] = { { 0, 0 }, { 1, 0 }, { 2, 0 }, { -1, 0 }, { 0, 2 } };
    static const int ndims[] = { 1, 1, 1, 1, 2 };
    for (size_t t = 0; t < sizeof all_dtypes / sizeof *all_dtypes; t++) {
        tg_dtype dt = all_dtypes[t];
        if (!accepts(kind, dt)) continue;
        tg_scope_begin();
        double lo = kind == K_PROD ? 0.6 : -4, hi = kind == K_PROD ? 1.5 : 4;
        if (!tg_dtype_is_floating(dt)) {
            lo = dt == TG_UINT8 ? 0 : -3;
            hi = dt == TG_BOOL ? 2 : 4;
        }
        tg_tensor *base = cc_rand(shape, 3, dt, 7 + t, lo, hi), *gbase = cc_cuda(base);
        for (int view = 0; view < 3; view++) {
            tg_tensor *xc = view_of(base, view), *xg = view_of(gbase, view);
            for (int keep = 0; keep < 2; keep++) {
                char what[128];
                bool single = kind == K_PROD || kind == K_MAXDIM || kind == K_MINDIM;
                if (!single) {
                    snprintf(what, sizeof what, "%s %s view %d all dims keepdim %d",
                             kind_names[kind], tg_dtype_name(dt), view, keep);
                    compare(kind, xc, xg, NULL, 0, keep, what);
                }
                for (int s = 0; s < 5; s++) {
                    if (single && ndims[s] > 1) continue;
                    snprintf(what, sizeof what, "%s %s view %d dims {%lld%s} keepdim %d",
                             kind_names[kind], tg_dtype_name(dt), view, (long long)dimsets[s][0],
                             ndims[s] > 1 ? ", 2" : "", keep);
                    if ((kind == K_ARGMAX || kind == K_ARGMIN) && ndims[s] > 1) continue;
                    compare(kind, xc, xg, dimsets[s], ndims[s], keep, what);
                }
            }
        }
        tg_scope_end();
    }
}

#define SWEEP_TEST(name, kind)                    \
    Test(cuda_reduce, name)                       \
    {                                             \
        CC_REQUIRE_DEVICE("cuda_reduce::" #name); \
        kt_live base = kt_live_now();             \
        sweep(kind);                              \
        kt_assert_no_leak(base);                  \
    }

SWEEP_TEST(sum, K_SUM)
SWEEP_TEST(mean, K_MEAN)
SWEEP_TEST(prod, K_PROD)
SWEEP_TEST(amax, K_AMAX)
SWEEP_TEST(amin, K_AMIN)
SWEEP_TEST(max_dim, K_MAXDIM)
SWEEP_TEST(min_dim, K_MINDIM)
SWEEP_TEST(argmax, K_ARGMAX)
SWEEP_TEST(argmin, K_ARGMIN)
SWEEP_TEST(var, K_VAR)
SWEEP_TEST(std, K_STD)

/* Large shapes: a full reduction split over many blocks, a reduction over dim 0 of a
 * row-major matrix (thread path with splits), many short rows (warp groups). float32 sums
 * of 4M terms accumulate in double on both sides: 1e-6 relative still holds. */
Test(cuda_reduce, large_paths)
{
    CC_REQUIRE_DEVICE("cuda_reduce::large_paths");
    kt_live base = kt_live_now();
    tg_scope_begin();
    static const int64_t shapes[][2] = {
        { 1 << 22, 1 }, { 4096, 300 }, { 65536, 40 }, { 3, 1 << 20 }
    };
    for (int s = 0; s < 4; s++) {
        tg_tensor *x = cc_rand(shapes[s], 2, TG_FLOAT32, 100 + s, -1, 1), *g = cc_cuda(x);
        int64_t d0[1] = { 0 }, d1[1] = { 1 };
        char what[96];
        snprintf(what, sizeof what, "sum all of %lldx%lld", (long long)shapes[s][0],
                 (long long)shapes[s][1]);
        compare(K_SUM, x, g, NULL, 0, false, what);
        snprintf(what, sizeof what, "sum dim 0 of %lldx%lld", (long long)shapes[s][0],
                 (long long)shapes[s][1]);
        compare(K_SUM, x, g, d0, 1, false, what);
        snprintf(what, sizeof what, "sum dim 1 of %lldx%lld", (long long)shapes[s][0],
                 (long long)shapes[s][1]);
        compare(K_SUM, x, g, d1, 1, false, what);
        compare(K_ARGMAX, x, g, d0, 1, false, "argmax dim 0 (large)");
        compare(K_ARGMAX, x, g, NULL, 0, false, "argmax all (large)");
        compare(K_VAR, x, g, d1, 1, false, "var dim 1 (large)");
        compare(K_AMIN, x, g, NULL, 0, false, "amin all (large)");
    }
    tg_scope_end();
    kt_assert_no_leak(base);
}

/* NaN wins in max/min/argmax and the first NaN's index is returned; ties keep the first
 * occurrence (integers with many equal values). */
Test(cuda_reduce, nan_and_ties)
{
    CC_REQUIRE_DEVICE("cuda_reduce::nan_and_ties");
    kt_live base = kt_live_now();
    tg_scope_begin();
    int64_t shape[2] = { 16, 2000 };
    double *v = malloc(sizeof(double) * 16 * 2000);
    kt_fill_random(v, 16 * 2000, 5, -1, 1);
    v[3 * 2000 + 1500] = NAN;
    v[3 * 2000 + 1700] = NAN;
    v[9 * 2000 + 7] = NAN;
    tg_tensor *x = kt_tensor(v, shape, 2, TG_FLOAT32), *g = cc_cuda(x);
    free(v);
    int64_t d1[1] = { 1 }, d0[1] = { 0 };
    for (int k = K_AMAX; k <= K_ARGMIN; k++) {
        compare(k, x, g, d1, 1, false, kind_names[k]);
        compare(k, x, g, d0, 1, true, kind_names[k]);
    }
    tg_tensor *xi = cc_rand(shape, 2, TG_INT64, 9, 0, 3), *gi = cc_cuda(xi);
    for (int k = K_AMAX; k <= K_ARGMIN; k++) {
        compare(k, xi, gi, d1, 1, false, kind_names[k]);
        if (k == K_ARGMAX || k == K_ARGMIN) compare(k, xi, gi, NULL, 0, false, kind_names[k]);
    }
    tg_scope_end();
    kt_assert_no_leak(base);
}

/* dtype arguments and out= variants, and the errors shared with the CPU kernels. */
Test(cuda_reduce, dtype_out_and_errors)
{
    CC_REQUIRE_DEVICE("cuda_reduce::dtype_out_and_errors");
    kt_live base = kt_live_now();
    tg_scope_begin();
    int64_t shape[2] = { 7, 9 };
    tg_tensor *xi = cc_rand(shape, 2, TG_INT32, 3, -5, 5), *gi = cc_cuda(xi);
    cc_assert_close(tg_sum(gi, .dim = TG_INTS(1), .dtype = TG_FLOAT32),
                    tg_sum(xi, .dim = TG_INTS(1), .dtype = TG_FLOAT32), 0, 0,
                    "sum(int32, dtype=float32)");
    cc_assert_close(tg_mean(gi, .dim = TG_INTS(0), .dtype = TG_FLOAT64),
                    tg_mean(xi, .dim = TG_INTS(0), .dtype = TG_FLOAT64), 1e-12, 1e-12,
                    "mean(int32, dtype=float64)");
    tg_tensor *out = cc_cuda(tg_zeros(TG_INTS(7), .dtype = TG_INT64));
    cr_assert(tg_sum_out(gi, out, .dim = TG_INTS(1)), "sum.out: %s", tg_last_error());
    cc_assert_equal(out, tg_sum(xi, .dim = TG_INTS(1)), "sum.out into int64");
    cr_assert_null(tg_mean(gi));
    kt_assert_error(
        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
        "dtype. Got: Int");
    tg_clear_error();
    tg_tensor *e = cc_cuda(tg_zeros(TG_INTS(0, 3)));
    cr_assert_null(tg_amax(e));
    kt_assert_error("amax(): Expected reduction dim to be specified for input.numel() == 0.");
    tg_clear_error();
    cr_assert_null(tg_var(gi));
    kt_assert_error("std and var only support floating point and complex dtypes");
    tg_clear_error();
    /* empty reductions: sum 0, prod 1, mean NaN, as on the CPU */
    tg_tensor *ec = tg_zeros(TG_INTS(0, 3));
    cc_assert_close(tg_sum(e, .dim = TG_INTS(0)), tg_sum(ec, .dim = TG_INTS(0)), 0, 0,
                    "sum of empty");
    cc_assert_close(tg_prod_dim(e, 0), tg_prod_dim(ec, 0), 0, 0, "prod of empty");
    cc_assert_close(tg_mean(e, .dim = TG_INTS(0)), tg_mean(ec, .dim = TG_INTS(0)), 0, 0,
                    "mean of empty");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
