/* The activation operators (leaky_relu, hardtanh, relu6, hardswish, hardsigmoid, elu, their
 * backward operators, elu_double_backward, feature_dropout) against PyTorch 1.13
 * (tests/fixtures/activation_fixtures.h, from tests/fixtures/gen_activation.py), beside their
 * value cases (tests/values/values_activation.c: PyTorch's values at 64 inputs in every dtype
 * and form, the fast paths, the other backends).
 *
 * Here: the breakpoints where PyTorch's vector loops differ from its scalar definitions,
 * PyTorch's errors, hardtanh's integer rules, gradients (first order of every forward operator
 * and of the in-place ones on a non-leaf, second order of the backward operators, against
 * torch.autograd: 1e-12 + 1e-10 |want|), and feature_dropout, which draws its own numbers: its
 * structure (whole channels, scaled by 1 / (1 - p)), its statistics and PyTorch's early
 * returns and errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_case.h"
#include "../fixtures/activation_fixtures.h"
#include "tg_cover.h"

TG_COVERS("leaky_relu", "leaky_relu_", "leaky_relu.out", "leaky_relu_backward", "hardtanh",
          "hardtanh_", "hardtanh.out", "hardtanh_backward", "relu6", "relu6_", "hardswish",
          "hardswish_", "hardswish.out", "hardswish_backward", "hardsigmoid", "hardsigmoid_",
          "hardsigmoid.out", "hardsigmoid_backward", "elu", "elu_", "elu.out", "elu_backward",
          "elu_double_backward", "feature_dropout", "feature_dropout_");

/* r has dtype dt and, within the fixture's float64 bound, the values want; released. */
static void check_values(tg_tensor *r, tg_dtype dt, const double *want, int64_t n, const char *what)
{
    cr_assert(r, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(r), dt, "%s: dtype %s", what, tg_dtype_name(tg_tensor_dtype(r)));
    double rtol, atol;
    kt_tol_of(&kt_tol_fx_activation, dt, &rtol, &atol);
    kt_assert_close(r, want, n, rtol, atol, what);
    tg_release(r);
}

/* The backward operators whose second derivatives are checked below. */
typedef tg_tensor *(*bin_fn)(tg_tensor *g, tg_tensor *x);
static tg_tensor *f_leaky_relu_backward(tg_tensor *g, tg_tensor *x)
{
    return tg_leaky_relu_backward(g, x, 0.2, false);
}
static tg_tensor *f_hardswish_backward(tg_tensor *g, tg_tensor *x)
{
    return tg_hardswish_backward(g, x);
}
static tg_tensor *f_elu_backward(tg_tensor *g, tg_tensor *x)
{
    return tg_elu_backward(g, 2.0, 1.5, 0.5, false, x);
}
static tg_tensor *f_elu_backward_res(tg_tensor *g, tg_tensor *x)
{
    return tg_elu_backward(g, 2.0, 1.5, 0.5, true, x);
}

/* PyTorch's scalar definitions at the points where its AVX2 loops differ (the fixture holds
 * the scalar values; spelled out here). */
Test(activation, breakpoints_follow_the_scalar_definition)
{
    kt_live live = kt_live_now();
    const double xs[] = { -3, 3, NAN, -1, 1 };
    tg_tensor *x = kt_tensor(xs, (int64_t[]){ 5 }, 1, TG_FLOAT64);
    tg_tensor *g = tg_full(TG_INTS(5), 2.0, .dtype = TG_FLOAT64);
    check_values(tg_hardswish_backward(g, x), TG_FLOAT64, (double[]){ -1, 3, 2, 1.0 / 3, 5.0 / 3 },
                 5, "hardswish_backward at -3, 3, NaN");
    check_values(tg_hardsigmoid_backward(g, x), TG_FLOAT64,
                 (double[]){ 0, 0, 0, 2 * (double)(1.0f / 6.0f), 2 * (double)(1.0f / 6.0f) }, 5,
                 "hardsigmoid_backward: open interval, 1/6 rounded to float");
    check_values(tg_hardtanh_backward(g, x, -1, 1), TG_FLOAT64, (double[]){ 0, 0, 2, 0, 0 }, 5,
                 "hardtanh_backward: bounds excluded, NaN keeps grad");
    check_values(tg_elu_backward(g, 1, 1, 1, false, x), TG_FLOAT64,
                 (double[]){ 2 * exp(-3), 2, 2, 2 * exp(-1), 2 }, 5, "elu_backward at NaN: scale");
    kt_release_all(g, x);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ errors */

Test(activation, dtype_errors_name_pytorch_kernels)
{
    kt_live live = kt_live_now();
    tg_tensor *i = tg_arange(3), *b = tg_ones(TG_INTS(3), .dtype = TG_BOOL);
    tg_tensor *f = tg_ones(TG_INTS(3));
    kt_expect_error(tg_leaky_relu(i), "\"leaky_relu_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_leaky_relu(b), "\"leaky_relu_cpu\" not implemented for 'Bool'");
    kt_expect_error(tg_leaky_relu_(i), "\"leaky_relu_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_hardswish(i), "\"hardswish_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_hardsigmoid(i), "\"hardsigmoid_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_elu(i), "\"elu_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_leaky_relu_backward(i, i, 0.1, false),
                    "\"leaky_relu_backward_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_leaky_relu_backward(b, b, 0.1, false),
                    "\"leaky_relu_backward_cpu\" not implemented for 'Bool'");
    kt_expect_error(tg_hardtanh_backward(i, i, -1, 1),
                    "\"hardshrink_backward_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_hardswish_backward(i, i),
                    "\"hardswish_backward_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_hardsigmoid_backward(i, i),
                    "\"hardsigmoid_backward\" not implemented for 'Long'");
    kt_expect_error(tg_elu_backward(i, 1, 1, 1, false, i),
                    "\"elu_backward_cpu\" not implemented for 'Long'");
    /* int64 grad with a float self promotes: accepted */
    tg_tensor *ok = tg_leaky_relu_backward(i, f, 0.1, false);
    cr_assert(ok && tg_tensor_dtype(ok) == TG_FLOAT32, "int64 grad, float32 self: %s",
              tg_last_error());
    tg_release(ok);

    /* The in-place forward's backward (from the result) needs a slope >= 0. */
    kt_expect_error(
        tg_leaky_relu_backward(f, f, -0.1, true),
        "In-place leakyReLu backward calculation is triggered with a negative slope "
        "which is not supported. This is caused by calling in-place forward function "
        "with a negative slope, please call out-of-place version instead. File an issue "
        "at https://github.com/pytorch/pytorch if you do require supporting in-place "
        "leakRelu backward calculation with negative slope");
    kt_expect_error(tg_elu_backward(f, -1, 1, 1, true, f),
                    "In-place elu backward calculation is triggered with a negative slope which is "
                    "not supported. This is caused by calling in-place forward function with a "
                    "negative slope, please call out-of-place version instead.");
    tg_tensor *neg = tg_leaky_relu_backward(f, f, -0.1, false);
    cr_assert(neg, "a negative slope from the input is fine: %s", tg_last_error());
    tg_release(neg);

    /* out= must have self's dtype (structured unary operators). */
    tg_tensor *o64 = tg_empty(TG_INTS(3), .dtype = TG_FLOAT64);
    kt_expect_error(tg_leaky_relu_out(f, o64), "Found dtype Double but expected Float");
    kt_expect_error(tg_hardswish_out(f, o64), "Found dtype Double but expected Float");
    kt_expect_error(tg_hardsigmoid_out(f, o64), "Found dtype Double but expected Float");
    kt_expect_error(tg_elu_out(f, o64), "Found dtype Double but expected Float");
    kt_expect_error(tg_hardtanh_out(f, o64), "Found dtype Double but expected Float");
    kt_release_all(o64, i, b, f);
    kt_assert_no_leak(live);
}

/* hardtanh is PyTorch's clamp with its integer rules: bounds truncated (no promotion), uint8
 * refuses negative bounds, bool is refused. relu6 is hardtanh(0, 6). */
Test(activation, hardtanh_integers_and_bool)
{
    kt_live live = kt_live_now();
    static const tg_dtype dts[] = { TG_INT64, TG_INT32, TG_INT16, TG_INT8 };
    for (int d = 0; d < 4; d++) {
        tg_tensor *x = kt_tensor(fa_xi, (int64_t[]){ 7 }, 1, dts[d]);
        tg_tensor *r = tg_hardtanh(x, .min_val = -1.5, .max_val = 1.7);
        cr_assert(r && tg_tensor_dtype(r) == dts[d], "hardtanh %s keeps the dtype: %s",
                  tg_dtype_name(dts[d]), tg_last_error());
        kt_assert_close(r, fa_hardtanh_int, 7, 0, 0, "hardtanh integers");
        tg_release(r);
        r = tg_relu6(x);
        cr_assert(r && tg_tensor_dtype(r) == dts[d], "relu6 %s", tg_last_error());
        kt_assert_close(r, fa_relu6_int, 7, 0, 0, "relu6 integers");
        tg_release(r);
        r = tg_hardtanh_(x, .min_val = -1.5, .max_val = 1.7);
        cr_assert_eq(r, x, "hardtanh_ in place: %s", tg_last_error());
        kt_assert_close(x, fa_hardtanh_int, 7, 0, 0, "hardtanh_ integers");
        kt_release_all(r, x);
    }
    tg_tensor *u = tg_ones(TG_INTS(2), .dtype = TG_UINT8);
    kt_expect_error(tg_hardtanh(u), "cannot do hardtanh on an unsigned type with negative limits");
    tg_tensor *r = tg_hardtanh(u, .min_val = -0.5, .max_val = 1); /* -0.5 truncates to 0 */
    cr_assert(r && tg_tensor_dtype(r) == TG_UINT8, "uint8 (-0.5, 1): %s", tg_last_error());
    tg_release(r);
    tg_tensor *b = tg_ones(TG_INTS(2), .dtype = TG_BOOL);
    kt_expect_error(tg_hardtanh(b), "Bool inputs not supported for hardtanh");
    kt_expect_error(tg_relu6(b), "Bool inputs not supported for hardtanh");
    kt_release_all(b, u);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ autograd */

#define GRT 1e-10
#define GAT 1e-12

/* d<v, f(x)>/dx at the fixture's x (a (3, 5) float64 leaf). */
static void check_grad(tg_tensor *(*f)(tg_tensor *x), const double *want, const char *what)
{
    kt_assert_vjp(f, fa_xa, fa_v, (int64_t[]){ 3, 5 }, 2, want, GRT, GAT, what);
}

static tg_tensor *g_leaky_relu(tg_tensor *x) { return tg_leaky_relu(x, .negative_slope = 0.2); }
static tg_tensor *g_hardtanh(tg_tensor *x) { return tg_hardtanh(x, .min_val = -2, .max_val = 2.5); }
static tg_tensor *g_elu(tg_tensor *x)
{
    return tg_elu(x, .alpha = 2, .scale = 1.5, .input_scale = 0.5);
}
/* In place on a non-leaf: x * 1, then the operator in place (inside check_grad's scope). */
static tg_tensor *in_place_on(tg_tensor *x, tg_tensor *(*op)(tg_tensor *))
{
    return op(tg_mul_scalar(x, 1.0));
}
static tg_tensor *ip_leaky(tg_tensor *s) { return tg_leaky_relu_(s, .negative_slope = 0.2); }
static tg_tensor *ip_elu2(tg_tensor *s)
{
    return tg_elu_(s, .alpha = 2, .scale = 1.5, .input_scale = 0.5);
}
static tg_tensor *ip_htanh(tg_tensor *s) { return tg_hardtanh_(s, .min_val = -2, .max_val = 2.5); }
static tg_tensor *g_leaky_relu_(tg_tensor *x) { return in_place_on(x, ip_leaky); }
static tg_tensor *g_elu_(tg_tensor *x) { return in_place_on(x, ip_elu2); }
static tg_tensor *g_hardswish_(tg_tensor *x) { return in_place_on(x, tg_hardswish_); }
static tg_tensor *g_hardtanh_(tg_tensor *x) { return in_place_on(x, ip_htanh); }

Test(activation, gradients_match_torch)
{
    kt_live live = kt_live_now();
    check_grad(g_leaky_relu, fa_grad_leaky_relu, "leaky_relu");
    check_grad(g_hardtanh, fa_grad_hardtanh, "hardtanh");
    check_grad(tg_relu6, fa_grad_relu6, "relu6");
    check_grad(tg_hardswish, fa_grad_hardswish, "hardswish");
    check_grad(tg_hardsigmoid, fa_grad_hardsigmoid, "hardsigmoid");
    check_grad(g_elu, fa_grad_elu, "elu");
    check_grad(g_leaky_relu_, fa_grad_leaky_relu_, "leaky_relu_ (from its result)");
    check_grad(g_elu_, fa_grad_elu_, "elu_ (from its result)");
    check_grad(g_hardswish_, fa_grad_hardswish_, "hardswish_ (original self)");
    check_grad(g_hardtanh_, fa_grad_hardtanh_, "hardtanh_ (original self)");
    kt_assert_no_leak(live);
}

/* d<w, f(g, x)>/dg and /dx through the backward operators' own derivatives (double backward). */
static void check_second(bin_fn f, const double *v, const double *x_, int64_t n, const double *w_,
                         const double *want_g, const double *want_x, const char *what)
{
    kt_assert_second(f, v, x_, n, w_, want_g, want_x, GRT, GAT, what);
}

static tg_tensor *s_hardtanh_backward(tg_tensor *g, tg_tensor *x)
{
    return tg_hardtanh_backward(g, x, -2.0, 2.5);
}

Test(activation, second_derivatives_match_torch)
{
    kt_live live = kt_live_now();
    check_second(f_leaky_relu_backward, fa_v, fa_xa, 15, fa_w, fa_gg_leaky_relu_backward_g,
                 fa_gg_leaky_relu_backward_x, "leaky_relu_backward");
    check_second(s_hardtanh_backward, fa_v, fa_xa, 15, fa_w, fa_gg_hardtanh_backward_g,
                 fa_gg_hardtanh_backward_x, "hardtanh_backward");
    check_second(f_hardswish_backward, fa_v, fa_xa, 15, fa_w, fa_gg_hardswish_backward_g,
                 fa_gg_hardswish_backward_x, "hardswish_backward");
    check_second(f_elu_backward, fa_v, fa_xa, 15, fa_w, fa_gg_elu_backward_g, fa_gg_elu_backward_x,
                 "elu_backward (elu_double_backward)");
    check_second(f_elu_backward_res, fa_v, fa_xa, 15, fa_w, fa_gg_elu_backward_res_g,
                 fa_gg_elu_backward_res_x, "elu_backward from the result (elu_double_backward)");
    /* At the breakpoints: hardswish_backward's derivative for self is nonzero strictly inside
     * (-3, 3); elu_double_backward's mask is self_or_result < 0 (0 at 0). */
    check_second(f_hardswish_backward, fa_vb, fa_xb, 7, NULL, fa_gg_hswb_break_g,
                 fa_gg_hswb_break_x, "hardswish_backward at -3, 3");
    check_second(f_elu_backward, (double[]){ 1, 1, 1, 1 }, fa_xe, 4, NULL, NULL, fa_gg_elu_break_x,
                 "elu_backward at 0");
    kt_assert_no_leak(live);
}

/* hardsigmoid_backward has no derivative (none in PyTorch 1.13 either). */
Test(activation, hardsigmoid_double_backward_is_not_implemented)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *x =
        tg_tensor_set_requires_grad(kt_tensor(fa_xa, (int64_t[]){ 15 }, 1, TG_FLOAT64), true);
    tg_tensor *y = tg_sum(tg_hardsigmoid(x)), *gx = NULL;
    cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(x), &gx, .create_graph = true), 0, "%s",
                 tg_last_error());
    cr_assert_eq(tg_backward(tg_sum(gx)), -1, "double backward through hardsigmoid_backward");
    cr_assert(
        strstr(tg_last_error(), "the derivative for 'hardsigmoid_backward' is not implemented"),
        "%s", tg_last_error());
    tg_clear_error();
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* elu_ with a negative alpha: the forward runs, its backward (from the result) refuses. */
Test(activation, elu_in_place_negative_alpha_backward_fails)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *x =
        tg_tensor_set_requires_grad(kt_tensor(fa_xa, (int64_t[]){ 15 }, 1, TG_FLOAT64), true);
    tg_tensor *t = tg_mul_scalar(x, 1.0);
    cr_assert(tg_elu_(t, .alpha = -1), "%s", tg_last_error());
    cr_assert_eq(tg_backward(tg_sum(t)), -1);
    cr_assert(strstr(tg_last_error(), "In-place elu backward calculation is triggered with a "
                                      "negative slope"),
              "%s", tg_last_error());
    tg_clear_error();
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ feature_dropout */

/* The value every element of channel (n, c) of r holds relative to x: 0 or `scale`; checks
 * that a channel is all one or all the other and returns how many channels were kept. */
static int64_t check_channels(tg_tensor *r, tg_tensor *x, int64_t nc, int64_t inner, double scale,
                              const char *what)
{
    double *rv = kt_values(r), *xv = kt_values(x);
    int64_t kept = 0;
    for (int64_t ch = 0; ch < nc; ch++) {
        bool keep = rv[ch * inner] != 0;
        kept += keep;
        for (int64_t k = 0; k < inner; k++) {
            double want = keep ? xv[ch * inner + k] * scale : 0.0;
            cr_assert(fabs(rv[ch * inner + k] - want) <= 1e-6 * fabs(want),
                      "%s: channel %lld element %lld is %g, expected %g", what, (long long)ch,
                      (long long)k, rv[ch * inner + k], want);
        }
    }
    free(rv);
    free(xv);
    return kept;
}

Test(feature_dropout, whole_channels_scaled_and_counted)
{
    kt_live live = kt_live_now();
    tg_manual_seed(2024);
    const int64_t N = 40, C = 100, H = 3, W = 2; /* 4000 channels */
    tg_tensor *u = tg_rand(TG_INTS(N, C, H, W));
    tg_tensor *x = tg_add_scalar(u, 0.5); /* no zeros in x */
    tg_release(u);
    const double p = 0.3;
    tg_tensor *r = tg_feature_dropout(x, p, true);
    cr_assert(r, "%s", tg_last_error());
    kt_assert_shape(r, (int64_t[]){ N, C, H, W }, 4);
    cr_assert_eq(tg_tensor_dtype(r), TG_FLOAT32);
    int64_t kept = check_channels(r, x, N * C, H * W, (double)(1.0f / (float)(1 - p)), "p 0.3");
    /* kept ~ Binomial(4000, 0.7): mean 2800, sd 29; 6 sd either side */
    cr_assert(kept > 2800 - 174 && kept < 2800 + 174, "kept %lld of 4000 channels",
              (long long)kept);
    tg_release(r);

    /* reproducible from the seed; another draw differs */
    tg_manual_seed(7);
    tg_tensor *a = tg_feature_dropout(x, 0.5, true);
    tg_tensor *b = tg_feature_dropout(x, 0.5, true);
    tg_manual_seed(7);
    tg_tensor *a2 = tg_feature_dropout(x, 0.5, true);
    double *av = kt_values(a), *bv = kt_values(b);
    bool differ = false;
    for (int64_t i = 0; i < N * C * H * W; i++) differ |= (av[i] == 0) != (bv[i] == 0);
    cr_assert(differ, "two draws gave the same channels");
    free(av);
    free(bv);
    kt_assert_identical(a, a2, "the same seed, the same channels");
    kt_release_all(a, a2, b);

    /* a 3-D input (unbatched (C, H, W) in torch.nn.Dropout2d's eyes): dims 0 and 1 get draws */
    tg_tensor *x3 = tg_ones(TG_INTS(6, 50, 4), .dtype = TG_FLOAT64);
    r = tg_feature_dropout(x3, 0.25, true);
    kept = check_channels(r, x3, 300, 4, 1 / 0.75, "3-D");
    cr_assert(kept > 150 && kept < 300, "kept %lld of 300", (long long)kept);
    kt_release_all(r, x3, x);
    kt_assert_no_leak(live);
}

Test(feature_dropout, early_returns_and_errors)
{
    kt_live live = kt_live_now();
    tg_tensor *x = kt_tensor(fa_xa, (int64_t[]){ 3, 5 }, 2, TG_FLOAT64);
    kt_assert_input_itself(tg_feature_dropout(x, 0.5, false), x, "eval");
    kt_assert_input_itself(tg_feature_dropout(x, 0, true), x, "p 0");
    tg_tensor *r = tg_feature_dropout(x, 1, true); /* input * zeros({}) */
    cr_assert(r && r != x, "%s", tg_last_error());
    kt_assert_close(r, (double[15]){ 0 }, 15, 0, 0, "p 1");
    tg_release(r);
    tg_tensor *v = kt_tensor(fa_x, (int64_t[]){ 4 }, 1, TG_FLOAT64);
    r = tg_feature_dropout(v, 1, true); /* p 1 before the dimension check, as PyTorch */
    cr_assert(r, "1-D with p 1: %s", tg_last_error());
    tg_release(r);
    kt_expect_error(tg_feature_dropout(v, 0.5, true),
                    "Feature dropout requires at least 2 dimensions in the input");
    kt_expect_error(tg_feature_dropout(x, 1.5, true),
                    "dropout probability has to be between 0 and 1, but got 1.5");
    kt_expect_error(tg_feature_dropout(x, -0.1, false),
                    "dropout probability has to be between 0 and 1, but got -0.1");
    tg_tensor *e = tg_empty(TG_INTS(0, 3, 2));
    r = tg_feature_dropout(e, 0.5, true);
    cr_assert_eq(r, e, "empty: input itself");
    kt_release_all(r, e, v, x);
    kt_assert_no_leak(live);
}

Test(feature_dropout, in_place_half_and_gradient)
{
    kt_live live = kt_live_now();
    /* in place: the same channels as out of place from the same seed */
    tg_tensor *u = tg_rand(TG_INTS(8, 16, 5));
    tg_tensor *x = tg_add_scalar(u, 1.0);
    tg_release(u);
    tg_manual_seed(11);
    tg_tensor *want = tg_feature_dropout(x, 0.4, true);
    tg_manual_seed(11);
    tg_tensor *r = tg_feature_dropout_(x, 0.4, true);
    cr_assert_eq(r, x, "feature_dropout_ returns self: %s", tg_last_error());
    tg_release(r);
    kt_assert_identical(x, want, "feature_dropout_");
    kt_release_all(x, want);
    tg_tensor *xe = tg_ones(TG_INTS(2, 2));
    r = tg_feature_dropout_(xe, 0.4, false);
    cr_assert_eq(r, xe, "eval in place: self");
    kt_release_all(r, xe);

    /* float16: the scale is 1 / (1 - p) computed in float16 (noise.div_(1 - p)) */
    tg_tensor *h = tg_ones(TG_INTS(64, 4, 2), .dtype = TG_FLOAT16);
    r = tg_feature_dropout(h, 0.3, true);
    cr_assert(r && tg_tensor_dtype(r) == TG_FLOAT16, "%s", tg_last_error());
    double *hv = kt_values(r);
    for (int64_t i = 0; i < 512; i++)
        cr_assert(hv[i] == 0 || hv[i] == (double)(_Float16)(1 / (_Float16)0.7),
                  "float16 element %lld = %g", (long long)i, hv[i]);
    free(hv);
    kt_release_all(r, h);

    /* gradient: the same mask and scale (mul's derivative) */
    tg_scope_begin();
    tg_tensor *xl =
        tg_tensor_set_requires_grad(kt_tensor(fa_xa, (int64_t[]){ 3, 5, 1 }, 3, TG_FLOAT64), true);
    tg_manual_seed(3);
    tg_tensor *y = tg_feature_dropout(xl, 0.5, true), *gx = NULL;
    cr_assert_eq(tg_grad(TG_TENSORS(tg_sum(y)), TG_TENSORS(xl), &gx), 0, "%s", tg_last_error());
    double *yv = kt_values(y), *gv = kt_values(gx);
    for (int i = 0; i < 15; i++)
        cr_assert(gv[i] == (yv[i] == 0 ? 0.0 : 2.0), "grad[%d] = %g, y = %g", i, gv[i], yv[i]);
    free(yv);
    free(gv);
    tg_scope_end();
    kt_assert_no_leak(live);
}
