/* flip, roll, repeat and repeat_interleave.Tensor on the CPU.
 *
 * flip, roll and repeat are one gather (structure_checks.h, tg_gather_map): the output is a
 * new contiguous tensor whose element (i_0, ..., i_last) is self's element at the mapped
 * index along each dim. The output is walked as rows along its last dim, rows split across
 * threads; each row's start in self comes from the map of the leading dims, and the row
 * itself is copied by the fastest means its last dim allows:
 *   - self contiguous along the last dim (stride 1), not flipped: the row is the runs
 *     [shift, n) then [0, n) repeated (roll: two memcpys; repeat: the row tiled; plain: one);
 *   - stride 1, flipped: a reversed loop over elements of a fixed size;
 *   - any other stride: an element loop.
 * Elements are moved as bytes (every dtype, bool included, no conversion). */
#include "tg_kutil.h"
#include "structure_checks.h"

#include "kernels/flip.h"
#include "kernels/repeat.h"
#include "kernels/repeat_interleave.h"
#include "kernels/roll.h"

#include <stdlib.h>
#include <string.h>

typedef struct gather_job {
    const tg_gather_map *m;
    const char *x; /* self's first element */
    char *y;       /* the contiguous output */
    size_t es;     /* element size */
    int64_t row;   /* output elements per row (the last dim) */
} gather_job;

/* One element of es bytes: constant-size memcpy for the common sizes (a single move). */
static inline void copy_elem(char *dst, const char *src, size_t es)
{
    switch (es) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, es); break;
    }
}

static void gather_rows(int64_t b, int64_t e, void *ctx)
{
    const gather_job *j = ctx;
    const tg_gather_map *m = j->m;
    int64_t last = m->ndim - 1, n = m->src_sizes[last], st = m->src_strides[last];
    size_t es = j->es;
    for (int64_t r = b; r < e; r++) {
        /* self's offset of the row's leading index (elements) */
        int64_t off = 0, lin = r;
        for (int64_t d = last - 1; d >= 0; d--) {
            int64_t s = m->sizes[d], q = lin / s;
            off += tg__gather_src(m, d, lin - q * s) * m->src_strides[d];
            lin = q;
        }
        const char *x = j->x + off * (int64_t)es;
        char *y = j->y + r * j->row * (int64_t)es;
        if (st == 1 && !m->flip[last]) {
            int64_t done = 0, pos = m->shift[last];
            while (done < j->row) {
                int64_t len = n - pos < j->row - done ? n - pos : j->row - done;
                memcpy(y + done * (int64_t)es, x + pos * (int64_t)es, (size_t)len * es);
                done += len;
                pos = 0;
            }
        } else if (st == 1) {
            for (int64_t i = 0; i < j->row; i++)
                copy_elem(y + i * (int64_t)es, x + (n - 1 - i) * (int64_t)es, es);
        } else {
            for (int64_t i = 0; i < j->row; i++)
                copy_elem(y + i * (int64_t)es, x + tg__gather_src(m, last, i) * st * (int64_t)es,
                          es);
        }
    }
}

/* Runs map m from self into res (contiguous, tg__numel(res) == product of m->sizes). */
static void gather_into(const tg_tensor *self, const tg_gather_map *m, tg_tensor *res)
{
    int64_t numel = tg__numel(res);
    if (numel == 0) return;
    size_t es = tg_dtype_size(self->dtype);
    if (m->ndim == 0) {
        copy_elem(tg__k_data(res), tg__k_data(self), es);
        return;
    }
    gather_job j = { m, tg__k_data(self), tg__k_data(res), es, m->sizes[m->ndim - 1] };
    int64_t rows = numel / j.row;
    int64_t grain = j.row >= tg__grain_size() ? 1 : tg__grain_size() / j.row;
    tg__parallel_for(rows, grain, gather_rows, &j);
}

static tg_tensor *gather_new(const char *op, const tg_tensor *self, const tg_gather_map *m)
{
    tg_tensor *res = tg__empty(op, m->sizes, m->ndim, self->dtype, TG_DEVICE_CPU);
    if (res) gather_into(self, m, res);
    return res;
}

/* self any shape and dtype; dims distinct dims of self. A new tensor of self's shape. */
tg_tensor *tg__cpu_flip(tg_tensor *self, tg_int_list dims)
{
    tg_gather_map m;
    if (tg__flip_map("flip", self, dims, &m) != 0) return NULL;
    return gather_new("flip", self, &m);
}

/* self any shape; shifts and dims of one length, or dims empty and one shift (flat roll). */
tg_tensor *tg__cpu_roll(tg_tensor *self, tg_int_list shifts, tg_int_list dims)
{
    const char *op = "roll";
    tg_gather_map m;
    bool flat;
    if (tg__roll_map(op, self, shifts, dims, &m, &flat) != 0) return NULL;
    if (!flat) return gather_new(op, self, &m);
    /* the flattened (row-major) self, rolled, in self's shape */
    tg_tensor *c = tg__contiguous(op, self);
    if (!c) return NULL;
    tg_tensor *res = tg__empty(op, self->sizes, self->ndim, self->dtype, TG_DEVICE_CPU);
    if (res) {
        tg__roll_flat_map(&m, tg__numel(self), shifts.data[0]);
        gather_into(c, &m, res);
    }
    tg_release(c);
    return res;
}

/* self any shape; repeats at least self->ndim long. Shape repeats[d] * size (aligned right). */
tg_tensor *tg__cpu_repeat(tg_tensor *self, tg_int_list repeats)
{
    tg_gather_map m;
    if (tg__repeat_map("repeat", self, repeats, &m) != 0) return NULL;
    return gather_new("repeat", self, &m);
}

/* repeats 1-D int32/int64 of n values: each index i written repeats[i] times, in repeats'
 * dtype. The checks read every repeat (as PyTorch's does: it syncs on the total). */
tg_tensor *tg__cpu_repeat_interleave_tensor(tg_tensor *repeats, tg_opt_int output_size)
{
    const char *op = "repeat_interleave";
    if (tg__repeat_interleave_check(op, repeats) != 0) return NULL;
    int64_t n = repeats->sizes[0];
    if (n == 0) return tg__empty(op, repeats->sizes, 1, repeats->dtype, TG_DEVICE_CPU);
    int64_t *r = calloc(2 * (size_t)n, sizeof(int64_t));
    if (!r) return tg__error(op, "out of memory");
    int64_t *cum = r + n, total = 0;
    const char *p = tg__k_data(repeats);
    size_t es = tg_dtype_size(repeats->dtype);
    for (int64_t i = 0; i < n; i++) {
        const char *q = p + i * repeats->strides[0] * (int64_t)es;
        r[i] = repeats->dtype == TG_INT64 ? *(const int64_t *)q : *(const int32_t *)q;
        cum[i] = (int64_t)((uint64_t)(i ? cum[i - 1] : 0) + (uint64_t)r[i]);
    }
    tg_tensor *res = NULL;
    if (tg__repeat_interleave_total(op, r, cum, n, output_size, &total) == 0 &&
        (res = tg__empty(op, &total, 1, repeats->dtype, TG_DEVICE_CPU))) {
        char *y = tg__k_data(res);
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = cum[i] - r[i]; k < cum[i]; k++) {
                if (repeats->dtype == TG_INT64) ((int64_t *)y)[k] = i;
                else ((int32_t *)y)[k] = (int32_t)i;
            }
    }
    free(r);
    return res;
}
