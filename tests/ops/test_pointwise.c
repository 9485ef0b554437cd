/* Pointwise operators (binary, comparisons, unary, where, clamp, Scalar overloads, copy_).
 *
 * The table test runs every case of tests/fixtures/pointwise_fixtures.h (expected values from
 * PyTorch 1.13, see gen_pointwise.py) in five ways: functional, functional on the reference
 * path (tg__pw_force_reference: must equal the fast path bit for bit), with non-contiguous
 * inputs (every input a strided view; must equal the contiguous result bit for bit), out=
 * into a preallocated tensor, and in place when the result has self's dtype and shape.
 *
 * Metric: max |got - want| <= atol + rtol * |want| elementwise, NaN matching NaN, inf matching
 * inf. Bounds per dtype: integers and bool exact; float64 rtol 1e-13 (libm vs Sleef, <= 1 ulp
 * each); float32 rtol 1e-6 (our exp is <= 1 ulp from expf, PyTorch's Sleef <= 1 ulp: 2 ulp is
 * 2.4e-7; sigmoid/tanh add a few more); float16 rtol 1e-3 and bfloat16 8e-3 (one unit in the
 * last place, from double rounding of a float result that sits near a tie). Every test also
 * checks that tg_live_tensors() returns to its starting value. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_util.h"
#include "pointwise_loops.h"
#include "pointwise_scalar.h"
#include "fixtures/pointwise_fixtures.h"
#include "tg_cover.h"

TG_COVERS("add.Tensor", "add_.Tensor", "add.out", "add.Scalar", "add_.Scalar", "add.Scalar_out",
          "sub.Tensor", "sub_.Tensor", "sub.out", "sub.Scalar", "sub_.Scalar", "sub.Scalar_out",
          "mul.Tensor", "mul_.Tensor", "mul.out", "mul.Scalar", "mul_.Scalar", "mul.Scalar_out",
          "div.Tensor", "div_.Tensor", "div.out", "div.Tensor_mode", "div_.Tensor_mode",
          "div.out_mode", "div.Scalar", "div_.Scalar", "div.Scalar_out", "pow.Tensor_Tensor",
          "pow_.Tensor", "pow.Tensor_Tensor_out", "pow.Tensor_Scalar", "pow_.Scalar",
          "pow.Tensor_Scalar_out", "pow.Scalar", "maximum", "maximum.out", "minimum",
          "minimum.out");
TG_COVERS("eq.Tensor", "eq_.Tensor", "eq.Tensor_out", "eq.Scalar", "eq_.Scalar", "eq.Scalar_out",
          "ne.Tensor", "ne_.Tensor", "ne.Tensor_out", "ne.Scalar", "ne_.Scalar", "ne.Scalar_out",
          "lt.Tensor", "lt_.Tensor", "lt.Tensor_out", "lt.Scalar", "lt_.Scalar", "lt.Scalar_out",
          "le.Tensor", "le_.Tensor", "le.Tensor_out", "le.Scalar", "le_.Scalar", "le.Scalar_out",
          "gt.Tensor", "gt_.Tensor", "gt.Tensor_out", "gt.Scalar", "gt_.Scalar", "gt.Scalar_out",
          "ge.Tensor", "ge_.Tensor", "ge.Tensor_out", "ge.Scalar", "ge_.Scalar", "ge.Scalar_out");
TG_COVERS("where.self", "where.self_out", "where.ScalarSelf", "where.ScalarOther", "clamp",
          "clamp_", "clamp.out", "clamp.Tensor", "clamp_.Tensor", "clamp.Tensor_out", "neg", "neg_",
          "neg.out", "abs", "abs_", "abs.out", "exp", "exp_", "exp.out", "log", "log_", "log.out",
          "sqrt", "sqrt_", "sqrt.out", "rsqrt", "rsqrt_", "rsqrt.out", "sin", "sin_", "sin.out",
          "cos", "cos_", "cos.out", "tanh", "tanh_", "tanh.out", "sigmoid", "sigmoid_",
          "sigmoid.out", "relu", "relu_", "relu.out", "copy_");

/* ------------------------------------------------------------------ helpers */

static tg_tensor *pw_tensor(const pw_arr *a)
{
    return kt_tensor(a->data, a->shape, a->ndim, a->dtype);
}

/* The same values as a non-contiguous view: every element at twice its contiguous stride
 * (a [..., 2]-shaped buffer, element 0 of the last dim). Zero-dim inputs stay as they are. */
static tg_tensor *pw_strided(const pw_arr *a)
{
    tg_tensor *c = pw_tensor(a);
    if (a->ndim == 0) return c;
    int64_t shape[5];
    memcpy(shape, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    shape[a->ndim] = 2;
    tg_tensor *big =
        tg_zeros(((tg_int_list){ .len = a->ndim + 1, .data = shape }), .dtype = a->dtype);
    tg_tensor *v = tg_select(big, -1, 0);
    tg_tensor *r = tg_copy_(v, c);
    cr_assert(r, "copy_: %s", tg_last_error());
    kt_release_all(r, big, c);
    return v;
}

static double pw_rtol(tg_dtype t)
{
    switch (t) {
    case TG_FLOAT16: return 1e-3;
    case TG_BFLOAT16: return 8e-3;
    case TG_FLOAT32: return 1e-6;
    case TG_FLOAT64: return 1e-13;
    default: return 0;
    }
}

static double pw_atol(tg_dtype t)
{
    return t == TG_FLOAT16 ? 1e-7 : tg_dtype_is_floating(t) ? 1e-37 : 0;
}

static bool pw_close(double got, double want, double rtol, double atol)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

/* Checks t against the expected array; `what` names the variant in failure messages. */
static void pw_check(const pw_case *c, const tg_tensor *t, const char *what)
{
    cr_assert(t, "%s %s: NULL (%s)", c->op, what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(t), c->out.dtype, "%s %s: dtype %s, expected %s", c->op, what,
                 tg_dtype_name(tg_tensor_dtype(t)), tg_dtype_name(c->out.dtype));
    kt_assert_shape(t, c->out.shape, c->out.ndim);
    double *v = kt_values(t);
    int64_t n = tg_tensor_numel(t);
    double rtol = pw_rtol(c->out.dtype), atol = pw_atol(c->out.dtype);
    for (int64_t i = 0; i < n; i++)
        cr_assert(pw_close(v[i], c->out.data[i], rtol, atol),
                  "%s %s (%s): element %lld is %.17g, expected %.17g", c->op, what,
                  tg_dtype_name(c->in[0].dtype), (long long)i, v[i], c->out.data[i]);
    free(v);
}

/* Bitwise (as doubles; NaN == NaN) equality of two results. */
static void pw_same(const pw_case *c, const tg_tensor *a, const tg_tensor *b, const char *what)
{
    cr_assert(a && b, "%s %s: NULL (%s)", c->op, what, tg_last_error());
    int64_t n = tg_tensor_numel(a);
    cr_assert_eq(n, tg_tensor_numel(b));
    double *x = kt_values(a), *y = kt_values(b);
    for (int64_t i = 0; i < n; i++)
        cr_assert((isnan(x[i]) && isnan(y[i])) || memcmp(&x[i], &y[i], sizeof(double)) == 0 ||
                      (x[i] == 0 && y[i] == 0 && signbit(x[i]) == signbit(y[i])),
                  "%s %s (%s): element %lld differs: %.17g vs %.17g", c->op, what,
                  tg_dtype_name(c->in[0].dtype), (long long)i, x[i], y[i]);
    free(x);
    free(y);
}

typedef enum pw_mode { PW_FUNCTIONAL, PW_OUT, PW_INPLACE } pw_mode;

static tg_opt_scalar pw_opt(const pw_case *c, int bit, double v)
{
    return (c->flags & bit) ? v : TG_NONE_FLOAT;
}

/* Calls the case's operator. PW_OUT writes into `out`; PW_INPLACE modifies in[0]. Returns
 * NULL when the operator has no such variant (and sets *none). */
static tg_tensor *pw_call(const pw_case *c, tg_tensor **in, pw_mode mode, tg_tensor *out,
                          bool *none)
{
    const char *op = c->op;
    tg_tensor *a = in[0], *b = c->nin > 1 ? in[1] : NULL, *d = c->nin > 2 ? in[2] : NULL;
    *none = false;
#define PW3(name, fn, fn_out, fn_) \
    if (!strcmp(op, name)) return mode == PW_FUNCTIONAL ? fn : mode == PW_OUT ? fn_out : fn_;
#define PW2(name, fn, fn_out) /* no in-place variant */                     \
    if (!strcmp(op, name)) {                                                \
        *none = mode == PW_INPLACE;                                         \
        return mode == PW_FUNCTIONAL ? fn : mode == PW_OUT ? fn_out : NULL; \
    }
    PW3("add", tg_add(a, b), tg_add_out(a, b, out), tg_add_(a, b))
    PW3("add_alpha", tg_add(a, b, .alpha = 2), tg_add_out(a, b, out, .alpha = 2),
        tg_add_(a, b, .alpha = 2))
    PW3("sub", tg_sub(a, b), tg_sub_out(a, b, out), tg_sub_(a, b))
    PW3("mul", tg_mul(a, b), tg_mul_out(a, b, out), tg_mul_(a, b))
    PW3("div", tg_div(a, b), tg_div_out(a, b, out), tg_div_(a, b))
    PW3("div_trunc", tg_div_mode(a, b, "trunc"), tg_div_mode_out(a, b, "trunc", out),
        tg_div_mode_(a, b, "trunc"))
    PW3("div_floor", tg_div_mode(a, b, "floor"), tg_div_mode_out(a, b, "floor", out),
        tg_div_mode_(a, b, "floor"))
    PW3("pow", tg_pow(a, b), tg_pow_out(a, b, out), tg_pow_(a, b))
    PW3("eq", tg_eq(a, b), tg_eq_out(a, b, out), tg_eq_(a, b))
    PW3("ne", tg_ne(a, b), tg_ne_out(a, b, out), tg_ne_(a, b))
    PW3("lt", tg_lt(a, b), tg_lt_out(a, b, out), tg_lt_(a, b))
    PW3("le", tg_le(a, b), tg_le_out(a, b, out), tg_le_(a, b))
    PW3("gt", tg_gt(a, b), tg_gt_out(a, b, out), tg_gt_(a, b))
    PW3("ge", tg_ge(a, b), tg_ge_out(a, b, out), tg_ge_(a, b))
    PW3("add_scalar", tg_add_scalar(a, c->s0), tg_add_scalar_out(a, c->s0, out),
        tg_add_scalar_(a, c->s0))
    PW3("sub_scalar", tg_sub_scalar(a, c->s0), tg_sub_scalar_out(a, c->s0, out),
        tg_sub_scalar_(a, c->s0))
    PW3("mul_scalar", tg_mul_scalar(a, c->s0), tg_mul_scalar_out(a, c->s0, out),
        tg_mul_scalar_(a, c->s0))
    PW3("div_scalar", tg_div_scalar(a, c->s0), tg_div_scalar_out(a, c->s0, out),
        tg_div_scalar_(a, c->s0))
    PW2("maximum", tg_maximum(a, b), tg_maximum_out(a, b, out))
    PW2("minimum", tg_minimum(a, b), tg_minimum_out(a, b, out))
    PW2("where", tg_where(a, b, d), tg_where_out(a, b, d, out))
    PW3("pow_scalar", tg_pow_scalar(a, c->s0), tg_pow_scalar_out(a, c->s0, out),
        tg_pow_scalar_(a, c->s0))
    PW3("eq_scalar", tg_eq_scalar(a, c->s0), tg_eq_scalar_out(a, c->s0, out),
        tg_eq_scalar_(a, c->s0))
    PW3("ne_scalar", tg_ne_scalar(a, c->s0), tg_ne_scalar_out(a, c->s0, out),
        tg_ne_scalar_(a, c->s0))
    PW3("lt_scalar", tg_lt_scalar(a, c->s0), tg_lt_scalar_out(a, c->s0, out),
        tg_lt_scalar_(a, c->s0))
    PW3("le_scalar", tg_le_scalar(a, c->s0), tg_le_scalar_out(a, c->s0, out),
        tg_le_scalar_(a, c->s0))
    PW3("gt_scalar", tg_gt_scalar(a, c->s0), tg_gt_scalar_out(a, c->s0, out),
        tg_gt_scalar_(a, c->s0))
    PW3("ge_scalar", tg_ge_scalar(a, c->s0), tg_ge_scalar_out(a, c->s0, out),
        tg_ge_scalar_(a, c->s0))
    PW3("neg", tg_neg(a), tg_neg_out(a, out), tg_neg_(a))
    PW3("abs", tg_abs(a), tg_abs_out(a, out), tg_abs_(a))
    PW3("relu", tg_relu(a), tg_relu_out(a, out), tg_relu_(a))
    PW3("exp", tg_exp(a), tg_exp_out(a, out), tg_exp_(a))
    PW3("log", tg_log(a), tg_log_out(a, out), tg_log_(a))
    PW3("sqrt", tg_sqrt(a), tg_sqrt_out(a, out), tg_sqrt_(a))
    PW3("rsqrt", tg_rsqrt(a), tg_rsqrt_out(a, out), tg_rsqrt_(a))
    PW3("sin", tg_sin(a), tg_sin_out(a, out), tg_sin_(a))
    PW3("cos", tg_cos(a), tg_cos_out(a, out), tg_cos_(a))
    PW3("tanh", tg_tanh(a), tg_tanh_out(a, out), tg_tanh_(a))
    PW3("sigmoid", tg_sigmoid(a), tg_sigmoid_out(a, out), tg_sigmoid_(a))
    PW3("clamp", tg_clamp(a, .min = pw_opt(c, 1, c->s0), .max = pw_opt(c, 2, c->s1)),
        tg_clamp_out(a, out, .min = pw_opt(c, 1, c->s0), .max = pw_opt(c, 2, c->s1)),
        tg_clamp_(a, .min = pw_opt(c, 1, c->s0), .max = pw_opt(c, 2, c->s1)))
    PW3("clamp_tensor", tg_clamp_tensor(a, .min = b, .max = d),
        tg_clamp_tensor_out(a, out, .min = b, .max = d), tg_clamp_tensor_(a, .min = b, .max = d))
#undef PW3
#undef PW2
    if (mode != PW_FUNCTIONAL) {
        *none = true;
        return NULL;
    }
    if (!strcmp(op, "pow_scalar_self")) return tg_pow_scalar_self(c->s0, a);
    if (!strcmp(op, "where_scalar_other")) return tg_where_scalar_other(a, b, c->s0);
    if (!strcmp(op, "where_scalar_self")) return tg_where_scalar_self(a, c->s0, b);
    cr_assert_fail("unknown op %s", op);
    return NULL;
}

static void pw_inputs(const pw_case *c, tg_tensor **in, bool strided)
{
    for (int k = 0; k < c->nin; k++) in[k] = strided ? pw_strided(&c->in[k]) : pw_tensor(&c->in[k]);
}

static void pw_release(tg_tensor **in, int n)
{
    for (int k = 0; k < n; k++) tg_release(in[k]);
}

static bool pw_same_shape(const pw_arr *a, const pw_arr *b)
{
    if (a->ndim != b->ndim) return false;
    for (int64_t i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

/* All five variants of one case. */
static void pw_run_case(const pw_case *c)
{
    tg_tensor *in[3];
    bool none;
    pw_inputs(c, in, false);
    tg_tensor *r = pw_call(c, in, PW_FUNCTIONAL, NULL, &none);
    if (c->error) {
        cr_assert_null(r, "%s (%s): expected error \"%s\"", c->op, tg_dtype_name(c->in[0].dtype),
                       c->error);
        const char *e = tg_last_error();
        cr_assert(e && strstr(e, c->error), "%s: error \"%s\", expected \"%s\"", c->op,
                  e ? e : "(none)", c->error);
        tg_clear_error();
        pw_release(in, c->nin);
        return;
    }
    pw_check(c, r, "functional");

    tg__pw_force_reference = 1;
    tg_tensor *ref = pw_call(c, in, PW_FUNCTIONAL, NULL, &none);
    tg__pw_force_reference = 0;
    pw_same(c, r, ref, "reference path vs fast path");
    tg_release(ref);

    tg_tensor *sin_[3];
    pw_inputs(c, sin_, true);
    tg_tensor *rs = pw_call(c, sin_, PW_FUNCTIONAL, NULL, &none);
    pw_same(c, r, rs, "strided inputs");
    tg_release(rs);
    pw_release(sin_, c->nin);

    tg_tensor *out = tg_empty(((tg_int_list){ .len = c->out.ndim, .data = c->out.shape }),
                              .dtype = c->out.dtype);
    tg_tensor *ro = pw_call(c, in, PW_OUT, out, &none);
    if (!none) {
        cr_assert_eq(ro, out, "%s out=: did not return out (%s)", c->op, tg_last_error());
        pw_check(c, out, "out=");
        tg_release(ro);
    }
    tg_release(out);

    if (c->in[0].dtype == c->out.dtype && pw_same_shape(&c->in[0], &c->out) &&
        strcmp(c->op, "where") != 0) {
        tg_tensor *self = tg_clone(in[0]);
        tg_tensor *args[3] = { self, c->nin > 1 ? in[1] : NULL, c->nin > 2 ? in[2] : NULL };
        tg_tensor *ri = pw_call(c, args, PW_INPLACE, NULL, &none);
        if (!none) {
            cr_assert_eq(ri, self, "%s in place: did not return self (%s)", c->op, tg_last_error());
            pw_check(c, self, "in place");
            tg_release(ri);
        }
        tg_release(self);
    }
    tg_release(r);
    pw_release(in, c->nin);
}

/* ------------------------------------------------------------------ the table */

Test(pointwise, pytorch_table)
{
    int64_t live = tg_live_tensors();
    for (int i = 0; i < PW_NCASES; i++) pw_run_case(&pw_cases[i]);
    cr_assert_eq(tg_live_tensors(), live, "leaked %lld tensors",
                 (long long)(tg_live_tensors() - live));
}

/* ------------------------------------------------------------------ hand-written cases */

static tg_tensor *f32(const float *v, int64_t n)
{
    return tg_tensor_from_data(v, (int64_t[]){ n }, 1, TG_FLOAT32);
}
static tg_tensor *i64(const int64_t *v, int64_t n)
{
    return tg_tensor_from_data(v, (int64_t[]){ n }, 1, TG_INT64);
}

Test(pointwise, errors_in_pytorch_words)
{
    int64_t live = tg_live_tensors();
    tg_tensor *a = f32((float[]){ 1, 2 }, 2), *ia = i64((int64_t[]){ 1, 2 }, 2),
              *iz = i64((int64_t[]){ 1, 0 }, 2);
    tg_tensor *lo = tg_zeros(TG_INTS(2), .dtype = TG_INT64);
    kt_expect_error(tg_add_out(a, a, lo),
                    "result type Float can't be cast to the desired output type Long");
    kt_expect_error(tg_exp_(ia), "result type Float can't be cast to the desired output type Long");
    kt_expect_error(
        tg_add(ia, ia, .alpha = 2.5),
        "For integral input tensors, argument alpha must not be a floating point number.");
    kt_expect_error(tg_div_mode(ia, iz, "trunc"), "ZeroDivisionError");
    kt_expect_error(tg_div_mode(ia, iz, "floor"), "ZeroDivisionError");
    kt_expect_error(
        tg_div_mode(ia, ia, "bad"),
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'bad'");
    kt_expect_error(tg_pow_scalar(ia, -1), "Integers to negative integer powers are not allowed.");
    kt_expect_error(tg_clamp(a), "torch.clamp: At least one of 'min' or 'max' must not be None");
    kt_expect_error(tg_clamp_tensor(a),
                    "torch.clamp: At least one of 'min' or 'max' must not be None");
    tg_tensor *big = tg_zeros(TG_INTS(2, 2, 2)), *small = tg_zeros(TG_INTS(2, 2));
    kt_expect_error(tg_add_(small, big),
                    "output with shape [2, 2] doesn't match the broadcast shape [2, 2, 2]");
    tg_tensor *three = tg_zeros(TG_INTS(3));
    kt_expect_error(
        tg_mul(a, three),
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
    kt_expect_error(
        tg_copy_(a, three),
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0");
    tg_tensor *u8 = tg_zeros(TG_INTS(2), .dtype = TG_UINT8);
    kt_expect_error(tg_clamp(u8, .min = -1, .max = 300),
                    "value cannot be converted to type uint8_t without overflow");
    kt_release_all(a, ia, iz, lo, big, small, three, u8);
    cr_assert_eq(tg_live_tensors(), live);
}

/* The float32 exp against glibc's expf on every 61st float (70M values, all exponents and
 * signs): at most 1 ulp apart (an exhaustive run over all 2^32 floats also gives 1). */
static int64_t ulp_distance(float a, float b)
{
    if (isnan(a) && isnan(b)) return 0;
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    int64_t d = (int64_t)ia - ib;
    return d < 0 ? -d : d;
}

Test(pointwise, exp_f32_within_1ulp_of_expf)
{
    int64_t worst = 0;
    float at = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += 61) {
        float x = tg__pw_f32_from_bits((uint32_t)u);
        int64_t d = ulp_distance(tg__pw_exp_f32(x), expf(x));
        if (d > worst) {
            worst = d;
            at = x;
        }
    }
    cr_assert_leq(worst, 1, "max ulp error %lld at x = %.9g", (long long)worst, at);
    cr_assert(isinf(tg__pw_exp_f32(INFINITY)) && tg__pw_exp_f32(-INFINITY) == 0 &&
              isnan(tg__pw_exp_f32(NAN)));
    cr_assert(isinf(tg__pw_exp_f32(88.8f)) && tg__pw_exp_f32(-104.0f) == 0 &&
              tg__pw_exp_f32(-103.9f) > 0);
}

/* The vectorised float32 exp (exp_f32_vec.h) against the scalar reference, bit for bit, over
 * a spread of all bit patterns: NaNs, infinities, the overflow and subnormal ranges. */
Test(pointwise, exp_f32_tensor_path_matches_reference_bitwise)
{
    int64_t live = tg_live_tensors();
    const int64_t n = (int64_t)(((1ull << 32) + 4098) / 4099) + 4; /* the bit patterns + 4 */
    float *xv = malloc(sizeof(float) * (size_t)n);
    int64_t k = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += 4099) xv[k++] = tg__pw_f32_from_bits((uint32_t)u);
    xv[k++] = INFINITY;
    xv[k++] = -INFINITY;
    xv[k++] = 88.72283935546875f;
    xv[k++] = -103.97283172607422f;
    cr_assert_eq(k, n);
    tg_tensor *x = f32(xv, n), *e = tg_exp(x);
    const float *ev = tg_tensor_data(e);
    for (int64_t i = 0; i < n; i++) {
        float want = tg__pw_exp_f32(xv[i]);
        if (isnan(want)) cr_assert(isnan(ev[i]), "exp(%a): got %a, want NaN", xv[i], ev[i]);
        else
            cr_assert_eq(tg__pw_f32_bits(ev[i]), tg__pw_f32_bits(want), "exp(%a): got %a, want %a",
                         xv[i], ev[i], want);
    }
    kt_release_all(e, x);
    free(xv);
    cr_assert_eq(tg_live_tensors(), live);
}

/* Sizes above the grain (parallel split), odd lengths (vector tails), transposed operands
 * and aliasing in place, each against a plain C loop. */
Test(pointwise, large_transposed_and_in_place)
{
    int64_t live = tg_live_tensors();
    const int64_t n = 100003;
    float *av = malloc(sizeof(float) * n), *bv = malloc(sizeof(float) * n);
    for (int64_t i = 0; i < n; i++) {
        av[i] = (float)(i % 97) * 0.5f - 20;
        bv[i] = (float)(i % 13) - 6.5f;
    }
    tg_tensor *a = f32(av, n), *b = f32(bv, n);
    tg_tensor *s = tg_add(a, b, .alpha = 3), *e = tg_exp(a), *m = tg_maximum(a, b);
    float *sv = tg_tensor_data(s), *ev = tg_tensor_data(e), *mv = tg_tensor_data(m);
    for (int64_t i = 0; i < n; i++) {
        cr_assert_eq(sv[i], av[i] + 3.0f * bv[i]);
        cr_assert_eq(ev[i], tg__pw_exp_f32(av[i]));
        cr_assert_eq(mv[i], av[i] > bv[i] ? av[i] : bv[i]);
    }
    tg_tensor *r = tg_mul_(a, a); /* self aliases other */
    tg_release(r);
    float *a2 = tg_tensor_data(a);
    for (int64_t i = 0; i < n; i++) cr_assert_eq(a2[i], av[i] * av[i]);

    /* (3, 4)^T + (4, 3) */
    tg_tensor *r12 = tg_arange(12, .dtype = TG_FLOAT32);
    tg_tensor *x = tg_clone(r12), *y = tg_reshape(r12, TG_INTS(4, 3));
    tg_tensor *x34 = tg_reshape(x, TG_INTS(3, 4));
    tg_release(x);
    x = x34;
    tg_tensor *xt = tg_transpose(x, 0, 1);
    tg_tensor *z = tg_sub(xt, y);
    double *zv = kt_values(z);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) cr_assert_eq(zv[i * 3 + j], (double)(j * 4 + i) - (i * 3 + j));
    free(zv);
    /* in place on a transposed view writes through to the base */
    tg_tensor *q = tg_neg_(xt);
    tg_release(q);
    double *xv = kt_values(x);
    for (int i = 0; i < 12; i++) cr_assert_eq(xv[i], -(double)i);
    free(xv);
    kt_release_all(x, y, xt, z, r12, a, b, s, e, m);
    free(av);
    free(bv);
    tg_clear_error();
    cr_assert_eq(tg_live_tensors(), live, "leaked %lld", (long long)(tg_live_tensors() - live));
}

/* copy_: conversions as PyTorch (x86) does them, broadcasting, strided destination. */
Test(pointwise, copy_conversions_and_broadcast)
{
    int64_t live = tg_live_tensors();
    tg_tensor *src = f32((float[]){ -1, 300, 2.7f }, 3);
    tg_tensor *u8 = tg_zeros(TG_INTS(3), .dtype = TG_UINT8);
    tg_release(tg_copy_(u8, src));
    uint8_t *uv = tg_tensor_data(u8);
    cr_assert(uv[0] == 255 && uv[1] == 44 && uv[2] == 2, "%d %d %d", uv[0], uv[1], uv[2]);

    tg_tensor *s2 = f32((float[]){ -1.5f, 3e9f, NAN }, 3);
    tg_tensor *i32 = tg_zeros(TG_INTS(3), .dtype = TG_INT32);
    tg_release(tg_copy_(i32, s2));
    int32_t *iv = tg_tensor_data(i32);
    cr_assert(iv[0] == -1 && iv[1] == INT32_MIN && iv[2] == INT32_MIN);

    double dv[3] = { 1e5, 1.0009765625, 0.1 };
    tg_tensor *d = tg_tensor_from_data(dv, (int64_t[]){ 3 }, 1, TG_FLOAT64);
    tg_tensor *h = tg_zeros(TG_INTS(3), .dtype = TG_FLOAT16);
    tg_release(tg_copy_(h, d));
    double *hv = kt_values(h);
    cr_assert(isinf(hv[0]) && hv[1] == 1.0009765625 && fabs(hv[2] - 0.1) < 1e-4);
    free(hv);

    tg_tensor *b = tg_zeros(TG_INTS(2, 3), .dtype = TG_BOOL);
    tg_tensor *row = f32((float[]){ 0.5f, 0, NAN }, 3);
    tg_release(tg_copy_(b, row)); /* (3,) broadcast into (2, 3) */
    double *bv = kt_values(b);
    for (int i = 0; i < 2; i++)
        cr_assert(bv[3 * i] == 1 && bv[3 * i + 1] == 0 && bv[3 * i + 2] == 1);
    free(bv);

    tg_tensor *m = tg_zeros(TG_INTS(2, 2));
    tg_tensor *mt = tg_transpose(m, 0, 1);
    tg_tensor *r4 = tg_arange(4, .dtype = TG_INT64);
    tg_tensor *src2 = tg_reshape(r4, TG_INTS(2, 2));
    tg_release(r4);
    tg_release(tg_copy_(mt, src2)); /* m = src2^T */
    float *mv = tg_tensor_data(m);
    cr_assert(mv[0] == 0 && mv[1] == 2 && mv[2] == 1 && mv[3] == 3);

    const int64_t n = (1 << 20) + 7; /* the threaded memcpy path */
    tg_tensor *big = tg_arange(n, .dtype = TG_FLOAT32), *dst = tg_empty(TG_INTS(n));
    tg_release(tg_copy_(dst, big));
    float *pv = tg_tensor_data(dst);
    for (int64_t i = 0; i < n; i += 4099) cr_assert_eq(pv[i], (float)i);
    cr_assert_eq(pv[n - 1], (float)(n - 1));

    tg_tensor *s01 = tg_slice(big, .start = 0, .end = 10),
              *s12 = tg_slice(big, .start = 1, .end = 11);
    kt_expect_error(
        tg_copy_(s12, s01),
        "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location.");
    kt_release_all(s01, s12);

    kt_release_all(src, u8, s2, i32, d, h, b, row, m, mt, src2, big, dst);
    cr_assert_eq(tg_live_tensors(), live, "leaked %lld", (long long)(tg_live_tensors() - live));
}

Test(pointwise, where_uint8_condition_and_int_division)
{
    int64_t live = tg_live_tensors();
    uint8_t cv[3] = { 1, 0, 2 };
    tg_tensor *c = tg_tensor_from_data(cv, (int64_t[]){ 3 }, 1, TG_UINT8);
    tg_tensor *a = i64((int64_t[]){ 1, 2, 3 }, 3), *b = i64((int64_t[]){ -1, -2, -3 }, 3);
    tg_tensor *w = tg_where(c, a, b);
    cr_assert(w, "%s", tg_last_error());
    int64_t *wv = tg_tensor_data(w);
    cr_assert(wv[0] == 1 && wv[1] == -2 && wv[2] == 3);
    /* INT64_MIN / -1 wraps instead of trapping (PyTorch dies with SIGFPE) */
    tg_tensor *mn = i64((int64_t[]){ INT64_MIN }, 1), *m1 = i64((int64_t[]){ -1 }, 1);
    tg_tensor *q = tg_div_mode(mn, m1, "trunc");
    cr_assert(q && *(int64_t *)tg_tensor_data(q) == INT64_MIN);
    kt_release_all(c, a, b, w, mn, m1, q);
    cr_assert_eq(tg_live_tensors(), live);
}
