/* The reduction kernels' view of their input, shared by the CPU (reduce.c) and CUDA
 * (reduce.cu) kernels: self seen as [outer, inner], dims slowest first, strides in elements,
 * size-1 dims dropped and neighbouring dims coalesced. Inner dims keep logical order for the
 * arg reductions (whose index is the row-major position among the reduced elements) unless
 * the op does not care (any_order), when they follow memory order. Plain C, also compiled as
 * C++ by nvcc; the offset functions run on the host and the device. */
#ifndef TG_REDUCE_VIEW_H
#define TG_REDUCE_VIEW_H

#include "core/core.h"
#include "tg_hd.h"

/* The accumulation kinds (mean folds like sum, std like var; the finish tells them apart). */
typedef enum rkind { R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN, R_VAR, R_STD } rkind;

typedef struct rview {
    int64_t outer_numel, inner_numel;
    int on, in;
    int64_t osz[TG_MAX_DIMS], ost[TG_MAX_DIMS];
    int64_t isz[TG_MAX_DIMS], ist[TG_MAX_DIMS];
} rview;

/* Appends a dim (size, stride), merging it into the previous (slower) dim when contiguous
 * with it. Returns the new dim count. */
static inline int tg__rv_push_dim(int64_t *sz, int64_t *st, int n, int64_t size, int64_t stride)
{
    if (n > 0 && st[n - 1] == stride * size) {
        sz[n - 1] *= size;
        st[n - 1] = stride;
        return n;
    }
    sz[n] = size;
    st[n] = stride;
    return n + 1;
}

/* reduce[d]: whether input dim d is reduced. */
static inline void tg__rv_build(rview *v, const tg_tensor *self, const bool *reduce, bool any_order)
{
    int64_t rsz[TG_MAX_DIMS], rst[TG_MAX_DIMS];
    int nr = 0;
    v->on = v->in = 0;
    v->outer_numel = v->inner_numel = 1;
    for (int64_t d = 0; d < self->ndim; d++) {
        int64_t s = self->sizes[d];
        if (reduce[d]) v->inner_numel *= s;
        else v->outer_numel *= s;
        if (s == 1) continue;
        if (reduce[d]) {
            rsz[nr] = s;
            rst[nr] = self->strides[d];
            nr++;
        } else v->on = tg__rv_push_dim(v->osz, v->ost, v->on, s, self->strides[d]);
    }
    if (any_order) { /* order-insensitive ops: walk memory in stride order (insertion sort) */
        for (int a = 1; a < nr; a++)
            for (int b = a; b > 0 && rst[b - 1] < rst[b]; b--) {
                int64_t t = rst[b];
                rst[b] = rst[b - 1];
                rst[b - 1] = t;
                t = rsz[b];
                rsz[b] = rsz[b - 1];
                rsz[b - 1] = t;
            }
    }
    for (int a = 0; a < nr; a++) v->in = tg__rv_push_dim(v->isz, v->ist, v->in, rsz[a], rst[a]);
    if (v->on == 0) {
        v->on = 1;
        v->osz[0] = 1;
        v->ost[0] = 0;
    }
    if (v->in == 0) {
        v->in = 1;
        v->isz[0] = 1;
        v->ist[0] = 0;
    }
}

/* Element offset of output element o's first reduced element. */
static inline TG_HD int64_t tg__rv_outer_offset(const rview *v, int64_t o)
{
    int64_t off = 0;
    for (int d = v->on - 1; d >= 0 && o > 0; d--) {
        off += (o % v->osz[d]) * v->ost[d];
        o /= v->osz[d];
    }
    return off;
}

/* Element offset of the j-th reduced element relative to the first. */
static inline TG_HD int64_t tg__rv_inner_offset(const rview *v, int64_t j)
{
    if (v->in == 1) return j * v->ist[0];
    int64_t off = 0;
    for (int d = v->in - 1; d >= 0 && j > 0; d--) {
        off += (j % v->isz[d]) * v->ist[d];
        j /= v->isz[d];
    }
    return off;
}

/* The strides of t seen as [outer, n, inner] around dim d (softmax, cumsum: one reduced dim),
 * in elements: false when its outer dims or its inner dims do not collapse to one stride each
 * (the caller works on a copy then). */
static inline bool tg__view3(const tg_tensor *t, int64_t d, int64_t *so, int64_t *sd, int64_t *si)
{
    *sd = t->ndim ? t->strides[d] : 1;
    *si = 1;
    *so = 1;
    /* inner dims (after d) must collapse to one stride; likewise outer dims (before d) */
    int64_t expect = -1;
    for (int64_t k = t->ndim - 1; k > d; k--) {
        if (t->sizes[k] == 1) continue;
        if (expect < 0) *si = t->strides[k];
        else if (t->strides[k] != expect) return false;
        expect = t->strides[k] * t->sizes[k];
    }
    expect = -1;
    for (int64_t k = d - 1; k >= 0; k--) {
        if (t->sizes[k] == 1) continue;
        if (expect < 0) *so = t->strides[k];
        else if (t->strides[k] != expect) return false;
        expect = t->strides[k] * t->sizes[k];
    }
    return true;
}

#endif
