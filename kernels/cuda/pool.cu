/* Pooling and padding on CUDA, NCHW: the CPU kernels' operators (kernels/cpu/pool.c) with the
 * same checks (kernels/common/pool_checks.h), semantics and dtypes (float32, float64).
 *
 * Forward kernels run one thread per output element (grid-stride loops). The backward kernels
 * run one thread per grad_input element and gather from the outputs whose windows contain it
 * (PyTorch's NCHW CUDA scheme: p_start/p_end for max and average pooling, the inverse
 * START_IND/END_IND ranges for adaptive pooling, a scan of the output rows and columns that
 * map to it for padding), so no atomics are needed and results are deterministic. Operands
 * are made contiguous first. */
#include "tg_cuda.cuh"
#include "pool_checks.h"

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

#define THREADS 256

__device__ __forceinline__ int64_t pmin(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ int64_t pmax(int64_t a, int64_t b) { return a > b ? a : b; }

/* The accumulation type: float for float, double for double. */
template <class T> struct pool_acc {
    using type = T;
};

/* ------------------------------------------------------------------ device kernels */

template <class T>
__global__ void maxpool_fwd(tg_pool2d p, const T *x, T *y, int64_t *ind, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t ow = i % p.ow, oh = (i / p.ow) % p.oh, k = i / (p.ow * p.oh);
        const T *xp = x + k * p.ih * p.iw;
        int64_t h0 = oh * p.sh - p.ph, h1 = pmin(h0 + (p.kh - 1) * p.dh + 1, p.ih);
        int64_t w0 = ow * p.sw - p.pw, w1 = pmin(w0 + (p.kw - 1) * p.dw + 1, p.iw);
        while (h0 < 0) h0 += p.dh;
        while (w0 < 0) w0 += p.dw;
        int64_t mi = h0 * p.iw + w0;
        T mv = -(T)INFINITY;
        for (int64_t h = h0; h < h1; h += p.dh)
            for (int64_t w = w0; w < w1; w += p.dw) {
                T v = xp[h * p.iw + w];
                if (v > mv || v != v) {
                    mv = v;
                    mi = h * p.iw + w;
                }
            }
        y[i] = mv;
        ind[i] = mi;
    }
}

/* grad_input element (k, h, w): the outputs whose windows may hold it, their indices checked. */
template <class T>
__global__ void maxpool_bwd(tg_pool2d p, const T *g, const int64_t *ind, T *gi, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t w = i % p.iw, h = (i / p.iw) % p.ih, k = i / (p.iw * p.ih);
        int64_t eh = (p.kh - 1) * p.dh + 1, ew = (p.kw - 1) * p.dw + 1;
        int64_t ph0 = h + p.ph < eh ? 0 : (h + p.ph - eh) / p.sh + 1;
        int64_t ph1 = pmin((h + p.ph) / p.sh + 1, p.oh);
        int64_t pw0 = w + p.pw < ew ? 0 : (w + p.pw - ew) / p.sw + 1;
        int64_t pw1 = pmin((w + p.pw) / p.sw + 1, p.ow);
        const T *gp = g + k * p.oh * p.ow;
        const int64_t *ip = ind + k * p.oh * p.ow;
        int64_t me = h * p.iw + w;
        typename pool_acc<T>::type s = 0;
        for (int64_t a = ph0; a < ph1; a++)
            for (int64_t b = pw0; b < pw1; b++)
                if (ip[a * p.ow + b] == me) s += gp[a * p.ow + b];
        gi[i] = (T)s;
    }
}

/* adaptive_max_pool2d_backward: the adaptive windows holding (h, w), by the inverse ranges. */
template <class T>
__global__ void admax_bwd(tg_pool2d p, const T *g, const int64_t *ind, T *gi, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t w = i % p.iw, h = (i / p.iw) % p.ih, k = i / (p.iw * p.ih);
        /* the outputs whose windows may hold (h, w) (PyTorch's START_IND / END_IND, widened by
         * one each side; the windows are checked below) */
        int64_t ph0 = pmax((h * p.oh) / p.ih - 1, 0), ph1 = ((h + 1) * p.oh + p.ih - 1) / p.ih + 1;
        int64_t pw0 = pmax((w * p.ow) / p.iw - 1, 0), pw1 = ((w + 1) * p.ow + p.iw - 1) / p.iw + 1;
        const T *gp = g + k * p.oh * p.ow;
        const int64_t *ip = ind + k * p.oh * p.ow;
        int64_t me = h * p.iw + w;
        typename pool_acc<T>::type s = 0;
        for (int64_t a = ph0; a < pmin(ph1, p.oh); a++)
            for (int64_t b = pw0; b < pmin(pw1, p.ow); b++)
                if (ip[a * p.ow + b] == me) s += gp[a * p.ow + b];
        gi[i] = (T)s;
    }
}

template <class T>
__global__ void gather_fwd(tg_pool2d p, const T *x, const int64_t *ind, T *y, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t k = i / (p.oh * p.ow), t = ind[i];
        y[i] = t >= 0 && t < p.ih * p.iw ? x[k * p.ih * p.iw + t] : (T)0;
    }
}

template <class T> __global__ void avgpool_fwd(tg_pool2d p, const T *x, T *y, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t ow = i % p.ow, oh = (i / p.ow) % p.oh, k = i / (p.ow * p.oh);
        const T *xp = x + k * p.ih * p.iw;
        int64_t h0, h1, w0, w1, div;
        if (!tg__avg_pool_window(&p, oh, ow, &h0, &h1, &w0, &w1, &div)) {
            y[i] = 0;
            continue;
        }
        typename pool_acc<T>::type s = 0;
        for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++) s += xp[h * p.iw + w];
        y[i] = (T)(s / (typename pool_acc<T>::type)div);
    }
}

template <class T> __global__ void avgpool_bwd(tg_pool2d p, const T *g, T *gi, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t w = i % p.iw, h = (i / p.iw) % p.ih, k = i / (p.iw * p.ih);
        int64_t ph0 = h + p.ph < p.kh ? 0 : (h + p.ph - p.kh) / p.sh + 1;
        int64_t ph1 = pmin((h + p.ph) / p.sh + 1, p.oh);
        int64_t pw0 = w + p.pw < p.kw ? 0 : (w + p.pw - p.kw) / p.sw + 1;
        int64_t pw1 = pmin((w + p.pw) / p.sw + 1, p.ow);
        const T *gp = g + k * p.oh * p.ow;
        T s = 0;
        for (int64_t a = ph0; a < ph1; a++)
            for (int64_t b = pw0; b < pw1; b++) {
                int64_t h0, h1, w0, w1, div;
                if (!tg__avg_pool_window(&p, a, b, &h0, &h1, &w0, &w1, &div)) continue;
                if (h < h0 || h >= h1 || w < w0 || w >= w1) continue;
                s += (T)(gp[a * p.ow + b] / (T)div);
            }
        gi[i] = s;
    }
}

template <class T> __global__ void adavg_fwd(tg_pool2d p, const T *x, T *y, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t ow = i % p.ow, oh = (i / p.ow) % p.oh, k = i / (p.ow * p.oh);
        const T *xp = x + k * p.ih * p.iw;
        int64_t h0 = tg__adaptive_start(oh, p.oh, p.ih), h1 = tg__adaptive_end(oh, p.oh, p.ih);
        int64_t w0 = tg__adaptive_start(ow, p.ow, p.iw), w1 = tg__adaptive_end(ow, p.ow, p.iw);
        typename pool_acc<T>::type s = 0;
        for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++) s += xp[h * p.iw + w];
        y[i] = (T)(s / (typename pool_acc<T>::type)((h1 - h0) * (w1 - w0)));
    }
}

template <class T> __global__ void adavg_bwd(tg_pool2d p, const T *g, T *gi, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t w = i % p.iw, h = (i / p.iw) % p.ih, k = i / (p.iw * p.ih);
        /* the outputs whose windows may hold (h, w) (PyTorch's START_IND / END_IND, widened by
         * one each side; the windows are checked below) */
        int64_t ph0 = pmax((h * p.oh) / p.ih - 1, 0), ph1 = ((h + 1) * p.oh + p.ih - 1) / p.ih + 1;
        int64_t pw0 = pmax((w * p.ow) / p.iw - 1, 0), pw1 = ((w + 1) * p.ow + p.iw - 1) / p.iw + 1;
        const T *gp = g + k * p.oh * p.ow;
        T s = 0;
        for (int64_t a = ph0; a < pmin(ph1, p.oh); a++) {
            int64_t h0 = tg__adaptive_start(a, p.oh, p.ih), h1 = tg__adaptive_end(a, p.oh, p.ih);
            if (h < h0 || h >= h1) continue;
            for (int64_t b = pw0; b < pmin(pw1, p.ow); b++) {
                int64_t w0 = tg__adaptive_start(b, p.ow, p.iw),
                        w1 = tg__adaptive_end(b, p.ow, p.iw);
                if (w < w0 || w >= w1) continue;
                s += gp[a * p.ow + b] / (T)(h1 - h0) / (T)(w1 - w0);
            }
        }
        gi[i] = s;
    }
}

template <class T> __global__ void admax_fwd(tg_pool2d p, const T *x, T *y, int64_t *ind, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t ow = i % p.ow, oh = (i / p.ow) % p.oh, k = i / (p.ow * p.oh);
        const T *xp = x + k * p.ih * p.iw;
        int64_t h0 = tg__adaptive_start(oh, p.oh, p.ih), h1 = tg__adaptive_end(oh, p.oh, p.ih);
        int64_t w0 = tg__adaptive_start(ow, p.ow, p.iw), w1 = tg__adaptive_end(ow, p.ow, p.iw);
        int64_t mi = h0 * p.iw + w0;
        T mv = -(T)INFINITY;
        for (int64_t h = h0; h < h1; h++)
            for (int64_t w = w0; w < w1; w++) {
                T v = xp[h * p.iw + w];
                if (v > mv || v != v) {
                    mv = v;
                    mi = h * p.iw + w;
                }
            }
        y[i] = mv;
        ind[i] = mi;
    }
}

template <class T> __global__ void pad_fwd(tg_pool2d p, bool reflect, const T *x, T *y, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t ow = i % p.ow, oh = (i / p.ow) % p.oh, k = i / (p.ow * p.oh);
        int64_t h = tg__pad_src(oh, p.pt, p.ih, reflect), w = tg__pad_src(ow, p.pl, p.iw, reflect);
        y[i] = x[(k * p.ih + h) * p.iw + w];
    }
}

/* grad_input (k, h, w): the sum over the output rows and columns that read row h, column w. */
template <class T> __global__ void pad_bwd(tg_pool2d p, bool reflect, const T *g, T *gi, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        int64_t w = i % p.iw, h = (i / p.iw) % p.ih, k = i / (p.iw * p.ih);
        const T *gp = g + k * p.oh * p.ow;
        T s = 0;
        for (int64_t a = 0; a < p.oh; a++) {
            if (tg__pad_src(a, p.pt, p.ih, reflect) != h) continue;
            for (int64_t b = 0; b < p.ow; b++)
                if (tg__pad_src(b, p.pl, p.iw, reflect) == w) s += gp[a * p.ow + b];
        }
        gi[i] = s;
    }
}

/* ------------------------------------------------------------------ host side */

/* float16 and bfloat16 run the float kernels on float copies (PyTorch's CUDA pooling and
 * padding take both, computing in float). */
static tg_dtype work_dtype(tg_dtype dt)
{
    return dt == TG_FLOAT16 || dt == TG_BFLOAT16 ? TG_FLOAT32 : dt;
}

static int cuda_dtype_check(const char *op, const char *name, const tg_tensor *t)
{
    return t->dtype == TG_FLOAT16 || t->dtype == TG_BFLOAT16 ? 0
                                                             : tg__pool_dtype_check(op, name, t);
}

/* t (a new reference, consumed) converted to dtype dt (contiguous). */
static tg_tensor *convert(const char *op, tg_tensor *t, tg_dtype dt)
{
    if (!t || t->dtype == dt) return t;
    tg_tensor *r = tg__cuda_contiguous(op, t, dt);
    tg_release(t);
    return r;
}

/* Contiguous copies of the operands (NULL entries skipped), all on self's device, floating
 * ones in the work dtype. */
static int prepare(const char *op, tg_tensor *self, tg_tensor *const *in, tg_tensor **out, int n)
{
    for (int i = 0; i < n; i++) out[i] = NULL;
    for (int i = 0; i < n; i++) {
        if (!in[i]) continue;
        if (tg__cuda_same_device(op, self, in[i])) goto fail;
        out[i] = tg__cuda_contiguous(op, in[i], work_dtype(in[i]->dtype));
        if (!out[i]) goto fail;
    }
    return 0;
fail:
    for (int i = 0; i < n; i++) tg_release(out[i]);
    return -1;
}

static void release_all(tg_tensor **t, int n)
{
    for (int i = 0; i < n; i++) tg_release(t[i]);
}

#define PTR(t, T) ((T *)tg__k_data(t))

/* The kernels of pooling and padding for element type T: kind 0 max, 1 avg, 2 adaptive avg,
 * 3 adaptive max, 4 reflection pad, 5 replication pad; n outputs (forward) or grad_input
 * elements (backward). */
template <class T>
static void launch_forward(int kind, const tg_pool2d &p, const void *x, void *y, int64_t *ind,
                           int64_t n, cudaStream_t st)
{
    const T *xs = (const T *)x;
    T *ys = (T *)y;
    unsigned blocks = tg__cuda_blocks(n, THREADS);
    switch (kind) {
    case 0: maxpool_fwd<T><<<blocks, THREADS, 0, st>>>(p, xs, ys, ind, n); break;
    case 1: avgpool_fwd<T><<<blocks, THREADS, 0, st>>>(p, xs, ys, n); break;
    case 2: adavg_fwd<T><<<blocks, THREADS, 0, st>>>(p, xs, ys, n); break;
    case 3: admax_fwd<T><<<blocks, THREADS, 0, st>>>(p, xs, ys, ind, n); break;
    default: pad_fwd<T><<<blocks, THREADS, 0, st>>>(p, kind == 4, xs, ys, n); break;
    }
}

template <class T>
static void launch_backward(int kind, const tg_pool2d &p, const void *g, const int64_t *ind,
                            void *d, int64_t n, cudaStream_t st)
{
    const T *gs = (const T *)g;
    T *ds = (T *)d;
    unsigned blocks = tg__cuda_blocks(n, THREADS);
    switch (kind) {
    case 0: maxpool_bwd<T><<<blocks, THREADS, 0, st>>>(p, gs, ind, ds, n); break;
    case 1: avgpool_bwd<T><<<blocks, THREADS, 0, st>>>(p, gs, ds, n); break;
    case 2: adavg_bwd<T><<<blocks, THREADS, 0, st>>>(p, gs, ds, n); break;
    case 3: admax_bwd<T><<<blocks, THREADS, 0, st>>>(p, gs, ind, ds, n); break;
    default: pad_bwd<T><<<blocks, THREADS, 0, st>>>(p, kind == 4, gs, ds, n); break;
    }
}

/* Forward: output of p's shape (and int64 indices), kind as for launch_forward. */
static tg_tensors2 forward(const char *op, tg_tensor *self, const tg_pool2d &p, int kind)
{
    tg_tensors2 r = { NULL, NULL };
    tg_tensor *x;
    if (prepare(op, self, &self, &x, 1)) return r;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    int64_t sizes[4];
    int64_t nd = tg__pool_out_shape(&p, sizes);
    bool with_ind = kind == 0 || kind == 3;
    if (!rc) r.r0 = tg__empty(op, sizes, nd, work_dtype(self->dtype), self->device);
    if (r.r0 && with_ind) r.r1 = tg__empty(op, sizes, nd, TG_INT64, self->device);
    if (!r.r0 || (with_ind && !r.r1)) goto fail;
    {
        int64_t n = tg__numel(r.r0);
        if (n > 0) {
            tg_dtype dt = work_dtype(self->dtype);
            const void *xd = tg__k_data(x);
            void *yd = tg__k_data(r.r0);
            int64_t *id = with_ind ? PTR(r.r1, int64_t) : NULL;
            if (dt == TG_FLOAT32) launch_forward<float>(kind, p, xd, yd, id, n, st);
            else launch_forward<double>(kind, p, xd, yd, id, n, st);
            if (tg__cuda_launch_ok(op)) goto fail;
        }
    }
    tg_release(x);
    return tg__k_convert_first(op, r, self->dtype, convert);
fail:
    tg_release(x);
    tg_release(r.r0);
    tg_release(r.r1);
    r.r0 = r.r1 = NULL;
    return r;
}

/* Backward: grad_input of self's shape; kind 0 max, 1 avg, 2 adaptive avg, 3 adaptive max,
 * 4 reflection pad, 5 replication pad. */
static tg_tensor *backward(const char *op, tg_tensor *grad_output, tg_tensor *self,
                           tg_tensor *indices, const tg_pool2d &p, int kind)
{
    tg_tensor *in[2] = { grad_output, indices }, *c[2];
    if (prepare(op, self, in, c, 2)) return NULL;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    tg_tensor *gi =
        rc ? NULL : tg__empty(op, self->sizes, self->ndim, work_dtype(self->dtype), self->device);
    int64_t n = gi ? tg__numel(gi) : 0;
    if (gi && n > 0) {
        bool f = gi->dtype == TG_FLOAT32;
        const void *g = tg__k_data(c[0]);
        void *d = tg__k_data(gi);
        const int64_t *id = c[1] ? PTR(c[1], const int64_t) : NULL;
        if (tg__numel(c[0]) == 0) {
            if (tg__cuda_ok(op, cudaMemsetAsync(d, 0, (size_t)n * tg_dtype_size(gi->dtype), st))) {
                tg_release(gi);
                gi = NULL;
            }
        } else {
            if (f) launch_backward<float>(kind, p, g, id, d, n, st);
            else launch_backward<double>(kind, p, g, id, d, n, st);
            if (tg__cuda_launch_ok(op)) {
                tg_release(gi);
                gi = NULL;
            }
        }
    }
    release_all(c, 2);
    return convert(op, gi, self->dtype);
}

/* ------------------------------------------------------------------ operators */

extern "C" tg_tensors2 tg__cuda_max_pool2d_with_indices(tg_tensor *self, tg_int_list kernel_size,
                                                        tg_int_list stride, tg_int_list padding,
                                                        tg_int_list dilation, bool ceil_mode)
{
    const char *op = "max_pool2d_with_indices";
    tg_pool2d p;
    if (tg__max_pool2d_check(op, self, kernel_size, stride, padding, dilation, ceil_mode, &p) ||
        cuda_dtype_check(op, "max_pool2d", self))
        return tg_tensors2{ NULL, NULL };
    return forward(op, self, p, 0);
}

extern "C" tg_tensor *tg__cuda_max_pool2d_with_indices_backward(
    tg_tensor *grad_output, tg_tensor *self, tg_int_list kernel_size, tg_int_list stride,
    tg_int_list padding, tg_int_list dilation, bool ceil_mode, tg_tensor *indices)
{
    const char *op = "max_pool2d_with_indices_backward";
    tg_pool2d p;
    if (tg__max_pool2d_check(op, self, kernel_size, stride, padding, dilation, ceil_mode, &p) ||
        tg__pool_backward_check(op, grad_output, self, indices, &p) ||
        cuda_dtype_check(op, "max_pool2d_backward", self))
        return NULL;
    return backward(op, grad_output, self, indices, p, 0);
}

extern "C" tg_tensor *tg__cuda_max_pool_double_backward(tg_tensor *self, tg_tensor *indices,
                                                        int64_t dim)
{
    const char *op = "max_pool_double_backward";
    tg_pool2d p;
    if (tg__max_pool_double_backward_check(op, self, indices, dim, &p) ||
        tg__pool_dtype_check(op, "max_pool_double_backward", self))
        return NULL;
    tg_tensor *in[2] = { self, indices }, *c[2];
    if (prepare(op, self, in, c, 2)) return NULL;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    tg_tensor *y =
        rc ? NULL : tg__empty(op, indices->sizes, indices->ndim, self->dtype, self->device);
    int64_t n = y ? tg__numel(y) : 0;
    if (n > 0) {
        unsigned blocks = tg__cuda_blocks(n, THREADS);
        const int64_t *id = PTR(c[1], const int64_t);
        if (self->dtype == TG_FLOAT32)
            gather_fwd<float>
                <<<blocks, THREADS, 0, st>>>(p, PTR(c[0], const float), id, PTR(y, float), n);
        else
            gather_fwd<double>
                <<<blocks, THREADS, 0, st>>>(p, PTR(c[0], const double), id, PTR(y, double), n);
        if (tg__cuda_launch_ok(op)) {
            tg_release(y);
            y = NULL;
        }
    }
    release_all(c, 2);
    return y;
}

extern "C" tg_tensor *tg__cuda_avg_pool2d(tg_tensor *self, tg_int_list kernel_size,
                                          tg_int_list stride, tg_int_list padding, bool ceil_mode,
                                          bool count_include_pad, tg_opt_int divisor_override)
{
    const char *op = "avg_pool2d";
    tg_pool2d p;
    if (tg__avg_pool2d_check(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override, &p) ||
        cuda_dtype_check(op, "avg_pool2d_out_cuda_frame", self))
        return NULL;
    return forward(op, self, p, 1).r0;
}

extern "C" tg_tensor *tg__cuda_avg_pool2d_backward(tg_tensor *grad_output, tg_tensor *self,
                                                   tg_int_list kernel_size, tg_int_list stride,
                                                   tg_int_list padding, bool ceil_mode,
                                                   bool count_include_pad,
                                                   tg_opt_int divisor_override)
{
    const char *op = "avg_pool2d_backward";
    tg_pool2d p;
    if (tg__avg_pool2d_check(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override, &p) ||
        tg__pool_backward_check(op, grad_output, self, NULL, &p) ||
        cuda_dtype_check(op, "avg_pool2d_backward_out_cuda_frame", self))
        return NULL;
    return backward(op, grad_output, self, NULL, p, 1);
}

extern "C" tg_tensor *tg__cuda_adaptive_avg_pool2d(tg_tensor *self, tg_int_list output_size)
{
    const char *op = "_adaptive_avg_pool2d";
    tg_pool2d p;
    if (tg__adaptive_pool2d_check(op, self, output_size, false, &p) ||
        cuda_dtype_check(op, "adaptive_avg_pool2d_cuda", self))
        return NULL;
    return forward(op, self, p, 2).r0;
}

extern "C" tg_tensor *tg__cuda_adaptive_avg_pool2d_backward(tg_tensor *grad_output, tg_tensor *self)
{
    const char *op = "_adaptive_avg_pool2d_backward";
    tg_pool2d p;
    if (tg__adaptive_avg_backward_check(op, grad_output, self, &p) ||
        cuda_dtype_check(op, "adaptive_avg_pool2d_backward_cuda", self))
        return NULL;
    return backward(op, grad_output, self, NULL, p, 2);
}

extern "C" tg_tensors2 tg__cuda_adaptive_max_pool2d(tg_tensor *self, tg_int_list output_size)
{
    const char *op = "adaptive_max_pool2d";
    tg_pool2d p;
    if (tg__adaptive_pool2d_check(op, self, output_size, true, &p) ||
        cuda_dtype_check(op, "adaptive_max_pool2d", self))
        return tg_tensors2{ NULL, NULL };
    return forward(op, self, p, 3);
}

extern "C" tg_tensor *tg__cuda_adaptive_max_pool2d_backward(tg_tensor *grad_output, tg_tensor *self,
                                                            tg_tensor *indices)
{
    const char *op = "adaptive_max_pool2d_backward";
    tg_pool2d p;
    if (tg__adaptive_max_backward_check(op, grad_output, self, indices, &p) ||
        cuda_dtype_check(op, "adaptive_max_pool2d_backward", self))
        return NULL;
    return backward(op, grad_output, self, indices, p, 3);
}

static tg_tensor *pad_forward(const char *op, const char *name, tg_tensor *self,
                              tg_int_list padding, bool reflect)
{
    tg_pool2d p;
    if (tg__pad2d_check(op, self, padding, reflect, &p) || cuda_dtype_check(op, name, self))
        return NULL;
    return forward(op, self, p, reflect ? 4 : 5).r0;
}

static tg_tensor *pad_backward(const char *op, const char *name, tg_tensor *grad_output,
                               tg_tensor *self, tg_int_list padding, bool reflect)
{
    tg_pool2d p;
    if (tg__pad2d_backward_checks(op, name, grad_output, self, padding, reflect, cuda_dtype_check,
                                  &p) != 0)
        return NULL;
    return backward(op, grad_output, self, NULL, p, reflect ? 4 : 5);
}

extern "C" tg_tensor *tg__cuda_reflection_pad2d(tg_tensor *self, tg_int_list padding)
{
    return pad_forward("reflection_pad2d", "reflection_pad2d_out_template", self, padding, true);
}

extern "C" tg_tensor *tg__cuda_reflection_pad2d_backward(tg_tensor *grad_output, tg_tensor *self,
                                                         tg_int_list padding)
{
    return pad_backward("reflection_pad2d_backward", "reflection_pad2d_backward_out_template",
                        grad_output, self, padding, true);
}

extern "C" tg_tensor *tg__cuda_replication_pad2d(tg_tensor *self, tg_int_list padding)
{
    return pad_forward("replication_pad2d", "replication_pad2d_cuda", self, padding, false);
}

extern "C" tg_tensor *tg__cuda_replication_pad2d_backward(tg_tensor *grad_output, tg_tensor *self,
                                                          tg_int_list padding)
{
    return pad_backward("replication_pad2d_backward", "replication_pad2d_backward_cuda",
                        grad_output, self, padding, false);
}
