/* sort.values_stable, topk.values and sort_backward on the CPU.
 *
 * self is read through its strides as rows along the sorted dim (sort_checks.h's geometry:
 * outer x n x inner); each row becomes (key, index) pairs, which are merge-sorted (sort, and
 * topk with k large beside n) or heap-selected then sorted (topk with k * 8 <= n: O(n log k),
 * the GPT sampler's topk(logits, 40) over 50257 logits). Rows are split across OpenMP threads
 * (tg__parallel_for), each chunk with its own scratch of 2n pairs. The outputs are written
 * contiguous (outer x k x inner); a non-contiguous out= tensor receives a copy. */
#include <stdlib.h>

#include "pointwise_convert.h"
#include "kernels/sort.h"
#include "kernels/sort_backward.h"
#include "kernels/topk.h"
#include "sort_checks.h"

typedef struct sort_job {
    const tg_tensor *self;
    const char *x; /* self's first element */
    int64_t xs;    /* self's stride along the dim, in elements */
    int64_t es;    /* element size in bytes */
    tg_sort_geom g;
    int64_t k;       /* elements kept per row (n for sort) */
    bool descending; /* keys complemented */
    bool select;     /* heap-select k first */
    char *vals;      /* outer x k x inner, contiguous */
    int64_t *idx;
    int failed; /* a chunk could not allocate its scratch */
} sort_job;

/* Key of element j of the row at base. */
static inline uint64_t key_at(const char *p, tg_dtype dt, bool desc)
{
    switch (dt) {
    case TG_FLOAT32: return tg__sort_key_f64(*(const float *)p, desc);
    case TG_FLOAT64: return tg__sort_key_f64(*(const double *)p, desc);
    case TG_INT64: return tg__sort_key_i64(*(const int64_t *)p, desc);
    case TG_INT32: return tg__sort_key_i64(*(const int32_t *)p, desc);
    default:
        return tg_dtype_is_floating(dt) ? tg__sort_key_f64(tg__pw_load_f64(p, dt), desc)
                                        : tg__sort_key_i64(tg__pw_load_i64(p, dt), desc);
    }
}

static void sort_rows(int64_t b, int64_t e, void *ctx)
{
    sort_job *j = ctx;
    const tg_sort_geom *g = &j->g;
    tg_sort_pair *p = malloc(sizeof(tg_sort_pair) * (size_t)(2 * g->n));
    if (!p) {
#pragma omp atomic write
        j->failed = 1;
        return;
    }
    tg_sort_pair *tmp = p + g->n;
    tg_dtype dt = j->self->dtype;
    for (int64_t r = b; r < e; r++) {
        int64_t o = r / g->inner, i = r % g->inner;
        const char *base = j->x + tg__k_offset(j->self, o * g->n * g->inner + i) * j->es;
        int64_t step = j->xs * j->es;
        for (int64_t t = 0; t < g->n; t++) {
            p[t].key = key_at(base + t * step, dt, j->descending);
            p[t].idx = t;
        }
        int64_t m = g->n;
        if (j->select) {
            tg__sort_select(p, g->n, j->k);
            m = j->k;
        }
        tg__sort_pairs(p, tmp, m);
        for (int64_t t = 0; t < j->k; t++) {
            int64_t at = (o * j->k + t) * g->inner + i;
            j->idx[at] = p[t].idx;
            memcpy(j->vals + at * j->es, base + p[t].idx * step, (size_t)j->es);
        }
    }
    free(p);
}

/* The shared body: outputs of self's shape with k along the dim, filled by sort_rows. */
static tg_values_indices sort_common(const char *op, tg_tensor *self, const tg_sort_geom *g,
                                     int64_t k, bool descending, bool select, tg_tensor *values,
                                     tg_tensor *indices)
{
    tg_values_indices r = { NULL, NULL };
    int64_t sizes[TG_MAX_DIMS];
    for (int64_t i = 0; i < self->ndim; i++) sizes[i] = i == g->d ? k : self->sizes[i];
    tg_tensor *v = tg__k_prepare_out(op, values, sizes, self->ndim, self->dtype);
    if (!v) return r;
    tg_tensor *ix = tg__k_prepare_out(op, indices, sizes, self->ndim, TG_INT64);
    if (!ix) {
        tg_release(v);
        return r;
    }
    /* a non-contiguous out= tensor is filled from a contiguous result */
    tg_tensor *vw = tg__is_contiguous(v)
                        ? tg_retain(v)
                        : tg__empty(op, sizes, self->ndim, self->dtype, TG_DEVICE_CPU);
    tg_tensor *iw = tg__is_contiguous(ix)
                        ? tg_retain(ix)
                        : tg__empty(op, sizes, self->ndim, TG_INT64, TG_DEVICE_CPU);
    int rc = vw && iw ? 0 : -1;
    if (rc == 0 && k > 0 && g->outer * g->inner > 0) {
        sort_job j = { self,
                       tg__k_data(self),
                       self->ndim > 0 ? self->strides[g->d] : 0,
                       (int64_t)tg_dtype_size(self->dtype),
                       *g,
                       k,
                       descending,
                       select,
                       tg__k_data(vw),
                       (int64_t *)(void *)tg__k_data(iw),
                       0 };
        int64_t rows = g->outer * g->inner;
        int64_t grain = tg__grain_size() / (g->n > 0 ? g->n : 1);
        tg__parallel_for(rows, grain > 0 ? grain : 1, sort_rows, &j);
        if (j.failed) rc = tg__fail(op, "out of memory");
    }
    return tg__sort_finish(op, rc, v, vw, ix, iw, values != NULL, indices != NULL);
}

/* self any shape and dtype; stable or not, the sort is stable (sort_checks.h). */
tg_values_indices tg__cpu_sort_stable_out(tg_tensor *self, tg_opt_bool stable, int64_t dim,
                                          bool descending, tg_tensor *values, tg_tensor *indices)
{
    (void)stable;
    tg_sort_geom g;
    if (tg__sort_check("sort", self, dim, &g) != 0) return (tg_values_indices){ NULL, NULL };
    return sort_common("sort", self, &g, g.n, descending, false, values, indices);
}

/* The k largest (smallest) along dim, in order whatever `sorted` says. */
tg_values_indices tg__cpu_topk_out(tg_tensor *self, int64_t k, int64_t dim, bool largest,
                                   bool sorted, tg_tensor *values, tg_tensor *indices)
{
    (void)sorted;
    tg_sort_geom g;
    if (tg__topk_check("topk", self, k, dim, "topk_cpu", &g) != 0)
        return (tg_values_indices){ NULL, NULL };
    return sort_common("topk", self, &g, k, largest, k > 0 && tg__topk_use_select(k, g.n), values,
                       indices);
}

/* Zeros of `sizes` (grad's dtype) with grad scattered along dim to indices. */
tg_tensor *tg__cpu_sort_backward(tg_tensor *grad, int64_t dim, tg_tensor *indices,
                                 tg_int_list sizes)
{
    const char *op = "sort_backward";
    tg_sort_geom g;
    if (tg__sort_backward_check(op, grad, dim, indices, sizes, &g) != 0) return NULL;
    tg_tensor *out = tg__empty(op, sizes.data, sizes.len, grad->dtype, TG_DEVICE_CPU);
    if (!out) return NULL;
    int64_t es = (int64_t)tg_dtype_size(grad->dtype);
    char *ob = tg__k_data(out);
    memset(ob, 0, (size_t)(tg__numel(out) * es));
    int64_t m = grad->ndim > 0 ? grad->sizes[g.d] : 1, total = tg__numel(grad);
    const char *gb = tg__k_data(grad);
    const int64_t *ib = (const int64_t *)(const void *)tg__k_data(indices);
    bool gc = tg__is_contiguous(grad), ic = tg__is_contiguous(indices);
    for (int64_t e = 0; e < total; e++) {
        int64_t t = ib[ic ? e : tg__k_offset(indices, e)];
        if (t < 0 || t >= g.n) {
            tg_release(out);
            return tg__error(op, "index %lld is out of bounds for dimension %lld with size %lld",
                             (long long)t, (long long)g.d, (long long)g.n);
        }
        int64_t o = e / (m * g.inner), i = e % g.inner;
        memcpy(ob + ((o * g.n + t) * g.inner + i) * es, gb + (gc ? e : tg__k_offset(grad, e)) * es,
               (size_t)es);
    }
    return out;
}
