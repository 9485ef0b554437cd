/* The vector loops of gelu's float32 forward and backward (activation_lm.c), built once per CPU capability
 * (cap/activation_lm_loops.c, cpu_cap.h): array maps over SLEEF's float32 erf and tanh. They
 * are the only float32 gelu and gelu_backward of the CPU: activation_lm.c sends every float32, float16 and
 * bfloat16 element through them (strided ones via a buffer), so a result never depends on the
 * path taken. */
#ifndef TG_ACTIVATION_LM_LOOPS_H
#define TG_ACTIVATION_LM_LOOPS_H

#include "cpu_cap.h"

/* out[i] = gelu(x[i]) for i < n; contiguous arrays, out == x allowed. */
typedef void (*tg_actlm_map_f32)(float *out, const float *x, int64_t n);

/* out[i] = g[i] * gelu'(x[i]) for i < n; contiguous arrays, out may be g or x. */
typedef void (*tg_actlm_map2_f32)(float *out, const float *g, const float *x, int64_t n);

typedef struct tg_actlm_loops {
    tg_actlm_map_f32 gelu_none_f32, gelu_tanh_f32;
    tg_actlm_map2_f32 gelu_backward_none_f32, gelu_backward_tanh_f32;
} tg_actlm_loops;

TG_CAP_DECLARE(tg_actlm_loops, tg__actlm_loops);

#endif
