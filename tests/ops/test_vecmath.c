/* Vector math (kernels/cpu/exp_f32_vec.h and vec_sleef.h through cap/unary_loops.c): float32
 * exp, sigmoid, log, tanh, sin and cos and float64 exp, sigmoid, log, tanh, sin and cos on the
 * tensor path, which takes the capability's vector form (AVX-512, AVX2, or the baseline's SSE2),
 * against a reference of higher precision (double for float32, long double for float64), over
 * special values and a spread of all bit patterns. `make test-capabilities` runs this suite
 * under each capability the CPU supports.
 *
 * Documented bounds (distance in units in the last place of the float result, counted on the
 * ordered bit patterns, so subnormal results are measured in their own ulps):
 *   exp:     <= 1 ulp from the correctly rounded e^x; 0 below -103.972832 (e^x rounds to 0
 *            there), +inf above 88.7228394 (e^x > FLT_MAX); NaN -> NaN.
 *   sigmoid: <= 2 ulp from the correctly rounded 1 / (1 + e^-x) for x >= -88.72 (normal
 *            results); below, e^-x reaches overflow and the result is 0 or subnormal (the
 *            true value is under 2^-126 there). sigmoid(+inf) = 1, sigmoid(-inf) = 0,
 *            NaN -> NaN.
 *   log:     <= 1 ulp from the correctly rounded log x, subnormal x included; log(+-0) = -inf,
 *            log(+inf) = +inf, log(x < 0) and log(-inf) = NaN, NaN -> NaN.
 *   tanh:    <= 1 ulp from the correctly rounded tanh x; +-0 and subnormals unchanged,
 *            tanh(+-inf) = +-1, 1 from |x| ~ 9.01 on (where tanh x rounds to 1), NaN -> NaN.
 *   (log and tanh: measured at <= 1 ulp over every third float32 as well.)
 * Every vector form of these four also equals the scalar reference (pointwise_scalar.h) bit for
 * bit.
 *   sin, cos (SLEEF's u10 functions): <= 1 ulp from the correctly rounded value over the whole
 *            range, the largest arguments included; sin(+-0) = +-0, +-inf and NaN -> NaN.
 * float64 (SLEEF's u10 functions; sigmoid = 1 / (1 + exp(-x)) on SLEEF's exp), against long
 * double:
 *   exp, log, tanh, sin, cos: <= 1 ulp; exp is 0 or subnormal below -708.3964 (checked: < 2.3e-308 below -708.39), +inf above
 *            709.782712893384 (SLEEF's own threshold is a little lower, vec_sleef.h).
 *   sigmoid: <= 2 ulp for x >= -708.39 (normal results).
 * A map's result does not depend on the element's position or strides or on the dtype's path
 * (float16 goes through the same float32 code): checked by test_pointwise's strided and
 * reference-path comparisons and by map_results_do_not_depend_on_position below. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kt_util.h"
#include "pointwise_scalar.h"

static int64_t ulps(float a, float b)
{
    int32_t ia = (int32_t)tg__pw_f32_bits(a), ib = (int32_t)tg__pw_f32_bits(b);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    int64_t d = (int64_t)ia - ib;
    return d < 0 ? -d : d;
}

static double ref_exp(double x) { return exp(x); }
static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_log(double x) { return log(x); }
static double ref_tanh(double x) { return tanh(x); }
static double ref_sin(double x) { return sin(x); }
static double ref_cos(double x) { return cos(x); }

/* The inputs: special values, the thresholds and their neighbours, then every 4099th bit
 * pattern. *n receives the count; the caller frees. */
static float *inputs(int64_t *n)
{
    static const float special[] = {
        0.0f,
        -0.0f,
        INFINITY,
        -INFINITY,
        NAN,
        -NAN,
        1e-45f,
        -1e-45f,
        1e-40f,
        -1e-40f,
        1.1754942e-38f,
        1.0f,
        -1.0f,
        0.5f,
        88.72283935546875f,
        88.7228394f,
        88.72284f,
        -88.72283935546875f,
        -88.7228394f,
        -88.72284f,
        -87.33654475f,
        -103.97283172607422f,
        -103.972824f,
        -103.97284f,
        20.0f,
        -20.0f,
        /* log: the split at sqrt(1/2) and its neighbours, numbers near 1, the largest float */
        0.70710677f,
        0.70710683f,
        0.70710671f,
        1.41421354f,
        0.99999994f,
        1.00000012f,
        3.4028235e38f,
        /* tanh: the switch between polynomial and exp form, and where tanh rounds to 1 */
        0.625f,
        0.62499994f,
        -0.625f,
        9.010913f,
        9.0109138f,
        -9.0109138f,
        44.0f,
        100.0f,
        -100.0f,
        1e-8f,
        -1e-8f,
    };
    int64_t ns = (int64_t)(sizeof special / sizeof special[0]);
    int64_t m = ns + (int64_t)(((1ull << 32) + 4098) / 4099);
    float *x = malloc(sizeof(float) * (size_t)m);
    int64_t k = 0;
    for (int64_t i = 0; i < ns; i++) x[k++] = special[i];
    for (uint64_t u = 0; u < (1ull << 32); u += 4099) x[k++] = tg__pw_f32_from_bits((uint32_t)u);
    *n = k;
    return x;
}

typedef tg_tensor *(*op_fn)(tg_tensor *);

static void check(const char *name, op_fn op, float (*scalar)(float), double (*ref)(double),
                  int64_t bound, float zero_below)
{
    int64_t live = tg_live_tensors(), n;
    float *xv = inputs(&n);
    tg_tensor *x = tg_tensor_from_data(xv, (int64_t[]){ n }, 1, TG_FLOAT32), *y = op(x);
    cr_assert(y, "%s: %s", name, tg_last_error());
    const float *yv = tg_tensor_data(y);
    int64_t worst = 0;
    float at = 0;
    for (int64_t i = 0; i < n; i++) {
        float xi = xv[i], got = yv[i];
        if (isnan(xi)) {
            cr_assert(isnan(got), "%s(NaN) = %a", name, got);
            continue;
        }
        if (scalar) {
            float want = scalar(xi);
            cr_assert_eq(tg__pw_f32_bits(got), tg__pw_f32_bits(want),
                         "%s(%a): vector %a, scalar reference %a", name, xi, got, want);
        }
        double r = ref(xi);
        if (isnan(r)) { /* log of a negative number, sin of an infinity */
            cr_assert(isnan(got), "%s(%a) = %a, want NaN", name, xi, got);
            continue;
        }
        if (xi < zero_below) {
            cr_assert(got >= 0.0f && got < 1.2e-38f, "%s(%a) = %a, want 0 or subnormal", name, xi,
                      got);
            continue;
        }
        int64_t d = ulps(got, (float)r);
        if (d > worst) {
            worst = d;
            at = xi;
        }
    }
    cr_expect_leq(worst, bound, "%s (capability %s): %lld ulp at x = %a", name, tg_cpu_capability(),
                  (long long)worst, at);
    kt_release_all(y, x);
    free(xv);
    cr_assert_eq(tg_live_tensors(), live);
}

Test(vecmath, exp_f32_special_values_and_ulp_bound)
{
    check("exp", tg_exp, tg__pw_exp_f32, ref_exp, 1, -103.97283172607422f);
    float v[4] = { INFINITY, -INFINITY, 89.0f, -104.0f };
    tg_tensor *x = tg_tensor_from_data(v, (int64_t[]){ 4 }, 1, TG_FLOAT32), *y = tg_exp(x);
    const float *yv = tg_tensor_data(y);
    cr_expect(isinf(yv[0]) && yv[1] == 0 && isinf(yv[2]) && yv[3] == 0);
    kt_release_all(y, x);
}

Test(vecmath, sigmoid_f32_special_values_and_ulp_bound)
{
    check("sigmoid", tg_sigmoid, tg__pw_sigmoid_f32, ref_sigmoid, 2, -88.72f);
    float v[3] = { INFINITY, -INFINITY, 0.0f };
    tg_tensor *x = tg_tensor_from_data(v, (int64_t[]){ 3 }, 1, TG_FLOAT32), *y = tg_sigmoid(x);
    const float *yv = tg_tensor_data(y);
    cr_expect(yv[0] == 1.0f && yv[1] == 0.0f && yv[2] == 0.5f);
    kt_release_all(y, x);
}

Test(vecmath, log_f32_special_values_and_ulp_bound)
{
    check("log", tg_log, tg__pw_log_f32, ref_log, 1, -INFINITY);
    float v[7] = { 0.0f, -0.0f, INFINITY, -INFINITY, -1.0f, 1.0f, 1e-45f };
    tg_tensor *x = tg_tensor_from_data(v, (int64_t[]){ 7 }, 1, TG_FLOAT32), *y = tg_log(x);
    const float *yv = tg_tensor_data(y);
    cr_expect(isinf(yv[0]) && yv[0] < 0 && isinf(yv[1]) && yv[1] < 0);
    cr_expect(isinf(yv[2]) && yv[2] > 0 && isnan(yv[3]) && isnan(yv[4]) && yv[5] == 0.0f);
    cr_expect(yv[6] == (float)log((double)1e-45f), "log(denorm_min) = %a", yv[6]);
    kt_release_all(y, x);
}

Test(vecmath, tanh_f32_special_values_and_ulp_bound)
{
    check("tanh", tg_tanh, tg__pw_tanh_f32, ref_tanh, 1, -INFINITY);
    float v[8] = { INFINITY, -INFINITY, 0.0f, -0.0f, 10.0f, -10.0f, 1e-40f, -1e-45f };
    tg_tensor *x = tg_tensor_from_data(v, (int64_t[]){ 8 }, 1, TG_FLOAT32), *y = tg_tanh(x);
    const float *yv = tg_tensor_data(y);
    cr_expect(yv[0] == 1.0f && yv[1] == -1.0f && yv[4] == 1.0f && yv[5] == -1.0f);
    cr_expect(tg__pw_f32_bits(yv[2]) == 0 && tg__pw_f32_bits(yv[3]) == 0x80000000u);
    cr_expect(yv[6] == 1e-40f && yv[7] == -1e-45f);
    kt_release_all(y, x);
}

/* SLEEF's (vec_sleef.h): no scalar reference to equal bit for bit. */
Test(vecmath, sin_f32_special_values_and_ulp_bound)
{
    check("sin", tg_sin, NULL, ref_sin, 1, -INFINITY);
    float v[5] = { 0.0f, -0.0f, INFINITY, -INFINITY, 3.4028235e38f };
    tg_tensor *x = tg_tensor_from_data(v, (int64_t[]){ 5 }, 1, TG_FLOAT32), *y = tg_sin(x);
    const float *yv = tg_tensor_data(y);
    cr_expect(tg__pw_f32_bits(yv[0]) == 0 && tg__pw_f32_bits(yv[1]) == 0x80000000u);
    cr_expect(isnan(yv[2]) && isnan(yv[3]));
    cr_expect(yv[4] == (float)sin((double)v[4]), "sin(FLT_MAX) = %a", yv[4]);
    kt_release_all(y, x);
}

Test(vecmath, cos_f32_special_values_and_ulp_bound)
{
    check("cos", tg_cos, NULL, ref_cos, 1, -INFINITY);
}

/* ------------------------------------------------------------------ float64 */

static int64_t ulps64(double a, double b)
{
    int64_t ia, ib;
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    if (ia < 0) ia = INT64_MIN - ia;
    if (ib < 0) ib = INT64_MIN - ib;
    uint64_t d = ia > ib ? (uint64_t)ia - (uint64_t)ib : (uint64_t)ib - (uint64_t)ia;
    return d > INT64_MAX ? INT64_MAX : (int64_t)d;
}

static long double ref64_exp(long double x) { return expl(x); }
static long double ref64_log(long double x) { return logl(x); }
static long double ref64_tanh(long double x) { return tanhl(x); }
static long double ref64_sin(long double x) { return sinl(x); }
static long double ref64_cos(long double x) { return cosl(x); }
static long double ref64_sigmoid(long double x) { return 1.0L / (1.0L + expl(-x)); }

/* Special values, thresholds, a grid over [-800, 800] and 2^18 bit patterns spread over all
 * doubles (a multiplicative hash of the index). */
static double *inputs64(int64_t *n)
{
    static const double special[] = {
        0.0,
        -0.0,
        INFINITY,
        -INFINITY,
        NAN,
        4.9406564584124654e-324,
        -4.9406564584124654e-324,
        2.2250738585072014e-308,
        1.0,
        -1.0,
        0.5,
        709.782712893384,
        709.7827128933841,
        -708.3964185322641,
        -708.4,
        -745.1332191019411,
        -745.1332191019412,
        -746.0,
        0.70710678118654757,
        1.4142135623730951,
        0.9999999999999999,
        1.0000000000000002,
        1.7976931348623157e308,
        -1.7976931348623157e308,
        0.625,
        19.06154746539849,
        1e-300,
        1e22,
        3.141592653589793,
        1.5707963267948966,
        1e-8,
    };
    const int64_t ns = (int64_t)(sizeof special / sizeof special[0]), grid = 160001;
    const int64_t hashed = 1 << 18;
    double *x = malloc(sizeof(double) * (size_t)(ns + grid + hashed));
    int64_t k = 0;
    for (int64_t i = 0; i < ns; i++) x[k++] = special[i];
    for (int64_t i = 0; i < grid; i++) x[k++] = -800.0 + i * 0.01;
    for (uint64_t i = 0; i < (uint64_t)hashed; i++) {
        uint64_t u = i * 0x9E3779B97F4A7C15ull;
        memcpy(&x[k++], &u, 8);
    }
    *n = k;
    return x;
}

static void check64(const char *name, op_fn op, long double (*ref)(long double), int64_t bound,
                    double normal_from)
{
    int64_t live = tg_live_tensors(), n;
    double *xv = inputs64(&n);
    tg_tensor *x = tg_tensor_from_data(xv, (int64_t[]){ n }, 1, TG_FLOAT64), *y = op(x);
    cr_assert(y, "%s: %s", name, tg_last_error());
    const double *yv = tg_tensor_data(y);
    int64_t worst = 0;
    double at = 0;
    for (int64_t i = 0; i < n; i++) {
        double xi = xv[i], got = yv[i];
        long double r = ref(xi);
        if (isnan(xi) || isnan(r)) {
            cr_assert(isnan(got), "%s(%a) = %a, want NaN", name, xi, got);
            continue;
        }
        if (xi < normal_from) {
            cr_assert(got >= 0.0 && got < 2.3e-308, "%s(%a) = %a, want 0 or subnormal", name, xi,
                      got);
            continue;
        }
        int64_t d = ulps64(got, (double)r);
        if (d > worst) {
            worst = d;
            at = xi;
        }
    }
    cr_expect_leq(worst, bound, "%s float64 (capability %s): %lld ulp at x = %a", name,
                  tg_cpu_capability(), (long long)worst, at);
    kt_release_all(y, x);
    free(xv);
    cr_assert_eq(tg_live_tensors(), live);
}

Test(vecmath, exp_f64_special_values_and_ulp_bound)
{
    check64("exp", tg_exp, ref64_exp, 1, -708.39);
}
Test(vecmath, log_f64_special_values_and_ulp_bound)
{
    check64("log", tg_log, ref64_log, 1, -INFINITY);
}
Test(vecmath, tanh_f64_special_values_and_ulp_bound)
{
    check64("tanh", tg_tanh, ref64_tanh, 1, -INFINITY);
}
Test(vecmath, sin_f64_special_values_and_ulp_bound)
{
    check64("sin", tg_sin, ref64_sin, 1, -INFINITY);
}
Test(vecmath, cos_f64_special_values_and_ulp_bound)
{
    check64("cos", tg_cos, ref64_cos, 1, -INFINITY);
}
Test(vecmath, sigmoid_f64_special_values_and_ulp_bound)
{
    check64("sigmoid", tg_sigmoid, ref64_sigmoid, 2, -708.39);
}

/* An element's result is the same at any position of a contiguous run (in the whole vectors or
 * in the padded tail), through strides, and from float16 (computed in float32 by the same
 * code): for every length up to three vectors of the widest capability. */
Test(vecmath, map_results_do_not_depend_on_position)
{
    int64_t live = tg_live_tensors();
    enum { N = 48 };
    float v[N];
    for (int i = 0; i < N; i++) v[i] = -20.0f + 0.87f * (float)i;
    tg_tensor *all = tg_tensor_from_data(v, (int64_t[]){ N }, 1, TG_FLOAT32), *ref = tg_sin(all);
    const float *rv = tg_tensor_data(ref);
    for (int64_t len = 1; len <= N; len++) {
        for (int64_t start = 0; start + len <= N; start += 7) {
            tg_tensor *part = tg_slice(all, .start = start, .end = (start + len));
            tg_tensor *y = tg_sin(part);
            const float *yv = tg_tensor_data(y);
            for (int64_t i = 0; i < len; i++)
                cr_assert_eq(tg__pw_f32_bits(yv[i]), tg__pw_f32_bits(rv[start + i]),
                             "sin at %lld of a run of %lld from %lld", (long long)i, (long long)len,
                             (long long)start);
            kt_release_all(y, part);
        }
    }
    tg_tensor *strided = tg_slice(all, .start = 1, .step = 3), *ys = tg_sin(strided);
    const float *ysv = tg_tensor_data(ys);
    for (int64_t i = 0; i < tg_tensor_numel(ys); i++)
        cr_assert_eq(tg__pw_f32_bits(ysv[i]), tg__pw_f32_bits(rv[1 + 3 * i]), "strided sin at %lld",
                     (long long)i);
    kt_release_all(ys, strided, ref, all);
    cr_assert_eq(tg_live_tensors(), live);
}
