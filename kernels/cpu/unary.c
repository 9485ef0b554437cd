/* Unary pointwise kernels: neg, abs, relu (keep the dtype) and exp, log, sqrt, rsqrt, sin, cos,
 * tanh, sigmoid (integer and bool inputs compute in the default float dtype, like PyTorch).
 *
 *   self (any shape) -> out (same shape)
 *   out == NULL: allocated; out == self: in place; else the user's out= (dtype checked by the
 *   iterator: "result type Float can't be cast to the desired output type Long").
 *
 * As in binary.c: the scalar functions are in pointwise_scalar.h, unary_ref_loop applies one
 * to any dtype and strides, unary_loop_f32/f64 are the typed fast paths calling the same
 * function (float32 exp and sigmoid use the vectorisable tg__pw_exp_f32). float16/bfloat16
 * compute in float through the reference loop (PyTorch 1.13 has no CPU half kernels for most
 * of these; we provide them). */
#include "core/core.h"
#include "pointwise_loops.h"
#include "pointwise_checks.h"
#include "pointwise_scalar.h"
#include "exp_f32_vec.h"
#include "tg_kernels.h"

typedef float (*pw1_f32_fn)(float x);
typedef double (*pw1_f64_fn)(double x);
typedef int64_t (*pw1_i64_fn)(int64_t x);

typedef struct unary_op {
    const char *name;
    pw1_f32_fn f32;
    pw1_f64_fn f64;
    pw1_i64_fn i64; /* NULL: integer inputs are promoted to float first */
    tg_iter_loop1d fast_f32, fast_f64;
} unary_op;

typedef struct unary_ctx {
    const unary_op *op;
    tg_dtype dtype;
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

/* Fast paths: one dtype; f is a constant once inlined into the one-line loops below. */
static inline __attribute__((always_inline)) void
unary_loop_f32(char **data, const int64_t *strides, int64_t n, pw1_f32_fn f)
{
    float *out = (float *)data[0];
    const float *x = (const float *)data[1];
    if (strides[0] == 4 && strides[1] == 4) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(x[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            *(float *)(data[0] + i * strides[0]) = f(*(const float *)(data[1] + i * strides[1]));
    }
}

static inline __attribute__((always_inline)) void
unary_loop_f64(char **data, const int64_t *strides, int64_t n, pw1_f64_fn f)
{
    double *out = (double *)data[0];
    const double *x = (const double *)data[1];
    if (strides[0] == 8 && strides[1] == 8) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(x[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            *(double *)(data[0] + i * strides[0]) = f(*(const double *)(data[1] + i * strides[1]));
    }
}

static void neg_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_neg_f32);
}
static void neg_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_neg_f64);
}
static void abs_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_abs_f32);
}
static void abs_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_abs_f64);
}
static void relu_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_relu_f32);
}
static void relu_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_relu_f64);
}
static void exp_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    int64_t done = 0;
    if (s[0] == 4 && s[1] == 4) done = tg__exp_f32_vec((float *)d[0], (const float *)d[1], n);
    char *rest[2] = { d[0] + done * 4, d[1] + done * 4 };
    unary_loop_f32(rest, s, n - done, tg__pw_exp_f32);
}
static void exp_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_exp_f64);
}
static void log_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_log_f32);
}
static void log_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_log_f64);
}
static void sqrt_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_sqrt_f32);
}
static void sqrt_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_sqrt_f64);
}
static void rsqrt_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_rsqrt_f32);
}
static void rsqrt_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_rsqrt_f64);
}
static void sin_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_sin_f32);
}
static void sin_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_sin_f64);
}
static void cos_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_cos_f32);
}
static void cos_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_cos_f64);
}
static void tanh_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_tanh_f32);
}
static void tanh_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_tanh_f64);
}
static void sigmoid_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_sigmoid_f32);
}
static void sigmoid_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_sigmoid_f64);
}

/* neg, abs and relu refuse bool inputs (tg__pw_check_unary_bool, shared with CUDA). */
static const unary_op op_neg = { "neg",          tg__pw_neg_f32, tg__pw_neg_f64,
                                 tg__pw_neg_i64, neg_f32,        neg_f64 };
static const unary_op op_abs = { "abs",          tg__pw_abs_f32, tg__pw_abs_f64,
                                 tg__pw_abs_i64, abs_f32,        abs_f64 };
static const unary_op op_relu = { "relu",          tg__pw_relu_f32, tg__pw_relu_f64,
                                  tg__pw_relu_i64, relu_f32,        relu_f64 };
static const unary_op op_exp = { "exp", tg__pw_exp_f32, tg__pw_exp_f64, NULL, exp_f32, exp_f64 };
static const unary_op op_log = { "log", tg__pw_log_f32, tg__pw_log_f64, NULL, log_f32, log_f64 };
static const unary_op op_sqrt = {
    "sqrt", tg__pw_sqrt_f32, tg__pw_sqrt_f64, NULL, sqrt_f32, sqrt_f64
};
static const unary_op op_rsqrt = { "rsqrt", tg__pw_rsqrt_f32, tg__pw_rsqrt_f64,
                                   NULL,    rsqrt_f32,        rsqrt_f64 };
static const unary_op op_sin = { "sin", tg__pw_sin_f32, tg__pw_sin_f64, NULL, sin_f32, sin_f64 };
static const unary_op op_cos = { "cos", tg__pw_cos_f32, tg__pw_cos_f64, NULL, cos_f32, cos_f64 };
static const unary_op op_tanh = {
    "tanh", tg__pw_tanh_f32, tg__pw_tanh_f64, NULL, tanh_f32, tanh_f64
};
static const unary_op op_sigmoid = { "sigmoid", tg__pw_sigmoid_f32, tg__pw_sigmoid_f64,
                                     NULL,      sigmoid_f32,        sigmoid_f64 };

static tg_tensor *unary_run(const unary_op *op, tg_tensor *self, tg_tensor *out)
{
    if (tg__pw_check_unary_bool(op->name, self->dtype, "cpu") != 0) return NULL;
    tg_iter it;
    tg_tensor *ins[1] = { self };
    if (tg__pw_iter_build(&it, op->name, op->i64 ? 0 : TG_ITER_INT_TO_FLOAT, out, self, ins, 1) !=
        0)
        return NULL;
    unary_ctx ctx = { .op = op, .dtype = it.dtype };
    tg_iter_loop1d loop = unary_ref_loop;
    bool one_dtype = it.dtypes[0] == it.dtype && it.dtypes[1] == it.dtype;
    if (!tg__pw_force_reference && one_dtype) {
        if (it.dtype == TG_FLOAT32) loop = op->fast_f32;
        else if (it.dtype == TG_FLOAT64) loop = op->fast_f64;
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
