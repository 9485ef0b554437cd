/* The typed fast loops of the unary kernels (unary.c), built once per CPU capability
 * (cap/unary_loops.c, cpu_cap.h): one tg_iter_loop1d per operator for float32 and float64. */
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
    TG_UN_COUNT
} tg_unary_id;

typedef struct tg_unary_loops {
    tg_iter_loop1d f32[TG_UN_COUNT], f64[TG_UN_COUNT];
} tg_unary_loops;

TG_CAP_DECLARE(tg_unary_loops, tg__unary_loops);

#endif
