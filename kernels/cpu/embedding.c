/* Embedding (CPU): embedding (a row gather) and embedding_dense_backward (a row scatter-add).
 *
 * Indices (int64 or int32, any shape and strides) are read once into a contiguous int64 array
 * and every one is checked against the table before any row is touched, so a bad index is an
 * error ("index out of range in self", index_select's words) and never an out-of-bounds read
 * or write.
 *
 * The forward copies rows, parallel over indices. The backward must be deterministic: each
 * output row is summed by a single thread in index order. The work is cut into tasks
 * (owner group p, column block c): task (p, c) scans all indices in order and adds, for the
 * indices whose row belongs to group p (row % groups == p), columns c of their gradient rows.
 * No two tasks write the same element, and the order of additions into an element never
 * depends on the thread count. */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "embnorm_checks.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/embedding.h"
#include "kernels/embedding_dense_backward.h"

enum {
    EMB_GRAIN = 32768,  /* fewer bytes than this: one thread */
    EMB_COLS = 256,     /* columns per backward task */
    EMB_MAX_GROUPS = 16 /* owner groups of the backward */
};

/* indices as a contiguous int64 array (malloc'd, n elements), each checked to lie in
 * [0, num_rows); NULL with the error recorded otherwise. */
static int64_t *load_indices(const char *op, tg_tensor *indices, int64_t num_rows, int64_t *n_out)
{
    int64_t n = tg__numel(indices);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    tg_tensor *c = idx ? tg__contiguous(op, indices) : NULL;
    if (!c) {
        if (!idx) tg__error(op, "out of memory");
        free(idx);
        return NULL;
    }
    if (indices->dtype == TG_INT64) memcpy(idx, tg__k_data(c), sizeof(int64_t) * (size_t)n);
    else
        for (int64_t i = 0; i < n; i++) idx[i] = ((const int32_t *)tg__k_data(c))[i];
    tg_release(c);
    bool bad = false;
    for (int64_t i = 0; i < n; i++) bad |= idx[i] < 0 || idx[i] >= num_rows;
    if (bad) {
        free(idx);
        tg__error(op, "index out of range in self");
        return NULL;
    }
    *n_out = n;
    return idx;
}

tg_tensor *tg__cpu_embedding(tg_tensor *weight, tg_tensor *indices, int64_t padding_idx,
                             bool scale_grad_by_freq, bool sparse)
{
    (void)padding_idx; /* both only change the gradient */
    (void)scale_grad_by_freq;
    const char *op = "embedding";
    if (tg__embedding_check(op, weight, indices, sparse) != 0) return NULL;
    if (indices->ndim + 1 > TG_MAX_DIMS) {
        tg__error(op, "indices have too many dimensions (%lld)", (long long)indices->ndim);
        return NULL;
    }
    int64_t n = 0, V = weight->sizes[0], D = weight->sizes[1];
    int64_t *idx = load_indices(op, indices, V, &n);
    if (!idx) return NULL;
    int64_t sz[TG_MAX_DIMS];
    for (int64_t i = 0; i < indices->ndim; i++) sz[i] = indices->sizes[i];
    sz[indices->ndim] = D;
    tg_tensor *w = tg__contiguous(op, weight);
    tg_tensor *out = w ? tg__empty(op, sz, indices->ndim + 1, weight->dtype, TG_DEVICE_CPU) : NULL;
    if (out) {
        size_t row = (size_t)D * tg_dtype_size(weight->dtype);
        const char *src = tg__k_data(w);
        char *dst = tg__k_data(out);
#pragma omp parallel for schedule(static) if ((size_t)n * row > EMB_GRAIN)
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + (size_t)i * row, src + (size_t)idx[i] * row, row);
    }
    tg_release(w);
    free(idx);
    return out;
}

/* o[c0..c1) += g[c0..c1), times 1 / count when count is not 0, in float32 or float64. */
static void emb_row_add(bool f32, char *o, const char *g, int64_t c0, int64_t c1, int64_t count)
{
    if (f32) {
        float *of = (float *)o, s = count ? 1.0f / (float)count : 1.0f;
        const float *gf = (const float *)g;
#pragma omp simd
        for (int64_t j = c0; j < c1; j++) of[j] += count ? gf[j] * s : gf[j];
        return;
    }
    double *od = (double *)o, s = count ? 1.0 / (double)count : 1.0;
    const double *gd = (const double *)g;
#pragma omp simd
    for (int64_t j = c0; j < c1; j++) od[j] += count ? gd[j] * s : gd[j];
}

/* out[idx[i], c0:c1] += g[i, c0:c1] * scale(i) for the indices of owner group p (rows of D
 * elements of es bytes). */
static void emb_bwd_task(bool f32, char *out, const char *g, const int64_t *idx, int64_t n,
                         int64_t D, int64_t c0, int64_t c1, int64_t groups, int64_t p,
                         int64_t padding_idx, const int64_t *counts)
{
    const int64_t row = D * (f32 ? 4 : 8);
    for (int64_t i = 0; i < n; i++) {
        int64_t r = idx[i];
        if (r == padding_idx || r % groups != p) continue;
        emb_row_add(f32, out + r * row, g + i * row, c0, c1, counts ? counts[r] : 0);
    }
}

tg_tensor *tg__cpu_embedding_dense_backward(tg_tensor *grad_output, tg_tensor *indices,
                                            int64_t num_weights, int64_t padding_idx,
                                            bool scale_grad_by_freq)
{
    const char *op = "embedding_dense_backward";
    int64_t D;
    if (tg__embedding_backward_check(op, grad_output, indices, num_weights, &D) != 0) return NULL;
    int64_t n = 0;
    int64_t *idx = load_indices(op, indices, num_weights, &n);
    if (!idx) return NULL;
    int64_t *counts = scale_grad_by_freq
                          ? calloc((size_t)(num_weights > 0 ? num_weights : 1), sizeof(int64_t))
                          : NULL;
    tg_dtype dt = grad_output->dtype;
    int64_t sz[2] = { num_weights, D };
    tg_tensor *g = (!scale_grad_by_freq || counts) ? tg__contiguous(op, grad_output) : NULL;
    tg_tensor *out = g ? tg__empty(op, sz, 2, dt, TG_DEVICE_CPU) : NULL;
    if (!out) {
        if (scale_grad_by_freq && !counts) tg__error(op, "out of memory");
        tg_release(g);
        free(counts);
        free(idx);
        return NULL;
    }
    size_t es = tg_dtype_size(dt), total = (size_t)num_weights * (size_t)D * es;
    char *od = tg__k_data(out);
    /* zero the table in parallel (it can be far larger than the gradient) */
    int64_t zchunks = (int64_t)(total / (1 << 20)) + 1;
#pragma omp parallel for schedule(static) if (zchunks > 1)
    for (int64_t c = 0; c < zchunks; c++) {
        size_t a = total * (size_t)c / (size_t)zchunks,
               b = total * (size_t)(c + 1) / (size_t)zchunks;
        memset(od + a, 0, b - a);
    }
    if (counts)
        for (int64_t i = 0; i < n; i++) counts[idx[i]]++;
    int64_t cblocks = (D + EMB_COLS - 1) / EMB_COLS;
    int64_t groups = (int64_t)n * D * (int64_t)es > EMB_GRAIN ? EMB_MAX_GROUPS : 1;
    if (groups > num_weights) groups = num_weights > 0 ? num_weights : 1;
    int64_t tasks = groups * cblocks;
    const char *gd = tg__k_data(g);
#pragma omp parallel for schedule(dynamic, 1) if (tasks > 1)
    for (int64_t t = 0; t < tasks; t++) {
        int64_t p = t / cblocks, cb = t % cblocks;
        int64_t c0 = cb * EMB_COLS, c1 = c0 + EMB_COLS < D ? c0 + EMB_COLS : D;
        emb_bwd_task(dt == TG_FLOAT32, od, gd, idx, n, D, c0, c1, groups, p, padding_idx, counts);
    }
    tg_release(g);
    free(counts);
    free(idx);
    return out;
}
