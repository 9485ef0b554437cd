/* The float32 row of softmax / log_softmax (softmax.c) and the exponentials of fused attention
 * (attention.c), built once per CPU capability
 * (cap/softmax_rows.c, cpu_cap.h). */
#ifndef TG_SOFTMAX_ROWS_H
#define TG_SOFTMAX_ROWS_H

#include "cpu_cap.h"

typedef struct tg_softmax_rows {
    /* One contiguous row of n floats: y = softmax(x) (log_softmax when lg). tmp: n floats of
     * scratch, which a capability may use. */
    void (*row_f32)(const float *x, float *y, float *tmp, int64_t n, bool lg);
    /* After a task's rows: orders any non-temporal stores before the caller reads y. */
    void (*finish)(void);
    /* x[k] = e^(x[k] - shift) for k < n, in place, returning their sum: the exponentials of
     * an online softmax (fused attention), shift a finite row max or logsumexp. Values are
     * tg__pw_exp_f32's (NaN stays NaN, -inf gives 0). */
    float (*exp_shift_f32)(float *x, int64_t n, float shift);
} tg_softmax_rows;

TG_CAP_DECLARE(tg_softmax_rows, tg__softmax_rows);

#endif
