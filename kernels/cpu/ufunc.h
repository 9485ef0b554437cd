/* The CPU side of the pointwise operators that tgen generates from `ufunc_inner_loop:`
 * (docs/adding-an-operator.md, "A pointwise operator"). For the operators whose scalar
 * functions are in kernels/common/ufunc/<family>.h, tgen writes
 *
 *   generated/ufunc/<family>_cpu.c  the kernels (tg__cpu_exp_out, ...), compiled once: each
 *                                   fills a tg_ufunc_call and calls tg__ufunc_cpu_run with its
 *                                   scalar functions (tg_ufunc_fns) and the loops of the CPU
 *                                   capability in use;
 *   generated/ufunc/<family>_cap.c  those loops (tg_ufunc_loops), compiled once per capability
 *                                   (cpu_cap.h): ufunc_loops.h's generic loops instantiated
 *                                   for each scalar function, and its hand-vectorised array
 *                                   maps (`CPUVector:`, kernels/cpu/vec/<family>.h).
 *
 * The generated code holds no logic of its own: the runner, the reference loop and the
 * buffered array-map loop are in ufunc.c, the typed loops in ufunc_loops.h. */
#ifndef TG_CPU_UFUNC_H
#define TG_CPU_UFUNC_H

#include "cpu_cap.h"
#include "ufunc_meta.h"
#include "pointwise_loops.h"

/* An operator's scalar functions in one signature per compute type (the generated adapters
 * call the scalar function with the inputs it takes and its parameters): up to three inputs,
 * the call's parameters in that type. A comparison fills the bool-valued ones; NULL where the
 * operator has no function of that type. */
typedef struct tg_ufunc_fns {
    float (*f32)(float x0, float x1, float x2, const float *p);
    double (*f64)(double x0, double x1, double x2, const double *p);
    int64_t (*i64)(int64_t x0, int64_t x1, int64_t x2, const int64_t *p);
    bool (*b32)(float x0, float x1, float x2, const float *p);
    bool (*b64)(double x0, double x1, double x2, const double *p);
    bool (*bi64)(int64_t x0, int64_t x1, int64_t x2, const int64_t *p);
    int nin; /* inputs: 1 to 3 */
} tg_ufunc_fns;

/* An array map (`CPUVector:`): out[i] = f(in[0][i], ...) for i < n over contiguous arrays of
 * the compute type, every element (the tail too) through the vector code; out may be in[0]. */
typedef void (*tg_ufunc_map_f32)(float *out, const float *const *in, int64_t n, const float *p);
typedef void (*tg_ufunc_map_f64)(double *out, const double *const *in, int64_t n, const double *p);

/* One capability's loops of one scalar function. The typed loops run when every operand holds
 * the computation dtype (the output bool for a comparison), contiguous or not; an array map,
 * when the function has one for the compute type, takes every element of that type (strided
 * and half-precision runs through a buffer), so that a result depends only on its value and
 * the capability. NULL where none. */
typedef struct tg_ufunc_loops {
    tg_iter_loop1d f32, f64, i64;
    tg_ufunc_map_f32 map_f32;
    tg_ufunc_map_f64 map_f64;
} tg_ufunc_loops;

/* What every loop gets. */
typedef struct tg_ufunc_ctx {
    const tg_ufunc_fns *fns;
    const tg_ufunc_loops *loops;
    tg_dtype dtype;                       /* the computation dtype */
    tg_dtype dtypes[1 + TG_UFUNC_MAX_IN]; /* the output's, then each input's */
    tg_ufunc_params p;
    bool int_div; /* integer division: a zero divisor sets zero_div and stops the run */
    int zero_div;
} tg_ufunc_ctx;

/* Runs one call: the meta function builds the iteration, then every element goes through the
 * typed loop, the array map or the reference loop. Returns the result as a new reference, or
 * NULL with the error recorded. */
tg_tensor *tg__ufunc_cpu_run(tg_ufunc_call *call, const tg_ufunc_fns *fns,
                             const tg_ufunc_loops *loops);

#endif
