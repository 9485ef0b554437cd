/* Comparison kernels: eq, ne, lt, le, gt, ge.
 *
 *   self (any shape), other (broadcastable) -> out (broadcast shape, bool)
 *
 * The inputs are promoted to their common dtype (so int64 1 == float 1.0 holds) and compared
 * there; the output is bool (for the in-place variants, whose out is self, the iterator
 * converts the bool result back into self's dtype). NaN compares unequal to everything.
 * Reference path: cmp_ref_loop, any dtype and strides, compares in int64 for integer dtypes
 * (exact beyond 2^53) and in double otherwise. Fast paths: float32, float64 and int64 with
 * bool output, contiguous or scalar-broadcast other (cmp_fast_loop). Both pick the operator's
 * answer with pointwise_scalar.h's tg__pw_compare, as the CUDA kernels do. */
#include "core/core.h"
#include "pointwise_loops.h"
#include "pointwise_checks.h"
#include "pointwise_scalar.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/eq.h"
#include "kernels/ge.h"
#include "kernels/gt.h"
#include "kernels/le.h"
#include "kernels/lt.h"
#include "kernels/ne.h"

typedef struct cmp_ctx {
    tg_pw_cmp_op op;
    tg_dtype in_dtype, out_dtype;
} cmp_ctx;

/* a OP b for one element of dtype t each, in its compute kind (int64 or double). */
static bool cmp_elem_ref(tg_pw_cmp_op op, tg_dtype t, const char *a, const char *b)
{
    if (tg__pw_kind(t) == TG_PW_I64) {
        int64_t x = tg__pw_load_i64(a, t), y = tg__pw_load_i64(b, t);
        return tg__pw_compare(op, x < y, x == y, y < x);
    }
    double x = tg__pw_load_f64(a, t), y = tg__pw_load_f64(b, t);
    return tg__pw_compare(op, x < y, x == y, y < x);
}

/* data[0] = out (out_dtype), data[1] = a, data[2] = b (in_dtype). */
static void cmp_ref_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const cmp_ctx *c = vctx;
    for (int64_t i = 0; i < n; i++)
        tg__pw_store_i64(
            data[0] + i * strides[0], c->out_dtype,
            cmp_elem_ref(c->op, c->in_dtype, data[1] + i * strides[1], data[2] + i * strides[2]));
}

/* ------------------------------------------------------------------ fast paths
 * As binary.c's: a generic always_inline loop, instantiated where the operator and the dtype
 * are compile-time constants, so every instance is a plain loop that the compiler vectorises
 * (tg__pw_compare folds to the one comparison the operator needs). */

/* a[i] OP b[j] for a and b of dtype t (float32, float64 or int64). */
static inline __attribute__((always_inline)) bool
cmp_elem(tg_pw_cmp_op op, tg_dtype t, const char *a, int64_t i, const char *b, int64_t j)
{
    switch (t) {
    case TG_FLOAT32: {
        const float x = ((const float *)a)[i], y = ((const float *)b)[j];
        return tg__pw_compare(op, x < y, x == y, y < x);
    }
    case TG_FLOAT64: {
        const double x = ((const double *)a)[i], y = ((const double *)b)[j];
        return tg__pw_compare(op, x < y, x == y, y < x);
    }
    default: {
        const int64_t x = ((const int64_t *)a)[i], y = ((const int64_t *)b)[j];
        return tg__pw_compare(op, x < y, x == y, y < x);
    }
    }
}

/* out[i] = a[i] OP b[i] (b_scalar: a[i] OP b[0]) for i < n. */
static inline __attribute__((always_inline)) void cmp_fast(tg_pw_cmp_op op, tg_dtype t,
                                                           uint8_t *out, const char *a,
                                                           const char *b, bool b_scalar, int64_t n)
{
    if (b_scalar) {
        for (int64_t i = 0; i < n; i++) out[i] = cmp_elem(op, t, a, i, b, 0);
    } else {
        for (int64_t i = 0; i < n; i++) out[i] = cmp_elem(op, t, a, i, b, i);
    }
}

/* The operator as a constant: one loop per operator for dtype t. */
static inline __attribute__((always_inline)) void cmp_fast_op(tg_pw_cmp_op op, tg_dtype t,
                                                              uint8_t *out, const char *a,
                                                              const char *b, bool b_scalar,
                                                              int64_t n)
{
    switch (op) {
    case TG_PW_EQ: cmp_fast(TG_PW_EQ, t, out, a, b, b_scalar, n); break;
    case TG_PW_NE: cmp_fast(TG_PW_NE, t, out, a, b, b_scalar, n); break;
    case TG_PW_LT: cmp_fast(TG_PW_LT, t, out, a, b, b_scalar, n); break;
    case TG_PW_LE: cmp_fast(TG_PW_LE, t, out, a, b, b_scalar, n); break;
    case TG_PW_GT: cmp_fast(TG_PW_GT, t, out, a, b, b_scalar, n); break;
    case TG_PW_GE: cmp_fast(TG_PW_GE, t, out, a, b, b_scalar, n); break;
    }
}

/* Fast paths: bool out, inputs of one dtype (float32, float64 or int64), contiguous, `other`
 * contiguous or broadcast (stride 0). Other strides go to the reference loop, which handles
 * them at a lower speed. */
static void cmp_fast_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const cmp_ctx *c = vctx;
    const int64_t es = (int64_t)tg_dtype_size(c->in_dtype);
    if (strides[0] != 1 || strides[1] != es || (strides[2] != es && strides[2] != 0)) {
        cmp_ref_loop(data, strides, n, vctx);
        return;
    }
    uint8_t *out = (uint8_t *)data[0];
    const bool b_scalar = strides[2] == 0;
    switch (c->in_dtype) {
    case TG_FLOAT32: cmp_fast_op(c->op, TG_FLOAT32, out, data[1], data[2], b_scalar, n); break;
    case TG_FLOAT64: cmp_fast_op(c->op, TG_FLOAT64, out, data[1], data[2], b_scalar, n); break;
    default: cmp_fast_op(c->op, TG_INT64, out, data[1], data[2], b_scalar, n); break;
    }
}

static tg_tensor *cmp_run(const char *name, tg_pw_cmp_op op, tg_tensor *self, tg_tensor *other,
                          tg_tensor *out)
{
    tg_iter it;
    tg_tensor *ins[2] = { self, other };
    if (tg__pw_iter_build(&it, name, TG_ITER_BOOL_OUTPUT, out, self, ins, 2) != 0) return NULL;
    cmp_ctx ctx = { .op = op, .in_dtype = it.dtypes[1], .out_dtype = it.dtypes[0] };
    tg_iter_loop1d loop = cmp_ref_loop;
    if (!tg__pw_force_reference && ctx.out_dtype == TG_BOOL && it.dtypes[2] == ctx.in_dtype &&
        (ctx.in_dtype == TG_FLOAT32 || ctx.in_dtype == TG_FLOAT64 || ctx.in_dtype == TG_INT64))
        loop = cmp_fast_loop;
    tg__iter_for_each(&it, loop, &ctx);
    return tg__iter_finish(&it, 0);
}

/* eq.Tensor_out ... ge.Tensor_out: out = (self OP other), bool. */
tg_tensor *tg__cpu_eq_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("eq", TG_PW_EQ, self, other, out);
}
tg_tensor *tg__cpu_ne_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("ne", TG_PW_NE, self, other, out);
}
tg_tensor *tg__cpu_lt_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("lt", TG_PW_LT, self, other, out);
}
tg_tensor *tg__cpu_le_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("le", TG_PW_LE, self, other, out);
}
tg_tensor *tg__cpu_gt_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("gt", TG_PW_GT, self, other, out);
}
tg_tensor *tg__cpu_ge_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return cmp_run("ge", TG_PW_GE, self, other, out);
}
