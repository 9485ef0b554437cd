/* dtypes: names, sizes, PyTorch's promotion table and casting rule, element conversion
 * (load/store through double or int64) and float16/bfloat16 bit conversions. */
#include "core/rt_private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

tg_dtype tg__default_dtype_value = TG_FLOAT32;

const uint8_t tg__dtype_sizes[TG_NUM_DTYPES] = {
    [TG_BOOL] = 1,  [TG_UINT8] = 1,   [TG_INT8] = 1,     [TG_INT16] = 2,   [TG_INT32] = 4,
    [TG_INT64] = 8, [TG_FLOAT16] = 2, [TG_BFLOAT16] = 2, [TG_FLOAT32] = 4, [TG_FLOAT64] = 8,
};

static const char *const dtype_names[TG_NUM_DTYPES] = {
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
};

static const char *const torch_names[TG_NUM_DTYPES] = {
    "Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float", "Double",
};

static bool valid(tg_dtype t) { return t >= 0 && t < TG_NUM_DTYPES; }

const char *tg_dtype_name(tg_dtype t) { return valid(t) ? dtype_names[t] : "none"; }
const char *tg__dtype_torch_name(tg_dtype t) { return valid(t) ? torch_names[t] : "Undefined"; }
size_t tg_dtype_size(tg_dtype t) { return valid(t) ? tg__dtype_sizes[t] : 0; }
bool tg_dtype_is_floating(tg_dtype t) { return tg__is_float(t); }

bool tg_dtype_is_integral(tg_dtype t, bool include_bool)
{
    if (t == TG_BOOL) return include_bool;
    return t >= TG_UINT8 && t <= TG_INT64;
}

tg_dtype tg_get_default_dtype(void)
{
    return __atomic_load_n(&tg__default_dtype_value, __ATOMIC_RELAXED);
}

tg_dtype tg_set_default_dtype(tg_dtype t)
{
    if (!tg__is_float(t)) {
        tg__error("set_default_dtype",
                  "only floating-point types are supported as the default "
                  "type, got %s",
                  tg_dtype_name(t));
        return TG_DTYPE_NONE;
    }
    return __atomic_exchange_n(&tg__default_dtype_value, t, __ATOMIC_RELAXED);
}

/* PyTorch's promoteTypes (c10/core/ScalarType.h), restricted to our dtypes. Rows and columns
 * are in tg_dtype order: b1 u1 i1 i2 i4 i8 f2 bf f4 f8. Facts worth remembering: uint8 with
 * int8 gives int16; any integer with float16 or bfloat16 keeps the half type; float16 with
 * bfloat16 gives float32; bool is below everything. */
#define b1 TG_BOOL
#define u1 TG_UINT8
#define i1 TG_INT8
#define i2 TG_INT16
#define i4 TG_INT32
#define i8 TG_INT64
#define f2 TG_FLOAT16
#define bf TG_BFLOAT16
#define f4 TG_FLOAT32
#define f8 TG_FLOAT64
static const int8_t promote_table[TG_NUM_DTYPES][TG_NUM_DTYPES] = {
    /*        b1  u1  i1  i2  i4  i8  f2  bf  f4  f8 */
    /* b1 */ { b1, u1, i1, i2, i4, i8, f2, bf, f4, f8 },
    /* u1 */ { u1, u1, i2, i2, i4, i8, f2, bf, f4, f8 },
    /* i1 */ { i1, i2, i1, i2, i4, i8, f2, bf, f4, f8 },
    /* i2 */ { i2, i2, i2, i2, i4, i8, f2, bf, f4, f8 },
    /* i4 */ { i4, i4, i4, i4, i4, i8, f2, bf, f4, f8 },
    /* i8 */ { i8, i8, i8, i8, i8, i8, f2, bf, f4, f8 },
    /* f2 */ { f2, f2, f2, f2, f2, f2, f2, f4, f4, f8 },
    /* bf */ { bf, bf, bf, bf, bf, bf, f4, bf, f4, f8 },
    /* f4 */ { f4, f4, f4, f4, f4, f4, f4, f4, f4, f8 },
    /* f8 */ { f8, f8, f8, f8, f8, f8, f8, f8, f8, f8 },
};
#undef b1
#undef u1
#undef i1
#undef i2
#undef i4
#undef i8
#undef f2
#undef bf
#undef f4
#undef f8

tg_dtype tg_promote_types(tg_dtype a, tg_dtype b)
{
    if (!valid(a) || !valid(b)) return TG_DTYPE_NONE;
    return (tg_dtype)promote_table[a][b];
}

/* PyTorch's canCast: a float result cannot go into an integral output, nor a non-bool one
 * into a bool output; everything else (narrowing included) is allowed. */
bool tg_can_cast(tg_dtype from, tg_dtype to)
{
    if (tg__is_float(from) && tg_dtype_is_integral(to, true)) return false;
    if (from != TG_BOOL && to == TG_BOOL) return false;
    return true;
}

/* ---- float16 / bfloat16 ---- */

/* A float's bits and back (memcpy: no aliasing rule is broken, and compilers emit a move). */
static inline uint32_t float_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return x;
}
static inline float bits_float(uint32_t x)
{
    float f;
    memcpy(&f, &x, 4);
    return f;
}

float tg__half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf / nan */
    } else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    return bits_float(bits);
}

uint16_t tg__float_to_half(float f)
{
    uint32_t x = float_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or nan (keep quiet nan) */
        return sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0);
    if (ax >= 0x477ff000u) return sign | 0x7c00; /* rounds above 65504: inf */
    if (ax < 0x38800000u) {                      /* result subnormal or zero */
        if (ax < 0x33000000u) return sign;       /* below half the min subnormal */
        uint32_t e = ax >> 23, man = (ax & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e; /* 14..24 */
        uint32_t r = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return sign | (uint16_t)r;
    }
    uint32_t r = ax - 0x38000000u; /* rebias exponent 127 -> 15 */
    uint32_t rem = r & 0x1fff;
    r >>= 13;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return sign | (uint16_t)r;
}

float tg__bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    return bits_float(bits);
}

uint16_t tg__float_to_bf16(float f)
{
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet nan */
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ---- element load / store ---- */

double tg__load_double(const void *p, tg_dtype t)
{
    switch (t) {
    case TG_BOOL: return *(const bool *)p ? 1.0 : 0.0;
    case TG_UINT8: return *(const uint8_t *)p;
    case TG_INT8: return *(const int8_t *)p;
    case TG_INT16: return *(const int16_t *)p;
    case TG_INT32: return *(const int32_t *)p;
    case TG_INT64: return (double)*(const int64_t *)p;
    case TG_FLOAT16: return tg__half_to_float(*(const uint16_t *)p);
    case TG_BFLOAT16: return tg__bf16_to_float(*(const uint16_t *)p);
    case TG_FLOAT32: return *(const float *)p;
    case TG_FLOAT64: return *(const double *)p;
    default: return 0;
    }
}

int64_t tg__load_int64(const void *p, tg_dtype t)
{
    switch (t) {
    case TG_BOOL: return *(const bool *)p;
    case TG_UINT8: return *(const uint8_t *)p;
    case TG_INT8: return *(const int8_t *)p;
    case TG_INT16: return *(const int16_t *)p;
    case TG_INT32: return *(const int32_t *)p;
    case TG_INT64: return *(const int64_t *)p;
    default: {
        double d = tg__load_double(p, t);
        /* Out-of-range and nan conversions are undefined in C; saturate like x86 does for
         * int64 (INT64_MIN for nan and overflow). */
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
        return (int64_t)d;
    }
    }
}

/* Integers narrower than 64 bits take the low bits of the int64 value (two's complement
 * wrap), which is what PyTorch produces on x86 for e.g. -1.0 -> uint8 (255). */
void tg__store_int64(void *p, tg_dtype t, int64_t v)
{
    switch (t) {
    case TG_BOOL: *(bool *)p = v != 0; break;
    case TG_UINT8: *(uint8_t *)p = (uint8_t)(uint64_t)v; break;
    case TG_INT8: *(int8_t *)p = (int8_t)(uint8_t)(uint64_t)v; break;
    case TG_INT16: *(int16_t *)p = (int16_t)(uint16_t)(uint64_t)v; break;
    case TG_INT32: *(int32_t *)p = (int32_t)(uint32_t)(uint64_t)v; break;
    case TG_INT64: *(int64_t *)p = v; break;
    default: tg__store_double(p, t, (double)v); break;
    }
}

void tg__store_double(void *p, tg_dtype t, double v)
{
    switch (t) {
    case TG_BOOL: *(bool *)p = v != 0; break;
    case TG_FLOAT16: *(uint16_t *)p = tg__float_to_half((float)v); break;
    case TG_BFLOAT16: *(uint16_t *)p = tg__float_to_bf16((float)v); break;
    case TG_FLOAT32: *(float *)p = (float)v; break;
    case TG_FLOAT64: *(double *)p = v; break;
    default: {
        int64_t i =
            (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (int64_t)v : INT64_MIN;
        tg__store_int64(p, t, i);
        break;
    }
    }
}

char *tg__shape_str(char *buf, size_t cap, const int64_t *sizes, int64_t ndim)
{
    size_t n = 0;
    if (cap == 0) return buf;
    buf[0] = 0;
    n += (size_t)snprintf(buf + n, cap - n, "[");
    for (int64_t i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, i ? ", %lld" : "%lld", (long long)sizes[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}
