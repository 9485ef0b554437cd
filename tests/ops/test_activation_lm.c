/* The language-model activations (gelu with both approximations, silu, mish, softplus, their
 * backward operators and gelu_double_backward; erf, log1p, expm1, log_sigmoid, glu, logsumexp)
 * against PyTorch 1.13 (tests/fixtures/activation_lm_fixtures.h, from tests/fixtures/
 * gen_activation_lm.py), beside their value cases (tests/values/values_activation_lm.c:
 * PyTorch's values at 96 inputs in every dtype and form, the fast paths, the other backends).
 *
 * Here: PyTorch's errors, gradients (first order of every forward operator and of the in-place
 * ones on a non-leaf, second order of the backward operators, against torch.autograd:
 * 1e-12 + 1e-10 |want|), erf, log1p and expm1 of integers, glu and logsumexp. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_case.h"
#include "../fixtures/activation_lm_fixtures.h"
#include "tg_cover.h"

TG_COVERS("gelu", "gelu_", "gelu.out", "gelu_backward", "gelu_backward.grad_input",
          "gelu_double_backward", "silu", "silu_", "silu.out", "silu_backward",
          "silu_backward.grad_input", "mish", "mish_", "mish.out", "mish_backward", "softplus",
          "softplus.out", "softplus_backward", "softplus_backward.grad_input", "erf", "erf_",
          "erf.out", "log1p", "log1p_", "log1p.out", "expm1", "expm1_", "expm1.out", "log_sigmoid",
          "log_sigmoid_forward", "log_sigmoid_backward", "glu", "glu.out", "glu_backward",
          "logsumexp", "logsumexp.out", "logsumexp_backward");

/* The operators the gradient checks below call. */
typedef tg_tensor *(*un_fn)(tg_tensor *x);
typedef tg_tensor *(*bin_fn)(tg_tensor *g, tg_tensor *x);
static tg_tensor *f_gelu(tg_tensor *x) { return tg_gelu(x); }
static tg_tensor *f_gelu_tanh(tg_tensor *x) { return tg_gelu(x, .approximate = "tanh"); }
static tg_tensor *ip_gelu_tanh(tg_tensor *s) { return tg_gelu_(s, .approximate = "tanh"); }
static tg_tensor *f_softplus(tg_tensor *x) { return tg_softplus(x); }
static tg_tensor *f_softplus_b2(tg_tensor *x)
{
    return tg_softplus(x, .beta = 2.0, .threshold = 5.0);
}
static tg_tensor *f_gelu_backward(tg_tensor *g, tg_tensor *x) { return tg_gelu_backward(g, x); }
static tg_tensor *f_gelu_backward_tanh(tg_tensor *g, tg_tensor *x)
{
    return tg_gelu_backward(g, x, .approximate = "tanh");
}
static tg_tensor *f_softplus_backward_b2(tg_tensor *g, tg_tensor *x)
{
    return tg_softplus_backward(g, x, 2.0, 5.0);
}

/* r (owned by the open scope) equals want within the fixture's bound, with dtype `dt`. */
static void check_close(tg_tensor *r, tg_dtype dt, const double *want, int64_t n, const char *what)
{
    cr_assert(r, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(r), dt, "%s: dtype %s", what, tg_dtype_name(tg_tensor_dtype(r)));
    double rtol, atol;
    kt_tol_of(&kt_tol_fx_activation_lm, dt, &rtol, &atol);
    kt_assert_close(r, want, n, rtol, atol, what);
}

/* ------------------------------------------------------------------ errors */

Test(activation_lm, errors_match_torch)
{
    kt_live live = kt_live_now();
    tg_tensor *i = tg_arange(3), *b = tg_ones(TG_INTS(3), .dtype = TG_BOOL);
    tg_tensor *f = tg_ones(TG_INTS(3));
    kt_expect_error(tg_gelu(i), "\"GeluKernelImpl\" not implemented for 'Long'");
    kt_expect_error(tg_gelu_(b), "\"GeluKernelImpl\" not implemented for 'Bool'");
    kt_expect_error(tg_gelu_backward(i, i),
                    "\"GeluBackwardKernelImpl\" not implemented for 'Long'");
    kt_expect_error(tg_silu(i), "\"silu_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_silu_backward(i, i), "\"silu_backward_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_mish(i), "\"mish_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_mish_backward(i, i), "\"mish_backward_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_softplus(i), "\"softplus_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_softplus_backward(i, i, 1, 20),
                    "\"softplus_backward_cpu\" not implemented for 'Long'");
    /* gelu's approximate string */
    const char *bad = "foo";
    kt_expect_error(tg_gelu(f, .approximate = bad),
                    "approximate argument must be either none or tanh.");
    kt_expect_error(tg_gelu_backward(f, f, .approximate = bad),
                    "approximate argument must be either none or tanh.");
    kt_expect_error(tg_gelu_double_backward(f, f, f, bad),
                    "approximate argument must be either none or tanh.");
    /* out= of another dtype (structured unary operators) */
    tg_tensor *o64 = tg_empty(TG_INTS(3), .dtype = TG_FLOAT64);
    kt_expect_error(tg_gelu_out(f, o64), "Found dtype Double but expected Float");
    kt_expect_error(tg_silu_out(f, o64), "Found dtype Double but expected Float");
    kt_expect_error(tg_mish_out(f, o64), "Found dtype Double but expected Float");
    kt_expect_error(tg_softplus_out(f, o64), "Found dtype Double but expected Float");
    /* grad_input= that the result type cannot be cast to */
    tg_tensor *oi = tg_empty(TG_INTS(3), .dtype = TG_INT64);
    kt_expect_error(tg_gelu_backward_grad_input(o64, o64, oi),
                    "result type Double can't be cast to the desired output type Long");
    kt_release_all(oi, o64, i, b, f);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ autograd */

#define GRT 1e-10
#define GAT 1e-12

/* d<v, f(x)>/dx at the fixture's x (a (3, 5) float64 leaf). */
static void check_grad(tg_tensor *(*f)(tg_tensor *x), const double *want, const char *what)
{
    kt_assert_vjp(f, fl_xa, fl_v, (int64_t[]){ 3, 5 }, 2, want, GRT, GAT, what);
}

/* In place on a non-leaf: x * 1, then the operator in place (inside check_grad's scope). */
static tg_tensor *g_gelu_(tg_tensor *x) { return ip_gelu_tanh(tg_mul_scalar(x, 1.0)); }
static tg_tensor *g_silu_(tg_tensor *x) { return tg_silu_(tg_mul_scalar(x, 1.0)); }
static tg_tensor *g_mish_(tg_tensor *x) { return tg_mish_(tg_mul_scalar(x, 1.0)); }
/* log1p(0.2 |x| - 0.5), inside its domain */
static tg_tensor *g_log1p(tg_tensor *x)
{
    return tg_log1p(tg_add_scalar(tg_mul_scalar(tg_abs(x), 0.2), -0.5));
}

Test(activation_lm, gradients_match_torch)
{
    kt_live live = kt_live_now();
    check_grad(f_gelu, fl_grad_gelu, "gelu");
    check_grad(f_gelu_tanh, fl_grad_gelu_tanh, "gelu tanh");
    check_grad(tg_silu, fl_grad_silu, "silu");
    check_grad(tg_mish, fl_grad_mish, "mish");
    check_grad(f_softplus, fl_grad_softplus, "softplus");
    check_grad(f_softplus_b2, fl_grad_softplus_b2, "softplus beta 2 threshold 5");
    check_grad(g_gelu_, fl_grad_gelu_, "gelu_");
    check_grad(g_silu_, fl_grad_silu_, "silu_");
    check_grad(g_mish_, fl_grad_mish_, "mish_");
    check_grad(tg_erf, fl_grad_erf, "erf");
    check_grad(g_log1p, fl_grad_log1p, "log1p");
    check_grad(tg_expm1, fl_grad_expm1, "expm1");
    check_grad(tg_log_sigmoid, fl_grad_log_sigmoid, "log_sigmoid");
    kt_assert_no_leak(live);
}

/* d<w, d<v, f(x)>/dx>/dx at 0.2 x, through the first gradients' formulas. */
static void check_unary_second(un_fn f, const double *want, const char *what)
{
    tg_scope_begin();
    tg_tensor *x0 = kt_tensor(fl_xa, (int64_t[]){ 3, 5 }, 2, TG_FLOAT64);
    tg_tensor *x = tg_tensor_set_requires_grad(tg_mul_scalar(x0, 0.2), true);
    tg_tensor *v = kt_tensor(fl_v, (int64_t[]){ 3, 5 }, 2, TG_FLOAT64);
    tg_tensor *w = kt_tensor(fl_w, (int64_t[]){ 3, 5 }, 2, TG_FLOAT64);
    tg_tensor *y = f(x), *gx = NULL, *ggx = NULL;
    cr_assert(y, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(x), &gx, .grad_outputs = TG_TENSORS(v),
                         .create_graph = true),
                 0, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_grad(TG_TENSORS(gx), TG_TENSORS(x), &ggx, .grad_outputs = TG_TENSORS(w)), 0,
                 "%s: %s", what, tg_last_error());
    kt_assert_close(ggx, want, 15, GRT, GAT, what);
    tg_scope_end();
}

Test(activation_lm, special_functions_second_order_and_integers)
{
    kt_live live = kt_live_now();
    check_unary_second(tg_erf, fl_gg_erf, "erf");
    check_unary_second(tg_log1p, fl_gg_log1p, "log1p");
    check_unary_second(tg_expm1, fl_gg_expm1, "expm1");
    /* integer inputs compute in float32 */
    tg_scope_begin();
    tg_tensor *xi = kt_tensor(fl_xi, (int64_t[]){ 6 }, 1, TG_INT64);
    check_close(tg_erf(xi), TG_FLOAT32, fl_erf_int, 6, "erf int64");
    check_close(tg_log1p(xi), TG_FLOAT32, fl_log1p_int, 6, "log1p int64");
    check_close(tg_expm1(xi), TG_FLOAT32, fl_expm1_int, 6, "expm1 int64");
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* d<w, f(g, x)>/dg and /dx through the backward operators' own derivatives (double backward). */
static void check_second(bin_fn f, const double *want_g, const double *want_x, const char *what)
{
    kt_assert_second(f, fl_v, fl_xa, 15, fl_w, want_g, want_x, GRT, GAT, what);
}

/* log_sigmoid_backward with its forward's buffer, inside check_second's scope (which owns
 * every result). */
static tg_tensor *s_log_sigmoid_backward(tg_tensor *g, tg_tensor *x)
{
    tg_output_buffer r = tg_log_sigmoid_forward(x);
    return r.buffer ? tg_log_sigmoid_backward(g, x, r.buffer) : NULL;
}

Test(activation_lm, second_derivatives_match_torch)
{
    kt_live live = kt_live_now();
    check_second(f_gelu_backward, fl_gg_gelu_backward_g, fl_gg_gelu_backward_x,
                 "gelu_backward (gelu_double_backward)");
    check_second(f_gelu_backward_tanh, fl_gg_gelu_backward_tanh_g, fl_gg_gelu_backward_tanh_x,
                 "gelu_backward tanh (gelu_double_backward)");
    check_second(tg_silu_backward, fl_gg_silu_backward_g, fl_gg_silu_backward_x, "silu_backward");
    check_second(tg_mish_backward, fl_gg_mish_backward_g, fl_gg_mish_backward_x, "mish_backward");
    check_second(f_softplus_backward_b2, fl_gg_softplus_backward_b2_g, fl_gg_softplus_backward_b2_x,
                 "softplus_backward");
    check_second(s_log_sigmoid_backward, fl_gg_log_sigmoid_backward_g, fl_gg_log_sigmoid_backward_x,
                 "log_sigmoid_backward");
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ glu */

Test(activation_lm, glu_values_gradients_and_errors)
{
    kt_live live = kt_live_now();
    static const int64_t shape[3] = { 3, 4, 6 };
    tg_scope_begin();
    tg_tensor *x = kt_tensor(fl_xg, shape, 3, TG_FLOAT64);
    check_close(tg_glu(x, .dim = 1), TG_FLOAT64, fl_glu_d1, 36, "glu dim 1");
    check_close(tg_glu(x), TG_FLOAT64, fl_glu_dm1, 36, "glu dim -1");
    tg_tensor *xt = tg_transpose(x, 0, 2); /* (6, 4, 3), strided */
    tg_tensor *rt = tg_glu(xt, .dim = 0);
    check_close(tg_contiguous(tg_transpose(rt, 0, 2)), TG_FLOAT64, fl_glu_dm1, 36,
                "glu of a transposed view");
    tg_tensor *x32 = kt_tensor(fl_xg, shape, 3, TG_FLOAT32);
    check_close(tg_glu(x32, .dim = -2), TG_FLOAT32, fl_glu_d1_f32, 36, "glu float32");
    tg_tensor *o = tg_empty(TG_INTS(3, 2, 6), .dtype = TG_FLOAT64);
    cr_assert_eq(tg_glu_out(x, o, .dim = 1), o, "glu.out: %s", tg_last_error());
    check_close(o, TG_FLOAT64, fl_glu_d1, 36, "glu.out");

    /* gradients, first and second order (through glu_backward) */
    const double *vs[2] = { fl_vg1, fl_vg2 }, *g1[2] = { fl_grad_glu_d1, fl_grad_glu_dm1 },
                 *g2[2] = { fl_gg_glu_d1, fl_gg_glu_dm1 };
    const int64_t vshape[2][3] = { { 3, 2, 6 }, { 3, 4, 3 } }, dims[2] = { 1, -1 };
    for (int k = 0; k < 2; k++) {
        tg_tensor *xl = tg_tensor_set_requires_grad(kt_tensor(fl_xg, shape, 3, TG_FLOAT64), true);
        tg_tensor *v = kt_tensor(vs[k], vshape[k], 3, TG_FLOAT64);
        tg_tensor *y = tg_glu(xl, .dim = dims[k]), *gx = NULL, *ggx = NULL;
        cr_assert(y, "glu: %s", tg_last_error());
        cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(xl), &gx, .grad_outputs = TG_TENSORS(v),
                             .create_graph = true),
                     0, "glu grad: %s", tg_last_error());
        kt_assert_close(gx, g1[k], 72, GRT, GAT, "glu gradient");
        tg_tensor *w = tg_mul_scalar(x, 0.5);
        cr_assert_eq(tg_grad(TG_TENSORS(gx), TG_TENSORS(xl), &ggx, .grad_outputs = TG_TENSORS(w)),
                     0, "glu second order: %s", tg_last_error());
        kt_assert_close(ggx, g2[k], 72, GRT, GAT, "glu second order");
    }

    /* PyTorch's errors */
    tg_tensor *odd = tg_ones(TG_INTS(2, 3));
    kt_expect_error(tg_glu(odd, .dim = 1),
                    "Halving dimension must be even, but dimension 1 is size 3");
    kt_expect_error(tg_glu(odd, .dim = 5),
                    "Dimension out of range (expected to be in range of [-2, 1], but got 5)");
    tg_tensor *sc = tg_full(TG_INTS_EMPTY, 1.0);
    kt_expect_error(tg_glu(sc, .dim = 0),
                    "glu does not support scalars because halving size must be even");
    tg_tensor *li = tg_ones(TG_INTS(2, 4), .dtype = TG_INT64);
    kt_expect_error(tg_glu(li), "\"glu_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_glu_backward(odd, odd, 1),
                    "Halving dimension must be even, but dimension 1 is size 3");
    tg_tensor *o32 = tg_empty(TG_INTS(3, 2, 6));
    kt_expect_error(tg_glu_out(x, o32, .dim = 1), "Found dtype Float but expected Double");
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(activation_lm, log_sigmoid_and_glu_errors)
{
    kt_live live = kt_live_now();
    tg_tensor *i = tg_arange(4);
    kt_expect_error(tg_log_sigmoid(i), "\"log_sigmoid_cpu\" not implemented for 'Long'");
    kt_expect_error(tg_log_sigmoid_backward(i, i, i),
                    "\"log_sigmoid_backward_cpu\" not implemented for 'Long'");
    tg_release(i);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ logsumexp */

Test(activation_lm, logsumexp_values_gradients)
{
    kt_live live = kt_live_now();
    static const int64_t shape[3] = { 3, 4, 5 };
    tg_scope_begin();
    tg_tensor *x = kt_tensor(fl_xl, shape, 3, TG_FLOAT64);
    tg_tensor *x32 = kt_tensor(fl_xl, shape, 3, TG_FLOAT32);
    check_close(tg_logsumexp(x, TG_INTS(1)), TG_FLOAT64, fl_lse_d1_f64, 15, "logsumexp dim 1");
    check_close(tg_logsumexp(x32, TG_INTS(1)), TG_FLOAT32, fl_lse_d1_f32, 15,
                "logsumexp float32 dim 1");
    tg_tensor *k = tg_logsumexp(x, TG_INTS(0, 2), .keepdim = true);
    check_close(k, TG_FLOAT64, fl_lse_d02k_f64, 4, "logsumexp dims (0, 2) keepdim");
    kt_assert_shape(k, (int64_t[]){ 1, 4, 1 }, 3);
    check_close(tg_logsumexp(x, TG_INTS(-1)), TG_FLOAT64, fl_lse_dm1_f64, 12, "logsumexp dim -1");
    check_close(tg_logsumexp(x32, TG_INTS(-1)), TG_FLOAT32, fl_lse_dm1_f32, 12,
                "logsumexp float32 dim -1");
    tg_tensor *xt = tg_transpose(x, 0, 2);        /* (5, 4, 3): dim 1 of the view is dim 1 of x */
    tg_tensor *rt = tg_logsumexp(xt, TG_INTS(1)); /* (5, 3) */
    check_close(tg_contiguous(tg_transpose(rt, 0, 1)), TG_FLOAT64, fl_lse_d1_f64, 15,
                "logsumexp of a transposed view");
    tg_tensor *xi = kt_tensor(fl_xli, (int64_t[]){ 2, 3 }, 2, TG_INT64);
    check_close(tg_logsumexp(xi, TG_INTS(1)), TG_FLOAT32, fl_lse_int, 2, "logsumexp int64");
    tg_tensor *o = tg_empty(TG_INTS(3, 5), .dtype = TG_FLOAT64);
    cr_assert_eq(tg_logsumexp_out(x, TG_INTS(1), o), o, "logsumexp.out: %s", tg_last_error());
    check_close(o, TG_FLOAT64, fl_lse_d1_f64, 15, "logsumexp.out");

    tg_tensor *xl = tg_tensor_set_requires_grad(kt_tensor(fl_xlf, shape, 3, TG_FLOAT64), true);
    tg_tensor *v = kt_tensor(fl_vl, (int64_t[]){ 3, 5 }, 2, TG_FLOAT64);
    tg_tensor *y = tg_logsumexp(xl, TG_INTS(1)), *gx = NULL, *ggx = NULL;
    cr_assert(y, "%s", tg_last_error());
    cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(xl), &gx, .grad_outputs = TG_TENSORS(v),
                         .create_graph = true),
                 0, "logsumexp grad: %s", tg_last_error());
    kt_assert_close(gx, fl_grad_lse, 60, GRT, GAT, "logsumexp gradient");
    tg_tensor *w = tg_mul_scalar(kt_tensor(fl_xlf, shape, 3, TG_FLOAT64), 0.5);
    cr_assert_eq(tg_grad(TG_TENSORS(gx), TG_TENSORS(xl), &ggx, .grad_outputs = TG_TENSORS(w)), 0,
                 "logsumexp second order: %s", tg_last_error());
    kt_assert_close(ggx, fl_gg_lse, 60, GRT, GAT, "logsumexp second order");
    tg_scope_end();
    kt_assert_no_leak(live);
}
