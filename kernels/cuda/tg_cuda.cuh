/* The one helper header of the CUDA kernels: every .cu file of kernels/cuda includes it,
 * directly or through pointwise.cuh (C++17, compiled by nvcc, or by g++ against tests/cuda_emu).
 * Its names are tg__cuda_* (functions) and tg_cuda_* (types). It offers:
 *
 *   - status checks that turn a CUDA error into a library error (tg__cuda_ok,
 *     tg__cuda_launch_ok);
 *   - devices, streams and launch configuration (tg__cuda_device_of, a device guard,
 *     tg__cuda_select_stream, tg__cuda_blocks);
 *   - host-side argument helpers: operands on one device, out= on a device
 *     (tg__cuda_same_device, tg__cuda_prepare_out);
 *   - dtype -> device type mapping and readable switch-based dispatchers
 *     (tg__cuda_dispatch(dtype, functor), tg__cuda_dispatch_float), compute types
 *     (tg_cuda_compute_of) and element sizes on the device;
 *   - element loads and stores with dynamic casting between dtypes (tg__cuda_load,
 *     tg__cuda_store: pointwise_convert.h's, which CPU and device share, by compute type), and
 *     typed conversions between a storage type and its compute type (tg__cuda_widen,
 *     tg__cuda_narrow), all with PyTorch's rules: float16/bfloat16/float32 compute in float,
 *     float64 in double, integers and bool in int64_t (see kernels/common/ufunc/unary.h),
 *     and float -> integer conversions give x86's results;
 *   - offset calculators (index -> byte offsets of N operands of one shape) built from a
 *     tg_iter, a tensor or explicit strides;
 *   - strided copies between tensors of one device (tg__cuda_copy_strided, defined in copy.cu;
 *     tg__cuda_copy_broadcast, tg__cuda_contiguous);
 *   - the host-scalar rule: a zero-dim CPU tensor (or a wrapped Scalar) may join a CUDA
 *     iteration; its data pointer is a HOST pointer, so kernels read it on the host and pass
 *     the value by value (tg__cuda_is_host_operand, tg__cuda_host_value).
 *
 * Everything is header-only (static / inline / templates) except tg__cuda_copy_strided. Kernels
 * never synchronise except where a host decision needs a device value (nll_loss's target
 * check, integer division by zero). */
#ifndef TG_CUDA_CUH
#define TG_CUDA_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <type_traits>

#include "core/core.h"
#include "tg_kutil.h"          /* out= preparation, tg__k_data */
#include "pointwise_convert.h" /* dtype rules (host and device), host loads, scalar checks */

/* The CUDA runtime layer: tg__cuda_stream, tg__cuda_check, tg__cuda_alloc/free, ... */
#include "cuda/cuda_rt.h"

/* ------------------------------------------------------------------ status checks */

/* 0 on success; otherwise records "<op>: CUDA error: <string>" (through the runtime's
 * tg__cuda_check, which also maps out-of-memory to PyTorch's message) and returns -1. */
static inline int tg__cuda_ok(const char *op, cudaError_t e)
{
    if (e == cudaSuccess) return 0;
    tg__cuda_check(op, (int)e);
    return -1;
}

/* After every kernel launch: the launch error (bad configuration, no device). */
static inline int tg__cuda_launch_ok(const char *op) { return tg__cuda_ok(op, cudaGetLastError()); }

/* ------------------------------------------------------------------ launch configuration */

#define TG_CUDA_THREADS 256
/* Grid-stride loops cover any n:
 *   for (int64_t i = tg__cuda_thread_index(); i < n; i += tg__cuda_thread_count()) ...
 * More blocks than TG_CUDA_MAX_BLOCKS buys nothing for pointwise work. */
#define TG_CUDA_MAX_BLOCKS 65536

__device__ __forceinline__ int64_t tg__cuda_thread_index()
{
    return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t tg__cuda_thread_count()
{
    return (int64_t)blockDim.x * gridDim.x;
}

/* Blocks for n work items at `threads` per block, at least 1, at most TG_CUDA_MAX_BLOCKS. */
static inline unsigned tg__cuda_blocks(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > TG_CUDA_MAX_BLOCKS) b = TG_CUDA_MAX_BLOCKS;
    return (unsigned)b;
}

/* The device a tensor lives on, as a CUDA ordinal. */
static inline int tg__cuda_device_of(const tg_tensor *t)
{
    return t->device.index < 0 ? 0 : t->device.index;
}

/* Makes `device` current for the lifetime of the guard (kernels launch on the tensors'
 * device), restoring the previous one after. Errors here surface at the launch check. */
struct tg_cuda_device_guard {
    int prev = -1;
    explicit tg_cuda_device_guard(int device)
    {
        if (cudaGetDevice(&prev) != cudaSuccess) {
            prev = -1;
            return;
        }
        if (prev != device) cudaSetDevice(device);
        else prev = -1;
    }
    ~tg_cuda_device_guard()
    {
        if (prev >= 0) cudaSetDevice(prev);
    }
    tg_cuda_device_guard(const tg_cuda_device_guard &) = delete;
    tg_cuda_device_guard &operator=(const tg_cuda_device_guard &) = delete;
};

/* For kernels that run on one device from start to end: makes dev current (it stays current
 * after the call) and returns its stream. *rc is 0, or -1 with the error recorded (stream 0). */
static inline cudaStream_t tg__cuda_select_stream(const char *op, tg_device dev, int *rc)
{
    *rc = tg__cuda_ok(op, cudaSetDevice(dev.index));
    return *rc ? (cudaStream_t)0 : tg__cuda_stream(dev.index);
}

/* ------------------------------------------------------------------ arguments (host) */

/* PyTorch's message for operands on two devices (b NULL: nothing to check). 0 or -1 + error. */
static inline int tg__cuda_same_device(const char *op, const tg_tensor *a, const tg_tensor *b)
{
    if (!b || (a->device.type == b->device.type && a->device.index == b->device.index)) return 0;
    char da[16], db[16];
    snprintf(da, sizeof da, a->device.type == TG_CUDA ? "cuda:%d" : "cpu", a->device.index);
    snprintf(db, sizeof db, b->device.type == TG_CUDA ? "cuda:%d" : "cpu", b->device.index);
    return tg__fail(
        op,
        "Expected all tensors to be on the same device, but found at least two devices, %s and %s!",
        da, db);
}

/* The start of a kernel over several operands: each of others[0..n) (NULL entries skipped) on
 * input's device, then input's device made current; its stream in *st. 0, or -1 + error. */
static inline int tg__cuda_begin(const char *op, const tg_tensor *input,
                                 const tg_tensor *const *others, int n, cudaStream_t *st)
{
    for (int i = 0; i < n; i++)
        if (tg__cuda_same_device(op, input, others[i])) return -1;
    int rc;
    *st = tg__cuda_select_stream(op, input->device, &rc);
    return rc;
}

/* Zeroes the elements of each of t[0..n) (NULL entries skipped) on stream st; 0, or -1 + error. */
static inline int tg__cuda_zero_all(const char *op, tg_tensor *const *t, int n, cudaStream_t st)
{
    for (int i = 0; i < n; i++) {
        if (!t[i] || tg__numel(t[i]) == 0) continue;
        size_t bytes = (size_t)tg__numel(t[i]) * tg_dtype_size(t[i]->dtype);
        if (tg__cuda_ok(op, cudaMemsetAsync(tg__k_data(t[i]), 0, bytes, st)) != 0) return -1;
    }
    return 0;
}

/* tg__k_prepare_out on a device: a new contiguous tensor on `dev`, or out checked (dtype
 * exactly `dtype`, same device) and resized. Returns a new reference or NULL + error. */
static inline tg_tensor *tg__cuda_prepare_out(const char *op, tg_tensor *out, const int64_t *sizes,
                                              int64_t ndim, tg_dtype dtype, tg_device dev)
{
    if (!out) return tg__empty(op, sizes, ndim, dtype, dev);
    if (out->device.type != dev.type || out->device.index != dev.index)
        return (tg_tensor *)tg__error(
            op, "Expected out tensor to be on cuda:%d, but found it on %s:%d", dev.index,
            out->device.type == TG_CUDA ? "cuda" : "cpu", out->device.index);
    return tg__k_prepare_out(op, out, sizes, ndim, dtype);
}

/* ------------------------------------------------------------------ dtypes */

/* Storage type of each dtype on the device. bool is stored as one byte (read as != 0). */
template <class T> struct tg_cuda_type_tag {
    using type = T;
};

/* Calls f(tg_cuda_type_tag<T>{}) with T the device storage type of dtype t; returns false
 * (calling nothing) for a dtype without one. Use with a generic lambda:
 *   tg__cuda_dispatch(t, [&](auto tag) { using T = typename decltype(tag)::type; ... }); */
template <class F> static inline bool tg__cuda_dispatch(tg_dtype t, F &&f)
{
    switch (t) {
    case TG_BOOL: f(tg_cuda_type_tag<bool>{}); return true;
    case TG_UINT8: f(tg_cuda_type_tag<uint8_t>{}); return true;
    case TG_INT8: f(tg_cuda_type_tag<int8_t>{}); return true;
    case TG_INT16: f(tg_cuda_type_tag<int16_t>{}); return true;
    case TG_INT32: f(tg_cuda_type_tag<int32_t>{}); return true;
    case TG_INT64: f(tg_cuda_type_tag<int64_t>{}); return true;
    case TG_FLOAT16: f(tg_cuda_type_tag<__half>{}); return true;
    case TG_BFLOAT16: f(tg_cuda_type_tag<__nv_bfloat16>{}); return true;
    case TG_FLOAT32: f(tg_cuda_type_tag<float>{}); return true;
    case TG_FLOAT64: f(tg_cuda_type_tag<double>{}); return true;
    default: return false;
    }
}

/* The same for the floating dtypes only (false, calling nothing, for the others). */
template <class F> static inline bool tg__cuda_dispatch_float(tg_dtype t, F &&f)
{
    return tg_dtype_is_floating(t) && tg__cuda_dispatch(t, [&](auto tag) {
               if constexpr (!std::is_integral<typename decltype(tag)::type>::value) f(tag);
           });
}

/* The compute type of storage type T: float for float16/bfloat16/float32, double for float64,
 * int64_t for the integers and bool. */
template <class T> struct tg_cuda_compute_of {
    using type = int64_t;
};
template <> struct tg_cuda_compute_of<__half> {
    using type = float;
};
template <> struct tg_cuda_compute_of<__nv_bfloat16> {
    using type = float;
};
template <> struct tg_cuda_compute_of<float> {
    using type = float;
};
template <> struct tg_cuda_compute_of<double> {
    using type = double;
};

/* tg_dtype_size for device code. */
TG_HD __forceinline__ int64_t tg__cuda_elem_size(tg_dtype t)
{
    switch (t) {
    case TG_BOOL:
    case TG_UINT8:
    case TG_INT8: return 1;
    case TG_INT16:
    case TG_FLOAT16:
    case TG_BFLOAT16: return 2;
    case TG_INT32:
    case TG_FLOAT32: return 4;
    default: return 8;
    }
}

/* ------------------------------------------------------------------ conversions (device)
 * kernels/common/pointwise_convert.h's loads and stores (host and device functions), so CUDA
 * and CPU agree bit for bit on conversions: float -> integer truncates, with x86's results out
 * of range, integer stores wrap, bool is != 0 (NaN is true), double -> half goes through
 * float. These give them one name per compute type for templates. */

/* Loads one element of dtype t at p in compute type C (float, double or int64_t). */
template <class C> __device__ C tg__cuda_load(const char *p, tg_dtype t);
template <> __device__ __forceinline__ int64_t tg__cuda_load<int64_t>(const char *p, tg_dtype t)
{
    return tg__pw_load_i64(p, t);
}
template <> __device__ __forceinline__ double tg__cuda_load<double>(const char *p, tg_dtype t)
{
    return tg__pw_load_f64(p, t);
}
template <> __device__ __forceinline__ float tg__cuda_load<float>(const char *p, tg_dtype t)
{
    return tg__pw_load_f32(p, t);
}

/* Stores v (compute type int64_t, float, double, or bool) into one element of dtype t at p. */
__device__ __forceinline__ void tg__cuda_store(char *p, tg_dtype t, int64_t v)
{
    tg__pw_store_i64(p, t, v);
}
__device__ __forceinline__ void tg__cuda_store(char *p, tg_dtype t, float v)
{
    tg__pw_store_f32(p, t, v);
}
__device__ __forceinline__ void tg__cuda_store(char *p, tg_dtype t, double v)
{
    tg__pw_store_f64(p, t, v);
}
__device__ __forceinline__ void tg__cuda_store(char *p, tg_dtype t, bool v)
{
    tg__pw_store_i64(p, t, v ? 1 : 0);
}

/* Typed conversions (operands already in storage type T): widen to the compute type, and a
 * compute-type value (or bool) narrowed to storage type T with the same rules as tg__cuda_store. */
template <class T>
__device__ __forceinline__ typename tg_cuda_compute_of<T>::type tg__cuda_widen(T v)
{
    return (typename tg_cuda_compute_of<T>::type)v;
}
template <> __device__ __forceinline__ int64_t tg__cuda_widen<bool>(bool v) { return v ? 1 : 0; }
template <> __device__ __forceinline__ float tg__cuda_widen<__half>(__half v)
{
    return __half2float(v);
}
template <> __device__ __forceinline__ float tg__cuda_widen<__nv_bfloat16>(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}

template <class T, class R> __device__ __forceinline__ T tg__cuda_narrow(R r)
{
    if constexpr (std::is_same<T, bool>::value) {
        return r != 0;
    } else if constexpr (std::is_same<T, __half>::value) {
        return __float2half_rn((float)r);
    } else if constexpr (std::is_same<T, __nv_bfloat16>::value) {
        return __float2bfloat16_rn((float)r);
    } else if constexpr (std::is_integral<T>::value && std::is_floating_point<R>::value) {
        return (T)tg__pw_float_to_int((double)r, sizeof(T) == 8 ? TG_INT64 : TG_INT32);
    } else if constexpr (std::is_same<R, bool>::value) {
        return (T)(r ? 1 : 0);
    } else {
        return (T)r;
    }
}

/* ------------------------------------------------------------------ offset calculator */

/* For an iteration with N operands: maps a linear element index (fastest dim first, as the
 * iterator orders dims) to each operand's byte offset. Passed to kernels by value. */
template <int N> struct tg_cuda_offsets {
    int ndim;
    int64_t sizes[TG_MAX_DIMS];
    int64_t strides[TG_MAX_DIMS][N]; /* bytes */

    TG_HD void get(int64_t i, int64_t *off) const
    {
        for (int k = 0; k < N; k++) off[k] = 0;
        for (int d = 0; d < ndim; d++) {
            int64_t s = sizes[d];
            int64_t q = i / s;
            int64_t idx = i - q * s;
            i = q;
            for (int k = 0; k < N; k++) off[k] += idx * strides[d][k];
        }
    }
};

/* Builds the calculator from a built iterator (operands in the iterator's order). */
template <int N> static inline tg_cuda_offsets<N> tg__cuda_offsets_from_iter(const tg_iter *it)
{
    tg_cuda_offsets<N> o;
    o.ndim = it->ndim;
    for (int d = 0; d < TG_MAX_DIMS; d++) {
        o.sizes[d] = d < it->ndim ? it->sizes[d] : 1;
        for (int k = 0; k < N; k++) o.strides[d][k] = d < it->ndim ? it->strides[k][d] : 0;
    }
    return o;
}

/* The calculator for N operands of one shape, `sizes` (ndim of them, row-major), given each
 * operand's element strides (NULL: broadcast, stride 0 everywhere) and element size. */
template <int N>
static inline tg_cuda_offsets<N> tg__cuda_offsets_from_strides(const int64_t *sizes, int64_t ndim,
                                                               const int64_t *const *strides,
                                                               const int64_t *esize)
{
    tg_cuda_offsets<N> o;
    o.ndim = (int)ndim;
    for (int d = 0; d < TG_MAX_DIMS; d++) {
        const int64_t rd = ndim - 1 - d; /* calculator dims go fastest first */
        o.sizes[d] = d < ndim ? sizes[rd] : 1;
        for (int k = 0; k < N; k++)
            o.strides[d][k] = d < ndim && strides[k] ? strides[k][rd] * esize[k] : 0;
    }
    return o;
}

/* The calculator for one tensor on its own: element i in row-major order -> byte offset from
 * its first element (kernels that write a tensor directly: factories, random fills). */
static inline tg_cuda_offsets<1> tg__cuda_offsets_from_tensor(const tg_tensor *t)
{
    const int64_t *strides[1] = { t->strides };
    const int64_t esize[1] = { (int64_t)tg_dtype_size(t->dtype) };
    return tg__cuda_offsets_from_strides<1>(t->sizes, t->ndim, strides, esize);
}

/* ------------------------------------------------------------------ strided copies */

/* Copies the elements of a `sizes` (ndim) shape from src (element strides src_strides, 0 to
 * broadcast; dtype st) to dst (dst_strides; dtype dt) on `device` and its stream, converting
 * with the CPU's rules (tg__pw_convert). Defined in copy.cu. 0, or -1 + error. */
int tg__cuda_copy_strided(const char *op, int device, char *dst, tg_dtype dt,
                          const int64_t *dst_strides, const char *src, tg_dtype st,
                          const int64_t *src_strides, const int64_t *sizes, int64_t ndim);

/* dst = src broadcast to dst's shape (src's dims align with dst's last dims), converted; both
 * on one device. 0 or -1 + error. */
static inline int tg__cuda_copy_broadcast(const char *op, tg_tensor *dst, const tg_tensor *src)
{
    int64_t src_strides[TG_MAX_DIMS];
    for (int64_t d = 0; d < dst->ndim; d++) {
        int64_t sd = d - (dst->ndim - src->ndim);
        src_strides[d] = sd < 0 || src->sizes[sd] == 1 ? 0 : src->strides[sd];
    }
    return tg__cuda_copy_strided(op, tg__cuda_device_of(dst), tg__k_data(dst), dst->dtype,
                                 dst->strides, tg__k_data(src), src->dtype, src_strides, dst->sizes,
                                 dst->ndim);
}

/* A contiguous copy of t in dtype dt on t's device (a new reference to t when it already is
 * one). NULL + error. */
static inline tg_tensor *tg__cuda_contiguous(const char *op, tg_tensor *t, tg_dtype dt)
{
    return tg__k_contiguous_as(op, t, dt, tg__cuda_copy_broadcast);
}

/* tg__cuda_contiguous for a chain of operands: NULL stays NULL, and nothing is done once *ok
 * is false; a failure sets *ok false (error recorded). */
static inline tg_tensor *tg__cuda_contiguous_ok(const char *op, tg_tensor *t, tg_dtype dt, bool *ok)
{
    if (!t || !*ok) return NULL;
    tg_tensor *r = tg__cuda_contiguous(op, t, dt);
    if (!r) *ok = false;
    return r;
}

/* The start of a kernel over input and n other operands (NULL entries skipped): each on input's
 * device (tg__cuda_begin: its stream in *st), then contiguous copies in input's dtype of input
 * (c[0]) and of the first nc others (c[1 + i]; NULL stays NULL). 0, or -1 with the error
 * recorded and nothing held. */
static inline int tg__cuda_begin_copies(const char *op, tg_tensor *input, tg_tensor *const *others,
                                        int n, int nc, cudaStream_t *st, tg_tensor **c)
{
    if (tg__cuda_begin(op, input, others, n, st) != 0) return -1;
    bool ok = true;
    c[0] = tg__cuda_contiguous_ok(op, input, input->dtype, &ok);
    for (int i = 0; i < nc; i++)
        c[1 + i] = tg__cuda_contiguous_ok(op, others[i], input->dtype, &ok);
    if (ok) return 0;
    tg__k_release_all(c, nc + 1);
    return -1;
}

/* The end of a backward with grads g[0..3) (NULL where not wanted): when ok and `zero` (no
 * kernel wrote them: no elements to reduce), the grads are zeroed; the n temporaries are
 * released. The grads when ok, else all released and NULL. */
static inline tg_tensors3 tg__cuda_grads_end(const char *op, bool ok, bool zero,
                                             tg_tensor *const *g, tg_tensor *const *tmp, int n,
                                             cudaStream_t st)
{
    if (ok && zero) ok = tg__cuda_zero_all(op, g, 3, st) == 0;
    tg__k_release_all(tmp, n);
    return tg__k_results3(ok, g[0], g[1], g[2]);
}

/* ------------------------------------------------------------------ host-scalar rule */

/* True when operand k of a CUDA iteration lives in host memory: a zero-dim CPU tensor, or a
 * value the iterator converted into its own scalar buffer. Such operands have stride 0; the
 * kernel gets their value by value (tg__cuda_host_value) instead of a pointer. */
static inline bool tg__cuda_is_host_operand(const tg_iter *it, int k)
{
    const char *p = it->data[k];
    const char *buf = (const char *)it->scalar_buf;
    if (p >= buf && p < buf + sizeof it->scalar_buf) return true;
    return it->operands[k] && it->operands[k]->device.type == TG_CPU;
}

/* The value of a host operand in compute type C (read on the host, with the CPU's rules). */
template <class C> static inline C tg__cuda_host_value(const char *p, tg_dtype t);
template <> inline float tg__cuda_host_value<float>(const char *p, tg_dtype t)
{
    return tg__pw_load_f32(p, t);
}
template <> inline double tg__cuda_host_value<double>(const char *p, tg_dtype t)
{
    return tg__pw_load_f64(p, t);
}
template <> inline int64_t tg__cuda_host_value<int64_t>(const char *p, tg_dtype t)
{
    return tg__pw_load_i64(p, t);
}

/* The CUDA device of a built iteration: its first operand not in host memory (outputs come
 * first, so normally output 0). -1 when every operand is on the host. */
static inline int tg__cuda_iter_device(const tg_iter *it)
{
    for (int k = 0; k < it->nops; k++)
        if (it->operands[k] && it->operands[k]->device.type == TG_CUDA)
            return tg__cuda_device_of(it->operands[k]);
    return -1;
}

/* Outputs of a CUDA kernel must be on the device (the iterator lets zero-dim CPU tensors
 * through as inputs, but a kernel cannot write host memory). 0, or -1 with PyTorch's message. */
static inline int tg__cuda_check_outputs(const tg_iter *it)
{
    const tg_tensor *dev = NULL;
    for (int k = 0; k < it->nops && !dev; k++)
        if (it->operands[k] && it->operands[k]->device.type == TG_CUDA) dev = it->operands[k];
    for (int i = 0; i < it->noutputs; i++) {
        const tg_tensor *o = it->operands[i];
        if (o && o->device.type != TG_CUDA)
            return tg__fail(it->op,
                            "Expected all tensors to be on the same device, but found at least "
                            "two devices, cuda:%d and cpu!",
                            dev ? tg__cuda_device_of(dev) : 0);
    }
    return 0;
}

#endif
