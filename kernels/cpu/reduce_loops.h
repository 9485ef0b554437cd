/* The contiguous inner loops of the reductions (reduce.c), built once per CPU capability
 * (cap/reduce_loops.c, cpu_cap.h). */
#ifndef TG_REDUCE_LOOPS_H
#define TG_REDUCE_LOOPS_H

#include "cpu_cap.h"

typedef struct tg_reduce_loops {
    double (*sum_f32)(const float *x, int64_t n);  /* accumulated in double */
    double (*sum_f64)(const double *x, int64_t n); /* one block (reduce.c cuts long lines) */
    void (*add_row_f32)(double *acc, const float *x, int64_t n);  /* acc[k] += x[k] */
    void (*add_row_f64)(double *acc, const double *x, int64_t n); /* acc[k] += x[k] */
    /* max / min of x[0..n), n >= 1, over the non-NaN values; *nan: whether there was a NaN */
    float (*max_f32)(const float *x, int64_t n, bool *nan);
    float (*min_f32)(const float *x, int64_t n, bool *nan);
} tg_reduce_loops;

TG_CAP_DECLARE(tg_reduce_loops, tg__reduce_loops);

#endif
