/* The language-model activations (gelu with both approximations, silu, mish, softplus, their
 * backward operators and gelu_double_backward) against PyTorch 1.13
 * (tests/fixtures/activation_lm_fixtures.h, from tests/fixtures/gen_activation_lm.py).
 *
 * Values: 96 inputs (0, -0, +-1, NaN, +-inf, tiny and huge |x|, softplus's thresholds, then
 * random values in [-8, 8]) with PyTorch's scalar definition of each operator, in float64 and
 * float32, through the contiguous fast path, a strided view and the reference loop
 * (tg__pw_force_reference); float16 and bfloat16 must equal the float32 computation rounded
 * once. Gradients: first order of every forward operator (and of the in-place ones on a
 * non-leaf), second order of the backward operators, against torch.autograd.
 *
 * Metric: float64 |got - want| <= 1e-14 |want| (the same formulas over glibc's libm on both
 * sides; 4e-15 absolute where a result cancels to near 0); float32 |got - want| <= 4e-7 +
 * 1e-6 |want| (gelu's float32 forward is vector code whose erf / tanh are within 2 ulp of
 * glibc's erff / tanhf that PyTorch's scalar path calls; |x| * 0.5 * that error stays below
 * 4e-7 for |x| <= 8, and huge |x| saturate the same way); gradients 1e-12 + 1e-10 |want|.
 * Errors are compared with PyTorch's text. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_util.h"
#include "pointwise_loops.h"
#include "../fixtures/activation_lm_fixtures.h"
#include "tg_cover.h"

TG_COVERS("gelu", "gelu_", "gelu.out", "gelu_backward", "gelu_backward.grad_input",
          "gelu_double_backward", "silu", "silu_", "silu.out", "silu_backward",
          "silu_backward.grad_input", "mish", "mish_", "mish.out", "mish_backward", "softplus",
          "softplus.out", "softplus_backward", "softplus_backward.grad_input", "erf", "erf_",
          "erf.out", "log1p", "log1p_", "log1p.out", "expm1", "expm1_", "expm1.out", "log_sigmoid",
          "log_sigmoid_forward", "log_sigmoid_backward", "glu", "glu.out", "glu_backward",
          "logsumexp", "logsumexp.out", "logsumexp_backward");

/* ------------------------------------------------------------------ the operators */

typedef tg_tensor *(*un_fn)(tg_tensor *x);
typedef tg_tensor *(*bin_fn)(tg_tensor *g, tg_tensor *x);

static tg_tensor *f_gelu(tg_tensor *x) { return tg_gelu(x); }
static tg_tensor *f_gelu_tanh(tg_tensor *x) { return tg_gelu(x, .approximate = "tanh"); }
static tg_tensor *f_silu(tg_tensor *x) { return tg_silu(x); }
static tg_tensor *f_mish(tg_tensor *x) { return tg_mish(x); }
static tg_tensor *f_softplus(tg_tensor *x) { return tg_softplus(x); }
static tg_tensor *f_softplus_b2(tg_tensor *x)
{
    return tg_softplus(x, .beta = 2.0, .threshold = 5.0);
}

static tg_tensor *f_erf(tg_tensor *x) { return tg_erf(x); }
static tg_tensor *f_log1p(tg_tensor *x) { return tg_log1p(x); }
static tg_tensor *f_expm1(tg_tensor *x) { return tg_expm1(x); }
static tg_tensor *f_log_sigmoid(tg_tensor *x) { return tg_log_sigmoid(x); }
static tg_tensor *f_log_sigmoid_buffer(tg_tensor *x)
{
    tg_output_buffer r = tg_log_sigmoid_forward(x);
    tg_release(r.output);
    return r.buffer;
}
static tg_tensor *f_log_sigmoid_backward(tg_tensor *g, tg_tensor *x)
{
    tg_tensor *b = f_log_sigmoid_buffer(x);
    tg_tensor *r = b ? tg_log_sigmoid_backward(g, x, b) : NULL;
    tg_release(b);
    return r;
}

static tg_tensor *f_gelu_backward(tg_tensor *g, tg_tensor *x) { return tg_gelu_backward(g, x); }
static tg_tensor *f_gelu_backward_tanh(tg_tensor *g, tg_tensor *x)
{
    return tg_gelu_backward(g, x, .approximate = "tanh");
}
static tg_tensor *f_silu_backward(tg_tensor *g, tg_tensor *x) { return tg_silu_backward(g, x); }
static tg_tensor *f_mish_backward(tg_tensor *g, tg_tensor *x) { return tg_mish_backward(g, x); }
static tg_tensor *f_softplus_backward(tg_tensor *g, tg_tensor *x)
{
    return tg_softplus_backward(g, x, 1.0, 20.0);
}
static tg_tensor *f_softplus_backward_b2(tg_tensor *g, tg_tensor *x)
{
    return tg_softplus_backward(g, x, 2.0, 5.0);
}

typedef struct un_case {
    const char *name;
    un_fn fn;
    const double *f64, *f32;
} un_case;

typedef struct bin_case {
    const char *name;
    bin_fn fn;
    const double *f64, *f32;
} bin_case;

#define UN(n)                                 \
    {                                         \
#n, f_##n, fl_##n##_f64, fl_##n##_f32 \
    }
static const un_case un_cases[] = {
    UN(gelu), UN(gelu_tanh), UN(silu),  UN(mish),        UN(softplus),           UN(softplus_b2),
    UN(erf),  UN(log1p),     UN(expm1), UN(log_sigmoid), UN(log_sigmoid_buffer),
};
static const bin_case bin_cases[] = {
    UN(gelu_backward),     UN(gelu_backward_tanh),   UN(silu_backward),        UN(mish_backward),
    UN(softplus_backward), UN(softplus_backward_b2), UN(log_sigmoid_backward),
};
#undef UN
#define NUN (sizeof un_cases / sizeof un_cases[0])
#define NBIN (sizeof bin_cases / sizeof bin_cases[0])

/* ------------------------------------------------------------------ helpers */

static double rtol_of(tg_dtype t) { return t == TG_FLOAT64 ? 1e-14 : 1e-6; }
static double atol_of(tg_dtype t) { return t == TG_FLOAT64 ? 4e-15 : 4e-7; }

/* The fixture's n values as `dtype`, contiguous, or (strided) every other element of a tensor
 * twice as long. */
static tg_tensor *input(const double *v, int64_t n, tg_dtype dtype, bool strided)
{
    if (!strided) return kt_tensor(v, (int64_t[]){ n }, 1, dtype);
    double *w = calloc((size_t)(2 * n), sizeof(double));
    for (int64_t i = 0; i < n; i++) w[2 * i] = v[i];
    tg_tensor *base = kt_tensor(w, (int64_t[]){ 2 * n }, 1, dtype);
    free(w);
    tg_tensor *r = tg_slice(base, .step = 2);
    tg_release(base);
    cr_assert(r && !tg_tensor_is_contiguous(r), "strided input");
    return r;
}

/* r (released) equals want within the dtype's bound, with dtype `dt`. */
static void check_values(tg_tensor *r, tg_dtype dt, const double *want, int64_t n, const char *what)
{
    cr_assert(r, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(r), dt, "%s: dtype %s", what, tg_dtype_name(tg_tensor_dtype(r)));
    kt_assert_close(r, want, n, rtol_of(dt), atol_of(dt), what);
    tg_release(r);
}

/* Every element of a and b (same dtype and shape) equal bit for bit, NaN to NaN; releases
 * both. */
static void check_same(tg_tensor *a, tg_tensor *b, const char *what)
{
    cr_assert(a && b, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(a), tg_tensor_dtype(b), "%s: dtypes differ", what);
    kt_assert_shape(a, tg_tensor_sizes(b), tg_tensor_dim(b));
    int64_t n = tg_tensor_numel(b);
    double *x = kt_values(a), *y = kt_values(b);
    for (int64_t i = 0; i < n; i++)
        cr_assert((isnan(x[i]) && isnan(y[i])) || (x[i] == y[i] && signbit(x[i]) == signbit(y[i])),
                  "%s[%lld]: %.17g vs %.17g", what, (long long)i, x[i], y[i]);
    free(x);
    free(y);
    tg_release(a);
    tg_release(b);
}

static void expect_error(tg_tensor *r, const char *text, const char *what)
{
    cr_assert_null(r, "%s: accepted", what);
    const char *e = tg_last_error();
    cr_assert(e && strstr(e, text), "%s: error \"%s\", expected \"%s\"", what, e ? e : "", text);
    tg_clear_error();
}

/* ------------------------------------------------------------------ values */

Test(activation_lm, values_match_torch_float64_float32)
{
    kt_live live = kt_live_now();
    static const tg_dtype dts[] = { TG_FLOAT64, TG_FLOAT32 };
    for (int d = 0; d < 2; d++)
        for (int layout = 0; layout < 3; layout++) { /* contiguous, strided, reference loop */
            tg_dtype dt = dts[d];
            tg__pw_force_reference = layout == 2;
            tg_tensor *x = input(fl_x, FL_N, dt, layout == 1);
            tg_tensor *g = input(fl_g, FL_N, dt, layout == 1);
            for (size_t i = 0; i < NUN; i++) {
                char what[96];
                snprintf(what, sizeof what, "%s %s layout %d", un_cases[i].name, tg_dtype_name(dt),
                         layout);
                check_values(un_cases[i].fn(x), dt,
                             dt == TG_FLOAT64 ? un_cases[i].f64 : un_cases[i].f32, FL_N, what);
            }
            for (size_t i = 0; i < NBIN; i++) {
                char what[96];
                snprintf(what, sizeof what, "%s %s layout %d", bin_cases[i].name, tg_dtype_name(dt),
                         layout);
                check_values(bin_cases[i].fn(g, x), dt,
                             dt == TG_FLOAT64 ? bin_cases[i].f64 : bin_cases[i].f32, FL_N, what);
            }
            tg__pw_force_reference = 0;
            tg_release(x);
            tg_release(g);
        }
    kt_assert_no_leak(live);
}

/* float16 and bfloat16 compute in float and round once: op(x) == to(op(to(x, float32)), dt). */
Test(activation_lm, half_and_bfloat16_compute_in_float)
{
    kt_live live = kt_live_now();
    static const tg_dtype dts[] = { TG_FLOAT16, TG_BFLOAT16 };
    for (int d = 0; d < 2; d++) {
        tg_dtype dt = dts[d];
        tg_tensor *x = input(fl_x, FL_N, dt, false), *g = input(fl_g, FL_N, dt, false);
        tg_tensor *x32 = tg_to(x, TG_FLOAT32), *g32 = tg_to(g, TG_FLOAT32);
        for (size_t i = 0; i < NUN; i++) {
            tg_tensor *r32 = un_cases[i].fn(x32);
            check_same(un_cases[i].fn(x), tg_to(r32, dt), un_cases[i].name);
            tg_release(r32);
        }
        for (size_t i = 0; i < NBIN; i++) {
            tg_tensor *r32 = bin_cases[i].fn(g32, x32);
            check_same(bin_cases[i].fn(g, x), tg_to(r32, dt), bin_cases[i].name);
            tg_release(r32);
        }
        tg_release(x);
        tg_release(g);
        tg_release(x32);
        tg_release(g32);
    }
    kt_assert_no_leak(live);
}

/* The fast (contiguous, vectorised, parallel) loops against the reference loop and a strided
 * view, bit for bit, on a length that is not a multiple of any vector width and above the
 * parallel grain size. */
Test(activation_lm, fast_paths_equal_reference_loop)
{
    kt_live live = kt_live_now();
    const int64_t n = 40003;
    double *v = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
    kt_fill_random(v, n, 5, -9, 9);
    kt_fill_random(w, n, 6, -2, 2);
    static const tg_dtype dts[] = { TG_FLOAT64, TG_FLOAT32 };
    for (int d = 0; d < 2; d++) {
        tg_tensor *x = kt_tensor(v, &n, 1, dts[d]), *g = kt_tensor(w, &n, 1, dts[d]);
        tg_tensor *xs = input(v, n, dts[d], true);
        for (size_t i = 0; i < NUN; i++) {
            tg_tensor *fast = un_cases[i].fn(x);
            tg__pw_force_reference = 1;
            tg_tensor *ref = un_cases[i].fn(x);
            tg__pw_force_reference = 0;
            tg_tensor *fast2 = tg_clone(fast);
            check_same(fast, ref, un_cases[i].name);
            check_same(fast2, un_cases[i].fn(xs), un_cases[i].name);
        }
        for (size_t i = 0; i < NBIN; i++) {
            tg_tensor *fast = bin_cases[i].fn(g, x);
            tg__pw_force_reference = 1;
            tg_tensor *ref = bin_cases[i].fn(g, x);
            tg__pw_force_reference = 0;
            check_same(fast, ref, bin_cases[i].name);
        }
        tg_release(x);
        tg_release(xs);
        tg_release(g);
    }
    free(v);
    free(w);
    kt_assert_no_leak(live);
}

/* The backward operators broadcast grad_output and self and promote them to one dtype. */
Test(activation_lm, backward_broadcasts_and_promotes)
{
    kt_live live = kt_live_now();
    tg_tensor *g = kt_tensor(fl_g, (int64_t[]){ 3, 1 }, 2, TG_FLOAT64);
    tg_tensor *x = kt_tensor(fl_x + 32, (int64_t[]){ 1, 4 }, 2, TG_FLOAT32);
    tg_tensor *ge = tg_expand(g, TG_INTS(3, 4)), *xe = tg_expand(x, TG_INTS(3, 4));
    tg_tensor *gc = tg_contiguous(ge), *xe64 = tg_to(xe, TG_FLOAT64);
    tg_tensor *xc = tg_contiguous(xe64);
    tg_release(ge);
    tg_release(xe);
    tg_release(xe64);
    for (size_t i = 0; i < NBIN; i++) {
        tg_tensor *r = bin_cases[i].fn(g, x);
        cr_assert(r, "%s: %s", bin_cases[i].name, tg_last_error());
        kt_assert_shape(r, (int64_t[]){ 3, 4 }, 2);
        check_same(r, bin_cases[i].fn(gc, xc), bin_cases[i].name);
    }
    tg_tensor *bad = tg_ones(TG_INTS(2, 5));
    expect_error(tg_gelu_backward(g, bad), "must match the size of tensor b",
                 "gelu_backward shapes");
    tg_release(bad);
    tg_release(g);
    tg_release(x);
    tg_release(gc);
    tg_release(xc);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ in place and out= */

typedef struct variant_case {
    const char *name;
    un_fn fn;
    tg_tensor *(*in_place)(tg_tensor *self); /* NULL: none */
    tg_tensor *(*out)(tg_tensor *self, tg_tensor *out);
} variant_case;

static tg_tensor *ip_gelu_tanh(tg_tensor *s) { return tg_gelu_(s, .approximate = "tanh"); }
static tg_tensor *out_gelu_tanh(tg_tensor *s, tg_tensor *o)
{
    return tg_gelu_out(s, o, .approximate = "tanh");
}
static tg_tensor *ip_gelu(tg_tensor *s) { return tg_gelu_(s); }
static tg_tensor *out_gelu(tg_tensor *s, tg_tensor *o) { return tg_gelu_out(s, o); }
static tg_tensor *out_softplus_b2(tg_tensor *s, tg_tensor *o)
{
    return tg_softplus_out(s, o, .beta = 2.0, .threshold = 5.0);
}

static const variant_case variant_cases[] = {
    { "gelu", f_gelu, ip_gelu, out_gelu },
    { "gelu_tanh", f_gelu_tanh, ip_gelu_tanh, out_gelu_tanh },
    { "silu", f_silu, tg_silu_, tg_silu_out },
    { "mish", f_mish, tg_mish_, tg_mish_out },
    { "softplus", f_softplus_b2, NULL, out_softplus_b2 },
    { "erf", f_erf, tg_erf_, tg_erf_out },
    { "log1p", f_log1p, tg_log1p_, tg_log1p_out },
    { "expm1", f_expm1, tg_expm1_, tg_expm1_out },
};

Test(activation_lm, in_place_and_out_equal_functional)
{
    kt_live live = kt_live_now();
    for (size_t i = 0; i < sizeof variant_cases / sizeof variant_cases[0]; i++) {
        const variant_case *c = &variant_cases[i];
        for (int strided = 0; strided < 2; strided++) {
            char what[96];
            tg_tensor *x, *r;
            if (c->in_place) {
                snprintf(what, sizeof what, "%s_%s", c->name, strided ? " (strided)" : "");
                x = input(fl_x, FL_N, TG_FLOAT32, strided);
                tg_tensor *want = c->fn(x);
                r = c->in_place(x);
                cr_assert_eq(r, x, "%s returns self: %s", what, tg_last_error());
                tg_release(r);
                check_same(x, want, what);
            }
            snprintf(what, sizeof what, "%s.out%s", c->name, strided ? " (strided)" : "");
            x = input(fl_x, FL_N, TG_FLOAT32, false);
            tg_tensor *o = input(fl_g, FL_N, TG_FLOAT32, strided);
            r = c->out(x, o);
            cr_assert_eq(r, o, "%s returns out: %s", what, tg_last_error());
            tg_release(r);
            check_same(o, c->fn(x), what);
            tg_release(x);
        }
    }
    /* The backward operators' grad_input= forms. */
    tg_tensor *x = input(fl_x, FL_N, TG_FLOAT64, false), *g = input(fl_g, FL_N, TG_FLOAT64, false);
    tg_tensor *o = tg_empty(TG_INTS(FL_N), .dtype = TG_FLOAT64);
    tg_tensor *r = tg_gelu_backward_grad_input(g, x, o, .approximate = "tanh");
    cr_assert_eq(r, o, "gelu_backward.grad_input: %s", tg_last_error());
    tg_release(r);
    check_values(tg_clone(o), TG_FLOAT64, fl_gelu_backward_tanh_f64, FL_N,
                 "gelu_backward.grad_input");
    r = tg_silu_backward_grad_input(g, x, o);
    cr_assert_eq(r, o, "silu_backward.grad_input: %s", tg_last_error());
    tg_release(r);
    check_values(tg_clone(o), TG_FLOAT64, fl_silu_backward_f64, FL_N, "silu_backward.grad_input");
    r = tg_softplus_backward_grad_input(g, x, 2.0, 5.0, o);
    cr_assert_eq(r, o, "softplus_backward.grad_input: %s", tg_last_error());
    tg_release(r);
    check_values(tg_clone(o), TG_FLOAT64, fl_softplus_backward_b2_f64, FL_N,
                 "softplus_backward.grad_input");
    tg_release(o);
    tg_release(x);
    tg_release(g);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ errors */

Test(activation_lm, errors_match_torch)
{
    kt_live live = kt_live_now();
    tg_tensor *i = tg_arange(3), *b = tg_ones(TG_INTS(3), .dtype = TG_BOOL);
    tg_tensor *f = tg_ones(TG_INTS(3));
    expect_error(tg_gelu(i), "\"GeluKernelImpl\" not implemented for 'Long'", "gelu");
    expect_error(tg_gelu_(b), "\"GeluKernelImpl\" not implemented for 'Bool'", "gelu_");
    expect_error(tg_gelu_backward(i, i), "\"GeluBackwardKernelImpl\" not implemented for 'Long'",
                 "gelu_backward");
    expect_error(tg_silu(i), "\"silu_cpu\" not implemented for 'Long'", "silu");
    expect_error(tg_silu_backward(i, i), "\"silu_backward_cpu\" not implemented for 'Long'",
                 "silu_backward");
    expect_error(tg_mish(i), "\"mish_cpu\" not implemented for 'Long'", "mish");
    expect_error(tg_mish_backward(i, i), "\"mish_backward_cpu\" not implemented for 'Long'",
                 "mish_backward");
    expect_error(tg_softplus(i), "\"softplus_cpu\" not implemented for 'Long'", "softplus");
    expect_error(tg_softplus_backward(i, i, 1, 20),
                 "\"softplus_backward_cpu\" not implemented for 'Long'", "softplus_backward");
    /* gelu's approximate string */
    const char *bad = "foo";
    expect_error(tg_gelu(f, .approximate = bad),
                 "approximate argument must be either none or tanh.", "gelu approximate");
    expect_error(tg_gelu_backward(f, f, .approximate = bad),
                 "approximate argument must be either none or tanh.", "gelu_backward approximate");
    expect_error(tg_gelu_double_backward(f, f, f, bad),
                 "approximate argument must be either none or tanh.",
                 "gelu_double_backward approximate");
    /* out= of another dtype (structured unary operators) */
    tg_tensor *o64 = tg_empty(TG_INTS(3), .dtype = TG_FLOAT64);
    expect_error(tg_gelu_out(f, o64), "Found dtype Double but expected Float", "gelu.out");
    expect_error(tg_silu_out(f, o64), "Found dtype Double but expected Float", "silu.out");
    expect_error(tg_mish_out(f, o64), "Found dtype Double but expected Float", "mish.out");
    expect_error(tg_softplus_out(f, o64), "Found dtype Double but expected Float", "softplus.out");
    /* grad_input= that the result type cannot be cast to */
    tg_tensor *oi = tg_empty(TG_INTS(3), .dtype = TG_INT64);
    expect_error(tg_gelu_backward_grad_input(o64, o64, oi),
                 "result type Double can't be cast to the desired output type Long",
                 "gelu_backward.grad_input");
    tg_release(oi);
    tg_release(o64);
    tg_release(i);
    tg_release(b);
    tg_release(f);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ autograd */

#define GRT 1e-10
#define GAT 1e-12

/* d<v, f(x)>/dx at the fixture's x (a (3, 5) float64 leaf). */
static void check_grad(tg_tensor *(*f)(tg_tensor *x), const double *want, const char *what)
{
    tg_scope_begin();
    tg_tensor *x =
        tg_tensor_set_requires_grad(kt_tensor(fl_xa, (int64_t[]){ 3, 5 }, 2, TG_FLOAT64), true);
    tg_tensor *v = kt_tensor(fl_v, (int64_t[]){ 3, 5 }, 2, TG_FLOAT64);
    tg_tensor *y = f(x), *gx = NULL;
    cr_assert(y, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(x), &gx, .grad_outputs = TG_TENSORS(v)), 0,
                 "%s: %s", what, tg_last_error());
    kt_assert_close(gx, want, 15, GRT, GAT, what);
    tg_scope_end(); /* releases everything made inside */
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
    check_grad(f_silu, fl_grad_silu, "silu");
    check_grad(f_mish, fl_grad_mish, "mish");
    check_grad(f_softplus, fl_grad_softplus, "softplus");
    check_grad(f_softplus_b2, fl_grad_softplus_b2, "softplus beta 2 threshold 5");
    check_grad(g_gelu_, fl_grad_gelu_, "gelu_");
    check_grad(g_silu_, fl_grad_silu_, "silu_");
    check_grad(g_mish_, fl_grad_mish_, "mish_");
    check_grad(f_erf, fl_grad_erf, "erf");
    check_grad(g_log1p, fl_grad_log1p, "log1p");
    check_grad(f_expm1, fl_grad_expm1, "expm1");
    check_grad(f_log_sigmoid, fl_grad_log_sigmoid, "log_sigmoid");
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
    check_unary_second(f_erf, fl_gg_erf, "erf");
    check_unary_second(f_log1p, fl_gg_log1p, "log1p");
    check_unary_second(f_expm1, fl_gg_expm1, "expm1");
    /* integer inputs compute in float32 */
    tg_tensor *xi = kt_tensor(fl_xi, (int64_t[]){ 6 }, 1, TG_INT64);
    check_values(tg_erf(xi), TG_FLOAT32, fl_erf_int, 6, "erf int64");
    check_values(tg_log1p(xi), TG_FLOAT32, fl_log1p_int, 6, "log1p int64");
    check_values(tg_expm1(xi), TG_FLOAT32, fl_expm1_int, 6, "expm1 int64");
    tg_release(xi);
    kt_assert_no_leak(live);
}

/* d<w, f(g, x)>/dg and /dx through the backward operators' own derivatives (double backward). */
static void check_second(bin_fn f, const double *want_g, const double *want_x, const char *what)
{
    tg_scope_begin();
    const int64_t n = 15;
    tg_tensor *g = tg_tensor_set_requires_grad(kt_tensor(fl_v, &n, 1, TG_FLOAT64), true);
    tg_tensor *x = tg_tensor_set_requires_grad(kt_tensor(fl_xa, &n, 1, TG_FLOAT64), true);
    tg_tensor *w = kt_tensor(fl_w, &n, 1, TG_FLOAT64);
    tg_tensor *y = f(g, x), *grads[2] = { NULL, NULL };
    cr_assert(y, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(g, x), grads, .grad_outputs = TG_TENSORS(w)), 0,
                 "%s: %s", what, tg_last_error());
    char w2[128];
    snprintf(w2, sizeof w2, "%s: d/d grad_output", what);
    kt_assert_close(grads[0], want_g, n, GRT, GAT, w2);
    snprintf(w2, sizeof w2, "%s: d/d self", what);
    kt_assert_close(grads[1], want_x, n, GRT, GAT, w2);
    tg_scope_end();
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
    check_second(f_silu_backward, fl_gg_silu_backward_g, fl_gg_silu_backward_x, "silu_backward");
    check_second(f_mish_backward, fl_gg_mish_backward_g, fl_gg_mish_backward_x, "mish_backward");
    check_second(f_softplus_backward_b2, fl_gg_softplus_backward_b2_g, fl_gg_softplus_backward_b2_x,
                 "softplus_backward");
    check_second(s_log_sigmoid_backward, fl_gg_log_sigmoid_backward_g, fl_gg_log_sigmoid_backward_x,
                 "log_sigmoid_backward");
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ glu */

/* r (owned by the open scope) equals want within the dtype's bound, with dtype `dt`. */
static void check_close(tg_tensor *r, tg_dtype dt, const double *want, int64_t n, const char *what)
{
    cr_assert(r, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(r), dt, "%s: dtype %s", what, tg_dtype_name(tg_tensor_dtype(r)));
    kt_assert_close(r, want, n, rtol_of(dt), atol_of(dt), what);
}

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
    expect_error(tg_glu(odd, .dim = 1), "Halving dimension must be even, but dimension 1 is size 3",
                 "glu odd");
    expect_error(tg_glu(odd, .dim = 5),
                 "Dimension out of range (expected to be in range of [-2, 1], but got 5)",
                 "glu dim");
    tg_tensor *sc = tg_full(TG_INTS_EMPTY, 1.0);
    expect_error(tg_glu(sc, .dim = 0),
                 "glu does not support scalars because halving size must be even", "glu scalar");
    tg_tensor *li = tg_ones(TG_INTS(2, 4), .dtype = TG_INT64);
    expect_error(tg_glu(li), "\"glu_cpu\" not implemented for 'Long'", "glu int64");
    expect_error(tg_glu_backward(odd, odd, 1),
                 "Halving dimension must be even, but dimension 1 is size 3", "glu_backward odd");
    tg_tensor *o32 = tg_empty(TG_INTS(3, 2, 6));
    expect_error(tg_glu_out(x, o32, .dim = 1), "Found dtype Float but expected Double", "glu.out");
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(activation_lm, log_sigmoid_and_glu_errors)
{
    kt_live live = kt_live_now();
    tg_tensor *i = tg_arange(4);
    expect_error(tg_log_sigmoid(i), "\"log_sigmoid_cpu\" not implemented for 'Long'",
                 "log_sigmoid int64");
    expect_error(tg_log_sigmoid_backward(i, i, i),
                 "\"log_sigmoid_backward_cpu\" not implemented for 'Long'",
                 "log_sigmoid_backward int64");
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
