/* The project's own float32 math, shared by every loop that needs it: the bit casts, exp, log,
 * tanh and sigmoid in float32 (the scalar functions of those operators, kernels/common/ufunc/
 * unary.h; the vector forms of kernels/cpu/exp_f32_vec.h repeat them operation for operation,
 * so every CPU capability gives their bits; softmax, attention and elu use this exp too).
 *
 * Everything here must compile as C11 with gcc and as C++ with nvcc (device and host), so:
 * no statement expressions, no VLAs, no libc beyond <math.h>/<stdbool.h>/<stdint.h>/<string.h>. */
#ifndef TG_POINTWISE_SCALAR_H
#define TG_POINTWISE_SCALAR_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tg_hd.h"

/* ------------------------------------------------------------------ bit casts */
static inline TG_HD uint32_t tg__pw_f32_bits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

static inline TG_HD float tg__pw_f32_from_bits(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* ------------------------------------------------------------------ exp, float32
 * e^x = 2^n * e^r with n = round(x / ln 2) and r = x - n ln 2 in [-ln2/2, ln2/2] (Cody-Waite:
 * ln 2 split into a part with few mantissa bits, so n * hi is exact, and a correction). e^r
 * is Cephes' degree-6 polynomial (relative error < 1.2e-7 on the interval). 2^n is built
 * from exponent bits in two halves, 2^(n/2) * 2^(n - n/2), so results in the subnormal range
 * (x down to -103.97) are rounded once, like expf's. Beyond the range the result is inf or 0;
 * NaN propagates. Branch-free: every special case is a select, so loops over it vectorise.
 * Measured against glibc's expf over [-104, 89] (tests/ops/test_pointwise.c): at most 1 ulp
 * for normal results, 1 ulp of the subnormal grid below. */
static inline TG_HD float tg__pw_exp_f32(float x)
{
    const float hi_limit = 88.72283935546875f;   /* largest x with e^x < FLT_MAX */
    const float lo_limit = -103.97283172607422f; /* smallest x with e^x rounding above 0 */
    const float log2e = 1.44269504088896341f;
    const float ln2_hi = 0.693359375f; /* 8 significant bits: n * ln2_hi exact */
    const float ln2_lo = -2.12194440e-4f;
    const float round_magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to integer */

    /* Clamp first so that n stays small (and NaN does not reach the integer conversion). */
    float xc = x;
    xc = xc > hi_limit ? hi_limit : xc;
    xc = xc < lo_limit ? lo_limit : xc;
    xc = xc == xc ? xc : 0.0f;

    float t = xc * log2e + round_magic;
    int32_t n = (int32_t)(tg__pw_f32_bits(t) - tg__pw_f32_bits(round_magic));
    float nf = t - round_magic;
    float r = xc - nf * ln2_hi;
    r = r - nf * ln2_lo;

    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;

    int32_t n1 = n / 2; /* n in [-150, 128]: both halves are normal exponents */
    int32_t n2 = n - n1;
    float s1 = tg__pw_f32_from_bits((uint32_t)(n1 + 127) << 23);
    float s2 = tg__pw_f32_from_bits((uint32_t)(n2 + 127) << 23);
    float y = (p * s1) * s2;

    y = x > hi_limit ? INFINITY : y;
    y = x < lo_limit ? 0.0f : y;
    y = x == x ? y : x + x; /* NaN in, the same (quiet) NaN out */
    return y;
}

/* ------------------------------------------------------------------ log and tanh, float32
 * Written out (rather than logf/tanhf) for the same reason as exp: the CPU's vector forms
 * (kernels/cpu/exp_f32_vec.h) repeat these operations one for one, so every capability gives
 * the same bits. The device keeps its own logf/tanhf (nvcc would fuse the multiply-adds
 * anyway). Bounds measured in tests/ops/test_vecmath.c against double.
 *
 * log: x = 2^e * m with m in [sqrt(1/2), sqrt(2)) (the exponent split at sqrt(1/2)'s bits, so
 * f = m - 1 is exact and |f| <= 0.4143). With s = f / (2 + f), log(1 + f) = 2 atanh(s) =
 * 2s + s R(z), z = s^2, R = 2z/3 + 2z^2/5 + 2z^3/7 + 2z^4/9 (the series; the next term is
 * below 2^-28 for z <= 0.0295); and since 2s = f - s f with s f (1 + f/2) = f^2/2,
 * log(1 + f) = f - f^2/2 + s (f^2/2 + R): the large part f - f^2/2 needs no division.
 * e ln2 is added in two pieces as in exp (e * ln2_hi exact). Subnormals are scaled by 2^25
 * first. x < 0 and -inf give NaN, +-0 gives -inf, +inf gives +inf, NaN propagates. */
static inline TG_HD float tg__pw_log_f32(float x)
{
#if defined(__CUDA_ARCH__)
    return logf(x);
#else
    const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    const uint32_t sqrt_half = 0x3f3504f3; /* bits of sqrt(1/2), rounded */
    bool sub = x < 1.17549435e-38f;        /* subnormal (or zero or negative: replaced below) */
    float xs = sub ? x * 33554432.0f : x;  /* 2^25: exact */
    /* Unsigned, so that negative inputs (sign bit set) wrap instead of overflowing; for the
     * inputs that get here t, read as signed, lies in [-0x3eb504f3, 0x404afb0c]. */
    uint32_t t = tg__pw_f32_bits(xs) - sqrt_half;
    int32_t e = ((int32_t)t >> 23) - (sub ? 25 : 0); /* arithmetic shift: floor */
    float m = tg__pw_f32_from_bits((t & 0x007fffffu) + sqrt_half);
    float f = m - 1.0f;
    float s = f / (2.0f + f);
    float z = s * s;
    float r = 2.2222222e-1f;
    r = r * z + 2.8571429e-1f;
    r = r * z + 4.0000001e-1f;
    r = r * z + 6.6666669e-1f;
    r = r * z;
    float hfsq = 0.5f * f * f;
    float ef = (float)e;
    float y = ef * ln2_hi + ((f - hfsq) + (s * (hfsq + r) + ef * ln2_lo));

    y = x == INFINITY ? x : y;
    y = x < 0.0f ? NAN : y;
    y = x == 0.0f ? -INFINITY : y;
    y = x == x ? y : x + x;
    return y;
#endif
}

/* tanh: for |x| < 0.625, x + x z P(z) with z = x^2 and P a degree-4 least-squares fit on
 * Chebyshev nodes of (tanh(x)/x - 1)/z (relative error 7e-9 with these float coefficients);
 * above, 1 - 2 / (e^(2|x|) + 1) with the sign put back (e^(2|x|) overflowing to inf gives
 * exactly 1; from |x| ~ 9.01 on the result rounds to 1 anyway). +-0 and subnormals come back
 * unchanged (z underflows to 0; zero is selected so -0 keeps its sign), NaN propagates. */
static inline TG_HD float tg__pw_tanh_f32(float x)
{
#if defined(__CUDA_ARCH__)
    return tanhf(x);
#else
    float a = fabsf(x);
    float z = x * x;
    float p = -5.7041571e-3f;
    p = p * z + 2.0637978e-2f;
    p = p * z + -5.3739198e-2f;
    p = p * z + 1.3331433e-1f;
    p = p * z + -3.3333281e-1f;
    float small = x + x * (z * p);
    small = x == 0.0f ? x : small; /* -0 + +0 would lose the sign of -0 */
    float big = 1.0f - 2.0f / (tg__pw_exp_f32(a + a) + 1.0f);
    big = copysignf(big, x);
    return a < 0.625f ? small : big;
#endif
}
/* a * b rounded on its own: nvcc would fuse it into a following add (an FMA), gcc in ISO C mode
 * does not, and the CPU and the device must agree to the bit. */
static inline TG_HD float tg__pw_mul_rn_f32(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
static inline TG_HD double tg__pw_mul_rn_f64(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

/* 1 / (1 + e^-x): e^-x overflowing to inf gives exactly 0. */
static inline TG_HD float tg__pw_sigmoid_f32(float x) { return 1.0f / (1.0f + tg__pw_exp_f32(-x)); }

#endif
