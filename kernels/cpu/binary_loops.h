/* The typed fast loops of the binary kernels (binary.c), built once per CPU capability
 * (cap/binary_loops.c, cpu_cap.h), and the context binary.c hands them. */
#ifndef TG_BINARY_LOOPS_H
#define TG_BINARY_LOOPS_H

#include "cpu_cap.h"

typedef float (*pw2_f32_fn)(float a, float b, float alpha);
typedef double (*pw2_f64_fn)(double a, double b, double alpha);
typedef int64_t (*pw2_i64_fn)(int64_t a, int64_t b, int64_t alpha);

typedef struct binary_op binary_op;

/* What a loop needs: the operator, the computation dtype, alpha in each compute type, and a
 * flag a loop sets when it meets an integer division by zero (reported after the loop, on the
 * calling thread, since errors are thread-local). */
typedef struct binary_ctx {
    const binary_op *op;
    tg_dtype dtype;
    float alpha_f32;
    double alpha_f64;
    int64_t alpha_i64;
    int zero_div;
} binary_ctx;

/* The operators with fast loops; a NULL entry (an integer division, say) takes the reference
 * loop. */
typedef enum tg_binary_id {
    TG_BIN_ADD,
    TG_BIN_SUB,
    TG_BIN_MUL,
    TG_BIN_DIV,
    TG_BIN_DIV_TRUNC,
    TG_BIN_POW,
    TG_BIN_MAXIMUM,
    TG_BIN_MINIMUM,
    TG_BIN_COUNT
} tg_binary_id;

typedef struct tg_binary_loops {
    tg_iter_loop1d f32[TG_BIN_COUNT], f64[TG_BIN_COUNT], i64[TG_BIN_COUNT];
} tg_binary_loops;

TG_CAP_DECLARE(tg_binary_loops, tg__binary_loops);

#endif
