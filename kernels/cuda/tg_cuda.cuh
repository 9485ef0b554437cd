/* Device utilities shared by every CUDA kernel file (the .cu files of kernels/cuda):
 *
 *   - status checks that turn a CUDA error into a library error (TG_CUDA_CHECK, tg__cuda_ok);
 *   - launch configuration (tg__cuda_blocks) and a device guard;
 *   - dtype -> device type mapping and a readable switch-based dispatcher
 *     (tg__cuda_dispatch(dtype, functor));
 *   - element loads and stores with dynamic casting between dtypes, with PyTorch's (and the
 *     CPU kernels') conversion rules: float16/bfloat16/float32 compute in float, float64 in
 *     double, integers and bool in int64_t (see kernels/common/pointwise_scalar.h);
 *   - an offset calculator built from a tg_iter (byte strides per operand, index -> offsets);
 *   - the host-scalar rule: a zero-dim CPU tensor (or a wrapped Scalar) may join a CUDA
 *     iteration; its data pointer is a HOST pointer, so kernels read it on the host and pass
 *     the value by value (tg__cuda_is_host_operand, tg__cuda_host_value).
 *
 * Everything is header-only (static / inline / templates), C++17, compiled by nvcc only. */
#ifndef TG_CUDA_CUH
#define TG_CUDA_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <math.h>

#include "tg_internal.h"
#include "pointwise_convert.h"   /* host-side helpers: tg__pw_kind, scalar checks, loads */
#include "pointwise_scalar.h"    /* the scalar functions (__host__ __device__ under nvcc) */

/* The CUDA runtime layer: tg__cuda_stream, tg__cuda_check, tg__cuda_alloc/free, ... */
#include "tg_cuda_rt.h"

/* ------------------------------------------------------------------ status checks */

/* 0 on success; otherwise records "<op>: CUDA error: <string>" (through the runtime's
 * tg__cuda_check, which also maps out-of-memory to PyTorch's message) and returns -1. */
static inline int tg__cuda_ok(const char *op, cudaError_t e)
{
    if (e == cudaSuccess) return 0;
    tg__cuda_check(op, (int)e);
    return -1;
}

/* For functions returning a pointer: evaluates a CUDA call; on failure records the error and
 * returns NULL from the enclosing function. Use only where nothing needs releasing. */
#define TG_CUDA_CHECK(op, expr)                                   \
    do {                                                          \
        if (tg__cuda_ok((op), (expr)) != 0) return NULL;          \
    } while (0)

/* After every kernel launch: the launch error (bad configuration, no device). */
static inline int tg__cuda_launch_ok(const char *op)
{
    return tg__cuda_ok(op, cudaGetLastError());
}

/* ------------------------------------------------------------------ launch configuration */

#define TG_CUDA_THREADS 256
/* Grid-stride loops cover any n; more blocks than this buys nothing for pointwise work. */
#define TG_CUDA_MAX_BLOCKS 65536

/* Blocks for n work items at `threads` per block, at least 1, at most TG_CUDA_MAX_BLOCKS. */
static inline unsigned tg__cuda_blocks(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > TG_CUDA_MAX_BLOCKS) b = TG_CUDA_MAX_BLOCKS;
    return (unsigned)b;
}

/* The device a tensor lives on, as a CUDA ordinal. */
static inline int tg__cuda_device_of(const tg_tensor *t) { return t->device.index < 0 ? 0 : t->device.index; }

/* Makes `device` current for the lifetime of the guard (kernels launch on the tensors'
 * device), restoring the previous one after. Errors here surface at the launch check. */
struct tg_cuda_device_guard {
    int prev = -1;
    explicit tg_cuda_device_guard(int device)
    {
        if (cudaGetDevice(&prev) != cudaSuccess) { prev = -1; return; }
        if (prev != device) cudaSetDevice(device);
        else prev = -1;
    }
    ~tg_cuda_device_guard() { if (prev >= 0) cudaSetDevice(prev); }
    tg_cuda_device_guard(const tg_cuda_device_guard &) = delete;
    tg_cuda_device_guard &operator=(const tg_cuda_device_guard &) = delete;
};

/* ------------------------------------------------------------------ dtypes */

/* Storage type of each dtype on the device. bool is stored as one byte (read as != 0). */
template <class T> struct tg_cuda_type_tag { using type = T; };

/* Calls f(tg_cuda_type_tag<T>{}) with T the device storage type of dtype t; returns false
 * (calling nothing) for a dtype without one. Use with a generic lambda:
 *   tg__cuda_dispatch(t, [&](auto tag) { using T = typename decltype(tag)::type; ... }); */
template <class F>
static inline bool tg__cuda_dispatch(tg_dtype t, F &&f)
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

/* Calls f(tg_cuda_type_tag<C>{}) with C the compute type of dtype t: float, double or
 * int64_t (tg__pw_kind's three kinds). */
template <class F>
static inline void tg__cuda_dispatch_compute(tg_dtype t, F &&f)
{
    switch (tg__pw_kind(t)) {
    case TG_PW_F32: f(tg_cuda_type_tag<float>{}); break;
    case TG_PW_F64: f(tg_cuda_type_tag<double>{}); break;
    case TG_PW_I64: f(tg_cuda_type_tag<int64_t>{}); break;
    }
}

/* tg__pw_kind for device code. */
__host__ __device__ __forceinline__ tg_pw_kind tg__cuda_kind(tg_dtype t)
{
    switch (t) {
    case TG_FLOAT16: case TG_BFLOAT16: case TG_FLOAT32: return TG_PW_F32;
    case TG_FLOAT64: return TG_PW_F64;
    default: return TG_PW_I64;
    }
}

/* ------------------------------------------------------------------ conversions (device)
 * The same rules as kernels/common/pointwise_convert.h, so CUDA and CPU agree bit for bit on
 * conversions: float -> integer truncates, with x86's results out of range (int64 through a
 * 64-bit conversion giving INT64_MIN, narrower types through a 32-bit one giving INT32_MIN,
 * then wrapped), integer stores wrap, bool is != 0 (NaN is true), double -> half goes through
 * float. */
__device__ __forceinline__ int64_t tg__cuda_f64_to_i64(double v)
{
    if (!(v > -9223372036854775809.0 && v < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)v;
}

__device__ __forceinline__ int64_t tg__cuda_float_to_int(double v, tg_dtype t)
{
    if (t == TG_INT64) return tg__cuda_f64_to_i64(v);
    if (!(v > -2147483649.0 && v < 2147483648.0)) return INT32_MIN;
    return (int64_t)v;
}

/* Loads one element of dtype t at p in compute type C (float, double or int64_t). */
template <class C> __device__ C tg__cuda_load(const char *p, tg_dtype t);

template <> __device__ __forceinline__ int64_t tg__cuda_load<int64_t>(const char *p, tg_dtype t)
{
    switch (t) {
    case TG_BOOL: return *(const uint8_t *)p != 0;
    case TG_UINT8: return *(const uint8_t *)p;
    case TG_INT8: return *(const int8_t *)p;
    case TG_INT16: return *(const int16_t *)p;
    case TG_INT32: return *(const int32_t *)p;
    case TG_INT64: return *(const int64_t *)p;
    case TG_FLOAT16: return tg__cuda_f64_to_i64(__half2float(*(const __half *)p));
    case TG_BFLOAT16: return tg__cuda_f64_to_i64(__bfloat162float(*(const __nv_bfloat16 *)p));
    case TG_FLOAT32: return tg__cuda_f64_to_i64(*(const float *)p);
    case TG_FLOAT64: return tg__cuda_f64_to_i64(*(const double *)p);
    default: return 0;
    }
}

template <> __device__ __forceinline__ double tg__cuda_load<double>(const char *p, tg_dtype t)
{
    switch (t) {
    case TG_FLOAT16: return __half2float(*(const __half *)p);
    case TG_BFLOAT16: return __bfloat162float(*(const __nv_bfloat16 *)p);
    case TG_FLOAT32: return *(const float *)p;
    case TG_FLOAT64: return *(const double *)p;
    default: return (double)tg__cuda_load<int64_t>(p, t);
    }
}

template <> __device__ __forceinline__ float tg__cuda_load<float>(const char *p, tg_dtype t)
{
    switch (t) {
    case TG_FLOAT16: return __half2float(*(const __half *)p);
    case TG_BFLOAT16: return __bfloat162float(*(const __nv_bfloat16 *)p);
    case TG_FLOAT32: return *(const float *)p;
    default: return (float)tg__cuda_load<double>(p, t);
    }
}

/* Stores v (compute type int64_t, float, double, or bool) into one element of dtype t at p. */
__device__ __forceinline__ void tg__cuda_store(char *p, tg_dtype t, int64_t v)
{
    switch (t) {
    case TG_BOOL: *(uint8_t *)p = v != 0; break;
    case TG_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case TG_INT8: *(int8_t *)p = (int8_t)v; break;
    case TG_INT16: *(int16_t *)p = (int16_t)v; break;
    case TG_INT32: *(int32_t *)p = (int32_t)v; break;
    case TG_INT64: *(int64_t *)p = v; break;
    case TG_FLOAT16: *(__half *)p = __float2half_rn((float)v); break;
    case TG_BFLOAT16: *(__nv_bfloat16 *)p = __float2bfloat16_rn((float)v); break;
    case TG_FLOAT32: *(float *)p = (float)v; break;
    case TG_FLOAT64: *(double *)p = (double)v; break;
    default: break;
    }
}

__device__ __forceinline__ void tg__cuda_store(char *p, tg_dtype t, float v)
{
    switch (t) {
    case TG_FLOAT16: *(__half *)p = __float2half_rn(v); break;
    case TG_BFLOAT16: *(__nv_bfloat16 *)p = __float2bfloat16_rn(v); break;
    case TG_FLOAT32: *(float *)p = v; break;
    case TG_FLOAT64: *(double *)p = (double)v; break;
    case TG_BOOL: *(uint8_t *)p = v != 0; break;
    default: tg__cuda_store(p, t, tg__cuda_float_to_int(v, t)); break;
    }
}

__device__ __forceinline__ void tg__cuda_store(char *p, tg_dtype t, double v)
{
    switch (t) {
    case TG_FLOAT16: case TG_BFLOAT16: case TG_FLOAT32: tg__cuda_store(p, t, (float)v); break;
    case TG_FLOAT64: *(double *)p = v; break;
    case TG_BOOL: *(uint8_t *)p = v != 0; break;
    default: tg__cuda_store(p, t, tg__cuda_float_to_int(v, t)); break;
    }
}

__device__ __forceinline__ void tg__cuda_store(char *p, tg_dtype t, bool v)
{
    tg__cuda_store(p, t, (int64_t)(v ? 1 : 0));
}

/* Typed conversions for the fast paths (operands already in storage type T). */
template <class T> struct tg_cuda_compute_of { using type = int64_t; };
template <> struct tg_cuda_compute_of<__half> { using type = float; };
template <> struct tg_cuda_compute_of<__nv_bfloat16> { using type = float; };
template <> struct tg_cuda_compute_of<float> { using type = float; };
template <> struct tg_cuda_compute_of<double> { using type = double; };

template <class T> __device__ __forceinline__ typename tg_cuda_compute_of<T>::type tg__cuda_widen(T v) { return (typename tg_cuda_compute_of<T>::type)v; }
template <> __device__ __forceinline__ int64_t tg__cuda_widen<bool>(bool v) { return v ? 1 : 0; }
template <> __device__ __forceinline__ float tg__cuda_widen<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float tg__cuda_widen<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

/* ------------------------------------------------------------------ offset calculator */

/* For an iteration with N operands: maps a linear element index (fastest dim first, as the
 * iterator orders dims) to each operand's byte offset. Passed to kernels by value. */
template <int N>
struct tg_cuda_offsets {
    int ndim;
    int64_t sizes[TG_MAX_DIMS];
    int64_t strides[TG_MAX_DIMS][N];   /* bytes */

    __host__ __device__ void get(int64_t i, int64_t *off) const
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
template <int N>
static inline tg_cuda_offsets<N> tg__cuda_offsets_from_iter(const tg_iter *it)
{
    tg_cuda_offsets<N> o;
    o.ndim = it->ndim;
    for (int d = 0; d < TG_MAX_DIMS; d++) {
        o.sizes[d] = d < it->ndim ? it->sizes[d] : 1;
        for (int k = 0; k < N; k++) o.strides[d][k] = d < it->ndim ? it->strides[k][d] : 0;
    }
    return o;
}

/* The calculator for one tensor on its own: element i in row-major order -> byte offset from
 * its first element (kernels that write a tensor directly: factories, random fills). */
static inline tg_cuda_offsets<1> tg__cuda_offsets_from_tensor(const tg_tensor *t)
{
    tg_cuda_offsets<1> o;
    const int64_t es = (int64_t)tg_dtype_size(t->dtype);
    o.ndim = (int)t->ndim;
    for (int d = 0; d < TG_MAX_DIMS; d++) {
        o.sizes[d] = d < t->ndim ? t->sizes[t->ndim - 1 - d] : 1;
        o.strides[d][0] = d < t->ndim ? t->strides[t->ndim - 1 - d] * es : 0;
    }
    return o;
}

/* A tensor's first element on the device. */
static inline char *tg__cuda_data(const tg_tensor *t) { return (char *)tg_tensor_data(t); }

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
template <> inline float tg__cuda_host_value<float>(const char *p, tg_dtype t) { return tg__pw_load_f32(p, t); }
template <> inline double tg__cuda_host_value<double>(const char *p, tg_dtype t) { return tg__pw_load_f64(p, t); }
template <> inline int64_t tg__cuda_host_value<int64_t>(const char *p, tg_dtype t) { return tg__pw_load_i64(p, t); }

/* The CUDA device of a built iteration: its first operand not in host memory (outputs come
 * first, so normally output 0). -1 when every operand is on the host. */
static inline int tg__cuda_iter_device(const tg_iter *it)
{
    for (int k = 0; k < it->nops; k++)
        if (it->operands[k] && it->operands[k]->device.type == TG_CUDA) return tg__cuda_device_of(it->operands[k]);
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
        if (o && o->device.type != TG_CUDA) {
            tg__error(it->op, "Expected all tensors to be on the same device, but found at least "
                      "two devices, cuda:%d and cpu!", dev ? tg__cuda_device_of(dev) : 0);
            return -1;
        }
    }
    return 0;
}

#endif
