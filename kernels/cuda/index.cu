/* index_select, gather, the scatter family and index_add on CUDA: the CPU kernels' operators
 * (kernels/cpu/index.c) with the same checks and flow (kernels/common/index_checks.h: the
 * written operand, the contiguous int64 index, conversions), and this file's engine.
 *
 * Index bounds are checked on the host before any kernel runs: the contiguous int64 index is
 * copied to host memory (on the device's stream, then synchronised) and scanned by the CPU's
 * check, so the error names the first bad index exactly as on the CPU and nothing is written.
 *
 * gather / index_select run one thread per result element. The scattering modes run one
 * thread per (line, inner position) of the plan, which walks the index positions in order:
 * no two threads write the same element, so there are no atomics and scatter_add / index_add
 * / scatter_reduce are deterministic (the same order as the CPU's). */
#include "tg_cuda.cuh"
#include "index_checks.h"

#include <stdlib.h>

#include "kernels/gather.h"
#include "kernels/index_add.h"
#include "kernels/index_select.h"
#include "kernels/nonzero.h"
#include "kernels/scatter.h"
#include "kernels/scatter_add.h"
#include "kernels/scatter_reduce.h"

#define THREADS 256

/* other[p] = self[p with dim replaced by idx[p]], one thread per element. */
template <class T>
__global__ void gather_kernel(tg_index_plan p, const int64_t *idx, const T *self, T *other,
                              int64_t total)
{
    const int64_t isk = p.kd >= 0 ? p.is[p.kd] : 0, ssk = p.kd >= 0 ? p.ss[p.kd] : 0,
                  osk = p.kd >= 0 ? p.os[p.kd] : 0;
    for (int64_t u = tg__cuda_thread_index(); u < total; u += tg__cuda_thread_count()) {
        int64_t kk = u % p.k, t = (u / p.k) % p.n, l = u / (p.k * p.n);
        int64_t io, so, oo;
        tg__index_line(&p, l, &io, &so, &oo);
        int64_t iv = idx[io + t * p.is[p.dim] + kk * isk];
        other[oo + t * p.os[p.dim] + kk * osk] = self[so + iv * p.ss[p.dim] + kk * ssk];
    }
}

/* self[idx] combined with other, one thread per (line, inner position), index order. RED:
 * 0 overwrite, 1 sum (alpha), 2 product, 3 amax, 4 amin (a NaN of src wins, one of self
 * stays). */
template <class T, int RED>
__global__ void scatter_kernel(tg_index_plan p, const int64_t *idx, T *self, const T *other,
                               T alpha, int64_t units)
{
    const int64_t isk = p.kd >= 0 ? p.is[p.kd] : 0, ssk = p.kd >= 0 ? p.ss[p.kd] : 0,
                  osk = p.kd >= 0 ? p.os[p.kd] : 0;
    for (int64_t u = tg__cuda_thread_index(); u < units; u += tg__cuda_thread_count()) {
        int64_t kk = u % p.k, l = u / p.k;
        int64_t io, so, oo;
        tg__index_line(&p, l, &io, &so, &oo);
        for (int64_t t = 0; t < p.n; t++) {
            int64_t iv = idx[io + t * p.is[p.dim] + kk * isk];
            T *d = self + so + iv * p.ss[p.dim] + kk * ssk;
            T s = other[oo + t * p.os[p.dim] + kk * osk];
            if (RED == 0) *d = s;
            else if (RED == 1) *d += alpha * s;
            else if (RED == 2) *d *= s;
            else if (RED == 3) {
                if (s != s || s > *d) *d = s;
            } else {
                if (s != s || s < *d) *d = s;
            }
        }
    }
}

/* w /= c (c == 0 read as 1): true division for floats and unsigned, floor for signed ints */
template <class T, bool FLOOR> __global__ void divide_kernel(T *w, const T *c, int64_t n)
{
    for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) {
        T q = c[i] == 0 ? (T)1 : c[i];
        T v = w[i] / q;
        if constexpr (FLOOR) {
            if ((w[i] % q != 0) && ((w[i] < 0) != (q < 0))) v = v - 1;
        }
        w[i] = v;
    }
}

template <class T, bool FLOOR>
static void launch_divide(void *w, const void *c, int64_t n, unsigned b, cudaStream_t st)
{
    divide_kernel<T, FLOOR><<<b, THREADS, 0, st>>>((T *)w, (const T *)c, n);
}

/* scatter_kernel with reduction R (0 none, 1 sum, 2 prod, 3 amax, 4 amin). */
template <class T, int R>
static void launch_scatter_red(const tg_index_exec *x, int64_t units, cudaStream_t st)
{
    scatter_kernel<T, R><<<tg__cuda_blocks(units, THREADS), THREADS, 0, st>>>(
        *x->p, x->idx, (T *)x->self, (const T *)x->other, (T)x->alpha, units);
}

template <class T> static void launch_scatter(const tg_index_exec *x, cudaStream_t st)
{
    int64_t units = x->p->lines * x->p->k;
    switch (x->red) {
    case TG_IDX_NONE: launch_scatter_red<T, 0>(x, units, st); break;
    case TG_IDX_SUM:
    case TG_IDX_MEAN: launch_scatter_red<T, 1>(x, units, st); break;
    case TG_IDX_PROD: launch_scatter_red<T, 2>(x, units, st); break;
    case TG_IDX_AMAX: launch_scatter_red<T, 3>(x, units, st); break;
    case TG_IDX_AMIN: launch_scatter_red<T, 4>(x, units, st); break;
    }
}

template <class T> static void launch_gather(const tg_index_exec *x, cudaStream_t st)
{
    int64_t total = tg__index_plan_numel(x->p);
    gather_kernel<T><<<tg__cuda_blocks(total, THREADS), THREADS, 0, st>>>(
        *x->p, x->idx, (const T *)x->self, (T *)x->other, total);
}

static int cuda_run(const char *op, const tg_index_exec *x, tg_device dev)
{
    if (tg__index_plan_numel(x->p) == 0) return 0;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, dev, &rc);
    if (rc) return -1;
    size_t es = tg_dtype_size(x->dtype);
    if (x->mode == TG_IDX_MODE_GATHER) { /* copies by element size */
        if (es == 1) launch_gather<uint8_t>(x, st);
        else if (es == 2) launch_gather<uint16_t>(x, st);
        else if (es == 4) launch_gather<uint32_t>(x, st);
        else launch_gather<unsigned long long>(x, st);
    } else if (x->red == TG_IDX_NONE) {
        if (es == 1) launch_scatter<uint8_t>(x, st);
        else if (es == 2) launch_scatter<uint16_t>(x, st);
        else if (es == 4) launch_scatter<uint32_t>(x, st);
        else launch_scatter<unsigned long long>(x, st);
    } else {
        switch (x->dtype) {
        case TG_FLOAT32: launch_scatter<float>(x, st); break;
        case TG_FLOAT64: launch_scatter<double>(x, st); break;
        case TG_INT64: launch_scatter<int64_t>(x, st); break;
        case TG_INT32: launch_scatter<int32_t>(x, st); break;
        case TG_INT16: launch_scatter<int16_t>(x, st); break;
        case TG_INT8: launch_scatter<int8_t>(x, st); break;
        case TG_UINT8: launch_scatter<uint8_t>(x, st); break;
        default:
            return tg__fail(op, "\"%s\" not implemented for '%s'", op,
                            tg__dtype_torch_name(x->dtype));
        }
    }
    return tg__cuda_launch_ok(op);
}

/* The index (contiguous int64 on the device) copied to the host and checked there. */
static int cuda_bounds(const char *op, const tg_tensor *idx, int64_t bound, int64_t dim,
                       bool select)
{
    int64_t n = tg__numel(idx);
    if (n == 0) return 0;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, idx->device, &rc);
    if (rc) return -1;
    int64_t *h = (int64_t *)malloc(sizeof(int64_t) * (size_t)n);
    if (!h) return tg__fail(op, "out of memory copying %lld indices to the host", (long long)n);
    rc = tg__cuda_ok(op, cudaMemcpyAsync(h, tg__k_data(idx), sizeof(int64_t) * (size_t)n,
                                         cudaMemcpyDeviceToHost, st)) ||
         tg__cuda_ok(op, cudaStreamSynchronize(st));
    if (!rc) rc = tg__index_bounds(op, h, TG_INT64, n, bound, dim, select);
    free(h);
    return rc ? -1 : 0;
}

static int cuda_divide(const char *op, tg_tensor *work, const tg_tensor *count)
{
    int64_t n = tg__numel(work);
    if (n == 0) return 0;
    cudaStream_t st;
    if (tg__cuda_begin(op, work, NULL, 0, &st)) return -1;
    unsigned b = tg__cuda_blocks(n, THREADS);
    void *w = tg__k_data(work);
    const void *c = tg__k_data(count);
    switch (work->dtype) {
    case TG_FLOAT32: launch_divide<float, false>(w, c, n, b, st); break;
    case TG_FLOAT64: launch_divide<double, false>(w, c, n, b, st); break;
    case TG_INT64: launch_divide<int64_t, true>(w, c, n, b, st); break;
    case TG_INT32: launch_divide<int32_t, true>(w, c, n, b, st); break;
    case TG_INT16: launch_divide<int16_t, true>(w, c, n, b, st); break;
    case TG_INT8: launch_divide<int8_t, true>(w, c, n, b, st); break;
    case TG_UINT8: launch_divide<uint8_t, false>(w, c, n, b, st); break;
    default:
        return tg__fail(op, "\"%s\" not implemented for '%s'", op,
                        tg__dtype_torch_name(work->dtype));
    }
    return tg__cuda_launch_ok(op);
}

static const tg_index_backend CUDA_BE = { cuda_run, cuda_bounds, cuda_divide };

/* ------------------------------------------------------------------ kernels */

extern "C" tg_tensor *tg__cuda_index_select(tg_tensor *self, int64_t dim, tg_tensor *index)
{
    const char *op = "index_select";
    int64_t wd;
    if (tg__index_select_check(op, self, dim, index, &wd) || tg__cuda_same_device(op, self, index))
        return NULL;
    return tg__index_gather_flow(op, &CUDA_BE, self, wd, index, true, NULL);
}

extern "C" tg_tensor *tg__cuda_gather_out(tg_tensor *self, int64_t dim, tg_tensor *index,
                                          bool sparse_grad, tg_tensor *out)
{
    (void)sparse_grad;
    const char *op = "gather";
    tg_index_plan p;
    if (tg__gather_check(op, self, dim, index, &p) || tg__cuda_same_device(op, self, index))
        return NULL;
    return tg__index_gather_flow(op, &CUDA_BE, self, p.dim, index, false, out);
}

/* The scatter family's common entry: checks (src NULL for a value), devices, the flow. */
static tg_tensor *scatter_entry(const char *op, const char *method, tg_tensor *self, int64_t dim,
                                tg_tensor *index, tg_tensor *src, double value, const char *reduce,
                                int reduce_kind, bool include_self, tg_tensor *out)
{
    int64_t wd;
    tg_index_reduce red = reduce_kind == 0 ? TG_IDX_NONE : TG_IDX_SUM;
    if (tg__scatter_check(op, method, self, dim, index, src, &wd)) return NULL;
    if (reduce_kind == 1 && tg__scatter_reduce_old(op, reduce, &red)) return NULL;
    if (reduce_kind == 2 && tg__scatter_reduce_two(op, reduce, &red)) return NULL;
    if (tg__cuda_same_device(op, self, index) || tg__cuda_same_device(op, self, src)) return NULL;
    return tg__index_scatter_flow(op, &CUDA_BE, self, wd, index, src, value, red, include_self, 1.0,
                                  false, out);
}

extern "C" tg_tensor *tg__cuda_scatter_src_out(tg_tensor *self, int64_t dim, tg_tensor *index,
                                               tg_tensor *src, tg_tensor *out)
{
    return scatter_entry("scatter", "scatter", self, dim, index, src, 0, NULL, 0, true, out);
}

extern "C" tg_tensor *tg__cuda_scatter_value_out(tg_tensor *self, int64_t dim, tg_tensor *index,
                                                 double value, tg_tensor *out)
{
    return scatter_entry("scatter", "scatter", self, dim, index, NULL, value, NULL, 0, true, out);
}

extern "C" tg_tensor *tg__cuda_scatter_reduce_out(tg_tensor *self, int64_t dim, tg_tensor *index,
                                                  tg_tensor *src, const char *reduce,
                                                  tg_tensor *out)
{
    return scatter_entry("scatter", "scatter", self, dim, index, src, 0, reduce, 1, true, out);
}

extern "C" tg_tensor *tg__cuda_scatter_value_reduce_out(tg_tensor *self, int64_t dim,
                                                        tg_tensor *index, double value,
                                                        const char *reduce, tg_tensor *out)
{
    return scatter_entry("scatter", "scatter", self, dim, index, NULL, value, reduce, 1, true, out);
}

extern "C" tg_tensor *tg__cuda_scatter_add_out(tg_tensor *self, int64_t dim, tg_tensor *index,
                                               tg_tensor *src, tg_tensor *out)
{
    int64_t wd;
    const char *op = "scatter_add";
    if (tg__scatter_check(op, "scatter_add", self, dim, index, src, &wd) ||
        tg__cuda_same_device(op, self, index) || tg__cuda_same_device(op, self, src))
        return NULL;
    return tg__index_scatter_flow(op, &CUDA_BE, self, wd, index, src, 0, TG_IDX_SUM, true, 1.0,
                                  false, out);
}

extern "C" tg_tensor *tg__cuda_scatter_reduce_two_out(tg_tensor *self, int64_t dim,
                                                      tg_tensor *index, tg_tensor *src,
                                                      const char *reduce, bool include_self,
                                                      tg_tensor *out)
{
    return scatter_entry("scatter_reduce", "scatter_reduce", self, dim, index, src, 0, reduce, 2,
                         include_self, out);
}

extern "C" tg_tensor *tg__cuda_index_add_out(tg_tensor *self, int64_t dim, tg_tensor *index,
                                             tg_tensor *source, double alpha, tg_tensor *out)
{
    const char *op = "index_add";
    int64_t wd;
    if (tg__index_add_check(op, self, dim, index, source, &wd) ||
        tg__cuda_same_device(op, self, index) || tg__cuda_same_device(op, self, source))
        return NULL;
    return tg__index_scatter_flow(op, &CUDA_BE, self, wd, index, source, 0, TG_IDX_SUM, true, alpha,
                                  true, out);
}

/* nonzero: self read back to the host (contiguous), the CPU's two passes there, the result
 * copied to self's device. */
extern "C" tg_tensor *tg__cuda_nonzero(tg_tensor *self)
{
    const char *op = "nonzero";
    tg_tensor *h = tg__empty(op, self->sizes, self->ndim, self->dtype, TG_DEVICE_CPU);
    if (h && tg__copy_into(op, h, self) != 0) {
        tg_release(h);
        h = NULL;
    }
    tg_tensor *rh = h ? tg__nonzero_host(op, h) : NULL;
    tg_tensor *r = rh ? tg__empty(op, rh->sizes, rh->ndim, TG_INT64, self->device) : NULL;
    if (r && tg__copy_into(op, r, rh) != 0) {
        tg_release(r);
        r = NULL;
    }
    tg_release(rh);
    tg_release(h);
    return r;
}
