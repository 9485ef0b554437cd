/* The fused AdamW step's loop (optim_loops.h), compiled once per CPU capability: a plain loop
 * over distinct arrays that the compiler vectorises at the capability's width. */
#include "core/core.h"
#include "optim_loops.h"

#include <math.h>

static void adamw_f32(float *restrict p, float *restrict m, float *restrict v,
                      const float *restrict g, int64_t n, const tg_adamw_consts *k)
{
    const float decay = k->decay, b1 = k->b1, b2 = k->b2, a1 = k->a1, a2 = k->a2, bc2 = k->bc2,
                eps = k->eps, nstep = k->nstep;
    for (int64_t i = 0; i < n; i++) {
        const float gi = g[i], pi = p[i] * decay;
        const float mi = m[i] * b1 + a1 * gi, vi = v[i] * b2 + a2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] = pi + nstep * mi / (sqrtf(vi) / bc2 + eps);
    }
}

const tg_optim_loops TG_CAP_NAME(tg__optim_loops) = { adamw_f32 };
