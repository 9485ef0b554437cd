/* The typed loops of the generated pointwise kernels (ufunc.h), written once here and
 * instantiated by generated/ufunc/<family>_cap.c for each scalar function and compute type:
 * `static void exp_f32_loop(...) { tg__ufunc_loop(TG_PW_F32, &exp_fns, d, s, n, ctx); }`.
 * Inlined with the kind and the function table constant (the table is a static const, so its
 * pointers fold to direct calls of the adapters, which inline), every case below is a plain
 * loop that the compiler vectorises for the capability the file is compiled for (cpu_cap.h),
 * as the hand-written loops of each family used to be.
 *
 * All operands hold the computation dtype (the output bool for a comparison: the bool-valued
 * functions are set); data[0] is the output, data[1 + j] input j. The cases: every operand
 * contiguous; with two inputs, one of them broadcast (stride 0) and the rest contiguous;
 * anything else element by element with typed loads. `omp simd` asserts there is no
 * loop-carried dependence, which also holds in place (out == an input: each element is read
 * before it is written). Included only by the generated per-capability files. */
#ifndef TG_CPU_UFUNC_LOOPS_H
#define TG_CPU_UFUNC_LOOPS_H

#include "ufunc.h"

/* out[io] = f(a[ia], b[ib], c[ic]) for arrays of the kind's type (unused inputs ignored). */
TG_ALWAYS_INLINE void tg__ufunc_elem(tg_pw_kind k, const tg_ufunc_fns *f, const tg_ufunc_ctx *c,
                                     char *o, int64_t io, char *const *x, int64_t ia, int64_t ib,
                                     int64_t ic)
{
    switch (k) {
    case TG_PW_F32: {
        const float *a = (const float *)x[0], *b = (const float *)x[1], *d = (const float *)x[2];
        const float va = a[ia], vb = f->nin > 1 ? b[ib] : 0, vd = f->nin > 2 ? d[ic] : 0;
        if (f->b32) ((uint8_t *)o)[io] = f->b32(va, vb, vd, c->p.f32);
        else ((float *)o)[io] = f->f32(va, vb, vd, c->p.f32);
        break;
    }
    case TG_PW_F64: {
        const double *a = (const double *)x[0], *b = (const double *)x[1],
                     *d = (const double *)x[2];
        const double va = a[ia], vb = f->nin > 1 ? b[ib] : 0, vd = f->nin > 2 ? d[ic] : 0;
        if (f->b64) ((uint8_t *)o)[io] = f->b64(va, vb, vd, c->p.f64);
        else ((double *)o)[io] = f->f64(va, vb, vd, c->p.f64);
        break;
    }
    case TG_PW_I64: {
        const int64_t *a = (const int64_t *)x[0], *b = (const int64_t *)x[1];
        const int64_t *d = (const int64_t *)x[2];
        const int64_t va = a[ia], vb = f->nin > 1 ? b[ib] : 0, vd = f->nin > 2 ? d[ic] : 0;
        if (f->bi64) ((uint8_t *)o)[io] = f->bi64(va, vb, vd, c->p.i64);
        else ((int64_t *)o)[io] = f->i64(va, vb, vd, c->p.i64);
        break;
    }
    }
}

TG_ALWAYS_INLINE void tg__ufunc_loop(tg_pw_kind k, const tg_ufunc_fns *f, char **data,
                                     const int64_t *s, int64_t n, void *vctx)
{
    const tg_ufunc_ctx *ctx = vctx;
    const tg_ufunc_ctx c = *ctx; /* a local copy: its parameters cannot alias the output */
    const int64_t es = k == TG_PW_F32 ? 4 : 8;
    const int64_t os = f->b32 || f->b64 || f->bi64 ? 1 : es;
    const int nin = f->nin;
    char *o = data[0];
    char *const x[TG_UFUNC_MAX_IN] = { data[1], nin > 1 ? data[2] : data[1],
                                       nin > 2 ? data[3] : data[1] };
    bool contiguous = s[0] == os;
    for (int j = 1; j <= nin; j++) contiguous = contiguous && s[j] == es;
    if (contiguous) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) tg__ufunc_elem(k, f, &c, o, i, x, i, i, i);
    } else if (nin == 2 && s[0] == os && s[1] == es && s[2] == 0) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) tg__ufunc_elem(k, f, &c, o, i, x, i, 0, 0);
    } else if (nin == 2 && s[0] == os && s[1] == 0 && s[2] == es) {
#pragma omp simd
        for (int64_t i = 0; i < n; i++) tg__ufunc_elem(k, f, &c, o, i, x, 0, i, 0);
    } else {
        for (int64_t i = 0; i < n; i++) {
            char *const xi[TG_UFUNC_MAX_IN] = { x[0] + i * s[1], x[1] + (nin > 1 ? i * s[2] : 0),
                                                x[2] + (nin > 2 ? i * s[3] : 0) };
            tg__ufunc_elem(k, f, &c, o + i * s[0], 0, xi, 0, 0, 0);
        }
    }
}

#endif
