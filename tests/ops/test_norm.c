/* Normalization and resizing operators against PyTorch 1.13 (tests/fixtures/norm_fixtures.h,
 * from tests/fixtures/gen_norm.py): native_batch_norm (training, eval, no affine, running
 * statistics), its backward, batch_norm, native_group_norm and its backward, group_norm,
 * instance_norm, upsample_nearest2d and upsample_bilinear2d (align_corners both ways, scales)
 * and their backward operators, in float64 and float32; and PyTorch's messages for bad
 * input. */
#include "kt_case.h"
#include "../fixtures/norm_fixtures.h"
#include "tg_cover.h"

TG_COVERS("batch_norm", "native_batch_norm", "native_batch_norm_backward", "group_norm",
          "native_group_norm", "native_group_norm_backward", "instance_norm", "upsample_nearest2d",
          "upsample_nearest2d_backward", "upsample_bilinear2d", "upsample_bilinear2d_backward",
          "upsample_nearest2d.vec", "upsample_nearest2d_backward.vec", "upsample_bilinear2d.vec",
          "upsample_bilinear2d_backward.vec");

static const tg_dtype DTS[2] = { TG_FLOAT64, TG_FLOAT32 };

#define T(v, dt, ...)                          \
    kt_tensor((v), (int64_t[]){ __VA_ARGS__ }, \
              sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), (dt))

static void close3(const tg_tensor *t, const double *want, int64_t n, tg_dtype dt, const char *what)
{
    cr_assert(t, "%s: %s", what, tg_last_error());
    double rtol, atol;
    kt_tol_of(&kt_tol_fx_norm, dt, &rtol, &atol);
    kt_assert_close(t, want, n, rtol, atol, what);
}

Test(norm, batch_norm_train_forward_backward)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_bn_x, dt, 4, 3, 5), *w = T(fx_bn_w, dt, 3), *b = T(fx_bn_b, dt, 3);
        tg_tensor *rm = T(fx_bn_rm, dt, 3), *rv = T(fx_bn_rv, dt, 3), *g = T(fx_bn_g, dt, 4, 3, 5);
        tg_tensors3 r = tg_native_batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5);
        close3(r.r0, fx_bn_train_y, 60, dt, "y");
        close3(r.r1, fx_bn_train_mean, 3, dt, "save_mean");
        close3(r.r2, fx_bn_train_invstd, 3, dt, "save_invstd");
        close3(rm, fx_bn_train_rm, 3, dt, "running_mean");
        close3(rv, fx_bn_train_rv, 3, dt, "running_var");
        tg_tensors3 gr = tg_native_batch_norm_backward(g, x, w, rm, rv, r.r1, r.r2, true, 1e-5,
                                                       TG_BOOLS(true, true, true));
        close3(gr.r0, fx_bn_train_gx, 60, dt, "grad_input");
        close3(gr.r1, fx_bn_train_gw, 3, dt, "grad_weight");
        close3(gr.r2, fx_bn_train_gb, 3, dt, "grad_bias");
        kt_release_tensors3(gr);
        /* only the input's gradient */
        gr = tg_native_batch_norm_backward(g, x, w, rm, rv, r.r1, r.r2, true, 1e-5,
                                           TG_BOOLS(true, false, false));
        close3(gr.r0, fx_bn_train_gx, 60, dt, "grad_input only");
        cr_expect_null(gr.r1);
        cr_expect_null(gr.r2);
        kt_release_tensors3(gr);
        kt_release_tensors3(r);
        tg_tensor *ts[] = { x, w, b, rm, rv, g };
        for (int i = 0; i < 6; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

Test(norm, batch_norm_through_autograd)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_bn_x, dt, 4, 3, 5), *g = T(fx_bn_g, dt, 4, 3, 5);
        tg_tensor_set_requires_grad(x, true);
        /* training, no affine, no running statistics */
        tg_tensor *y = tg_batch_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 1e-3, false);
        close3(y, fx_bn_plain_y, 60, dt, "y");
        cr_assert_eq(tg_backward(y, .grad = g), 0, "%s", tg_last_error());
        tg_tensor *gx = tg_tensor_grad(x);
        close3(gx, fx_bn_plain_gx, 60, dt, "grad");
        kt_release_all(gx, y, x, g);
        kt_assert_no_leak(base);
    }
}

Test(norm, batch_norm_eval)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_bn_x, dt, 4, 3, 5), *w = T(fx_bn_w, dt, 3), *b = T(fx_bn_b, dt, 3);
        tg_tensor *rm = T(fx_bn_rm, dt, 3), *rv = T(fx_bn_rv, dt, 3), *g = T(fx_bn_g, dt, 4, 3, 5);
        tg_tensors3 r = tg_native_batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5);
        close3(r.r0, fx_bn_eval_y, 60, dt, "y");
        cr_expect_eq(tg_tensor_numel(r.r1), 0);
        cr_expect_eq(tg_tensor_numel(r.r2), 0);
        close3(rm, fx_bn_rm, 3, dt, "running_mean unchanged");
        tg_tensors3 gr = tg_native_batch_norm_backward(g, x, w, rm, rv, r.r1, r.r2, false, 1e-5,
                                                       TG_BOOLS(true, true, true));
        close3(gr.r0, fx_bn_eval_gx, 60, dt, "grad_input");
        close3(gr.r1, fx_bn_eval_gw, 3, dt, "grad_weight");
        close3(gr.r2, fx_bn_eval_gb, 3, dt, "grad_bias");
        kt_release_tensors3(gr);
        kt_release_tensors3(r);
        tg_tensor *ts[] = { x, w, b, rm, rv, g };
        for (int i = 0; i < 6; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

Test(norm, batch_norm_4d_momentum)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_bn_x4, dt, 2, 3, 4, 5), *w = T(fx_bn_w, dt, 3), *b = T(fx_bn_b, dt, 3);
        tg_tensor *rm = T(fx_bn_rm, dt, 3), *rv = T(fx_bn_rv, dt, 3);
        tg_tensor *y = tg_batch_norm(x, w, b, rm, rv, true, 0.3, 1e-5, false);
        close3(y, fx_bn4_y, 120, dt, "y");
        close3(rm, fx_bn4_rm, 3, dt, "running_mean");
        close3(rv, fx_bn4_rv, 3, dt, "running_var");
        tg_tensor *ts[] = { x, w, b, rm, rv, y };
        for (int i = 0; i < 6; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

Test(norm, batch_norm_errors)
{
    kt_live base = kt_live_now();
    tg_tensor *x13 = tg_ones(TG_INTS(1, 3)), *x = tg_ones(TG_INTS(4, 3, 2));
    tg_tensor *v4 = tg_ones(TG_INTS(4)), *v3 = tg_ones(TG_INTS(3)), *x1 = tg_ones(TG_INTS(3));
    tg_tensor *xl = tg_ones(TG_INTS(4, 3, 2), .dtype = TG_INT64);
    tg_tensor *v3d = tg_ones(TG_INTS(3), .dtype = TG_FLOAT64);
    cr_expect_null(tg_batch_norm(x13, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, false));
    kt_assert_error("Expected more than 1 value per channel when training, got input size "
                    "torch.Size([1, 3])");
    cr_expect_null(tg_batch_norm(x, v4, NULL, NULL, NULL, true, 0.1, 1e-5, false));
    kt_assert_error("weight should contain 3 elements not 4");
    cr_expect_null(tg_batch_norm(x, NULL, NULL, v4, v3, false, 0.1, 1e-5, false));
    kt_assert_error("running_mean should contain 3 elements not 4");
    cr_expect_null(tg_native_batch_norm(x, NULL, NULL, v3, v4, true, 0.1, 1e-5).r0);
    kt_assert_error("running_var should contain 3 elements not 4");
    cr_expect_null(tg_native_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5).r0);
    kt_assert_error("running_mean must be defined in evaluation mode");
    cr_expect_null(tg_batch_norm(x1, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, false));
    kt_assert_error("Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    cr_expect_null(tg_native_batch_norm(xl, NULL, NULL, NULL, NULL, true, 0.1, 1e-5).r0);
    kt_assert_error("\"batch_norm\" not implemented for 'Long'");
    cr_expect_null(tg_native_batch_norm(x, v3d, NULL, NULL, NULL, true, 0.1, 1e-5).r0);
    kt_assert_error("mixed dtype (CPU): expect parameter to have scalar type of Float");
    cr_expect_null(tg_instance_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5, false));
    kt_assert_error("Expected running_mean and running_var to be defined when use_input_stats "
                    "is false");
    tg_tensor *ts[] = { x13, x, v4, v3, x1, xl, v3d };
    for (int i = 0; i < 7; i++) tg_release(ts[i]);
    kt_assert_no_leak(base);
}

Test(norm, group_norm_forward_backward)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_gn_x, dt, 2, 6, 2, 3), *w = T(fx_gn_w, dt, 6), *b = T(fx_gn_b, dt, 6);
        tg_tensor *g = T(fx_gn_g, dt, 2, 6, 2, 3);
        tg_tensors3 r = tg_native_group_norm(x, w, b, 2, 6, 6, 3, 1e-5);
        close3(r.r0, fx_gn_y, 72, dt, "y");
        close3(r.r1, fx_gn_mean, 6, dt, "mean");
        close3(r.r2, fx_gn_rstd, 6, dt, "rstd");
        tg_tensors3 gr = tg_native_group_norm_backward(g, x, r.r1, r.r2, w, 2, 6, 6, 3,
                                                       TG_BOOLS(true, true, true));
        close3(gr.r0, fx_gn_gx, 72, dt, "grad_input");
        close3(gr.r1, fx_gn_gw, 6, dt, "grad_weight");
        close3(gr.r2, fx_gn_gb, 6, dt, "grad_bias");
        kt_release_tensors3(gr);
        kt_release_tensors3(r);
        /* the composite, with autograd */
        tg_tensor_set_requires_grad(x, true);
        tg_tensor_set_requires_grad(w, true);
        tg_tensor *y = tg_group_norm(x, 3, .weight = w, .bias = b);
        close3(y, fx_gn_y, 72, dt, "group_norm");
        cr_assert_eq(tg_backward(y, .grad = g), 0, "%s", tg_last_error());
        tg_tensor *gx = tg_tensor_grad(x), *gw = tg_tensor_grad(w);
        close3(gx, fx_gn_gx, 72, dt, "x.grad");
        close3(gw, fx_gn_gw, 6, dt, "w.grad");
        kt_release_all(gx, gw, y);
        tg_tensor *x2 = T(fx_gn_x, dt, 2, 6, 2, 3);
        y = tg_group_norm(x2, 2, .eps = 1e-3);
        close3(y, fx_gn_plain_y, 72, dt, "group_norm plain");
        tg_release(y);
        tg_tensor *ts[] = { x, w, b, g, x2 };
        for (int i = 0; i < 5; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

Test(norm, group_norm_errors)
{
    kt_live base = kt_live_now();
    tg_tensor *x = tg_ones(TG_INTS(2, 6, 3)), *v5 = tg_ones(TG_INTS(5)), *x1 = tg_ones(TG_INTS(6));
    tg_tensor *xl = tg_ones(TG_INTS(2, 6, 3), .dtype = TG_INT64);
    cr_expect_null(tg_group_norm(x, 4));
    kt_assert_error("Expected number of channels in input to be divisible by num_groups, but got "
                    "input of shape [2, 6, 3] and num_groups=4");
    cr_expect_null(tg_group_norm(x, 3, .weight = v5));
    kt_assert_error("Expected weight to be a vector of size equal to the number of channels in "
                    "input, but got weight of shape [5] and input of shape [2, 6, 3]");
    cr_expect_null(tg_group_norm(x, 3, .bias = v5));
    kt_assert_error("Expected bias to be a vector of size equal to the number of channels in "
                    "input, but got bias of shape [0] and input of shape [2, 6, 3]");
    cr_expect_null(tg_group_norm(x1, 3));
    kt_assert_error("Dimension out of range (expected to be in range of [-1, 0], but got 1)");
    cr_expect_null(tg_native_group_norm(x, NULL, NULL, 2, 6, 4, 3, 1e-5).r0);
    kt_assert_error("Expected X.numel() == N * C * HxW to be true, but got false.");
    cr_expect_null(tg_native_group_norm(xl, NULL, NULL, 2, 6, 3, 3, 1e-5).r0);
    kt_assert_error("\"GroupNormKernelImpl\" not implemented for 'Long'");
    tg_tensor *ts[] = { x, v5, x1, xl };
    for (int i = 0; i < 4; i++) tg_release(ts[i]);
    kt_assert_no_leak(base);
}

Test(norm, instance_norm)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_in_x, dt, 2, 3, 4), *w = T(fx_bn_w, dt, 3), *b = T(fx_bn_b, dt, 3);
        tg_tensor *rm = T(fx_bn_rm, dt, 3), *rv = T(fx_bn_rv, dt, 3);
        tg_tensor *y = tg_instance_norm(x, w, b, rm, rv, true, 0.2, 1e-5, false);
        close3(y, fx_in_y, 24, dt, "y");
        close3(rm, fx_in_rm, 3, dt, "running_mean");
        close3(rv, fx_in_rv, 3, dt, "running_var");
        tg_release(y);
        tg_tensor *rm0 = T(fx_bn_rm, dt, 3), *rv0 = T(fx_bn_rv, dt, 3);
        y = tg_instance_norm(x, w, b, rm0, rv0, false, 0.2, 1e-5, false);
        close3(y, fx_in_eval_y, 24, dt, "eval y");
        tg_release(y);
        tg_tensor *ts[] = { x, w, b, rm, rv, rm0, rv0 };
        for (int i = 0; i < 7; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

typedef struct up_case {
    const char *name;
    int64_t oh, ow;
    tg_opt_float sh, sw;
    const double *g, *nearest, *nearest_bw, *bl[2], *bl_bw[2];
} up_case;

Test(norm, upsample)
{
    const up_case cases[] = {
        { "up",
          5,
          7,
          TG_NONE_FLOAT,
          TG_NONE_FLOAT,
          fx_up_up_g,
          fx_up_nearest_up,
          fx_up_nearest_up_bw,
          { fx_up_bilinear_nac_up, fx_up_bilinear_ac_up },
          { fx_up_bilinear_nac_up_bw, fx_up_bilinear_ac_up_bw } },
        { "down",
          2,
          3,
          TG_NONE_FLOAT,
          TG_NONE_FLOAT,
          fx_up_down_g,
          fx_up_nearest_down,
          fx_up_nearest_down_bw,
          { fx_up_bilinear_nac_down, fx_up_bilinear_ac_down },
          { fx_up_bilinear_nac_down_bw, fx_up_bilinear_ac_down_bw } },
        { "double",
          6,
          8,
          TG_NONE_FLOAT,
          TG_NONE_FLOAT,
          fx_up_double_g,
          fx_up_nearest_double,
          fx_up_nearest_double_bw,
          { fx_up_bilinear_nac_double, fx_up_bilinear_ac_double },
          { fx_up_bilinear_nac_double_bw, fx_up_bilinear_ac_double_bw } },
        { "scaled",
          7,
          9,
          2.5,
          2.3,
          fx_up_scaled_g,
          fx_up_nearest_scaled,
          fx_up_nearest_scaled_bw,
          { fx_up_bilinear_nac_scaled, fx_up_bilinear_ac_scaled },
          { fx_up_bilinear_nac_scaled_bw, fx_up_bilinear_ac_scaled_bw } },
        { "over",
          5,
          7,
          1.2,
          1.1,
          fx_up_over_g,
          fx_up_nearest_over,
          NULL,
          { NULL, NULL },
          { NULL, NULL } },
    };
    for (int k = 0; k < 2; k++) {
        tg_dtype dt = DTS[k];
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            kt_live base = kt_live_now();
            const up_case *u = &cases[c];
            int64_t n = 4 * u->oh * u->ow;
            char what[128];
            tg_tensor *x = T(fx_up_x, dt, 2, 2, 3, 4), *g = T(u->g, dt, 2, 2, u->oh, u->ow);
            tg_tensor *y = tg_upsample_nearest2d(x, TG_INTS(u->oh, u->ow), .scales_h = u->sh,
                                                 .scales_w = u->sw);
            snprintf(what, sizeof what, "nearest %s", u->name);
            close3(y, u->nearest, n, dt, what);
            tg_release(y);
            y = !u->nearest_bw
                    ? NULL
                    : tg_upsample_nearest2d_backward(g, TG_INTS(u->oh, u->ow), TG_INTS(2, 2, 3, 4),
                                                     .scales_h = u->sh, .scales_w = u->sw);
            snprintf(what, sizeof what, "nearest backward %s", u->name);
            if (u->nearest_bw) close3(y, u->nearest_bw, 48, dt, what);
            tg_release(y);
            for (int ac = 0; ac < 2 && u->bl[ac]; ac++) {
                y = tg_upsample_bilinear2d(x, TG_INTS(u->oh, u->ow), ac, .scales_h = u->sh,
                                           .scales_w = u->sw);
                snprintf(what, sizeof what, "bilinear %s align_corners=%d", u->name, ac);
                close3(y, u->bl[ac], n, dt, what);
                tg_release(y);
                if (!u->bl_bw[ac]) continue; /* PyTorch has no reliable values */
                y = tg_upsample_bilinear2d_backward(g, TG_INTS(u->oh, u->ow), TG_INTS(2, 2, 3, 4),
                                                    ac, .scales_h = u->sh, .scales_w = u->sw);
                snprintf(what, sizeof what, "bilinear backward %s align_corners=%d", u->name, ac);
                close3(y, u->bl_bw[ac], 48, dt, what);
                tg_release(y);
            }
            kt_release_all(x, g);
            kt_assert_no_leak(base);
        }
    }
}

Test(norm, upsample_non_contiguous_input)
{
    kt_live base = kt_live_now();
    tg_tensor *x = T(fx_up_x, TG_FLOAT64, 2, 2, 3, 4);
    tg_tensor *xt = tg_transpose(x, 2, 3); /* (2, 2, 4, 3) */
    tg_tensor *xc = tg_contiguous(xt);
    tg_tensor *a = tg_upsample_bilinear2d(xt, TG_INTS(5, 4), false);
    tg_tensor *b = tg_upsample_bilinear2d(xc, TG_INTS(5, 4), false);
    cr_assert(a && b, "%s", tg_last_error());
    double *vb = kt_values(b);
    kt_assert_close(a, vb, tg_tensor_numel(b), 0, 0, "strided");
    free(vb);
    tg_tensor *ts[] = { x, xt, xc, a, b };
    for (int i = 0; i < 5; i++) tg_release(ts[i]);
    kt_assert_no_leak(base);
}

Test(norm, upsample_errors)
{
    kt_live base = kt_live_now();
    tg_tensor *x3 = tg_ones(TG_INTS(3, 4, 5)), *x = tg_ones(TG_INTS(2, 3, 4, 5));
    tg_tensor *xl = tg_ones(TG_INTS(2, 3, 4, 5), .dtype = TG_INT64);
    tg_tensor *g = tg_ones(TG_INTS(2, 3, 2, 3)), *g3 = tg_ones(TG_INTS(2, 3, 2));
    tg_tensor *e = tg_ones(TG_INTS(2, 3, 0, 5));
    cr_expect_null(tg_upsample_nearest2d(x3, TG_INTS(2, 2)));
    kt_assert_error("It is expected input_size equals to 4, but got size 3");
    cr_expect_null(tg_upsample_nearest2d(x, TG_INTS(2)));
    kt_assert_error("It is expected output_size equals to 2, but got size 1");
    cr_expect_null(tg_upsample_bilinear2d(x, TG_INTS(0, 2), false));
    kt_assert_error("Input and output sizes should be greater than 0, but got input (H: 4, W: 5) "
                    "output (H: 0, W: 2)");
    cr_expect_null(tg_upsample_nearest2d(e, TG_INTS(2, 2)));
    kt_assert_error("Input and output sizes should be greater than 0, but got input (H: 0, W: 5) "
                    "output (H: 2, W: 2)");
    cr_expect_null(tg_upsample_nearest2d(xl, TG_INTS(2, 2)));
    kt_assert_error("\"compute_indices_weights_nearest\" not implemented for 'Long'");
    cr_expect_null(tg_upsample_bilinear2d(xl, TG_INTS(2, 2), true));
    kt_assert_error("\"compute_indices_weights_linear\" not implemented for 'Long'");
    cr_expect_null(tg_upsample_nearest2d_backward(g, TG_INTS(2, 2), TG_INTS(2, 3, 4)));
    kt_assert_error("It is expected input_size equals to 4, but got size 3");
    cr_expect_null(tg_upsample_nearest2d_backward(g, TG_INTS(2, 2), TG_INTS(2, 3, 4, 5)));
    kt_assert_error("Expected grad_output to have the same shape as output; output.size(3) = 2 "
                    "but got grad_output.size(3) = 3");
    cr_expect_null(tg_upsample_bilinear2d_backward(g3, TG_INTS(2, 2), TG_INTS(2, 3, 4, 5), false));
    kt_assert_error("Expected grad_output to be a tensor of dimension 4 but got: dimension 3");
    tg_tensor *ts[] = { x3, x, xl, g, g3, e };
    for (int i = 0; i < 6; i++) tg_release(ts[i]);
    kt_assert_no_leak(base);
}

Test(norm, upsample_vec)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_up_x, dt, 2, 2, 3, 4), *g = T(fx_upv_g, dt, 2, 2, 6, 6);
        tg_tensor *y = tg_upsample_nearest2d_vec(x, TG_NO_INTS, TG_FLOATS(1.7, 1.6));
        close3(y, fx_upv_nearest, 2 * 2 * 5 * 6, dt, "nearest.vec");
        kt_assert_shape(y, (int64_t[]){ 2, 2, 5, 6 }, 4);
        tg_release(y);
        y = tg_upsample_nearest2d_backward_vec(g, TG_NO_INTS, TG_INTS(2, 2, 3, 4),
                                               TG_FLOATS(2.0, 1.5));
        close3(y, fx_upv_nearest_bw, 48, dt, "nearest_backward.vec");
        tg_release(y);
        y = tg_upsample_bilinear2d_vec(x, TG_NO_INTS, false, TG_FLOATS(2.0, 1.5));
        close3(y, fx_upv_bilinear, 144, dt, "bilinear.vec");
        tg_release(y);
        y = tg_upsample_bilinear2d_backward_vec(g, TG_NO_INTS, TG_INTS(2, 2, 3, 4), true,
                                                TG_FLOATS(2.0, 1.5));
        close3(y, fx_upv_bilinear_bw, 48, dt, "bilinear_backward.vec");
        tg_release(y);
        /* output_size given: the base operator */
        tg_tensor *a = tg_upsample_bilinear2d_vec(x, TG_INTS(5, 7), true, TG_NO_FLOATS);
        tg_tensor *b = tg_upsample_bilinear2d(x, TG_INTS(5, 7), true);
        cr_assert(a && b, "%s", tg_last_error());
        double *vb = kt_values(b);
        kt_assert_close(a, vb, 140, 0, 0, "bilinear.vec output_size");
        free(vb);
        kt_release_all(a, b);
        cr_expect_null(tg_upsample_nearest2d_vec(x, TG_INTS(5, 7), TG_FLOATS(2.0, 2.0)));
        kt_assert_error("Must specify exactly one of output_size and scale_factors");
        cr_expect_null(tg_upsample_bilinear2d_vec(x, TG_NO_INTS, false, TG_NO_FLOATS));
        kt_assert_error("Must specify exactly one of output_size and scale_factors");
        cr_expect_null(tg_upsample_nearest2d_vec(x, TG_INTS(5), TG_NO_FLOATS));
        kt_assert_error("Expected static_cast<int64_t>(output_size->size()) == spatial_dimensions "
                        "to be true, but got false.");
        kt_release_all(x, g);
        kt_assert_no_leak(base);
    }
}
