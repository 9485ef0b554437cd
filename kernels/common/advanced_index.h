/* The host-side plan of advanced indexing (index.Tensor, index_put_), shared by the CPU kernels
 * (kernels/cpu/advanced_index.c) and the CUDA kernels (kernels/cuda/advanced_index.cu), with
 * PyTorch 1.13's checks and messages (aten/src/ATen/native/IndexingUtils.h,
 * TensorAdvancedIndexing.cpp). Static inline, C and C++.
 *
 * self[indices] is laid out as three nested ranges: A positions of the self dims placed before
 * the index block, P positions of the broadcast index shape, B positions of the self dims
 * after it. Element (a, p, b) of the result (row-major [A, P, B], i.e. the result's shape
 * flattened in that order) is self's element at aoff[a] + poff[p] + boff[b] (offsets in
 * elements from self's first element). When the indexed dims are adjacent, A covers the
 * non-indexed dims before them and B those after; otherwise the index shape goes first (A = 1)
 * and B covers every non-indexed dim (numpy's rule).
 *
 * Index values are read on the host (device indices and masks are copied back first), wrapped
 * when negative and bounds-checked while poff is built: nothing is read or written with a bad
 * index on either device. Bool / uint8 masks become the coordinates of their nonzero elements
 * (tg__nonzero_host), one index column per mask dim. */
#ifndef TG_ADVANCED_INDEX_H
#define TG_ADVANCED_INDEX_H

#include "tg_kutil.h"
#include "index_checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tg_adv_plan {
    int64_t A, P, B;
    int64_t *buf;                /* malloc'd: aoff (A), poff (P), boff (B), one block */
    int64_t *aoff, *poff, *boff; /* into buf */
    bool b_unit;                 /* boff[b] == b: the after dims are one contiguous run */
    int64_t ndim;                /* the result's shape */
    int64_t sizes[TG_MAX_DIMS];
} tg_adv_plan;

static inline void tg__adv_plan_free(tg_adv_plan *pl)
{
    free(pl->buf);
    pl->buf = NULL;
}

/* "[2, 3]" into buf (PyTorch's shape text). */
static inline const char *tg__adv_shape_str(char *buf, size_t cap, const int64_t *s, int64_t n)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int64_t i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, i ? ", %lld" : "%lld", (long long)s[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

/* A contiguous CPU copy of t in dtype dt (a new reference when t already is one). */
static inline tg_tensor *tg__adv_host(const char *op, const tg_tensor *t, tg_dtype dt)
{
    if (t->device.type == TG_CPU && t->dtype == dt && tg__is_contiguous(t))
        return tg_retain((tg_tensor *)t);
    tg_tensor *h = tg__empty(op, t->sizes, t->ndim, dt, TG_DEVICE_CPU);
    if (h && tg__copy_into(op, h, t) != 0) {
        tg_release(h);
        h = NULL;
    }
    return h;
}

/* One index of one self dim: int64 host values with their shape and strides (elements). */
typedef struct tg_adv_col {
    const int64_t *v;
    int64_t ndim;
    int64_t sizes[TG_MAX_DIMS], strides[TG_MAX_DIMS];
} tg_adv_col;

/* The plan's work: host copies it makes go to hold[*nhold] (released by the caller). */
static inline int tg__adv_plan_fill(const char *op, const tg_tensor *self, tg_tensor_list indices,
                                    tg_adv_plan *pl, tg_tensor **hold, int *nhold_out)
{
    int64_t nd = self->ndim, used = 0, ntensors = 0;
    for (int64_t i = 0; i < indices.len; i++) {
        const tg_tensor *t = indices.data[i];
        if (!t) {
            used++;
            continue;
        }
        tg_dtype dt = t->dtype;
        if (dt != TG_INT64 && dt != TG_INT32 && dt != TG_BOOL && dt != TG_UINT8)
            return tg__fail(op, "tensors used as indices must be long, int, byte or bool tensors");
        if (t->device.type != self->device.type && t->device.type != TG_CPU)
            return tg__fail(op,
                            "indices should be either on cpu or on the same device as the "
                            "indexed tensor (%s)",
                            self->device.type == TG_CPU ? "cpu" : "cuda");
        bool mask = dt == TG_BOOL || dt == TG_UINT8;
        if (mask && t->ndim == 0)
            return tg__fail(op, "a 0-dim bool index is not supported (use unsqueeze)");
        used += mask ? t->ndim : 1;
        ntensors++;
    }
    /* An autograd node gives its saved indices back after backward as { NULL, 0 }: a second
     * backward through it must fail, not index nothing (PyTorch fails on no tensor too). */
    if (!indices.data)
        return tg__fail(op, "Trying to backward through the graph a second time (or directly "
                            "access saved tensors after they have already been freed): the "
                            "indices are gone; specify retain_graph to backward twice");
    if (ntensors == 0) return tg__fail(op, "at least one of the indices must be a tensor");
    if (used > nd)
        return tg__fail(op, "too many indices for tensor of dimension %lld", (long long)nd);

    /* per self dim: its column (NULL: not indexed); masks checked and expanded */
    tg_adv_col cols[TG_MAX_DIMS];
    bool indexed[TG_MAX_DIMS] = { false };
    int64_t d = 0;
    for (int64_t i = 0; i < indices.len; i++) {
        const tg_tensor *t = indices.data[i];
        if (!t) {
            d++;
            continue;
        }
        if (t->dtype == TG_BOOL || t->dtype == TG_UINT8) {
            for (int64_t j = 0; j < t->ndim; j++)
                if (t->sizes[j] != self->sizes[d + j]) {
                    tg__error(op,
                              "The shape of the mask [%lld] at index %lld does not match the shape "
                              "of the indexed tensor [%lld] at index %lld",
                              (long long)t->sizes[j], (long long)j, (long long)self->sizes[d + j],
                              (long long)(d + j));
                    return -1;
                }
            tg_tensor *h = tg__adv_host(op, t, t->dtype);
            if (!h) return -1;
            hold[(*nhold_out)++] = h;
            tg_tensor *nz = tg__nonzero_host(op, h);
            if (!nz) return -1;
            hold[(*nhold_out)++] = nz;
            for (int64_t j = 0; j < t->ndim; j++, d++) {
                tg_adv_col *c = &cols[d];
                c->v = (const int64_t *)tg__k_data(nz) + j;
                c->ndim = 1;
                c->sizes[0] = nz->sizes[0];
                c->strides[0] = t->ndim;
                indexed[d] = true;
            }
        } else {
            tg_tensor *h = tg__adv_host(op, t, TG_INT64);
            if (!h) return -1;
            hold[(*nhold_out)++] = h;
            tg_adv_col *c = &cols[d];
            c->v = (const int64_t *)tg__k_data(h);
            c->ndim = h->ndim;
            for (int64_t j = 0, s = 1; j < h->ndim; j++) {
                c->sizes[h->ndim - 1 - j] = h->sizes[h->ndim - 1 - j];
                c->strides[h->ndim - 1 - j] = s;
                s *= h->sizes[h->ndim - 1 - j];
            }
            indexed[d] = true;
            d++;
        }
    }

    /* broadcast the index shapes (right-aligned) */
    int64_t bnd = 0, bs[TG_MAX_DIMS];
    for (int64_t k = 0; k < nd; k++)
        if (indexed[k] && cols[k].ndim > bnd) bnd = cols[k].ndim;
    for (int64_t j = 0; j < bnd; j++) bs[j] = 1;
    for (int64_t k = 0; k < nd; k++) {
        if (!indexed[k]) continue;
        const tg_adv_col *c = &cols[k];
        for (int64_t j = 0; j < c->ndim; j++) {
            int64_t s = c->sizes[j], *o = &bs[bnd - c->ndim + j];
            if (s == *o || s == 1) continue;
            if (*o == 1) {
                *o = s;
                continue;
            }
            char msg[1024];
            size_t n = (size_t)snprintf(msg, sizeof msg,
                                        "shape mismatch: indexing tensors could "
                                        "not be broadcast together with shapes ");
            for (int64_t q = 0, first = 1; q < nd && n < sizeof msg; q++) {
                if (!indexed[q]) continue;
                char sb[256];
                n +=
                    (size_t)snprintf(msg + n, sizeof msg - n, "%s%s", first ? "" : ", ",
                                     tg__adv_shape_str(sb, sizeof sb, cols[q].sizes, cols[q].ndim));
                first = 0;
            }
            tg__error(op, "%s", msg);
            return -1;
        }
    }

    /* where the index block goes */
    int64_t first = -1, last = -1, nidx = 0;
    for (int64_t k = 0; k < nd; k++)
        if (indexed[k]) {
            if (first < 0) first = k;
            last = k;
            nidx++;
        }
    bool adjacent = nidx > 0 && last - first + 1 == nidx;
    int64_t adims[TG_MAX_DIMS], na = 0, bdims[TG_MAX_DIMS], nb = 0;
    for (int64_t k = 0; k < nd; k++) {
        if (indexed[k]) continue;
        if (adjacent && k < first) adims[na++] = k;
        else bdims[nb++] = k;
    }
    pl->ndim = 0;
    for (int64_t k = 0; k < na; k++) pl->sizes[pl->ndim++] = self->sizes[adims[k]];
    for (int64_t j = 0; j < bnd; j++) pl->sizes[pl->ndim++] = bs[j];
    for (int64_t k = 0; k < nb; k++) pl->sizes[pl->ndim++] = self->sizes[bdims[k]];
    if (pl->ndim > TG_MAX_DIMS) {
        tg__error(op, "the result would have more than %d dims", TG_MAX_DIMS);
        return -1;
    }
    pl->A = pl->P = pl->B = 1;
    for (int64_t k = 0; k < na; k++) pl->A *= self->sizes[adims[k]];
    for (int64_t j = 0; j < bnd; j++) pl->P *= bs[j];
    for (int64_t k = 0; k < nb; k++) pl->B *= self->sizes[bdims[k]];
    pl->buf = (int64_t *)malloc(sizeof(int64_t) * (size_t)(pl->A + pl->P + pl->B + 1));
    if (!pl->buf) {
        tg__error(op, "out of memory");
        return -1;
    }
    pl->aoff = pl->buf;
    pl->poff = pl->buf + pl->A;
    pl->boff = pl->poff + pl->P;

    /* the offsets of the before / after positions (row-major over their dims) */
    for (int64_t a = 0; a < pl->A; a++) {
        int64_t r = a, o = 0;
        for (int64_t k = na - 1; k >= 0; k--) {
            int64_t s = self->sizes[adims[k]];
            o += (r % s) * self->strides[adims[k]];
            r /= s;
        }
        pl->aoff[a] = o;
    }
    pl->b_unit = true;
    for (int64_t b = 0; b < pl->B; b++) {
        int64_t r = b, o = 0;
        for (int64_t k = nb - 1; k >= 0; k--) {
            int64_t s = self->sizes[bdims[k]];
            o += (r % s) * self->strides[bdims[k]];
            r /= s;
        }
        pl->boff[b] = o;
        if (o != b) pl->b_unit = false;
    }
    /* the index positions: each dim's value wrapped, checked, times its stride */
    for (int64_t p = 0; p < pl->P; p++) pl->poff[p] = 0;
    for (int64_t k = 0; k < nd; k++) {
        if (!indexed[k]) continue;
        const tg_adv_col *c = &cols[k];
        int64_t size = self->sizes[k], st = self->strides[k], off = bnd - c->ndim;
        for (int64_t p = 0; p < pl->P; p++) {
            int64_t r = p, e = 0;
            for (int64_t j = bnd - 1; j >= 0; j--) {
                int64_t x = r % bs[j];
                r /= bs[j];
                if (j >= off && c->sizes[j - off] != 1) e += x * c->strides[j - off];
            }
            int64_t v = c->v[e];
            if (v < -size || v >= size) {
                tg__error(op, "index %lld is out of bounds for dimension %lld with size %lld",
                          (long long)v, (long long)k, (long long)size);
                return -1;
            }
            pl->poff[p] += (v < 0 ? v + size : v) * st;
        }
    }
    return 0;
}

/* Builds the plan of self[indices]; 0, or -1 with the error recorded (nothing allocated). */
static inline int tg__adv_plan_build(const char *op, const tg_tensor *self, tg_tensor_list indices,
                                     tg_adv_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    tg_tensor *hold[2 * TG_MAX_DIMS];
    int nhold = 0;
    int rc = tg__adv_plan_fill(op, self, indices, pl, hold, &nhold);
    for (int i = 0; i < nhold; i++) tg_release(hold[i]);
    if (rc != 0) tg__adv_plan_free(pl);
    return rc;
}

/* index_put_'s values: same dtype as self (PyTorch's check), broadcastable to the indexing
 * result's shape; returns a contiguous copy of values expanded to that shape, on self's
 * device, in the plan's [A, P, B] order (a new reference; NULL + error). */
static inline tg_tensor *tg__adv_values(const char *op, const tg_tensor *self,
                                        const tg_tensor *values, const tg_adv_plan *pl)
{
    if (values->dtype != self->dtype)
        return (tg_tensor *)tg__error(
            op,
            "Index put requires the source and destination dtypes match, got %s for the "
            "destination and %s for the source.",
            tg__dtype_torch_name(self->dtype), tg__dtype_torch_name(values->dtype));
    bool ok = values->ndim <= pl->ndim;
    for (int64_t j = 0; ok && j < values->ndim; j++) {
        int64_t v = values->sizes[values->ndim - 1 - j], r = pl->sizes[pl->ndim - 1 - j];
        if (v != 1 && v != r) ok = false;
    }
    if (!ok) {
        char a[256], b[256];
        return (tg_tensor *)tg__error(
            op,
            "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
            tg__adv_shape_str(a, sizeof a, values->sizes, values->ndim),
            tg__adv_shape_str(b, sizeof b, pl->sizes, pl->ndim));
    }
    bool same = values->ndim == pl->ndim && values->device.type == self->device.type &&
                values->device.index == self->device.index && tg__is_contiguous(values) &&
                values->storage != self->storage; /* read while self is written: no alias */
    for (int64_t j = 0; same && j < pl->ndim; j++) same = values->sizes[j] == pl->sizes[j];
    if (same) return tg_retain((tg_tensor *)values); /* already the [A, P, B] layout */
    tg_tensor *v = tg__empty(op, pl->sizes, pl->ndim, self->dtype, self->device);
    if (v && tg__copy_into(op, v, values) != 0) {
        tg_release(v);
        v = NULL;
    }
    return v;
}

/* The checks index_put_ shares on both devices: self written must not alias values. */
static inline int tg__adv_put_check(const char *op, const tg_tensor *self, const tg_tensor *values)
{
    if (values->device.type != self->device.type && values->ndim != 0)
        return tg__fail(op, "Expected values to be on the same device as self");
    return 0;
}

#endif
