/* The float32 SIMD vocabulary of the per-capability kernels (kernels/cpu/cap/), in GCC's
 * vector extensions: one vector type whose width is the capability's this file is compiled
 * for (kernels/cpu/cap/ builds once per capability: 16 lanes with AVX-512, 8 with AVX2, 4
 * otherwise), so code written once with + - * / and comparisons compiles to that capability's
 * instructions; tg_vd holds as many bytes of doubles. Used by exp_f32_vec.h, vec_sleef.h and
 * cap/reduce_loops.c. */
#ifndef TG_VEC_F32_H
#define TG_VEC_F32_H

#include <stdint.h>
#include <string.h>

/* 16 bytes without AVX: SSE2 on x86-64, NEON on aarch64, plain code elsewhere. */
#if defined(__AVX512F__)
#define TG_VF_BYTES 64
#elif defined(__AVX2__)
#define TG_VF_BYTES 32
#else
#define TG_VF_BYTES 16
#endif

typedef float tg_vf __attribute__((vector_size(TG_VF_BYTES)));
typedef int32_t tg_vi __attribute__((vector_size(TG_VF_BYTES)));
typedef uint32_t tg_vu __attribute__((vector_size(TG_VF_BYTES)));
/* Half a tg_vf, and as many doubles as that (the same width as tg_vf): widening to double
 * goes half by half, which compiles to the capability's own conversions. */
typedef float tg_vfh __attribute__((vector_size(TG_VF_BYTES / 2)));
typedef double tg_vd __attribute__((vector_size(TG_VF_BYTES)));
enum { TG_VF_LANES = TG_VF_BYTES / 4 };

static inline tg_vf tg__vf_load(const float *p)
{
    tg_vf v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void tg__vf_store(float *p, tg_vf v) { memcpy(p, &v, sizeof v); }
/* x in every lane (a lane loop the compiler turns into one broadcast; `(tg_vf){ 0 } + x`
 * would turn -0 into +0). */
static inline tg_vf tg__vf_splat(float x)
{
    tg_vf v;
    for (int i = 0; i < TG_VF_LANES; i++) v[i] = x;
    return v;
}
/* m ? a : b per lane, m a comparison result (all ones or all zeros per lane). */
static inline tg_vf tg__vf_select(tg_vi m, tg_vf a, tg_vf b)
{
    return (tg_vf)((m & (tg_vi)a) | (~m & (tg_vi)b));
}
static inline tg_vf tg__vf_from_bits(tg_vu u) { return (tg_vf)u; }
/* The low and high halves of v widened to double. */
static inline tg_vd tg__vf_lo_f64(tg_vf v)
{
    tg_vfh h;
    memcpy(&h, &v, sizeof h);
    return __builtin_convertvector(h, tg_vd);
}
static inline tg_vd tg__vf_hi_f64(tg_vf v)
{
    tg_vfh h;
    memcpy(&h, (const char *)&v + sizeof h, sizeof h);
    return __builtin_convertvector(h, tg_vd);
}

/* out[i] = f(x[i]) over the prefix of [0, n) that is a multiple of the lane count; returns its
 * length. Always inlined, so each caller gets a loop specialised to its f. */
static inline __attribute__((always_inline)) int64_t tg__vf_map(tg_vf (*f)(tg_vf), float *out,
                                                                const float *x, int64_t n)
{
    int64_t i = 0;
    for (; i + TG_VF_LANES <= n; i += TG_VF_LANES) tg__vf_store(out + i, f(tg__vf_load(x + i)));
    return i;
}

/* out[i] = f(x[i]) over all of [0, n), the tail through one zero-padded vector: every element
 * goes through the same vector code, so its result does not depend on where it sits. */
static inline __attribute__((always_inline)) void tg__vf_map_all(tg_vf (*f)(tg_vf), float *out,
                                                                 const float *x, int64_t n)
{
    int64_t i = tg__vf_map(f, out, x, n);
    if (i == n) return;
    float buf[TG_VF_LANES] = { 0 };
    memcpy(buf, x + i, (size_t)(n - i) * sizeof *buf);
    tg__vf_store(buf, f(tg__vf_load(buf)));
    memcpy(out + i, buf, (size_t)(n - i) * sizeof *buf);
}

/* The same over doubles (TG_VF_LANES / 2 of them per vector). */
static inline __attribute__((always_inline)) void tg__vd_map_all(tg_vd (*f)(tg_vd), double *out,
                                                                 const double *x, int64_t n)
{
    enum { LANES = TG_VF_LANES / 2 };
    tg_vd v;
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES) {
        memcpy(&v, x + i, sizeof v);
        v = f(v);
        memcpy(out + i, &v, sizeof v);
    }
    if (i == n) return;
    double buf[LANES] = { 0 };
    memcpy(buf, x + i, (size_t)(n - i) * sizeof *buf);
    memcpy(&v, buf, sizeof v);
    v = f(v);
    memcpy(out + i, &v, (size_t)(n - i) * sizeof *buf);
}

#endif
