/* The scalar functions of the binary pointwise operators (`Generic: binary.<name>` in
 * specs/native_functions.yaml): add and sub with their alpha, mul, div (true, and rounded by
 * div's rounding_mode), pow, maximum, minimum; compute types as in ufunc/unary.h (integer
 * arithmetic wraps, in uint64_t). */
#ifndef TG_UFUNC_BINARY_H
#define TG_UFUNC_BINARY_H

#include "pointwise_checks.h" /* tg_pw_div_mode, tg__pw_parse_div_mode */

/* ------------------------------------------------------------------ binary arithmetic */
/* add/sub: a + alpha * b, a - alpha * b (alpha is 1 for the plain operators). On the device the
 * product and the sum are rounded separately (_rn intrinsics), as gcc does here in ISO C mode:
 * nvcc would otherwise fuse them into one multiply-add and differ from the CPU in the last bit
 * (or more, when a and alpha * b nearly cancel). */
#if defined(__CUDA_ARCH__)
static inline TG_HD float tg__pw_add_f32(float a, float b, float alpha)
{
    return __fadd_rn(a, __fmul_rn(alpha, b));
}
static inline TG_HD double tg__pw_add_f64(double a, double b, double alpha)
{
    return __dadd_rn(a, __dmul_rn(alpha, b));
}
#else
static inline TG_HD float tg__pw_add_f32(float a, float b, float alpha) { return a + alpha * b; }
static inline TG_HD double tg__pw_add_f64(double a, double b, double alpha)
{
    return a + alpha * b;
}
#endif
static inline TG_HD int64_t tg__pw_add_i64(int64_t a, int64_t b, int64_t alpha)
{
    return (int64_t)((uint64_t)a + (uint64_t)alpha * (uint64_t)b);
}

#if defined(__CUDA_ARCH__)
static inline TG_HD float tg__pw_sub_f32(float a, float b, float alpha)
{
    return __fsub_rn(a, __fmul_rn(alpha, b));
}
static inline TG_HD double tg__pw_sub_f64(double a, double b, double alpha)
{
    return __dsub_rn(a, __dmul_rn(alpha, b));
}
#else
static inline TG_HD float tg__pw_sub_f32(float a, float b, float alpha) { return a - alpha * b; }
static inline TG_HD double tg__pw_sub_f64(double a, double b, double alpha)
{
    return a - alpha * b;
}
#endif
static inline TG_HD int64_t tg__pw_sub_i64(int64_t a, int64_t b, int64_t alpha)
{
    return (int64_t)((uint64_t)a - (uint64_t)alpha * (uint64_t)b);
}

static inline TG_HD float tg__pw_mul_f32(float a, float b) { return a * b; }
static inline TG_HD double tg__pw_mul_f64(double a, double b) { return a * b; }
static inline TG_HD int64_t tg__pw_mul_i64(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* True division (integers never get here: the iterator promotes them to float). */
static inline TG_HD float tg__pw_div_f32(float a, float b) { return a / b; }
static inline TG_HD double tg__pw_div_f64(double a, double b) { return a / b; }

/* rounding_mode="trunc". Integer callers check b != 0 first (PyTorch: "ZeroDivisionError");
 * INT64_MIN / -1 wraps instead of trapping. */
static inline TG_HD float tg__pw_div_trunc_f32(float a, float b) { return truncf(a / b); }
static inline TG_HD double tg__pw_div_trunc_f64(double a, double b) { return trunc(a / b); }
static inline TG_HD int64_t tg__pw_div_trunc_i64(int64_t a, int64_t b)
{
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    return a / b;
}

/* rounding_mode="floor": Python's floor division. For floats this is Python's algorithm
 * (from the remainder, not floor(a / b)), so 1.0 // 0.1 == 9.0 as in Python and PyTorch;
 * division by zero gives the IEEE result of a / b. */
static inline TG_HD double tg__pw_div_floor_f64(double a, double b)
{
    if (b == 0) return a / b;
    double mod = fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return copysign(0.0, a / b);
    double floordiv = floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    return floordiv;
}

static inline TG_HD float tg__pw_div_floor_f32(float a, float b)
{
    if (b == 0) return a / b;
    float mod = fmodf(a, b);
    float div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0f;
    if (div == 0) return copysignf(0.0f, a / b);
    float floordiv = floorf(div);
    if (div - floordiv > 0.5f) floordiv += 1.0f;
    return floordiv;
}

static inline TG_HD int64_t tg__pw_div_floor_i64(int64_t a, int64_t b)
{
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}

/* pow. Integers: exact square-and-multiply with wrap-around; a negative exponent gives 1 for
 * base 1, +-1 for base -1 and 0 otherwise (PyTorch's tensor^tensor rule; the Scalar overload
 * rejects negative integer exponents before getting here). */
static inline TG_HD float tg__pw_pow_f32(float a, float b) { return powf(a, b); }
static inline TG_HD double tg__pw_pow_f64(double a, double b) { return pow(a, b); }
static inline TG_HD int64_t tg__pw_pow_i64(int64_t a, int64_t b)
{
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
static inline TG_HD float tg__pw_maximum_f32(float a, float b)
{
    float m = a < b ? b : a;
    return (a != a || b != b) ? a + b : m;
}
static inline TG_HD double tg__pw_maximum_f64(double a, double b)
{
    double m = a < b ? b : a;
    return (a != a || b != b) ? a + b : m;
}
static inline TG_HD int64_t tg__pw_maximum_i64(int64_t a, int64_t b) { return a < b ? b : a; }

static inline TG_HD float tg__pw_minimum_f32(float a, float b)
{
    float m = b < a ? b : a;
    return (a != a || b != b) ? a + b : m;
}
static inline TG_HD double tg__pw_minimum_f64(double a, double b)
{
    double m = b < a ? b : a;
    return (a != a || b != b) ? a + b : m;
}
static inline TG_HD int64_t tg__pw_minimum_i64(int64_t a, int64_t b) { return b < a ? b : a; }

/* div.out_mode: true division (mode TG_PW_DIV_TRUE; integers never get here, the meta function
 * promotes them), or rounded toward zero or down. */
static inline TG_HD float tg__pw_div_mode_f32(float a, float b, int mode)
{
    if (mode == TG_PW_DIV_TRUNC) return tg__pw_div_trunc_f32(a, b);
    return mode == TG_PW_DIV_FLOOR ? tg__pw_div_floor_f32(a, b) : a / b;
}
static inline TG_HD double tg__pw_div_mode_f64(double a, double b, int mode)
{
    if (mode == TG_PW_DIV_TRUNC) return tg__pw_div_trunc_f64(a, b);
    return mode == TG_PW_DIV_FLOOR ? tg__pw_div_floor_f64(a, b) : a / b;
}
static inline TG_HD int64_t tg__pw_div_mode_i64(int64_t a, int64_t b, int mode)
{
    return mode == TG_PW_DIV_TRUNC ? tg__pw_div_trunc_i64(a, b) : tg__pw_div_floor_i64(a, b);
}

/* div's rounding_mode: NULL (true division), "trunc" or "floor" as a tg_pw_div_mode, or -1
 * with PyTorch's error. */
static inline int tg__pw_div_mode_rounding_mode(const char *op, const char *rounding_mode)
{
    (void)op;
    tg_pw_div_mode mode;
    return tg__pw_parse_div_mode(rounding_mode, &mode) == 0 ? (int)mode : -1;
}

#endif
