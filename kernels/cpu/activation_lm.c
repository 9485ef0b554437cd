/* Language-model activation kernels (CPU): gelu, silu, mish, softplus (structured out=
 * kernels, which also serve the functional and in-place entries) and gelu_backward,
 * silu_backward, mish_backward, softplus_backward.
 *
 *   forward:  self (any shape, floating) -> out (self's shape and dtype)
 *             out == NULL: allocated; out == self: in place; else the user's out= (self's dtype)
 *   backward: grad_output, self (broadcast, promoted to one floating dtype) -> grad_input
 *             (NULL: a new tensor; else the user's)
 *
 * The scalar functions are PyTorch 1.13's (kernels/common/activation_lm_scalar.h, shared with
 * kernels/cuda/activation_lm.cu); the checks and iterations are in activation_lm_checks.h.
 * float32 and float64 compute in their own type, float16 and bfloat16 in float. gelu's float32
 * computation is the per-capability vector code of cap/activation_lm_loops.c for every element
 * (a strided or half-precision run is staged through a small float buffer); the iterator
 * splits large tensors across OpenMP threads. */
#include "core/core.h"
#include "pointwise_loops.h"
#include "activation_loops.h"
#include "activation_lm_checks.h"
#include "activation_lm_scalar.h"
#include "activation_lm_loops.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/gelu.h"
#include "kernels/gelu_backward.h"
#include "kernels/log_sigmoid_backward.h"
#include "kernels/log_sigmoid_forward.h"
#include "kernels/mish.h"
#include "kernels/mish_backward.h"
#include "kernels/silu.h"
#include "kernels/silu_backward.h"
#include "kernels/softplus.h"
#include "kernels/softplus_backward.h"

/* A call's dtype, parameters in both compute types (p[] float, q[] double) and flag. */
typedef struct actlm_ctx {
    tg_dtype dtype;
    float p[2];
    double q[2];
    bool flag;
    tg_actlm_map_f32 map;   /* gelu float32: the capability's vector map */
    tg_actlm_map2_f32 map2; /* gelu_backward float32: likewise */
} actlm_ctx;

/* One loop per operator (activation_loops.h). */
#define ACTLM_UNARY_LOOP(fname, E32, E64) TG_ACT_UNARY_LOOP(fname, actlm_ctx, E32, E64)
#define ACTLM_BINARY_LOOP(fname, E32, E64) TG_ACT_BINARY_LOOP(fname, actlm_ctx, E32, E64)

ACTLM_UNARY_LOOP(silu_loop, tg__pw_silu_f32(x), tg__pw_silu_f64(x))
ACTLM_UNARY_LOOP(mish_loop, tg__pw_mish_f32(x), tg__pw_mish_f64(x))
ACTLM_UNARY_LOOP(softplus_loop, tg__pw_softplus_f32(x, p[0], p[1]),
                 tg__pw_softplus_f64(x, q[0], q[1]))

ACTLM_UNARY_LOOP(log_sigmoid_loop, tg__pw_log_sigmoid_f32(x), tg__pw_log_sigmoid_f64(x))
ACTLM_UNARY_LOOP(log_sigmoid_buffer_loop, tg__pw_log_sigmoid_buffer_f32(x),
                 tg__pw_log_sigmoid_buffer_f64(x))

ACTLM_BINARY_LOOP(log_sigmoid_backward_loop, tg__pw_log_sigmoid_backward_f32(g, x),
                  tg__pw_log_sigmoid_backward_f64(g, x))
ACTLM_BINARY_LOOP(silu_backward_loop, tg__pw_silu_backward_f32(g, x),
                  tg__pw_silu_backward_f64(g, x))
ACTLM_BINARY_LOOP(mish_backward_loop, tg__pw_mish_backward_f32(g, x),
                  tg__pw_mish_backward_f64(g, x))
ACTLM_BINARY_LOOP(softplus_backward_loop, tg__pw_softplus_backward_f32(g, x, p[0], p[1]),
                  tg__pw_softplus_backward_f64(g, x, q[0], q[1]))

/* gelu: float32 contiguous runs straight through the vector map; any other float32, float16
 * or bfloat16 run through it in chunks staged in a float buffer; float64 the scalar formula. */
static void gelu_loop(char **data, const int64_t *st, int64_t n, void *vctx)
{
    const actlm_ctx *c = vctx;
    const tg_dtype t = c->dtype;
    if (tg__pw_kind(t) == TG_PW_F64) {
        if (!tg__pw_force_reference && st[0] == 8 && st[1] == 8) {
            double *o = (double *)data[0];
            const double *xs = (const double *)data[1];
            for (int64_t i = 0; i < n; i++) o[i] = tg__pw_gelu_f64(xs[i], c->flag);
            return;
        }
        for (int64_t i = 0; i < n; i++)
            tg__pw_store_f64(data[0] + i * st[0], t,
                             tg__pw_gelu_f64(tg__pw_load_f64(data[1] + i * st[1], t), c->flag));
        return;
    }
    if (!tg__pw_force_reference && t == TG_FLOAT32 && st[0] == 4 && st[1] == 4) {
        c->map((float *)data[0], (const float *)data[1], n);
        return;
    }
    enum { CHUNK = 256 };
    float buf[CHUNK];
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        const int64_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
        for (int64_t i = 0; i < m; i++) buf[i] = tg__pw_load_f32(data[1] + (i0 + i) * st[1], t);
        c->map(buf, buf, m);
        for (int64_t i = 0; i < m; i++) tg__pw_store_f32(data[0] + (i0 + i) * st[0], t, buf[i]);
    }
}

/* gelu_backward: like gelu_loop, float32 contiguous through the vector map (c->map2), other
 * float32, float16 and bfloat16 staged through it in chunks, float64 the scalar formula. */
static void gelu_backward_loop(char **data, const int64_t *st, int64_t n, void *vctx)
{
    const actlm_ctx *c = vctx;
    const tg_dtype t = c->dtype;
    if (tg__pw_kind(t) == TG_PW_F64) {
        for (int64_t i = 0; i < n; i++) {
            const double g = tg__pw_load_f64(data[1] + i * st[1], t);
            const double x = tg__pw_load_f64(data[2] + i * st[2], t);
            tg__pw_store_f64(data[0] + i * st[0], t, tg__pw_gelu_backward_f64(g, x, c->flag));
        }
        return;
    }
    if (!tg__pw_force_reference && t == TG_FLOAT32 && st[0] == 4 && st[1] == 4 && st[2] == 4) {
        c->map2((float *)data[0], (const float *)data[1], (const float *)data[2], n);
        return;
    }
    enum { CHUNK = 256 };
    float gb[CHUNK], xb[CHUNK];
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        const int64_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
        for (int64_t i = 0; i < m; i++) {
            gb[i] = tg__pw_load_f32(data[1] + (i0 + i) * st[1], t);
            xb[i] = tg__pw_load_f32(data[2] + (i0 + i) * st[2], t);
        }
        c->map2(gb, gb, xb, m);
        for (int64_t i = 0; i < m; i++) tg__pw_store_f32(data[0] + (i0 + i) * st[0], t, gb[i]);
    }
}

static tg_tensor *actlm_unary(tg_actlm_op op, tg_tensor *self, tg_tensor *out, tg_iter_loop1d loop,
                              actlm_ctx *c)
{
    tg_iter it;
    if (tg__actlm_unary_iter_build(&it, op, 0, self, out, false) != 0) return NULL;
    c->dtype = it.dtype;
    tg__iter_for_each(&it, loop, c);
    return tg__iter_finish(&it, 0);
}

static tg_tensor *actlm_binary(tg_actlm_op op, tg_tensor *grad_output, tg_tensor *self,
                               tg_tensor *grad_input, tg_iter_loop1d loop, actlm_ctx *c)
{
    tg_iter it;
    if (tg__actlm_binary_iter_build(&it, op, 0, grad_output, self, grad_input, false) != 0)
        return NULL;
    c->dtype = it.dtype;
    tg__iter_for_each(&it, loop, c);
    return tg__iter_finish(&it, 0);
}

static actlm_ctx actlm_params(double v0, double v1, bool flag)
{
    actlm_ctx c = { .p = { (float)v0, (float)v1 }, .q = { v0, v1 }, .flag = flag };
    return c;
}

/* ------------------------------------------------------------------ forward */

tg_tensor *tg__cpu_gelu_out(tg_tensor *self, const char *approximate, tg_tensor *out)
{
    bool tanh_approx;
    if (tg__actlm_gelu_approximate(TG_ACTLM_GELU, approximate, &tanh_approx) != 0) return NULL;
    actlm_ctx c = actlm_params(0, 0, tanh_approx);
    const tg_actlm_loops *loops = TG_CAP_PICK(tg__actlm_loops);
    c.map = tanh_approx ? loops->gelu_tanh_f32 : loops->gelu_none_f32;
    return actlm_unary(TG_ACTLM_GELU, self, out, gelu_loop, &c);
}

tg_tensor *tg__cpu_silu_out(tg_tensor *self, tg_tensor *out)
{
    actlm_ctx c = actlm_params(0, 0, false);
    return actlm_unary(TG_ACTLM_SILU, self, out, silu_loop, &c);
}

tg_tensor *tg__cpu_mish_out(tg_tensor *self, tg_tensor *out)
{
    actlm_ctx c = actlm_params(0, 0, false);
    return actlm_unary(TG_ACTLM_MISH, self, out, mish_loop, &c);
}

tg_tensor *tg__cpu_softplus_out(tg_tensor *self, double beta, double threshold, tg_tensor *out)
{
    actlm_ctx c = actlm_params(beta, threshold, false);
    return actlm_unary(TG_ACTLM_SOFTPLUS, self, out, softplus_loop, &c);
}

/* ------------------------------------------------------------------ backward */

tg_tensor *tg__cpu_gelu_backward_out(tg_tensor *grad_output, tg_tensor *self,
                                     const char *approximate, tg_tensor *grad_input)
{
    bool tanh_approx;
    if (tg__actlm_gelu_approximate(TG_ACTLM_GELU_BACKWARD, approximate, &tanh_approx) != 0)
        return NULL;
    actlm_ctx c = actlm_params(0, 0, tanh_approx);
    const tg_actlm_loops *loops = TG_CAP_PICK(tg__actlm_loops);
    c.map2 = tanh_approx ? loops->gelu_backward_tanh_f32 : loops->gelu_backward_none_f32;
    return actlm_binary(TG_ACTLM_GELU_BACKWARD, grad_output, self, grad_input, gelu_backward_loop,
                        &c);
}

tg_tensor *tg__cpu_silu_backward_out(tg_tensor *grad_output, tg_tensor *self, tg_tensor *grad_input)
{
    actlm_ctx c = actlm_params(0, 0, false);
    return actlm_binary(TG_ACTLM_SILU_BACKWARD, grad_output, self, grad_input, silu_backward_loop,
                        &c);
}

tg_tensor *tg__cpu_mish_backward(tg_tensor *grad_output, tg_tensor *self)
{
    actlm_ctx c = actlm_params(0, 0, false);
    return actlm_binary(TG_ACTLM_MISH_BACKWARD, grad_output, self, NULL, mish_backward_loop, &c);
}

tg_tensor *tg__cpu_softplus_backward_out(tg_tensor *grad_output, tg_tensor *self, double beta,
                                         double threshold, tg_tensor *grad_input)
{
    actlm_ctx c = actlm_params(beta, threshold, false);
    return actlm_binary(TG_ACTLM_SOFTPLUS_BACKWARD, grad_output, self, grad_input,
                        softplus_backward_loop, &c);
}

/* ------------------------------------------------------------------ log_sigmoid */

/* Two passes over self: the output, then the buffer (both self's dtype and shape). */
tg_output_buffer tg__cpu_log_sigmoid_forward(tg_tensor *self)
{
    tg_output_buffer r = { NULL, NULL };
    actlm_ctx c = actlm_params(0, 0, false);
    r.output = actlm_unary(TG_ACTLM_LOG_SIGMOID, self, NULL, log_sigmoid_loop, &c);
    if (!r.output) return r;
    r.buffer = actlm_unary(TG_ACTLM_LOG_SIGMOID, self, NULL, log_sigmoid_buffer_loop, &c);
    if (!r.buffer) {
        tg_release(r.output);
        r.output = NULL;
    }
    return r;
}

/* buffer = exp(-|self|) is recomputed from self (as PyTorch's CUDA kernel does), so only
 * grad_output and self are read. */
tg_tensor *tg__cpu_log_sigmoid_backward(tg_tensor *grad_output, tg_tensor *self, tg_tensor *buffer)
{
    (void)buffer;
    actlm_ctx c = actlm_params(0, 0, false);
    return actlm_binary(TG_ACTLM_LOG_SIGMOID_BACKWARD, grad_output, self, NULL,
                        log_sigmoid_backward_loop, &c);
}
