/* The vector loop of the fused AdamW step (optim.c), built once per CPU capability
 * (cap/optim_loops.c, cpu_cap.h), where -fno-math-errno lets the square root vectorise. */
#ifndef TG_OPTIM_LOOPS_H
#define TG_OPTIM_LOOPS_H

#include "cpu_cap.h"

/* One step's constants in float: decay = 1 - lr * weight_decay, beta1, beta2, 1 - beta1,
 * 1 - beta2, sqrt(1 - beta2^step), eps, -lr / (1 - beta1^step). */
typedef struct tg_adamw_consts {
    float decay, b1, b2, a1, a2, bc2, eps, nstep;
} tg_adamw_consts;

typedef struct tg_optim_loops {
    /* AdamW (decoupled weight decay, no amsgrad, no maximize) over n contiguous elements of
     * distinct arrays: torch.optim.AdamW's float32 arithmetic, as adam_f32's general loop. */
    void (*adamw_f32)(float *p, float *m, float *v, const float *g, int64_t n,
                      const tg_adamw_consts *k);
} tg_optim_loops;

TG_CAP_DECLARE(tg_optim_loops, tg__optim_loops);

#endif
