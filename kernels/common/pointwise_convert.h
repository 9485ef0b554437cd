/* THE element vocabulary of the kernels: dtype conversions with PyTorch's rules (the compute
 * kind of a dtype, float -> integer conversion as x86 does it), element loads and stores for
 * every dtype, one element converted between two dtypes (tg__pw_convert), and PyTorch's
 * checked Scalar conversion. The loads, stores and conversions are host and device functions
 * (TG_HD): the CPU kernels use them directly, the CUDA kernels through tg_cuda.cuh's typed
 * wrappers (tg__cuda_load<C>, tg__cuda_store), so both backends convert alike.
 *
 * Included by the CPU kernels, the composites, the *_checks.h headers that touch elements, and
 * every CUDA kernel through tg_cuda.cuh. Everything is static inline; C11 and C++. */
#ifndef TG_POINTWISE_CONVERT_H
#define TG_POINTWISE_CONVERT_H

#include "core/core.h"
#include "tg_hd.h"
#include <math.h>
#include <string.h>
#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

/* How a dtype computes: float16/bfloat16/float32 in float, float64 in double, integers and
 * bool in int64_t (see pointwise_scalar.h). */
typedef enum tg_pw_kind { TG_PW_F32, TG_PW_F64, TG_PW_I64 } tg_pw_kind;

static inline TG_HD tg_pw_kind tg__pw_kind(tg_dtype t)
{
    switch (t) {
    case TG_FLOAT16:
    case TG_BFLOAT16:
    case TG_FLOAT32: return TG_PW_F32;
    case TG_FLOAT64: return TG_PW_F64;
    default: return TG_PW_I64;
    }
}

/* A float (or NaN/inf) into an integer type, as the C++ static_cast PyTorch uses does on
 * x86-64: int64 through cvttsd2si (out-of-range and NaN give INT64_MIN), narrower types
 * through a 32-bit conversion (INT32_MIN when out of range) then truncated, so 300.0 -> uint8
 * is 44 and -1.0 -> 255. Written without undefined behaviour. */
static inline TG_HD int64_t tg__pw_f64_to_i64(double v)
{
    if (!(v > -9223372036854775809.0 && v < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)v;
}

static inline TG_HD int64_t tg__pw_float_to_int(double v, tg_dtype t)
{
    if (t == TG_INT64) return tg__pw_f64_to_i64(v);
    if (!(v > -2147483649.0 && v < 2147483648.0)) return INT32_MIN;
    return (int64_t)v;
}

/* ---- raw element access: the element types as they may lie in host storage, at any
 * alignment (a view may start at any byte offset) and aliasing the bytes (storage is char), so
 * that `*(const tg__pw_raw_i32 *)p` is one plain load or store. GCC and Clang (nvcc's host
 * compiler); UBSan's alignment check knows the alignment is 1. Device code reads its own
 * types, which CUDA's allocator and views keep aligned. ---- */
#if defined(__CUDA_ARCH__)
typedef uint16_t tg__pw_raw_u16;
typedef int16_t tg__pw_raw_i16;
typedef int32_t tg__pw_raw_i32;
typedef int64_t tg__pw_raw_i64;
typedef float tg__pw_raw_f32;
typedef double tg__pw_raw_f64;
#else
typedef uint16_t tg__pw_raw_u16 __attribute__((aligned(1), may_alias));
typedef int16_t tg__pw_raw_i16 __attribute__((aligned(1), may_alias));
typedef int32_t tg__pw_raw_i32 __attribute__((aligned(1), may_alias));
typedef int64_t tg__pw_raw_i64 __attribute__((aligned(1), may_alias));
typedef float tg__pw_raw_f32 __attribute__((aligned(1), may_alias));
typedef double tg__pw_raw_f64 __attribute__((aligned(1), may_alias));
#endif

/* float16 (bf16 false) or bfloat16 bits to and from float (round to nearest even): the core's
 * functions on the host, CUDA's intrinsics on the device (the same results). */
static inline TG_HD float tg__pw_half_to_float(uint16_t h, bool bf16)
{
#if defined(__CUDA_ARCH__)
    return bf16 ? __bfloat162float(__ushort_as_bfloat16(h)) : __half2float(__ushort_as_half(h));
#else
    return bf16 ? tg__bf16_to_float(h) : tg__half_to_float(h);
#endif
}
static inline TG_HD uint16_t tg__pw_float_to_half(float v, bool bf16)
{
#if defined(__CUDA_ARCH__)
    return bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v))
                : __half_as_ushort(__float2half_rn(v));
#else
    return bf16 ? tg__float_to_bf16(v) : tg__float_to_half(v);
#endif
}

/* ---- loads: p points at one element of dtype t ---- */
static inline TG_HD int64_t tg__pw_load_i64(const char *p, tg_dtype t)
{
    switch (t) {
    case TG_BOOL: return *(const uint8_t *)p != 0;
    case TG_UINT8: return *(const uint8_t *)p;
    case TG_INT8: return *(const int8_t *)p;
    case TG_INT16: return *(const tg__pw_raw_i16 *)p;
    case TG_INT32: return *(const tg__pw_raw_i32 *)p;
    case TG_INT64: return *(const tg__pw_raw_i64 *)p;
    case TG_FLOAT16:
        return tg__pw_f64_to_i64(tg__pw_half_to_float(*(const tg__pw_raw_u16 *)p, false));
    case TG_BFLOAT16:
        return tg__pw_f64_to_i64(tg__pw_half_to_float(*(const tg__pw_raw_u16 *)p, true));
    case TG_FLOAT32: return tg__pw_f64_to_i64(*(const tg__pw_raw_f32 *)p);
    case TG_FLOAT64: return tg__pw_f64_to_i64(*(const tg__pw_raw_f64 *)p);
    default: return 0;
    }
}

static inline TG_HD double tg__pw_load_f64(const char *p, tg_dtype t)
{
    switch (t) {
    case TG_FLOAT16: return tg__pw_half_to_float(*(const tg__pw_raw_u16 *)p, false);
    case TG_BFLOAT16: return tg__pw_half_to_float(*(const tg__pw_raw_u16 *)p, true);
    case TG_FLOAT32: return *(const tg__pw_raw_f32 *)p;
    case TG_FLOAT64: return *(const tg__pw_raw_f64 *)p;
    default: return (double)tg__pw_load_i64(p, t);
    }
}

static inline TG_HD float tg__pw_load_f32(const char *p, tg_dtype t)
{
    switch (t) {
    case TG_FLOAT16: return tg__pw_half_to_float(*(const tg__pw_raw_u16 *)p, false);
    case TG_BFLOAT16: return tg__pw_half_to_float(*(const tg__pw_raw_u16 *)p, true);
    case TG_FLOAT32: return *(const tg__pw_raw_f32 *)p;
    default: return (float)tg__pw_load_f64(p, t);
    }
}

/* ---- stores: integers wrap (truncate to the storage width), bool stores v != 0 ---- */
static inline TG_HD void tg__pw_store_i64(char *p, tg_dtype t, int64_t v)
{
    switch (t) {
    case TG_BOOL: *(uint8_t *)p = v != 0; break;
    case TG_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case TG_INT8: *(int8_t *)p = (int8_t)v; break;
    case TG_INT16: *(tg__pw_raw_i16 *)p = (int16_t)v; break;
    case TG_INT32: *(tg__pw_raw_i32 *)p = (int32_t)v; break;
    case TG_INT64: *(tg__pw_raw_i64 *)p = v; break;
    case TG_FLOAT16: *(tg__pw_raw_u16 *)p = tg__pw_float_to_half((float)v, false); break;
    case TG_BFLOAT16: *(tg__pw_raw_u16 *)p = tg__pw_float_to_half((float)v, true); break;
    case TG_FLOAT32: *(tg__pw_raw_f32 *)p = (float)v; break;
    case TG_FLOAT64: *(tg__pw_raw_f64 *)p = (double)v; break;
    default: break;
    }
}

static inline TG_HD void tg__pw_store_f32(char *p, tg_dtype t, float v)
{
    switch (t) {
    case TG_FLOAT16: *(tg__pw_raw_u16 *)p = tg__pw_float_to_half(v, false); break;
    case TG_BFLOAT16: *(tg__pw_raw_u16 *)p = tg__pw_float_to_half(v, true); break;
    case TG_FLOAT32: *(tg__pw_raw_f32 *)p = v; break;
    case TG_FLOAT64: *(tg__pw_raw_f64 *)p = v; break;
    case TG_BOOL: *(uint8_t *)p = v != 0; break;
    default: tg__pw_store_i64(p, t, tg__pw_float_to_int(v, t)); break;
    }
}

/* float16/bfloat16 from double go through float, as c10::Half(double) does. */
static inline TG_HD void tg__pw_store_f64(char *p, tg_dtype t, double v)
{
    switch (t) {
    case TG_FLOAT16:
    case TG_BFLOAT16:
    case TG_FLOAT32: tg__pw_store_f32(p, t, (float)v); break;
    case TG_FLOAT64: *(tg__pw_raw_f64 *)p = v; break;
    case TG_BOOL: *(uint8_t *)p = v != 0; break;
    default: tg__pw_store_i64(p, t, tg__pw_float_to_int(v, t)); break;
    }
}

/* One element of dtype st at src converted to dtype dt at dst, as PyTorch's static_cast
 * chain does: integers stay exact between integer types, int -> float rounds once, floats
 * -> integers truncate (x86 semantics for out-of-range, see tg__pw_float_to_int), anything ->
 * bool is "!= 0" (NaN is true). */
static inline TG_HD void tg__pw_convert(char *dst, tg_dtype dt, const char *src, tg_dtype st)
{
    const tg_pw_kind sk = tg__pw_kind(st);
    if (dt == TG_BOOL) {
        *(uint8_t *)dst =
            sk == TG_PW_I64 ? tg__pw_load_i64(src, st) != 0 : tg__pw_load_f64(src, st) != 0;
        return;
    }
    switch (tg__pw_kind(dt)) {
    case TG_PW_I64:
        tg__pw_store_i64(dst, dt,
                         sk == TG_PW_I64 ? tg__pw_load_i64(src, st)
                                         : tg__pw_float_to_int(tg__pw_load_f64(src, st), dt));
        break;
    case TG_PW_F32:
        if (sk == TG_PW_I64) tg__pw_store_f32(dst, dt, (float)tg__pw_load_i64(src, st));
        else if (sk == TG_PW_F32) tg__pw_store_f32(dst, dt, tg__pw_load_f32(src, st));
        else tg__pw_store_f64(dst, dt, tg__pw_load_f64(src, st));
        break;
    case TG_PW_F64:
        tg__pw_store_f64(
            dst, dt, sk == TG_PW_I64 ? (double)tg__pw_load_i64(src, st) : tg__pw_load_f64(src, st));
        break;
    }
}

/* PyTorch's C++ type names in "value cannot be converted to type uint8_t without overflow". */
static inline const char *tg__pw_cpp_type_name(tg_dtype t)
{
    switch (t) {
    case TG_BOOL: return "bool";
    case TG_UINT8: return "uint8_t";
    case TG_INT8: return "int8_t";
    case TG_INT16: return "int16_t";
    case TG_INT32: return "int";
    case TG_INT64: return "int64_t";
    case TG_FLOAT16: return "at::Half";
    case TG_BFLOAT16: return "at::BFloat16";
    case TG_FLOAT32: return "float";
    case TG_FLOAT64: return "double";
    default: return "?";
    }
}

/* Whether the Scalar v converts to dtype t without overflow (PyTorch's checked_convert):
 * integers must hold v (NaN does not fit), finite floats must stay finite; inf and NaN pass for floats,
 * anything passes for bool. */
static inline bool tg__pw_scalar_fits(double v, tg_dtype t)
{
    double lo, hi;
    switch (t) {
    case TG_BOOL:
    case TG_FLOAT64: return true;
    /* Unsigned types accept negative values that wrap (-1 -> 255) down to -max, as
     * PyTorch's overflows<>() does. */
    case TG_UINT8:
        lo = -255;
        hi = 255;
        break;
    case TG_INT8:
        lo = -128;
        hi = 127;
        break;
    case TG_INT16:
        lo = -32768;
        hi = 32767;
        break;
    case TG_INT32:
        lo = -2147483648.0;
        hi = 2147483647.0;
        break;
    case TG_INT64: return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    case TG_FLOAT16: return !isfinite(v) || fabs(v) <= 65504.0;
    case TG_BFLOAT16:
    case TG_FLOAT32: return !isfinite(v) || fabs(v) <= 3.4028234663852886e38;
    default: return true;
    }
    /* The comparison is on v itself, so 255.5 overflows uint8 as in PyTorch. */
    return v >= lo && v <= hi; /* false for NaN */
}

/* Records PyTorch's overflow error for a Scalar that does not fit; returns -1 then, else 0. */
static inline int tg__pw_check_scalar(const char *op, double v, tg_dtype t)
{
    if (tg__pw_scalar_fits(v, t)) return 0;
    return tg__fail(op, "value cannot be converted to type %s without overflow",
                    tg__pw_cpp_type_name(t));
}

/* Is the Scalar integral (so it promotes like a Python int)? */
static inline bool tg__pw_is_integral_scalar(double v) { return isfinite(v) && v == trunc(v); }

#endif
