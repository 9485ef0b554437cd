/* Binary pointwise kernels: add, sub (with alpha), mul, div (true, trunc, floor), pow,
 * maximum, minimum. Every kernel is `out = f(self, other)` with broadcasting and PyTorch's
 * type promotion, done by the iterator:
 *
 *   self (any shape), other (broadcastable) -> out (broadcast shape, promoted dtype)
 *   out == NULL: allocated; out == self: in place (out may not grow); else the user's out=.
 *
 * Structure (llm.c habit): the scalar function of each operator lives in pointwise_scalar.h;
 * binary_ref_loop applies it to any dtype and any strides through per-element loads and
 * stores (the reference path); the fast paths (cap/binary_loops.c, built once per CPU
 * capability) apply the same function to one dtype with the contiguous and scalar-broadcast
 * cases as tight vectorisable loops.
 * Both call the same scalar function, so they agree bit for bit; tests check it by running
 * with tg__pw_force_reference set. */
#include "core/core.h"
#include "pointwise_loops.h"
#include "pointwise_checks.h"
#include "pointwise_scalar.h"
#include "binary_loops.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/add.h"
#include "kernels/div.h"
#include "kernels/maximum.h"
#include "kernels/minimum.h"
#include "kernels/mul.h"
#include "kernels/pow.h"
#include "kernels/sub.h"

int tg__pw_force_reference = 0;

struct binary_op {
    const char *name;
    pw2_f32_fn f32;
    pw2_f64_fn f64;
    pw2_i64_fn i64; /* NULL: the operator never computes in an integer dtype */
    bool int_div;   /* integer b == 0 is PyTorch's "ZeroDivisionError" */
    int id;         /* its fast loops in tg_binary_loops; -1: reference path only */
};

/* ------------------------------------------------------------------ reference path */

/* Any dtype, any strides: data[0] = out, data[1] = a, data[2] = b, all of ctx->dtype. */
static void binary_ref_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    binary_ctx *c = vctx;
    const binary_op *op = c->op;
    const tg_dtype t = c->dtype;
    char *o = data[0];
    const char *a = data[1], *b = data[2];
    switch (tg__pw_kind(t)) {
    case TG_PW_F32:
        for (int64_t i = 0; i < n; i++, o += strides[0], a += strides[1], b += strides[2])
            tg__pw_store_f32(o, t,
                             op->f32(tg__pw_load_f32(a, t), tg__pw_load_f32(b, t), c->alpha_f32));
        break;
    case TG_PW_F64:
        for (int64_t i = 0; i < n; i++, o += strides[0], a += strides[1], b += strides[2])
            tg__pw_store_f64(o, t,
                             op->f64(tg__pw_load_f64(a, t), tg__pw_load_f64(b, t), c->alpha_f64));
        break;
    case TG_PW_I64:
        for (int64_t i = 0; i < n; i++, o += strides[0], a += strides[1], b += strides[2]) {
            int64_t x = tg__pw_load_i64(a, t), y = tg__pw_load_i64(b, t);
            if (op->int_div && y == 0) {
                __atomic_store_n(&c->zero_div, 1, __ATOMIC_RELAXED);
                return;
            }
            tg__pw_store_i64(o, t, op->i64(x, y, c->alpha_i64));
        }
        break;
    }
}

/* ------------------------------------------------------------------ the operators */
static const binary_op op_add = { "add",          tg__pw_add_f32, tg__pw_add_f64,
                                  tg__pw_add_i64, false,          TG_BIN_ADD };
static const binary_op op_sub = { "sub",          tg__pw_sub_f32, tg__pw_sub_f64,
                                  tg__pw_sub_i64, false,          TG_BIN_SUB };
static const binary_op op_mul = { "mul",          tg__pw_mul_f32, tg__pw_mul_f64,
                                  tg__pw_mul_i64, false,          TG_BIN_MUL };
static const binary_op op_div = { "div", tg__pw_div_f32, tg__pw_div_f64, NULL, false, TG_BIN_DIV };
static const binary_op op_div_trunc = {
    "div", tg__pw_div_trunc_f32, tg__pw_div_trunc_f64, tg__pw_div_trunc_i64, true, TG_BIN_DIV_TRUNC
};
/* Python's floor division branches per element: no vectorised loop to gain. */
static const binary_op op_div_floor = {
    "div", tg__pw_div_floor_f32, tg__pw_div_floor_f64, tg__pw_div_floor_i64, true, -1
};
static const binary_op op_pow = { "pow",          tg__pw_pow_f32, tg__pw_pow_f64,
                                  tg__pw_pow_i64, false,          TG_BIN_POW };
static const binary_op op_maximum = {
    "maximum", tg__pw_maximum_f32, tg__pw_maximum_f64, tg__pw_maximum_i64, false, TG_BIN_MAXIMUM
};
static const binary_op op_minimum = {
    "minimum", tg__pw_minimum_f32, tg__pw_minimum_f64, tg__pw_minimum_i64, false, TG_BIN_MINIMUM
};

/* The loop for this operator and computation dtype: a fast one when there is one and every
 * operand holds the computation dtype, else the reference loop. */
static tg_iter_loop1d binary_pick_loop(const binary_op *op, const tg_iter *it)
{
    if (tg__pw_force_reference) return binary_ref_loop;
    for (int k = 0; k < it->nops; k++)
        if (it->dtypes[k] != it->dtype) return binary_ref_loop;
    if (op->id < 0) return binary_ref_loop;
    const tg_binary_loops *loops = TG_CAP_PICK(tg__binary_loops);
    tg_iter_loop1d fast = NULL;
    switch (it->dtype) {
    case TG_FLOAT32: fast = loops->f32[op->id]; break;
    case TG_FLOAT64: fast = loops->f64[op->id]; break;
    case TG_INT64: fast = loops->i64[op->id]; break;
    default: break;
    }
    return fast ? fast : binary_ref_loop;
}

/* Checks that need the computation dtype, after the iterator chose it. */
typedef int (*binary_dtype_check)(const char *op, tg_dtype t, double alpha);

/* The shared checks (pointwise_checks.h), in this signature. */
static int check_alpha(const char *op, tg_dtype t, double alpha)
{
    return tg__pw_check_alpha(op, t, alpha);
}
static int check_not_bool_div_trunc(const char *op, tg_dtype t, double alpha)
{
    return tg__pw_check_not_bool(op, t, "div_trunc", "cpu");
}
static int check_not_bool_div_floor(const char *op, tg_dtype t, double alpha)
{
    return tg__pw_check_not_bool(op, t, "div_floor", "cpu");
}
static int check_not_bool_pow(const char *op, tg_dtype t, double alpha)
{
    return tg__pw_check_not_bool(op, t, "pow", NULL);
}

/* Runs one binary operator: builds the iteration (broadcast, promotion, out= checks), checks
 * the dtype, runs the loop over every element (in parallel above the grain size) and returns
 * the result as a new reference. */
static tg_tensor *binary_run(const binary_op *op, int flags, binary_dtype_check check,
                             tg_tensor *self, tg_tensor *other, double alpha, tg_tensor *out)
{
    tg_iter it;
    tg_tensor *ins[2] = { self, other };
    if (tg__pw_iter_build(&it, op->name, flags, out, self, ins, 2) != 0) return NULL;
    if (check && check(op->name, it.dtype, alpha) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    binary_ctx ctx = {
        .op = op,
        .dtype = it.dtype,
        .alpha_f32 = (float)alpha,
        .alpha_f64 = alpha,
        .alpha_i64 = tg__pw_is_integral_scalar(alpha) ? (int64_t)alpha : 0,
        .zero_div = 0,
    };
    tg__iter_for_each(&it, binary_pick_loop(op, &it), &ctx);
    if (ctx.zero_div) {
        tg__iter_abort(&it);
        return tg__error(op->name, "ZeroDivisionError");
    }
    return tg__iter_finish(&it, 0);
}

/* ------------------------------------------------------------------ kernels */

/* add.out: out = self + alpha * other. */
tg_tensor *tg__cpu_add_out(tg_tensor *self, tg_tensor *other, double alpha, tg_tensor *out)
{
    return binary_run(&op_add, TG_ITER_PROMOTE_INPUTS, check_alpha, self, other, alpha, out);
}

/* sub.out: out = self - alpha * other; PyTorch refuses bool operands. */
tg_tensor *tg__cpu_sub_out(tg_tensor *self, tg_tensor *other, double alpha, tg_tensor *out)
{
    if (tg__pw_check_sub_operands(self->dtype, other->dtype) != 0) return NULL;
    return binary_run(&op_sub, TG_ITER_PROMOTE_INPUTS, check_alpha, self, other, alpha, out);
}

/* mul.out: out = self * other (bool: logical and). */
tg_tensor *tg__cpu_mul_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return binary_run(&op_mul, TG_ITER_PROMOTE_INPUTS, NULL, self, other, 1, out);
}

/* div.out: true division; integer and bool operands compute in the default float dtype. */
tg_tensor *tg__cpu_div_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return binary_run(&op_div, TG_ITER_PROMOTE_INPUTS | TG_ITER_INT_TO_FLOAT, NULL, self, other, 1,
                      out);
}

/* div.out_mode: rounding_mode NULL (true division), "trunc" (toward zero) or "floor"
 * (Python's //). The rounded modes keep integer dtypes; an integer zero divisor is an error. */
tg_tensor *tg__cpu_div_mode_out(tg_tensor *self, tg_tensor *other, const char *rounding_mode,
                                tg_tensor *out)
{
    tg_pw_div_mode mode;
    if (tg__pw_parse_div_mode(rounding_mode, &mode) != 0) return NULL;
    switch (mode) {
    case TG_PW_DIV_TRUNC:
        return binary_run(&op_div_trunc, TG_ITER_PROMOTE_INPUTS, check_not_bool_div_trunc, self,
                          other, 1, out);
    case TG_PW_DIV_FLOOR:
        return binary_run(&op_div_floor, TG_ITER_PROMOTE_INPUTS, check_not_bool_div_floor, self,
                          other, 1, out);
    default: return tg__cpu_div_out(self, other, out);
    }
}

/* pow.Tensor_Tensor_out: out = self ** exponent. */
tg_tensor *tg__cpu_pow_out(tg_tensor *self, tg_tensor *exponent, tg_tensor *out)
{
    return binary_run(&op_pow, TG_ITER_PROMOTE_INPUTS, check_not_bool_pow, self, exponent, 1, out);
}

/* maximum.out / minimum.out: elementwise max/min, NaN if either side is NaN. */
tg_tensor *tg__cpu_maximum_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return binary_run(&op_maximum, TG_ITER_PROMOTE_INPUTS, NULL, self, other, 1, out);
}

tg_tensor *tg__cpu_minimum_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return binary_run(&op_minimum, TG_ITER_PROMOTE_INPUTS, NULL, self, other, 1, out);
}
