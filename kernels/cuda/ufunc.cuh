/* The CUDA side of the pointwise operators that tgen generates from `ufunc_inner_loop:`
 * (kernels/cpu/ufunc.h is the CPU side). generated/ufunc/<family>_cuda.cu holds, for each
 * operator, a functor whose operator() calls the scalar functions of
 * kernels/common/ufunc/<family>.h in each compute type, and the kernel, which fills a
 * tg_ufunc_call and calls tg__ufunc_cuda_run: the call's meta function (ufunc_meta.h, shared
 * with the CPU) builds the iteration, and pointwise.cuh's launcher runs the functor over it.
 *
 * A functor has the members `p` (the call's parameters in each compute type, set here) and
 * `zero_div` (set for an integer division, where a zero divisor raises the flag). */
#ifndef TG_CUDA_UFUNC_CUH
#define TG_CUDA_UFUNC_CUH

#include "pointwise.cuh"
#include "ufunc_meta.h"

/* What a generated functor's integer division does with a zero divisor: raises the flag read
 * after the kernel (the result is discarded with the error). */
__device__ __forceinline__ int64_t tg__ufunc_cuda_zero_div(int *flag)
{
    *flag = 1;
    return 0;
}

/* Runs one call of an operator with NIN tensor inputs whose scalar functions exist for the
 * compute kinds KINDS (the iterator promotes integers to float for a floating-only one). */
template <unsigned KINDS, int NIN, class F>
static tg_tensor *tg__ufunc_cuda_run(tg_ufunc_call *call, F f)
{
    tg_iter it;
    call->backend = "cuda";
    if (call->meta(&it, call, TG_CUDA_ITER_FLAGS) != 0) return NULL;
    tg__ufunc_params(call, it.dtype, &f.p);
    const bool flagged = call->int_div && tg__pw_kind(it.dtype) == TG_PW_I64 && it.numel > 0;
    tg_cuda_flag zero_div;
    const int dev = tg__cuda_iter_device(&it);
    if (flagged && zero_div.init(call->op, dev < 0 ? 0 : dev) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    f.zero_div = flagged ? zero_div.dev : nullptr;
    int hit = 0;
    if (tg__cuda_pw_run<KINDS, NIN>(&it, f) != 0 || (flagged && (hit = zero_div.read()) < 0)) {
        tg__iter_abort(&it);
        return NULL;
    }
    if (hit) {
        tg__iter_abort(&it);
        tg__error(call->op, "ZeroDivisionError");
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

#endif
