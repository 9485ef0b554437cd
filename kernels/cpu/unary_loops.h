/* The typed fast loops of the unary kernels (unary.c), built once per CPU capability
 * (cap/unary_loops.c, cpu_cap.h): for each operator and float32 / float64, either a
 * tg_iter_loop1d that agrees bit for bit with the operator's scalar reference
 * (pointwise_scalar.h), or an array map whose vector code is the only definition of the
 * function in that capability (SLEEF's, vec_sleef.h): unary.c sends every element of that
 * operator through it, whatever its dtype and strides, so a result never depends on the path
 * taken. */
#ifndef TG_UNARY_LOOPS_H
#define TG_UNARY_LOOPS_H

#include "cpu_cap.h"

typedef enum tg_unary_id {
    TG_UN_NEG,
    TG_UN_ABS,
    TG_UN_RELU,
    TG_UN_EXP,
    TG_UN_LOG,
    TG_UN_SQRT,
    TG_UN_RSQRT,
    TG_UN_SIN,
    TG_UN_COS,
    TG_UN_TANH,
    TG_UN_SIGMOID,
    TG_UN_ERF,
    TG_UN_LOG1P,
    TG_UN_EXPM1,
    TG_UN_COUNT
} tg_unary_id;

/* out[i] = f(x[i]) for i < n; contiguous arrays, out == x allowed. */
typedef void (*tg_map_f32)(float *out, const float *x, int64_t n);
typedef void (*tg_map_f64)(double *out, const double *x, int64_t n);

typedef struct tg_unary_loops {
    tg_iter_loop1d f32[TG_UN_COUNT], f64[TG_UN_COUNT]; /* NULL where the map is set */
    tg_map_f32 map_f32[TG_UN_COUNT];
    tg_map_f64 map_f64[TG_UN_COUNT];
} tg_unary_loops;

TG_CAP_DECLARE(tg_unary_loops, tg__unary_loops);

#endif
