/* index_select, gather, the scatter family and index_add on the CPU, PyTorch 1.13's semantics.
 *
 * Checks, the written operand, the contiguous int64 index (bounds-checked before anything is
 * written) and the operands' dtypes are the shared flow's (kernels/common/index_checks.h); this
 * file is its engine: the plan's lines (every position off `dim` and the inner dim) are split
 * into units of a line and a chunk of the inner dim, run in parallel with tg__parallel_for.
 * Units never write the same element, and each runs the index positions in order, so
 * scatter_add / index_add / scatter_reduce are deterministic (no atomics, no per-thread
 * partial sums). The copy modes (gather, index_select, scatter without reduction) move elements
 * by their size, any dtype; the reductions are typed (float, double and the integers; float16
 * and bfloat16 compute in float, bool in uint8, converted by the flow). index_select along dim 0
 * of contiguous tensors (the embedding-like lookup) copies whole rows with memcpy. */
#include "tg_kutil.h"
#include "index_checks.h"
#include "pointwise_convert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gather.h"
#include "kernels/index_add.h"
#include "kernels/index_select.h"
#include "kernels/nonzero.h"
#include "kernels/scatter.h"
#include "kernels/scatter_add.h"
#include "kernels/scatter_reduce.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

typedef struct idx_job {
    const tg_index_exec *x;
    int64_t nchunks, kchunk; /* each line's inner dim in nchunks chunks of kchunk */
} idx_job;

/* What a unit does to each pair of elements: d points at self's, s at other's. */
typedef enum idx_op {
    IDX_GATHER,    /* other = self[idx]: *s = *d */
    IDX_SCATTER,   /* self[idx] = other: *d = *s */
    IDX_SUM,       /* *d += *s */
    IDX_SUM_ALPHA, /* *d += alpha * *s */
    IDX_PROD,
    IDX_AMAX, /* a NaN of src wins and a NaN of self stays (PyTorch's `isnan(src) ? src : max`) */
    IDX_AMIN,
} idx_op;

/* The reductions in the compute type of the element type (float32 in float, float64 in double,
 * the integers in int64_t, wrapping like C's arithmetic in them once stored). */
TG_ALWAYS_INLINE float reduce_f32(idx_op op, float d, float s, float a)
{
    return op == IDX_SUM         ? d + s
           : op == IDX_SUM_ALPHA ? d + a * s
           : op == IDX_PROD      ? d * s
           : op == IDX_AMAX      ? (s != s || s > d ? s : d)
                                 : (s != s || s < d ? s : d);
}
TG_ALWAYS_INLINE double reduce_f64(idx_op op, double d, double s, double a)
{
    return op == IDX_SUM         ? d + s
           : op == IDX_SUM_ALPHA ? d + a * s
           : op == IDX_PROD      ? d * s
           : op == IDX_AMAX      ? (s != s || s > d ? s : d)
                                 : (s != s || s < d ? s : d);
}
TG_ALWAYS_INLINE int64_t reduce_i64(idx_op op, int64_t d, int64_t s, int64_t a)
{
    uint64_t ud = (uint64_t)d, us = (uint64_t)s;
    return op == IDX_SUM         ? (int64_t)(ud + us)
           : op == IDX_SUM_ALPHA ? (int64_t)(ud + (uint64_t)a * us)
           : op == IDX_PROD      ? (int64_t)(ud * us)
           : op == IDX_AMAX      ? (s > d ? s : d)
                                 : (s < d ? s : d);
}

/* One pair of elements of dtype dt (for the copies, any dtype of dt's size). */
TG_ALWAYS_INLINE void idx_elem(idx_op op, tg_dtype dt, char *d, char *s, double alpha)
{
    const size_t es = tg_dtype_size(dt);
    if (op == IDX_GATHER) memcpy(s, d, es);
    else if (op == IDX_SCATTER) memcpy(d, s, es);
    else if (dt == TG_FLOAT32)
        *(float *)d = reduce_f32(op, *(float *)d, *(const float *)s, (float)alpha);
    else if (dt == TG_FLOAT64)
        *(double *)d = reduce_f64(op, *(double *)d, *(const double *)s, alpha);
    else
        tg__pw_store_i64(
            d, dt, reduce_i64(op, tg__pw_load_i64(d, dt), tg__pw_load_i64(s, dt), (int64_t)alpha));
}

/* The units [b, e) of the job with a constant op and dtype: for unit u, its line's offsets,
 * then index positions t in order and the chunk's inner positions kk. */
TG_ALWAYS_INLINE void unit_loop(idx_op op, tg_dtype dt, const idx_job *j, int64_t b, int64_t e)
{
    const tg_index_plan *p = j->x->p;
    const int64_t es = (int64_t)tg_dtype_size(dt);
    const int64_t isd = p->is[p->dim], ssd = p->ss[p->dim] * es, osd = p->os[p->dim] * es;
    const int64_t isk = p->kd >= 0 ? p->is[p->kd] : 0, ssk = p->kd >= 0 ? p->ss[p->kd] * es : 0,
                  osk = p->kd >= 0 ? p->os[p->kd] * es : 0;
    for (int64_t u = b; u < e; u++) {
        int64_t l = u / j->nchunks, c = u % j->nchunks;
        int64_t k0 = c * j->kchunk, k1 = MIN(k0 + j->kchunk, p->k);
        int64_t io, so, oo;
        tg__index_line(p, l, &io, &so, &oo);
        char *S = j->x->self + so * es, *O = j->x->other + oo * es;
        for (int64_t t = 0; t < p->n; t++) {
            const int64_t *I = j->x->idx + io + t * isd;
            char *Ot = O + t * osd;
            if (isk == 0 && ssk == es && osk == es) { /* one index per row: vectorizable */
                char *St = S + I[0] * ssd;
                for (int64_t kk = k0; kk < k1; kk++)
                    idx_elem(op, dt, St + kk * es, Ot + kk * es, j->x->alpha);
            } else {
                for (int64_t kk = k0; kk < k1; kk++)
                    idx_elem(op, dt, S + I[kk * isk] * ssd + kk * ssk, Ot + kk * osk, j->x->alpha);
            }
        }
    }
}

/* unit_loop with the job's dtype as a constant. The copies go by element size. */
TG_ALWAYS_INLINE void units(idx_op op, int64_t b, int64_t e, const idx_job *j)
{
    tg_dtype dt = j->x->dtype;
    if (op == IDX_GATHER || op == IDX_SCATTER) {
        size_t es = tg_dtype_size(dt);
        dt = es == 1 ? TG_UINT8 : es == 2 ? TG_INT16 : es == 4 ? TG_INT32 : TG_INT64;
    }
    switch (dt) {
    case TG_FLOAT32: unit_loop(op, TG_FLOAT32, j, b, e); break;
    case TG_FLOAT64: unit_loop(op, TG_FLOAT64, j, b, e); break;
    case TG_INT64: unit_loop(op, TG_INT64, j, b, e); break;
    case TG_INT32: unit_loop(op, TG_INT32, j, b, e); break;
    case TG_INT16: unit_loop(op, TG_INT16, j, b, e); break;
    case TG_INT8: unit_loop(op, TG_INT8, j, b, e); break;
    default: unit_loop(op, TG_UINT8, j, b, e); break;
    }
}

static void gather_units(int64_t b, int64_t e, void *j) { units(IDX_GATHER, b, e, j); }
static void scatter_units(int64_t b, int64_t e, void *j) { units(IDX_SCATTER, b, e, j); }
static void sum_units(int64_t b, int64_t e, void *j) { units(IDX_SUM, b, e, j); }
static void sum_alpha_units(int64_t b, int64_t e, void *j) { units(IDX_SUM_ALPHA, b, e, j); }
static void prod_units(int64_t b, int64_t e, void *j) { units(IDX_PROD, b, e, j); }
static void amax_units(int64_t b, int64_t e, void *j) { units(IDX_AMAX, b, e, j); }
static void amin_units(int64_t b, int64_t e, void *j) { units(IDX_AMIN, b, e, j); }

typedef void (*unit_fn)(int64_t b, int64_t e, void *ctx);

static unit_fn pick(const char *op, const tg_index_exec *x)
{
    size_t es = tg_dtype_size(x->dtype);
    if (x->mode == TG_IDX_MODE_GATHER || x->red == TG_IDX_NONE) {
        if (es == 1 || es == 2 || es == 4 || es == 8)
            return x->mode == TG_IDX_MODE_GATHER ? gather_units : scatter_units;
    } else {
        switch (x->dtype) {
        case TG_FLOAT32:
        case TG_FLOAT64:
        case TG_INT64:
        case TG_INT32:
        case TG_INT16:
        case TG_INT8:
        case TG_UINT8:
            return x->red == TG_IDX_SUM    ? (x->alpha == 1.0 ? sum_units : sum_alpha_units)
                   : x->red == TG_IDX_PROD ? prod_units
                   : x->red == TG_IDX_AMAX ? amax_units
                                           : amin_units;
        default: break;
        }
    }
    tg__error(op, "\"%s\" not implemented for '%s'", op, tg__dtype_torch_name(x->dtype));
    return NULL;
}

/* index_select along dim 0 of a contiguous self into a contiguous result: whole rows. */
static bool rows_case(const tg_index_exec *x)
{
    const tg_index_plan *p = x->p;
    if (x->mode != TG_IDX_MODE_GATHER || p->dim != 0) return false;
    int64_t st = 1;
    for (int64_t d = p->ndim - 1; d >= 1; d--) {
        if (p->is[d] != 0 || p->ss[d] != st || p->os[d] != st) return false;
        st *= p->sizes[d];
    }
    return p->ss[0] == st && p->os[0] == st;
}

typedef struct rows_job {
    const tg_index_exec *x;
    size_t row_bytes;
} rows_job;

static void copy_rows(int64_t b, int64_t e, void *ctx)
{
    const rows_job *r = ctx;
    const tg_index_exec *x = r->x;
    for (int64_t t = b; t < e; t++)
        memcpy(x->other + (size_t)t * r->row_bytes,
               x->self + (size_t)x->idx[t * x->p->is[0]] * r->row_bytes, r->row_bytes);
}

static int cpu_run(const char *op, const tg_index_exec *x, tg_device dev)
{
    (void)dev;
    const tg_index_plan *p = x->p;
    int64_t total = tg__index_plan_numel(p);
    if (total == 0) return 0;
    if (rows_case(x)) {
        int64_t row = total / p->n;
        rows_job r = { x, (size_t)row * tg_dtype_size(x->dtype) };
        tg__parallel_for(p->n, MAX(tg__grain_size() / MAX(row, 1), 1), copy_rows, &r);
        return 0;
    }
    unit_fn fn = pick(op, x);
    if (!fn) return -1;
    /* few long lines: split the inner dim too, so that every thread has work */
    int64_t nchunks = 1;
    if (p->lines < 64 && p->k >= 1024) nchunks = MIN(p->k / 512, 64);
    idx_job j = { x, nchunks, (p->k + nchunks - 1) / nchunks };
    int64_t per_unit = MAX(p->n * j.kchunk, 1);
    tg__parallel_for(p->lines * nchunks, MAX(tg__grain_size() / per_unit, 1), fn, &j);
    return 0;
}

static int cpu_bounds(const char *op, const tg_tensor *idx, int64_t bound, int64_t dim, bool select)
{
    return tg__index_bounds(op, tg__k_data(idx), TG_INT64, tg__numel(idx), bound, dim, select);
}

/* scatter_reduce's mean: w = w / count (a count of 0 divides by 1), floor division for the
 * signed integers (PyTorch's div_trunc rounds them down there: `w.div_(count, "floor")`),
 * truncating division for uint8, true division for floats. */
TG_ALWAYS_INLINE void divide_by_counts(tg_dtype dt, char *w, const char *c, int64_t n)
{
    const size_t es = tg_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        char *wi = w + (size_t)i * es;
        const char *ci = c + (size_t)i * es;
        if (dt == TG_FLOAT32) *(float *)wi /= *(const float *)ci == 0 ? 1 : *(const float *)ci;
        else if (dt == TG_FLOAT64)
            *(double *)wi /= *(const double *)ci == 0 ? 1 : *(const double *)ci;
        else {
            int64_t x = tg__pw_load_i64(wi, dt), q = tg__pw_load_i64(ci, dt);
            if (q == 0) q = 1;
            int64_t v = x / q;
            if (dt != TG_UINT8 && x % q != 0 && (x < 0) != (q < 0)) v--;
            tg__pw_store_i64(wi, dt, v);
        }
    }
}

static int cpu_divide(const char *op, tg_tensor *work, const tg_tensor *count)
{
    int64_t n = tg__numel(work);
    char *w = tg__k_data(work);
    const char *c = tg__k_data(count);
    switch (work->dtype) {
    case TG_FLOAT32: divide_by_counts(TG_FLOAT32, w, c, n); break;
    case TG_FLOAT64: divide_by_counts(TG_FLOAT64, w, c, n); break;
    case TG_INT64: divide_by_counts(TG_INT64, w, c, n); break;
    case TG_INT32: divide_by_counts(TG_INT32, w, c, n); break;
    case TG_INT16: divide_by_counts(TG_INT16, w, c, n); break;
    case TG_INT8: divide_by_counts(TG_INT8, w, c, n); break;
    case TG_UINT8: divide_by_counts(TG_UINT8, w, c, n); break;
    default:
        return tg__fail(op, "\"%s\" not implemented for '%s'", op,
                        tg__dtype_torch_name(work->dtype));
    }
    return 0;
}

static const tg_index_backend CPU = { cpu_run, cpu_bounds, cpu_divide };

/* ------------------------------------------------------------------ kernels */

tg_tensor *tg__cpu_index_select(tg_tensor *self, int64_t dim, tg_tensor *index)
{
    const char *op = "index_select";
    int64_t wd;
    if (tg__index_select_check(op, self, dim, index, &wd)) return NULL;
    return tg__index_gather_flow(op, &CPU, self, wd, index, true, NULL);
}

tg_tensor *tg__cpu_gather_out(tg_tensor *self, int64_t dim, tg_tensor *index, bool sparse_grad,
                              tg_tensor *out)
{
    (void)sparse_grad;
    const char *op = "gather";
    tg_index_plan p;
    if (tg__gather_check(op, self, dim, index, &p)) return NULL;
    return tg__index_gather_flow(op, &CPU, self, p.dim, index, false, out);
}

tg_tensor *tg__cpu_scatter_src_out(tg_tensor *self, int64_t dim, tg_tensor *index, tg_tensor *src,
                                   tg_tensor *out)
{
    const char *op = "scatter";
    int64_t wd;
    if (tg__scatter_check(op, "scatter", self, dim, index, src, &wd)) return NULL;
    return tg__index_scatter_flow(op, &CPU, self, wd, index, src, 0, TG_IDX_NONE, true, 1.0, false,
                                  out);
}

tg_tensor *tg__cpu_scatter_value_out(tg_tensor *self, int64_t dim, tg_tensor *index, double value,
                                     tg_tensor *out)
{
    const char *op = "scatter";
    int64_t wd;
    if (tg__scatter_check(op, "scatter", self, dim, index, NULL, &wd)) return NULL;
    return tg__index_scatter_flow(op, &CPU, self, wd, index, NULL, value, TG_IDX_NONE, true, 1.0,
                                  false, out);
}

tg_tensor *tg__cpu_scatter_reduce_out(tg_tensor *self, int64_t dim, tg_tensor *index,
                                      tg_tensor *src, const char *reduce, tg_tensor *out)
{
    const char *op = "scatter";
    int64_t wd;
    tg_index_reduce red;
    if (tg__scatter_check(op, "scatter", self, dim, index, src, &wd) ||
        tg__scatter_reduce_old(op, reduce, &red))
        return NULL;
    return tg__index_scatter_flow(op, &CPU, self, wd, index, src, 0, red, true, 1.0, false, out);
}

tg_tensor *tg__cpu_scatter_value_reduce_out(tg_tensor *self, int64_t dim, tg_tensor *index,
                                            double value, const char *reduce, tg_tensor *out)
{
    const char *op = "scatter";
    int64_t wd;
    tg_index_reduce red;
    if (tg__scatter_check(op, "scatter", self, dim, index, NULL, &wd) ||
        tg__scatter_reduce_old(op, reduce, &red))
        return NULL;
    return tg__index_scatter_flow(op, &CPU, self, wd, index, NULL, value, red, true, 1.0, false,
                                  out);
}

tg_tensor *tg__cpu_scatter_add_out(tg_tensor *self, int64_t dim, tg_tensor *index, tg_tensor *src,
                                   tg_tensor *out)
{
    const char *op = "scatter_add";
    int64_t wd;
    if (tg__scatter_check(op, "scatter_add", self, dim, index, src, &wd)) return NULL;
    return tg__index_scatter_flow(op, &CPU, self, wd, index, src, 0, TG_IDX_SUM, true, 1.0, false,
                                  out);
}

tg_tensor *tg__cpu_scatter_reduce_two_out(tg_tensor *self, int64_t dim, tg_tensor *index,
                                          tg_tensor *src, const char *reduce, bool include_self,
                                          tg_tensor *out)
{
    const char *op = "scatter_reduce";
    int64_t wd;
    tg_index_reduce red;
    if (tg__scatter_check(op, "scatter_reduce", self, dim, index, src, &wd) ||
        tg__scatter_reduce_two(op, reduce, &red))
        return NULL;
    return tg__index_scatter_flow(op, &CPU, self, wd, index, src, 0, red, include_self, 1.0, false,
                                  out);
}

tg_tensor *tg__cpu_index_add_out(tg_tensor *self, int64_t dim, tg_tensor *index, tg_tensor *source,
                                 double alpha, tg_tensor *out)
{
    const char *op = "index_add";
    int64_t wd;
    if (tg__index_add_check(op, self, dim, index, source, &wd)) return NULL;
    return tg__index_scatter_flow(op, &CPU, self, wd, index, source, 0, TG_IDX_SUM, true, alpha,
                                  true, out);
}

tg_tensor *tg__cpu_nonzero(tg_tensor *self)
{
    const char *op = "nonzero";
    tg_tensor *x = tg__contiguous(op, self);
    tg_tensor *r = x ? tg__nonzero_host(op, x) : NULL;
    tg_release(x);
    return r;
}
