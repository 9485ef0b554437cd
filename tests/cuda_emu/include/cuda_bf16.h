/* cuda-emu: bfloat16 as the CUDA headers present it to device code (__nv_bfloat16,
 * __bfloat162float, __float2bfloat16_rn), on the CPU; round to nearest even, NaN kept quiet. */
#ifndef TG_EMU_CUDA_BF16_H
#define TG_EMU_CUDA_BF16_H

#include <stdint.h>
#include <string.h>

struct __nv_bfloat16_raw {
    unsigned short x;
};

static inline float tg_emu_bf16_bits_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t tg_emu_float_to_bf16_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* NaN */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#ifdef __cplusplus
struct __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    __nv_bfloat16(__nv_bfloat16_raw r) : __x(r.x) {}
    __nv_bfloat16(float f) : __x(tg_emu_float_to_bf16_bits(f)) {}
    __nv_bfloat16(double d) : __x(tg_emu_float_to_bf16_bits((float)d)) {}
    __nv_bfloat16(int v) : __x(tg_emu_float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(long long v) : __x(tg_emu_float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(long v) : __x(tg_emu_float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(unsigned v) : __x(tg_emu_float_to_bf16_bits((float)v)) {}
    operator float() const { return tg_emu_bf16_bits_to_float(__x); }
};

static inline float __bfloat162float(__nv_bfloat16 h) { return tg_emu_bf16_bits_to_float(h.__x); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    __nv_bfloat16_raw r;
    r.x = tg_emu_float_to_bf16_bits(f);
    return __nv_bfloat16(r);
}
static inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }
#endif

#endif
