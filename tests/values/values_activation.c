/* Value cases of the activation operators (kt_case.h): leaky_relu, hardtanh, relu6, hardswish,
 * hardsigmoid, elu (functional, out=, in place) and their backward operators.
 *
 * - At the 64 inputs of tests/fixtures/activation_fixtures.h (every operator's special points,
 *   NaN, infinities, random values in [-7, 7]) against PyTorch 1.13's scalar definitions in
 *   float64 and float32 (kt_tol_fx_activation); on the CPU every form (strided, out=, in
 *   place, the reference loop) equals the functional result bit for bit, and float16 and
 *   bfloat16 equal the float32 computation rounded once.
 * - Random (33, 65) inputs in [-7, 7) with the special values (0, -0, the kinks, NaN, +-inf)
 *   first, in every floating dtype, contiguous and strided, and for the backward operators a
 *   broadcast (4, 1, 7) grad with a (3, 7) self, a zero-dim CPU grad (a host value) and a
 *   float16 grad with a float32 self (promoted); 40003 elements for the fast paths against the
 *   reference loop. Other backends against the CPU within kt_tol_libm.
 * - Integer and bool inputs refused alike on every backend; hardtanh keeps integer dtypes. */
#include "kt_case.h"
#include "../fixtures/activation_fixtures.h"

/* ------------------------------------------------------------------ the operators */

KT_FN(f_leaky_relu) { return kt_y1(y, tg_leaky_relu(x[0])); }
KT_FN(f_leaky_relu_01) { return kt_y1(y, tg_leaky_relu(x[0], .negative_slope = 0.1)); }
KT_FN(i_leaky_relu_01) { return kt_y1(y, tg_leaky_relu_(x[0], .negative_slope = 0.1)); }
KT_FN(f_leaky_relu_02) { return kt_y1(y, tg_leaky_relu(x[0], .negative_slope = 0.2)); }
KT_FN(i_leaky_relu_02) { return kt_y1(y, tg_leaky_relu_(x[0], .negative_slope = 0.2)); }
KT_FN(o_leaky_relu_02)
{
    return kt_y1(y, tg_leaky_relu_out(x[0], a->out[0], .negative_slope = 0.2));
}
KT_FN(f_leaky_relu_neg) { return kt_y1(y, tg_leaky_relu(x[0], .negative_slope = -0.3)); }
KT_FN(f_hardtanh) { return kt_y1(y, tg_hardtanh(x[0])); }
KT_FN(f_hardtanh_m05_2) { return kt_y1(y, tg_hardtanh(x[0], .min_val = -0.5, .max_val = 2)); }
KT_FN(i_hardtanh_m05_2) { return kt_y1(y, tg_hardtanh_(x[0], .min_val = -0.5, .max_val = 2)); }
KT_FN(o_hardtanh_m05_2)
{
    return kt_y1(y, tg_hardtanh_out(x[0], a->out[0], .min_val = -0.5, .max_val = 2));
}
KT_FN(f_hardtanh_int) { return kt_y1(y, tg_hardtanh(x[0], .min_val = -1.5, .max_val = 2.5)); }
KT_FN(f_relu6) { return kt_y1(y, tg_relu6(x[0])); }
KT_FN(i_relu6) { return kt_y1(y, tg_relu6_(x[0])); }
KT_FN(f_hardswish) { return kt_y1(y, tg_hardswish(x[0])); }
KT_FN(i_hardswish) { return kt_y1(y, tg_hardswish_(x[0])); }
KT_FN(o_hardswish) { return kt_y1(y, tg_hardswish_out(x[0], a->out[0])); }
KT_FN(f_hardsigmoid) { return kt_y1(y, tg_hardsigmoid(x[0])); }
KT_FN(i_hardsigmoid) { return kt_y1(y, tg_hardsigmoid_(x[0])); }
KT_FN(o_hardsigmoid) { return kt_y1(y, tg_hardsigmoid_out(x[0], a->out[0])); }
KT_FN(f_elu) { return kt_y1(y, tg_elu(x[0])); }
KT_FN(i_elu) { return kt_y1(y, tg_elu_(x[0])); }
KT_FN(f_elu_alpha2) { return kt_y1(y, tg_elu(x[0], .alpha = 2)); }
KT_FN(o_elu_alpha2) { return kt_y1(y, tg_elu_out(x[0], a->out[0], .alpha = 2)); }
KT_FN(f_elu_a2) { return kt_y1(y, tg_elu(x[0], .alpha = 2, .scale = 1.5, .input_scale = 0.5)); }
KT_FN(i_elu_a2) { return kt_y1(y, tg_elu_(x[0], .alpha = 2, .scale = 1.5, .input_scale = 0.5)); }
KT_FN(o_elu_a2)
{
    return kt_y1(y, tg_elu_out(x[0], a->out[0], .alpha = 2, .scale = 1.5, .input_scale = 0.5));
}

KT_FN(f_leaky_relu_backward) { return kt_y1(y, tg_leaky_relu_backward(x[0], x[1], 0.2, false)); }
KT_FN(f_leaky_relu_backward_res) { return kt_y1(y, tg_leaky_relu_backward(x[0], x[1], 0.2, true)); }
KT_FN(f_hardtanh_backward) { return kt_y1(y, tg_hardtanh_backward(x[0], x[1], -1.0, 1.0)); }
KT_FN(f_hardtanh_backward_m05_2) { return kt_y1(y, tg_hardtanh_backward(x[0], x[1], -0.5, 2.0)); }
KT_FN(f_hardswish_backward) { return kt_y1(y, tg_hardswish_backward(x[0], x[1])); }
KT_FN(f_hardsigmoid_backward) { return kt_y1(y, tg_hardsigmoid_backward(x[0], x[1])); }
KT_FN(f_elu_backward) { return kt_y1(y, tg_elu_backward(x[0], 2.0, 1.5, 0.5, false, x[1])); }
KT_FN(f_elu_backward_res) { return kt_y1(y, tg_elu_backward(x[0], 2.0, 1.5, 0.5, true, x[1])); }
KT_FN(f_leaky_relu_backward_neg)
{
    return kt_y1(y, tg_leaky_relu_backward(x[0], x[0], -0.1, true));
}
KT_FN(o_hardswish_f64)
{
    tg_tensor *o = tg_empty(TG_INTS(17, 31), .dtype = TG_FLOAT64, .device = a->device);
    return kt_y1(y, tg_hardswish_out(x[0], o));
}

/* The operators as lists the sweeps below run (KT_OPS). */

static const kt_op forward[] = {
    { "leaky_relu", f_leaky_relu },
    { "leaky_relu 0.1", f_leaky_relu_01, NULL, i_leaky_relu_01 },
    { "leaky_relu 0.2", f_leaky_relu_02, o_leaky_relu_02, i_leaky_relu_02 },
    { "leaky_relu -0.3", f_leaky_relu_neg },
    { "hardswish", f_hardswish, o_hardswish, i_hardswish },
    { "hardsigmoid", f_hardsigmoid, o_hardsigmoid, i_hardsigmoid },
    { "elu", f_elu, NULL, i_elu },
    { "elu alpha 2", f_elu_alpha2, o_elu_alpha2 },
    { "elu 2, 1.5, 0.5", f_elu_a2, o_elu_a2, i_elu_a2 },
    /* clamps: integers are taken (below) */
    { "hardtanh", f_hardtanh },
    { "hardtanh -0.5, 2", f_hardtanh_m05_2, o_hardtanh_m05_2, i_hardtanh_m05_2 },
    { "relu6", f_relu6, NULL, i_relu6 },
};
#define NFORWARD ((int)(sizeof forward / sizeof forward[0]))
#define NREFUSING 9 /* the ones before the clamps */

static const kt_op backward[] = {
    { "leaky_relu_backward", f_leaky_relu_backward },
    { "leaky_relu_backward (result)", f_leaky_relu_backward_res },
    { "hardtanh_backward", f_hardtanh_backward },
    { "hardtanh_backward -0.5, 2", f_hardtanh_backward_m05_2 },
    { "hardswish_backward", f_hardswish_backward },
    { "hardsigmoid_backward", f_hardsigmoid_backward },
    { "elu_backward", f_elu_backward },
    { "elu_backward (result)", f_elu_backward_res },
};
#define NBACKWARD ((int)(sizeof backward / sizeof backward[0]))

/* ------------------------------------------------------------------ the cases */

static const double special[] = { 0, -0.0, 1,   -1,       3,         -3,   6,     -0.5,
                                  2, NAN,  -20, INFINITY, -INFINITY, 1e-5, -1e-5, 0.45 };
#define X_33_65                                                               \
    {                                                                         \
        KT_RAND(-7, 7, 33, 65), .seed = 3, .special = special, .nspecial = 16 \
    }
#define G_33_65                           \
    {                                     \
        KT_RAND(-2, 2, 33, 65), .seed = 7 \
    }
#define FX                    \
    {                         \
        KT_VALUES(fa_x, FA_N) \
    }
#define FX_G { KT_VALUES(fa_g, FA_N) }, FX
#define FX_DTYPES                                              \
    {                                                          \
        4, { TG_FLOAT64, TG_FLOAT32, TG_FLOAT16, TG_BFLOAT16 } \
    }
#define FX_FLAGS KT_STRIDED | KT_REF_LOOP | KT_FORMS_EXACT | KT_HALF_IN_FLOAT
#define REF(name)                                                                   \
    .ref = (const double *const[]){ fa_##name##_f64, fa_##name##_f32, NULL, NULL }, \
    .ref_tol = &kt_tol_fx_activation, .flags = FX_FLAGS

static const kt_case activation_cases[] = {
    /* PyTorch's values at the fixture's inputs */
    KT_CASE("leaky_relu.out", "fixture", f_leaky_relu, { FX }, FX_DTYPES, &kt_tol_libm,
            REF(leaky_relu)),
    KT_CASE("leaky_relu.out", "fixture, slope 0.2", f_leaky_relu_02, { FX }, FX_DTYPES,
            &kt_tol_libm, .out = o_leaky_relu_02, .inplace = i_leaky_relu_02, REF(leaky_relu_02)),
    KT_CASE("leaky_relu.out", "fixture, slope -0.3", f_leaky_relu_neg, { FX }, FX_DTYPES,
            &kt_tol_libm, REF(leaky_relu_neg)),
    KT_CASE("hardtanh", "fixture", f_hardtanh, { FX }, FX_DTYPES, &kt_tol_libm, REF(hardtanh)),
    KT_CASE("hardtanh.out", "fixture, -0.5, 2", f_hardtanh_m05_2, { FX }, FX_DTYPES, &kt_tol_libm,
            .out = o_hardtanh_m05_2, .inplace = i_hardtanh_m05_2, REF(hardtanh_m05_2)),
    KT_CASE("relu6", "fixture", f_relu6, { FX }, FX_DTYPES, &kt_tol_libm, .inplace = i_relu6,
            REF(relu6)),
    KT_CASE("hardswish.out", "fixture", f_hardswish, { FX }, FX_DTYPES, &kt_tol_libm,
            .out = o_hardswish, .inplace = i_hardswish, REF(hardswish)),
    KT_CASE("hardsigmoid.out", "fixture", f_hardsigmoid, { FX }, FX_DTYPES, &kt_tol_libm,
            .out = o_hardsigmoid, .inplace = i_hardsigmoid, REF(hardsigmoid)),
    KT_CASE("elu.out", "fixture", f_elu, { FX }, FX_DTYPES, &kt_tol_libm, REF(elu)),
    KT_CASE("elu.out", "fixture, 2, 1.5, 0.5", f_elu_a2, { FX }, FX_DTYPES, &kt_tol_libm,
            .out = o_elu_a2, .inplace = i_elu_a2, REF(elu_a2)),
    KT_CASE("leaky_relu_backward", "fixture", f_leaky_relu_backward, { FX_G }, FX_DTYPES,
            &kt_tol_libm, REF(leaky_relu_backward)),
    KT_CASE("leaky_relu_backward", "fixture, from the result", f_leaky_relu_backward_res, { FX_G },
            FX_DTYPES, &kt_tol_libm, REF(leaky_relu_backward_res)),
    KT_CASE("hardtanh_backward", "fixture", f_hardtanh_backward, { FX_G }, FX_DTYPES, &kt_tol_libm,
            REF(hardtanh_backward)),
    KT_CASE("hardtanh_backward", "fixture, -0.5, 2", f_hardtanh_backward_m05_2, { FX_G }, FX_DTYPES,
            &kt_tol_libm, REF(hardtanh_backward_m05_2)),
    KT_CASE("hardswish_backward", "fixture", f_hardswish_backward, { FX_G }, FX_DTYPES,
            &kt_tol_libm, REF(hardswish_backward)),
    KT_CASE("hardsigmoid_backward", "fixture", f_hardsigmoid_backward, { FX_G }, FX_DTYPES,
            &kt_tol_libm, REF(hardsigmoid_backward)),
    KT_CASE("elu_backward", "fixture", f_elu_backward, { FX_G }, FX_DTYPES, &kt_tol_libm,
            REF(elu_backward)),
    KT_CASE("elu_backward", "fixture, from the result", f_elu_backward_res, { FX_G }, FX_DTYPES,
            &kt_tol_libm, REF(elu_backward_res)),

    /* random inputs with the special values, every floating dtype */
    KT_CASE("leaky_relu.out", "(33, 65)", kt_sweep, { X_33_65 }, KT_FLOATS, &kt_tol_libm,
            .out = kt_sweep_out, .inplace = kt_sweep_inplace, .flags = KT_STRIDED, KT_OPS(forward)),
    KT_CASE("leaky_relu_backward", "(33, 65)", kt_sweep, { G_33_65, X_33_65 }, KT_FLOATS,
            &kt_tol_libm, .flags = KT_STRIDED, KT_OPS(backward)),
    KT_CASE("leaky_relu_backward", "grad (4, 1, 7) broadcast with self (3, 7)", kt_sweep,
            { { KT_RAND(-2, 2, 4, 1, 7), .seed = 7 },
              { KT_RAND(-7, 7, 3, 7), .seed = 9, .special = special, .nspecial = 16 } },
            KT_FLOATS, &kt_tol_libm, KT_OPS(backward)),
    KT_CASE("leaky_relu_backward", "grad a zero-dim CPU tensor", kt_sweep,
            { { KT_HOST(KT_DT, -2, 2), .seed = 7 }, X_33_65 }, KT_FLOATS, &kt_tol_libm,
            KT_OPS(backward)),
    KT_CASE("leaky_relu_backward", "float16 grad, float32 self", kt_sweep,
            { { KT_RAND_OF(TG_FLOAT16, -2, 2, 17, 31), .seed = 1 },
              { KT_RAND_OF(TG_FLOAT32, -7, 7, 17, 31), .seed = 2, .special = special,
                .nspecial = 16 } },
            { 0 }, &kt_tol_libm, KT_OPS(backward)),

    /* the fast (contiguous, vectorised, parallel) loops against the reference loop, on a length
     * that is not a multiple of any vector width and above the parallel grain size */
    KT_CASE("leaky_relu.out", "40003, fast path", kt_sweep,
            { { KT_RAND(-8, 8, 40003), .seed = 5 } }, KT_F64_F32, &kt_tol_libm,
            .flags = KT_REF_LOOP | KT_FORMS_EXACT, KT_OPS(forward)),
    KT_CASE("leaky_relu_backward", "40003, fast path", kt_sweep,
            { { KT_RAND(-2, 2, 40003), .seed = 6 }, { KT_RAND(-8, 8, 40003), .seed = 5 } },
            KT_F64_F32, &kt_tol_libm, .flags = KT_REF_LOOP | KT_FORMS_EXACT, KT_OPS(backward)),

    /* integers: refused (the clamps aside) */
    KT_CASE("leaky_relu.out", "int64 and bool refused", kt_sweep, { { KT_RAND(-5, 5, 17, 31) } },
            { 2, { TG_INT64, TG_BOOL } }, .ops = forward, .count = NREFUSING,
            .error = "not implemented for"),
    KT_CASE("leaky_relu_backward", "int64 refused", kt_sweep,
            { { KT_RAND(-5, 5, 17, 31) }, { KT_RAND(-5, 5, 17, 31) } }, KT_ONE(TG_INT64),
            KT_OPS(backward), .error = "not implemented for"),
    KT_CASE("hardtanh", "int64 keeps its dtype", f_hardtanh_int, { { KT_RAND(-5, 5, 17, 31) } },
            KT_ONE(TG_INT64), &kt_exact),
    KT_CASE("leaky_relu_backward", "negative slope from the result", f_leaky_relu_backward_neg,
            { { KT_RAND(-7, 7, 17, 31) } }, KT_ONE(TG_FLOAT32),
            .error = "In-place leakyReLu backward calculation is triggered with a negative slope"),
    KT_CASE("hardswish.out", "out= of another dtype", o_hardswish_f64,
            { { KT_RAND(-7, 7, 17, 31) } }, KT_ONE(TG_FLOAT32),
            .error = "Found dtype Double but expected Float"),
    KT_CASE("hardswish_backward", "grad (3, 1) with self (2, 5)", f_hardswish_backward,
            { { KT_VALUES_OF(TG_FLOAT64, fa_g, 3, 1) }, { KT_RAND_OF(TG_FLOAT32, -1, 1, 2, 5) } },
            .error = "must match the size of tensor b"),
};
KT_REGISTER(activation_cases);

/* The backward operators broadcast grad_output and self and promote them to one dtype. */
Test(activation, backward_broadcasts_and_promotes)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    kt_assert_broadcasts(backward, NBACKWARD, kt_tensor(fa_g, (int64_t[]){ 3, 1 }, 2, TG_FLOAT64),
                         kt_tensor(fa_x + 16, (int64_t[]){ 1, 4 }, 2, TG_FLOAT32));
    tg_scope_end();
    kt_assert_no_leak(live);
}
