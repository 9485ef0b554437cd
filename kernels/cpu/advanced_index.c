/* index.Tensor and index_put_ on the CPU over the shared plan (kernels/common/advanced_index.h):
 * result[a, p, b] = self[aoff[a] + poff[p] + boff[b]] and its reverse.
 *
 * The gather runs the (a, p) rows in parallel; each row is one memcpy when the after dims are
 * one contiguous run of self (boff[b] == b, the embedding-like case), else a loop by element
 * size. The put runs units of (a, chunk of b) in parallel, each walking p in order: units
 * never write the same element of self (their non-indexed coordinates differ), so accumulate
 * is deterministic without atomics and a duplicated index keeps the last value in index
 * order, as PyTorch's serial CPU kernel. */
#include "pointwise_convert.h"
#include "tg_kutil.h"
#include "advanced_index.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/index.h"
#include "kernels/index_put.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

typedef struct adv_job {
    const tg_adv_plan *pl;
    char *self;  /* self's first element */
    char *other; /* the contiguous [A, P, B] result (gather) or values (put) */
    size_t es;
    tg_dtype dtype;
    bool accumulate;
    int64_t nchunks, chunk; /* b in nchunks chunks of `chunk` (put) */
} adv_job;

/* Row r of the gather: B elements of es bytes from self (the plan's offsets) into other;
 * es is a constant where it is inlined, so each copy is one load and store. */
TG_ALWAYS_INLINE void gather_row(size_t es, const adv_job *j, int64_t r)
{
    const tg_adv_plan *pl = j->pl;
    const char *S = j->self + (size_t)(pl->aoff[r / pl->P] + pl->poff[r % pl->P]) * es;
    char *O = j->other + (size_t)(r * pl->B) * es;
    if (pl->b_unit) memcpy(O, S, (size_t)pl->B * es);
    else
        for (int64_t b = 0; b < pl->B; b++)
            memcpy(O + (size_t)b * es, S + (size_t)pl->boff[b] * es, es);
}

static void gather_rows(int64_t lo, int64_t hi, void *ctx)
{
    const adv_job *j = ctx;
    for (int64_t r = lo; r < hi; r++) {
        switch (j->es) {
        case 1: gather_row(1, j, r); break;
        case 2: gather_row(2, j, r); break;
        case 4: gather_row(4, j, r); break;
        case 8: gather_row(8, j, r); break;
        default: gather_row(j->es, j, r);
        }
    }
}

/* One element of a put: d = s, or (acc) d = d + s in dtype dt (C's arithmetic of the type:
 * integers wrap, bool is or, float16 and bfloat16 go through double). */
TG_ALWAYS_INLINE void put_elem(bool acc, tg_dtype dt, size_t es, char *d, const char *s)
{
    if (!acc) memcpy(d, s, es);
    else if (dt == TG_FLOAT32) *(float *)d = *(float *)d + *(const float *)s;
    else if (dt == TG_FLOAT64) *(double *)d = *(double *)d + *(const double *)s;
    else if (dt == TG_BOOL) *(uint8_t *)d = (uint8_t)(*(uint8_t *)d || *(const uint8_t *)s);
    else if (tg__pw_kind(dt) == TG_PW_I64)
        tg__pw_store_i64(
            d, dt, (int64_t)((uint64_t)tg__pw_load_i64(d, dt) + (uint64_t)tg__pw_load_i64(s, dt)));
    else tg__pw_store_f64(d, dt, tg__pw_load_f64(d, dt) + tg__pw_load_f64(s, dt));
}

/* One unit's walk: for p in order, for b in [b0, b1): self's element d and the value s. */
TG_ALWAYS_INLINE void put_unit(bool acc, tg_dtype dt, size_t es, const adv_job *j, int64_t a,
                               int64_t b0, int64_t b1)
{
    const tg_adv_plan *pl = j->pl;
    for (int64_t p = 0; p < pl->P; p++) {
        char *D = j->self + (size_t)(pl->aoff[a] + pl->poff[p]) * es;
        const char *Sv = j->other + (size_t)((a * pl->P + p) * pl->B) * es;
        for (int64_t b = b0; b < b1; b++)
            put_elem(acc, dt, es, D + (size_t)(pl->b_unit ? b : pl->boff[b]) * es,
                     Sv + (size_t)b * es);
    }
}

/* put_unit with the copy's width or the accumulation's dtype as a constant. */
static void put_one(const adv_job *j, int64_t a, int64_t b0, int64_t b1)
{
    if (!j->accumulate) {
        switch (j->es) {
        case 8: put_unit(false, TG_INT64, 8, j, a, b0, b1); return;
        case 4: put_unit(false, TG_INT32, 4, j, a, b0, b1); return;
        case 2: put_unit(false, TG_INT16, 2, j, a, b0, b1); return;
        default: put_unit(false, TG_UINT8, 1, j, a, b0, b1); return;
        }
    }
    switch (j->dtype) {
    case TG_FLOAT32: put_unit(true, TG_FLOAT32, 4, j, a, b0, b1); break;
    case TG_FLOAT64: put_unit(true, TG_FLOAT64, 8, j, a, b0, b1); break;
    case TG_INT64: put_unit(true, TG_INT64, 8, j, a, b0, b1); break;
    case TG_INT32: put_unit(true, TG_INT32, 4, j, a, b0, b1); break;
    default: put_unit(true, j->dtype, j->es, j, a, b0, b1); break;
    }
}

static void put_units(int64_t lo, int64_t hi, void *ctx)
{
    const adv_job *j = ctx;
    for (int64_t u = lo; u < hi; u++) {
        int64_t a = u / j->nchunks, c = u % j->nchunks;
        int64_t b0 = c * j->chunk;
        put_one(j, a, b0, MIN(b0 + j->chunk, j->pl->B));
    }
}

tg_tensor *tg__cpu_index(tg_tensor *self, tg_tensor_list indices)
{
    const char *op = "index";
    tg_adv_plan pl;
    if (tg__adv_plan_build(op, self, indices, &pl)) return NULL;
    tg_tensor *r = tg__empty(op, pl.sizes, pl.ndim, self->dtype, TG_DEVICE_CPU);
    if (r && tg__numel(r) > 0) {
        adv_job j = {
            &pl, tg__k_data(self), tg__k_data(r), tg_dtype_size(self->dtype), self->dtype, false, 1,
            1
        };
        tg__parallel_for(pl.A * pl.P, MAX(tg__grain_size() / MAX(pl.B, 1), 1), gather_rows, &j);
    }
    tg__adv_plan_free(&pl);
    return r;
}

tg_tensor *tg__cpu_index_put_(tg_tensor *self, tg_tensor_list indices, tg_tensor *values,
                              bool accumulate)
{
    const char *op = "index_put_";
    tg_adv_plan pl;
    if (tg__adv_put_check(op, self, values) || tg__adv_plan_build(op, self, indices, &pl))
        return NULL;
    tg_tensor *v = tg__adv_values(op, self, values, &pl);
    if (!v) {
        tg__adv_plan_free(&pl);
        return NULL;
    }
    if (tg__numel(v) > 0) {
        /* few before positions (the embedding gradient has one): split the after dims into
         * chunks of >= 64 elements too, so that every thread has work */
        int64_t nchunks = 1;
        if (pl.A < 64 && pl.B >= 128) nchunks = MIN(pl.B / 64, 64);
        adv_job j = {
            &pl,         tg__k_data(self), tg__k_data(v), tg_dtype_size(self->dtype),
            self->dtype, accumulate,       nchunks,       (pl.B + nchunks - 1) / nchunks
        };
        int64_t per_unit = MAX(pl.P * j.chunk, 1);
        tg__parallel_for(pl.A * nchunks, MAX(tg__grain_size() / per_unit, 1), put_units, &j);
    }
    tg__bump_version(self);
    tg_release(v);
    tg__adv_plan_free(&pl);
    return tg_retain(self);
}
