/* softmax / log_softmax (and _softmax / _log_softmax) against PyTorch on a 4x7 input with a
 * +1000 row (overflows without max subtraction) and a -inf entry
 * (tests/fixtures/reduce_linalg_fixtures.h), and the fused float32 fast path against a float64
 * loop on 512x1000 random rows.
 *
 * Metrics: float64 |got - want| <= 1e-14 + 1e-12 |want|; float32, against PyTorch's float64
 * result for the float32-rounded input (outputs in [0, 1] for softmax, log-probabilities ~ -10 for log_softmax)
 * |got - want| <= 1e-6 + 1e-5 |want|: the fast exp has < 2 ulp error, the row sum ~1e-7 relative. */
#include "kt_util.h"
#include "../fixtures/reduce_linalg_fixtures.h"
#include "tg_cover.h"

TG_COVERS("softmax.int", "_softmax", "_softmax.out", "log_softmax.int", "_log_softmax",
          "_log_softmax.out");

Test(softmax, fixture_dims_and_dtypes)
{
    kt_live live = kt_live_now();
    for (int dd = 0; dd < 2; dd++) {
        tg_dtype dt = dd ? TG_FLOAT32 : TG_FLOAT64;
        double rt = dd ? 1e-5 : 1e-12, at = dd ? 1e-6 : 1e-14;
        tg_tensor *x = kt_tensor(fx_sm_x, (int64_t[]){ 4, 7 }, 2, dt);
        for (int dim = 0; dim < 2; dim++) {
            const double *ws = dd ? (dim ? fx_sm32_d1 : fx_sm32_d0) : (dim ? fx_sm_d1 : fx_sm_d0);
            const double *wl =
                dd ? (dim ? fx_lsm32_d1 : fx_lsm32_d0) : (dim ? fx_lsm_d1 : fx_lsm_d0);
            tg_tensor *s = tg_softmax(x, dim), *l = tg_log_softmax(x, dim - 2);
            cr_assert(s && l, "%s", tg_last_error());
            cr_assert_eq(tg_tensor_dtype(s), dt);
            kt_assert_close(s, ws, 28, rt, at, dim ? "softmax dim 1" : "softmax dim 0");
            kt_assert_close(l, wl, 28, rt, at, dim ? "log_softmax dim 1" : "log_softmax dim 0");
            tg_tensor *s2 = tg__softmax(x, dim, false);
            kt_assert_close(s2, ws, 28, rt, at, "_softmax");
            kt_release_all(s, l, s2);
        }
        /* non-contiguous: softmax over dim 0 of x^T is softmax over dim 1 of x */
        tg_tensor *xt = tg_t(x);
        tg_tensor *st = tg_softmax(xt, 0);
        tg_tensor *stt = tg_t(st);
        kt_assert_close(stt, dd ? fx_sm32_d1 : fx_sm_d1, 28, rt, at, "softmax of transpose");
        kt_release_all(xt, st, stt, x);
    }
    kt_assert_no_leak(live);
}

Test(softmax, dtype_argument_and_out)
{
    kt_live live = kt_live_now();
    tg_tensor *x = kt_tensor(fx_sm_x, (int64_t[]){ 4, 7 }, 2, TG_FLOAT32);
    tg_tensor *s = tg_softmax(x, 1, .dtype = TG_FLOAT64);
    cr_assert(s, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_dtype(s), TG_FLOAT64);
    kt_assert_close(s, fx_sm32_d1, 28, 1e-12, 1e-14, "softmax dtype=float64 of float32 input");
    tg_tensor *out = kt_tensor(NULL, (int64_t[]){ 4, 7 }, 2, TG_FLOAT32);
    tg_tensor *r = tg__log_softmax_out(x, 1, false, out);
    cr_assert_eq(r, out);
    kt_assert_close(out, fx_lsm32_d1, 28, 1e-5, 1e-6, "_log_softmax.out");
    tg_release(r);
    r = tg__softmax_out(x, 0, false, out);
    cr_assert_eq(r, out);
    kt_assert_close(out, fx_sm32_d0, 28, 1e-5, 1e-6, "_softmax.out");
    tg_tensor *l = tg__log_softmax(x, 0, false);
    kt_assert_close(l, fx_lsm32_d0, 28, 1e-5, 1e-6, "_log_softmax");
    kt_release_all(l, r, out, s, x);
    kt_assert_no_leak(live);
}

Test(softmax, fast_path_vs_float64_loop)
{
    kt_live live = kt_live_now();
    const int64_t R = 512, C = 1000; /* C not a multiple of 16: vector tails */
    double *v = malloc(sizeof(double) * R * C), *ws = malloc(sizeof(double) * R * C),
           *wl = malloc(sizeof(double) * R * C);
    kt_fill_random(v, R * C, 5, -20, 20);
    for (int64_t i = 0; i < R * C; i++) v[i] = (double)(float)v[i];
    for (int64_t i = 0; i < R; i++) {
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < C; j++) m = fmax(m, v[i * C + j]);
        for (int64_t j = 0; j < C; j++) s += exp(v[i * C + j] - m);
        for (int64_t j = 0; j < C; j++) {
            ws[i * C + j] = exp(v[i * C + j] - m) / s;
            wl[i * C + j] = v[i * C + j] - m - log(s);
        }
    }
    tg_tensor *x = kt_tensor(v, (int64_t[]){ R, C }, 2, TG_FLOAT32);
    tg_tensor *s = tg_softmax(x, -1), *l = tg_log_softmax(x, 1);
    kt_assert_close(s, ws, R * C, 1e-5, 1e-7, "softmax fast path");
    kt_assert_close(l, wl, R * C, 1e-5, 1e-5, "log_softmax fast path");
    kt_release_all(s, l, x);
    free(v);
    free(ws);
    free(wl);
    kt_assert_no_leak(live);
}

Test(softmax, special_values_and_errors)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    double v[6] = { 1, NAN, 2, -INFINITY, -INFINITY, -INFINITY };
    tg_tensor *x = kt_tensor(v, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *s = tg_softmax(x, 1);
    kt_assert_close(s, (double[]){ NAN, NAN, NAN, NAN, NAN, NAN }, 6, 0, 0,
                    "NaN row and all -inf row");
    tg_tensor *z = kt_tensor((double[]){ 3 }, NULL, 0, TG_FLOAT32);
    tg_tensor *sz = tg_softmax(z, 0), *lz = tg_log_softmax(z, -1);
    kt_assert_shape(sz, NULL, 0);
    kt_assert_close(sz, (double[]){ 1 }, 1, 0, 0, "softmax of 0-d");
    kt_assert_close(lz, (double[]){ 0 }, 1, 0, 0, "log_softmax of 0-d");
    tg_tensor *e = kt_tensor(NULL, (int64_t[]){ 0, 4 }, 2, TG_FLOAT32);
    tg_tensor *se = tg_softmax(e, 1);
    kt_assert_shape(se, (int64_t[]){ 0, 4 }, 2);
    tg_tensor *i = kt_tensor((double[]){ 1, 2 }, (int64_t[]){ 2 }, 1, TG_INT64);
    kt_expect_error(tg_softmax(i, 0), "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'");
    kt_expect_error(tg_softmax(x, 2),
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    kt_expect_error(tg__softmax(x, 1, true),
                    "softmax with half to float conversion is not supported on CPU");
    kt_release_all(s, x, z, sz, lz, e, se, i);
    kt_assert_no_leak(live);
}
