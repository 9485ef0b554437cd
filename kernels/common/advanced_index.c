/* The host-side plan of advanced indexing (advanced_index.h), compiled once for both backends:
 * the indices are checked and read on the host, masks turned into coordinates, the index
 * shapes broadcast, the index block placed (numpy's rule) and the offsets of the [A, P, B]
 * layout built, each step a function of its own. */
#include "advanced_index.h"
#include "index_checks.h"
#include "tg_kutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tg__adv_plan_free(tg_adv_plan *pl)
{
    free(pl->buf);
    pl->buf = NULL;
}

/* "[2, 3]" into buf (PyTorch's shape text). */
static const char *shape_str(char *buf, size_t cap, const int64_t *s, int64_t n)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int64_t i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, i ? ", %lld" : "%lld", (long long)s[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

/* A contiguous CPU copy of t in dtype dt (a new reference when t already is one). */
static tg_tensor *host_copy(const char *op, const tg_tensor *t, tg_dtype dt)
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
typedef struct adv_col {
    const int64_t *v;
    int64_t ndim;
    int64_t sizes[TG_MAX_DIMS], strides[TG_MAX_DIMS];
} adv_col;

/* What the plan is built from: per self dim its column (indexed[d]) and the broadcast shape
 * bs (bnd dims) of the index block; the host copies made meanwhile, released at the end. */
typedef struct adv_work {
    const char *op;
    const tg_tensor *self;
    adv_col cols[TG_MAX_DIMS];
    bool indexed[TG_MAX_DIMS];
    int64_t bnd, bs[TG_MAX_DIMS];
    tg_tensor *hold[2 * TG_MAX_DIMS];
    int nhold;
} adv_work;

/* The indices' dtypes, devices and count against self's dims. */
static int check_indices(const char *op, const tg_tensor *self, tg_tensor_list indices)
{
    int64_t used = 0, ntensors = 0;
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
    if (used > self->ndim)
        return tg__fail(op, "too many indices for tensor of dimension %lld", (long long)self->ndim);
    return 0;
}

/* A mask over self dims d..: checked against self's shape, its nonzero coordinates one column
 * per dim. */
static int mask_columns(adv_work *w, const tg_tensor *t, int64_t d)
{
    for (int64_t j = 0; j < t->ndim; j++)
        if (t->sizes[j] != w->self->sizes[d + j])
            return tg__fail(w->op,
                            "The shape of the mask [%lld] at index %lld does not match the shape "
                            "of the indexed tensor [%lld] at index %lld",
                            (long long)t->sizes[j], (long long)j, (long long)w->self->sizes[d + j],
                            (long long)(d + j));
    tg_tensor *h = host_copy(w->op, t, t->dtype);
    if (!h) return -1;
    w->hold[w->nhold++] = h;
    tg_tensor *nz = tg__nonzero_host(w->op, h);
    if (!nz) return -1;
    w->hold[w->nhold++] = nz;
    for (int64_t j = 0; j < t->ndim; j++) {
        adv_col *c = &w->cols[d + j];
        c->v = (const int64_t *)tg__k_data(nz) + j;
        c->ndim = 1;
        c->sizes[0] = nz->sizes[0];
        c->strides[0] = t->ndim;
        w->indexed[d + j] = true;
    }
    return 0;
}

/* An integer index of self dim d: its int64 host values, row-major. */
static int int_column(adv_work *w, const tg_tensor *t, int64_t d)
{
    tg_tensor *h = host_copy(w->op, t, TG_INT64);
    if (!h) return -1;
    w->hold[w->nhold++] = h;
    adv_col *c = &w->cols[d];
    c->v = (const int64_t *)tg__k_data(h);
    c->ndim = h->ndim;
    for (int64_t j = h->ndim - 1, s = 1; j >= 0; j--) {
        c->sizes[j] = h->sizes[j];
        c->strides[j] = s;
        s *= h->sizes[j];
    }
    w->indexed[d] = true;
    return 0;
}

static int read_columns(adv_work *w, tg_tensor_list indices)
{
    int64_t d = 0;
    for (int64_t i = 0; i < indices.len; i++) {
        const tg_tensor *t = indices.data[i];
        bool mask = t && (t->dtype == TG_BOOL || t->dtype == TG_UINT8);
        if (t && (mask ? mask_columns(w, t, d) : int_column(w, t, d)) != 0) return -1;
        d += t && mask ? t->ndim : 1;
    }
    return 0;
}

/* PyTorch's "shape mismatch: indexing tensors could not be broadcast together with shapes ...". */
static int broadcast_error(const adv_work *w)
{
    char msg[1024];
    size_t n = (size_t)snprintf(msg, sizeof msg,
                                "shape mismatch: indexing tensors could "
                                "not be broadcast together with shapes ");
    for (int64_t q = 0, first = 1; q < w->self->ndim && n < sizeof msg; q++) {
        if (!w->indexed[q]) continue;
        char sb[256];
        n += (size_t)snprintf(msg + n, sizeof msg - n, "%s%s", first ? "" : ", ",
                              shape_str(sb, sizeof sb, w->cols[q].sizes, w->cols[q].ndim));
        first = 0;
    }
    return tg__fail(w->op, "%s", msg);
}

/* The index shapes broadcast, right-aligned, into w->bs. */
static int broadcast_columns(adv_work *w)
{
    const int64_t nd = w->self->ndim;
    w->bnd = 0;
    for (int64_t k = 0; k < nd; k++)
        if (w->indexed[k] && w->cols[k].ndim > w->bnd) w->bnd = w->cols[k].ndim;
    for (int64_t j = 0; j < w->bnd; j++) w->bs[j] = 1;
    for (int64_t k = 0; k < nd; k++) {
        if (!w->indexed[k]) continue;
        const adv_col *c = &w->cols[k];
        for (int64_t j = 0; j < c->ndim; j++) {
            int64_t s = c->sizes[j], *o = &w->bs[w->bnd - c->ndim + j];
            if (s == *o || s == 1) continue;
            if (*o != 1) return broadcast_error(w);
            *o = s;
        }
    }
    return 0;
}

/* Where the index block goes: the dims before it (adims, na) and after it (bdims, nb); the
 * result's shape and A, P, B; the offsets' buffer. */
static int place_block(adv_work *w, tg_adv_plan *pl, int64_t *adims, int64_t *na, int64_t *bdims,
                       int64_t *nb)
{
    const tg_tensor *self = w->self;
    int64_t first = -1, last = -1, nidx = 0;
    for (int64_t k = 0; k < self->ndim; k++)
        if (w->indexed[k]) {
            if (first < 0) first = k;
            last = k;
            nidx++;
        }
    bool adjacent = nidx > 0 && last - first + 1 == nidx;
    *na = *nb = 0;
    for (int64_t k = 0; k < self->ndim; k++) {
        if (w->indexed[k]) continue;
        if (adjacent && k < first) adims[(*na)++] = k;
        else bdims[(*nb)++] = k;
    }
    if (*na + w->bnd + *nb > TG_MAX_DIMS)
        return tg__fail(w->op, "the result would have more than %d dims", TG_MAX_DIMS);
    pl->ndim = 0;
    pl->A = pl->P = pl->B = 1;
    for (int64_t k = 0; k < *na; k++) pl->A *= pl->sizes[pl->ndim++] = self->sizes[adims[k]];
    for (int64_t j = 0; j < w->bnd; j++) pl->P *= pl->sizes[pl->ndim++] = w->bs[j];
    for (int64_t k = 0; k < *nb; k++) pl->B *= pl->sizes[pl->ndim++] = self->sizes[bdims[k]];
    pl->buf = (int64_t *)malloc(sizeof(int64_t) * (size_t)(pl->A + pl->P + pl->B + 1));
    if (!pl->buf) return tg__fail(w->op, "out of memory");
    pl->aoff = pl->buf;
    pl->poff = pl->buf + pl->A;
    pl->boff = pl->poff + pl->P;
    return 0;
}

/* off[i] for i < n: the element offset of position i, row-major over self's dims dims[0..nd). */
static void dim_offsets(const tg_tensor *self, const int64_t *dims, int64_t nd, int64_t *off,
                        int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i, o = 0;
        for (int64_t k = nd - 1; k >= 0; k--) {
            int64_t s = self->sizes[dims[k]];
            o += (r % s) * self->strides[dims[k]];
            r /= s;
        }
        off[i] = o;
    }
}

/* poff: at each index position, each indexed dim's value wrapped, bounds-checked, times its
 * stride, summed. */
static int index_offsets(const adv_work *w, tg_adv_plan *pl)
{
    const tg_tensor *self = w->self;
    for (int64_t p = 0; p < pl->P; p++) pl->poff[p] = 0;
    for (int64_t k = 0; k < self->ndim; k++) {
        if (!w->indexed[k]) continue;
        const adv_col *c = &w->cols[k];
        int64_t size = self->sizes[k], st = self->strides[k], off = w->bnd - c->ndim;
        for (int64_t p = 0; p < pl->P; p++) {
            int64_t r = p, e = 0;
            for (int64_t j = w->bnd - 1; j >= 0; j--) {
                int64_t x = r % w->bs[j];
                r /= w->bs[j];
                if (j >= off && c->sizes[j - off] != 1) e += x * c->strides[j - off];
            }
            int64_t v = c->v[e];
            if (v < -size || v >= size)
                return tg__fail(w->op,
                                "index %lld is out of bounds for dimension %lld with size %lld",
                                (long long)v, (long long)k, (long long)size);
            pl->poff[p] += (v < 0 ? v + size : v) * st;
        }
    }
    return 0;
}

static int plan_fill(adv_work *w, tg_tensor_list indices, tg_adv_plan *pl)
{
    int64_t adims[TG_MAX_DIMS], na, bdims[TG_MAX_DIMS], nb;
    if (check_indices(w->op, w->self, indices) != 0 || read_columns(w, indices) != 0 ||
        broadcast_columns(w) != 0 || place_block(w, pl, adims, &na, bdims, &nb) != 0)
        return -1;
    dim_offsets(w->self, adims, na, pl->aoff, pl->A);
    dim_offsets(w->self, bdims, nb, pl->boff, pl->B);
    pl->b_unit = true;
    for (int64_t b = 0; b < pl->B && pl->b_unit; b++) pl->b_unit = pl->boff[b] == b;
    return index_offsets(w, pl);
}

int tg__adv_plan_build(const char *op, const tg_tensor *self, tg_tensor_list indices,
                       tg_adv_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    adv_work w;
    memset(&w, 0, sizeof w);
    w.op = op;
    w.self = self;
    int rc = plan_fill(&w, indices, pl);
    tg__k_release_all(w.hold, w.nhold);
    if (rc != 0) tg__adv_plan_free(pl);
    return rc;
}

tg_tensor *tg__adv_values(const char *op, const tg_tensor *self, const tg_tensor *values,
                          const tg_adv_plan *pl)
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
            shape_str(a, sizeof a, values->sizes, values->ndim),
            shape_str(b, sizeof b, pl->sizes, pl->ndim));
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

int tg__adv_put_check(const char *op, const tg_tensor *self, const tg_tensor *values)
{
    if (values->device.type != self->device.type && values->ndim != 0)
        return tg__fail(op, "Expected values to be on the same device as self");
    return 0;
}
