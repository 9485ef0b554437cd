/* sort, topk and sort_backward: argument checks (PyTorch's messages) and the row algorithms,
 * shared by the CPU kernels (kernels/cpu/sort.c) and the CUDA kernels (kernels/cuda/sort.cu,
 * whose host code calls the checks and whose fallback kernel runs the row algorithms on the
 * device). Static inline, C11 and C++.
 *
 * Every element is ranked by a 64-bit unsigned key (tg__sort_key_*) with the element's index
 * along the sorted dim as tie-break, so one comparison orders every dtype, NaN comes after
 * every number (all NaNs equal, -0.0 equal to 0.0, as PyTorch compares them), and the order of
 * equal elements is their order in the input: every sort here is stable. Descending order
 * complements the key (NaN first) and keeps the ascending index tie-break, which is
 * PyTorch's stable descending order. Values are then copied from the input at the sorted
 * indices (bit for bit: NaN payloads and the sign of zero survive). */
#ifndef TG_SORT_CHECKS_H
#define TG_SORT_CHECKS_H

#include "tg_kutil.h"
#include <string.h>
#include "tg_hd.h"

/* One element of a row being sorted: its rank key and its index along the dim. */
typedef struct tg_sort_pair {
    uint64_t key;
    int64_t idx;
} tg_sort_pair;

/* The key of a floating value: IEEE order made unsigned (negatives complemented, the sign bit
 * set on the others), -0.0 as 0.0, every NaN the largest key. */
static inline TG_HD uint64_t tg__sort_key_f64(double v, bool descending)
{
    uint64_t k;
    if (v != v) {
        k = ~(uint64_t)0;
    } else {
        if (v == 0) v = 0.0; /* -0.0 ranks as 0.0 */
        uint64_t b;
        memcpy(&b, &v, sizeof b);
        k = (b >> 63) ? ~b : b | ((uint64_t)1 << 63);
    }
    return descending ? ~k : k;
}

/* The key of an integer (or bool) value: two's complement order made unsigned. */
static inline TG_HD uint64_t tg__sort_key_i64(int64_t v, bool descending)
{
    uint64_t k = (uint64_t)v ^ ((uint64_t)1 << 63);
    return descending ? ~k : k;
}

static inline TG_HD bool tg__sort_less(tg_sort_pair a, tg_sort_pair b)
{
    return a.key < b.key || (a.key == b.key && a.idx < b.idx);
}

/* Sorts p[0..n) by (key, idx); tmp has room for n pairs. Insertion sort for short runs, then
 * bottom-up merging between p and tmp (the result ends in p). */
static inline TG_HD void tg__sort_pairs(tg_sort_pair *p, tg_sort_pair *tmp, int64_t n)
{
    const int64_t run = 16;
    for (int64_t b = 0; b < n; b += run) {
        int64_t e = b + run < n ? b + run : n;
        for (int64_t i = b + 1; i < e; i++) {
            tg_sort_pair x = p[i];
            int64_t j = i;
            for (; j > b && tg__sort_less(x, p[j - 1]); j--) p[j] = p[j - 1];
            p[j] = x;
        }
    }
    tg_sort_pair *src = p, *dst = tmp;
    for (int64_t w = run; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = tg__sort_less(src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        tg_sort_pair *t = src;
        src = dst;
        dst = t;
    }
    if (src != p)
        for (int64_t i = 0; i < n; i++) p[i] = src[i];
}

/* Restores the max-heap (by tg__sort_less) of h[0..k) below position i. */
static inline TG_HD void tg__sort_sift_down(tg_sort_pair *h, int64_t k, int64_t i)
{
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= k) return;
        if (c + 1 < k && tg__sort_less(h[c], h[c + 1])) c++;
        if (!tg__sort_less(h[i], h[c])) return;
        tg_sort_pair t = h[i];
        h[i] = h[c];
        h[c] = t;
        i = c;
    }
}

/* Moves the k least pairs of p[0..n) (0 < k <= n) into p[0..k), in no particular order:
 * a max-heap of the k least seen so far, O(n log k) and O(1) extra memory. */
static inline TG_HD void tg__sort_select(tg_sort_pair *p, int64_t n, int64_t k)
{
    for (int64_t i = k / 2 - 1; i >= 0; i--) tg__sort_sift_down(p, k, i);
    for (int64_t i = k; i < n; i++) {
        if (tg__sort_less(p[i], p[0])) {
            p[0] = p[i];
            tg__sort_sift_down(p, k, 0);
        }
    }
}

/* topk selects with the heap when k is small beside the row, else sorts the whole row. */
static inline TG_HD bool tg__topk_use_select(int64_t k, int64_t n) { return k * 8 <= n; }

/* ------------------------------------------------------------------ checks */

/* A row view of a contiguous tensor of self's shape: outer x n x inner, the sorted dim in the
 * middle (a 0-dim tensor is one row of one element). */
typedef struct tg_sort_geom {
    int64_t d, outer, n, inner;
} tg_sort_geom;

static inline int tg__sort_geom(const char *op, const tg_tensor *self, int64_t dim, tg_sort_geom *g)
{
    g->d = tg__wrap_dim(op, dim, self->ndim > 0 ? self->ndim : 1);
    if (g->d < 0) return -1;
    g->outer = g->inner = 1;
    g->n = self->ndim > 0 ? self->sizes[g->d] : 1;
    for (int64_t i = 0; i < self->ndim; i++) {
        if (i < g->d) g->outer *= self->sizes[i];
        if (i > g->d) g->inner *= self->sizes[i];
    }
    return 0;
}

/* sort: the dim (every dtype sorts). */
static inline int tg__sort_check(const char *op, const tg_tensor *self, int64_t dim,
                                 tg_sort_geom *g)
{
    return tg__sort_geom(op, self, dim, g);
}

/* topk: the dim, then 0 <= k <= the size of dim (1 for a 0-dim tensor); bool is refused as
 * PyTorch's CPU kernel does. */
static inline int tg__topk_check(const char *op, const tg_tensor *self, int64_t k, int64_t dim,
                                 const char *kernel, tg_sort_geom *g)
{
    if (tg__sort_geom(op, self, dim, g) != 0) return -1;
    if (k < 0 || k > g->n) return tg__fail(op, "selected index k out of range");
    if (self->dtype == TG_BOOL)
        return tg__fail(op, "\"%s\" not implemented for '%s'", kernel,
                        tg__dtype_torch_name(self->dtype));
    return 0;
}

/* sort_backward: indices int64 of grad's shape, sizes agreeing with it except along dim. */
static inline int tg__sort_backward_check(const char *op, const tg_tensor *grad, int64_t dim,
                                          const tg_tensor *indices, tg_int_list sizes,
                                          tg_sort_geom *g)
{
    if (indices->dtype != TG_INT64)
        return tg__fail(op, "Expected indices to have dtype Long, but got %s",
                        tg__dtype_torch_name(indices->dtype));
    bool same = grad->ndim == indices->ndim &&
                memcmp(grad->sizes, indices->sizes, sizeof(int64_t) * (size_t)grad->ndim) == 0;
    if (!same || sizes.len != grad->ndim || sizes.len > TG_MAX_DIMS)
        return tg__fail(op, "grad, indices and sizes must have the same number of dimensions "
                            "and grad and indices the same shape");
    int64_t d = tg__wrap_dim(op, dim, sizes.len > 0 ? sizes.len : 1);
    if (d < 0) return -1;
    for (int64_t i = 0; i < sizes.len; i++)
        if (i != d && sizes.data[i] != grad->sizes[i])
            return tg__fail(op, "grad has size %lld at dimension %lld but sizes say %lld",
                            (long long)grad->sizes[i], (long long)i, (long long)sizes.data[i]);
    g->d = d;
    g->outer = g->inner = 1;
    g->n = sizes.len > 0 ? sizes.data[d] : 1;
    for (int64_t i = 0; i < sizes.len; i++) {
        if (i < d) g->outer *= sizes.data[i];
        if (i > d) g->inner *= sizes.data[i];
    }
    return 0;
}

/* The end of sort (and topk) on every backend: the values and indices, written through the
 * working copies vw and iw, go back into v and ix (the out= tensors, or new ones); the outs the
 * caller gave get a new version. Returns the results, or NULLs with v and ix released when rc
 * is not 0 or a copy fails. */
static inline tg_values_indices tg__sort_finish(const char *op, int rc, tg_tensor *v, tg_tensor *vw,
                                                tg_tensor *ix, tg_tensor *iw, bool values_given,
                                                bool indices_given)
{
    tg_values_indices r = { NULL, NULL };
    rc = tg__k_write_back(op, v, vw, rc);
    rc = tg__k_write_back(op, ix, iw, rc);
    if (rc != 0) {
        tg_release(v);
        tg_release(ix);
        return r;
    }
    if (values_given) tg__bump_version(v);
    if (indices_given) tg__bump_version(ix);
    r.values = v;
    r.indices = ix;
    return r;
}

#endif
