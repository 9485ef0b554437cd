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

/* The unit loop: for unit u, its line's offsets, then index positions t in order and the
 * chunk's inner positions kk; d points at self's element, s at other's. BODY uses d and s. */
#define UNIT_LOOP(T, BODY)                                                                      \
    do {                                                                                        \
        const tg_index_plan *p = j->x->p;                                                       \
        const int64_t isd = p->is[p->dim], ssd = p->ss[p->dim], osd = p->os[p->dim];            \
        const int64_t isk = p->kd >= 0 ? p->is[p->kd] : 0, ssk = p->kd >= 0 ? p->ss[p->kd] : 0, \
                      osk = p->kd >= 0 ? p->os[p->kd] : 0;                                      \
        for (int64_t u = b; u < e; u++) {                                                       \
            int64_t l = u / j->nchunks, c = u % j->nchunks;                                     \
            int64_t k0 = c * j->kchunk, k1 = MIN(k0 + j->kchunk, p->k);                         \
            int64_t io, so, oo;                                                                 \
            tg__index_line(p, l, &io, &so, &oo);                                                \
            T *S = (T *)j->x->self + so, *O = (T *)j->x->other + oo;                            \
            for (int64_t t = 0; t < p->n; t++) {                                                \
                const int64_t *I = j->x->idx + io + t * isd;                                    \
                T *Ot = O + t * osd;                                                            \
                if (isk == 0 && ssk == 1 && osk == 1) { /* one index per row: vectorizable */   \
                    T *St = S + I[0] * ssd;                                                     \
                    for (int64_t kk = k0; kk < k1; kk++) {                                      \
                        T *d = St + kk, *s = Ot + kk;                                           \
                        BODY;                                                                   \
                    }                                                                           \
                } else {                                                                        \
                    for (int64_t kk = k0; kk < k1; kk++) {                                      \
                        T *d = S + I[kk * isk] * ssd + kk * ssk, *s = Ot + kk * osk;            \
                        BODY;                                                                   \
                    }                                                                           \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    } while (0)

/* Copies by element size: gather (other = self[idx]) and scatter (self[idx] = other). */
#define DEFINE_COPY(T, SFX)                                    \
    static void gather_##SFX(int64_t b, int64_t e, void *ctx)  \
    {                                                          \
        const idx_job *j = ctx;                                \
        UNIT_LOOP(T, *s = *d);                                 \
    }                                                          \
    static void scatter_##SFX(int64_t b, int64_t e, void *ctx) \
    {                                                          \
        const idx_job *j = ctx;                                \
        UNIT_LOOP(T, *d = *s);                                 \
    }
DEFINE_COPY(uint8_t, u8)
DEFINE_COPY(uint16_t, u16)
DEFINE_COPY(uint32_t, u32)
DEFINE_COPY(uint64_t, u64)

/* The reductions of one element type. amax / amin let a NaN of src win and keep a NaN of self
 * (PyTorch's `isnan(src) ? src : max(self, src)`). */
#define DEFINE_REDUCE(T, SFX)                                                                 \
    static void sum_##SFX(int64_t b, int64_t e, void *ctx)                                    \
    {                                                                                         \
        const idx_job *j = ctx;                                                               \
        const T a = (T)j->x->alpha;                                                           \
        if (j->x->alpha == 1.0) UNIT_LOOP(T, *d += *s);                                       \
        else UNIT_LOOP(T, *d += a * *s);                                                      \
    }                                                                                         \
    static void prod_##SFX(int64_t b, int64_t e, void *ctx)                                   \
    {                                                                                         \
        const idx_job *j = ctx;                                                               \
        UNIT_LOOP(T, *d *= *s);                                                               \
    }                                                                                         \
    static void amax_##SFX(int64_t b, int64_t e, void *ctx)                                   \
    {                                                                                         \
        const idx_job *j = ctx;                                                               \
        UNIT_LOOP(T, if (*s != *s || *s > *d) *d = *s);                                       \
    }                                                                                         \
    static void amin_##SFX(int64_t b, int64_t e, void *ctx)                                   \
    {                                                                                         \
        const idx_job *j = ctx;                                                               \
        UNIT_LOOP(T, if (*s != *s || *s < *d) *d = *s);                                       \
    }                                                                                         \
    static void (*const reduce_##SFX[4])(int64_t, int64_t, void *) = { sum_##SFX, prod_##SFX, \
                                                                       amax_##SFX, amin_##SFX };
DEFINE_REDUCE(float, f32)
DEFINE_REDUCE(double, f64)
DEFINE_REDUCE(int64_t, i64)
DEFINE_REDUCE(int32_t, i32)
DEFINE_REDUCE(int16_t, i16)
DEFINE_REDUCE(int8_t, i8)
DEFINE_REDUCE(uint8_t, u8)

typedef void (*unit_fn)(int64_t b, int64_t e, void *ctx);

static unit_fn pick(const char *op, const tg_index_exec *x)
{
    size_t es = tg_dtype_size(x->dtype);
    if (x->mode == TG_IDX_MODE_GATHER || x->red == TG_IDX_NONE) {
        bool g = x->mode == TG_IDX_MODE_GATHER;
        switch (es) {
        case 1: return g ? gather_u8 : scatter_u8;
        case 2: return g ? gather_u16 : scatter_u16;
        case 4: return g ? gather_u32 : scatter_u32;
        case 8: return g ? gather_u64 : scatter_u64;
        default: break;
        }
    } else {
        int r = x->red == TG_IDX_SUM    ? 0
                : x->red == TG_IDX_PROD ? 1
                : x->red == TG_IDX_AMAX ? 2
                                        : 3;
        switch (x->dtype) {
        case TG_FLOAT32: return reduce_f32[r];
        case TG_FLOAT64: return reduce_f64[r];
        case TG_INT64: return reduce_i64[r];
        case TG_INT32: return reduce_i32[r];
        case TG_INT16: return reduce_i16[r];
        case TG_INT8: return reduce_i8[r];
        case TG_UINT8: return reduce_u8[r];
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

#define DEFINE_DIV(T, SFX, FLOOR)                                    \
    static void div_##SFX(T *w, const T *c, int64_t n)               \
    {                                                                \
        for (int64_t i = 0; i < n; i++) {                            \
            T q = c[i] == 0 ? (T)1 : c[i];                           \
            if (FLOOR) {                                             \
                T v = w[i] / q;                                      \
                if ((w[i] % q != 0) && ((w[i] < 0) != (q < 0))) v--; \
                w[i] = v;                                            \
            } else {                                                 \
                w[i] = w[i] / q;                                     \
            }                                                        \
        }                                                            \
    }
#define DEFINE_FDIV(T, SFX)                                                   \
    static void div_##SFX(T *w, const T *c, int64_t n)                        \
    {                                                                         \
        for (int64_t i = 0; i < n; i++) w[i] = w[i] / (c[i] == 0 ? 1 : c[i]); \
    }
DEFINE_FDIV(float, f32)
DEFINE_FDIV(double, f64)
DEFINE_DIV(int64_t, i64, 1)
DEFINE_DIV(int32_t, i32, 1)
DEFINE_DIV(int16_t, i16, 1)
DEFINE_DIV(int8_t, i8, 1)
DEFINE_FDIV(uint8_t, u8)

static int cpu_divide(const char *op, tg_tensor *work, const tg_tensor *count)
{
    int64_t n = tg__numel(work);
    void *w = tg__k_data(work);
    const void *c = tg__k_data(count);
    switch (work->dtype) {
    case TG_FLOAT32: div_f32(w, c, n); break;
    case TG_FLOAT64: div_f64(w, c, n); break;
    case TG_INT64: div_i64(w, c, n); break;
    case TG_INT32: div_i32(w, c, n); break;
    case TG_INT16: div_i16(w, c, n); break;
    case TG_INT8: div_i8(w, c, n); break;
    case TG_UINT8: div_u8(w, c, n); break;
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
