/* clamp's scalar function (kernels/cpu/ternary.c, kernels/cuda/ternary.cu): min(max(x, lo),
 * hi) with NaN propagated from any operand (PyTorch's clamp); lo > hi gives hi. */
#ifndef TG_UFUNC_CLAMP_H
#define TG_UFUNC_CLAMP_H

#include "ufunc/binary.h"

static inline TG_HD float tg__pw_clamp_f32(float x, float lo, float hi)
{
    return tg__pw_minimum_f32(tg__pw_maximum_f32(x, lo), hi);
}
static inline TG_HD double tg__pw_clamp_f64(double x, double lo, double hi)
{
    return tg__pw_minimum_f64(tg__pw_maximum_f64(x, lo), hi);
}
static inline TG_HD int64_t tg__pw_clamp_i64(int64_t x, int64_t lo, int64_t hi)
{
    int64_t m = x < lo ? lo : x;
    return hi < m ? hi : m;
}

#endif
