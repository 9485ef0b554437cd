/* The element loops of the activation kernels (activation.c, activation_lm.c): one tg_iter
 * 1-d loop per operator, out = E32 / E64 of x (unary) or of g, x (binary), computed in float
 * for float32, float16 and bfloat16 and in double for float64, with contiguous fast paths and
 * the strided reference path (tg__pw_force_reference). ctx_type is the caller's context
 * struct, with members dtype, p[] (float parameters), q[] (double) and flag, which E32 / E64
 * may read as p, q and flag. */
#ifndef TG_ACTIVATION_LOOPS_H
#define TG_ACTIVATION_LOOPS_H

#include "pointwise_loops.h"

#define TG_ACT_UNARY_LOOP(fname, ctx_type, E32, E64)                                  \
    static void fname(char **data, const int64_t *st, int64_t n, void *vctx)          \
    {                                                                                 \
        const ctx_type *c = vctx;                                                     \
        const tg_dtype t = c->dtype;                                                  \
        const float *p = c->p;                                                        \
        const double *q = c->q;                                                       \
        (void)p;                                                                      \
        (void)q;                                                                      \
        if (!tg__pw_force_reference && t == TG_FLOAT32 && st[0] == 4 && st[1] == 4) { \
            float *o = (float *)data[0];                                              \
            const float *xs = (const float *)data[1];                                 \
            for (int64_t i = 0; i < n; i++) {                                         \
                const float x = xs[i];                                                \
                o[i] = (E32);                                                         \
            }                                                                         \
            return;                                                                   \
        }                                                                             \
        if (!tg__pw_force_reference && t == TG_FLOAT64 && st[0] == 8 && st[1] == 8) { \
            double *o = (double *)data[0];                                            \
            const double *xs = (const double *)data[1];                               \
            for (int64_t i = 0; i < n; i++) {                                         \
                const double x = xs[i];                                               \
                o[i] = (E64);                                                         \
            }                                                                         \
            return;                                                                   \
        }                                                                             \
        char *o = data[0];                                                            \
        const char *xp = data[1];                                                     \
        if (tg__pw_kind(t) == TG_PW_F32) {                                            \
            for (int64_t i = 0; i < n; i++, o += st[0], xp += st[1]) {                \
                const float x = tg__pw_load_f32(xp, t);                               \
                tg__pw_store_f32(o, t, (E32));                                        \
            }                                                                         \
        } else {                                                                      \
            for (int64_t i = 0; i < n; i++, o += st[0], xp += st[1]) {                \
                const double x = tg__pw_load_f64(xp, t);                              \
                tg__pw_store_f64(o, t, (E64));                                        \
            }                                                                         \
        }                                                                             \
    }

#define TG_ACT_BINARY_LOOP(fname, ctx_type, E32, E64)                                  \
    static void fname(char **data, const int64_t *st, int64_t n, void *vctx)           \
    {                                                                                  \
        const ctx_type *c = vctx;                                                      \
        const tg_dtype t = c->dtype;                                                   \
        const float *p = c->p;                                                         \
        const double *q = c->q;                                                        \
        const bool flag = c->flag;                                                     \
        (void)p;                                                                       \
        (void)q;                                                                       \
        (void)flag;                                                                    \
        if (!tg__pw_force_reference && t == TG_FLOAT32 && st[0] == 4 && st[1] == 4 &&  \
            st[2] == 4) {                                                              \
            float *o = (float *)data[0];                                               \
            const float *gs = (const float *)data[1], *xs = (const float *)data[2];    \
            for (int64_t i = 0; i < n; i++) {                                          \
                const float g = gs[i], x = xs[i];                                      \
                o[i] = (E32);                                                          \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        if (!tg__pw_force_reference && t == TG_FLOAT64 && st[0] == 8 && st[1] == 8 &&  \
            st[2] == 8) {                                                              \
            double *o = (double *)data[0];                                             \
            const double *gs = (const double *)data[1], *xs = (const double *)data[2]; \
            for (int64_t i = 0; i < n; i++) {                                          \
                const double g = gs[i], x = xs[i];                                     \
                o[i] = (E64);                                                          \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        char *o = data[0];                                                             \
        const char *gp = data[1], *xp = data[2];                                       \
        if (tg__pw_kind(t) == TG_PW_F32) {                                             \
            for (int64_t i = 0; i < n; i++, o += st[0], gp += st[1], xp += st[2]) {    \
                const float g = tg__pw_load_f32(gp, t), x = tg__pw_load_f32(xp, t);    \
                tg__pw_store_f32(o, t, (E32));                                         \
            }                                                                          \
        } else {                                                                       \
            for (int64_t i = 0; i < n; i++, o += st[0], gp += st[1], xp += st[2]) {    \
                const double g = tg__pw_load_f64(gp, t), x = tg__pw_load_f64(xp, t);   \
                tg__pw_store_f64(o, t, (E64));                                         \
            }                                                                          \
        }                                                                              \
    }

#endif
