/* Reductions: sum, mean, prod, amax, amin, max.dim, min.dim, argmax, argmin, var, std.
 *
 * Table tests: tests/fixtures/reduce_linalg_fixtures.h holds a 3x4x5 float64 input and a
 * 3x4x5 int64 input and, for each case (op, input view, dims, keepdim, correction), what
 * PyTorch 1.13 returns (gen_reduce_linalg.py). Views: 0 contiguous, 1 permute(2, 0, 1),
 * 2 x[:, ::2, 1:]. Each float case runs in float64 (metric: |got - want| <= 1e-12 + 1e-12 |want|,
 * i.e. rounding only) and float32 (inputs rounded to float32, so |got - want| <= 2e-5 +
 * 2e-5 |want|: 60 terms of size ~3 each rounded by 6e-8 relative); indices must be equal.
 * Large inputs exercise the fast paths (vectorised rows, vertical sums, chunked full
 * reductions) against float64 loops written here. */
#include "kt_util.h"
#include "../fixtures/reduce_linalg_fixtures.h"
#include "tg_cover.h"

TG_COVERS("sum.dim_IntList", "sum.IntList_out", "mean.dim", "mean.out", "prod", "prod.dim_int",
          "prod.int_out", "amax", "amax.out", "amin", "amin.out", "max", "max.dim", "max.dim_max",
          "min", "min.dim", "min.dim_min", "argmax", "argmax.out", "argmin", "argmin.out",
          "var.correction", "var.correction_out", "std.correction", "std.correction_out");

static tg_tensor *make_view(tg_tensor *x, int view)
{
    if (view == 1) return tg_permute(x, TG_INTS(2, 0, 1));
    if (view == 2) {
        tg_tensor *a = tg_slice(x, .dim = 1, .step = 2);
        tg_tensor *b = tg_slice(a, .dim = 2, .start = 1);
        tg_release(a);
        return b;
    }
    return tg_retain(x);
}

static tg_values_indices run_case(const fx_reduce_case *c, tg_tensor *x)
{
    tg_values_indices r = { NULL, NULL };
    tg_int_list dims = c->has_dims ? (tg_int_list){ .len = c->ndims, .data = c->dims } : TG_NO_INTS;
    tg_int_list adims = c->has_dims ? dims : TG_INTS_EMPTY;
    tg_opt_int d1 = c->has_dims ? c->dims[0] : TG_NONE_INT;
    switch (c->kind) {
    case FX_SUM: r.values = tg_sum(x, .dim = dims, .keepdim = c->keepdim); break;
    case FX_MEAN: r.values = tg_mean(x, .dim = dims, .keepdim = c->keepdim); break;
    case FX_PROD: r.values = tg_prod_dim(x, c->dims[0], .keepdim = c->keepdim); break;
    case FX_AMAX: r.values = tg_amax(x, .dim = adims, .keepdim = c->keepdim); break;
    case FX_AMIN: r.values = tg_amin(x, .dim = adims, .keepdim = c->keepdim); break;
    case FX_ARGMAX: r.indices = tg_argmax(x, .dim = d1, .keepdim = c->keepdim); break;
    case FX_ARGMIN: r.indices = tg_argmin(x, .dim = d1, .keepdim = c->keepdim); break;
    case FX_MAXDIM: r = tg_max_dim(x, c->dims[0], .keepdim = c->keepdim); break;
    case FX_MINDIM: r = tg_min_dim(x, c->dims[0], .keepdim = c->keepdim); break;
    case FX_VAR:
        r.values = tg_var(x, .dim = dims, .correction = c->correction, .keepdim = c->keepdim);
        break;
    case FX_STD:
        r.values = tg_std(x, .dim = dims, .correction = c->correction, .keepdim = c->keepdim);
        break;
    }
    return r;
}

static void check_case(size_t i, tg_dtype dt)
{
    const fx_reduce_case *c = &fx_reduce_cases[i];
    int64_t shape[3] = { 3, 4, 5 };
    tg_tensor *base;
    if (c->integer) {
        if (dt != TG_FLOAT64) return; /* integer cases run once, in int64 */
        base = kt_tensor_i64(fx_xi345, shape, 3);
    } else {
        base = kt_tensor(fx_x345, shape, 3, dt);
    }
    tg_tensor *x = make_view(base, c->view);
    cr_assert(x, "view: %s", tg_last_error());
    tg_values_indices r = run_case(c, x);
    bool want_values = c->values != NULL, want_idx = c->indices != NULL;
    cr_assert(!want_values || r.values, "case %zu: %s", i, tg_last_error());
    cr_assert(!want_idx || r.indices, "case %zu: %s", i, tg_last_error());
    int64_t n = 1;
    for (int64_t k = 0; k < c->ndim; k++) n *= c->shape[k];
    char what[64];
    snprintf(what, sizeof what, "case %zu (%s)", i, tg_dtype_name(dt));
    if (want_values) {
        kt_assert_shape(r.values, c->shape, c->ndim);
        double tol = c->integer || dt == TG_FLOAT64 ? 1e-12 : 2e-5;
        kt_assert_close(r.values, c->values, n, tol, tol, what);
        if (c->integer && (c->kind == FX_SUM || c->kind == FX_PROD))
            cr_assert_eq(tg_tensor_dtype(r.values), TG_INT64, "%s: sum/prod of int64 is int64",
                         what);
        else cr_assert_eq(tg_tensor_dtype(r.values), tg_tensor_dtype(x), "%s: dtype", what);
    }
    if (want_idx) {
        kt_assert_shape(r.indices, c->shape, c->ndim);
        cr_assert_eq(tg_tensor_dtype(r.indices), TG_INT64);
        const int64_t *got = tg_tensor_data(r.indices);
        for (int64_t k = 0; k < n; k++)
            cr_assert_eq(got[k], c->indices[k], "%s: index[%lld] = %lld, expected %lld", what,
                         (long long)k, (long long)got[k], (long long)c->indices[k]);
    }
    kt_release_all(r.values, r.indices, x, base);
}

Test(reduce, fixture_table_float64)
{
    kt_live live = kt_live_now();
    for (size_t i = 0; i < sizeof fx_reduce_cases / sizeof fx_reduce_cases[0]; i++)
        check_case(i, TG_FLOAT64);
    kt_assert_no_leak(live);
}

Test(reduce, fixture_table_float32)
{
    kt_live live = kt_live_now();
    for (size_t i = 0; i < sizeof fx_reduce_cases / sizeof fx_reduce_cases[0]; i++)
        check_case(i, TG_FLOAT32);
    kt_assert_no_leak(live);
}

/* ---------------------------------------------------------------- dtypes */

Test(reduce, sum_dtypes)
{
    kt_live live = kt_live_now();
    double v[6] = { 1, 0, 1, 1, 0, 1 };
    int64_t s[2] = { 2, 3 };
    tg_dtype ints[] = { TG_BOOL, TG_UINT8, TG_INT8, TG_INT16, TG_INT32, TG_INT64 };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        tg_tensor *x = kt_tensor(v, s, 2, ints[i]);
        tg_tensor *r = tg_sum(x, .dim = TG_INTS(1));
        cr_assert(r, "%s", tg_last_error());
        cr_assert_eq(tg_tensor_dtype(r), TG_INT64, "sum of %s is int64", tg_dtype_name(ints[i]));
        kt_assert_close(r, (double[]){ 2, 2 }, 2, 0, 0, "int sum");
        tg_tensor *f = tg_sum(x, .dtype = TG_FLOAT64);
        cr_assert_eq(tg_tensor_dtype(f), TG_FLOAT64);
        kt_assert_close(f, (double[]){ 4 }, 1, 0, 0, "sum dtype=float64");
        kt_release_all(f, r, x);
    }
    /* float16 / bfloat16 keep their dtype; accumulate in higher precision (exact here) */
    tg_dtype halfs[] = { TG_FLOAT16, TG_BFLOAT16 };
    double h[4] = { 0.5, 1.5, 2.0, 4.0 };
    for (size_t i = 0; i < 2; i++) {
        tg_tensor *x = kt_tensor(h, (int64_t[]){ 4 }, 1, halfs[i]);
        tg_tensor *r = tg_sum(x);
        tg_tensor *m = tg_mean(x);
        cr_assert_eq(tg_tensor_dtype(r), halfs[i]);
        kt_assert_close(r, (double[]){ 8 }, 1, 0, 0, "half sum");
        kt_assert_close(m, (double[]){ 2 }, 1, 0, 0, "half mean");
        kt_release_all(x, r, m);
    }
    kt_assert_no_leak(live);
}

Test(reduce, int_overflow_wraps_like_int64)
{
    kt_live live = kt_live_now();
    int64_t v[2] = { INT64_MAX, 1 };
    tg_tensor *x = kt_tensor_i64(v, (int64_t[]){ 2 }, 1);
    tg_tensor *r = tg_sum(x);
    cr_assert_eq(*(int64_t *)tg_tensor_data(r), INT64_MIN);
    kt_release_all(r, x);
    kt_assert_no_leak(live);
}

Test(reduce, mean_requires_floating)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    int64_t v[2] = { 1, 2 };
    tg_tensor *x = kt_tensor_i64(v, (int64_t[]){ 2 }, 1);
    kt_expect_error(
        tg_mean(x),
        "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long");
    tg_tensor *m = tg_mean(x, .dtype = TG_FLOAT64);
    cr_assert(m, "%s", tg_last_error());
    kt_assert_close(m, (double[]){ 1.5 }, 1, 0, 0, "mean dtype=float64 of int");
    kt_expect_error(tg_var(x), "std and var only support floating point and complex dtypes");
    kt_release_all(m, x);
    kt_assert_no_leak(live);
}

/* ---------------------------------------------------------------- empty, zero-dim, NaN */

Test(reduce, empty_inputs)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *x = kt_tensor(NULL, (int64_t[]){ 0, 3 }, 2, TG_FLOAT32);
    tg_tensor *s = tg_sum(x, .dim = TG_INTS(0));
    kt_assert_shape(s, (int64_t[]){ 3 }, 1);
    kt_assert_close(s, (double[]){ 0, 0, 0 }, 3, 0, 0, "sum of empty");
    tg_tensor *m = tg_mean(x, .dim = TG_INTS(0));
    kt_assert_close(m, (double[]){ NAN, NAN, NAN }, 3, 0, 0, "mean of empty");
    tg_tensor *p = tg_prod_dim(x, 0);
    kt_assert_close(p, (double[]){ 1, 1, 1 }, 3, 0, 0, "prod of empty");
    tg_tensor *a1 = tg_amax(x, .dim = TG_INTS(1));
    cr_assert(a1, "%s", tg_last_error());
    kt_assert_shape(a1, (int64_t[]){ 0 }, 1);
    tg_tensor *sall = tg_sum(x);
    kt_assert_close(sall, (double[]){ 0 }, 1, 0, 0, "full sum of empty");
    tg_tensor *v = tg_var(x);
    kt_assert_close(v, (double[]){ NAN }, 1, 0, 0, "var of empty");

    kt_expect_error(
        tg_amax(x),
        "amax(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
    kt_expect_error(tg_amin(x, .dim = TG_INTS(0)),
                    "amin(): Expected reduction dim 0 to have non-zero size.");
    tg_values_indices r = tg_max_dim(x, 0);
    cr_assert_null(r.values);
    kt_expect_error(r.indices, "max(): Expected reduction dim 0 to have non-zero size.");
    kt_expect_error(tg_argmax(x),
                    "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
    kt_expect_error(
        tg_max(x),
        "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
    kt_release_all(s, m, p, a1, sall, v, x);
    kt_assert_no_leak(live);
}

Test(reduce, zero_dim)
{
    kt_live live = kt_live_now();
    tg_tensor *x = kt_tensor((double[]){ 2.5 }, NULL, 0, TG_FLOAT32);
    tg_tensor *s = tg_sum(x);
    kt_assert_shape(s, NULL, 0);
    kt_assert_close(s, (double[]){ 2.5 }, 1, 0, 0, "sum 0-d");
    tg_tensor *s0 = tg_sum(x, .dim = TG_INTS(0), .keepdim = true);
    kt_assert_shape(s0, NULL, 0);
    tg_values_indices m = tg_max_dim(x, -1);
    cr_assert(m.values, "%s", tg_last_error());
    kt_assert_shape(m.values, NULL, 0);
    cr_assert_eq(*(int64_t *)tg_tensor_data(m.indices), 0);
    tg_tensor *mx = tg_max(x);
    kt_assert_close(mx, (double[]){ 2.5 }, 1, 0, 0, "max 0-d");
    tg_tensor *pr = tg_prod(x);
    kt_assert_close(pr, (double[]){ 2.5 }, 1, 0, 0, "prod 0-d");
    tg_tensor *sd = tg_std(x);
    kt_assert_close(sd, (double[]){ NAN }, 1, 0, 0, "std of one element, correction 1");
    tg_tensor *sd0 = tg_std(x, .correction = 0);
    kt_assert_close(sd0, (double[]){ 0 }, 1, 0, 0, "std of one element, correction 0");
    kt_release_all(s, s0, m.values, m.indices, mx, pr, sd, sd0, x);
    kt_assert_no_leak(live);
}

Test(reduce, nan_propagates_and_wins)
{
    kt_live live = kt_live_now();
    double v[8] = { 1, NAN, 5, NAN, -3, 7, 2, 0 };
    tg_tensor *x = kt_tensor(v, (int64_t[]){ 2, 4 }, 2, TG_FLOAT32);
    tg_tensor *a = tg_amax(x, .dim = TG_INTS(1));
    kt_assert_close(a, (double[]){ NAN, 7 }, 2, 0, 0, "amax with NaN");
    tg_tensor *b = tg_amin(x);
    kt_assert_close(b, (double[]){ NAN }, 1, 0, 0, "amin with NaN");
    tg_values_indices m = tg_max_dim(x, 1);
    kt_assert_close(m.values, (double[]){ NAN, 7 }, 2, 0, 0, "max.dim values");
    const int64_t *mi = tg_tensor_data(m.indices);
    cr_assert(mi[0] == 1 && mi[1] == 1, "max.dim indices %lld %lld", (long long)mi[0],
              (long long)mi[1]);
    tg_tensor *am = tg_argmin(x);
    cr_assert_eq(*(int64_t *)tg_tensor_data(am), 1, "argmin over all: first NaN");
    tg_tensor *mx = tg_max(x);
    kt_assert_close(mx, (double[]){ NAN }, 1, 0, 0, "max with NaN");
    kt_release_all(a, b, m.values, m.indices, am, mx, x);
    kt_assert_no_leak(live);
}

Test(reduce, first_occurrence_of_ties)
{
    kt_live live = kt_live_now();
    double v[6] = { 3, 1, 3, 1, 3, 1 };
    tg_tensor *x = kt_tensor(v, (int64_t[]){ 6 }, 1, TG_FLOAT64);
    tg_tensor *a = tg_argmax(x), *b = tg_argmin(x);
    cr_assert_eq(*(int64_t *)tg_tensor_data(a), 0);
    cr_assert_eq(*(int64_t *)tg_tensor_data(b), 1);
    kt_release_all(a, b, x);
    kt_assert_no_leak(live);
}

/* ---------------------------------------------------------------- out= */

Test(reduce, out_variants)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    double v[6] = { 1, 2, 3, 4, 5, 6 };
    tg_tensor *x = kt_tensor(v, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *out = kt_tensor((double[]){ 0, 0 }, (int64_t[]){ 2 }, 1, TG_FLOAT32);
    tg_tensor *r = tg_sum_out(x, out, .dim = TG_INTS(1));
    cr_assert_eq(r, out, "out= returns out");
    kt_assert_close(out, (double[]){ 6, 15 }, 2, 0, 0, "sum out=");
    tg_release(r);
    /* out of another float dtype: sum takes out's dtype */
    tg_tensor *o64 = kt_tensor(NULL, (int64_t[]){ 0 }, 1, TG_FLOAT64);
    r = tg_sum_out(x, o64, .dim = TG_INTS(0));
    cr_assert(r, "%s", tg_last_error());
    kt_assert_shape(o64, (int64_t[]){ 3 }, 1);
    kt_assert_close(o64, (double[]){ 5, 7, 9 }, 3, 0, 0, "sum out= resized");
    tg_release(r);
    /* wrong non-empty shape */
    cr_assert_null(tg_sum_out(x, out, .dim = TG_INTS(0)));
    tg_clear_error();
    /* amax: out dtype must match */
    kt_expect_error(
        tg_amax_out(x, o64, .dim = TG_INTS(0)),
        "Expected the dtype for input and out to match, but got Float for input's dtype and Double for out's dtype.");
    /* max.dim out= into a transposed (non-contiguous) values tensor */
    tg_tensor *vals = kt_tensor(NULL, (int64_t[]){ 1, 2 }, 2, TG_FLOAT32);
    tg_tensor *valsT = tg_t(vals);
    tg_tensor *idx = kt_tensor(NULL, (int64_t[]){ 2, 1 }, 2, TG_INT64);
    tg_values_indices m = tg_max_dim_out(x, 1, valsT, idx, .keepdim = true);
    cr_assert(m.values, "%s", tg_last_error());
    kt_assert_close(vals, (double[]){ 3, 6 }, 2, 0, 0, "max.dim out= values");
    kt_assert_close(idx, (double[]){ 2, 2 }, 2, 0, 0, "max.dim out= indices");
    kt_release_all(m.values, m.indices, vals, valsT, idx, out, o64, x);
    kt_assert_no_leak(live);
}

Test(reduce, dim_errors)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *x = kt_tensor((double[]){ 1, 2, 3, 4 }, (int64_t[]){ 2, 2 }, 2, TG_FLOAT32);
    kt_expect_error(tg_sum(x, .dim = TG_INTS(2)),
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    kt_expect_error(tg_sum(x, .dim = TG_INTS(1, -1)), "appears multiple times in the list of dims");
    tg_release(x);
    kt_assert_no_leak(live);
}

/* ---------------------------------------------------------------- fast paths vs float64 loops */

Test(reduce, large_float32_paths)
{
    kt_live live = kt_live_now();
    const int64_t R = 600, C = 700;
    double *v = malloc(sizeof(double) * R * C);
    kt_fill_random(v, R * C, 7, -1, 3);
    tg_tensor *x = kt_tensor(v, (int64_t[]){ R, C }, 2, TG_FLOAT32);
    /* the float32 values, exactly, for the float64 references */
    double *xf = kt_values(x);
    double *want = calloc((size_t)(R > C ? R : C), sizeof(double));

    /* rows (contiguous inner), metric: rel 1e-6 (one float32 rounding of a float64 sum) */
    for (int64_t i = 0; i < R; i++) {
        want[i] = 0;
        for (int64_t j = 0; j < C; j++) want[i] += xf[i * C + j];
    }
    tg_tensor *s1 = tg_sum(x, .dim = TG_INTS(1));
    kt_assert_close(s1, want, R, 1e-6, 1e-6, "row sums");
    /* columns (vertical path) */
    for (int64_t j = 0; j < C; j++) {
        want[j] = 0;
        for (int64_t i = 0; i < R; i++) want[j] += xf[i * C + j];
    }
    tg_tensor *s0 = tg_sum(x, .dim = TG_INTS(0));
    kt_assert_close(s0, want, C, 1e-6, 1e-6, "column sums");
    /* the same columns through a transposed view (rows of x^T are strided) */
    tg_tensor *xt = tg_t(x);
    tg_tensor *st = tg_sum(xt, .dim = TG_INTS(1));
    kt_assert_close(st, want, C, 1e-6, 1e-6, "row sums of transpose");
    /* extremes along rows and over everything (chunked) */
    for (int64_t i = 0; i < R; i++) {
        want[i] = -INFINITY;
        for (int64_t j = 0; j < C; j++) want[i] = fmax(want[i], xf[i * C + j]);
    }
    tg_tensor *mx1 = tg_amax(x, .dim = TG_INTS(1));
    kt_assert_close(mx1, want, R, 0, 0, "row maxima");
    double lo = INFINITY;
    for (int64_t i = 0; i < R * C; i++) lo = fmin(lo, xf[i]);
    tg_tensor *mn = tg_amin(xt);
    kt_assert_close(mn, &lo, 1, 0, 0, "global minimum");
    kt_release_all(mx1, mn);
    /* full reduction: chunked and merged; float64 reference */
    double tot = 0;
    for (int64_t i = 0; i < R * C; i++) tot += xf[i];
    tg_tensor *sa = tg_sum(x), *ma = tg_mean(xt);
    kt_assert_close(sa, &tot, 1, 1e-6, 0, "full sum");
    double mean = tot / (double)(R * C);
    kt_assert_close(ma, &mean, 1, 1e-6, 0, "full mean of transpose");
    /* var/std over everything vs two-pass float64 */
    double m2 = 0;
    for (int64_t i = 0; i < R * C; i++) m2 += (xf[i] - mean) * (xf[i] - mean);
    double var = m2 / (double)(R * C - 1), sd = sqrt(var);
    tg_tensor *va = tg_var(x), *sda = tg_std(xt);
    kt_assert_close(va, &var, 1, 1e-6, 0, "full var");
    kt_assert_close(sda, &sd, 1, 1e-6, 0, "full std");
    /* argmax over all with a planted maximum late in the array */
    float *px = tg_tensor_data(x);
    px[R * C - 5] = 10.0f;
    tg_tensor *am = tg_argmax(x);
    cr_assert_eq(*(int64_t *)tg_tensor_data(am), R * C - 5);
    px[R * C / 2] = NAN;
    tg_tensor *am2 = tg_argmax(x);
    cr_assert_eq(*(int64_t *)tg_tensor_data(am2), R * C / 2, "NaN wins over a later max");
    kt_release_all(s1, s0, xt, st, sa, ma, va, sda, am, am2, x);
    free(v);
    free(xf);
    free(want);
    kt_assert_no_leak(live);
}

/* A long contiguous float32 sum (the full-reduction path: fixed chunks, cap/reduce_loops.c's
 * double accumulators) against a float64 reference. Metric: |got - want| <= 2^-24 |want| (the
 * float32 result's rounding) + 4 * 2^-24 * sum |x| (the bound of a sum that rounds each element
 * at most three times in float; accumulating in double stays far inside it, and so must any
 * faster scheme that adds in float first). PyTorch's cascade sum is of that order;
 * a plain float accumulator over 2^22 elements near 1 would be off by ~2^-2 per add, far
 * outside it. The length is not a multiple of any vector group, so the tails are exercised;
 * under every capability (make test-capabilities). */
Test(reduce, long_float32_sum_error_bound)
{
    kt_live live = kt_live_now();
    const int64_t n = (INT64_C(1) << 22) + 37;
    tg_tensor *x = tg_rand(TG_INTS(n));
    float *px = tg_tensor_data(x);
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: values in [0, 1), all positive; pass 1: in [-1, 3), cancelling partly */
        if (pass == 1)
            for (int64_t i = 0; i < n; i++) px[i] = 4.0f * px[i] - 1.0f;
        double want = 0, abs_sum = 0;
        for (int64_t i = 0; i < n; i++) {
            want += px[i];
            abs_sum += fabs(px[i]);
        }
        tg_tensor *s = tg_sum(x);
        double got = *(float *)tg_tensor_data(s);
        double bound = ldexp(fabs(want), -24) + 4 * ldexp(abs_sum, -24);
        cr_assert(fabs(got - want) <= bound, "pass %d: sum %.9g, want %.9g (bound %.3g)", pass, got,
                  want, bound);
        tg_release(s);
    }
    tg_release(x);
    kt_assert_no_leak(live);
}

Test(reduce, var_is_stable_with_large_offset)
{
    kt_live live = kt_live_now();
    const int64_t n = 300000;
    double *v = malloc(sizeof(double) * n);
    kt_fill_random(v, n, 3, 0, 1);
    for (int64_t i = 0; i < n; i++) v[i] += 1e8;
    tg_tensor *x = kt_tensor(v, (int64_t[]){ n }, 1, TG_FLOAT64);
    double mean = 0, m2 = 0;
    for (int64_t i = 0; i < n; i++) mean += v[i];
    mean /= (double)n;
    for (int64_t i = 0; i < n; i++) m2 += (v[i] - mean) * (v[i] - mean);
    double want = m2 / (double)(n - 1);
    tg_tensor *r = tg_var(x);
    /* metric: rel 1e-6 (a naive sum-of-squares formula loses every digit here) */
    kt_assert_close(r, &want, 1, 1e-6, 0, "var with offset 1e8");
    kt_release_all(r, x);
    free(v);
    kt_assert_no_leak(live);
}

Test(reduce, expanded_input)
{
    kt_live live = kt_live_now();
    tg_tensor *x = kt_tensor((double[]){ 1, 2, 3 }, (int64_t[]){ 1, 3 }, 2, TG_FLOAT32);
    tg_tensor *e = tg_expand(x, TG_INTS(4, 3));
    tg_tensor *s = tg_sum(e, .dim = TG_INTS(0));
    kt_assert_close(s, (double[]){ 4, 8, 12 }, 3, 0, 0, "sum of expanded");
    tg_tensor *p = tg_prod(e);
    kt_assert_close(p, (double[]){ 1296 }, 1, 0, 0, "prod of expanded");
    kt_release_all(s, p, e, x);
    kt_assert_no_leak(live);
}

/* Every remaining out= variant once, into preallocated outputs (values by hand). */
Test(reduce, out_variants_all)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *x = kt_tensor((double[]){ 1, 4, 2, 8, 3, 5 }, (int64_t[]){ 2, 3 }, 2, TG_FLOAT64);
    tg_tensor *o = kt_tensor(NULL, (int64_t[]){ 2 }, 1, TG_FLOAT64);
    tg_tensor *oi = kt_tensor(NULL, (int64_t[]){ 2 }, 1, TG_INT64);
    tg_tensor *r;
    r = tg_mean_out(x, o, .dim = TG_INTS(1));
    kt_assert_close(o, (double[]){ 7.0 / 3, 16.0 / 3 }, 2, 1e-15, 0, "mean.out");
    tg_release(r);
    r = tg_prod_dim_out(x, 1, o);
    kt_assert_close(o, (double[]){ 8, 120 }, 2, 0, 0, "prod.int_out");
    tg_release(r);
    r = tg_amin_out(x, o, .dim = TG_INTS(1));
    kt_assert_close(o, (double[]){ 1, 3 }, 2, 0, 0, "amin.out");
    tg_release(r);
    r = tg_argmax_out(x, oi, .dim = 1);
    kt_assert_close(oi, (double[]){ 1, 0 }, 2, 0, 0, "argmax.out");
    tg_release(r);
    r = tg_argmin_out(x, oi, .dim = 1);
    kt_assert_close(oi, (double[]){ 0, 1 }, 2, 0, 0, "argmin.out");
    tg_release(r);
    r = tg_var_out(x, o, .dim = TG_INTS(1), .correction = 0);
    kt_assert_close(o, (double[]){ 14.0 / 9, 38.0 / 9 }, 2, 1e-14, 0, "var.out");
    tg_release(r);
    r = tg_std_out(x, o, .dim = TG_INTS(1));
    kt_assert_close(o, (double[]){ sqrt(7.0 / 3), sqrt(19.0 / 3) }, 2, 1e-14, 0, "std.out");
    tg_release(r);
    tg_values_indices m = tg_min_dim_out(x, 1, o, oi);
    kt_assert_close(o, (double[]){ 1, 3 }, 2, 0, 0, "min.dim_min values");
    kt_assert_close(oi, (double[]){ 0, 1 }, 2, 0, 0, "min.dim_min indices");
    kt_release_all(m.values, m.indices);
    tg_values_indices m2 = tg_min_dim(x, 0);
    kt_assert_close(m2.values, (double[]){ 1, 3, 2 }, 3, 0, 0, "min.dim values");
    kt_release_all(m2.values, m2.indices);
    tg_tensor *mn = tg_min(x);
    kt_assert_close(mn, (double[]){ 1 }, 1, 0, 0, "min");
    kt_release_all(mn, x, o, oi);
    kt_assert_no_leak(live);
}

/* The vector max/min loops (cap/reduce_loops.c): every length around the vector widths and a
 * long one (parallel chunks), against a scalar scan; a NaN at the start, inside a vector or in
 * the tail gives NaN. */
Test(reduce, amax_amin_float32_vector_loops_against_scan)
{
    int64_t live = tg_live_tensors();
    static const int64_t lens[] = { 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 200003 };
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        int64_t n = lens[li];
        float *v = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n; i++) v[i] = (float)((i * 7919) % 1009) - 504.5f;
        for (int nanpos = -1; nanpos < 3; nanpos++) {
            int64_t at = nanpos < 0 ? -1 : nanpos == 0 ? 0 : nanpos == 1 ? n / 2 : n - 1;
            float saved = at >= 0 ? v[at] : 0;
            if (at >= 0) v[at] = NAN;
            float mx = -INFINITY, mn = INFINITY;
            for (int64_t i = 0; i < n; i++) {
                if (v[i] > mx) mx = v[i];
                if (v[i] < mn) mn = v[i];
            }
            tg_tensor *x = tg_tensor_from_data(v, (int64_t[]){ n }, 1, TG_FLOAT32);
            tg_tensor *a = tg_amax(x), *b = tg_amin(x);
            float ga = *(const float *)tg_tensor_data(a), gb = *(const float *)tg_tensor_data(b);
            if (at >= 0) {
                cr_assert(isnan(ga) && isnan(gb), "n=%lld NaN at %lld: amax %g amin %g",
                          (long long)n, (long long)at, ga, gb);
                v[at] = saved;
            } else {
                cr_assert(ga == mx && gb == mn, "n=%lld: amax %g (want %g) amin %g (want %g)",
                          (long long)n, ga, mx, gb, mn);
            }
            kt_release_all(a, b, x);
        }
        free(v);
    }
    cr_assert_eq(tg_live_tensors(), live);
}
