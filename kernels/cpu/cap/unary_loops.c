/* The unary kernels' typed fast loops (unary.c), compiled once per CPU capability (cpu_cap.h):
 * the contiguous case is a plain loop over the scalar function of pointwise_scalar.h, which
 * the compiler vectorises for the capability's instruction set; float32 exp, log, tanh and
 * sigmoid also have explicit vector forms (exp_f32_vec.h), as wide as the capability. Every
 * such form agrees with the scalar function bit for bit (tests/ops/test_pointwise.c).
 * float32 sin and cos and float64 exp, log, tanh, sin, cos and sigmoid are array maps over
 * SLEEF's vector functions instead (vec_sleef.h, unary_loops.h). */
#include "core/core.h"
#include "pointwise_scalar.h"
#include "activation_lm_scalar.h" /* erf, log1p, expm1 */
#include "unary_loops.h"
#include "exp_f32_vec.h"
#include "vec_sleef.h"

typedef float (*pw1_f32_fn)(float x);
typedef double (*pw1_f64_fn)(double x);

/* Fast paths: one dtype; f is a constant once inlined into the one-line loops below. */
static inline __attribute__((always_inline)) void
unary_loop_f32(char **data, const int64_t *strides, int64_t n, pw1_f32_fn f)
{
    float *out = (float *)data[0];
    const float *x = (const float *)data[1];
    if (strides[0] == 4 && strides[1] == 4) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(x[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            *(float *)(data[0] + i * strides[0]) = f(*(const float *)(data[1] + i * strides[1]));
    }
}

static inline __attribute__((always_inline)) void
unary_loop_f64(char **data, const int64_t *strides, int64_t n, pw1_f64_fn f)
{
    double *out = (double *)data[0];
    const double *x = (const double *)data[1];
    if (strides[0] == 8 && strides[1] == 8) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) out[i] = f(x[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            *(double *)(data[0] + i * strides[0]) = f(*(const double *)(data[1] + i * strides[1]));
    }
}

/* A function with a vector form (exp_f32_vec.h): contiguous operands take it for the longest
 * multiple of the lane count, the scalar reference does the rest (and strided operands). */
static inline __attribute__((always_inline)) void
vector_loop_f32(char **d, const int64_t *s, int64_t n,
                int64_t (*vec)(float *, const float *, int64_t), float (*ref)(float))
{
    int64_t done = s[0] == 4 && s[1] == 4 ? vec((float *)d[0], (const float *)d[1], n) : 0;
    char *rest[2] = { d[0] + done * 4, d[1] + done * 4 };
    unary_loop_f32(rest, s, n - done, ref);
}

static void neg_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_neg_f32);
}
static void neg_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_neg_f64);
}
static void abs_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_abs_f32);
}
static void abs_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_abs_f64);
}
static void relu_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_relu_f32);
}
static void relu_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_relu_f64);
}
static void exp_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    vector_loop_f32(d, s, n, tg__exp_f32_vec, tg__pw_exp_f32);
}
static void log_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    vector_loop_f32(d, s, n, tg__log_f32_vec, tg__pw_log_f32);
}
static void sqrt_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_sqrt_f32);
}
static void sqrt_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_sqrt_f64);
}
static void rsqrt_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f32(d, s, n, tg__pw_rsqrt_f32);
}
static void rsqrt_f64(char **d, const int64_t *s, int64_t n, void *c)
{
    unary_loop_f64(d, s, n, tg__pw_rsqrt_f64);
}
static void tanh_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    vector_loop_f32(d, s, n, tg__tanh_f32_vec, tg__pw_tanh_f32);
}
static void sigmoid_f32(char **d, const int64_t *s, int64_t n, void *c)
{
    vector_loop_f32(d, s, n, tg__sigmoid_f32_vec, tg__pw_sigmoid_f32);
}

/* erf, log1p, expm1: plain loops over the C library's functions. */
#define PLAIN_LOOPS(name)                                                  \
    static void name##_f32(char **d, const int64_t *s, int64_t n, void *c) \
    {                                                                      \
        unary_loop_f32(d, s, n, tg__pw_##name##_f32);                      \
    }                                                                      \
    static void name##_f64(char **d, const int64_t *s, int64_t n, void *c) \
    {                                                                      \
        unary_loop_f64(d, s, n, tg__pw_##name##_f64);                      \
    }
PLAIN_LOOPS(erf)
PLAIN_LOOPS(log1p)
PLAIN_LOOPS(expm1)

/* The array maps (vec_sleef.h): every element, the tail included, through the vector code. */
#define MAP_F32(name, f) \
    static void name(float *out, const float *x, int64_t n) { tg__vf_map_all(f, out, x, n); }
#define MAP_F64(name, f) \
    static void name(double *out, const double *x, int64_t n) { tg__vd_map_all(f, out, x, n); }
MAP_F32(sin_f32_map, tg__vf_sin)
MAP_F32(cos_f32_map, tg__vf_cos)
MAP_F64(exp_f64_map, tg__vd_exp_full)
MAP_F64(log_f64_map, tg__vd_log)
MAP_F64(sin_f64_map, tg__vd_sin)
MAP_F64(cos_f64_map, tg__vd_cos)
MAP_F64(tanh_f64_map, tg__vd_tanh)
MAP_F64(sigmoid_f64_map, tg__vd_sigmoid)

const tg_unary_loops TG_CAP_NAME(tg__unary_loops) = {
    .f32 = { [TG_UN_NEG] = neg_f32,
             [TG_UN_ABS] = abs_f32,
             [TG_UN_RELU] = relu_f32,
             [TG_UN_EXP] = exp_f32,
             [TG_UN_LOG] = log_f32,
             [TG_UN_SQRT] = sqrt_f32,
             [TG_UN_RSQRT] = rsqrt_f32,
             [TG_UN_TANH] = tanh_f32,
             [TG_UN_SIGMOID] = sigmoid_f32,
             [TG_UN_ERF] = erf_f32,
             [TG_UN_LOG1P] = log1p_f32,
             [TG_UN_EXPM1] = expm1_f32 },
    .f64 = { [TG_UN_NEG] = neg_f64,
             [TG_UN_ABS] = abs_f64,
             [TG_UN_RELU] = relu_f64,
             [TG_UN_SQRT] = sqrt_f64,
             [TG_UN_RSQRT] = rsqrt_f64,
             [TG_UN_ERF] = erf_f64,
             [TG_UN_LOG1P] = log1p_f64,
             [TG_UN_EXPM1] = expm1_f64 },
    .map_f32 = { [TG_UN_SIN] = sin_f32_map, [TG_UN_COS] = cos_f32_map },
    .map_f64 = { [TG_UN_EXP] = exp_f64_map,
                 [TG_UN_LOG] = log_f64_map,
                 [TG_UN_SIN] = sin_f64_map,
                 [TG_UN_COS] = cos_f64_map,
                 [TG_UN_TANH] = tanh_f64_map,
                 [TG_UN_SIGMOID] = sigmoid_f64_map },
};
