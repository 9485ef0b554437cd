/* CUDA language-model activation kernels against the CPU kernels (kernels/cuda/
 * activation_lm.cu vs kernels/cpu/activation_lm.c): gelu (both approximations), silu, mish,
 * softplus (functional, out=, in place) and gelu_backward, silu_backward, mish_backward,
 * softplus_backward (also into grad_input=).
 *
 * Every case builds the same random inputs on the CPU and (copied) on CUDA device 0 over
 * [-9, 9), with the special values (0, -0, +-1, NaN, +-inf, huge |x|, softplus's threshold)
 * written into the first elements, and compares: same dtype, same shape, result on the
 * device, values within the dtype's bound. Layouts: contiguous (33 x 65), transposed, and for
 * the backward operators broadcast (4, 1, 7) with (3, 7) and a zero-dim CPU grad_output.
 *
 * Metric: |cuda - cpu| <= atol + rtol * |cpu|, NaN only against NaN, infinities equal. Both
 * sides run the same formulas (activation_lm_scalar.h) in the same compute type, over each
 * side's libm (the CPU's float32 gelu over its own vector erf / tanh, within 2 ulp): float32
 * rtol 1e-5, atol 1e-6, float64 1e-12, float16 and bfloat16 1e-2 (one unit in the last place
 * after computing in float). Integer dtypes are refused on both sides with the same message
 * up to the kernel's name. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("gelu.out", "gelu_backward.grad_input", "silu.out", "silu_backward.grad_input",
               "mish.out", "mish_backward", "softplus.out", "softplus_backward.grad_input",
               "erf.out", "log1p.out", "expm1.out", "log_sigmoid_forward", "log_sigmoid_backward");

#ifndef TG_WITH_CUDA
Test(cuda_activation_lm, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

static double cl_rtol(tg_dtype t)
{
    return t == TG_FLOAT64 ? 1e-12 : t == TG_FLOAT32 ? 1e-5 : 1e-2;
}
static double cl_atol(tg_dtype t)
{
    return t == TG_FLOAT64 ? 1e-12 : t == TG_FLOAT32 ? 1e-6 : 1e-2;
}

static tg_tensor *cl_input(const int64_t *shape, int64_t ndim, tg_dtype dt, uint64_t seed)
{
    static const double special[] = { 0,  -0.0, 1,        -1,        NAN,  20,    20.5, -20,
                                      88, -88,  INFINITY, -INFINITY, 1e-5, -1e-5, 2.5,  800 };
    int64_t n = 1;
    for (int64_t i = 0; i < ndim; i++) n *= shape[i];
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    kt_fill_random(v, n, seed, -9, 9);
    for (int64_t i = 0; i < n && i < (int64_t)(sizeof special / sizeof special[0]); i++)
        v[i] = special[i];
    tg_tensor *t = kt_tensor(v, shape, ndim, dt);
    free(v);
    return t;
}

typedef tg_tensor *(*cl_un_fn)(tg_tensor *x);
typedef tg_tensor *(*cl_bin_fn)(tg_tensor *g, tg_tensor *x);

static tg_tensor *u_gelu(tg_tensor *x) { return tg_gelu(x); }
static tg_tensor *u_gelu_tanh(tg_tensor *x) { return tg_gelu(x, .approximate = "tanh"); }
static tg_tensor *u_softplus(tg_tensor *x) { return tg_softplus(x); }
static tg_tensor *u_softplus_b2(tg_tensor *x) { return tg_softplus(x, .beta = 2, .threshold = 5); }
/* Called inside the tests' scopes, which own both results. */
static tg_tensor *u_log_sigmoid_buffer(tg_tensor *x) { return tg_log_sigmoid_forward(x).buffer; }
static tg_tensor *b_log_sigmoid(tg_tensor *g, tg_tensor *x)
{
    return tg_log_sigmoid_backward(g, x, x); /* the buffer is not read */
}
static tg_tensor *b_gelu(tg_tensor *g, tg_tensor *x) { return tg_gelu_backward(g, x); }
static tg_tensor *b_gelu_tanh(tg_tensor *g, tg_tensor *x)
{
    return tg_gelu_backward(g, x, .approximate = "tanh");
}
static tg_tensor *b_softplus(tg_tensor *g, tg_tensor *x)
{
    return tg_softplus_backward(g, x, 2.0, 5.0);
}

static const struct {
    const char *name;
    cl_un_fn fn;
} un_ops[] = {
    { "gelu", u_gelu },
    { "gelu tanh", u_gelu_tanh },
    { "silu", tg_silu },
    { "mish", tg_mish },
    { "softplus", u_softplus },
    { "softplus 2, 5", u_softplus_b2 },
    { "log_sigmoid", tg_log_sigmoid },
    { "log_sigmoid buffer", u_log_sigmoid_buffer },
    { "erf", tg_erf },
    { "log1p", tg_log1p },
    { "expm1", tg_expm1 },
};

static const struct {
    const char *name;
    cl_bin_fn fn;
} bin_ops[] = {
    { "gelu_backward", b_gelu },           { "gelu_backward tanh", b_gelu_tanh },
    { "silu_backward", tg_silu_backward }, { "mish_backward", tg_mish_backward },
    { "softplus_backward", b_softplus },   { "log_sigmoid_backward", b_log_sigmoid },
};

static const tg_dtype cl_dtypes[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16 };

/* got and want (CUDA, CPU) agree, or both refused with the same text before the kernel name. */
static void cl_compare(tg_tensor *got, tg_tensor *want, tg_dtype dt, const char *what)
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
    cc_assert_close(got, want, cl_rtol(dt), cl_atol(dt), what);
}

Test(cuda_activation_lm, forward_every_dtype_and_layout)
{
    CC_REQUIRE_DEVICE("cuda_activation_lm::forward_every_dtype_and_layout");
    kt_live base = kt_live_now();
    static const int64_t same[2] = { 33, 65 }, tr[2] = { 65, 33 };
    for (size_t d = 0; d < sizeof cl_dtypes / sizeof cl_dtypes[0]; d++)
        for (int strided = 0; strided < 2; strided++) {
            tg_dtype dt = cl_dtypes[d];
            tg_scope_begin();
            tg_tensor *x = cl_input(strided ? tr : same, 2, dt, 3 + d);
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
                cl_compare(un_ops[i].fn(xd), want, dt, what);
            }
            tg_scope_end();
        }
    kt_assert_no_leak(base);
}

Test(cuda_activation_lm, backward_every_dtype_and_layout)
{
    CC_REQUIRE_DEVICE("cuda_activation_lm::backward_every_dtype_and_layout");
    kt_live base = kt_live_now();
    static const int64_t same[2] = { 33, 65 }, tr[2] = { 65, 33 }, bc_g[3] = { 4, 1, 7 },
                         bc_x[2] = { 3, 7 };
    for (size_t d = 0; d < sizeof cl_dtypes / sizeof cl_dtypes[0]; d++)
        for (int layout = 0; layout < 4; layout++) { /* same, transposed, broadcast, host g */
            tg_dtype dt = cl_dtypes[d];
            tg_scope_begin();
            tg_tensor *g, *x;
            if (layout == 2) {
                g = cc_rand(bc_g, 3, dt, 7 + d, -2, 2);
                x = cl_input(bc_x, 2, dt, 9 + d);
            } else if (layout == 3) {
                g = cc_rand(NULL, 0, dt, 7 + d, -2, 2);
                x = cl_input(same, 2, dt, 9 + d);
            } else {
                g = cc_rand(layout ? tr : same, 2, dt, 7 + d, -2, 2);
                x = cl_input(same, 2, dt, 9 + d);
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
                cl_compare(bin_ops[i].fn(gd, xd), want, dt, what);
            }
            tg_scope_end();
        }
    kt_assert_no_leak(base);
}

Test(cuda_activation_lm, errors_in_place_and_out)
{
    CC_REQUIRE_DEVICE("cuda_activation_lm::errors_in_place_and_out");
    kt_live base = kt_live_now();
    static const int64_t shape[2] = { 17, 31 };
    tg_scope_begin();
    tg_tensor *x = cl_input(shape, 2, TG_FLOAT32, 2), *xd = cc_cuda(x);
    tg_tensor *g = cc_rand(shape, 2, TG_FLOAT32, 1, -2, 2), *gd = cc_cuda(g);
    /* integer inputs are refused on both */
    tg_tensor *i64 = cc_rand(shape, 2, TG_INT64, 3, -5, 5), *i64d = cc_cuda(i64);
    for (size_t i = 0; i < sizeof un_ops / sizeof un_ops[0] - 3; i++)
        cl_compare(un_ops[i].fn(i64d), un_ops[i].fn(i64), TG_INT64, un_ops[i].name);
    /* erf, log1p, expm1 compute integers in float32 */
    cc_assert_close(tg_erf(i64d), tg_erf(i64), 1e-5, 1e-6, "erf int64");
    cc_assert_close(tg_log1p(i64d), tg_log1p(i64), 1e-5, 1e-6, "log1p int64");
    cc_assert_close(tg_expm1(i64d), tg_expm1(i64), 1e-5, 1e-6, "expm1 int64");
    for (size_t i = 0; i < sizeof bin_ops / sizeof bin_ops[0]; i++)
        cl_compare(bin_ops[i].fn(i64d, i64d), bin_ops[i].fn(i64, i64), TG_INT64, bin_ops[i].name);
    const char *bad = "erf";
    cr_assert_null(tg_gelu(xd, .approximate = bad), "gelu approximate");
    cr_assert(strstr(tg_last_error(), "approximate argument must be either none or tanh."), "%s",
              tg_last_error());
    tg_clear_error();
    /* out=, grad_input= and in place */
    tg_tensor *o = tg_empty(TG_INTS(17, 31)),
              *od = tg_empty(TG_INTS(17, 31), .device = TG_DEVICE_CUDA(0));
    cc_assert_close(tg_gelu_out(xd, od, .approximate = "tanh"),
                    tg_gelu_out(x, o, .approximate = "tanh"), 1e-5, 1e-6, "gelu.out");
    cc_assert_close(tg_silu_out(xd, od), tg_silu_out(x, o), 1e-5, 1e-6, "silu.out");
    cc_assert_close(tg_mish_out(xd, od), tg_mish_out(x, o), 1e-5, 1e-6, "mish.out");
    cc_assert_close(tg_softplus_out(xd, od), tg_softplus_out(x, o), 1e-5, 1e-6, "softplus.out");
    cc_assert_close(tg_gelu_backward_grad_input(gd, xd, od), tg_gelu_backward_grad_input(g, x, o),
                    1e-5, 1e-6, "gelu_backward.grad_input");
    cc_assert_close(tg_silu_backward_grad_input(gd, xd, od), tg_silu_backward_grad_input(g, x, o),
                    1e-5, 1e-6, "silu_backward.grad_input");
    cc_assert_close(tg_softplus_backward_grad_input(gd, xd, 1, 20, od),
                    tg_softplus_backward_grad_input(g, x, 1, 20, o), 1e-5, 1e-6,
                    "softplus_backward.grad_input");
    tg_tensor *o64 = tg_empty(TG_INTS(17, 31), .dtype = TG_FLOAT64, .device = TG_DEVICE_CUDA(0));
    cr_assert_null(tg_gelu_out(xd, o64), "out= of another dtype");
    cr_assert(strstr(tg_last_error(), "Found dtype Double but expected Float"), "%s",
              tg_last_error());
    tg_clear_error();
    cc_assert_close(tg_gelu_(tg_clone(xd)), tg_gelu_(tg_clone(x)), 1e-5, 1e-6, "gelu_");
    cc_assert_close(tg_silu_(tg_clone(xd)), tg_silu_(tg_clone(x)), 1e-5, 1e-6, "silu_");
    cc_assert_close(tg_mish_(tg_clone(xd)), tg_mish_(tg_clone(x)), 1e-5, 1e-6, "mish_");
    /* glu (a composite of slices, sigmoid and mul) on the device */
    static const int64_t gshape[3] = { 3, 4, 6 };
    tg_tensor *xg = cl_input(gshape, 3, TG_FLOAT32, 5), *xgd = cc_cuda(xg);
    cc_assert_close(tg_glu(xgd, .dim = 1), tg_glu(xg, .dim = 1), 1e-5, 1e-6, "glu");
    tg_tensor *gg = cc_rand((int64_t[]){ 3, 4, 3 }, 3, TG_FLOAT32, 6, -1, 1), *ggd = cc_cuda(gg);
    cc_assert_close(tg_glu_backward(ggd, xgd, 2), tg_glu_backward(gg, xg, 2), 1e-5, 1e-6,
                    "glu_backward");
    /* logsumexp (a composite of amax, exp, sum, log) on the device */
    cc_assert_close(tg_logsumexp(xgd, TG_INTS(1)), tg_logsumexp(xg, TG_INTS(1)), 1e-5, 1e-6,
                    "logsumexp");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
