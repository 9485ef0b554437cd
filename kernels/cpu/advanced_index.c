/* index.Tensor and index_put_ on the CPU over the shared plan (kernels/common/advanced_index.h):
 * result[a, p, b] = self[aoff[a] + poff[p] + boff[b]] and its reverse.
 *
 * The gather runs the (a, p) rows in parallel; each row is one memcpy when the after dims are
 * one contiguous run of self (boff[b] == b, the embedding-like case), else a loop by element
 * size. The put runs units of (a, chunk of b) in parallel, each walking p in order: units
 * never write the same element of self (their non-indexed coordinates differ), so accumulate
 * is deterministic without atomics and a duplicated index keeps the last value in index
 * order, as PyTorch's serial CPU kernel. */
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

#define GATHER_ROW(T)                                              \
    do {                                                           \
        const T *S = (const T *)j->self + base;                    \
        T *O = (T *)j->other + r * pl->B;                          \
        for (int64_t b = 0; b < pl->B; b++) O[b] = S[pl->boff[b]]; \
    } while (0)

static void gather_rows(int64_t lo, int64_t hi, void *ctx)
{
    const adv_job *j = ctx;
    const tg_adv_plan *pl = j->pl;
    for (int64_t r = lo; r < hi; r++) {
        int64_t base = pl->aoff[r / pl->P] + pl->poff[r % pl->P];
        if (pl->b_unit) {
            memcpy(j->other + (size_t)(r * pl->B) * j->es, j->self + (size_t)base * j->es,
                   (size_t)pl->B * j->es);
            continue;
        }
        switch (j->es) {
        case 1: GATHER_ROW(uint8_t); break;
        case 2: GATHER_ROW(uint16_t); break;
        case 4: GATHER_ROW(uint32_t); break;
        case 8: GATHER_ROW(uint64_t); break;
        default:
            for (int64_t b = 0; b < pl->B; b++)
                memcpy(j->other + (size_t)(r * pl->B + b) * j->es,
                       j->self + (size_t)(base + pl->boff[b]) * j->es, j->es);
        }
    }
}

/* One unit's walk: for p in order, for b in [b0, b1): BODY with d (self) and s (values). */
#define PUT_UNIT(T, BODY)                                                \
    do {                                                                 \
        for (int64_t p = 0; p < pl->P; p++) {                            \
            T *D = (T *)j->self + pl->aoff[a] + pl->poff[p];             \
            const T *Sv = (const T *)j->other + (a * pl->P + p) * pl->B; \
            if (pl->b_unit)                                              \
                for (int64_t b = b0; b < b1; b++) {                      \
                    T *d = D + b;                                        \
                    const T *s = Sv + b;                                 \
                    BODY;                                                \
                }                                                        \
            else                                                         \
                for (int64_t b = b0; b < b1; b++) {                      \
                    T *d = D + pl->boff[b];                              \
                    const T *s = Sv + b;                                 \
                    BODY;                                                \
                }                                                        \
        }                                                                \
    } while (0)

#define PUT_CASE(T)                                        \
    do {                                                   \
        if (j->accumulate) PUT_UNIT(T, *d = (T)(*d + *s)); \
        else PUT_UNIT(T, *d = *s);                         \
    } while (0)

static void put_units(int64_t lo, int64_t hi, void *ctx)
{
    const adv_job *j = ctx;
    const tg_adv_plan *pl = j->pl;
    for (int64_t u = lo; u < hi; u++) {
        int64_t a = u / j->nchunks, c = u % j->nchunks;
        int64_t b0 = c * j->chunk, b1 = MIN(b0 + j->chunk, pl->B);
        if (!j->accumulate && j->es == 8) PUT_UNIT(uint64_t, *d = *s);
        else if (!j->accumulate && j->es == 4) PUT_UNIT(uint32_t, *d = *s);
        else if (!j->accumulate && j->es == 2) PUT_UNIT(uint16_t, *d = *s);
        else if (!j->accumulate && j->es == 1) PUT_UNIT(uint8_t, *d = *s);
        else switch (j->dtype) {
            case TG_FLOAT32: PUT_CASE(float); break;
            case TG_FLOAT64: PUT_CASE(double); break;
            case TG_INT64: PUT_CASE(int64_t); break;
            case TG_INT32: PUT_CASE(int32_t); break;
            case TG_INT16: PUT_CASE(int16_t); break;
            case TG_INT8: PUT_CASE(int8_t); break;
            case TG_UINT8: PUT_CASE(uint8_t); break;
            case TG_BOOL: PUT_UNIT(uint8_t, *d = (uint8_t)(*d || *s)); break;
            default: /* float16 / bfloat16 / others: through double */
                for (int64_t p = 0; p < pl->P; p++)
                    for (int64_t b = b0; b < b1; b++) {
                        char *d =
                            j->self + (size_t)(pl->aoff[a] + pl->poff[p] + pl->boff[b]) * j->es;
                        const char *s = j->other + (size_t)((a * pl->P + p) * pl->B + b) * j->es;
                        tg__store_double(d, j->dtype,
                                         tg__load_double(d, j->dtype) +
                                             tg__load_double(s, j->dtype));
                    }
            }
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
