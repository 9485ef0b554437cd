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

/* One parallel job over planes: the geometry, the operands' data and a plane function. */
typedef struct pool_job {
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

/* ------------------------------------------------------------------ typed plane functions */

#define DEFINE_PLANES(T, ACC, SFX)                                                                \
    /* One output row at a time, tap by tap (window rows, then columns: PyTorch's order within \
     * a window). Each input row the row's windows read is first split into its sw phases     \
     * (columns r, r + sw, r + 2 sw, ...), so that every tap reads a contiguous run: a tap at \
     * column offset off feeds output ow from column ow * sw + off, i.e. phase off mod sw at  \
     * ow + floor(off / sw). The running maxima (m) and their plane indices (int32, widened   \
     * at the end) of the row update in a branch-free loop the compiler vectorizes; the       \
     * select keeps the first maximum and lets a NaN win, as `val > max || isnan(val)`.       \
     * scratch: ow values, ow int32 indices, iw + sw phase values. */  \
    static void maxpool_row_##SFX(const tg_pool2d *p, const T *x, int64_t oh, T *y, int64_t *ind, \
                                  T *restrict m, int32_t *restrict mi, T *restrict ph)            \
    {                                                                                             \
        int64_t sw = p->sw, qn = (p->iw + sw - 1) / sw;                                           \
        int64_t h0 = oh * p->sh - p->ph, h1 = MIN(h0 + (p->kh - 1) * p->dh + 1, p->ih);           \
        while (h0 < 0) h0 += p->dh;                                                               \
        for (int64_t ow = 0; ow < p->ow; ow++) {                                                  \
            int64_t w0 = ow * sw - p->pw;                                                         \
            while (w0 < 0) w0 += p->dw;                                                           \
            m[ow] = -(T)INFINITY;                                                                 \
            mi[ow] = (int32_t)(h0 * p->iw + w0);                                                  \
        }                                                                                         \
        for (int64_t h = h0; h < h1; h += p->dh) {                                                \
            const T *row = x + h * p->iw;                                                         \
            for (int64_t r = 0; r < sw; r++)                                                      \
                for (int64_t q = 0; q * sw + r < p->iw; q++) ph[r * qn + q] = row[q * sw + r];    \
            for (int64_t t = 0; t < p->kw; t++) {                                                 \
                int64_t off = t * p->dw - p->pw;                                                  \
                int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;                                 \
                int64_t hi = p->iw - off <= 0 ? 0 : (p->iw - off + sw - 1) / sw;                  \
                if (hi > p->ow) hi = p->ow;                                                       \
                int64_t r = ((off % sw) + sw) % sw, qo = (off - r) / sw;                          \
                const T *restrict src = ph + r * qn + qo;                                         \
                int32_t base = (int32_t)(h * p->iw + off), s32 = (int32_t)sw;                     \
                for (int64_t ow = lo; ow < hi; ow++) {                                            \
                    T v = src[ow], c = m[ow];                                                     \
                    bool take = (v > c) | (v != v);                                               \
                    m[ow] = take ? v : c;                                                         \
                    mi[ow] = take ? base + (int32_t)ow * s32 : mi[ow];                            \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        for (int64_t ow = 0; ow < p->ow; ow++) {                                                  \
            y[ow] = m[ow];                                                                        \
            ind[ow] = mi[ow];                                                                     \
        }                                                                                         \
    }                                                                                             \
    /* The maximum of rows [h0, h1) step dh by columns [w0, w1) step dw of a plane iw wide (NaN \
     * wins; the first of equal values), and its flat index in *at. */ \
    static inline T window_max_##SFX(const T *x, int64_t iw, int64_t h0, int64_t h1, int64_t dh,  \
                                     int64_t w0, int64_t w1, int64_t dw, int64_t *at)             \
    {                                                                                             \
        int64_t mi = h0 * iw + w0;                                                                \
        T mv = -(T)INFINITY;                                                                      \
        for (int64_t h = h0; h < h1; h += dh)                                                     \
            for (int64_t w = w0; w < w1; w += dw) {                                               \
                T v = x[h * iw + w];                                                              \
                if (v > mv || isnan(v)) {                                                         \
                    mv = v;                                                                       \
                    mi = h * iw + w;                                                              \
                }                                                                                 \
            }                                                                                     \
        *at = mi;                                                                                 \
        return mv;                                                                                \
    }                                                                                             \
    /* The plain loop: one window per output (planes of 2^31 elements or more, or when the    \
     * scratch cannot be allocated). */   \
    static void maxpool_simple_##SFX(const tg_pool2d *p, const T *x, T *y, int64_t *ind)          \
    {                                                                                             \
        for (int64_t oh = 0; oh < p->oh; oh++) {                                                  \
            int64_t h0 = oh * p->sh - p->ph, h1 = MIN(h0 + (p->kh - 1) * p->dh + 1, p->ih);       \
            while (h0 < 0) h0 += p->dh;                                                           \
            for (int64_t ow = 0; ow < p->ow; ow++) {                                              \
                int64_t w0 = ow * p->sw - p->pw, w1 = MIN(w0 + (p->kw - 1) * p->dw + 1, p->iw);   \
                while (w0 < 0) w0 += p->dw;                                                       \
                y[oh * p->ow + ow] = window_max_##SFX(x, p->iw, h0, h1, p->dh, w0, w1, p->dw,     \
                                                      &ind[oh * p->ow + ow]);                     \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    static void maxpool_fwd_##SFX(const pool_job *j, int64_t k)                                   \
    {                                                                                             \
        const tg_pool2d *p = j->p;                                                                \
        const T *x = (const T *)j->in + k * p->ih * p->iw;                                        \
        T *y = (T *)j->out + k * p->oh * p->ow;                                                   \
        int64_t *ind = j->ind + k * p->oh * p->ow;                                                \
        size_t bytes = (size_t)p->ow * (sizeof(T) + 4) + (size_t)(p->iw + p->sw) * sizeof(T);     \
        char *buf = p->ih * p->iw < INT32_MAX ? malloc(bytes) : NULL;                             \
        if (!buf) {                                                                               \
            maxpool_simple_##SFX(p, x, y, ind);                                                   \
            return;                                                                               \
        }                                                                                         \
        T *mv = (T *)buf, *ph = (T *)(buf + (size_t)p->ow * sizeof(T));                           \
        int32_t *mi = (int32_t *)(ph + p->iw + p->sw);                                            \
        for (int64_t oh = 0; oh < p->oh; oh++)                                                    \
            maxpool_row_##SFX(p, x, oh, y + oh * p->ow, ind + oh * p->ow, mv, mi, ph);            \
        free(buf);                                                                                \
    }                                                                                             \
    /* scatter of grad_output into grad_input at the plane's indices (max pooling backward) */    \
    static void maxpool_bwd_##SFX(const pool_job *j, int64_t k)                                   \
    {                                                                                             \
        const tg_pool2d *p = j->p;                                                                \
        int64_t n_in = p->ih * p->iw, n_out = p->oh * p->ow;                                      \
        const T *g = (const T *)j->go + k * n_out;                                                \
        const int64_t *ind = j->cind + k * n_out;                                                 \
        T *gi = (T *)j->gi + k * n_in;                                                            \
        for (int64_t i = 0; i < n_out; i++) {                                                     \
            int64_t t = ind[i];                                                                   \
            if (t >= 0 && t < n_in) gi[t] += g[i];                                                \
        }                                                                                         \
    }                                                                                             \
    /* gather of the input plane at the indices (max_pool_double_backward) */                     \
    static void gather_##SFX(const pool_job *j, int64_t k)                                        \
    {                                                                                             \
        const tg_pool2d *p = j->p;                                                                \
        int64_t n_in = p->ih * p->iw, n_out = p->oh * p->ow;                                      \
        const T *x = (const T *)j->in + k * n_in;                                                 \
        const int64_t *ind = j->cind + k * n_out;                                                 \
        T *y = (T *)j->out + k * n_out;                                                           \
        for (int64_t i = 0; i < n_out; i++) {                                                     \
            int64_t t = ind[i];                                                                   \
            y[i] = t >= 0 && t < n_in ? x[t] : (T)0;                                              \
        }                                                                                         \
    }                                                                                             \
    static void adavg_fwd_##SFX(const pool_job *j, int64_t k)                                     \
    {                                                                                             \
        const tg_pool2d *p = j->p;                                                                \
        const T *x = (const T *)j->in + k * p->ih * p->iw;                                        \
        T *y = (T *)j->out + k * p->oh * p->ow;                                                   \
        for (int64_t oh = 0; oh < p->oh; oh++) {                                                  \
            int64_t h0 = tg__adaptive_start(oh, p->oh, p->ih);                                    \
            int64_t h1 = tg__adaptive_end(oh, p->oh, p->ih);                                      \
            for (int64_t ow = 0; ow < p->ow; ow++) {                                              \
                int64_t w0 = tg__adaptive_start(ow, p->ow, p->iw);                                \
                int64_t w1 = tg__adaptive_end(ow, p->ow, p->iw);                                  \
                ACC s = 0;                                                                        \
                for (int64_t h = h0; h < h1; h++)                                                 \
                    for (int64_t w = w0; w < w1; w++) s += x[h * p->iw + w];                      \
                y[oh * p->ow + ow] = (T)(s / (ACC)((h1 - h0) * (w1 - w0)));                       \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    static void adavg_bwd_##SFX(const pool_job *j, int64_t k)                                     \
    {                                                                                             \
        const tg_pool2d *p = j->p;                                                                \
        const T *g = (const T *)j->go + k * p->oh * p->ow;                                        \
        T *gi = (T *)j->gi + k * p->ih * p->iw;                                                   \
        for (int64_t oh = 0; oh < p->oh; oh++) {                                                  \
            int64_t h0 = tg__adaptive_start(oh, p->oh, p->ih);                                    \
            int64_t h1 = tg__adaptive_end(oh, p->oh, p->ih);                                      \
            for (int64_t ow = 0; ow < p->ow; ow++) {                                              \
                int64_t w0 = tg__adaptive_start(ow, p->ow, p->iw);                                \
                int64_t w1 = tg__adaptive_end(ow, p->ow, p->iw);                                  \
                T d = g[oh * p->ow + ow] / (T)(h1 - h0) / (T)(w1 - w0);                           \
                for (int64_t h = h0; h < h1; h++)                                                 \
                    for (int64_t w = w0; w < w1; w++) gi[h * p->iw + w] += d;                     \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    static void admax_fwd_##SFX(const pool_job *j, int64_t k)                                     \
    {                                                                                             \
        const tg_pool2d *p = j->p;                                                                \
        const T *x = (const T *)j->in + k * p->ih * p->iw;                                        \
        T *y = (T *)j->out + k * p->oh * p->ow;                                                   \
        int64_t *ind = j->ind + k * p->oh * p->ow;                                                \
        for (int64_t oh = 0; oh < p->oh; oh++) {                                                  \
            int64_t h0 = tg__adaptive_start(oh, p->oh, p->ih);                                    \
            int64_t h1 = tg__adaptive_end(oh, p->oh, p->ih);                                      \
            for (int64_t ow = 0; ow < p->ow; ow++) {                                              \
                int64_t w0 = tg__adaptive_start(ow, p->ow, p->iw);                                \
                int64_t w1 = tg__adaptive_end(ow, p->ow, p->iw);                                  \
                y[oh * p->ow + ow] =                                                              \
                    window_max_##SFX(x, p->iw, h0, h1, 1, w0, w1, 1, &ind[oh * p->ow + ow]);      \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    static void pad_fwd_##SFX(const pool_job *j, int64_t k)                                       \
    {                                                                                             \
        const tg_pool2d *p = j->p;                                                                \
        const T *x = (const T *)j->in + k * p->ih * p->iw;                                        \
        T *y = (T *)j->out + k * p->oh * p->ow;                                                   \
        for (int64_t oh = 0; oh < p->oh; oh++) {                                                  \
            const T *row = x + tg__pad_src(oh, p->pt, p->ih, j->reflect) * p->iw;                 \
            for (int64_t ow = 0; ow < p->ow; ow++)                                                \
                y[oh * p->ow + ow] = row[tg__pad_src(ow, p->pl, p->iw, j->reflect)];              \
        }                                                                                         \
    }                                                                                             \
    static void pad_bwd_##SFX(const pool_job *j, int64_t k)                                       \
    {                                                                                             \
        const tg_pool2d *p = j->p;                                                                \
        const T *g = (const T *)j->go + k * p->oh * p->ow;                                        \
        T *gi = (T *)j->gi + k * p->ih * p->iw;                                                   \
        for (int64_t oh = 0; oh < p->oh; oh++) {                                                  \
            T *row = gi + tg__pad_src(oh, p->pt, p->ih, j->reflect) * p->iw;                      \
            for (int64_t ow = 0; ow < p->ow; ow++)                                                \
                row[tg__pad_src(ow, p->pl, p->iw, j->reflect)] += g[oh * p->ow + ow];             \
        }                                                                                         \
    }

DEFINE_PLANES(float, float, f32)
DEFINE_PLANES(double, double, f64)

/* Average pooling, also for int64 (PyTorch's CPU kernel takes Long: integer sums, the
 * quotient truncated). */
#define DEFINE_AVG(T, ACC, SFX)                                                          \
    static void avgpool_fwd_##SFX(const pool_job *j, int64_t k)                          \
    {                                                                                    \
        const tg_pool2d *p = j->p;                                                       \
        const T *x = (const T *)j->in + k * p->ih * p->iw;                               \
        T *y = (T *)j->out + k * p->oh * p->ow;                                          \
        for (int64_t oh = 0; oh < p->oh; oh++) {                                         \
            for (int64_t ow = 0; ow < p->ow; ow++) {                                     \
                int64_t h0, h1, w0, w1, div;                                             \
                if (!tg__avg_pool_window(p, oh, ow, &h0, &h1, &w0, &w1, &div)) {         \
                    y[oh * p->ow + ow] = 0;                                              \
                    continue;                                                            \
                }                                                                        \
                ACC s = 0;                                                               \
                for (int64_t h = h0; h < h1; h++)                                        \
                    for (int64_t w = w0; w < w1; w++) s += x[h * p->iw + w];             \
                y[oh * p->ow + ow] = (T)(s / (ACC)div);                                  \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    static void avgpool_bwd_##SFX(const pool_job *j, int64_t k)                          \
    {                                                                                    \
        const tg_pool2d *p = j->p;                                                       \
        const T *g = (const T *)j->go + k * p->oh * p->ow;                               \
        T *gi = (T *)j->gi + k * p->ih * p->iw;                                          \
        for (int64_t oh = 0; oh < p->oh; oh++) {                                         \
            for (int64_t ow = 0; ow < p->ow; ow++) {                                     \
                int64_t h0, h1, w0, w1, div;                                             \
                if (!tg__avg_pool_window(p, oh, ow, &h0, &h1, &w0, &w1, &div)) continue; \
                T d = (T)(g[oh * p->ow + ow] / (T)div);                                  \
                for (int64_t h = h0; h < h1; h++)                                        \
                    for (int64_t w = w0; w < w1; w++) gi[h * p->iw + w] += d;            \
            }                                                                            \
        }                                                                                \
    }

DEFINE_AVG(float, float, f32)
DEFINE_AVG(double, double, f64)
DEFINE_AVG(int64_t, int64_t, i64)

typedef void (*plane_fn)(const pool_job *, int64_t);
/* bfloat16 runs the float32 planes on float32 copies (run_forward, run_backward). */
#define PICK(name, dt) ((dt) == TG_FLOAT64 ? name##_f64 : name##_f32)
#define PICK_AVG(name, dt) \
    ((dt) == TG_FLOAT64 ? name##_f64 : (dt) == TG_INT64 ? name##_i64 : name##_f32)

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
            tg__store_double(dst + (size_t)i * ds, dt,
                             tg__load_double(src + (size_t)i * ss, t->dtype));
    }
    tg_release(t);
    return r;
}

/* The dtype the planes run in. */
static tg_dtype work_dtype(tg_dtype dt) { return dt == TG_BFLOAT16 ? TG_FLOAT32 : dt; }

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
        pool_job job = { .p = p,
                         .in = tg__k_data(x),
                         .out = tg__k_data(r.r0),
                         .ind = with_indices ? (int64_t *)tg__k_data(r.r1) : NULL,
                         .reflect = reflect,
                         .plane = fn };
        for_planes(&job, work);
    }
    tg_release(x);
    r.r0 = convert(op, r.r0, self->dtype);
    if (!r.r0) {
        tg_release(r.r1);
        r.r1 = NULL;
    }
    return r;
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
        pool_job job = { .p = p,
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
    return run_forward(op, self, &p, PICK(maxpool_fwd, self->dtype), true, false,
                       p.oh * p.ow * p.kh * p.kw);
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
    return run_backward(op, grad_output, self, indices, &p, PICK(maxpool_bwd, self->dtype), false,
                        p.oh * p.ow);
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
        pool_job job = { .p = &p,
                         .in = tg__k_data(x),
                         .out = tg__k_data(out),
                         .cind = (const int64_t *)tg__k_data(ind),
                         .plane = PICK(gather, self->dtype) };
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
    return run_forward(op, self, &p, PICK_AVG(avgpool_fwd, self->dtype), false, false,
                       p.oh * p.ow * p.kh * p.kw)
        .r0;
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
    return run_backward(op, grad_output, self, NULL, &p, PICK_AVG(avgpool_bwd, self->dtype), false,
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
    return run_forward(op, self, &p, PICK(adavg_fwd, self->dtype), false, false,
                       MAX(p.ih * p.iw, p.oh * p.ow))
        .r0;
}

tg_tensor *tg__cpu_adaptive_avg_pool2d_backward(tg_tensor *grad_output, tg_tensor *self)
{
    const char *op = "_adaptive_avg_pool2d_backward";
    tg_pool2d p;
    if (tg__adaptive_avg_backward_check(op, grad_output, self, &p) ||
        pool_dtype_check(op, "adaptive_avg_pool2d_backward", self))
        return NULL;
    return run_backward(op, grad_output, self, NULL, &p, PICK(adavg_bwd, self->dtype), false,
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
    return run_forward(op, self, &p, PICK(admax_fwd, self->dtype), true, false,
                       MAX(p.ih * p.iw, p.oh * p.ow));
}

tg_tensor *tg__cpu_adaptive_max_pool2d_backward(tg_tensor *grad_output, tg_tensor *self,
                                                tg_tensor *indices)
{
    const char *op = "adaptive_max_pool2d_backward";
    tg_pool2d p;
    if (tg__adaptive_max_backward_check(op, grad_output, self, indices, &p) ||
        pool_dtype_check(op, "adaptive_max_pool2d_backward", self))
        return NULL;
    return run_backward(op, grad_output, self, indices, &p, PICK(maxpool_bwd, self->dtype), false,
                        p.oh * p.ow);
}

/* ------------------------------------------------------------------ padding */

static tg_tensor *pad_forward(const char *op, const char *name, tg_tensor *self,
                              tg_int_list padding, bool reflect)
{
    tg_pool2d p;
    if (tg__pad2d_check(op, self, padding, reflect, &p) || tg__pool_dtype_check(op, name, self))
        return NULL;
    return run_forward(op, self, &p, PICK(pad_fwd, self->dtype), false, reflect, p.oh * p.ow).r0;
}

static tg_tensor *pad_backward(const char *op, const char *name, tg_tensor *grad_output,
                               tg_tensor *self, tg_int_list padding, bool reflect)
{
    tg_pool2d p;
    if (tg__pad2d_check(op, self, padding, reflect, &p) ||
        tg__pad2d_backward_check(op, grad_output, &p) || tg__pool_dtype_check(op, name, self))
        return NULL;
    if (grad_output->dtype != self->dtype)
        return tg__error(op, "expected scalar type %s but found %s",
                         tg__dtype_torch_name(self->dtype),
                         tg__dtype_torch_name(grad_output->dtype));
    return run_backward(op, grad_output, self, NULL, &p, PICK(pad_bwd, self->dtype), reflect,
                        p.oh * p.ow);
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
