/* The binary kernels' typed fast loops (binary.c), compiled once per CPU capability
 * (cpu_cap.h): the compiler vectorises each for the capability's instruction set. */
#include "core/core.h"
#include "pointwise_scalar.h"
#include "binary_loops.h"

/* ------------------------------------------------------------------ fast paths
 * One dtype, f known at compile time once these are inlined into the per-operator loops
 * below (always_inline makes the function pointer a constant), so each case is a plain loop
 * the compiler vectorises. `omp simd` asserts there is no loop-carried dependence, which also
 * holds in place (out == a: each element is read before it is written). */

static inline __attribute__((always_inline)) void
binary_loop_f32(char **data, const int64_t *strides, int64_t n, float alpha, pw2_f32_fn f)
{
    float *out = (float *)data[0];
    const float *a = (const float *)data[1], *b = (const float *)data[2];
    const int64_t so = strides[0], sa = strides[1], sb = strides[2];
    if (so == 4 && sa == 4 && sb == 4) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(a[i], b[i], alpha);
    } else if (so == 4 && sa == 4 && sb == 0) {
        const float bv = b[0];
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(a[i], bv, alpha);
    } else if (so == 4 && sa == 0 && sb == 4) {
        const float av = a[0];
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(av, b[i], alpha);
    } else {
        for (int64_t i = 0; i < n; i++)
            *(float *)(data[0] + i * so) =
                f(*(const float *)(data[1] + i * sa), *(const float *)(data[2] + i * sb), alpha);
    }
}

static inline __attribute__((always_inline)) void
binary_loop_f64(char **data, const int64_t *strides, int64_t n, double alpha, pw2_f64_fn f)
{
    double *out = (double *)data[0];
    const double *a = (const double *)data[1], *b = (const double *)data[2];
    const int64_t so = strides[0], sa = strides[1], sb = strides[2];
    if (so == 8 && sa == 8 && sb == 8) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(a[i], b[i], alpha);
    } else if (so == 8 && sa == 8 && sb == 0) {
        const double bv = b[0];
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(a[i], bv, alpha);
    } else if (so == 8 && sa == 0 && sb == 8) {
        const double av = a[0];
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(av, b[i], alpha);
    } else {
        for (int64_t i = 0; i < n; i++)
            *(double *)(data[0] + i * so) =
                f(*(const double *)(data[1] + i * sa), *(const double *)(data[2] + i * sb), alpha);
    }
}

/* int64 only (the other integer widths take the reference path); never for divisions. */
static inline __attribute__((always_inline)) void
binary_loop_i64(char **data, const int64_t *strides, int64_t n, int64_t alpha, pw2_i64_fn f)
{
    int64_t *out = (int64_t *)data[0];
    const int64_t *a = (const int64_t *)data[1], *b = (const int64_t *)data[2];
    const int64_t so = strides[0], sa = strides[1], sb = strides[2];
    if (so == 8 && sa == 8 && sb == 8) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(a[i], b[i], alpha);
    } else if (so == 8 && sa == 8 && sb == 0) {
        const int64_t bv = b[0];
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(a[i], bv, alpha);
    } else {
        for (int64_t i = 0; i < n; i++)
            *(int64_t *)(data[0] + i * so) = f(*(const int64_t *)(data[1] + i * sa),
                                               *(const int64_t *)(data[2] + i * sb), alpha);
    }
}

#define CTX(v) ((binary_ctx *)(v))
static void add_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f32(d, s, n, CTX(c)->alpha_f32, tg__pw_add_f32);
}
static void add_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f64(d, s, n, CTX(c)->alpha_f64, tg__pw_add_f64);
}
static void add_i64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_i64(d, s, n, CTX(c)->alpha_i64, tg__pw_add_i64);
}
static void sub_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f32(d, s, n, CTX(c)->alpha_f32, tg__pw_sub_f32);
}
static void sub_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f64(d, s, n, CTX(c)->alpha_f64, tg__pw_sub_f64);
}
static void sub_i64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_i64(d, s, n, CTX(c)->alpha_i64, tg__pw_sub_i64);
}
static void mul_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f32(d, s, n, 0, tg__pw_mul_f32);
}
static void mul_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f64(d, s, n, 0, tg__pw_mul_f64);
}
static void mul_i64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_i64(d, s, n, 0, tg__pw_mul_i64);
}
static void div_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f32(d, s, n, 0, tg__pw_div_f32);
}
static void div_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f64(d, s, n, 0, tg__pw_div_f64);
}
static void div_trunc_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f32(d, s, n, 0, tg__pw_div_trunc_f32);
}
static void div_trunc_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f64(d, s, n, 0, tg__pw_div_trunc_f64);
}
static void pow_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f32(d, s, n, 0, tg__pw_pow_f32);
}
static void pow_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f64(d, s, n, 0, tg__pw_pow_f64);
}
static void maximum_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f32(d, s, n, 0, tg__pw_maximum_f32);
}
static void maximum_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f64(d, s, n, 0, tg__pw_maximum_f64);
}
static void maximum_i64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_i64(d, s, n, 0, tg__pw_maximum_i64);
}
static void minimum_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f32(d, s, n, 0, tg__pw_minimum_f32);
}
static void minimum_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_f64(d, s, n, 0, tg__pw_minimum_f64);
}
static void minimum_i64(char **d, const int64_t *s, int64_t n, void *c)
{
    binary_loop_i64(d, s, n, 0, tg__pw_minimum_i64);
}
#undef CTX

const tg_binary_loops TG_CAP_NAME(tg__binary_loops) = {
    .f32 = { [TG_BIN_ADD] = add_f32,
             [TG_BIN_SUB] = sub_f32,
             [TG_BIN_MUL] = mul_f32,
             [TG_BIN_DIV] = div_f32,
             [TG_BIN_DIV_TRUNC] = div_trunc_f32,
             [TG_BIN_POW] = pow_f32,
             [TG_BIN_MAXIMUM] = maximum_f32,
             [TG_BIN_MINIMUM] = minimum_f32 },
    .f64 = { [TG_BIN_ADD] = add_f64,
             [TG_BIN_SUB] = sub_f64,
             [TG_BIN_MUL] = mul_f64,
             [TG_BIN_DIV] = div_f64,
             [TG_BIN_DIV_TRUNC] = div_trunc_f64,
             [TG_BIN_POW] = pow_f64,
             [TG_BIN_MAXIMUM] = maximum_f64,
             [TG_BIN_MINIMUM] = minimum_f64 },
    .i64 = { [TG_BIN_ADD] = add_i64,
             [TG_BIN_SUB] = sub_i64,
             [TG_BIN_MUL] = mul_i64,
             [TG_BIN_MAXIMUM] = maximum_i64,
             [TG_BIN_MINIMUM] = minimum_i64 },
};
