/* Unary pointwise kernels: neg, abs, relu (keep the dtype) and exp, log, sqrt, rsqrt, sin, cos,
 * tanh, sigmoid (integer and bool inputs compute in the default float dtype, like PyTorch).
 *
 *   self (any shape) -> out (same shape)
 *   out == NULL: allocated; out == self: in place; else the user's out= (dtype checked by the
 *   iterator: "result type Float can't be cast to the desired output type Long").
 *
 * As in binary.c: the scalar functions are in pointwise_scalar.h, unary_ref_loop applies one
 * to any dtype and strides; the typed fast paths calling the same functions are built once
 * per CPU capability (cap/unary_loops.c, picked through cpu_cap.h). An operator whose
 * capability has an array map instead (SLEEF's vector code: float32 sin and cos, float64
 * exp, log, tanh, sin, cos, sigmoid) computes every element through it (unary_map_loop).
 * float16/bfloat16 compute in float (PyTorch 1.13 has no CPU half kernels for most of these;
 * we provide them). */
#include "core/core.h"
#include "pointwise_loops.h"
#include "pointwise_checks.h"
#include "pointwise_scalar.h"
#include "activation_lm_scalar.h" /* erf, log1p, expm1 */
#include "unary_loops.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/abs.h"
#include "kernels/cos.h"
#include "kernels/erf.h"
#include "kernels/exp.h"
#include "kernels/expm1.h"
#include "kernels/log.h"
#include "kernels/log1p.h"
#include "kernels/neg.h"
#include "kernels/relu.h"
#include "kernels/rsqrt.h"
#include "kernels/sigmoid.h"
#include "kernels/sin.h"
#include "kernels/sqrt.h"
#include "kernels/tanh.h"

typedef int64_t (*pw1_i64_fn)(int64_t x);

typedef struct unary_op {
    const char *name;
    float (*f32)(float x);
    double (*f64)(double x);
    pw1_i64_fn i64; /* NULL: integer inputs are promoted to float first */
    tg_unary_id id; /* its fast loops in tg_unary_loops */
} unary_op;

typedef struct unary_ctx {
    const unary_op *op;
    tg_dtype dtype;
    tg_map_f32 map_f32; /* the capability's array maps for op, or NULL */
    tg_map_f64 map_f64;
} unary_ctx;

/* Any dtype, any strides: data[0] = out, data[1] = x, both of ctx->dtype. */
static void unary_ref_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const unary_ctx *c = vctx;
    const unary_op *op = c->op;
    const tg_dtype t = c->dtype;
    char *o = data[0];
    const char *x = data[1];
    switch (tg__pw_kind(t)) {
    case TG_PW_F32:
        for (int64_t i = 0; i < n; i++, o += strides[0], x += strides[1])
            tg__pw_store_f32(o, t, op->f32(tg__pw_load_f32(x, t)));
        break;
    case TG_PW_F64:
        for (int64_t i = 0; i < n; i++, o += strides[0], x += strides[1])
            tg__pw_store_f64(o, t, op->f64(tg__pw_load_f64(x, t)));
        break;
    case TG_PW_I64:
        for (int64_t i = 0; i < n; i++, o += strides[0], x += strides[1])
            tg__pw_store_i64(o, t, op->i64(tg__pw_load_i64(x, t)));
        break;
    }
}

/* Operands in the float kind (float32, float16, bfloat16) or float64 through the array map:
 * contiguous float32 / float64 ones directly, the others a chunk at a time through a buffer
 * (loaded and converted, mapped, converted and stored). data[0] = out, data[1] = x, both of
 * ctx->dtype. */
#define MAP_CHUNKED(T, load, store, map)                                                  \
    do {                                                                                  \
        if (t == (sizeof(T) == 4 ? TG_FLOAT32 : TG_FLOAT64) && strides[0] == sizeof(T) && \
            strides[1] == sizeof(T)) {                                                    \
            map((T *)data[0], (const T *)data[1], n);                                     \
            return;                                                                       \
        }                                                                                 \
        T buf[256];                                                                       \
        for (int64_t i0 = 0; i0 < n; i0 += 256) {                                         \
            int64_t m = n - i0 < 256 ? n - i0 : 256;                                      \
            const char *x = data[1] + i0 * strides[1];                                    \
            for (int64_t i = 0; i < m; i++) buf[i] = load(x + i * strides[1], t);         \
            map(buf, buf, m);                                                             \
            char *o = data[0] + i0 * strides[0];                                          \
            for (int64_t i = 0; i < m; i++) store(o + i * strides[0], t, buf[i]);         \
        }                                                                                 \
    } while (0)

static void unary_map_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const unary_ctx *c = vctx;
    const tg_dtype t = c->dtype;
    if (tg__pw_kind(t) == TG_PW_F32)
        MAP_CHUNKED(float, tg__pw_load_f32, tg__pw_store_f32, c->map_f32);
    else MAP_CHUNKED(double, tg__pw_load_f64, tg__pw_store_f64, c->map_f64);
}

/* neg, abs and relu refuse bool inputs (tg__pw_check_unary_bool, shared with CUDA). */
static const unary_op op_neg = { "neg", tg__pw_neg_f32, tg__pw_neg_f64, tg__pw_neg_i64, TG_UN_NEG };
static const unary_op op_abs = { "abs", tg__pw_abs_f32, tg__pw_abs_f64, tg__pw_abs_i64, TG_UN_ABS };
static const unary_op op_relu = { "relu", tg__pw_relu_f32, tg__pw_relu_f64, tg__pw_relu_i64,
                                  TG_UN_RELU };
static const unary_op op_exp = { "exp", tg__pw_exp_f32, tg__pw_exp_f64, NULL, TG_UN_EXP };
static const unary_op op_log = { "log", tg__pw_log_f32, tg__pw_log_f64, NULL, TG_UN_LOG };
static const unary_op op_sqrt = { "sqrt", tg__pw_sqrt_f32, tg__pw_sqrt_f64, NULL, TG_UN_SQRT };
static const unary_op op_rsqrt = { "rsqrt", tg__pw_rsqrt_f32, tg__pw_rsqrt_f64, NULL, TG_UN_RSQRT };
static const unary_op op_sin = { "sin", tg__pw_sin_f32, tg__pw_sin_f64, NULL, TG_UN_SIN };
static const unary_op op_cos = { "cos", tg__pw_cos_f32, tg__pw_cos_f64, NULL, TG_UN_COS };
static const unary_op op_tanh = { "tanh", tg__pw_tanh_f32, tg__pw_tanh_f64, NULL, TG_UN_TANH };
static const unary_op op_sigmoid = { "sigmoid", tg__pw_sigmoid_f32, tg__pw_sigmoid_f64, NULL,
                                     TG_UN_SIGMOID };
static const unary_op op_erf = { "erf", tg__pw_erf_f32, tg__pw_erf_f64, NULL, TG_UN_ERF };
static const unary_op op_log1p = { "log1p", tg__pw_log1p_f32, tg__pw_log1p_f64, NULL, TG_UN_LOG1P };
static const unary_op op_expm1 = { "expm1", tg__pw_expm1_f32, tg__pw_expm1_f64, NULL, TG_UN_EXPM1 };

static tg_tensor *unary_run(const unary_op *op, tg_tensor *self, tg_tensor *out)
{
    if (tg__pw_check_unary_bool(op->name, self->dtype, "cpu") != 0) return NULL;
    tg_iter it;
    tg_tensor *ins[1] = { self };
    if (tg__pw_iter_build(&it, op->name, op->i64 ? 0 : TG_ITER_INT_TO_FLOAT, out, self, ins, 1) !=
        0)
        return NULL;
    const tg_unary_loops *fast = TG_CAP_PICK(tg__unary_loops);
    unary_ctx ctx = { .op = op,
                      .dtype = it.dtype,
                      .map_f32 = fast->map_f32[op->id],
                      .map_f64 = fast->map_f64[op->id] };
    tg_iter_loop1d loop = unary_ref_loop;
    bool one_dtype = it.dtypes[0] == it.dtype && it.dtypes[1] == it.dtype;
    tg_pw_kind kind = tg__pw_kind(it.dtype);
    if ((kind == TG_PW_F32 && ctx.map_f32) || (kind == TG_PW_F64 && ctx.map_f64))
        loop = unary_map_loop;
    else if (!tg__pw_force_reference && one_dtype) {
        if (it.dtype == TG_FLOAT32) loop = fast->f32[op->id];
        else if (it.dtype == TG_FLOAT64) loop = fast->f64[op->id];
    }
    tg__iter_for_each(&it, loop, &ctx);
    return tg__iter_finish(&it, 0);
}

/* neg.out ... relu.out: out = f(self). */
tg_tensor *tg__cpu_neg_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_neg, self, out);
}
tg_tensor *tg__cpu_abs_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_abs, self, out);
}
tg_tensor *tg__cpu_relu_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_relu, self, out);
}
tg_tensor *tg__cpu_exp_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_exp, self, out);
}
tg_tensor *tg__cpu_log_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_log, self, out);
}
tg_tensor *tg__cpu_sqrt_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_sqrt, self, out);
}
tg_tensor *tg__cpu_rsqrt_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_rsqrt, self, out);
}
tg_tensor *tg__cpu_sin_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_sin, self, out);
}
tg_tensor *tg__cpu_cos_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_cos, self, out);
}
tg_tensor *tg__cpu_tanh_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_tanh, self, out);
}
tg_tensor *tg__cpu_sigmoid_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_sigmoid, self, out);
}
tg_tensor *tg__cpu_erf_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_erf, self, out);
}
tg_tensor *tg__cpu_log1p_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_log1p, self, out);
}
tg_tensor *tg__cpu_expm1_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run(&op_expm1, self, out);
}
