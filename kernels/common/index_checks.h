/* Argument checks and iteration geometry of the indexing operators (index_select, gather, the
 * scatter family, index_add), shared by the CPU kernels (kernels/cpu/index.c) and the CUDA
 * kernels (kernels/cuda/index.cu): PyTorch 1.13's messages in PyTorch's order
 * (aten/src/ATen/native/ScatterGatherChecks.h, TensorAdvancedIndexing.cpp). Static inline,
 * C and C++. Each check returns 0, or -1 with the error recorded.
 *
 * One geometry serves every operator: an iteration shape (index's for gather / scatter, the
 * result's or source's for index_select / index_add, whose 1-d index is read with stride 0
 * along every other dim), element strides of the index, of the indexed tensor ("self": read by
 * gather / index_select, written by scatter / index_add) and of the other operand (the result
 * written by gather / index_select, the src read by scatter / index_add). Element p of the
 * iteration shape pairs other[p] with self[p with coordinate `dim` replaced by index[p]].
 *
 * The kernels walk it as lines: every position of the dims other than `dim` and the inner dim
 * `kd` (the last other dim) is one line of `n` (= sizes[dim]) x `k` (= sizes[kd]) elements.
 * Lines never write the same element of their output (their coordinates off `dim` differ), so
 * they run in parallel, and within a line the index positions run in order: accumulation into
 * duplicates is deterministic. */
#ifndef TG_INDEX_CHECKS_H
#define TG_INDEX_CHECKS_H

#include "tg_kutil.h"
#include "pointwise_convert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tg_hd.h"

typedef struct tg_index_plan {
    int64_t ndim; /* >= 1 (a 0-dim operand is read as 1-d of size 1) */
    int64_t dim;  /* wrapped */
    int64_t kd;   /* the inner dim: the last dim != dim, -1 when ndim == 1 */
    int64_t sizes[TG_MAX_DIMS];
    int64_t is[TG_MAX_DIMS]; /* index strides (elements) */
    int64_t ss[TG_MAX_DIMS]; /* self strides; ss[dim] steps the index value */
    int64_t os[TG_MAX_DIMS]; /* other operand strides (0 everywhere for a scalar value) */
    int64_t bound;           /* self.size(dim): valid indices are [0, bound) */
    int64_t n, k, lines;     /* sizes[dim], sizes[kd] (1 without), the other positions */
} tg_index_plan;

/* The reduction of a scatter: scatter.src / scatter.value write (NONE); scatter_add, index_add
 * and "sum"/"add" add; and so on. */
typedef enum tg_index_reduce {
    TG_IDX_NONE,
    TG_IDX_SUM,
    TG_IDX_PROD,
    TG_IDX_MEAN,
    TG_IDX_AMAX,
    TG_IDX_AMIN
} tg_index_reduce;

/* The first element offsets of line `l`: index, self (before the index's term) and other. */
static inline TG_HD void tg__index_line(const tg_index_plan *p, int64_t l, int64_t *io, int64_t *so,
                                        int64_t *oo)
{
    int64_t a = 0, b = 0, c = 0;
    for (int64_t d = p->ndim - 1; d >= 0; d--) {
        if (d == p->dim || d == p->kd) continue;
        int64_t s = p->sizes[d], x = l % s;
        l /= s;
        a += x * p->is[d];
        b += x * p->ss[d];
        c += x * p->os[d];
    }
    *io = a;
    *so = b;
    *oo = c;
}

static inline int64_t tg__index_nonempty_dim(const tg_tensor *t) { return t->ndim ? t->ndim : 1; }
static inline int64_t tg__index_size(const tg_tensor *t, int64_t d)
{
    return t->ndim ? t->sizes[d] : 1;
}
static inline int64_t tg__index_stride(const tg_tensor *t, int64_t d)
{
    return t->ndim ? t->strides[d] : 0;
}

/* Fills the counts and the inner dim of a plan whose ndim, dim and sizes are set. */
/* A plan's start: zeroed, ndim dims, along the wrapped dim wd. */
static inline void tg__index_plan_start(tg_index_plan *p, int64_t ndim, int64_t wd)
{
    memset(p, 0, sizeof *p);
    p->ndim = ndim;
    p->dim = wd;
}

/* A plan's end, its sizes and strides set: self's size along dim bounds the index values. */
static inline void tg__index_plan_finish(tg_index_plan *p, const tg_tensor *self)
{
    p->bound = tg__index_size(self, p->dim);
    p->kd = -1;
    for (int64_t d = p->ndim - 1; d >= 0; d--)
        if (d != p->dim) {
            p->kd = d;
            break;
        }
    p->n = p->sizes[p->dim];
    p->k = p->kd >= 0 ? p->sizes[p->kd] : 1;
    int64_t lines = 1;
    for (int64_t d = 0; d < p->ndim; d++)
        if (d != p->dim && d != p->kd) lines *= p->sizes[d];
    p->lines = lines;
}

static inline int64_t tg__index_plan_numel(const tg_index_plan *p)
{
    return p->lines * p->n * p->k;
}

/* ------------------------------------------------------------------ gather / scatter */

/* gather(self, dim, index): checks, then the plan with `result` as the other operand (result
 * may be NULL for the checks alone: os is filled from index's contiguous strides). */
static inline int tg__gather_check(const char *op, const tg_tensor *self, int64_t dim,
                                   const tg_tensor *index, tg_index_plan *p)
{
    int64_t wd = tg__wrap_dim(op, dim, self->ndim);
    if (wd < 0) return -1;
    memset(p, 0, sizeof *p);
    p->dim = wd;
    if (tg__numel(index) != 0 && index->dtype != TG_INT64)
        return tg__fail(op, "gather(): Expected dtype int64 for index");
    if (tg__numel(index) == 0) return 0;
    int64_t nd = tg__index_nonempty_dim(self);
    if (nd != tg__index_nonempty_dim(index))
        return tg__fail(op, "Index tensor must have the same number of dimensions as input tensor");
    for (int64_t d = 0; d < nd; d++)
        if (d != wd && tg__index_size(index, d) > tg__index_size(self, d)) {
            char s1[256], s2[256];
            return tg__fail(op,
                            "Size does not match at dimension %lld expected index %s to be smaller "
                            "than self %s apart from dimension %lld",
                            (long long)d, tg__shape_str(s1, sizeof s1, index->sizes, index->ndim),
                            tg__shape_str(s2, sizeof s2, self->sizes, self->ndim), (long long)wd);
        }
    return 0;
}

/* scatter-style checks (src NULL for scatter.value): dtypes, dims, sizes, PyTorch's order. */
static inline int tg__scatter_check(const char *op, const char *method, const tg_tensor *self,
                                    int64_t dim, const tg_tensor *index, const tg_tensor *src,
                                    int64_t *wd_out)
{
    int64_t wd = tg__wrap_dim(op, dim, self->ndim);
    if (wd < 0) return -1;
    *wd_out = wd;
    if (tg__numel(index) != 0 && index->dtype != TG_INT64)
        return tg__fail(op, "%s(): Expected dtype int64 for index", method);
    if (src && self->dtype != src->dtype)
        return tg__fail(op, "%s(): Expected self.dtype to be equal to src.dtype", method);
    if (tg__numel(index) == 0) return 0;
    int64_t nd = tg__index_nonempty_dim(self);
    if (nd != tg__index_nonempty_dim(index))
        return tg__fail(op, "Index tensor must have the same number of dimensions as self tensor");
    if (src && tg__index_nonempty_dim(src) != tg__index_nonempty_dim(index))
        return tg__fail(op, "Index tensor must have the same number of dimensions as src tensor");
    bool wrong = false;
    for (int64_t d = 0; d < nd && !wrong; d++)
        wrong = (d != wd && tg__index_size(index, d) > tg__index_size(self, d)) ||
                (src && tg__index_size(index, d) > tg__index_size(src, d));
    if (wrong) {
        char s1[256], s2[256], s3[256];
        tg__shape_str(s1, sizeof s1, index->sizes, index->ndim);
        tg__shape_str(s2, sizeof s2, self->sizes, self->ndim);
        if (src)
            return tg__fail(op,
                            "Expected index %s to be smaller than self %s apart from dimension "
                            "%lld and to be smaller size than src %s",
                            s1, s2, (long long)wd,
                            tg__shape_str(s3, sizeof s3, src->sizes, src->ndim));
        return tg__fail(op,
                        "Expected index %s to be smaller than self %s apart from dimension %lld",
                        s1, s2, (long long)wd);
    }
    return 0;
}

/* The plan of gather (self read, other = result) or scatter (self written, other = src, NULL
 * for a value): the iteration shape is index's. */
static inline void tg__index_plan_sg(tg_index_plan *p, int64_t wd, const tg_tensor *self,
                                     const tg_tensor *index, const tg_tensor *other)
{
    tg__index_plan_start(p, tg__index_nonempty_dim(index), wd);
    for (int64_t d = 0; d < p->ndim; d++) {
        p->sizes[d] = tg__index_size(index, d);
        p->is[d] = tg__index_stride(index, d);
        p->ss[d] = tg__index_stride(self, d);
        p->os[d] = other ? tg__index_stride(other, d) : 0;
    }
    tg__index_plan_finish(p, self);
}

/* ------------------------------------------------------------------ index_select / index_add */

/* index_select(self, dim, index): index int64 or int32, at most 1-d. */
static inline int tg__index_select_check(const char *op, const tg_tensor *self, int64_t dim,
                                         const tg_tensor *index, int64_t *wd_out)
{
    int64_t wd = tg__wrap_dim(op, dim, self->ndim);
    if (wd < 0) return -1;
    *wd_out = wd;
    if (index->ndim > 1) return tg__fail(op, "index_select(): Index is supposed to be a vector");
    if (index->dtype != TG_INT64 && index->dtype != TG_INT32)
        return tg__fail(op, "index_select(): Expected dtype int32 or int64 for index");
    if (self->ndim == 0 && tg__numel(index) != 1)
        return tg__fail(op,
                        "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                        (long long)tg__numel(index));
    return 0;
}

/* The result's shape: self's with size(dim) = index.numel() (0-dim self stays 0-dim). */
static inline int64_t tg__index_select_shape(const tg_tensor *self, int64_t wd,
                                             const tg_tensor *index, int64_t *sizes)
{
    for (int64_t d = 0; d < self->ndim; d++) sizes[d] = self->sizes[d];
    if (self->ndim) sizes[wd] = tg__numel(index);
    return self->ndim;
}

/* index_add(self, dim, index, source): PyTorch's index_add meta checks. */
static inline int tg__index_add_check(const char *op, const tg_tensor *self, int64_t dim,
                                      const tg_tensor *index, const tg_tensor *source,
                                      int64_t *wd_out)
{
    int64_t wd = tg__wrap_dim(op, dim, self->ndim);
    if (wd < 0) return -1;
    *wd_out = wd;
    char s1[256];
    if (index->ndim > 1)
        return tg__fail(op,
                        "index_add_(): Index is supposed to be a vector, but got dim: %lld with "
                        "type: %s and size: %s",
                        (long long)index->ndim, tg__dtype_torch_name(index->dtype),
                        tg__shape_str(s1, sizeof s1, index->sizes, index->ndim));
    if (index->dtype != TG_INT64 && index->dtype != TG_INT32)
        return tg__fail(op, "index_add_(): Expected dtype int32/int64 for index but got: %s",
                        tg__dtype_torch_name(index->dtype));
    if (self->dtype != source->dtype)
        return tg__fail(op,
                        "index_add_(): self (%s) and source (%s) must have the same scalar type",
                        tg__dtype_torch_name(self->dtype), tg__dtype_torch_name(source->dtype));
    if (source->ndim > 0 && source->ndim != tg__index_nonempty_dim(self))
        return tg__fail(op, "index_add_(): source and self must have the same number of "
                            "dimensions");
    int64_t ns = source->ndim > 0 ? source->sizes[wd] : 1;
    if (tg__numel(index) != ns)
        return tg__fail(op,
                        "index_add_(): Number of indices (%lld) should be equal to "
                        "source.size(dim): (%lld), for dim: %lld",
                        (long long)tg__numel(index), (long long)ns, (long long)wd);
    /* the slices off dim must match (PyTorch compares them as broadcast shapes) */
    if (source->ndim > 0 && self->ndim > 0) {
        int64_t j = 0;
        for (int64_t d = 0; d < self->ndim; d++) {
            if (d == wd) continue;
            if (self->sizes[d] != source->sizes[d])
                return tg__fail(op,
                                "The size of tensor a (%lld) must match the size of tensor b "
                                "(%lld) at non-singleton dimension %lld",
                                (long long)self->sizes[d], (long long)source->sizes[d],
                                (long long)j);
            j++;
        }
    } else if (source->ndim == 0 && self->ndim > 1) {
        return tg__fail(op, "index_add_(): a 0-dim source needs a self of at most 1 dim");
    }
    return 0;
}

/* The plan of index_select (self read, other = result) or index_add (self written, other =
 * source): the iteration shape is other's (a 0-dim other reads as 1-d of size 1); the 1-d
 * index steps only along dim. */
static inline void tg__index_plan_1d(tg_index_plan *p, int64_t wd, const tg_tensor *self,
                                     const tg_tensor *index, const tg_tensor *other)
{
    tg__index_plan_start(p, tg__index_nonempty_dim(self), wd);
    for (int64_t d = 0; d < p->ndim; d++) {
        p->sizes[d] = d == wd ? tg__numel(index) : tg__index_size(self, d);
        p->is[d] = d == wd ? (index->ndim ? index->strides[0] : 0) : 0;
        p->ss[d] = tg__index_stride(self, d);
        p->os[d] = other->ndim ? other->strides[d] : 0;
    }
    tg__index_plan_finish(p, self);
}

/* ------------------------------------------------------------------ bounds */

/* The index values (contiguous host memory, n of them, int64 or int32) all in [0, bound)?
 * Otherwise records the error for the first one: PyTorch's gather/scatter message
 * (`select` false) or index_select/index_add's "index out of range in self". */
static inline int tg__index_bounds(const char *op, const void *vals, tg_dtype dt, int64_t n,
                                   int64_t bound, int64_t dim, bool select)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = dt == TG_INT32 ? ((const int32_t *)vals)[i] : ((const int64_t *)vals)[i];
        if (v < 0 || v >= bound) {
            if (select) return tg__fail(op, "index out of range in self");
            return tg__fail(op, "index %lld is out of bounds for dimension %lld with size %lld",
                            (long long)v, (long long)dim, (long long)bound);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ reductions */

/* scatter.reduce's "add" / "multiply". */
static inline int tg__scatter_reduce_old(const char *op, const char *reduce, tg_index_reduce *r)
{
    if (reduce && strcmp(reduce, "add") == 0) *r = TG_IDX_SUM;
    else if (reduce && strcmp(reduce, "multiply") == 0) *r = TG_IDX_PROD;
    else return tg__fail(op, "reduce argument must be either add or multiply.");
    return 0;
}

/* scatter_reduce.two's "sum", "prod", "mean", "amax", "amin". */
static inline int tg__scatter_reduce_two(const char *op, const char *reduce, tg_index_reduce *r)
{
    static const char *const names[] = { "sum", "prod", "mean", "amax", "amin" };
    for (int i = 0; reduce && i < 5; i++)
        if (strcmp(reduce, names[i]) == 0) {
            *r = (tg_index_reduce)(TG_IDX_SUM + i);
            return 0;
        }
    return tg__fail(op, "reduce argument must be either sum, prod, mean, amax or amin.");
}

/* ------------------------------------------------------------------ the shared flow
 * The kernels' common steps, device-independent: checks, the written operand, the index made
 * contiguous int64 and bounds-checked before anything is written, operands converted to the
 * compute dtype, then the device's engine. A device supplies three functions. */

/* One engine run over a plan. mode GATHER: other[p] = self[idx]; otherwise self[idx] is
 * combined with other[p] by `red` (NONE: overwritten; SUM: += alpha * other). */
typedef enum tg_index_mode { TG_IDX_MODE_GATHER, TG_IDX_MODE_SCATTER } tg_index_mode;
typedef struct tg_index_exec {
    const tg_index_plan *p;
    const int64_t *idx; /* contiguous int64 index data (device memory for CUDA) */
    char *self;         /* data pointers at the tensors' first elements */
    char *other;
    tg_dtype dtype; /* of self and other */
    tg_index_mode mode;
    tg_index_reduce red;
    double alpha;
} tg_index_exec;

typedef struct tg_index_backend {
    /* runs x on the device of `dev`; 0 or -1 + error */
    int (*run)(const char *op, const tg_index_exec *x, tg_device dev);
    /* tg__index_bounds on idx's values (contiguous int64, on the device); 0 or -1 + error */
    int (*bounds)(const char *op, const tg_tensor *idx, int64_t bound, int64_t dim, bool select);
    /* work (contiguous) /= count (contiguous, same dtype), count 0 read as 1, floor division
     * for integers; 0 or -1 + error */
    int (*divide)(const char *op, tg_tensor *work, const tg_tensor *count);
} tg_index_backend;

#ifdef __cplusplus
extern "C" {
#endif

/* gather (one_d false) or index_select (one_d true) into out (NULL: allocated), through the
 * device's engine `be`. A new reference, or NULL with the error recorded. */
tg_tensor *tg__index_gather_flow(const char *op, const tg_index_backend *be, tg_tensor *self,
                                 int64_t wd, tg_tensor *index, bool one_d, tg_tensor *out);

/* The scatter family into out (NULL: allocated; self: in place): scatter (src or value),
 * scatter_add, scatter_reduce (red, include_self), index_add (one_d, alpha), index_fill and
 * index_copy, through the device's engine `be`. A new reference, or NULL + error. */
tg_tensor *tg__index_scatter_flow(const char *op, const tg_index_backend *be, tg_tensor *self,
                                  int64_t wd, tg_tensor *index, tg_tensor *src, double value,
                                  tg_index_reduce red, bool include_self, double alpha, bool one_d,
                                  tg_tensor *out);

/* The (count, ndim) int64 coordinates of x's nonzero elements, on the CPU, for a contiguous
 * CPU x. NULL + error. */
tg_tensor *tg__nonzero_host(const char *op, const tg_tensor *x);

#ifdef __cplusplus
}
#endif

#endif
