/* CUDA threshold_backward (relu's gradient), as kernels/cpu/threshold.c:
 *
 *   grad_output, self (broadcastable, promoted to one dtype) -> out = self <= threshold ? 0 : grad_output
 *
 * The CPU compares in float for float32 and in double for every other dtype (float16 and
 * bfloat16 included); the functor's compute types say the same (tg_cuda_compute_for). The
 * launcher itself lives in pointwise.cuh. */
#include "pointwise.cuh"
#include "pointwise_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/threshold_backward.h"

struct tg_cuda_threshold_backward_fn {
    float tf;
    double td;
    __device__ float operator()(float g, float x) const { return x <= tf ? 0.0f : g; }
    __device__ double operator()(double g, double x) const { return x <= td ? 0.0 : g; }
};

template <class T> struct tg_cuda_compute_for<tg_cuda_threshold_backward_fn, T> {
    using type = double;
};
template <> struct tg_cuda_compute_for<tg_cuda_threshold_backward_fn, float> {
    using type = float;
};

extern "C" tg_tensor *tg__cuda_threshold_backward(tg_tensor *grad_output, tg_tensor *self,
                                                  double threshold)
{
    tg_iter it;
    tg_tensor *outs[1] = { NULL };
    tg_tensor *ins[2] = { grad_output, self };
    if (tg__iter_build(&it, "threshold_backward", TG_ITER_PROMOTE_INPUTS | TG_CUDA_ITER_FLAGS, outs,
                       1, ins, 2) != 0)
        return NULL;
    tg_cuda_threshold_backward_fn f = { (float)threshold, threshold };
    if (tg__pw_check_not_bool("threshold_backward", it.dtype, "threshold_backward", NULL) != 0 ||
        tg__cuda_pw_run<TG_CUDA_FLOATING, 2>(&it, f) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}
