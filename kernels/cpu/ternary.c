/* Ternary pointwise kernels: where (select) and clamp (Scalar or Tensor bounds).
 *
 *   where:  condition (bool; uint8 deprecated), self, other (broadcastable)
 *           -> out (broadcast shape, result_type(self, other))
 *   clamp:  self, min?, max? (Scalars, or broadcastable tensors)
 *           -> out (broadcast shape, result type of self and the bounds)
 *
 * Reference loops handle any dtype and strides; float32 has fast paths (contiguous select,
 * clamp against scalar bounds), calling the same scalar functions. */
#include "core/core.h"
#include "pointwise_loops.h"
#include "pointwise_checks.h"
#include "ufunc/clamp.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/clamp.h"
#include "kernels/where.h"

/* ------------------------------------------------------------------ where */

/* data[0] = out, data[1] = condition, data[2] = self, data[3] = other. The inputs keep their
 * own dtypes (the iterator does not cast them: the condition stays bool and self/other are
 * converted per element); out has the result dtype. */
typedef struct where_ctx {
    tg_dtype dt[4];
} where_ctx;

static void where_ref_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const where_ctx *c = vctx;
    char *o = data[0];
    const char *cond = data[1], *a = data[2], *b = data[3];
    for (int64_t i = 0; i < n; i++) {
        bool pick_a = tg__pw_load_i64(cond, c->dt[1]) != 0;
        if (pick_a) tg__pw_convert(o, c->dt[0], a, c->dt[2]);
        else tg__pw_convert(o, c->dt[0], b, c->dt[3]);
        o += strides[0];
        cond += strides[1];
        a += strides[2];
        b += strides[3];
    }
}

/* Fast path: bool condition, self/other already of the 4-byte result dtype. */
static void where_4byte_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    if (strides[0] != 4 || strides[1] != 1 || strides[2] != 4 || strides[3] != 4) {
        for (int64_t i = 0; i < n; i++) {
            const uint8_t c = *(const uint8_t *)(data[1] + i * strides[1]);
            memcpy(data[0] + i * strides[0],
                   c ? data[2] + i * strides[2] : data[3] + i * strides[3], 4);
        }
        return;
    }
    uint32_t *o = (uint32_t *)data[0];
    const uint8_t *cond = (const uint8_t *)data[1];
    const uint32_t *a = (const uint32_t *)data[2], *b = (const uint32_t *)data[3];
#pragma omp simd
    for (int64_t i = 0; i < n; i++) o[i] = cond[i] ? a[i] : b[i];
}

/* where.self_out: out = condition ? self : other. */
tg_tensor *tg__cpu_where_out(tg_tensor *condition, tg_tensor *self, tg_tensor *other,
                             tg_tensor *out)
{
    tg_iter it;
    tg_tensor *cond; /* borrowed by the iterator: it lives until the loop is done */
    if (tg__pw_where_iter_build(&it, TG_ITER_NO_INPUT_CAST, condition, self, other, out, &cond) !=
        0)
        return NULL;
    where_ctx ctx;
    for (int k = 0; k < 4; k++) ctx.dt[k] = it.dtypes[k];
    tg_iter_loop1d loop = where_ref_loop;
    if (!tg__pw_force_reference && ctx.dt[1] == TG_BOOL && ctx.dt[2] == ctx.dt[0] &&
        ctx.dt[3] == ctx.dt[0] && tg_dtype_size(ctx.dt[0]) == 4)
        loop = where_4byte_loop;
    tg__iter_for_each(&it, loop, &ctx);
    tg_tensor *r = tg__iter_finish(&it, 0);
    tg_release(cond);
    return r;
}

/* ------------------------------------------------------------------ clamp */

/* data[0] = out, data[1] = self, then min (if has_min), then max (if has_max); all of the
 * computation dtype. A missing bound is replaced by the identity of the clamp (-inf/+inf, or
 * the int64 extremes). */
typedef struct clamp_ctx {
    tg_dtype dtype;
    bool has_min, has_max;
} clamp_ctx;

static void clamp_ref_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const clamp_ctx *c = vctx;
    const tg_dtype t = c->dtype;
    const int kmin = 2, kmax = c->has_min ? 3 : 2;
    for (int64_t i = 0; i < n; i++) {
        char *o = data[0] + i * strides[0];
        const char *x = data[1] + i * strides[1];
        const char *lo = c->has_min ? data[kmin] + i * strides[kmin] : NULL;
        const char *hi = c->has_max ? data[kmax] + i * strides[kmax] : NULL;
        /* min and max select an operand, so a float32 clamp is exact in double. */
        if (tg__pw_kind(t) == TG_PW_I64)
            tg__pw_store_i64(o, t,
                             tg__pw_clamp_i64(tg__pw_load_i64(x, t),
                                              lo ? tg__pw_load_i64(lo, t) : INT64_MIN,
                                              hi ? tg__pw_load_i64(hi, t) : INT64_MAX));
        else
            tg__pw_store_f64(o, t,
                             tg__pw_clamp_f64(tg__pw_load_f64(x, t),
                                              lo ? tg__pw_load_f64(lo, t) : -INFINITY,
                                              hi ? tg__pw_load_f64(hi, t) : INFINITY));
    }
}

/* Fast path: float32, contiguous self and out, bounds that are scalars (stride 0) or absent. */
static void clamp_f32_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const clamp_ctx *c = vctx;
    const int kmin = 2, kmax = c->has_min ? 3 : 2;
    bool scalar_bounds = (!c->has_min || strides[kmin] == 0) && (!c->has_max || strides[kmax] == 0);
    if (strides[0] != 4 || strides[1] != 4 || !scalar_bounds) {
        clamp_ref_loop(data, strides, n, vctx);
        return;
    }
    const float lo = c->has_min ? *(const float *)data[kmin] : -INFINITY;
    const float hi = c->has_max ? *(const float *)data[kmax] : INFINITY;
    float *o = (float *)data[0];
    const float *x = (const float *)data[1];
#pragma omp simd
    for (int64_t i = 0; i < n; i++) o[i] = tg__pw_clamp_f32(x[i], lo, hi);
}

/* Shared by both overloads: min/max are tensors here (wrapped Scalars for clamp.out). */
static tg_tensor *clamp_run(tg_tensor *self, tg_tensor *min, tg_tensor *max, tg_tensor *out,
                            const double *scalar_min, const double *scalar_max)
{
    tg_iter it;
    if (tg__pw_clamp_iter_build(&it, 0, "cpu", self, min, max, out, scalar_min, scalar_max) < 0)
        return NULL;
    clamp_ctx ctx = { .dtype = it.dtype, .has_min = min != NULL, .has_max = max != NULL };
    tg_iter_loop1d loop = clamp_ref_loop;
    if (!tg__pw_force_reference && it.dtype == TG_FLOAT32) {
        bool one_dtype = true;
        for (int k = 0; k < it.nops; k++) one_dtype = one_dtype && it.dtypes[k] == TG_FLOAT32;
        if (one_dtype) loop = clamp_f32_loop;
    }
    tg__iter_for_each(&it, loop, &ctx);
    return tg__iter_finish(&it, 0);
}

/* clamp.out: out = min(max(self, min), max) with Scalar bounds (either may be None). */
tg_tensor *tg__cpu_clamp_out(tg_tensor *self, tg_opt_scalar min, tg_opt_scalar max, tg_tensor *out)
{
    return tg__pw_clamp_scalar_bounds(clamp_run, self, min, max, out);
}

/* clamp.Tensor_out: the bounds are tensors broadcast against self (either may be NULL). */
tg_tensor *tg__cpu_clamp_tensor_out(tg_tensor *self, tg_tensor *min, tg_tensor *max, tg_tensor *out)
{
    if (tg__pw_check_clamp_bounds(min != NULL, max != NULL) != 0) return NULL;
    return clamp_run(self, min, max, out, NULL, NULL);
}
