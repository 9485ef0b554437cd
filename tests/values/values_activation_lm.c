/* Value cases of the language-model activations (kt_case.h): gelu (both approximations), silu,
 * mish, softplus, log_sigmoid, erf, log1p, expm1 (functional, out=, in place), their backward
 * operators (also into grad_input=), glu and logsumexp.
 *
 * - At the 96 inputs of tests/fixtures/activation_lm_fixtures.h (0, -0, +-1, NaN, +-inf, tiny
 *   and huge |x|, softplus's thresholds, random values in [-8, 8]) against PyTorch 1.13's
 *   scalar definitions in float64 and float32 (kt_tol_fx_activation_lm); on the CPU every form
 *   (strided, out=, in place, the reference loop) equals the functional result bit for bit, and
 *   float16 and bfloat16 equal the float32 computation rounded once.
 * - Random (33, 65) inputs in [-9, 9) with the special values first, every floating dtype,
 *   contiguous and strided, and for the backward operators a broadcast (4, 1, 7) grad with a
 *   (3, 7) self and a zero-dim CPU grad; 40003 elements for the fast paths against the reference
 *   loop and a strided view. Other backends against the CPU within kt_tol_libm.
 * - int64 refused alike on every backend, except by erf, log1p and expm1 (computed in float). */
#include "kt_case.h"
#include "../fixtures/activation_lm_fixtures.h"

/* ------------------------------------------------------------------ the operators */

KT_FN(f_gelu) { return kt_y1(y, tg_gelu(x[0])); }
KT_FN(i_gelu) { return kt_y1(y, tg_gelu_(x[0])); }
KT_FN(o_gelu) { return kt_y1(y, tg_gelu_out(x[0], a->out[0])); }
KT_FN(f_gelu_tanh) { return kt_y1(y, tg_gelu(x[0], .approximate = "tanh")); }
KT_FN(i_gelu_tanh) { return kt_y1(y, tg_gelu_(x[0], .approximate = "tanh")); }
KT_FN(o_gelu_tanh) { return kt_y1(y, tg_gelu_out(x[0], a->out[0], .approximate = "tanh")); }
KT_FN(f_silu) { return kt_y1(y, tg_silu(x[0])); }
KT_FN(i_silu) { return kt_y1(y, tg_silu_(x[0])); }
KT_FN(o_silu) { return kt_y1(y, tg_silu_out(x[0], a->out[0])); }
KT_FN(f_mish) { return kt_y1(y, tg_mish(x[0])); }
KT_FN(i_mish) { return kt_y1(y, tg_mish_(x[0])); }
KT_FN(o_mish) { return kt_y1(y, tg_mish_out(x[0], a->out[0])); }
KT_FN(f_softplus) { return kt_y1(y, tg_softplus(x[0])); }
KT_FN(o_softplus) { return kt_y1(y, tg_softplus_out(x[0], a->out[0])); }
KT_FN(f_softplus_b2) { return kt_y1(y, tg_softplus(x[0], .beta = 2, .threshold = 5)); }
KT_FN(o_softplus_b2)
{
    return kt_y1(y, tg_softplus_out(x[0], a->out[0], .beta = 2, .threshold = 5));
}
KT_FN(f_erf) { return kt_y1(y, tg_erf(x[0])); }
KT_FN(i_erf) { return kt_y1(y, tg_erf_(x[0])); }
KT_FN(o_erf) { return kt_y1(y, tg_erf_out(x[0], a->out[0])); }
KT_FN(f_log1p) { return kt_y1(y, tg_log1p(x[0])); }
KT_FN(i_log1p) { return kt_y1(y, tg_log1p_(x[0])); }
KT_FN(o_log1p) { return kt_y1(y, tg_log1p_out(x[0], a->out[0])); }
KT_FN(f_expm1) { return kt_y1(y, tg_expm1(x[0])); }
KT_FN(i_expm1) { return kt_y1(y, tg_expm1_(x[0])); }
KT_FN(o_expm1) { return kt_y1(y, tg_expm1_out(x[0], a->out[0])); }
KT_FN(f_log_sigmoid) { return kt_y1(y, tg_log_sigmoid(x[0])); }
KT_FN(f_log_sigmoid_buffer) { return kt_y1(y, tg_log_sigmoid_forward(x[0]).buffer); }

KT_FN(f_gelu_backward) { return kt_y1(y, tg_gelu_backward(x[0], x[1])); }
KT_FN(o_gelu_backward) { return kt_y1(y, tg_gelu_backward_grad_input(x[0], x[1], a->out[0])); }
KT_FN(f_gelu_backward_tanh)
{
    return kt_y1(y, tg_gelu_backward(x[0], x[1], .approximate = "tanh"));
}
KT_FN(o_gelu_backward_tanh)
{
    return kt_y1(y, tg_gelu_backward_grad_input(x[0], x[1], a->out[0], .approximate = "tanh"));
}
KT_FN(f_silu_backward) { return kt_y1(y, tg_silu_backward(x[0], x[1])); }
KT_FN(o_silu_backward) { return kt_y1(y, tg_silu_backward_grad_input(x[0], x[1], a->out[0])); }
KT_FN(f_mish_backward) { return kt_y1(y, tg_mish_backward(x[0], x[1])); }
KT_FN(f_softplus_backward) { return kt_y1(y, tg_softplus_backward(x[0], x[1], 1.0, 20.0)); }
KT_FN(o_softplus_backward)
{
    return kt_y1(y, tg_softplus_backward_grad_input(x[0], x[1], 1.0, 20.0, a->out[0]));
}
KT_FN(f_softplus_backward_b2) { return kt_y1(y, tg_softplus_backward(x[0], x[1], 2.0, 5.0)); }
KT_FN(o_softplus_backward_b2)
{
    return kt_y1(y, tg_softplus_backward_grad_input(x[0], x[1], 2.0, 5.0, a->out[0]));
}
KT_FN(f_log_sigmoid_backward)
{
    return kt_y1(y, tg_log_sigmoid_backward(x[0], x[1], tg_log_sigmoid_forward(x[1]).buffer));
}

/* The operators as lists the sweeps below index by parameter. */
typedef struct act_op {
    const char *name;
    kt_fn fn, out, inplace;
} act_op;

static const act_op forward[] = {
    { "gelu", f_gelu, o_gelu, i_gelu },
    { "gelu tanh", f_gelu_tanh, o_gelu_tanh, i_gelu_tanh },
    { "silu", f_silu, o_silu, i_silu },
    { "mish", f_mish, o_mish, i_mish },
    { "softplus", f_softplus, o_softplus },
    { "softplus 2, 5", f_softplus_b2, o_softplus_b2 },
    { "log_sigmoid", f_log_sigmoid },
    { "log_sigmoid buffer", f_log_sigmoid_buffer },
    /* integers computed in float (below) */
    { "erf", f_erf, o_erf, i_erf },
    { "log1p", f_log1p, o_log1p, i_log1p },
    { "expm1", f_expm1, o_expm1, i_expm1 },
};
#define NFORWARD ((int)(sizeof forward / sizeof forward[0]))
#define NREFUSING 8 /* the ones before erf */

static const act_op backward[] = {
    { "gelu_backward", f_gelu_backward, o_gelu_backward },
    { "gelu_backward tanh", f_gelu_backward_tanh, o_gelu_backward_tanh },
    { "silu_backward", f_silu_backward, o_silu_backward },
    { "mish_backward", f_mish_backward },
    { "softplus_backward", f_softplus_backward, o_softplus_backward },
    { "softplus_backward 2, 5", f_softplus_backward_b2, o_softplus_backward_b2 },
    { "log_sigmoid_backward", f_log_sigmoid_backward },
};
#define NBACKWARD ((int)(sizeof backward / sizeof backward[0]))

KT_FN(sweep_forward) { return forward[a->param].fn(x, a, y); }
KT_FN(sweep_forward_out)
{
    return forward[a->param].out ? forward[a->param].out(x, a, y) : KT_NO_FORM;
}
KT_FN(sweep_forward_inplace)
{
    return forward[a->param].inplace ? forward[a->param].inplace(x, a, y) : KT_NO_FORM;
}
KT_FN(sweep_float_of_int) { return forward[NREFUSING + a->param].fn(x, a, y); }
KT_FN(sweep_backward) { return backward[a->param].fn(x, a, y); }
KT_FN(sweep_backward_out)
{
    return backward[a->param].out ? backward[a->param].out(x, a, y) : KT_NO_FORM;
}
static const char *forward_name(int p) { return forward[p].name; }
static const char *float_of_int_name(int p) { return forward[NREFUSING + p].name; }
static const char *backward_name(int p) { return backward[p].name; }

/* glu, logsumexp: composites, on every backend */
KT_FN(f_glu) { return kt_y1(y, tg_glu(x[0], .dim = 1)); }
KT_FN(f_glu_backward) { return kt_y1(y, tg_glu_backward(x[0], x[1], 2)); }
KT_FN(f_logsumexp) { return kt_y1(y, tg_logsumexp(x[0], TG_INTS(1))); }
KT_FN(f_gelu_bad) { return kt_y1(y, tg_gelu(x[0], .approximate = (const char *)"erf")); }
KT_FN(o_gelu_f64)
{
    tg_tensor *o = tg_empty(TG_INTS(17, 31), .dtype = TG_FLOAT64, .device = a->device);
    return kt_y1(y, tg_gelu_out(x[0], o));
}

/* ------------------------------------------------------------------ the cases */

static const double special[] = { 0,  -0.0, 1,        -1,        NAN,  20,    20.5, -20,
                                  88, -88,  INFINITY, -INFINITY, 1e-5, -1e-5, 2.5,  800 };
#define X_33_65                                                               \
    {                                                                         \
        KT_RAND(-9, 9, 33, 65), .seed = 3, .special = special, .nspecial = 16 \
    }
#define G_33_65                           \
    {                                     \
        KT_RAND(-2, 2, 33, 65), .seed = 7 \
    }
#define FX                    \
    {                         \
        KT_VALUES(fl_x, FL_N) \
    }
#define FX_G { KT_VALUES(fl_g, FL_N) }, FX
#define FX_DTYPES                                              \
    {                                                          \
        4, { TG_FLOAT64, TG_FLOAT32, TG_FLOAT16, TG_BFLOAT16 } \
    }
#define REF(name)                                                                   \
    .ref = (const double *const[]){ fl_##name##_f64, fl_##name##_f32, NULL, NULL }, \
    .ref_tol = &kt_tol_fx_activation_lm,                                            \
    .flags = KT_STRIDED | KT_REF_LOOP | KT_FORMS_EXACT | KT_HALF_IN_FLOAT

static const kt_case activation_lm_cases[] = {
    /* PyTorch's values at the fixture's inputs */
    { "gelu.out",
      "fixture",
      f_gelu,
      { FX },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_gelu,
      .inplace = i_gelu,
      REF(gelu) },
    { "gelu.out",
      "fixture, tanh",
      f_gelu_tanh,
      { FX },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_gelu_tanh,
      .inplace = i_gelu_tanh,
      REF(gelu_tanh) },
    { "silu.out",
      "fixture",
      f_silu,
      { FX },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_silu,
      .inplace = i_silu,
      REF(silu) },
    { "mish.out",
      "fixture",
      f_mish,
      { FX },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_mish,
      .inplace = i_mish,
      REF(mish) },
    { "softplus.out", "fixture", f_softplus, { FX }, FX_DTYPES, &kt_tol_libm, REF(softplus) },
    { "softplus.out",
      "fixture, 2, 5",
      f_softplus_b2,
      { FX },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_softplus_b2,
      REF(softplus_b2) },
    { "erf.out",
      "fixture",
      f_erf,
      { FX },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_erf,
      .inplace = i_erf,
      REF(erf) },
    { "log1p.out",
      "fixture",
      f_log1p,
      { FX },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_log1p,
      .inplace = i_log1p,
      REF(log1p) },
    { "expm1.out",
      "fixture",
      f_expm1,
      { FX },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_expm1,
      .inplace = i_expm1,
      REF(expm1) },
    { "log_sigmoid", "fixture", f_log_sigmoid, { FX }, FX_DTYPES, &kt_tol_libm, REF(log_sigmoid) },
    { "log_sigmoid_forward",
      "fixture, buffer",
      f_log_sigmoid_buffer,
      { FX },
      FX_DTYPES,
      &kt_tol_libm,
      REF(log_sigmoid_buffer) },
    { "gelu_backward.grad_input",
      "fixture",
      f_gelu_backward,
      { FX_G },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_gelu_backward,
      REF(gelu_backward) },
    { "gelu_backward.grad_input",
      "fixture, tanh",
      f_gelu_backward_tanh,
      { FX_G },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_gelu_backward_tanh,
      REF(gelu_backward_tanh) },
    { "silu_backward.grad_input",
      "fixture",
      f_silu_backward,
      { FX_G },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_silu_backward,
      REF(silu_backward) },
    { "mish_backward",
      "fixture",
      f_mish_backward,
      { FX_G },
      FX_DTYPES,
      &kt_tol_libm,
      REF(mish_backward) },
    { "softplus_backward.grad_input",
      "fixture",
      f_softplus_backward,
      { FX_G },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_softplus_backward,
      REF(softplus_backward) },
    { "softplus_backward.grad_input",
      "fixture, 2, 5",
      f_softplus_backward_b2,
      { FX_G },
      FX_DTYPES,
      &kt_tol_libm,
      .out = o_softplus_backward_b2,
      REF(softplus_backward_b2) },
    { "log_sigmoid_backward",
      "fixture",
      f_log_sigmoid_backward,
      { FX_G },
      FX_DTYPES,
      &kt_tol_libm,
      REF(log_sigmoid_backward) },

    /* random inputs with the special values, every floating dtype */
    { "gelu.out",
      "(33, 65)",
      sweep_forward,
      { X_33_65 },
      KT_FLOATS,
      &kt_tol_libm,
      .out = sweep_forward_out,
      .inplace = sweep_forward_inplace,
      .flags = KT_STRIDED,
      .count = NFORWARD,
      .param_name = forward_name },
    { "gelu_backward.grad_input",
      "(33, 65)",
      sweep_backward,
      { G_33_65, X_33_65 },
      KT_FLOATS,
      &kt_tol_libm,
      .out = sweep_backward_out,
      .flags = KT_STRIDED,
      .count = NBACKWARD,
      .param_name = backward_name },
    { "gelu_backward.grad_input",
      "grad (4, 1, 7) broadcast with self (3, 7)",
      sweep_backward,
      { { KT_RAND(-2, 2, 4, 1, 7), .seed = 7 },
        { KT_RAND(-9, 9, 3, 7), .seed = 9, .special = special, .nspecial = 16 } },
      KT_FLOATS,
      &kt_tol_libm,
      .count = NBACKWARD,
      .param_name = backward_name },
    { "gelu_backward.grad_input",
      "grad a zero-dim CPU tensor",
      sweep_backward,
      { { KT_HOST(KT_DT, -2, 2), .seed = 7 }, X_33_65 },
      KT_FLOATS,
      &kt_tol_libm,
      .count = NBACKWARD,
      .param_name = backward_name },

    /* the fast loops against the reference loop and a strided view, above the grain size */
    { "gelu.out",
      "40003, fast path",
      sweep_forward,
      { { KT_RAND(-9, 9, 40003), .seed = 5 } },
      KT_F64_F32,
      &kt_tol_libm,
      .flags = KT_STRIDED | KT_REF_LOOP | KT_FORMS_EXACT,
      .count = NFORWARD,
      .param_name = forward_name },
    { "gelu_backward.grad_input",
      "40003, fast path",
      sweep_backward,
      { { KT_RAND(-2, 2, 40003), .seed = 6 }, { KT_RAND(-9, 9, 40003), .seed = 5 } },
      KT_F64_F32,
      &kt_tol_libm,
      .flags = KT_REF_LOOP | KT_FORMS_EXACT,
      .count = NBACKWARD,
      .param_name = backward_name },

    /* integers */
    { "gelu.out",
      "int64 refused",
      sweep_forward,
      { { KT_RAND(-5, 5, 17, 31) } },
      { 1, { TG_INT64 } },
      .count = NREFUSING,
      .param_name = forward_name,
      .error = "not implemented for" },
    { "erf.out",
      "int64 computed in float32",
      sweep_float_of_int,
      { { KT_RAND(-5, 5, 17, 31) } },
      { 1, { TG_INT64 } },
      &kt_tol_libm,
      .count = NFORWARD - NREFUSING,
      .param_name = float_of_int_name },
    { "gelu_backward.grad_input",
      "int64 refused",
      sweep_backward,
      { { KT_RAND(-5, 5, 17, 31) }, { KT_RAND(-5, 5, 17, 31) } },
      { 1, { TG_INT64 } },
      .count = NBACKWARD,
      .param_name = backward_name,
      .error = "not implemented for" },
    { "gelu.out",
      "approximate \"erf\"",
      f_gelu_bad,
      { { KT_RAND(-9, 9, 17, 31) } },
      { 1, { TG_FLOAT32 } },
      .error = "approximate argument must be either none or tanh." },
    { "gelu.out",
      "out= of another dtype",
      o_gelu_f64,
      { { KT_RAND(-9, 9, 17, 31) } },
      { 1, { TG_FLOAT32 } },
      .error = "Found dtype Double but expected Float" },

    /* composites */
    { "glu",
      "(3, 4, 6) dim 1",
      f_glu,
      { { KT_RAND(-9, 9, 3, 4, 6), .seed = 5, .special = special, .nspecial = 16 } },
      { 1, { TG_FLOAT32 } },
      &kt_tol_libm },
    { "glu_backward",
      "(3, 4, 3) grad, dim 2",
      f_glu_backward,
      { { KT_RAND(-1, 1, 3, 4, 3), .seed = 6 },
        { KT_RAND(-9, 9, 3, 4, 6), .seed = 5, .special = special, .nspecial = 16 } },
      { 1, { TG_FLOAT32 } },
      &kt_tol_libm },
    { "logsumexp",
      "(3, 4, 6) dim 1",
      f_logsumexp,
      { { KT_RAND(-9, 9, 3, 4, 6), .seed = 5, .special = special, .nspecial = 16 } },
      { 1, { TG_FLOAT32 } },
      &kt_tol_libm },
    { "gelu_backward.grad_input",
      "grad (3, 1) with self (2, 5)",
      f_gelu_backward,
      { { KT_VALUES_OF(TG_FLOAT64, fl_g, 3, 1) }, { KT_RAND_OF(TG_FLOAT32, -1, 1, 2, 5) } },
      .error = "must match the size of tensor b" },
};
KT_REGISTER(activation_lm_cases);

/* The backward operators broadcast grad_output and self and promote them to one dtype: a
 * (3, 1) float64 grad with a (1, 4) float32 self gives, bit for bit, the result of the
 * expanded, promoted, contiguous inputs. */
Test(activation_lm, backward_broadcasts_and_promotes)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *g = kt_tensor(fl_g, (int64_t[]){ 3, 1 }, 2, TG_FLOAT64);
    tg_tensor *xs = kt_tensor(fl_x + 32, (int64_t[]){ 1, 4 }, 2, TG_FLOAT32);
    tg_tensor *in[2] = { g, xs };
    tg_tensor *flat[2] = { tg_contiguous(tg_expand(g, TG_INTS(3, 4))),
                           tg_contiguous(tg_to(tg_expand(xs, TG_INTS(3, 4)), TG_FLOAT64)) };
    kt_arg a = { .dtype = TG_FLOAT64, .device = TG_DEVICE_CPU };
    for (int i = 0; i < NBACKWARD; i++) {
        tg_tensor *r[KT_MAX_OUT], *want[KT_MAX_OUT];
        cr_assert_eq(backward[i].fn(in, &a, r), 1, "%s: %s", backward[i].name, tg_last_error());
        kt_assert_shape(r[0], (int64_t[]){ 3, 4 }, 2);
        cr_assert_eq(backward[i].fn(flat, &a, want), 1, "%s: %s", backward[i].name,
                     tg_last_error());
        kt_assert_identical(r[0], want[0], backward[i].name);
    }
    tg_scope_end();
    kt_assert_no_leak(live);
}
