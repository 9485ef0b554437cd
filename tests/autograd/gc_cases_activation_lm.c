/* Gradcheck cases of the language-model activations (gradcheck.h; run by
 * tests/autograd/test_gradcheck.c and, on CUDA against the CPU, tests/cuda/
 * test_cuda_grad_table.c): gelu (both approximations), silu, mish, softplus, their in-place
 * forms and their backward operators with double backward. The functions are smooth; inputs
 * are GC_REAL values in [-1, 1) scaled by 4 so that the tails are reached (and softplus's
 * threshold is put between the values). */
#include "gradcheck.h"

/* op(4 x), the scaled input released here. */
static int scaled(tg_tensor *const *x, tg_tensor **y, tg_tensor *(*op)(tg_tensor *))
{
    tg_tensor *s = tg_mul_scalar(x[0], 4.0);
    y[0] = s ? op(s) : NULL;
    tg_release(s);
    return y[0] ? 1 : -1;
}

/* op_ applied in place to 4 x (a fresh non-leaf). */
static int scaled_in_place(tg_tensor *const *x, tg_tensor **y, tg_tensor *(*op_)(tg_tensor *))
{
    tg_tensor *s = tg_mul_scalar(x[0], 4.0);
    y[0] = s ? op_(s) : NULL;
    tg_release(s);
    return y[0] ? 1 : -1;
}

/* backward(g, 4 x) */
static int scaled_backward(tg_tensor *const *x, tg_tensor **y,
                           tg_tensor *(*bw)(tg_tensor *g, tg_tensor *s))
{
    tg_tensor *s = tg_mul_scalar(x[1], 4.0);
    y[0] = s ? bw(x[0], s) : NULL;
    tg_release(s);
    return y[0] ? 1 : -1;
}

static tg_tensor *gelu_none(tg_tensor *s) { return tg_gelu(s); }
static tg_tensor *gelu_tanh(tg_tensor *s) { return tg_gelu(s, .approximate = "tanh"); }
static tg_tensor *gelu_tanh_(tg_tensor *s) { return tg_gelu_(s, .approximate = "tanh"); }
static tg_tensor *softplus_b2(tg_tensor *s)
{
    return tg_softplus(s, .beta = 2.0, .threshold = 3.1); /* 4 x * 2 > 3.1: x > 0.3875 */
}
static tg_tensor *gelu_bw(tg_tensor *g, tg_tensor *s) { return tg_gelu_backward(g, s); }
static tg_tensor *gelu_bw_tanh(tg_tensor *g, tg_tensor *s)
{
    return tg_gelu_backward(g, s, .approximate = "tanh");
}
static tg_tensor *softplus_bw(tg_tensor *g, tg_tensor *s)
{
    return tg_softplus_backward(g, s, 2.0, 3.1);
}

GC_FN(f_gelu) { return scaled(x, y, gelu_none); }
GC_FN(f_gelu_tanh) { return scaled(x, y, gelu_tanh); }
GC_FN(f_gelu_) { return scaled_in_place(x, y, gelu_tanh_); }
GC_FN(f_gelu_backward) { return scaled_backward(x, y, gelu_bw); }
GC_FN(f_gelu_backward_tanh) { return scaled_backward(x, y, gelu_bw_tanh); }
GC_FN(f_silu) { return scaled(x, y, tg_silu); }
GC_FN(f_silu_) { return scaled_in_place(x, y, tg_silu_); }
GC_FN(f_silu_backward) { return scaled_backward(x, y, tg_silu_backward); }
GC_FN(f_mish) { return scaled(x, y, tg_mish); }
GC_FN(f_mish_) { return scaled_in_place(x, y, tg_mish_); }
GC_FN(f_mish_backward) { return scaled_backward(x, y, tg_mish_backward); }
GC_FN(f_softplus) { return scaled(x, y, softplus_b2); }
GC_FN(f_softplus_backward) { return scaled_backward(x, y, softplus_bw); }
GC_FN(f_erf) { return scaled(x, y, tg_erf); }
GC_FN(f_erf_) { return scaled_in_place(x, y, tg_erf_); }
GC_FN(f_expm1) { return scaled(x, y, tg_expm1); }
GC_FN(f_expm1_) { return scaled_in_place(x, y, tg_expm1_); }
/* log1p(x), x in [-1, 1) kept above -1 by 0.75 x */
static int shrunk(tg_tensor *const *x, tg_tensor **y, tg_tensor *(*op)(tg_tensor *))
{
    tg_tensor *s = tg_mul_scalar(x[0], 0.75);
    y[0] = s ? op(s) : NULL;
    tg_release(s);
    return y[0] ? 1 : -1;
}
GC_FN(f_log1p) { return shrunk(x, y, tg_log1p); }
GC_FN(f_log1p_) { return shrunk(x, y, tg_log1p_); }
GC_FN(f_log_sigmoid) { return scaled(x, y, tg_log_sigmoid); }
GC_FN(f_log_sigmoid_forward)
{
    tg_output_buffer r = tg_log_sigmoid_forward(x[0]);
    tg_release(r.buffer);
    y[0] = r.output;
    return 1;
}
GC_FN(f_log_sigmoid_backward)
{
    tg_output_buffer r = tg_log_sigmoid_forward(x[1]);
    tg_release(r.output);
    y[0] = r.buffer ? tg_log_sigmoid_backward(x[0], x[1], r.buffer) : NULL;
    tg_release(r.buffer);
    return y[0] ? 1 : -1;
}
GC_FN(f_glu) { return gc_y1(y, tg_glu(x[0], .dim = 1)); }
GC_FN(f_glu_last) { return gc_y1(y, tg_glu(x[0])); }
GC_FN(f_glu_backward) { return gc_y1(y, tg_glu_backward(x[0], x[1], 0)); }
GC_FN(f_logsumexp) { return gc_y1(y, tg_logsumexp(x[0], TG_INTS(1))); }
GC_FN(f_logsumexp_keep) { return gc_y1(y, tg_logsumexp(x[0], TG_INTS(0, 2), .keepdim = true)); }
GC_FN(f_gelu_double_backward)
{
    return gc_y1(y, tg_gelu_double_backward(x[0], x[1], x[2], "tanh"));
}

static const gc_case activation_lm_cases[] = {
    GC_CASE("gelu", "4 x", f_gelu, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("gelu", "tanh, 4 x transposed", f_gelu_tanh, { REAL_T(3, 4) }, .gradgrad = true),
    GC_CASE("gelu_", "tanh, on 4 x", f_gelu_, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("gelu_backward", "self 4 x", f_gelu_backward, { REAL(3, 4), REAL(3, 4) },
            .gradgrad = true),
    GC_CASE("gelu_backward", "tanh, broadcast", f_gelu_backward_tanh, { REAL(3, 1), REAL(3, 4) },
            .gradgrad = true),
    GC_CASE("gelu_double_backward", "tanh", f_gelu_double_backward,
            { REAL(3, 4), REAL(3, 4), REAL(3, 4) }),
    GC_CASE("silu", "4 x", f_silu, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("silu_", "on 4 x", f_silu_, { REAL(3, 4) }),
    GC_CASE("silu_backward", "self 4 x", f_silu_backward, { REAL(3, 4), REAL(3, 4) },
            .gradgrad = true),
    GC_CASE("mish", "4 x, strided", f_mish, { REAL_S(3, 4) }, .gradgrad = true),
    GC_CASE("mish_", "on 4 x", f_mish_, { REAL(3, 4) }),
    GC_CASE("mish_backward", "self 4 x", f_mish_backward, { REAL(3, 4), REAL(3, 4) },
            .gradgrad = true),
    GC_CASE("softplus", "beta 2, threshold 3.1", f_softplus, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("softplus_backward", "beta 2, threshold 3.1", f_softplus_backward,
            { REAL(3, 4), REAL(3, 4) }, .gradgrad = true),
    GC_CASE("erf", "4 x", f_erf, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("erf_", "on 4 x", f_erf_, { REAL(3, 4) }),
    GC_CASE("log1p", "0.75 x, transposed", f_log1p, { REAL_T(3, 4) }, .gradgrad = true),
    GC_CASE("log1p_", "on 0.75 x", f_log1p_, { REAL(3, 4) }),
    GC_CASE("expm1", "4 x", f_expm1, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("expm1_", "on 4 x", f_expm1_, { REAL(3, 4) }),
    GC_CASE("log_sigmoid", "4 x", f_log_sigmoid, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("log_sigmoid_forward", "output", f_log_sigmoid_forward, { REAL(3, 4) },
            .gradgrad = true),
    GC_CASE("log_sigmoid_backward", "buffer from the forward", f_log_sigmoid_backward,
            { REAL(3, 4), REAL(3, 4) }, .gradgrad = true),
    GC_CASE("glu", "dim 1", f_glu, { REAL(3, 4, 2) }, .gradgrad = true),
    GC_CASE("glu", "last dim, transposed", f_glu_last, { REAL_T(3, 4) }, .gradgrad = true),
    GC_CASE("glu_backward", "dim 0", f_glu_backward, { REAL(2, 3), REAL(4, 3) }, .gradgrad = true),
    GC_CASE("logsumexp", "dim 1", f_logsumexp, { REAL(3, 4, 2) }, .gradgrad = true),
    GC_CASE("logsumexp", "dims (0, 2) keepdim, transposed", f_logsumexp_keep, { REAL_T(3, 4, 2) },
            .gradgrad = true),
};
GC_REGISTER(activation_lm_cases);
