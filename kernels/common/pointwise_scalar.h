/* The scalar functions of the pointwise operators: one small static inline function per
 * operator and compute type, shared by every loop that applies it: the CPU reference and fast
 * paths (kernels/cpu/binary.c, compare.c, ternary.c, unary.c, nn.c) and the CUDA functors
 * (the .cu files of kernels/cuda, through tg_cuda.cuh), so both backends compute the same
 * thing. TG_PW makes them host and device functions under nvcc (pointwise_convert.h uses it
 * too).
 *
 * Compute types follow PyTorch: float16, bfloat16 and float32 compute in float (_f32
 * functions; the loops widen and round), float64 in double (_f64), and every integral dtype
 * and bool in int64_t (_i64) with two's-complement wrap-around, the loops truncating to the
 * storage type on store (bool stores v != 0). Wrap-around is done in uint64_t so no signed
 * overflow (undefined behaviour in C) ever happens.
 *
 * Everything here must compile as C11 with gcc and as C++ with nvcc (device and host), so:
 * no statement expressions, no VLAs, no libc beyond <math.h>/<stdbool.h>/<stdint.h>/<string.h>. */
#ifndef TG_POINTWISE_SCALAR_H
#define TG_POINTWISE_SCALAR_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define TG_PW static inline __host__ __device__
#else
#define TG_PW static inline
#endif

/* ------------------------------------------------------------------ bit casts */
TG_PW uint32_t tg__pw_f32_bits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

TG_PW float tg__pw_f32_from_bits(uint32_t u)
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
TG_PW float tg__pw_exp_f32(float x)
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

TG_PW double tg__pw_exp_f64(double x) { return exp(x); }

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
TG_PW float tg__pw_log_f32(float x)
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
TG_PW float tg__pw_tanh_f32(float x)
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

/* ------------------------------------------------------------------ binary arithmetic */
/* add/sub: a + alpha * b, a - alpha * b (alpha is 1 for the plain operators). On the device the
 * product and the sum are rounded separately (_rn intrinsics), as gcc does here in ISO C mode:
 * nvcc would otherwise fuse them into one multiply-add and differ from the CPU in the last bit
 * (or more, when a and alpha * b nearly cancel). */
#if defined(__CUDA_ARCH__)
TG_PW float tg__pw_add_f32(float a, float b, float alpha)
{
    return __fadd_rn(a, __fmul_rn(alpha, b));
}
TG_PW double tg__pw_add_f64(double a, double b, double alpha)
{
    return __dadd_rn(a, __dmul_rn(alpha, b));
}
#else
TG_PW float tg__pw_add_f32(float a, float b, float alpha) { return a + alpha * b; }
TG_PW double tg__pw_add_f64(double a, double b, double alpha) { return a + alpha * b; }
#endif
TG_PW int64_t tg__pw_add_i64(int64_t a, int64_t b, int64_t alpha)
{
    return (int64_t)((uint64_t)a + (uint64_t)alpha * (uint64_t)b);
}

#if defined(__CUDA_ARCH__)
TG_PW float tg__pw_sub_f32(float a, float b, float alpha)
{
    return __fsub_rn(a, __fmul_rn(alpha, b));
}
TG_PW double tg__pw_sub_f64(double a, double b, double alpha)
{
    return __dsub_rn(a, __dmul_rn(alpha, b));
}
#else
TG_PW float tg__pw_sub_f32(float a, float b, float alpha) { return a - alpha * b; }
TG_PW double tg__pw_sub_f64(double a, double b, double alpha) { return a - alpha * b; }
#endif
TG_PW int64_t tg__pw_sub_i64(int64_t a, int64_t b, int64_t alpha)
{
    return (int64_t)((uint64_t)a - (uint64_t)alpha * (uint64_t)b);
}

/* The remaining binary functions take the same (a, b, alpha) signature so that one loop
 * shape serves them all; alpha is ignored. */
TG_PW float tg__pw_mul_f32(float a, float b, float alpha)
{
    (void)alpha;
    return a * b;
}
TG_PW double tg__pw_mul_f64(double a, double b, double alpha)
{
    (void)alpha;
    return a * b;
}
TG_PW int64_t tg__pw_mul_i64(int64_t a, int64_t b, int64_t alpha)
{
    (void)alpha;
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* True division (integers never get here: the iterator promotes them to float). */
TG_PW float tg__pw_div_f32(float a, float b, float alpha)
{
    (void)alpha;
    return a / b;
}
TG_PW double tg__pw_div_f64(double a, double b, double alpha)
{
    (void)alpha;
    return a / b;
}

/* rounding_mode="trunc". Integer callers check b != 0 first (PyTorch: "ZeroDivisionError");
 * INT64_MIN / -1 wraps instead of trapping. */
TG_PW float tg__pw_div_trunc_f32(float a, float b, float alpha)
{
    (void)alpha;
    return truncf(a / b);
}
TG_PW double tg__pw_div_trunc_f64(double a, double b, double alpha)
{
    (void)alpha;
    return trunc(a / b);
}
TG_PW int64_t tg__pw_div_trunc_i64(int64_t a, int64_t b, int64_t alpha)
{
    (void)alpha;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    return a / b;
}

/* rounding_mode="floor": Python's floor division. For floats this is Python's algorithm
 * (from the remainder, not floor(a / b)), so 1.0 // 0.1 == 9.0 as in Python and PyTorch;
 * division by zero gives the IEEE result of a / b. */
TG_PW double tg__pw_div_floor_f64(double a, double b, double alpha)
{
    (void)alpha;
    if (b == 0) return a / b;
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return copysign(0.0, a / b);
    double floordiv = floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    return floordiv;
}

TG_PW float tg__pw_div_floor_f32(float a, float b, float alpha)
{
    (void)alpha;
    if (b == 0) return a / b;
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0f;
    if (div == 0) return copysignf(0.0f, a / b);
    float floordiv = floorf(div);
    if (div - floordiv > 0.5f) floordiv += 1.0f;
    return floordiv;
}

TG_PW int64_t tg__pw_div_floor_i64(int64_t a, int64_t b, int64_t alpha)
{
    (void)alpha;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}

/* pow. Integers: exact square-and-multiply with wrap-around; a negative exponent gives 1 for
 * base 1, +-1 for base -1 and 0 otherwise (PyTorch's tensor^tensor rule; the Scalar overload
 * rejects negative integer exponents before getting here). */
TG_PW float tg__pw_pow_f32(float a, float b, float alpha)
{
    (void)alpha;
    return powf(a, b);
}
TG_PW double tg__pw_pow_f64(double a, double b, double alpha)
{
    (void)alpha;
    return pow(a, b);
}
TG_PW int64_t tg__pw_pow_i64(int64_t a, int64_t b, int64_t alpha)
{
    (void)alpha;
    if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b & 1) ? -1 : 1;
        return 0;
    }
    uint64_t result = 1, base = (uint64_t)a;
    uint64_t e = (uint64_t)b;
    while (e) {
        if (e & 1) result *= base;
        base *= base;
        e >>= 1;
    }
    return (int64_t)result;
}

/* maximum/minimum propagate NaN from either side (unlike fmax). */
TG_PW float tg__pw_maximum_f32(float a, float b, float alpha)
{
    (void)alpha;
    float m = a < b ? b : a;
    return (a != a || b != b) ? a + b : m;
}
TG_PW double tg__pw_maximum_f64(double a, double b, double alpha)
{
    (void)alpha;
    double m = a < b ? b : a;
    return (a != a || b != b) ? a + b : m;
}
TG_PW int64_t tg__pw_maximum_i64(int64_t a, int64_t b, int64_t alpha)
{
    (void)alpha;
    return a < b ? b : a;
}

TG_PW float tg__pw_minimum_f32(float a, float b, float alpha)
{
    (void)alpha;
    float m = b < a ? b : a;
    return (a != a || b != b) ? a + b : m;
}
TG_PW double tg__pw_minimum_f64(double a, double b, double alpha)
{
    (void)alpha;
    double m = b < a ? b : a;
    return (a != a || b != b) ? a + b : m;
}
TG_PW int64_t tg__pw_minimum_i64(int64_t a, int64_t b, int64_t alpha)
{
    (void)alpha;
    return b < a ? b : a;
}

/* ------------------------------------------------------------------ unary */
TG_PW float tg__pw_neg_f32(float x) { return -x; }
TG_PW double tg__pw_neg_f64(double x) { return -x; }
TG_PW int64_t tg__pw_neg_i64(int64_t x) { return (int64_t)(0 - (uint64_t)x); }

TG_PW float tg__pw_abs_f32(float x) { return fabsf(x); }
TG_PW double tg__pw_abs_f64(double x) { return fabs(x); }
TG_PW int64_t tg__pw_abs_i64(int64_t x) { return x < 0 ? (int64_t)(0 - (uint64_t)x) : x; }

/* relu keeps NaN (NaN < 0 is false). */
TG_PW float tg__pw_relu_f32(float x) { return x < 0 ? 0.0f : x; }
TG_PW double tg__pw_relu_f64(double x) { return x < 0 ? 0.0 : x; }
TG_PW int64_t tg__pw_relu_i64(int64_t x) { return x < 0 ? 0 : x; }

TG_PW double tg__pw_log_f64(double x) { return log(x); }
TG_PW float tg__pw_sqrt_f32(float x) { return sqrtf(x); }
TG_PW double tg__pw_sqrt_f64(double x) { return sqrt(x); }
TG_PW float tg__pw_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }
TG_PW double tg__pw_rsqrt_f64(double x) { return 1.0 / sqrt(x); }
TG_PW float tg__pw_sin_f32(float x) { return sinf(x); }
TG_PW double tg__pw_sin_f64(double x) { return sin(x); }
TG_PW float tg__pw_cos_f32(float x) { return cosf(x); }
TG_PW double tg__pw_cos_f64(double x) { return cos(x); }
TG_PW double tg__pw_tanh_f64(double x) { return tanh(x); }
/* 1 / (1 + e^-x): e^-x overflowing to inf gives exactly 0. */
TG_PW float tg__pw_sigmoid_f32(float x) { return 1.0f / (1.0f + tg__pw_exp_f32(-x)); }
TG_PW double tg__pw_sigmoid_f64(double x) { return 1.0 / (1.0 + exp(-x)); }

/* ------------------------------------------------------------------ comparisons
 * eq, ne, lt, le, gt, ge. One function serves every compute type: the caller compares a and b
 * (lt = a < b, eq = a == b, gt = a > b; all three false when either is NaN, so NaN compares
 * unequal to everything) and this picks the operator's answer. With op a constant, as in the
 * CPU's fast loops, the compiler keeps only the comparisons op needs. */
typedef enum tg_pw_cmp_op {
    TG_PW_EQ,
    TG_PW_NE,
    TG_PW_LT,
    TG_PW_LE,
    TG_PW_GT,
    TG_PW_GE
} tg_pw_cmp_op;

TG_PW bool tg__pw_compare(tg_pw_cmp_op op, bool lt, bool eq, bool gt)
{
    switch (op) {
    case TG_PW_EQ: return eq;
    case TG_PW_NE: return !eq;
    case TG_PW_LT: return lt;
    case TG_PW_LE: return lt || eq;
    case TG_PW_GT: return gt;
    default: return gt || eq;
    }
}

/* ------------------------------------------------------------------ clamp
 * min(max(x, lo), hi) with NaN propagated from any operand (PyTorch's clamp); lo > hi gives hi. */
TG_PW float tg__pw_clamp_f32(float x, float lo, float hi)
{
    return tg__pw_minimum_f32(tg__pw_maximum_f32(x, lo, 0), hi, 0);
}
TG_PW double tg__pw_clamp_f64(double x, double lo, double hi)
{
    return tg__pw_minimum_f64(tg__pw_maximum_f64(x, lo, 0), hi, 0);
}
TG_PW int64_t tg__pw_clamp_i64(int64_t x, int64_t lo, int64_t hi)
{
    int64_t m = x < lo ? lo : x;
    return hi < m ? hi : m;
}

/* ------------------------------------------------------------------ activations
 * leaky_relu, hardswish, hardsigmoid, elu and the backward operators of those and of hardtanh
 * (kernels/cpu/activation.c, kernels/cuda/activation.cu). Each is the scalar definition of
 * PyTorch 1.13's CPU kernel (the lambda its vectorised loop is meant to match; its CUDA kernel
 * computes the same), written in the compute type: Scalar parameters arrive converted to it
 * (float for float16, bfloat16 and float32, as PyTorch's CUDA kernels use opmath). Where
 * PyTorch's AVX2 loop differs from its own scalar lambda (NaN inputs of the backward
 * operators, hardswish_backward at exactly 3), these follow the scalar lambda. */

/* self > 0 ? self : self * negative_slope. NaN stays NaN, -0 stays -0 (-0 * slope). */
TG_PW float tg__pw_leaky_relu_f32(float x, float slope) { return x > 0.0f ? x : x * slope; }
TG_PW double tg__pw_leaky_relu_f64(double x, double slope) { return x > 0.0 ? x : x * slope; }

/* self > 0 ? grad : grad * negative_slope (self is leaky_relu's input or, with a slope >= 0,
 * its result: both have the input's sign). NaN in self takes the slope. */
TG_PW float tg__pw_leaky_relu_backward_f32(float g, float x, float slope)
{
    return x > 0.0f ? g : g * slope;
}
TG_PW double tg__pw_leaky_relu_backward_f64(double g, double x, double slope)
{
    return x > 0.0 ? g : g * slope;
}

/* hardtanh's gradient: 0 at and beyond the bounds, grad between them (and for NaN). */
TG_PW float tg__pw_hardtanh_backward_f32(float g, float x, float lo, float hi)
{
    return (x <= lo || x >= hi) ? 0.0f : g;
}
TG_PW double tg__pw_hardtanh_backward_f64(double g, double x, double lo, double hi)
{
    return (x <= lo || x >= hi) ? 0.0 : g;
}

/* min(max(x + 3, 0), 6) with std::max/std::min's rule (the first argument when the
 * comparison is false), so NaN propagates. */
TG_PW float tg__pw_relu6_of_shift_f32(float x)
{
    float t = x + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    return 6.0f < t ? 6.0f : t;
}
TG_PW double tg__pw_relu6_of_shift_f64(double x)
{
    double t = x + 3.0;
    t = t < 0.0 ? 0.0 : t;
    return 6.0 < t ? 6.0 : t;
}

/* hardswish: x * min(max(x + 3, 0), 6) / 6, multiplied first (-inf gives NaN: -inf * 0). */
TG_PW float tg__pw_hardswish_f32(float x) { return x * tg__pw_relu6_of_shift_f32(x) / 6.0f; }
TG_PW double tg__pw_hardswish_f64(double x) { return x * tg__pw_relu6_of_shift_f64(x) / 6.0; }

/* hardswish_backward: 0 below -3, grad * (x / 3 + 0.5) on [-3, 3] (so -0.5 grad at -3 and
 * 1.5 grad at 3), grad above 3 and for NaN. */
TG_PW float tg__pw_hardswish_backward_f32(float g, float x)
{
    return x < -3.0f ? 0.0f : x <= 3.0f ? g * (x / 3.0f + 0.5f) : g;
}
TG_PW double tg__pw_hardswish_backward_f64(double g, double x)
{
    return x < -3.0 ? 0.0 : x <= 3.0 ? g * (x / 3.0 + 0.5) : g;
}

/* hardsigmoid: min(max(x + 3, 0), 6) / 6. */
TG_PW float tg__pw_hardsigmoid_f32(float x) { return tg__pw_relu6_of_shift_f32(x) / 6.0f; }
TG_PW double tg__pw_hardsigmoid_f64(double x) { return tg__pw_relu6_of_shift_f64(x) / 6.0; }

/* hardsigmoid_backward: grad / 6 strictly inside (-3, 3), else 0 (NaN too). PyTorch's
 * constant is scalar_t(1.0f / 6.0f): 1/6 rounded to float, for float64 as well. */
TG_PW float tg__pw_hardsigmoid_backward_f32(float g, float x)
{
    return (x > -3.0f && x < 3.0f) ? g * (1.0f / 6.0f) : 0.0f;
}
TG_PW double tg__pw_hardsigmoid_backward_f64(double g, double x)
{
    return (x > -3.0 && x < 3.0) ? g * (double)(1.0f / 6.0f) : 0.0;
}

/* elu with negcoef = alpha * scale (computed in the compute type), poscoef = scale,
 * negiptcoef = input_scale: x <= 0 ? (exp(x * negiptcoef) - 1) * negcoef : x * poscoef.
 * PyTorch 1.13's CPU kernel subtracts 1 from exp (no expm1); so does this. float32's exp is
 * tg__pw_exp_f32 on both backends. */
TG_PW float tg__pw_elu_f32(float x, float negcoef, float poscoef, float negiptcoef)
{
    return x <= 0.0f ? (tg__pw_exp_f32(x * negiptcoef) - 1.0f) * negcoef : x * poscoef;
}
TG_PW double tg__pw_elu_f64(double x, double negcoef, double poscoef, double negiptcoef)
{
    return x <= 0.0 ? (exp(x * negiptcoef) - 1.0) * negcoef : x * poscoef;
}

/* elu_backward, b = self_or_result: where b <= 0, grad * negiptcoef * (b + negcoef) from the
 * result, grad * negiptcoef * negcoef * exp(b * negiptcoef) from the input (left to right, as
 * PyTorch); grad * poscoef elsewhere (NaN included). */
TG_PW float tg__pw_elu_backward_f32(float g, float b, float negcoef, float poscoef,
                                    float negiptcoef, bool is_result)
{
    if (b > 0.0f || b != b) return g * poscoef;
    return is_result ? g * negiptcoef * (b + negcoef)
                     : g * negiptcoef * negcoef * tg__pw_exp_f32(b * negiptcoef);
}
TG_PW double tg__pw_elu_backward_f64(double g, double b, double negcoef, double poscoef,
                                     double negiptcoef, bool is_result)
{
    if (b > 0.0 || b != b) return g * poscoef;
    return is_result ? g * negiptcoef * (b + negcoef)
                     : g * negiptcoef * negcoef * exp(b * negiptcoef);
}

#endif
