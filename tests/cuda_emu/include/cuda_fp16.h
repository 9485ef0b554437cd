/* cuda-emu: float16 as the CUDA headers present it to device code (__half, __half2float,
 * __float2half_rn), on the CPU. Conversions round to nearest even, like the hardware. */
#ifndef TG_EMU_CUDA_FP16_H
#define TG_EMU_CUDA_FP16_H

#include <stdint.h>
#include <string.h>

struct __half_raw {
    unsigned short x;
};

static inline float tg_emu_half_bits_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf / NaN */
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13); /* normal: rebias 15 -> 127 */
    } else if (man == 0) {
        bits = sign; /* zero */
    } else {         /* subnormal: normalise */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while (!(man & 0x400u));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t tg_emu_float_to_half_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0); /* inf, NaN */
    if (ax >= 0x477ff000u) return sign | 0x7c00u; /* rounds past 65504: inf */
    if (ax < 0x38800000u) {                       /* below 2^-14: subnormal */
        if (ax < 0x33000000u) return sign;        /* below half the smallest */
        uint32_t e = ax >> 23, man = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* value / 2^-24 = man * 2^(e - 126); 14..24 */
        uint32_t r = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return sign | (uint16_t)r;
    }
    uint32_t r = ax - 0x38000000u; /* rebias 127 -> 15 */
    uint32_t out = r >> 13, rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (out & 1u))) out++;
    return sign | (uint16_t)out;
}

#ifdef __cplusplus
struct __half {
    unsigned short __x;
    __half() = default;
    __half(__half_raw r) : __x(r.x) {}
    __half(float f) : __x(tg_emu_float_to_half_bits(f)) {}
    __half(double d) : __x(tg_emu_float_to_half_bits((float)d)) {}
    __half(int v) : __x(tg_emu_float_to_half_bits((float)v)) {}
    __half(long long v) : __x(tg_emu_float_to_half_bits((float)v)) {}
    __half(long v) : __x(tg_emu_float_to_half_bits((float)v)) {}
    __half(unsigned v) : __x(tg_emu_float_to_half_bits((float)v)) {}
    operator float() const { return tg_emu_half_bits_to_float(__x); }
};

static inline float __half2float(__half h) { return tg_emu_half_bits_to_float(h.__x); }
static inline __half __float2half_rn(float f)
{
    __half_raw r;
    r.x = tg_emu_float_to_half_bits(f);
    return __half(r);
}
static inline __half __float2half(float f) { return __float2half_rn(f); }
#endif

#endif
