/* Comparison kernels: eq, ne, lt, le, gt, ge.
 *
 *   self (any shape), other (broadcastable) -> out (broadcast shape, bool)
 *
 * The inputs are promoted to their common dtype (so int64 1 == float 1.0 holds) and compared
 * there; the output is bool (for the in-place variants, whose out is self, the iterator
 * converts the bool result back into self's dtype). NaN compares unequal to everything.
 * Reference path: cmp_ref_loop, any dtype and strides, compares in int64 for integer dtypes
 * (exact beyond 2^53) and in double otherwise. Fast paths: float32, float64 and int64 with
 * bool output, one plain loop per operator (CMP_FAST_LOOP). */
#include "core/core.h"
#include "pointwise_loops.h"
#include "tg_kernels.h"

typedef enum cmp_op { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } cmp_op;

typedef struct cmp_ctx {
    cmp_op op;
    tg_dtype in_dtype, out_dtype;
} cmp_ctx;

static inline bool cmp_f64(cmp_op op, double a, double b)
{
    switch (op) {
    case CMP_EQ: return a == b;
    case CMP_NE: return a != b;
    case CMP_LT: return a < b;
    case CMP_LE: return a <= b;
    case CMP_GT: return a > b;
    case CMP_GE: return a >= b;
    }
    return false;
}

static inline bool cmp_i64(cmp_op op, int64_t a, int64_t b)
{
    switch (op) {
    case CMP_EQ: return a == b;
    case CMP_NE: return a != b;
    case CMP_LT: return a < b;
    case CMP_LE: return a <= b;
    case CMP_GT: return a > b;
    case CMP_GE: return a >= b;
    }
    return false;
}

/* data[0] = out (out_dtype), data[1] = a, data[2] = b (in_dtype). */
static void cmp_ref_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const cmp_ctx *c = vctx;
    const tg_dtype t = c->in_dtype;
    char *o = data[0];
    const char *a = data[1], *b = data[2];
    const bool integral = tg__pw_kind(t) == TG_PW_I64;
    for (int64_t i = 0; i < n; i++, o += strides[0], a += strides[1], b += strides[2]) {
        bool r = integral ? cmp_i64(c->op, tg__pw_load_i64(a, t), tg__pw_load_i64(b, t))
                          : cmp_f64(c->op, tg__pw_load_f64(a, t), tg__pw_load_f64(b, t));
        tg__pw_store_i64(o, c->out_dtype, r);
    }
}

/* out[i] = a[i] OP B for i < n, the operator switch outside the loops; B is an expression in
 * i (b[i], or a value broadcast along the loop). */
#define CMP_LOOPS(op, o, a, B, n)                                                         \
    switch (op) {                                                                         \
    case CMP_EQ: for (int64_t i = 0; i < (n); i++) (o)[i] = (a)[i] == (B); break;         \
    case CMP_NE: for (int64_t i = 0; i < (n); i++) (o)[i] = (a)[i] != (B); break;         \
    case CMP_LT: for (int64_t i = 0; i < (n); i++) (o)[i] = (a)[i] < (B); break;          \
    case CMP_LE: for (int64_t i = 0; i < (n); i++) (o)[i] = (a)[i] <= (B); break;         \
    case CMP_GT: for (int64_t i = 0; i < (n); i++) (o)[i] = (a)[i] > (B); break;          \
    case CMP_GE: for (int64_t i = 0; i < (n); i++) (o)[i] = (a)[i] >= (B); break;         \
    }

/* Fast paths: bool out, inputs of one dtype T, contiguous, `other` contiguous or broadcast
 * (stride 0). Other strides go to the reference loop, which handles them at a lower speed. */
#define CMP_FAST_LOOP(name, T)                                                            \
    static void name(char **data, const int64_t *strides, int64_t n, void *vctx)          \
    {                                                                                     \
        const cmp_ctx *c = vctx;                                                          \
        uint8_t *o = (uint8_t *)data[0];                                                  \
        const T *a = (const T *)data[1], *b = (const T *)data[2];                         \
        if (strides[0] != 1 || strides[1] != sizeof(T) ||                                 \
            (strides[2] != sizeof(T) && strides[2] != 0)) {                               \
            cmp_ref_loop(data, strides, n, vctx);                                         \
            return;                                                                       \
        }                                                                                 \
        if (strides[2] == 0) {                                                            \
            const T bv = b[0];                                                            \
            CMP_LOOPS(c->op, o, a, bv, n);                                                \
        } else {                                                                          \
            CMP_LOOPS(c->op, o, a, b[i], n);                                              \
        }                                                                                 \
    }

CMP_FAST_LOOP(cmp_f32_loop, float)
CMP_FAST_LOOP(cmp_f64_loop, double)
CMP_FAST_LOOP(cmp_i64_loop, int64_t)

static tg_tensor *cmp_run(const char *name, cmp_op op, tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    tg_iter it;
    tg_tensor *outs[1] = { out };
    tg_tensor *ins[2] = { self, other };
    int flags = TG_ITER_PROMOTE_INPUTS | TG_ITER_BOOL_OUTPUT;
    if (out == self) flags |= TG_ITER_NO_BROADCAST_OUT;
    if (tg__iter_build(&it, name, flags, outs, 1, ins, 2) != 0) return NULL;
    cmp_ctx ctx = { .op = op, .in_dtype = it.dtypes[1], .out_dtype = it.dtypes[0] };
    tg_iter_loop1d loop = cmp_ref_loop;
    if (!tg__pw_force_reference && ctx.out_dtype == TG_BOOL && it.dtypes[2] == ctx.in_dtype) {
        if (ctx.in_dtype == TG_FLOAT32) loop = cmp_f32_loop;
        else if (ctx.in_dtype == TG_FLOAT64) loop = cmp_f64_loop;
        else if (ctx.in_dtype == TG_INT64) loop = cmp_i64_loop;
    }
    tg__iter_for_each(&it, loop, &ctx);
    return tg__iter_finish(&it, 0);
}

/* eq.Tensor_out ... ge.Tensor_out: out = (self OP other), bool. */
tg_tensor *tg__cpu_eq_out(tg_tensor *self, tg_tensor *other, tg_tensor *out) { return cmp_run("eq", CMP_EQ, self, other, out); }
tg_tensor *tg__cpu_ne_out(tg_tensor *self, tg_tensor *other, tg_tensor *out) { return cmp_run("ne", CMP_NE, self, other, out); }
tg_tensor *tg__cpu_lt_out(tg_tensor *self, tg_tensor *other, tg_tensor *out) { return cmp_run("lt", CMP_LT, self, other, out); }
tg_tensor *tg__cpu_le_out(tg_tensor *self, tg_tensor *other, tg_tensor *out) { return cmp_run("le", CMP_LE, self, other, out); }
tg_tensor *tg__cpu_gt_out(tg_tensor *self, tg_tensor *other, tg_tensor *out) { return cmp_run("gt", CMP_GT, self, other, out); }
tg_tensor *tg__cpu_ge_out(tg_tensor *self, tg_tensor *other, tg_tensor *out) { return cmp_run("ge", CMP_GE, self, other, out); }
