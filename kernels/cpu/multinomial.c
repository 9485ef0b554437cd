/* multinomial.out on the CPU: checks and sampling from multinomial_checks.h.
 *
 * The weights are read (any strides, any floating dtype) into a rows x n double buffer and
 * checked; then every uniform draw of the call is taken from the generator at once, in row
 * order (rows x num_samples with replacement, rows x n without), so the result depends on the
 * seed only, not on the thread count; then rows are sampled in parallel (tg__parallel_for). */
#include <stdlib.h>

#include "pointwise_convert.h"
#include "kernels/multinomial.h"
#include "multinomial_checks.h"

typedef struct mn_job {
    double *w, *u;
    int64_t n, k, ustride;
    bool replacement;
    int64_t *res; /* rows x k */
    int failed;
} mn_job;

static void mn_rows(int64_t b, int64_t e, void *ctx)
{
    mn_job *j = ctx;
    tg_sort_pair *p = j->replacement ? NULL : malloc(sizeof(tg_sort_pair) * (size_t)(2 * j->n));
    if (!j->replacement && !p) {
#pragma omp atomic write
        j->failed = 1;
        return;
    }
    for (int64_t r = b; r < e; r++) {
        double *w = j->w + r * j->n, *u = j->u + r * j->ustride;
        if (j->replacement) tg__multinomial_with(w, j->n, u, j->k, j->res + r * j->k, 1);
        else tg__multinomial_without(w, j->n, u, j->k, p, j->res + r * j->k, 1);
    }
    free(p);
}

tg_tensor *tg__cpu_multinomial_out(tg_tensor *self, int64_t num_samples, bool replacement,
                                   tg_generator *generator, tg_tensor *out)
{
    const char *op = "multinomial";
    int64_t rows, n;
    if (tg__multinomial_check(op, self, num_samples, replacement, out, &rows, &n) != 0) return NULL;
    int64_t sizes[2] = { rows, num_samples };
    tg_tensor *res =
        tg__k_prepare_out(op, out, self->ndim == 2 ? sizes : sizes + 1, self->ndim, TG_INT64);
    if (!res || rows == 0) return res;
    int64_t ustride = replacement ? num_samples : n, es = (int64_t)tg_dtype_size(self->dtype);
    double *w = malloc(sizeof(double) * (size_t)(rows * n));
    double *u = malloc(sizeof(double) * (size_t)(rows * ustride));
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(rows * num_samples));
    int rc = w && u && idx ? 0 : tg__fail(op, "out of memory");
    if (rc == 0) {
        const char *x = tg__k_data(self);
        bool contig = tg__is_contiguous(self);
        for (int64_t e = 0; e < rows * n; e++)
            w[e] = tg__pw_load_f64(x + (contig ? e : tg__k_offset(self, e)) * es, self->dtype);
        /* PyTorch checks every value before any sum */
        int bad = 0;
        for (int64_t r = 0; r < rows && bad != 1; r++) {
            int b = tg__multinomial_row_bad(w + r * n, n);
            if (b > bad) bad = b;
        }
        if (bad) rc = tg__multinomial_fail(op, bad);
    }
    if (rc == 0) {
        tg_generator *g = generator ? generator : tg__default_generator();
        /* the draws' bits into u's memory, then each replaced by its uniform */
        tg__random_u64_n(g, (uint64_t *)(void *)u, rows * ustride);
        for (int64_t i = 0; i < rows * ustride; i++) {
            uint64_t bits;
            memcpy(&bits, u + i, sizeof bits);
            u[i] = tg__multinomial_u01(bits);
        }
        mn_job j = { w, u, n, num_samples, ustride, replacement, idx, 0 };
        int64_t grain = tg__grain_size() / (n > 0 ? n : 1);
        tg__parallel_for(rows, grain > 0 ? grain : 1, mn_rows, &j);
        if (j.failed) rc = tg__fail(op, "out of memory");
    }
    if (rc == 0) {
        int64_t *o = (int64_t *)(void *)tg__k_data(res);
        bool contig = tg__is_contiguous(res);
        for (int64_t e = 0; e < rows * num_samples; e++)
            o[contig ? e : tg__k_offset(res, e)] = idx[e];
        if (out) tg__bump_version(res);
    }
    free(w);
    free(u);
    free(idx);
    return tg__k_result(rc == 0, res);
}
