/* The autograd helper operators (sum_to_size, sum_backward, ..., _softmax_backward_data) and
 * the training operators (linear, mse_loss, nll_loss, cross_entropy, dropout) against
 * PyTorch (tests/fixtures/nn_fixtures.h, from tests/fixtures/gen_nn.py). Each helper is
 * compared with torch.autograd's gradient of the forward operator it differentiates.
 *
 * Metric: float64 throughout, |got - want| <= 1e-12 + 1e-10 |want| (the same arithmetic in a
 * different order); float32 runs of the losses use 1e-5 relative. */
#include "kt_util.h"
#include "../fixtures/nn_fixtures.h"
#include "tg_cover.h"

TG_COVERS("sum_to_size", "sum_backward", "restore_reduced_dims", "scale_grad_by_count",
          "permute_backward", "slice_backward", "select_backward",
          "value_selecting_reduction_backward", "var_backward", "prod_backward", "sign",
          "clamp_backward", "clamp_backward.Tensor", "clamp_backward_min", "clamp_backward_max",
          "div_tensor_self_backward", "div_tensor_other_backward", "threshold_backward",
          "_softmax_backward_data", "_log_softmax_backward_data", "native_dropout_backward");
TG_COVERS("linear", "linear_weight_backward", "mse_loss", "nll_loss", "nll_loss_forward",
          "nll_loss_backward", "cross_entropy_loss", "dropout", "native_dropout");

#define RT 1e-10
#define AT 1e-12
#define T64(v, ...)                            \
    kt_tensor((v), (int64_t[]){ __VA_ARGS__ }, \
              sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), TG_FLOAT64)

/* Checks r against want (and its shape), then releases r. */
static void check(tg_tensor *r, const double *want, int64_t n, const char *what)
{
    cr_assert(r, "%s: %s", what, tg_last_error());
    kt_assert_close(r, want, n, RT, AT, what);
    tg_release(r);
}

static void check_shape(tg_tensor *r, const int64_t *shape, int64_t ndim, const double *want,
                        const char *what)
{
    cr_assert(r, "%s: %s", what, tg_last_error());
    kt_assert_shape(r, shape, ndim);
    kt_assert_close(r, want, tg_tensor_numel(r), RT, AT, what);
    tg_release(r);
}

/* ------------------------------------------------------------------ reduction helpers */

Test(nn_helpers, sum_to_size_and_sum_backward)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_x234, 2, 3, 4);
    check_shape(tg_sum_to_size(x, TG_INTS(3, 1)), (int64_t[]){ 3, 1 }, 2, fx_sts_31,
                "sum_to_size [3, 1]");
    check_shape(tg_sum_to_size(x, TG_INTS(1, 4)), (int64_t[]){ 1, 4 }, 2, fx_sts_14,
                "sum_to_size [1, 4]");
    check_shape(tg_sum_to_size(x, TG_INTS(2, 1, 4)), (int64_t[]){ 2, 1, 4 }, 3, fx_sts_234,
                "sum_to_size [2, 1, 4]");
    tg_tensor *same = tg_sum_to_size(x, TG_INTS(2, 3, 4));
    cr_assert_eq(same, x, "sum_to_size to its own shape returns self");
    tg_release(same);
    kt_expect_error(tg_sum_to_size(x, TG_INTS(2, 4)),
                    "size {[2, 4]} is not expandable to size {[2, 3, 4]}.");

    tg_tensor *g = T64(fx_g3, 3);
    check_shape(tg_sum_backward(g, TG_INTS(2, 3, 4), TG_INTS(0, 2), false), (int64_t[]){ 2, 3, 4 },
                3, fx_sumbw, "sum_backward dims (0, 2)");
    tg_tensor *gk = tg_reshape(g, TG_INTS(1, 3, 1));
    check(tg_sum_backward(gk, TG_INTS(2, 3, 4), TG_INTS(0, -1), true), fx_sumbw, 24,
          "sum_backward keepdim");
    tg_tensor *g0 = tg_sum(g); /* all dims: a 0-dim grad expands */
    tg_tensor *all = tg_sum_backward(g0, TG_INTS(2, 3, 4), TG_NO_INTS, false);
    cr_assert(all, "%s", tg_last_error());
    kt_assert_shape(all, (int64_t[]){ 2, 3, 4 }, 3);
    kt_release_all(all, g0, gk, g, x);
    kt_assert_no_leak(live);
}

/* amax/amin's formula: scale_grad_by_count(restore_reduced_dims(grad), restore(result) == self). */
static tg_tensor *extreme_backward(tg_tensor *x, tg_tensor *grad, tg_tensor *result,
                                   tg_int_list dims, bool keepdim)
{
    tg_tensor *g = tg_restore_reduced_dims(grad, dims, keepdim);
    tg_tensor *r = tg_restore_reduced_dims(result, dims, keepdim);
    tg_tensor *mask = tg_eq(r, x);
    tg_tensor *out = tg_scale_grad_by_count(g, mask, dims);
    kt_release_all(g, r, mask);
    return out;
}

Test(nn_helpers, amax_amin_ties_share_evenly)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_ties, 3, 3), *g = T64(fx_gt3, 3);
    tg_tensor *mx = tg_amax(x, .dim = TG_INTS(1)), *mn = tg_amin(x, .dim = TG_INTS(0));
    check(extreme_backward(x, g, mx, TG_INTS(1), false), fx_amaxbw_d1, 9, "amax dim 1 backward");
    check(extreme_backward(x, g, mn, TG_INTS(0), false), fx_aminbw_d0, 9, "amin dim 0 backward");
    tg_tensor *mall = tg_amax(x), *g3 = tg_full(TG_INTS_EMPTY, 3.0, .dtype = TG_FLOAT64);
    check(extreme_backward(x, g3, mall, TG_INTS_EMPTY, false), fx_amaxbw_all, 9,
          "amax over all dims");
    /* keepdim: restore_reduced_dims is the identity */
    tg_tensor *same = tg_restore_reduced_dims(g, TG_INTS(0), true);
    cr_assert_eq(same, g);
    kt_release_all(same, mall, g3, mx, mn, x, g);
    kt_assert_no_leak(live);
}

Test(nn_helpers, value_selecting_var_prod)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_x234, 2, 3, 4);
    tg_tensor *gm = T64(fx_gm, 2, 4);
    tg_values_indices m = tg_max_dim(x, 1);
    cr_assert(m.values, "%s", tg_last_error());
    check(tg_value_selecting_reduction_backward(gm, 1, m.indices, TG_INTS(2, 3, 4), false),
          fx_maxdimbw, 24, "max.dim backward");
    tg_tensor *gmk = tg_unsqueeze(gm, 1), *ik = tg_unsqueeze(m.indices, 1);
    check(tg_value_selecting_reduction_backward(gmk, -2, ik, TG_INTS(2, 3, 4), true),
          fx_maxdimbw_keep, 24, "max.dim keepdim backward");
    kt_release_all(gmk, ik, m.values, m.indices);

    tg_tensor *gv = T64(fx_gv, 2, 4);
    check(tg_var_backward(gv, x, TG_INTS(1), TG_NONE_INT, false), fx_varbw, 24,
          "var dim 1 backward");
    tg_tensor *gvk = tg_unsqueeze(gv, 1);
    check(tg_var_backward(gvk, x, TG_INTS(1), 0, true), fx_varbw_c0_keep, 24,
          "var correction 0 keepdim");
    tg_tensor *g0 = tg_full(TG_INTS_EMPTY, 1.5, .dtype = TG_FLOAT64);
    check(tg_var_backward(g0, x, TG_NO_INTS, TG_NONE_INT, false), fx_varbw_all, 24,
          "var over all dims");
    /* a single element with correction 1: grad * (self == mean ? NaN : inf) = NaN */
    tg_tensor *one = tg_full(TG_INTS(1), 2.0, .dtype = TG_FLOAT64);
    tg_tensor *nanr = tg_var_backward(g0, one, TG_NO_INTS, TG_NONE_INT, false);
    cr_assert(nanr && isnan(tg_item(nanr)));
    kt_release_all(nanr, one, gvk, gv, g0);

    tg_tensor *xp = T64(fx_xp, 3, 4), *gp = T64(fx_gpr, 3), *yp = T64(fx_prod1, 3);
    check(tg_prod_backward(gp, xp, yp, 1, false), fx_prodbw, 12,
          "prod backward with 0, 2 and 1 zeros per row");
    tg_tensor *xr = tg_slice(xp, .dim = 0, .start = 2); /* no zeros: result / input */
    tg_tensor *yr = tg_slice(yp, .start = 2), *gr = tg_slice(gp, .start = 2);
    tg_tensor *yrk = tg_unsqueeze(yr, 1), *grk = tg_unsqueeze(gr, 1);
    check(tg_prod_backward(grk, xr, yrk, 1, true), fx_prodbw + 8, 4,
          "prod backward without zeros, keepdim");
    kt_release_all(xr, yr, gr, yrk, grk, xp, gp, yp, x, gm);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ view helpers */

Test(nn_helpers, permute_slice_select_backward)
{
    kt_live live = kt_live_now();
    tg_tensor *gp = T64(fx_gp, 4, 2, 3);
    check_shape(tg_permute_backward(gp, TG_INTS(2, 0, 1)), (int64_t[]){ 2, 3, 4 }, 3, fx_permbw,
                "permute backward");
    kt_expect_error(tg_permute_backward(gp, TG_INTS(0, 0, 1)), "duplicate dims");
    tg_tensor *gs = T64(fx_gs, 2, 3, 2);
    check_shape(tg_slice_backward(gs, TG_INTS(2, 3, 4), 2, 1, TG_NONE_INT, 2),
                (int64_t[]){ 2, 3, 4 }, 3, fx_slicebw, "slice backward");
    check(tg_slice_backward(gs, TG_INTS(2, 3, 4), -1, -3, 100, 2), fx_slicebw, 24,
          "slice backward, negative start, end past the size");
    tg_tensor *gsel = T64(fx_gsel, 2, 4);
    check_shape(tg_select_backward(gsel, TG_INTS(2, 3, 4), 1, -2), (int64_t[]){ 2, 3, 4 }, 3,
                fx_selectbw, "select backward");
    kt_expect_error(tg_select_backward(gsel, TG_INTS(2, 3, 4), 1, 3), "index 3 out of range");
    kt_release_all(gp, gs, gsel);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ pointwise helpers */

Test(nn_helpers, sign_clamp_div_threshold)
{
    kt_live live = kt_live_now();
    tg_tensor *xs = T64(fx_sign_x, 7);
    check(tg_sign(xs), fx_sign, 7, "sign");
    tg_tensor *xi = tg_to(xs, TG_INT32); /* NaN/inf convert to INT32_MIN: sign -1 */
    tg_tensor *si = tg_sign(xi);
    cr_assert_eq(tg_tensor_dtype(si), TG_INT32);
    kt_release_all(xi, si, xs);

    tg_tensor *xc = T64(fx_xc, 3, 4), *lo = T64(fx_lo, 3, 4), *hi = T64(fx_hi, 3, 4),
              *gc = T64(fx_gc, 3, 4);
    check(tg_clamp_backward(gc, xc, -0.3, 0.4), fx_clampbw_s, 12, "clamp_backward");
    check(tg_clamp_backward(gc, xc, -0.3, TG_NONE_FLOAT), fx_clampbw_smin, 12,
          "clamp_backward min only");
    check(tg_clamp_backward(gc, xc, TG_NONE_FLOAT, TG_NONE_FLOAT), fx_gc, 12,
          "clamp_backward without bounds");
    check(tg_clamp_backward_tensor(gc, xc, lo, hi), fx_clampbw_t_both_self, 12,
          "clamp_backward.Tensor");
    check(tg_clamp_backward_min(gc, xc, lo, hi), fx_clampbw_t_both_min, 12, "clamp_backward_min");
    check(tg_clamp_backward_max(gc, xc, lo, hi), fx_clampbw_t_both_max, 12, "clamp_backward_max");
    check(tg_clamp_backward_tensor(gc, xc, lo, NULL), fx_clampbw_t_min_self, 12,
          "clamp_backward.Tensor min only");
    check(tg_clamp_backward_min(gc, xc, lo, NULL), fx_clampbw_t_min_min, 12,
          "clamp_backward_min, no max");
    check(tg_clamp_backward_tensor(gc, xc, NULL, hi), fx_clampbw_t_max_self, 12,
          "clamp_backward.Tensor max only");
    check(tg_clamp_backward_max(gc, xc, NULL, hi), fx_clampbw_t_max_max, 12,
          "clamp_backward_max, no min");

    tg_tensor *a = T64(fx_da, 3, 4), *b = T64(fx_db, 4);
    check(tg_div_tensor_self_backward(gc, b), fx_divbw_self, 12, "div_tensor_self_backward");
    check(tg_div_tensor_other_backward(gc, a, b), fx_divbw_other_full, 12,
          "div_tensor_other_backward");
    tg_tensor *o = tg_div_tensor_other_backward(gc, a, b);
    check(tg_sum_to_size(o, TG_INTS(4)), fx_divbw_other, 4,
          "div_tensor_other_backward summed to other's shape");
    tg_release(o);
    static const double zeros[12] = { 0 };
    check(tg_div_tensor_self_backward(gc, b, .rounding_mode = "floor"), zeros, 12,
          "div backward, floor mode");
    check(tg_div_tensor_other_backward(gc, a, b, .rounding_mode = "trunc"), zeros, 12,
          "div backward, trunc mode");

    tg_tensor *tx = T64(fx_tb_x, 3, 4), *tgr = T64(fx_tb_g, 3, 4);
    check(tg_threshold_backward(tgr, tx, 0), fx_threshold_bw, 12, "threshold_backward 0");
    check(tg_threshold_backward(tgr, tx, 0.5), fx_threshold_bw_05, 12, "threshold_backward 0.5");
    tg_tensor *t32 = tg_to(tx, TG_FLOAT32), *g32 = tg_to(tgr, TG_FLOAT32), *xt = tg_t(t32);
    tg_tensor *r32 = tg_threshold_backward(g32, t32, 0);
    cr_assert_eq(tg_tensor_dtype(r32), TG_FLOAT32);
    kt_assert_close(r32, fx_threshold_bw, 12, 1e-6, 1e-7, "threshold_backward float32");
    tg_tensor *bad = tg_threshold_backward(g32, xt, 0); /* [3, 4] vs [4, 3] */
    kt_expect_error(bad, "must match the size of tensor");
    kt_release_all(t32, g32, xt, r32, tx, tgr, a, b, xc, lo, hi, gc);
    kt_assert_no_leak(live);
}

Test(nn_helpers, softmax_backward_data)
{
    kt_live live = kt_live_now();
    tg_tensor *g = T64(fx_smb_g, 3, 5);
    const double *ys[2] = { fx_smb_y0, fx_smb_y1 }, *lys[2] = { fx_lsmb_y0, fx_lsmb_y1 };
    const double *w[2] = { fx_smb_0, fx_smb_1 }, *lw[2] = { fx_lsmb_0, fx_lsmb_1 };
    for (int dim = 0; dim < 2; dim++) {
        tg_tensor *y = T64(ys[dim], 3, 5), *ly = T64(lys[dim], 3, 5);
        check(tg__softmax_backward_data(g, y, dim, TG_FLOAT64), w[dim], 15,
              "_softmax_backward_data");
        check(tg__log_softmax_backward_data(g, ly, dim - 2, TG_FLOAT64), lw[dim], 15,
              "_log_softmax_backward_data");
        /* float32 and a transposed (non-contiguous) grad */
        tg_tensor *g32 = tg_to(g, TG_FLOAT32), *y32 = tg_to(y, TG_FLOAT32);
        tg_tensor *r = tg__softmax_backward_data(g32, y32, dim, TG_FLOAT32);
        cr_assert_eq(tg_tensor_dtype(r), TG_FLOAT32);
        kt_assert_close(r, w[dim], 15, 1e-5, 1e-6, "_softmax_backward_data float32");
        tg_tensor *gt = tg_t(g), *gtc = tg_contiguous(gt),
                  *gtt = tg_t(gtc); /* gtt: g's values, strided */
        check(tg__softmax_backward_data(gtt, y, dim, TG_FLOAT64), w[dim], 15,
              "_softmax_backward_data strided grad");
        kt_release_all(gt, gtc, gtt, r, g32, y32, y, ly);
    }
    tg_tensor *y = T64(fx_smb_y0, 5, 3);
    kt_expect_error(tg__softmax_backward_data(g, y, 0, TG_FLOAT64),
                    "[3, 5] does not equal [5, 3] (while checking arguments for softmax_backward)");
    kt_release_all(y, g);
    kt_assert_no_leak(live);
}

/* linear's weight gradient grad^T @ input, against mm(t(grad), input) on the flattened
 * leading dims, and the outer product for a 1-D input. The result must be contiguous: it
 * becomes weight.grad without a copy. */
Test(nn_ops, linear_weight_backward)
{
    int64_t live = tg_live_tensors();
    tg_manual_seed(7);
    tg_tensor *grad = tg_randn(TG_INTS(2, 5, 4), .dtype = TG_FLOAT64);
    tg_tensor *input = tg_randn(TG_INTS(2, 5, 3), .dtype = TG_FLOAT64);
    tg_tensor *g2 = tg_reshape(grad, TG_INTS(10, 4)), *x2 = tg_reshape(input, TG_INTS(10, 3));
    tg_tensor *gt = tg_t(g2);
    tg_tensor *want = tg_mm(gt, x2);
    tg_tensor *got = tg_linear_weight_backward(grad, input);
    cr_assert(got, "%s", tg_last_error());
    kt_assert_shape(got, (int64_t[]){ 4, 3 }, 2);
    cr_expect(tg_tensor_is_contiguous(got));
    double w[12];
    cr_assert_eq(tg_tensor_to_doubles(want, w, 12), 0);
    kt_assert_close(got, w, 12, RT, AT, "linear_weight_backward 3-D");
    tg_tensor *g1 = tg_randn(TG_INTS(4), .dtype = TG_FLOAT64),
              *x1 = tg_randn(TG_INTS(3), .dtype = TG_FLOAT64);
    tg_tensor *outer = tg_linear_weight_backward(g1, x1);
    double gv[4], xv[3], ov[12];
    tg_tensor_to_doubles(g1, gv, 4);
    tg_tensor_to_doubles(x1, xv, 3);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) ov[i * 3 + j] = gv[i] * xv[j];
    kt_assert_shape(outer, (int64_t[]){ 4, 3 }, 2);
    kt_assert_close(outer, ov, 12, RT, AT, "linear_weight_backward 1-D");
    tg_tensor *all[] = { grad, input, g2, x2, gt, want, got, g1, x1, outer };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tg_release(all[i]);
    cr_assert_eq(tg_live_tensors(), live);
}

/* ------------------------------------------------------------------ linear and mse_loss */

Test(nn_ops, linear)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_lin_x, 2, 3, 5), *w = T64(fx_lin_w, 4, 5), *b = T64(fx_lin_b, 4);
    check_shape(tg_linear(x, w, .bias = b), (int64_t[]){ 2, 3, 4 }, 3, fx_lin_3d, "linear 3-D");
    check_shape(tg_linear(x, w), (int64_t[]){ 2, 3, 4 }, 3, fx_lin_nobias, "linear without bias");
    tg_tensor *x2 = tg_select(x, 0, 0), *x1 = tg_select(x2, 0, 0);
    check_shape(tg_linear(x2, w, .bias = b), (int64_t[]){ 3, 4 }, 2, fx_lin_2d,
                "linear 2-D (addmm)");
    check_shape(tg_linear(x1, w, .bias = b), (int64_t[]){ 4 }, 1, fx_lin_1d, "linear 1-D");
    tg_tensor *wt = tg_t(w); /* [5, 4]: in_features mismatch */
    kt_expect_error(tg_linear(x2, wt, .bias = b),
                    "mat1 and mat2 shapes cannot be multiplied (3x5 and 4x5)");
    kt_release_all(wt, x1, x2, x, w, b);
    kt_assert_no_leak(live);
}

static int warnings;
static void count_warning(const char *msg, void *user)
{
    (void)user;
    if (strstr(msg, "Using a target size")) warnings++;
}

Test(nn_ops, mse_loss)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_mse_x, 3, 4), *t = T64(fx_mse_t, 3, 4);
    check_shape(tg_mse_loss(x, t, .reduction = 0), (int64_t[]){ 3, 4 }, 2, fx_mse_none,
                "mse_loss none");
    check_shape(tg_mse_loss(x, t), (int64_t[]){ 0 }, 0, fx_mse_mean, "mse_loss mean (default)");
    check(tg_mse_loss(x, t, .reduction = 2), fx_mse_sum, 1, "mse_loss sum");
    tg_tensor *x32 = tg_to(x, TG_FLOAT32), *t32 = tg_to(t, TG_FLOAT32);
    tg_tensor *r = tg_mse_loss(x32, t32);
    cr_assert_eq(tg_tensor_dtype(r), TG_FLOAT32);
    kt_assert_close(r, fx_mse_mean, 1, 1e-5, 1e-6, "mse_loss float32");
    kt_release_all(r, x32, t32);
    /* a broadcasting target warns, as PyTorch */
    tg_set_warning_handler(count_warning, NULL);
    warnings = 0;
    tg_tensor *t1 = tg_slice(t, .end = 1);
    check(tg_mse_loss(x, t1), fx_mse_bcast, 1, "mse_loss with a broadcast target");
    cr_assert_eq(warnings, 1);
    tg_set_warning_handler(NULL, NULL);
    kt_expect_error(tg_mse_loss(x, t, .reduction = 3),
                    "reduction must be 0 (none), 1 (mean) or 2 (sum), but got 3");
    kt_release_all(t1, x, t);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ nll_loss */

Test(nn_ops, nll_loss_forward_backward_cases)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_nll_x, 5, 4), *w = T64(fx_nll_w, 4);
    tg_tensor *ts[2] = { kt_tensor_i64(fx_nll_t, (int64_t[]){ 5 }, 1),
                         kt_tensor_i64(fx_nll_t_ign, (int64_t[]){ 5 }, 1) };
    for (int64_t k = 0; k < KT_NUMEL(fx_nll_cases); k++) {
        const fx_nll_case *c = &fx_nll_cases[k];
        tg_tensor *wt = c->weight ? w : NULL;
        int64_t n = c->reduction == 0 ? 5 : 1;
        tg_output_total_weight o = tg_nll_loss_forward(x, ts[c->target], wt, c->reduction, -100);
        cr_assert(o.output, "case %lld: %s", (long long)k, tg_last_error());
        kt_assert_close(o.output, c->out, n, RT, AT, "nll_loss_forward output");
        kt_assert_close(o.total_weight, c->tw, 1, RT, AT, "nll_loss_forward total_weight");
        tg_tensor *via = tg_nll_loss(x, ts[c->target], .weight = wt, .reduction = c->reduction);
        check(via, c->out, n, "nll_loss");
        tg_tensor *go =
            c->reduction == 0 ? T64(c->go, 5) : kt_tensor(c->go, (int64_t[]){ 1 }, 0, TG_FLOAT64);
        check(tg_nll_loss_backward(go, x, ts[c->target], wt, c->reduction, -100, o.total_weight),
              c->gi, 20, "nll_loss_backward");
        kt_release_all(go, o.output, o.total_weight);
    }
    /* unbatched; ignore_index a real class; every target ignored (mean = NaN) */
    tg_tensor *x0 = tg_select(x, 0, 0), *t2 = tg_full(TG_INTS_EMPTY, 2, .dtype = TG_INT64);
    tg_output_total_weight o = tg_nll_loss_forward(x0, t2, w, 1, -100);
    kt_assert_close(o.output, fx_nll_1d, 1, RT, AT, "unbatched nll_loss");
    kt_assert_close(o.total_weight, fx_nll_1d + 1, 1, RT, AT, "unbatched total_weight");
    kt_release_all(o.output, o.total_weight);
    o = tg_nll_loss_forward(x, ts[0], NULL, 1, 3);
    kt_assert_close(o.output, fx_nll_ign3, 1, RT, AT, "ignore_index 3");
    kt_assert_close(o.total_weight, fx_nll_ign3 + 1, 1, RT, AT, "ignore_index 3 total_weight");
    kt_release_all(o.output, o.total_weight);
    tg_tensor *x2 = tg_slice(x, .end = 2), *tign = tg_full(TG_INTS(2), -100, .dtype = TG_INT64);
    o = tg_nll_loss_forward(x2, tign, NULL, 1, -100);
    kt_assert_close(o.output, fx_nll_allign, 1, RT, AT, "all ignored: NaN");
    kt_release_all(o.output, o.total_weight);
    /* float32 */
    tg_tensor *x32 = tg_to(x, TG_FLOAT32), *w32 = tg_to(w, TG_FLOAT32);
    tg_tensor *r = tg_nll_loss(x32, ts[1], .weight = w32);
    cr_assert_eq(tg_tensor_dtype(r), TG_FLOAT32);
    kt_assert_close(r, fx_nll_cases[10].out, 1, 1e-5, 1e-6,
                    "nll_loss float32"); /* ignored targets, weight, mean */
    kt_release_all(r, x32, w32, x0, t2, x2, tign, ts[0], ts[1], x, w);
    kt_assert_no_leak(live);
}

Test(nn_ops, nll_loss_nd)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_nll3_x, 2, 4, 3), *t = kt_tensor_i64(fx_nll3_t, (int64_t[]){ 2, 3 }, 2),
              *w = T64(fx_nll_w, 4);
    check_shape(tg_nll_loss(x, t, .weight = w, .reduction = 0), (int64_t[]){ 2, 3 }, 2,
                fx_nll3_none, "nll_loss (N, C, d)");
    check(tg_nll_loss(x, t, .weight = w), fx_nll3_mean, 1, "nll_loss (N, C, d) mean");
    tg_tensor *tbad = kt_tensor_i64(fx_nll3_t, (int64_t[]){ 2, 2 }, 2);
    kt_expect_error(tg_nll_loss(x, tbad), "Expected target size [2, 3], got [2, 2]");
    tg_tensor *t4 = kt_tensor_i64(fx_nll_t, (int64_t[]){ 4 }, 1);
    kt_expect_error(tg_nll_loss(x, t4),
                    "Expected input batch_size (2) to match target batch_size (4).");
    tg_tensor *s = tg_full(TG_INTS_EMPTY, 1.0, .dtype = TG_FLOAT64);
    kt_expect_error(tg_nll_loss(s, t4), "Expected 1 or more dimensions (got 0)");
    kt_release_all(s, t4, tbad, x, t, w);
    kt_assert_no_leak(live);
}

Test(nn_ops, nll_loss_errors)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_nll_x, 5, 4), *t = kt_tensor_i64(fx_nll_t, (int64_t[]){ 5 }, 1);
    tg_tensor *x3 = T64(fx_nll3_x, 2, 4, 3),
              *t2d = kt_tensor_i64(fx_nll3_t, (int64_t[]){ 2, 3 }, 2);
    tg_output_total_weight o = tg_nll_loss_forward(x3, t, NULL, 1, -100);
    kt_expect_error(o.output, "input tensor should be 1D or 2D");
    o = tg_nll_loss_forward(x, t2d, NULL, 1, -100);
    kt_assert_error("0D or 1D target tensor expected, multi-target not supported");
    tg_tensor *t3 = tg_slice(t, .end = 3);
    o = tg_nll_loss_forward(x, t3, NULL, 1, -100);
    kt_assert_error("size mismatch (got input: [5, 4], target: [3])");
    int64_t bad[5] = { 1, 2, 7, 0, 0 }, neg[5] = { 1, 2, -3, 0, 0 };
    tg_tensor *tb = kt_tensor_i64(bad, (int64_t[]){ 5 }, 1),
              *tn = kt_tensor_i64(neg, (int64_t[]){ 5 }, 1);
    o = tg_nll_loss_forward(x, tb, NULL, 0, -100);
    kt_assert_error("Target 7 is out of bounds.");
    o = tg_nll_loss_forward(x, tn, NULL, 1, -100);
    kt_assert_error("Target -3 is out of bounds.");
    tg_tensor *tf = tg_to(t, TG_FLOAT32), *ti = tg_to(t, TG_INT32), *xl = tg_to(x, TG_INT64);
    o = tg_nll_loss_forward(x, tf, NULL, 1, -100);
    kt_assert_error("expected scalar type Long but found Float");
    o = tg_nll_loss_forward(x, ti, NULL, 1, -100);
    kt_assert_error("expected scalar type Long but found Int");
    o = tg_nll_loss_forward(xl, t, NULL, 1, -100);
    kt_assert_error("\"nll_loss_out_frame\" not implemented for 'Long'");
    tg_tensor *w3 = tg_ones(TG_INTS(3), .dtype = TG_FLOAT64);
    o = tg_nll_loss_forward(x, t, w3, 1, -100);
    kt_assert_error(
        "weight tensor should be defined either for all 4 classes or no classes but got weight tensor of "
        "shape: [3]");
    kt_expect_error(tg_nll_loss(x, t, .reduction = -1), "reduction must be");
    /* backward: grad_output of the wrong shape */
    tg_tensor *tw = tg_ones(TG_INTS_EMPTY, .dtype = TG_FLOAT64),
              *go = tg_ones(TG_INTS(3), .dtype = TG_FLOAT64);
    kt_expect_error(
        tg_nll_loss_backward(go, x, t, NULL, 0, -100, tw),
        "Expected a tensor of dimension 1 and tensor.size[0] == 5 but got: dimension 1 and tensor.size[0] == 3");
    kt_expect_error(tg_nll_loss_backward(go, x, t, NULL, 1, -100, tw),
                    "Expected a single element grad_output tensor, but got: [3]");
    kt_release_all(w3, tw, go, tf, ti, xl, tb, tn, t3, x, t, x3, t2d);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ cross_entropy */

Test(nn_ops, cross_entropy)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_ce_x, 5, 4), *p = T64(fx_ce_p, 5, 4), *w = T64(fx_nll_w, 4);
    tg_tensor *t = kt_tensor_i64(fx_nll_t, (int64_t[]){ 5 }, 1);
    const double *plain[3] = { fx_ce_plain_none, fx_ce_plain_mean, fx_ce_plain_sum };
    const double *wt[3] = { fx_ce_w_none, fx_ce_w_mean, fx_ce_w_sum };
    const double *ign[3] = { fx_ce_ign_none, fx_ce_ign_mean, fx_ce_ign_sum };
    const double *ls[3] = { fx_ce_ls_none, fx_ce_ls_mean, fx_ce_ls_sum };
    const double *ls_w[3] = { fx_ce_ls_w_none, fx_ce_ls_w_mean, fx_ce_ls_w_sum };
    const double *ls_ign[3] = { fx_ce_ls_ign_none, fx_ce_ls_ign_mean, fx_ce_ls_ign_sum };
    const double *prob[3] = { fx_ce_prob_none, fx_ce_prob_mean, fx_ce_prob_sum };
    const double *prob_w[3] = { fx_ce_prob_w_none, fx_ce_prob_w_mean, fx_ce_prob_w_sum };
    const double *prob_ls[3] = { fx_ce_prob_ls_none, fx_ce_prob_ls_mean, fx_ce_prob_ls_sum };
    for (int r = 0; r < 3; r++) {
        int64_t n = r == 0 ? 5 : 1;
        check(tg_cross_entropy(x, t, .reduction = r), plain[r], n, "cross_entropy");
        check(tg_cross_entropy(x, t, .weight = w, .reduction = r), wt[r], n,
              "cross_entropy weight");
        check(tg_cross_entropy(x, t, .reduction = r, .ignore_index = 3), ign[r], n,
              "cross_entropy ignore_index");
        check(tg_cross_entropy(x, t, .reduction = r, .label_smoothing = 0.2), ls[r], n,
              "cross_entropy label_smoothing");
        check(tg_cross_entropy(x, t, .weight = w, .reduction = r, .label_smoothing = 0.2), ls_w[r],
              n, "cross_entropy label_smoothing weight");
        check(tg_cross_entropy(x, t, .reduction = r, .ignore_index = 3, .label_smoothing = 0.3),
              ls_ign[r], n, "cross_entropy label_smoothing ignore_index");
        check(tg_cross_entropy(x, p, .reduction = r), prob[r], n, "cross_entropy probabilities");
        check(tg_cross_entropy(x, p, .weight = w, .reduction = r), prob_w[r], n,
              "cross_entropy probabilities weight");
        check(tg_cross_entropy(x, p, .reduction = r, .label_smoothing = 0.25), prob_ls[r], n,
              "cross_entropy probabilities label_smoothing");
    }
    tg_tensor *x3 = T64(fx_ce3_x, 2, 4, 3), *t3 = kt_tensor_i64(fx_nll3_t, (int64_t[]){ 2, 3 }, 2);
    check(tg_cross_entropy(x3, t3), fx_ce3_mean, 1, "cross_entropy (N, C, d)");
    tg_tensor *x0 = tg_select(x, 0, 0), *t0 = tg_full(TG_INTS_EMPTY, 2, .dtype = TG_INT64);
    check(tg_cross_entropy(x0, t0), fx_ce_1d, 1, "cross_entropy unbatched");
    kt_expect_error(tg_cross_entropy(x, t, .label_smoothing = 1.5),
                    "label_smoothing must be between 0.0 and 1.0. Got: 1.5");
    kt_expect_error(tg_cross_entropy(x, p, .ignore_index = 1),
                    "ignore_index is not supported for floating point target");
    tg_tensor *pi = tg_to(p, TG_INT64);
    kt_expect_error(tg_cross_entropy(x, pi, .ignore_index = -1),
                    "Expected floating point type for target with class probabilities, got Long");
    kt_release_all(pi, x0, t0, x3, t3, x, p, w, t);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ dropout */

Test(nn_ops, dropout_statistics_and_mask)
{
    kt_live live = kt_live_now();
    const int64_t n = 100000;
    tg_tensor *x = tg_ones(TG_INTS(n), .dtype = TG_FLOAT32);
    tg_manual_seed(7);
    tg_tensors2 r = tg_native_dropout(x, 0.3, true);
    cr_assert(r.r0 && r.r1, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_dtype(r.r1), TG_BOOL);
    double *out = kt_values(r.r0), *mask = kt_values(r.r1);
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
        kept += mask[i] != 0;
        double want = mask[i] != 0 ? (double)(1.0f * (float)(1.0 / 0.7)) : 0.0;
        cr_assert(out[i] == want, "element %lld: %g with mask %g", (long long)i, out[i], mask[i]);
    }
    /* 70000 expected, sd ~145: 6 sd */
    cr_assert(kept > 69100 && kept < 70900, "kept %lld of %lld", (long long)kept, (long long)n);
    /* the backward helper: grad * mask * scale */
    tg_tensor *gb = tg_native_dropout_backward(x, r.r1, 1.0 / 0.7);
    kt_assert_close(gb, out, n, 1e-6, 0, "native_dropout_backward");
    tg_release(gb);
    free(out);
    free(mask);
    /* same seed, same draws */
    tg_manual_seed(7);
    tg_tensor *d = tg_dropout(x, 0.3, true);
    double *o2 = kt_values(d), *o1 = kt_values(r.r0);
    cr_assert(memcmp(o1, o2, sizeof(double) * (size_t)n) == 0,
              "dropout is reproducible under tg_manual_seed");
    free(o1);
    free(o2);
    kt_release_all(d, r.r0, r.r1, x);
    kt_assert_no_leak(live);
}

Test(nn_ops, dropout_edges_and_errors)
{
    kt_live live = kt_live_now();
    tg_tensor *x = T64(fx_mse_x, 3, 4);
    kt_assert_input_itself(tg_dropout(x, 0.5, false), x, "not training");
    kt_assert_input_itself(tg_dropout(x, 0, true), x, "p = 0");
    static const double zeros[12] = { 0 };
    check(tg_dropout(x, 1, true), zeros, 12, "p = 1 zeroes everything");
    tg_tensors2 r = tg_native_dropout(x, 0.5, false);
    check(r.r0, fx_mse_x, 12, "native_dropout train=False copies");
    double *m = kt_values(r.r1);
    for (int i = 0; i < 12; i++) cr_assert_eq(m[i], 1.0);
    free(m);
    tg_release(r.r1);
    tg_tensor *xt = tg_t(x);                      /* strided input */
    r = tg_native_dropout(xt, 0.5, TG_NONE_BOOL); /* None trains, as PyTorch's kernel */
    cr_assert(r.r0, "%s", tg_last_error());
    kt_assert_shape(r.r0, (int64_t[]){ 4, 3 }, 2);
    kt_release_all(r.r0, r.r1, xt);
    kt_expect_error(tg_dropout(x, 1.5, true),
                    "dropout probability has to be between 0 and 1, but got 1.5");
    r = tg_native_dropout(x, 1.5, true);
    kt_expect_error(r.r0, "bernoulli_ expects p to be in [0, 1], but got p=-0.5");
    tg_release(x);
    kt_assert_no_leak(live);
}
