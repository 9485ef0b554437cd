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

/* ---- per-row kernels, one copy per element type ---- */

#define DEFINE_LN_ROWS(T, SUF)                                                                      \
    /* sum(x) over n contiguous elements. */                                                        \
    static double ln_sum_##SUF(const T *x, int64_t n)                                               \
    {                                                                                               \
        double acc = 0;                                                                             \
        for (int64_t b = 0; b < n; b += LN_BLOCK) {                                                 \
            int64_t e = b + LN_BLOCK < n ? b + LN_BLOCK : n;                                        \
            T s = 0;                                                                                \
            _Pragma("omp simd reduction(+ : s)") for (int64_t i = b; i < e; i++) s += x[i];         \
            acc += s;                                                                               \
        }                                                                                           \
        return acc;                                                                                 \
    }                                                                                               \
    /* sum((x - m)^2) over n contiguous elements. */                                                \
    static double ln_sqdev_##SUF(const T *x, int64_t n, T m)                                        \
    {                                                                                               \
        double acc = 0;                                                                             \
        for (int64_t b = 0; b < n; b += LN_BLOCK) {                                                 \
            int64_t e = b + LN_BLOCK < n ? b + LN_BLOCK : n;                                        \
            T s = 0;                                                                                \
            _Pragma("omp simd reduction(+ : s)") for (int64_t i = b; i < e; i++)                    \
            {                                                                                       \
                T d = x[i] - m;                                                                     \
                s += d * d;                                                                         \
            }                                                                                       \
            acc += s;                                                                               \
        }                                                                                           \
        return acc;                                                                                 \
    }                                                                                               \
    /* One row of the forward: y, and the row's mean and rstd. */                                   \
    static void ln_fwd_row_##SUF(T *y, const T *x, const T *w, const T *b, int64_t n, double eps,   \
                                 T *mean, T *rstd)                                                  \
    {                                                                                               \
        double mu = n > 0 ? ln_sum_##SUF(x, n) / (double)n : 0;                                     \
        double var = n > 0 ? ln_sqdev_##SUF(x, n, (T)mu) / (double)n : NAN;                         \
        double r = 1.0 / sqrt(var + eps);                                                           \
        T m = (T)mu, rr = (T)r;                                                                     \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * rr * w[i] + b[i];   \
        *mean = m;                                                                                  \
        *rstd = rr;                                                                                 \
    }                                                                                               \
    /* One row of the backward: dx (when dx is not NULL) and the row's contribution added to the  \
     * partial column sums pw (dy * xhat) and pb (dy). */ \
    static void ln_bwd_row_##SUF(T *dx, const T *dy, const T *x, const T *w, int64_t n, T m, T r,   \
                                 T *pw, T *pb)                                                      \
    {                                                                                               \
        if (dx) {                                                                                   \
            double s1 = 0, s2 = 0;                                                                  \
            for (int64_t b0 = 0; b0 < n; b0 += LN_BLOCK) {                                          \
                int64_t e = b0 + LN_BLOCK < n ? b0 + LN_BLOCK : n;                                  \
                T a = 0, q = 0;                                                                     \
                _Pragma("omp simd reduction(+ : a, q)") for (int64_t i = b0; i < e; i++)            \
                {                                                                                   \
                    T g = dy[i] * w[i];                                                             \
                    a += g;                                                                         \
                    q += g * (x[i] - m);                                                            \
                }                                                                                   \
                s1 += a;                                                                            \
                s2 += q;                                                                            \
            }                                                                                       \
            /* dx = r * g - r * s1 / n - (x - m) * r^3 * s2 / n */                                  \
            T c1 = (T)(-(double)r * s1 / (double)n);                                                \
            T c2 = (T)(-(double)r * (double)r * (double)r * s2 / (double)n);                        \
            if (pw && pb) { /* the common case, one fused pass */                                   \
                _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                                 \
                {                                                                                   \
                    T d = x[i] - m;                                                                 \
                    dx[i] = r * dy[i] * w[i] + c1 + d * c2;                                         \
                    pw[i] += dy[i] * d * r;                                                         \
                    pb[i] += dy[i];                                                                 \
                }                                                                                   \
                return;                                                                             \
            }                                                                                       \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) dx[i] =                             \
                r * dy[i] * w[i] + c1 + (x[i] - m) * c2;                                            \
        }                                                                                           \
        if (pw) {                                                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) pw[i] += dy[i] * (x[i] - m) * r;    \
        }                                                                                           \
        if (pb) {                                                                                   \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) pb[i] += dy[i];                     \
        }                                                                                           \
    }
DEFINE_LN_ROWS(float, f)
DEFINE_LN_ROWS(double, d)

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
        for (int i = 0; i < 6; i++) tg_release(ts[i]);
        free(spare);
        return res;
    }
    const char *xd = tg__k_data(x);
    char *yd = tg__k_data(y), *md = tg__k_data(mt), *rd = tg__k_data(rt);
#pragma omp parallel for schedule(static) if (M * N > LN_GRAIN && M > 1)
    for (int64_t i = 0; i < M; i++) {
        if (f32)
            ln_fwd_row_f((float *)yd + i * N, (const float *)xd + i * N, (const float *)w,
                         (const float *)b, N, eps, (float *)md + i, (float *)rd + i);
        else
            ln_fwd_row_d((double *)yd + i * N, (const double *)xd + i * N, (const double *)w,
                         (const double *)b, N, eps, (double *)md + i, (double *)rd + i);
    }
    tg_release(wh);
    tg_release(bh);
    tg_release(x);
    free(spare);
    res.r0 = y;
    res.r1 = mt;
    res.r2 = rt;
    return res;
}

/* ---- native_layer_norm_backward ---- */

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
    for (int i = 0; i < 3; i++) want[i] = i < output_mask.len ? output_mask.data[i] : false;
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
        const char *xd = tg__k_data(x), *dyd = tg__k_data(dy), *md = tg__k_data(mu),
                   *rd = tg__k_data(rs);
        char *dxd = dx ? tg__k_data(dx) : NULL;
        char *pw = spare + (size_t)N * es, *pb = pw + (size_t)nchunks * (size_t)N * es;
#pragma omp parallel for schedule(static) if (M * N > LN_GRAIN && nchunks > 1)
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t r0 = c * chunk_rows, r1 = r0 + chunk_rows < M ? r0 + chunk_rows : M;
            for (int64_t i = r0; i < r1; i++) {
                if (f32)
                    ln_bwd_row_f(dxd ? (float *)dxd + i * N : NULL, (const float *)dyd + i * N,
                                 (const float *)xd + i * N, (const float *)w, N,
                                 ((const float *)md)[i], ((const float *)rd)[i],
                                 want[1] ? (float *)pw + c * N : NULL,
                                 want[2] ? (float *)pb + c * N : NULL);
                else
                    ln_bwd_row_d(dxd ? (double *)dxd + i * N : NULL, (const double *)dyd + i * N,
                                 (const double *)xd + i * N, (const double *)w, N,
                                 ((const double *)md)[i], ((const double *)rd)[i],
                                 want[1] ? (double *)pw + c * N : NULL,
                                 want[2] ? (double *)pb + c * N : NULL);
            }
        }
        /* the partials added in chunk order, parallel over columns */
        char *gwd = gw ? tg__k_data(gw) : NULL, *gbd = gb ? tg__k_data(gb) : NULL;
        if (partials) {
#pragma omp parallel for schedule(static) if (nchunks * N > LN_GRAIN)
            for (int64_t j = 0; j < N; j++) {
                double a = 0, s = 0;
                for (int64_t c = 0; c < nchunks; c++) {
                    if (f32) {
                        a += ((const float *)pw)[c * N + j];
                        s += ((const float *)pb)[c * N + j];
                    } else {
                        a += ((const double *)pw)[c * N + j];
                        s += ((const double *)pb)[c * N + j];
                    }
                }
                if (f32) {
                    if (gwd) ((float *)gwd)[j] = (float)a;
                    if (gbd) ((float *)gbd)[j] = (float)s;
                } else {
                    if (gwd) ((double *)gwd)[j] = a;
                    if (gbd) ((double *)gbd)[j] = s;
                }
            }
        }
    } else if (!spare) {
        tg__error(op, "out of memory");
    }
    tg_tensor *tmp[5] = { wh, x, dy, mu, rs };
    for (int i = 0; i < 5; i++) tg_release(tmp[i]);
    free(spare);
    if (!ok) {
        tg_release(dx);
        tg_release(gw);
        tg_release(gb);
        return res;
    }
    res.r0 = dx;
    res.r1 = gw;
    res.r2 = gb;
    return res;
}
