/* _foreach_norm on the CPU (foreach_norm_checks.h's arithmetic).
 *
 * Each tensor is cut into fixed chunks of CHUNK elements (in its logical order); chunks are
 * accumulated in parallel (tg__parallel_for) into their own slots and the slots combined in
 * order, so the result does not depend on the thread count. Contiguous float32/float64 are read
 * directly, anything else element by element through its strides. */
#include <stdlib.h>

#include "pointwise_convert.h"
#include "foreach_norm_checks.h"
#include "kernels/_foreach_norm.h"

#define CHUNK 65536

typedef struct norm_job {
    const tg_tensor *t;
    const char *x;
    int64_t n;
    bool contig;
    tg_norm_kind kind;
    double p;
    double *part; /* one accumulator per chunk */
} norm_job;

static void norm_chunks(int64_t b, int64_t e, void *ctx)
{
    norm_job *j = ctx;
    tg_dtype dt = j->t->dtype;
    int64_t es = (int64_t)tg_dtype_size(dt);
    for (int64_t c = b; c < e; c++) {
        int64_t lo = c * CHUNK, hi = lo + CHUNK < j->n ? lo + CHUNK : j->n;
        double acc = tg__norm_init(j->kind);
        if (j->contig && dt == TG_FLOAT32) {
            const float *x = (const float *)(const void *)j->x;
            for (int64_t i = lo; i < hi; i++) acc = tg__norm_add(j->kind, j->p, acc, x[i]);
        } else if (j->contig && dt == TG_FLOAT64) {
            const double *x = (const double *)(const void *)j->x;
            for (int64_t i = lo; i < hi; i++) acc = tg__norm_add(j->kind, j->p, acc, x[i]);
        } else {
            for (int64_t i = lo; i < hi; i++) {
                int64_t off = j->contig ? i : tg__k_offset(j->t, i);
                acc = tg__norm_add(j->kind, j->p, acc, tg__pw_load_f64(j->x + off * es, dt));
            }
        }
        j->part[c] = acc;
    }
}

/* The norm of one tensor as a zero-dim tensor of its dtype, or NULL + error. */
static tg_tensor *norm_of(const char *op, const tg_tensor *t, tg_norm_kind kind, double p)
{
    int64_t n = tg__numel(t), nchunks = (n + CHUNK - 1) / CHUNK;
    double *part = malloc(sizeof(double) * (size_t)(nchunks > 0 ? nchunks : 1));
    if (!part) return tg__error(op, "out of memory");
    norm_job j = { t, tg__k_data(t), n, tg__is_contiguous(t), kind, p, part };
    tg__parallel_for(nchunks, 1, norm_chunks, &j);
    double acc = tg__norm_init(kind);
    for (int64_t c = 0; c < nchunks; c++) acc = tg__norm_merge(kind, acc, part[c]);
    free(part);
    tg_tensor *r = tg__empty(op, NULL, 0, t->dtype, TG_DEVICE_CPU);
    if (r) tg__pw_store_f64(tg__k_data(r), t->dtype, tg__norm_finish(kind, p, acc));
    return r;
}

tg_tensor_list tg__cpu_foreach_norm(tg_tensor_list self, double ord)
{
    const char *op = "_foreach_norm";
    if (tg__foreach_norm_check(op, self, ord) != 0) return (tg_tensor_list){ NULL, 0 };
    tg_tensor **items = tg_tensor_list_alloc(op, self.len);
    if (!items) return (tg_tensor_list){ NULL, 0 };
    tg_norm_kind kind = tg__norm_kind(ord);
    for (int64_t i = 0; i < self.len; i++) {
        items[i] = norm_of(op, self.data[i], kind, ord);
        if (!items[i]) return tg_tensor_list_fail(items, self.len);
    }
    return (tg_tensor_list){ items, self.len };
}
