/* Pooling and padding on the CPU, NCHW (self (C, H, W) or (N, C, H, W)), PyTorch 1.13's
 * semantics: max_pool2d_with_indices (+ backward), avg_pool2d (+ backward),
 * _adaptive_avg_pool2d (+ backward), adaptive_max_pool2d (+ backward),
 * max_pool_double_backward (the gather that differentiates the max-pooling backwards),
 * reflection_pad2d and replication_pad2d (+ backward).
 *
 * Checks and output shapes come from kernels/common/pool_checks.h (shared with CUDA). Inputs
 * are made contiguous; outputs are new contiguous tensors. The work is split over the
 * nbatch * C planes with tg__parallel_for (OpenMP); each plane's loops are serial, over
 * contiguous rows. float32 and float64 (sums in the element type for float64, in float for
 * float32 as PyTorch's opmath; max pooling compares in the element type, NaN wins like
 * PyTorch's `val > max || isnan(val)`). The backward kernels accumulate into a zeroed
 * grad_input plane by plane (no two planes share memory: no atomics, deterministic). */
#include "tg_kutil.h"
#include "pool_checks.h"
#include "pointwise_convert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/_adaptive_avg_pool2d.h"
#include "kernels/_adaptive_avg_pool2d_backward.h"
#include "kernels/adaptive_max_pool2d.h"
#include "kernels/adaptive_max_pool2d_backward.h"
#include "kernels/avg_pool2d.h"
#include "kernels/avg_pool2d_backward.h"
#include "kernels/max_pool2d_with_indices.h"
#include "kernels/max_pool2d_with_indices_backward.h"
#include "kernels/max_pool_double_backward.h"
#include "kernels/reflection_pad2d.h"
#include "kernels/reflection_pad2d_backward.h"
#include "kernels/replication_pad2d.h"
#include "kernels/replication_pad2d_backward.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* The element type of the planes (bfloat16 runs as float32 copies: run_forward, run_backward). */
typedef enum pool_kind { PK_F32, PK_F64, PK_I64 } pool_kind;

/* One parallel job over planes: the geometry, the operands' data and a plane function. */
typedef struct pool_job {
    pool_kind kind;
    const tg_pool2d *p;
    const char *in; /* input planes (ih * iw elements each) */
    char *out;      /* output planes (oh * ow) */
    const char *go; /* grad_output planes (oh * ow), backward */
    char *gi;       /* grad_input planes (ih * iw), backward */
    int64_t *ind;   /* indices planes (oh * ow) */
    const int64_t *cind;
    bool reflect;
    size_t gi_plane_bytes; /* backward: each plane of gi is zeroed by its own thread first */
    void (*plane)(const struct pool_job *j, int64_t k);
} pool_job;

static void run_planes(int64_t b, int64_t e, void *ctx)
{
    const pool_job *j = ctx;
    if (j->gi_plane_bytes)
        memset(j->gi + (size_t)b * j->gi_plane_bytes, 0, (size_t)(e - b) * j->gi_plane_bytes);
    for (int64_t k = b; k < e; k++) j->plane(j, k);
}

/* Runs job->plane over every plane, in parallel when the work (per_plane elements each) is
 * large enough. */
static void for_planes(pool_job *job, int64_t per_plane)
{
    int64_t planes = tg__pool_planes(job->p);
    int64_t grain = tg__grain_size() / MAX(per_plane, 1);
    tg__parallel_for(planes, MAX(grain, 1), run_planes, job);
}

/* ------------------------------------------------------------------ element leaves
 * The planes hold float32 or float64 (int64 for average pooling: PyTorch's CPU kernel takes
 * Long, integer sums and a truncated quotient), j->kind says which. The window walks below are
 * written once; the arithmetic in the element type (sums in float for float32, as PyTorch's
 * opmath; max pooling compares in the element type) is in these leaves, whose loops sit inside
 * the type test. */

/* A value of the planes' element type. */
typedef union pool_val {
    float f;
    double d;
    int64_t i;
} pool_val;

static inline size_t kind_size(pool_kind k) { return k == PK_F32 ? 4 : 8; }

/* The sum of rows [h0, h1) by columns [w0, w1) of plane x (iw wide), rows in order. */
static pool_val window_sum(pool_kind k, const char *x, int64_t iw, int64_t h0, int64_t h1,
                           int64_t w0, int64_t w1)
{
    pool_val s;
    memset(&s, 0, sizeof s);
    for (int64_t h = h0; h < h1; h++) {
        const char *r = x + (size_t)(h * iw) * kind_size(k);
        if (k == PK_F32)
            for (int64_t w = w0; w < w1; w++) s.f += ((const float *)r)[w];
        else if (k == PK_F64)
            for (int64_t w = w0; w < w1; w++) s.d += ((const double *)r)[w];
        else
            for (int64_t w = w0; w < w1; w++) s.i += ((const int64_t *)r)[w];
    }
    return s;
}

/* Adds v to rows [h0, h1) by columns [w0, w1) of plane x (iw wide). */
static void window_add(pool_kind k, char *x, int64_t iw, int64_t h0, int64_t h1, int64_t w0,
                       int64_t w1, pool_val v)
{
    for (int64_t h = h0; h < h1; h++) {
        char *r = x + (size_t)(h * iw) * kind_size(k);
        if (k == PK_F32)
            for (int64_t w = w0; w < w1; w++) ((float *)r)[w] += v.f;
        else if (k == PK_F64)
            for (int64_t w = w0; w < w1; w++) ((double *)r)[w] += v.d;
        else
            for (int64_t w = w0; w < w1; w++) ((int64_t *)r)[w] += v.i;
    }
}

/* v / a / b in the element type (b = 1 divides once: x / 1 is x). */
static pool_val quotient(pool_kind k, pool_val v, int64_t a, int64_t b)
{
    if (k == PK_F32) v.f = v.f / (float)a / (float)b;
    else if (k == PK_F64) v.d = v.d / (double)a / (double)b;
    else v.i = v.i / a / b;
    return v;
}

static pool_val load_val(pool_kind k, const char *x, int64_t i)
{
    pool_val v;
    memcpy(&v, x + (size_t)i * kind_size(k), kind_size(k));
    return v;
}

static void store_val(pool_kind k, char *x, int64_t i, pool_val v)
{
    memcpy(x + (size_t)i * kind_size(k), &v, kind_size(k));
}

/* x[i] += v[j] in the element type. */
TG_ALWAYS_INLINE void add_elem(pool_kind k, char *x, int64_t i, const char *v, int64_t j)
{
    if (k == PK_F32) ((float *)x)[i] += ((const float *)v)[j];
    else if (k == PK_F64) ((double *)x)[i] += ((const double *)v)[j];
    else ((int64_t *)x)[i] += ((const int64_t *)v)[j];
}

/* gi[ind[i]] += g[i] for the n_out elements whose index lies in the plane's n_in. */
TG_ALWAYS_INLINE void scatter_add(pool_kind k, char *gi, int64_t n_in, const char *g,
                                  const int64_t *ind, int64_t n_out)
{
    for (int64_t i = 0; i < n_out; i++)
        if (ind[i] >= 0 && ind[i] < n_in) add_elem(k, gi, ind[i], g, i);
}

/* x[i] of a float32 or float64 plane, exactly, for comparisons (they order alike). */
static double load_f64(pool_kind k, const char *x, int64_t i)
{
    return k == PK_F32 ? ((const float *)x)[i] : ((const double *)x)[i];
}

/* ------------------------------------------------------------------ max pooling rows */

/* One tap of a row of max pooling, for output columns [lo, hi): the running maxima m of the
 * row and their plane indices mi take src[ow] (index at + ow * step) where it is larger, or
 * NaN, so that the first maximum stays and a NaN wins, as `val > max || isnan(val)`. Written
 * branch-free so the loop vectorises; k is a constant where it is inlined. */
TG_ALWAYS_INLINE void max_tap(pool_kind k, char *m, int32_t *restrict mi, const char *src,
                              int64_t lo, int64_t hi, int32_t at, int32_t step)
{
    if (k == PK_F32) {
        float *restrict mf = (float *)m;
        const float *restrict sf = (const float *)src;
        for (int64_t ow = lo; ow < hi; ow++) {
            bool take = (sf[ow] > mf[ow]) | (sf[ow] != sf[ow]);
            mf[ow] = take ? sf[ow] : mf[ow];
            mi[ow] = take ? at + (int32_t)ow * step : mi[ow];
        }
        return;
    }
    double *restrict md = (double *)m;
    const double *restrict sd = (const double *)src;
    for (int64_t ow = lo; ow < hi; ow++) {
        bool take = (sd[ow] > md[ow]) | (sd[ow] != sd[ow]);
        md[ow] = take ? sd[ow] : md[ow];
        mi[ow] = take ? at + (int32_t)ow * step : mi[ow];
    }
}

/* The input row split into its sw phases (columns r, r + sw, r + 2 sw, ...: ph[r * qn + q] =
 * row[q * sw + r]), so that every tap reads a contiguous run. */
TG_ALWAYS_INLINE void split_phases(pool_kind k, char *ph, const char *row, int64_t iw, int64_t sw,
                                   int64_t qn)
{
    const size_t es = kind_size(k);
    for (int64_t r = 0; r < sw; r++)
        for (int64_t q = 0; q * sw + r < iw; q++)
            memcpy(ph + (size_t)(r * qn + q) * es, row + (size_t)(q * sw + r) * es, es);
}

/* One output row oh of max pooling, tap by tap (window rows, then columns: PyTorch's order
 * within a window): a tap at column offset off feeds output ow from column ow * sw + off, i.e.
 * phase off mod sw at ow + floor(off / sw). The running maxima m and their plane indices mi
 * (int32, widened at the end) of the row update in max_tap. scratch: ow values, ow int32
 * indices, iw + sw phase values. */
TG_ALWAYS_INLINE void maxpool_row(pool_kind k, const tg_pool2d *p, const char *x, int64_t oh,
                                  char *y, int64_t *ind, char *m, int32_t *mi, char *ph)
{
    const size_t es = kind_size(k);
    int64_t sw = p->sw, qn = (p->iw + sw - 1) / sw;
    int64_t h0 = oh * p->sh - p->ph, h1 = MIN(h0 + (p->kh - 1) * p->dh + 1, p->ih);
    while (h0 < 0) h0 += p->dh;
    for (int64_t ow = 0; ow < p->ow; ow++) {
        int64_t w0 = ow * sw - p->pw;
        while (w0 < 0) w0 += p->dw;
        pool_val lowest = { .f = -INFINITY };
        if (k == PK_F64) lowest.d = -INFINITY;
        store_val(k, m, ow, lowest);
        mi[ow] = (int32_t)(h0 * p->iw + w0);
    }
    for (int64_t h = h0; h < h1; h += p->dh) {
        split_phases(k, ph, x + (size_t)(h * p->iw) * es, p->iw, sw, qn);
        for (int64_t t = 0; t < p->kw; t++) {
            int64_t off = t * p->dw - p->pw;
            int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
            int64_t hi = p->iw - off <= 0 ? 0 : (p->iw - off + sw - 1) / sw;
            if (hi > p->ow) hi = p->ow;
            int64_t r = ((off % sw) + sw) % sw, qo = (off - r) / sw;
            max_tap(k, m, mi, ph + (size_t)(r * qn + qo) * es, lo, hi, (int32_t)(h * p->iw + off),
                    (int32_t)sw);
        }
    }
    memcpy(y, m, (size_t)p->ow * es);
    for (int64_t ow = 0; ow < p->ow; ow++) ind[ow] = mi[ow];
}

/* The maximum of rows [h0, h1) step dh by columns [w0, w1) step dw of a plane iw wide (NaN
 * wins; the first of equal values) stored at y[i], its flat index in *at. */
static void window_max(pool_kind k, const char *x, int64_t iw, int64_t h0, int64_t h1, int64_t dh,
                       int64_t w0, int64_t w1, int64_t dw, char *y, int64_t i, int64_t *at)
{
    int64_t mi = h0 * iw + w0;
    double mv = -INFINITY;
    for (int64_t h = h0; h < h1; h += dh)
        for (int64_t w = w0; w < w1; w += dw) {
            double v = load_f64(k, x, h * iw + w);
            if (v > mv || isnan(v)) {
                mv = v;
                mi = h * iw + w;
            }
        }
    *at = mi;
    if (k == PK_F32) ((float *)y)[i] = (float)mv;
    else ((double *)y)[i] = mv;
}

/* The plain loop: one window per output (planes of 2^31 elements or more, or when the scratch
 * cannot be allocated). */
static void maxpool_simple(pool_kind k, const tg_pool2d *p, const char *x, char *y, int64_t *ind)
{
    for (int64_t oh = 0; oh < p->oh; oh++) {
        int64_t h0 = oh * p->sh - p->ph, h1 = MIN(h0 + (p->kh - 1) * p->dh + 1, p->ih);
        while (h0 < 0) h0 += p->dh;
        for (int64_t ow = 0; ow < p->ow; ow++) {
            int64_t w0 = ow * p->sw - p->pw, w1 = MIN(w0 + (p->kw - 1) * p->dw + 1, p->iw);
            while (w0 < 0) w0 += p->dw;
            int64_t i = oh * p->ow + ow;
            window_max(k, x, p->iw, h0, h1, p->dh, w0, w1, p->dw, y, i, &ind[i]);
        }
    }
}

TG_ALWAYS_INLINE void maxpool_rows(pool_kind k, const tg_pool2d *p, const char *x, char *y,
                                   int64_t *ind, char *buf)
{
    const size_t es = kind_size(k);
    char *m = buf, *ph = buf + (size_t)p->ow * es;
    int32_t *mi = (int32_t *)(ph + (size_t)(p->iw + p->sw) * es);
    for (int64_t oh = 0; oh < p->oh; oh++)
        maxpool_row(k, p, x, oh, y + (size_t)(oh * p->ow) * es, ind + oh * p->ow, m, mi, ph);
}

/* ------------------------------------------------------------------ plane functions
 * Plane k of the job: its operands are the k-th plane of each array. */

/* Plane k of each of the job's arrays (NULL where the job has none). */
typedef struct pool_plane {
    const char *in; /* input (ih * iw elements) */
    char *out;      /* output (oh * ow) */
    const char *go; /* grad_output (oh * ow) */
    char *gi;       /* grad_input (ih * iw) */
    int64_t *ind;   /* indices (oh * ow) */
    const int64_t *cind;
} pool_plane;

static pool_plane plane_of(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    const size_t es = kind_size(j->kind);
    const int64_t nin = k * p->ih * p->iw, nout = k * p->oh * p->ow;
    pool_plane pl = { j->in ? j->in + (size_t)nin * es : NULL,
                      j->out ? j->out + (size_t)nout * es : NULL,
                      j->go ? j->go + (size_t)nout * es : NULL,
                      j->gi ? j->gi + (size_t)nin * es : NULL,
                      j->ind ? j->ind + nout : NULL,
                      j->cind ? j->cind + nout : NULL };
    return pl;
}

/* The window of adaptive pooling's output (oh, ow): rows [*h0, *h1), columns [*w0, *w1). */
static void adaptive_window(const tg_pool2d *p, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1,
                            int64_t *w0, int64_t *w1)
{
    *h0 = tg__adaptive_start(oh, p->oh, p->ih);
    *h1 = tg__adaptive_end(oh, p->oh, p->ih);
    *w0 = tg__adaptive_start(ow, p->ow, p->iw);
    *w1 = tg__adaptive_end(ow, p->ow, p->iw);
}

static void maxpool_fwd(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    const pool_plane pl = plane_of(j, k);
    const char *x = pl.in;
    char *y = pl.out;
    int64_t *ind = pl.ind;
    const size_t es = kind_size(j->kind);
    size_t bytes = (size_t)p->ow * (es + 4) + (size_t)(p->iw + p->sw) * es;
    char *buf = p->ih * p->iw < INT32_MAX ? malloc(bytes) : NULL;
    if (!buf) maxpool_simple(j->kind, p, x, y, ind);
    else if (j->kind == PK_F32) maxpool_rows(PK_F32, p, x, y, ind, buf);
    else maxpool_rows(PK_F64, p, x, y, ind, buf);
    free(buf);
}

/* scatter of grad_output into grad_input at the plane's indices (max pooling backward) */
static void maxpool_bwd(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    int64_t n_in = p->ih * p->iw, n_out = p->oh * p->ow;
    const size_t es = kind_size(j->kind);
    const char *g = j->go + (size_t)(k * n_out) * es;
    const int64_t *ind = j->cind + k * n_out;
    char *gi = j->gi + (size_t)(k * n_in) * es;
    if (j->kind == PK_F32) scatter_add(PK_F32, gi, n_in, g, ind, n_out);
    else scatter_add(PK_F64, gi, n_in, g, ind, n_out);
}

/* gather of the input plane at the indices (max_pool_double_backward) */
static void gather(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    int64_t n_in = p->ih * p->iw, n_out = p->oh * p->ow;
    const size_t es = kind_size(j->kind);
    const char *x = j->in + (size_t)(k * n_in) * es;
    const int64_t *ind = j->cind + k * n_out;
    char *y = j->out + (size_t)(k * n_out) * es;
    for (int64_t i = 0; i < n_out; i++) {
        int64_t t = ind[i];
        if (t >= 0 && t < n_in) memcpy(y + (size_t)i * es, x + (size_t)t * es, es);
        else memset(y + (size_t)i * es, 0, es);
    }
}

static void adavg_fwd(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    const pool_plane pl = plane_of(j, k);
    const char *x = pl.in;
    char *y = pl.out;
    for (int64_t oh = 0; oh < p->oh; oh++) {
        for (int64_t ow = 0; ow < p->ow; ow++) {
            int64_t h0, h1, w0, w1;
            adaptive_window(p, oh, ow, &h0, &h1, &w0, &w1);
            pool_val s = window_sum(j->kind, x, p->iw, h0, h1, w0, w1);
            store_val(j->kind, y, oh * p->ow + ow, quotient(j->kind, s, (h1 - h0) * (w1 - w0), 1));
        }
    }
}

static void adavg_bwd(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    const pool_plane pl = plane_of(j, k);
    const char *g = pl.go;
    char *gi = pl.gi;
    for (int64_t oh = 0; oh < p->oh; oh++) {
        for (int64_t ow = 0; ow < p->ow; ow++) {
            int64_t h0, h1, w0, w1;
            adaptive_window(p, oh, ow, &h0, &h1, &w0, &w1);
            pool_val d = quotient(j->kind, load_val(j->kind, g, oh * p->ow + ow), h1 - h0, w1 - w0);
            window_add(j->kind, gi, p->iw, h0, h1, w0, w1, d);
        }
    }
}

static void admax_fwd(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    const pool_plane pl = plane_of(j, k);
    const char *x = pl.in;
    char *y = pl.out;
    int64_t *ind = pl.ind;
    for (int64_t oh = 0; oh < p->oh; oh++) {
        for (int64_t ow = 0; ow < p->ow; ow++) {
            int64_t h0, h1, w0, w1;
            adaptive_window(p, oh, ow, &h0, &h1, &w0, &w1);
            int64_t i = oh * p->ow + ow;
            window_max(j->kind, x, p->iw, h0, h1, 1, w0, w1, 1, y, i, &ind[i]);
        }
    }
}

static void pad_fwd(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    const pool_plane pl = plane_of(j, k);
    const char *x = pl.in;
    char *y = pl.out;
    const size_t es = kind_size(j->kind);
    for (int64_t oh = 0; oh < p->oh; oh++) {
        const char *row = x + (size_t)(tg__pad_src(oh, p->pt, p->ih, j->reflect) * p->iw) * es;
        for (int64_t ow = 0; ow < p->ow; ow++)
            memcpy(y + (size_t)(oh * p->ow + ow) * es,
                   row + (size_t)tg__pad_src(ow, p->pl, p->iw, j->reflect) * es, es);
    }
}

static void pad_bwd(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    const pool_plane pl = plane_of(j, k);
    const char *g = pl.go;
    char *gi = pl.gi;
    for (int64_t oh = 0; oh < p->oh; oh++) {
        int64_t h = tg__pad_src(oh, p->pt, p->ih, j->reflect);
        for (int64_t ow = 0; ow < p->ow; ow++)
            add_elem(j->kind, gi, h * p->iw + tg__pad_src(ow, p->pl, p->iw, j->reflect), g,
                     oh * p->ow + ow);
    }
}

static void avgpool_fwd(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    const pool_plane pl = plane_of(j, k);
    const char *x = pl.in;
    char *y = pl.out;
    for (int64_t oh = 0; oh < p->oh; oh++)
        for (int64_t ow = 0; ow < p->ow; ow++) {
            int64_t h0, h1, w0, w1, div;
            pool_val q;
            memset(&q, 0, sizeof q);
            if (tg__avg_pool_window(p, oh, ow, &h0, &h1, &w0, &w1, &div))
                q = quotient(j->kind, window_sum(j->kind, x, p->iw, h0, h1, w0, w1), div, 1);
            store_val(j->kind, y, oh * p->ow + ow, q);
        }
}

static void avgpool_bwd(const pool_job *j, int64_t k)
{
    const tg_pool2d *p = j->p;
    const pool_plane pl = plane_of(j, k);
    const char *g = pl.go;
    char *gi = pl.gi;
    for (int64_t oh = 0; oh < p->oh; oh++)
        for (int64_t ow = 0; ow < p->ow; ow++) {
            int64_t h0, h1, w0, w1, div;
            if (!tg__avg_pool_window(p, oh, ow, &h0, &h1, &w0, &w1, &div)) continue;
            pool_val d = quotient(j->kind, load_val(j->kind, g, oh * p->ow + ow), div, 1);
            window_add(j->kind, gi, p->iw, h0, h1, w0, w1, d);
        }
}

typedef void (*plane_fn)(const pool_job *, int64_t);

/* ------------------------------------------------------------------ helpers */

/* The pooling kernels' dtypes: float32, float64 and bfloat16 (PyTorch's CPU pooling takes
 * BFloat16; its padding kernels do not). */
static int pool_dtype_check(const char *op, const char *name, const tg_tensor *t)
{
    return t->dtype == TG_BFLOAT16 ? 0 : tg__pool_dtype_check(op, name, t);
}

/* A contiguous copy of the contiguous tensor t in dtype dt (t's reference is consumed). */
static tg_tensor *convert(const char *op, tg_tensor *t, tg_dtype dt)
{
    if (!t || t->dtype == dt) return t;
    tg_tensor *r = tg__empty(op, t->sizes, t->ndim, dt, TG_DEVICE_CPU);
    if (r) {
        const char *src = tg__k_data(t);
        char *dst = tg__k_data(r);
        size_t ss = tg_dtype_size(t->dtype), ds = tg_dtype_size(dt);
        int64_t n = tg__numel(t);
        for (int64_t i = 0; i < n; i++)
            tg__pw_convert(dst + (size_t)i * ds, dt, src + (size_t)i * ss, t->dtype);
    }
    tg_release(t);
    return r;
}

/* The dtype the planes run in. */
static tg_dtype work_dtype(tg_dtype dt) { return dt == TG_BFLOAT16 ? TG_FLOAT32 : dt; }

static pool_kind kind_of(tg_dtype dt)
{
    return dt == TG_FLOAT64 ? PK_F64 : dt == TG_INT64 ? PK_I64 : PK_F32;
}

/* The output (shape from p, dtype dt) and, when ind is given, int64 indices. */
static int alloc_out(const char *op, const tg_pool2d *p, tg_dtype dt, tg_tensor **out,
                     tg_tensor **ind)
{
    int64_t sizes[4];
    int64_t nd = tg__pool_out_shape(p, sizes);
    *out = tg__empty(op, sizes, nd, dt, TG_DEVICE_CPU);
    if (!*out) return -1;
    if (ind) {
        *ind = tg__empty(op, sizes, nd, TG_INT64, TG_DEVICE_CPU);
        if (!*ind) {
            tg_release(*out);
            *out = NULL;
            return -1;
        }
    }
    return 0;
}

/* Runs a forward job: x contiguous, output (and indices) allocated. */
static tg_tensors2 run_forward(const char *op, tg_tensor *self, const tg_pool2d *p, plane_fn fn,
                               bool with_indices, bool reflect, int64_t work)
{
    tg_tensors2 r = { NULL, NULL };
    tg_tensor *x = convert(op, tg__contiguous(op, self), work_dtype(self->dtype));
    if (!x) return r;
    if (alloc_out(op, p, x->dtype, &r.r0, with_indices ? &r.r1 : NULL) != 0) {
        tg_release(x);
        return r;
    }
    if (tg__numel(r.r0) > 0) {
        pool_job job = { .kind = kind_of(x->dtype),
                         .p = p,
                         .in = tg__k_data(x),
                         .out = tg__k_data(r.r0),
                         .ind = with_indices ? (int64_t *)tg__k_data(r.r1) : NULL,
                         .reflect = reflect,
                         .plane = fn };
        for_planes(&job, work);
    }
    tg_release(x);
    return tg__k_convert_first(op, r, self->dtype, convert);
}

/* Runs a backward job: grad_input of self's shape (each plane zeroed by the thread that fills
 * it, so the pages are touched in parallel), grad_output (and indices) contiguous. */
static tg_tensor *run_backward(const char *op, tg_tensor *grad_output, tg_tensor *self,
                               tg_tensor *indices, const tg_pool2d *p, plane_fn fn, bool reflect,
                               int64_t work)
{
    tg_dtype wdt = work_dtype(self->dtype);
    tg_tensor *gi = tg__empty(op, self->sizes, self->ndim, wdt, TG_DEVICE_CPU);
    if (!gi) return NULL;
    tg_tensor *go = convert(op, tg__contiguous(op, grad_output), wdt);
    tg_tensor *ind = go && indices ? tg__contiguous(op, indices) : NULL;
    if (!go || (indices && !ind)) {
        tg_release(go);
        tg_release(gi);
        return NULL;
    }
    if (tg__numel(gi) > 0 && tg__numel(go) > 0) {
        pool_job job = { .kind = kind_of(wdt),
                         .p = p,
                         .go = tg__k_data(go),
                         .gi = tg__k_data(gi),
                         .cind = ind ? (const int64_t *)tg__k_data(ind) : NULL,
                         .reflect = reflect,
                         .gi_plane_bytes = (size_t)(p->ih * p->iw) * tg_dtype_size(gi->dtype),
                         .plane = fn };
        for_planes(&job, work);
    } else {
        memset(tg__k_data(gi), 0, (size_t)tg__numel(gi) * tg_dtype_size(gi->dtype));
    }
    tg_release(ind);
    tg_release(go);
    return convert(op, gi, self->dtype);
}

/* ------------------------------------------------------------------ max pooling */

tg_tensors2 tg__cpu_max_pool2d_with_indices(tg_tensor *self, tg_int_list kernel_size,
                                            tg_int_list stride, tg_int_list padding,
                                            tg_int_list dilation, bool ceil_mode)
{
    const char *op = "max_pool2d_with_indices";
    tg_tensors2 r = { NULL, NULL };
    tg_pool2d p;
    if (tg__max_pool2d_check(op, self, kernel_size, stride, padding, dilation, ceil_mode, &p) ||
        pool_dtype_check(op, "max_pool2d", self))
        return r;
    return run_forward(op, self, &p, maxpool_fwd, true, false, p.oh * p.ow * p.kh * p.kw);
}

tg_tensor *tg__cpu_max_pool2d_with_indices_backward(tg_tensor *grad_output, tg_tensor *self,
                                                    tg_int_list kernel_size, tg_int_list stride,
                                                    tg_int_list padding, tg_int_list dilation,
                                                    bool ceil_mode, tg_tensor *indices)
{
    const char *op = "max_pool2d_with_indices_backward";
    tg_pool2d p;
    if (tg__max_pool2d_check(op, self, kernel_size, stride, padding, dilation, ceil_mode, &p) ||
        tg__pool_backward_check(op, grad_output, self, indices, &p) ||
        pool_dtype_check(op, "max_pool2d_backward", self))
        return NULL;
    return run_backward(op, grad_output, self, indices, &p, maxpool_bwd, false, p.oh * p.ow);
}

/* self (.., H, W) gathered at indices (.., OH, OW): the planes of both are matched in order. */
tg_tensor *tg__cpu_max_pool_double_backward(tg_tensor *self, tg_tensor *indices, int64_t dim)
{
    const char *op = "max_pool_double_backward";
    tg_pool2d p;
    if (tg__max_pool_double_backward_check(op, self, indices, dim, &p) ||
        tg__pool_dtype_check(op, "max_pool_double_backward", self))
        return NULL;
    tg_tensor *x = tg__contiguous(op, self);
    tg_tensor *ind = x ? tg__contiguous(op, indices) : NULL;
    tg_tensor *out =
        ind ? tg__empty(op, indices->sizes, indices->ndim, self->dtype, TG_DEVICE_CPU) : NULL;
    if (out && tg__numel(out) > 0) {
        pool_job job = { .kind = kind_of(self->dtype),
                         .p = &p,
                         .in = tg__k_data(x),
                         .out = tg__k_data(out),
                         .cind = (const int64_t *)tg__k_data(ind),
                         .plane = gather };
        for_planes(&job, p.oh * p.ow);
    }
    tg_release(ind);
    tg_release(x);
    return out;
}

/* ------------------------------------------------------------------ average pooling */

tg_tensor *tg__cpu_avg_pool2d(tg_tensor *self, tg_int_list kernel_size, tg_int_list stride,
                              tg_int_list padding, bool ceil_mode, bool count_include_pad,
                              tg_opt_int divisor_override)
{
    const char *op = "avg_pool2d";
    tg_pool2d p;
    if (tg__avg_pool2d_check(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override, &p) ||
        (self->dtype != TG_INT64 && pool_dtype_check(op, "avg_pool2d", self)))
        return NULL;
    return run_forward(op, self, &p, avgpool_fwd, false, false, p.oh * p.ow * p.kh * p.kw).r0;
}

tg_tensor *tg__cpu_avg_pool2d_backward(tg_tensor *grad_output, tg_tensor *self,
                                       tg_int_list kernel_size, tg_int_list stride,
                                       tg_int_list padding, bool ceil_mode, bool count_include_pad,
                                       tg_opt_int divisor_override)
{
    const char *op = "avg_pool2d_backward";
    tg_pool2d p;
    if (tg__avg_pool2d_check(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override, &p) ||
        tg__pool_backward_check(op, grad_output, self, NULL, &p) ||
        (self->dtype != TG_INT64 && pool_dtype_check(op, "avg_pool2d_backward", self)))
        return NULL;
    return run_backward(op, grad_output, self, NULL, &p, avgpool_bwd, false,
                        p.oh * p.ow * p.kh * p.kw);
}

/* ------------------------------------------------------------------ adaptive pooling */

tg_tensor *tg__cpu_adaptive_avg_pool2d(tg_tensor *self, tg_int_list output_size)
{
    const char *op = "_adaptive_avg_pool2d";
    tg_pool2d p;
    if (tg__adaptive_pool2d_check(op, self, output_size, false, &p) ||
        pool_dtype_check(op, "adaptive_avg_pool2d", self))
        return NULL;
    return run_forward(op, self, &p, adavg_fwd, false, false, MAX(p.ih * p.iw, p.oh * p.ow)).r0;
}

tg_tensor *tg__cpu_adaptive_avg_pool2d_backward(tg_tensor *grad_output, tg_tensor *self)
{
    const char *op = "_adaptive_avg_pool2d_backward";
    tg_pool2d p;
    if (tg__adaptive_avg_backward_check(op, grad_output, self, &p) ||
        pool_dtype_check(op, "adaptive_avg_pool2d_backward", self))
        return NULL;
    return run_backward(op, grad_output, self, NULL, &p, adavg_bwd, false,
                        MAX(p.ih * p.iw, p.oh * p.ow));
}

tg_tensors2 tg__cpu_adaptive_max_pool2d(tg_tensor *self, tg_int_list output_size)
{
    const char *op = "adaptive_max_pool2d";
    tg_tensors2 r = { NULL, NULL };
    tg_pool2d p;
    if (tg__adaptive_pool2d_check(op, self, output_size, true, &p) ||
        pool_dtype_check(op, "adaptive_max_pool2d", self))
        return r;
    return run_forward(op, self, &p, admax_fwd, true, false, MAX(p.ih * p.iw, p.oh * p.ow));
}

tg_tensor *tg__cpu_adaptive_max_pool2d_backward(tg_tensor *grad_output, tg_tensor *self,
                                                tg_tensor *indices)
{
    const char *op = "adaptive_max_pool2d_backward";
    tg_pool2d p;
    if (tg__adaptive_max_backward_check(op, grad_output, self, indices, &p) ||
        pool_dtype_check(op, "adaptive_max_pool2d_backward", self))
        return NULL;
    return run_backward(op, grad_output, self, indices, &p, maxpool_bwd, false, p.oh * p.ow);
}

/* ------------------------------------------------------------------ padding */

static tg_tensor *pad_forward(const char *op, const char *name, tg_tensor *self,
                              tg_int_list padding, bool reflect)
{
    tg_pool2d p;
    if (tg__pad2d_check(op, self, padding, reflect, &p) || tg__pool_dtype_check(op, name, self))
        return NULL;
    return run_forward(op, self, &p, pad_fwd, false, reflect, p.oh * p.ow).r0;
}

static tg_tensor *pad_backward(const char *op, const char *name, tg_tensor *grad_output,
                               tg_tensor *self, tg_int_list padding, bool reflect)
{
    tg_pool2d p;
    if (tg__pad2d_backward_checks(op, name, grad_output, self, padding, reflect,
                                  tg__pool_dtype_check, &p) != 0)
        return NULL;
    return run_backward(op, grad_output, self, NULL, &p, pad_bwd, reflect, p.oh * p.ow);
}

tg_tensor *tg__cpu_reflection_pad2d(tg_tensor *self, tg_int_list padding)
{
    return pad_forward("reflection_pad2d", "reflection_pad2d", self, padding, true);
}

tg_tensor *tg__cpu_reflection_pad2d_backward(tg_tensor *grad_output, tg_tensor *self,
                                             tg_int_list padding)
{
    return pad_backward("reflection_pad2d_backward", "reflection_pad2d_backward", grad_output, self,
                        padding, true);
}

tg_tensor *tg__cpu_replication_pad2d(tg_tensor *self, tg_int_list padding)
{
    return pad_forward("replication_pad2d", "replication_pad2d_cpu", self, padding, false);
}

tg_tensor *tg__cpu_replication_pad2d_backward(tg_tensor *grad_output, tg_tensor *self,
                                              tg_int_list padding)
{
    return pad_backward("replication_pad2d_backward", "replication_pad2d_backward_cpu", grad_output,
                        self, padding, false);
}
