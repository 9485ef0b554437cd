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

/* The operators as lists the sweeps below run (KT_OPS). */

static const kt_op forward[] = {
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

static const kt_op backward[] = {
    { "gelu_backward", f_gelu_backward, o_gelu_backward },
    { "gelu_backward tanh", f_gelu_backward_tanh, o_gelu_backward_tanh },
    { "silu_backward", f_silu_backward, o_silu_backward },
    { "mish_backward", f_mish_backward },
    { "softplus_backward", f_softplus_backward, o_softplus_backward },
    { "softplus_backward 2, 5", f_softplus_backward_b2, o_softplus_backward_b2 },
    { "log_sigmoid_backward", f_log_sigmoid_backward },
};
#define NBACKWARD ((int)(sizeof backward / sizeof backward[0]))

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
    KT_CASE("gelu.out", "fixture", f_gelu, { FX }, FX_DTYPES, &kt_tol_libm, .out = o_gelu,
            .inplace = i_gelu, REF(gelu)),
    KT_CASE("gelu.out", "fixture, tanh", f_gelu_tanh, { FX }, FX_DTYPES, &kt_tol_libm,
            .out = o_gelu_tanh, .inplace = i_gelu_tanh, REF(gelu_tanh)),
    KT_CASE("silu.out", "fixture", f_silu, { FX }, FX_DTYPES, &kt_tol_libm, .out = o_silu,
            .inplace = i_silu, REF(silu)),
    KT_CASE("mish.out", "fixture", f_mish, { FX }, FX_DTYPES, &kt_tol_libm, .out = o_mish,
            .inplace = i_mish, REF(mish)),
    KT_CASE("softplus.out", "fixture", f_softplus, { FX }, FX_DTYPES, &kt_tol_libm, REF(softplus)),
    KT_CASE("softplus.out", "fixture, 2, 5", f_softplus_b2, { FX }, FX_DTYPES, &kt_tol_libm,
            .out = o_softplus_b2, REF(softplus_b2)),
    KT_CASE("erf.out", "fixture", f_erf, { FX }, FX_DTYPES, &kt_tol_libm, .out = o_erf,
            .inplace = i_erf, REF(erf)),
    KT_CASE("log1p.out", "fixture", f_log1p, { FX }, FX_DTYPES, &kt_tol_libm, .out = o_log1p,
            .inplace = i_log1p, REF(log1p)),
    KT_CASE("expm1.out", "fixture", f_expm1, { FX }, FX_DTYPES, &kt_tol_libm, .out = o_expm1,
            .inplace = i_expm1, REF(expm1)),
    KT_CASE("log_sigmoid", "fixture", f_log_sigmoid, { FX }, FX_DTYPES, &kt_tol_libm,
            REF(log_sigmoid)),
    KT_CASE("log_sigmoid_forward", "fixture, buffer", f_log_sigmoid_buffer, { FX }, FX_DTYPES,
            &kt_tol_libm, REF(log_sigmoid_buffer)),
    KT_CASE("gelu_backward.grad_input", "fixture", f_gelu_backward, { FX_G }, FX_DTYPES,
            &kt_tol_libm, .out = o_gelu_backward, REF(gelu_backward)),
    KT_CASE("gelu_backward.grad_input", "fixture, tanh", f_gelu_backward_tanh, { FX_G }, FX_DTYPES,
            &kt_tol_libm, .out = o_gelu_backward_tanh, REF(gelu_backward_tanh)),
    KT_CASE("silu_backward.grad_input", "fixture", f_silu_backward, { FX_G }, FX_DTYPES,
            &kt_tol_libm, .out = o_silu_backward, REF(silu_backward)),
    KT_CASE("mish_backward", "fixture", f_mish_backward, { FX_G }, FX_DTYPES, &kt_tol_libm,
            REF(mish_backward)),
    KT_CASE("softplus_backward.grad_input", "fixture", f_softplus_backward, { FX_G }, FX_DTYPES,
            &kt_tol_libm, .out = o_softplus_backward, REF(softplus_backward)),
    KT_CASE("softplus_backward.grad_input", "fixture, 2, 5", f_softplus_backward_b2, { FX_G },
            FX_DTYPES, &kt_tol_libm, .out = o_softplus_backward_b2, REF(softplus_backward_b2)),
    KT_CASE("log_sigmoid_backward", "fixture", f_log_sigmoid_backward, { FX_G }, FX_DTYPES,
            &kt_tol_libm, REF(log_sigmoid_backward)),

    /* random inputs with the special values, every floating dtype */
    KT_CASE("gelu.out", "(33, 65)", kt_sweep, { X_33_65 }, KT_FLOATS, &kt_tol_libm,
            .out = kt_sweep_out, .inplace = kt_sweep_inplace, .flags = KT_STRIDED, KT_OPS(forward)),
    KT_CASE("gelu_backward.grad_input", "(33, 65)", kt_sweep, { G_33_65, X_33_65 }, KT_FLOATS,
            &kt_tol_libm, .out = kt_sweep_out, .flags = KT_STRIDED, KT_OPS(backward)),
    KT_CASE("gelu_backward.grad_input", "grad (4, 1, 7) broadcast with self (3, 7)", kt_sweep,
            { { KT_RAND(-2, 2, 4, 1, 7), .seed = 7 },
              { KT_RAND(-9, 9, 3, 7), .seed = 9, .special = special, .nspecial = 16 } },
            KT_FLOATS, &kt_tol_libm, KT_OPS(backward)),
    KT_CASE("gelu_backward.grad_input", "grad a zero-dim CPU tensor", kt_sweep,
            { { KT_HOST(KT_DT, -2, 2), .seed = 7 }, X_33_65 }, KT_FLOATS, &kt_tol_libm,
            KT_OPS(backward)),

    /* the fast loops against the reference loop and a strided view, above the grain size */
    KT_CASE("gelu.out", "40003, fast path", kt_sweep, { { KT_RAND(-9, 9, 40003), .seed = 5 } },
            KT_F64_F32, &kt_tol_libm, .flags = KT_STRIDED | KT_REF_LOOP | KT_FORMS_EXACT,
            KT_OPS(forward)),
    KT_CASE("gelu_backward.grad_input", "40003, fast path", kt_sweep,
            { { KT_RAND(-2, 2, 40003), .seed = 6 }, { KT_RAND(-9, 9, 40003), .seed = 5 } },
            KT_F64_F32, &kt_tol_libm, .flags = KT_REF_LOOP | KT_FORMS_EXACT, KT_OPS(backward)),

    /* integers */
    KT_CASE("gelu.out", "int64 refused", kt_sweep, { { KT_RAND(-5, 5, 17, 31) } }, KT_ONE(TG_INT64),
            .ops = forward, .count = NREFUSING, .error = "not implemented for"),
    KT_CASE("erf.out", "int64 computed in float32", kt_sweep, { { KT_RAND(-5, 5, 17, 31) } },
            KT_ONE(TG_INT64), &kt_tol_libm, .ops = forward + NREFUSING,
            .count = NFORWARD - NREFUSING),
    KT_CASE("gelu_backward.grad_input", "int64 refused", kt_sweep,
            { { KT_RAND(-5, 5, 17, 31) }, { KT_RAND(-5, 5, 17, 31) } }, KT_ONE(TG_INT64),
            KT_OPS(backward), .error = "not implemented for"),
    KT_CASE("gelu.out", "approximate \"erf\"", f_gelu_bad, { { KT_RAND(-9, 9, 17, 31) } },
            KT_ONE(TG_FLOAT32), .error = "approximate argument must be either none or tanh."),
    KT_CASE("gelu.out", "out= of another dtype", o_gelu_f64, { { KT_RAND(-9, 9, 17, 31) } },
            KT_ONE(TG_FLOAT32), .error = "Found dtype Double but expected Float"),

    /* composites */
    KT_CASE("glu", "(3, 4, 6) dim 1", f_glu,
            { { KT_RAND(-9, 9, 3, 4, 6), .seed = 5, .special = special, .nspecial = 16 } },
            KT_ONE(TG_FLOAT32), &kt_tol_libm),
    KT_CASE("glu_backward", "(3, 4, 3) grad, dim 2", f_glu_backward,
            { { KT_RAND(-1, 1, 3, 4, 3), .seed = 6 },
              { KT_RAND(-9, 9, 3, 4, 6), .seed = 5, .special = special, .nspecial = 16 } },
            KT_ONE(TG_FLOAT32), &kt_tol_libm),
    KT_CASE("logsumexp", "(3, 4, 6) dim 1", f_logsumexp,
            { { KT_RAND(-9, 9, 3, 4, 6), .seed = 5, .special = special, .nspecial = 16 } },
            KT_ONE(TG_FLOAT32), &kt_tol_libm),
    KT_CASE("gelu_backward.grad_input", "grad (3, 1) with self (2, 5)", f_gelu_backward,
            { { KT_VALUES_OF(TG_FLOAT64, fl_g, 3, 1) }, { KT_RAND_OF(TG_FLOAT32, -1, 1, 2, 5) } },
            .error = "must match the size of tensor b"),
};
KT_REGISTER(activation_lm_cases);

/* The backward operators broadcast grad_output and self and promote them to one dtype. */
Test(activation_lm, backward_broadcasts_and_promotes)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    kt_assert_broadcasts(backward, NBACKWARD, kt_tensor(fl_g, (int64_t[]){ 3, 1 }, 2, TG_FLOAT64),
                         kt_tensor(fl_x + 32, (int64_t[]){ 1, 4 }, 2, TG_FLOAT32));
    tg_scope_end();
    kt_assert_no_leak(live);
}
