/* Layer normalization (CPU): native_layer_norm and native_layer_norm_backward, float32 and
 * float64.
 *
 * The input is made contiguous and seen as (M, N): M rows (the leading dims) of N elements
 * (the dims of normalized_shape). Rows are independent, so both kernels run OpenMP over rows.
 *
 * Forward, per row: two passes for the statistics (mean, then the sum of squared deviations,
 * which is accurate where E[x^2] - E[x]^2 is not), each summed in the element type over blocks
 * of LN_BLOCK elements (vectorised by omp simd, several lanes of partial sums) and in double
 * across blocks; then one fused pass y = (x - mean) * rstd * w + b.
 *
 * Backward, per row (xhat = (x - mean) * rstd, g = dy * w):
 *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
 * and grad_weight = sum over rows of dy * xhat, grad_bias = sum over rows of dy. Those column
 * sums must be parallel and deterministic: the rows are cut into a number of chunks that
 * depends on M only (never on the thread count), each chunk sums its rows in order into its
 * own partial row, and the partials are added in chunk order (in double), parallel over
 * columns. The same thread computes dx and the partials of a chunk in one pass over its rows. */
#include "tg_kutil.h"
#include "embnorm_checks.h"
#include "pointwise_convert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/native_layer_norm.h"
#include "kernels/native_layer_norm_backward.h"

enum {
    LN_BLOCK = 2048,      /* elements summed in the element type before going to double */
    LN_GRAIN = 16384,     /* fewer elements than this: one thread */
    LN_MAX_CHUNKS = 64,   /* row chunks of the weight/bias gradient partials */
    LN_MIN_CHUNK_ROWS = 8 /* rows per chunk at least (partials cost N elements each) */
};

/* ---- per-row kernels ----
 * Written once for float32 and float64: `f32` is a constant where each is inlined (the two
 * calls in ln_fwd_rows and ln_bwd_rows), so the typed branches of the leaves fold away and
 * every loop is a plain vectorisable loop in the element type T. */

/* sum(x[b..e)) in T, lanes summed by omp simd. */
TG_ALWAYS_INLINE double ln_block_sum(bool f32, const void *x, int64_t b, int64_t e)
{
    if (f32) {
        const float *xf = x;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = b; i < e; i++) s += xf[i];
        return s;
    }
    const double *xd = x;
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = b; i < e; i++) s += xd[i];
    return s;
}

/* sum((x[b..e) - m)^2) in T. */
TG_ALWAYS_INLINE double ln_block_sqdev(bool f32, const void *x, int64_t b, int64_t e, double m)
{
    if (f32) {
        const float *xf = x, mf = (float)m;
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = b; i < e; i++) s += (xf[i] - mf) * (xf[i] - mf);
        return s;
    }
    const double *xd = x;
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = b; i < e; i++) s += (xd[i] - m) * (xd[i] - m);
    return s;
}

/* The sum over n elements of block(x, b, e, m) for blocks of LN_BLOCK: each block in T, the
 * blocks in double. */
TG_ALWAYS_INLINE double ln_sum(bool f32, bool sqdev, const void *x, int64_t n, double m)
{
    double acc = 0;
    for (int64_t b = 0; b < n; b += LN_BLOCK) {
        int64_t e = b + LN_BLOCK < n ? b + LN_BLOCK : n;
        acc += sqdev ? ln_block_sqdev(f32, x, b, e, m) : ln_block_sum(f32, x, b, e);
    }
    return acc;
}

/* y = (x - m) * r * w + b over n elements, in T. */
TG_ALWAYS_INLINE void ln_apply(bool f32, void *y, const void *x, const void *w, const void *b,
                               int64_t n, double m, double r)
{
    if (f32) {
        float *yf = y, mf = (float)m, rf = (float)r;
        const float *xf = x, *wf = w, *bf = b;
#pragma omp simd
        for (int64_t i = 0; i < n; i++) yf[i] = (xf[i] - mf) * rf * wf[i] + bf[i];
        return;
    }
    double *yd = y;
    const double *xd = x, *wd = w, *bd = b;
#pragma omp simd
    for (int64_t i = 0; i < n; i++) yd[i] = (xd[i] - m) * r * wd[i] + bd[i];
}

/* One row of the forward: y, and the row's mean and rstd (mean[0], rstd[0], of type T). */
TG_ALWAYS_INLINE void ln_fwd_row(bool f32, void *y, const void *x, const void *w, const void *b,
                                 int64_t n, double eps, void *mean, void *rstd)
{
    double mu = n > 0 ? ln_sum(f32, false, x, n, 0) / (double)n : 0;
    /* the deviations from the mean rounded to T, as the sums use it */
    double mt = f32 ? (double)(float)mu : mu;
    double var = n > 0 ? ln_sum(f32, true, x, n, mt) / (double)n : NAN;
    double r = 1.0 / sqrt(var + eps), rt = f32 ? (double)(float)r : r;
    ln_apply(f32, y, x, w, b, n, mt, rt);
    if (f32) {
        *(float *)mean = (float)mt;
        *(float *)rstd = (float)rt;
    } else {
        *(double *)mean = mt;
        *(double *)rstd = rt;
    }
}

/* The backward's row sums, sum(g) and sum(g * (x - m)) with g = dy * w: each block in T, the
 * blocks in double. */
TG_ALWAYS_INLINE void ln_grad_sums(bool f32, const void *dy, const void *x, const void *w,
                                   int64_t n, double m, double *s1, double *s2)
{
    *s1 = *s2 = 0;
    for (int64_t b = 0; b < n; b += LN_BLOCK) {
        int64_t e = b + LN_BLOCK < n ? b + LN_BLOCK : n;
        if (f32) {
            const float *dyf = dy, *xf = x, *wf = w, mf = (float)m;
            float a = 0, q = 0;
#pragma omp simd reduction(+ : a, q)
            for (int64_t i = b; i < e; i++) a += dyf[i] * wf[i], q += dyf[i] * wf[i] * (xf[i] - mf);
            *s1 += a, *s2 += q;
            continue;
        }
        const double *dyd = dy, *xd = x, *wd = w;
        double a = 0, q = 0;
#pragma omp simd reduction(+ : a, q)
        for (int64_t i = b; i < e; i++) a += dyd[i] * wd[i], q += dyd[i] * wd[i] * (xd[i] - m);
        *s1 += a, *s2 += q;
    }
}

/* dx = r * dy * w + c1 + (x - m) * c2 (dx may be NULL), pw += dy * (x - m) * r and pb += dy
 * (either may be NULL), in T; one fused pass. */
TG_ALWAYS_INLINE void ln_bwd_apply(bool f32, void *dx, const void *dy, const void *x, const void *w,
                                   int64_t n, double m, double r, double c1, double c2, void *pw,
                                   void *pb)
{
    if (f32) {
        float *dxf = dx, *pwf = pw, *pbf = pb;
        const float *dyf = dy, *xf = x, *wf = w;
        const float mf = (float)m, rf = (float)r, c1f = (float)c1, c2f = (float)c2;
#pragma omp simd
        for (int64_t i = 0; i < n; i++) {
            if (dxf) dxf[i] = rf * dyf[i] * wf[i] + c1f + (xf[i] - mf) * c2f;
            if (pwf) pwf[i] += dyf[i] * (xf[i] - mf) * rf;
            if (pbf) pbf[i] += dyf[i];
        }
        return;
    }
    double *dxd = dx, *pwd = pw, *pbd = pb;
    const double *dyd = dy, *xd = x, *wd = w;
#pragma omp simd
    for (int64_t i = 0; i < n; i++) {
        if (dxd) dxd[i] = r * dyd[i] * wd[i] + c1 + (xd[i] - m) * c2;
        if (pwd) pwd[i] += dyd[i] * (xd[i] - m) * r;
        if (pbd) pbd[i] += dyd[i];
    }
}

/* One row of the backward: dx (when dx is not NULL) and the row's contribution added to the
 * partial column sums pw (dy * xhat) and pb (dy), with the row's mean m and rstd r. */
TG_ALWAYS_INLINE void ln_bwd_row(bool f32, void *dx, const void *dy, const void *x, const void *w,
                                 int64_t n, double m, double r, void *pw, void *pb)
{
    double c1 = 0, c2 = 0;
    if (dx) {
        double s1, s2;
        ln_grad_sums(f32, dy, x, w, n, m, &s1, &s2);
        /* dx = r * g - r * s1 / n - (x - m) * r^3 * s2 / n, the coefficients rounded to T */
        c1 = -r * s1 / (double)n;
        c2 = -r * r * r * s2 / (double)n;
        if (f32) c1 = (float)c1, c2 = (float)c2;
    }
    ln_bwd_apply(f32, dx, dy, x, w, n, m, r, c1, c2, pw, pb);
}

/* ---- helpers ---- */

/* mean/rstd shape: input.shape[:axis] + [1] * len(normalized_shape). */
static tg_tensor *stat_tensor(const char *op, const tg_tensor *input, int64_t nsl)
{
    int64_t sz[TG_MAX_DIMS];
    for (int64_t i = 0; i < input->ndim; i++) sz[i] = i < input->ndim - nsl ? input->sizes[i] : 1;
    return tg__empty(op, sz, input->ndim, input->dtype, TG_DEVICE_CPU);
}

/* A parameter of N elements as a contiguous array of the element type: the tensor's own data
 * (*hold is a new reference to release) or, for NULL, `fill` repeated in `spare`. */
static const void *param_data(const char *op, tg_tensor *p, int64_t n, bool f32, double fill,
                              void *spare, tg_tensor **hold, bool *ok)
{
    *hold = NULL;
    if (p) {
        *hold = tg__contiguous(op, p);
        if (!*hold) {
            *ok = false;
            return NULL;
        }
        return tg__k_data(*hold);
    }
    if (f32)
        for (int64_t i = 0; i < n; i++) ((float *)spare)[i] = (float)fill;
    else
        for (int64_t i = 0; i < n; i++) ((double *)spare)[i] = fill;
    return spare;
}

/* ---- native_layer_norm ---- */

tg_tensors3 tg__cpu_native_layer_norm(tg_tensor *input, tg_int_list normalized_shape,
                                      tg_tensor *weight, tg_tensor *bias, double eps)
{
    const char *op = "native_layer_norm";
    tg_tensors3 res = { NULL, NULL, NULL };
    int64_t M, N;
    if (tg__layer_norm_check(op, input, normalized_shape, weight, bias, &M, &N) != 0) return res;
    tg_dtype dt = input->dtype;
    bool f32 = dt == TG_FLOAT32, ok = true;
    size_t es = tg_dtype_size(dt);
    /* spare room for the defaults of a missing weight (ones) and bias (zeros) */
    char *spare = malloc(2 * (size_t)(N > 0 ? N : 1) * es);
    tg_tensor *wh, *bh;
    const void *w = param_data(op, weight, N, f32, 1.0, spare, &wh, &ok);
    const void *b = param_data(op, bias, N, f32, 0.0, spare + (size_t)N * es, &bh, &ok);
    tg_tensor *x = ok ? tg__contiguous(op, input) : NULL;
    tg_tensor *y = x ? tg__empty(op, input->sizes, input->ndim, dt, TG_DEVICE_CPU) : NULL;
    tg_tensor *mt = y ? stat_tensor(op, input, normalized_shape.len) : NULL;
    tg_tensor *rt = mt ? stat_tensor(op, input, normalized_shape.len) : NULL;
    if (!spare || !rt) {
        if (!spare) tg__error(op, "out of memory");
        tg_tensor *ts[6] = { wh, bh, x, y, mt, rt };
        tg__k_release_all(ts, 6);
        free(spare);
        return res;
    }
    const char *xd = tg__k_data(x);
    char *yd = tg__k_data(y), *md = tg__k_data(mt), *rd = tg__k_data(rt);
    const int64_t row = N * (int64_t)es;
#pragma omp parallel for schedule(static) if (M * N > LN_GRAIN && M > 1)
    for (int64_t i = 0; i < M; i++)
        ln_fwd_row(f32, yd + i * row, xd + i * row, w, b, N, eps, md + i * (int64_t)es,
                   rd + i * (int64_t)es);
    tg_tensor *tmp[3] = { wh, bh, x };
    tg__k_release_all(tmp, 3);
    free(spare);
    return tg__k_results3(true, y, mt, rt);
}

/* ---- native_layer_norm_backward ---- */

/* The backward's operands: contiguous rows of N elements of dy and x, the row's mean and rstd,
 * dx (or NULL) and the chunks' partial column sums pw (dy * xhat) and pb (dy) (or NULL). */
typedef struct ln_bwd_job {
    bool f32;
    int64_t es, M, N, chunk_rows, nchunks;
    const char *dy, *x, *mean, *rstd;
    const void *w;
    char *dx, *pw, *pb;
} ln_bwd_job;

/* dx and the partials, chunk by chunk (a chunk's rows in order, in one thread). */
static void ln_bwd_chunks(const ln_bwd_job *j)
{
    const tg_dtype dt = j->f32 ? TG_FLOAT32 : TG_FLOAT64;
    const int64_t N = j->N, row = N * j->es;
#pragma omp parallel for schedule(static) if (j->M * N > LN_GRAIN && j->nchunks > 1)
    for (int64_t c = 0; c < j->nchunks; c++) {
        int64_t r0 = c * j->chunk_rows, r1 = r0 + j->chunk_rows < j->M ? r0 + j->chunk_rows : j->M;
        for (int64_t i = r0; i < r1; i++)
            ln_bwd_row(j->f32, j->dx ? j->dx + i * row : NULL, j->dy + i * row, j->x + i * row,
                       j->w, N, tg__pw_load_f64(j->mean + i * j->es, dt),
                       tg__pw_load_f64(j->rstd + i * j->es, dt), j->pw ? j->pw + c * row : NULL,
                       j->pb ? j->pb + c * row : NULL);
    }
}

/* grad_weight and grad_bias (either may be NULL): the chunks' partials added in chunk order,
 * in double, parallel over columns. */
static void ln_sum_partials(const ln_bwd_job *j, char *gw, char *gb)
{
    const tg_dtype dt = j->f32 ? TG_FLOAT32 : TG_FLOAT64;
    const int64_t N = j->N;
#pragma omp parallel for schedule(static) if (j->nchunks * N > LN_GRAIN)
    for (int64_t k = 0; k < N; k++) {
        double a = 0, s = 0;
        for (int64_t c = 0; c < j->nchunks; c++) {
            if (j->pw) a += tg__pw_load_f64(j->pw + (c * N + k) * j->es, dt);
            if (j->pb) s += tg__pw_load_f64(j->pb + (c * N + k) * j->es, dt);
        }
        if (gw) tg__pw_store_f64(gw + k * j->es, dt, a);
        if (gb) tg__pw_store_f64(gb + k * j->es, dt, s);
    }
}

tg_tensors3 tg__cpu_native_layer_norm_backward(tg_tensor *grad_out, tg_tensor *input,
                                               tg_int_list normalized_shape, tg_tensor *mean,
                                               tg_tensor *rstd, tg_tensor *weight, tg_tensor *bias,
                                               tg_bool_list output_mask)
{
    const char *op = "native_layer_norm_backward";
    tg_tensors3 res = { NULL, NULL, NULL };
    int64_t M, N;
    if (tg__layer_norm_backward_check(op, grad_out, input, normalized_shape, mean, rstd, weight,
                                      bias, &M, &N) != 0)
        return res;
    bool want[3];
    tg__k_output_mask(output_mask, want);
    tg_dtype dt = input->dtype;
    bool f32 = dt == TG_FLOAT32, ok = true;
    size_t es = tg_dtype_size(dt);
    int64_t chunk_rows = (M + LN_MAX_CHUNKS - 1) / LN_MAX_CHUNKS;
    if (chunk_rows < LN_MIN_CHUNK_ROWS) chunk_rows = LN_MIN_CHUNK_ROWS;
    int64_t nchunks = M > 0 ? (M + chunk_rows - 1) / chunk_rows : 0;
    bool partials = want[1] || want[2];
    /* ones for a missing weight, then the chunk partials (nchunks rows of dw, then of db) */
    size_t nspare = (size_t)(N > 0 ? N : 1) + (partials ? 2 * (size_t)nchunks * (size_t)N : 0);
    char *spare = calloc(nspare, es);
    tg_tensor *wh;
    const void *w = param_data(op, weight, N, f32, 1.0, spare, &wh, &ok);
    tg_tensor *x = ok ? tg__contiguous(op, input) : NULL;
    tg_tensor *dy = x ? tg__contiguous(op, grad_out) : NULL;
    tg_tensor *mu = dy ? tg__contiguous(op, mean) : NULL;
    tg_tensor *rs = mu ? tg__contiguous(op, rstd) : NULL;
    tg_tensor *dx =
        rs && want[0] ? tg__empty(op, input->sizes, input->ndim, dt, TG_DEVICE_CPU) : NULL;
    tg_tensor *gw =
        rs && want[1] && (!want[0] || dx)
            ? tg__empty(op, normalized_shape.data, normalized_shape.len, dt, TG_DEVICE_CPU)
            : NULL;
    tg_tensor *gb =
        rs && want[2] && (!want[1] || gw)
            ? tg__empty(op, normalized_shape.data, normalized_shape.len, dt, TG_DEVICE_CPU)
            : NULL;
    ok = spare && rs && (!want[0] || dx) && (!want[1] || gw) && (!want[2] || gb);
    if (ok) {
        ln_bwd_job j = { .f32 = f32,
                         .es = (int64_t)es,
                         .M = M,
                         .N = N,
                         .chunk_rows = chunk_rows,
                         .nchunks = nchunks,
                         .dy = tg__k_data(dy),
                         .x = tg__k_data(x),
                         .w = w,
                         .mean = tg__k_data(mu),
                         .rstd = tg__k_data(rs),
                         .dx = dx ? tg__k_data(dx) : NULL,
                         .pw = want[1] ? spare + (size_t)N * es : NULL,
                         .pb = want[2] ? spare + (size_t)N * es + (size_t)nchunks * (size_t)N * es
                                       : NULL };
        ln_bwd_chunks(&j);
        if (partials) ln_sum_partials(&j, gw ? tg__k_data(gw) : NULL, gb ? tg__k_data(gb) : NULL);
    } else if (!spare) {
        tg__error(op, "out of memory");
    }
    tg_tensor *tmp[5] = { wh, x, dy, mu, rs };
    tg__k_release_all(tmp, 5);
    free(spare);
    return tg__k_results3(ok, dx, gw, gb);
}
