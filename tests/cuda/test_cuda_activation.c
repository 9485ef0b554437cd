/* CUDA activation kernels against the CPU kernels (kernels/cuda/activation.cu vs
 * kernels/cpu/activation.c): leaky_relu, hardswish, hardsigmoid, elu (out=, in place) and the
 * backward operators leaky_relu_backward, hardtanh_backward, hardswish_backward,
 * hardsigmoid_backward, elu_backward; hardtanh and relu6 (clamp on the device) and
 * feature_dropout (its draws differ between the devices: checked for structure).
 *
 * Every case builds the same random inputs on the CPU and (copied) on CUDA device 0 over
 * every operator's pieces, with the special values (0, -0, the kinks, NaN, +-inf) written
 * into the first elements, and compares: same dtype, same shape, result on the device,
 * values within the dtype's bound. Layouts: contiguous (33 x 65: the vectorised path with a
 * tail), transposed, and for the backward operators broadcast (4, 1, 7) with (3, 7) and a
 * zero-dim CPU grad_output (a host value).
 *
 * Metric: |cuda - cpu| <= atol + rtol * |cpu|, NaN only against NaN, infinities equal. Both
 * sides run the same scalar functions (pointwise_scalar.h) in the same compute type; nvcc may
 * contract a multiply and an add into one FMA (hardswish_backward, elu's exp polynomial), so
 * float32 rtol 1e-5, atol 1e-6 (elu's exp(x) - 1 near 0 turns an ulp of exp into absolute
 * error), float64 1e-12 (CUDA's exp against glibc's), float16 and bfloat16 1e-2 (one unit in
 * the last place after computing in float). Errors: integer dtypes are refused on both sides
 * with the same message up to the kernel's backend suffix. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("leaky_relu.out", "leaky_relu_backward", "hardtanh_backward", "hardswish.out",
               "hardswish_backward", "hardsigmoid.out", "hardsigmoid_backward", "elu.out",
               "elu_backward");

#ifndef TG_WITH_CUDA
Test(cuda_activation, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

static double ca_rtol(tg_dtype t)
{
    return t == TG_FLOAT64 ? 1e-12 : t == TG_FLOAT32 ? 1e-5 : 1e-2;
}
static double ca_atol(tg_dtype t)
{
    return t == TG_FLOAT64 ? 1e-12 : t == TG_FLOAT32 ? 1e-6 : 1e-2;
}

/* A CPU tensor of `shape` with values in [-7, 7) and the special points first. */
static tg_tensor *ca_input(const int64_t *shape, int64_t ndim, tg_dtype dt, uint64_t seed)
{
    static const double special[] = { 0, -0.0, 1,   -1,       3,         -3,   6,     -0.5,
                                      2, NAN,  -20, INFINITY, -INFINITY, 1e-5, -1e-5, 0.45 };
    int64_t n = 1;
    for (int64_t i = 0; i < ndim; i++) n *= shape[i];
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    kt_fill_random(v, n, seed, -7, 7);
    for (int64_t i = 0; i < n && i < (int64_t)(sizeof special / sizeof special[0]); i++)
        v[i] = special[i];
    tg_tensor *t = kt_tensor(v, shape, ndim, dt);
    free(v);
    return t;
}

typedef tg_tensor *(*ca_un_fn)(tg_tensor *x);
typedef tg_tensor *(*ca_bin_fn)(tg_tensor *g, tg_tensor *x);

static tg_tensor *u_leaky_relu(tg_tensor *x) { return tg_leaky_relu(x, .negative_slope = 0.2); }
static tg_tensor *u_leaky_relu_neg(tg_tensor *x)
{
    return tg_leaky_relu(x, .negative_slope = -0.3);
}
static tg_tensor *u_elu(tg_tensor *x) { return tg_elu(x); }
static tg_tensor *u_elu_params(tg_tensor *x)
{
    return tg_elu(x, .alpha = 2, .scale = 1.5, .input_scale = 0.5);
}
static tg_tensor *u_hardtanh(tg_tensor *x) { return tg_hardtanh(x, .min_val = -0.5, .max_val = 2); }

static tg_tensor *b_leaky_relu(tg_tensor *g, tg_tensor *x)
{
    return tg_leaky_relu_backward(g, x, 0.2, false);
}
static tg_tensor *b_leaky_relu_res(tg_tensor *g, tg_tensor *x)
{
    return tg_leaky_relu_backward(g, x, 0.2, true);
}
static tg_tensor *b_hardtanh(tg_tensor *g, tg_tensor *x)
{
    return tg_hardtanh_backward(g, x, -0.5, 2.0);
}
static tg_tensor *b_elu(tg_tensor *g, tg_tensor *x)
{
    return tg_elu_backward(g, 2.0, 1.5, 0.5, false, x);
}
static tg_tensor *b_elu_res(tg_tensor *g, tg_tensor *x)
{
    return tg_elu_backward(g, 2.0, 1.5, 0.5, true, x);
}

static const struct {
    const char *name;
    ca_un_fn fn;
} un_ops[] = {
    { "leaky_relu", u_leaky_relu },
    { "leaky_relu -0.3", u_leaky_relu_neg },
    { "hardswish", tg_hardswish },
    { "hardsigmoid", tg_hardsigmoid },
    { "elu", u_elu },
    { "elu 2, 1.5, 0.5", u_elu_params },
    { "hardtanh", u_hardtanh },
    { "relu6", tg_relu6 },
};

static const struct {
    const char *name;
    ca_bin_fn fn;
} bin_ops[] = {
    { "leaky_relu_backward", b_leaky_relu },
    { "leaky_relu_backward (result)", b_leaky_relu_res },
    { "hardtanh_backward", b_hardtanh },
    { "hardswish_backward", tg_hardswish_backward },
    { "hardsigmoid_backward", tg_hardsigmoid_backward },
    { "elu_backward", b_elu },
    { "elu_backward (result)", b_elu_res },
};

static const tg_dtype ca_dtypes[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16 };

/* got and want (CUDA, CPU) agree, or both refused with the same text before the kernel name. */
static void ca_compare(tg_tensor *got, tg_tensor *want, tg_dtype dt, const char *what)
{
    if (!want) {
        char cpu_err[512];
        snprintf(cpu_err, sizeof cpu_err, "%s", tg_last_error());
        cr_assert_null(got, "%s: CUDA accepted what the CPU refused (%s)", what, cpu_err);
        const char *e = tg_last_error();
        const char *q = strchr(cpu_err, '"');
        size_t k = q ? (size_t)(q - cpu_err) : strlen(cpu_err);
        cr_assert(e && strncmp(e, cpu_err, k) == 0, "%s: CUDA error \"%s\", CPU error \"%s\"", what,
                  e ? e : "", cpu_err);
        tg_clear_error();
        return;
    }
    cc_assert_close(got, want, ca_rtol(dt), ca_atol(dt), what);
}

Test(cuda_activation, forward_every_dtype_and_layout)
{
    CC_REQUIRE_DEVICE("cuda_activation::forward_every_dtype_and_layout");
    kt_live base = kt_live_now();
    static const int64_t same[2] = { 33, 65 }, tr[2] = { 65, 33 };
    for (size_t d = 0; d < sizeof ca_dtypes / sizeof ca_dtypes[0]; d++)
        for (int strided = 0; strided < 2; strided++) {
            tg_dtype dt = ca_dtypes[d];
            tg_scope_begin();
            tg_tensor *x = ca_input(strided ? tr : same, 2, dt, 3 + d);
            tg_tensor *xd = cc_cuda(x);
            if (strided) {
                x = tg_transpose(x, 0, 1);
                xd = tg_transpose(xd, 0, 1);
            }
            for (size_t i = 0; i < sizeof un_ops / sizeof un_ops[0]; i++) {
                char what[96];
                snprintf(what, sizeof what, "%s %s%s", un_ops[i].name, tg_dtype_name(dt),
                         strided ? " transposed" : "");
                tg_tensor *want = un_ops[i].fn(x);
                ca_compare(un_ops[i].fn(xd), want, dt, what);
            }
            tg_scope_end();
        }
    kt_assert_no_leak(base);
}

Test(cuda_activation, backward_every_dtype_and_layout)
{
    CC_REQUIRE_DEVICE("cuda_activation::backward_every_dtype_and_layout");
    kt_live base = kt_live_now();
    static const int64_t same[2] = { 33, 65 }, tr[2] = { 65, 33 }, bc_g[3] = { 4, 1, 7 },
                         bc_x[2] = { 3, 7 };
    for (size_t d = 0; d < sizeof ca_dtypes / sizeof ca_dtypes[0]; d++)
        for (int layout = 0; layout < 4; layout++) { /* same, transposed, broadcast, host g */
            tg_dtype dt = ca_dtypes[d];
            tg_scope_begin();
            tg_tensor *g, *x;
            if (layout == 2) {
                g = cc_rand(bc_g, 3, dt, 7 + d, -2, 2);
                x = ca_input(bc_x, 2, dt, 9 + d);
            } else if (layout == 3) {
                g = cc_rand(NULL, 0, dt, 7 + d, -2, 2);
                x = ca_input(same, 2, dt, 9 + d);
            } else {
                g = cc_rand(layout ? tr : same, 2, dt, 7 + d, -2, 2);
                x = ca_input(same, 2, dt, 9 + d);
            }
            tg_tensor *gd = layout == 3 ? g : cc_cuda(g), *xd = cc_cuda(x);
            if (layout == 1) {
                g = tg_transpose(g, 0, 1);
                gd = tg_transpose(gd, 0, 1);
                x = tg_transpose(x, 0, 1);
                xd = tg_transpose(xd, 0, 1);
            }
            for (size_t i = 0; i < sizeof bin_ops / sizeof bin_ops[0]; i++) {
                char what[96];
                snprintf(what, sizeof what, "%s %s layout %d", bin_ops[i].name, tg_dtype_name(dt),
                         layout);
                tg_tensor *want = bin_ops[i].fn(g, x);
                ca_compare(bin_ops[i].fn(gd, xd), want, dt, what);
            }
            tg_scope_end();
        }
    kt_assert_no_leak(base);
}

Test(cuda_activation, mixed_dtypes_errors_in_place_and_out)
{
    CC_REQUIRE_DEVICE("cuda_activation::mixed_dtypes_errors_in_place_and_out");
    kt_live base = kt_live_now();
    static const int64_t shape[2] = { 17, 31 };
    tg_scope_begin();
    /* float16 grad, float32 self: promoted to float32 */
    tg_tensor *g = cc_rand(shape, 2, TG_FLOAT16, 1, -2, 2), *x = ca_input(shape, 2, TG_FLOAT32, 2);
    tg_tensor *gd = cc_cuda(g), *xd = cc_cuda(x);
    for (size_t i = 0; i < sizeof bin_ops / sizeof bin_ops[0]; i++)
        ca_compare(bin_ops[i].fn(gd, xd), bin_ops[i].fn(g, x), TG_FLOAT32, bin_ops[i].name);
    /* integer and bool inputs are refused on both */
    tg_tensor *i64 = cc_rand(shape, 2, TG_INT64, 3, -5, 5), *i64d = cc_cuda(i64);
    tg_tensor *bl = cc_rand(shape, 2, TG_BOOL, 4, 0, 2), *bld = cc_cuda(bl);
    for (size_t i = 0; i < sizeof un_ops / sizeof un_ops[0]; i++) {
        if (un_ops[i].fn == u_hardtanh || un_ops[i].fn == tg_relu6) /* clamp: integers are fine */
            continue;
        ca_compare(un_ops[i].fn(i64d), un_ops[i].fn(i64), TG_INT64, un_ops[i].name);
        ca_compare(un_ops[i].fn(bld), un_ops[i].fn(bl), TG_BOOL, un_ops[i].name);
    }
    for (size_t i = 0; i < sizeof bin_ops / sizeof bin_ops[0]; i++)
        ca_compare(bin_ops[i].fn(i64d, i64d), bin_ops[i].fn(i64, i64), TG_INT64, bin_ops[i].name);
    cc_assert_equal(tg_hardtanh(i64d, .min_val = -1.5, .max_val = 2.5),
                    tg_hardtanh(i64, .min_val = -1.5, .max_val = 2.5), "hardtanh int64");
    cr_assert_null(tg_leaky_relu_backward(xd, xd, -0.1, true), "negative slope from the result");
    tg_clear_error();
    /* out= (self's dtype) and in place */
    tg_tensor *o = tg_empty(TG_INTS(17, 31)),
              *od = tg_empty(TG_INTS(17, 31), .device = TG_DEVICE_CUDA(0));
    cc_assert_close(tg_elu_out(xd, od, .alpha = 2), tg_elu_out(x, o, .alpha = 2), 1e-5, 1e-6,
                    "elu.out");
    tg_tensor *o64 = tg_empty(TG_INTS(17, 31), .dtype = TG_FLOAT64, .device = TG_DEVICE_CUDA(0));
    cr_assert_null(tg_hardswish_out(xd, o64), "out= of another dtype");
    cr_assert(strstr(tg_last_error(), "Found dtype Double but expected Float"), "%s",
              tg_last_error());
    tg_clear_error();
    cc_assert_close(tg_leaky_relu_(xd, .negative_slope = 0.1),
                    tg_leaky_relu_(x, .negative_slope = 0.1), 1e-5, 1e-6, "leaky_relu_");
    cc_assert_close(tg_hardsigmoid_(xd), tg_hardsigmoid_(x), 1e-5, 1e-6, "hardsigmoid_");
    cc_assert_close(tg_hardswish_(xd), tg_hardswish_(x), 1e-5, 1e-6, "hardswish_");
    cc_assert_close(tg_elu_(xd), tg_elu_(x), 1e-5, 1e-6, "elu_");
    cc_assert_close(tg_relu6_(xd), tg_relu6_(x), 1e-5, 1e-6, "relu6_");
    tg_scope_end();
    kt_assert_no_leak(base);
}

/* feature_dropout on the device: whole (N, C) channels, zero or input / (1 - p). */
Test(cuda_activation, feature_dropout_on_device)
{
    CC_REQUIRE_DEVICE("cuda_activation::feature_dropout_on_device");
    kt_live base = kt_live_now();
    tg_scope_begin();
    static const int64_t shape[4] = { 16, 32, 3, 3 };
    tg_manual_seed(5);
    tg_tensor *x = cc_rand(shape, 4, TG_FLOAT32, 8, 1, 2), *xd = cc_cuda(x);
    tg_tensor *r = tg_feature_dropout(xd, 0.5, true);
    cr_assert(r && tg_tensor_device(r).type == TG_CUDA, "%s", tg_last_error());
    double *rv = kt_values(r), *xv = kt_values(x);
    int64_t kept = 0;
    for (int64_t ch = 0; ch < 16 * 32; ch++) {
        bool keep = rv[ch * 9] != 0;
        kept += keep;
        for (int k = 0; k < 9; k++) {
            double want = keep ? xv[ch * 9 + k] * 2 : 0;
            cr_assert(fabs(rv[ch * 9 + k] - want) <= 1e-6 * want, "channel %lld: %g, expected %g",
                      (long long)ch, rv[ch * 9 + k], want);
        }
    }
    cr_assert(kept > 256 - 100 && kept < 256 + 100, "kept %lld of 512 channels", (long long)kept);
    free(rv);
    free(xv);
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
