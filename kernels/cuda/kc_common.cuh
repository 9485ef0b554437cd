/* Helpers shared by the CUDA reduce, softmax, nn, optim, linalg and shape kernels (.cu files
 * compiled by nvcc as C++17): CUDA status checks turned into library errors, the device's
 * stream, out= preparation on a device, tensor geometry for device-side offsets, element
 * conversion between device types, a dtype switch, and one general strided copy kernel.
 *
 * Everything here is static/inline; the .cu files that include it define the tg__cuda_*
 * kernels with C linkage. Kernels never synchronise except where a host decision needs a
 * device value (nll_loss's target check). */
#ifndef KC_COMMON_CUH
#define KC_COMMON_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tg_cuda.cuh"   /* the device utilities every CUDA file shares: tg__cuda_ok, tg__cuda_stream */
#include "tg_kutil.h"
#include "tg_kernels.h"

/* ------------------------------------------------------------------ status checks */

/* 0, or -1 with "<op>: CUDA error: <string>" recorded (the first error wins). */
static inline int kc_check(const char *op, cudaError_t e)
{
    return tg__cuda_ok(op, e);    /* the runtime's mapping (OOM in PyTorch's words) */
}

/* After a launch: the launch's own status (bad configuration, no kernel image). */
static inline int kc_launch_check(const char *op)
{
    return kc_check(op, cudaGetLastError());
}

/* Makes t's device current and returns its stream (NULL stream on error, with -1 in *rc). */
static inline cudaStream_t kc_stream(const char *op, tg_device dev, int *rc)
{
    *rc = kc_check(op, cudaSetDevice(dev.index));
    return *rc ? (cudaStream_t)0 : tg__cuda_stream(dev.index);
}

static inline char *kc_data(const tg_tensor *t)
{
    return (char *)t->storage->data + t->storage_offset * (int64_t)tg_dtype_size(t->dtype);
}

/* tg__k_prepare_out on a device: a new contiguous tensor on `dev`, or out checked (dtype
 * exactly `dtype`, same device) and resized. Returns a new reference or NULL + error. */
static inline tg_tensor *kc_prepare_out(const char *op, tg_tensor *out, const int64_t *sizes, int64_t ndim,
                                        tg_dtype dtype, tg_device dev)
{
    if (!out) return tg__empty(op, sizes, ndim, dtype, dev);
    if (out->device.type != dev.type || out->device.index != dev.index)
        return (tg_tensor *)tg__error(op, "Expected out tensor to be on cuda:%d, but found it on %s:%d", dev.index,
                         out->device.type == TG_CUDA ? "cuda" : "cpu", out->device.index);
    return tg__k_prepare_out(op, out, sizes, ndim, dtype);
}

/* PyTorch's message for operands on two devices. 0 or -1 + error. */
static inline int kc_same_device(const char *op, const tg_tensor *a, const tg_tensor *b)
{
    if (!b || (a->device.type == b->device.type && a->device.index == b->device.index)) return 0;
    char da[16], db[16];
    snprintf(da, sizeof da, a->device.type == TG_CUDA ? "cuda:%d" : "cpu", a->device.index);
    snprintf(db, sizeof db, b->device.type == TG_CUDA ? "cuda:%d" : "cpu", b->device.index);
    tg__error(op, "Expected all tensors to be on the same device, but found at least two devices, %s and %s!", da, db);
    return -1;
}

/* ------------------------------------------------------------------ geometry */

/* A tensor's sizes and strides (elements) passed by value to kernels. */
struct kc_geo {
    int ndim;
    int64_t sizes[TG_MAX_DIMS];
    int64_t strides[TG_MAX_DIMS];
};

static inline kc_geo kc_geo_of(const tg_tensor *t)
{
    kc_geo g;
    memset(&g, 0, sizeof g);
    g.ndim = (int)t->ndim;
    for (int d = 0; d < g.ndim; d++) { g.sizes[d] = t->sizes[d]; g.strides[d] = t->strides[d]; }
    return g;
}

/* Element offset of the element with row-major linear index i. */
__device__ __forceinline__ int64_t kc_offset(const kc_geo &g, int64_t i)
{
    int64_t off = 0;
    for (int d = g.ndim - 1; d >= 0 && i > 0; d--) {
        int64_t s = g.sizes[d];
        off += (i % s) * g.strides[d];
        i /= s;
    }
    return off;
}

/* ------------------------------------------------------------------ element conversion */

template <typename T> __device__ __forceinline__ double kc_to_double(T v) { return (double)v; }
template <> __device__ __forceinline__ double kc_to_double<__half>(__half v) { return (double)__half2float(v); }
template <> __device__ __forceinline__ double kc_to_double<__nv_bfloat16>(__nv_bfloat16 v) { return (double)__bfloat162float(v); }

template <typename T> __device__ __forceinline__ float kc_to_float(T v) { return (float)v; }
template <> __device__ __forceinline__ float kc_to_float<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float kc_to_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ int64_t kc_to_int64(T v) { return (int64_t)v; }
template <> __device__ __forceinline__ int64_t kc_to_int64<__half>(__half v) { return (int64_t)__half2float(v); }
template <> __device__ __forceinline__ int64_t kc_to_int64<__nv_bfloat16>(__nv_bfloat16 v) { return (int64_t)__bfloat162float(v); }

template <typename T> __device__ __forceinline__ T kc_from_double(double v) { return (T)v; }
template <> __device__ __forceinline__ bool kc_from_double<bool>(double v) { return v != 0; }
template <> __device__ __forceinline__ __half kc_from_double<__half>(double v) { return __float2half_rn((float)v); }
template <> __device__ __forceinline__ __nv_bfloat16 kc_from_double<__nv_bfloat16>(double v) { return __float2bfloat16_rn((float)v); }

template <typename T> __device__ __forceinline__ T kc_from_float(float v) { return (T)v; }
template <> __device__ __forceinline__ __half kc_from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 kc_from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* Dynamic-dtype loads and stores (slow paths and outputs whose dtype differs from the
 * computation's), like tg__load_double / tg__store_double on the host. */
__device__ inline double kc_load_double(const char *p, int dt)
{
    switch (dt) {
    case TG_BOOL: return *(const bool *)p ? 1.0 : 0.0;
    case TG_UINT8: return *(const uint8_t *)p;
    case TG_INT8: return *(const int8_t *)p;
    case TG_INT16: return *(const int16_t *)p;
    case TG_INT32: return *(const int32_t *)p;
    case TG_INT64: return (double)*(const int64_t *)p;
    case TG_FLOAT16: return __half2float(*(const __half *)p);
    case TG_BFLOAT16: return __bfloat162float(*(const __nv_bfloat16 *)p);
    case TG_FLOAT32: return *(const float *)p;
    default: return *(const double *)p;
    }
}

__device__ inline int64_t kc_load_int64(const char *p, int dt)
{
    switch (dt) {
    case TG_BOOL: return *(const bool *)p ? 1 : 0;
    case TG_UINT8: return *(const uint8_t *)p;
    case TG_INT8: return *(const int8_t *)p;
    case TG_INT16: return *(const int16_t *)p;
    case TG_INT32: return *(const int32_t *)p;
    case TG_INT64: return *(const int64_t *)p;
    default: return (int64_t)kc_load_double(p, dt);
    }
}

__device__ inline void kc_store_double(char *p, int dt, double v)
{
    switch (dt) {
    case TG_BOOL: *(bool *)p = v != 0; break;
    case TG_UINT8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
    case TG_INT8: *(int8_t *)p = (int8_t)(int64_t)v; break;
    case TG_INT16: *(int16_t *)p = (int16_t)(int64_t)v; break;
    case TG_INT32: *(int32_t *)p = (int32_t)(int64_t)v; break;
    case TG_INT64: *(int64_t *)p = (int64_t)v; break;
    case TG_FLOAT16: *(__half *)p = __float2half_rn((float)v); break;
    case TG_BFLOAT16: *(__nv_bfloat16 *)p = __float2bfloat16_rn((float)v); break;
    case TG_FLOAT32: *(float *)p = (float)v; break;
    default: *(double *)p = v; break;
    }
}

__device__ inline void kc_store_int64(char *p, int dt, int64_t v)
{
    switch (dt) {
    case TG_BOOL: *(bool *)p = v != 0; break;
    case TG_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case TG_INT8: *(int8_t *)p = (int8_t)v; break;
    case TG_INT16: *(int16_t *)p = (int16_t)v; break;
    case TG_INT32: *(int32_t *)p = (int32_t)v; break;
    case TG_INT64: *(int64_t *)p = v; break;
    default: kc_store_double(p, dt, (double)v); break;
    }
}

/* ------------------------------------------------------------------ dtype switch */

/* Calls f(T()) with T the device type of dt; returns false for an unknown dtype. */
template <typename F> static inline bool kc_dispatch(tg_dtype dt, F &&f)
{
    switch (dt) {
    case TG_BOOL: f(bool()); return true;
    case TG_UINT8: f(uint8_t()); return true;
    case TG_INT8: f(int8_t()); return true;
    case TG_INT16: f(int16_t()); return true;
    case TG_INT32: f(int32_t()); return true;
    case TG_INT64: f(int64_t()); return true;
    case TG_FLOAT16: f(__half()); return true;
    case TG_BFLOAT16: f(__nv_bfloat16()); return true;
    case TG_FLOAT32: f(float()); return true;
    case TG_FLOAT64: f(double()); return true;
    default: return false;
    }
}

/* The same for the floating dtypes only. */
template <typename F> static inline bool kc_dispatch_float(tg_dtype dt, F &&f)
{
    switch (dt) {
    case TG_FLOAT16: f(__half()); return true;
    case TG_BFLOAT16: f(__nv_bfloat16()); return true;
    case TG_FLOAT32: f(float()); return true;
    case TG_FLOAT64: f(double()); return true;
    default: return false;
    }
}

/* Computation type of a floating T: float for half/bfloat16/float, double for double. */
template <typename T> struct kc_acc { typedef float type; };
template <> struct kc_acc<double> { typedef double type; };

/* ------------------------------------------------------------------ launch configuration */

static inline unsigned kc_blocks(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > 65536LL * 16) b = 65536LL * 16;      /* kernels loop grid-stride beyond this */
    return (unsigned)b;
}

/* ------------------------------------------------------------------ strided copy */

/* dst[i] = src[i] for every element of dst's shape (row-major index i), src broadcast to it
 * through its geometry (a size-1 or missing dim has stride 0 there) and converted. */
static __global__ void kc_copy_kernel(char *dst, kc_geo dg, int ddt, const char *src, kc_geo sg, int sdt, int64_t n)
{
    int64_t esd = ddt == TG_FLOAT64 || ddt == TG_INT64 ? 8 : ddt == TG_FLOAT32 || ddt == TG_INT32 ? 4
                : ddt == TG_FLOAT16 || ddt == TG_BFLOAT16 || ddt == TG_INT16 ? 2 : 1;
    int64_t ess = sdt == TG_FLOAT64 || sdt == TG_INT64 ? 8 : sdt == TG_FLOAT32 || sdt == TG_INT32 ? 4
                : sdt == TG_FLOAT16 || sdt == TG_BFLOAT16 || sdt == TG_INT16 ? 2 : 1;
    bool integral = ddt <= TG_INT64 && sdt <= TG_INT64;   /* TG_BOOL..TG_INT64 come first */
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        char *d = dst + kc_offset(dg, i) * esd;
        const char *s = src + kc_offset(sg, i) * ess;
        if (ddt == sdt) {
            if (esd == 8) *(uint64_t *)d = *(const uint64_t *)s;
            else if (esd == 4) *(uint32_t *)d = *(const uint32_t *)s;
            else if (esd == 2) *(uint16_t *)d = *(const uint16_t *)s;
            else *d = *s;
        } else if (integral) {
            kc_store_int64(d, ddt, kc_load_int64(s, sdt));
        } else {
            kc_store_double(d, ddt, kc_load_double(s, sdt));
        }
    }
}

/* Copies src (broadcast to dst's shape: src's dims align with dst's last dims) into dst,
 * both on the same device, converting dtypes. 0 or -1 + error. */
static inline int kc_copy(const char *op, tg_tensor *dst, const tg_tensor *src, cudaStream_t st)
{
    int64_t n = tg__numel(dst);
    if (n == 0) return 0;
    kc_geo dg = kc_geo_of(dst), sg = dg;
    for (int d = 0; d < dg.ndim; d++) {
        int sd = d - (dg.ndim - (int)src->ndim);
        sg.strides[d] = sd < 0 || src->sizes[sd] == 1 ? 0 : src->strides[sd];
    }
    kc_copy_kernel<<<kc_blocks(n, 256), 256, 0, st>>>(kc_data(dst), dg, (int)dst->dtype, kc_data(src), sg,
                                                      (int)src->dtype, n);
    return kc_launch_check(op);
}

/* A contiguous device copy of t in dtype dt (a new reference to t when it already is one). */
static inline tg_tensor *kc_contiguous(const char *op, tg_tensor *t, tg_dtype dt, cudaStream_t st)
{
    if (t->dtype == dt && tg__is_contiguous(t)) return tg_retain(t);
    tg_tensor *r = tg__empty(op, t->sizes, t->ndim, dt, t->device);
    if (r && kc_copy(op, r, t, st) != 0) { tg_release(r); r = NULL; }
    return r;
}

#endif
