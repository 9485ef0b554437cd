/* CUDA kernels of the language-model activations: gelu, silu, mish, softplus (structured out=
 * kernels) and gelu_backward, silu_backward, mish_backward, softplus_backward. The same
 * operators, checks and scalar functions as kernels/cpu/activation_lm.c:
 *
 *   forward:  self (any shape, floating) -> out (self's shape and dtype; out= of self's dtype)
 *   backward: grad_output, self (broadcast, promoted to one floating dtype) -> grad_input
 *
 * The scalar functions (kernels/common/activation_lm_scalar.h) run in the compute type (float
 * for float16, bfloat16 and float32, double for float64) through the generic elementwise
 * launcher (pointwise.cuh), with CUDA's erff / tanhf / expf / log1pf. */
#include "pointwise.cuh"
#include "activation_lm_checks.h"
#include "activation_lm_scalar.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/gelu.h"
#include "kernels/gelu_backward.h"
#include "kernels/log_sigmoid_backward.h"
#include "kernels/log_sigmoid_forward.h"
#include "kernels/mish.h"
#include "kernels/mish_backward.h"
#include "kernels/silu.h"
#include "kernels/silu_backward.h"
#include "kernels/softplus.h"
#include "kernels/softplus_backward.h"

/* ------------------------------------------------------------------ functors */

struct tg_cuda_gelu_fn {
    bool tanh_approx;
    __device__ float operator()(float x) const { return tg__pw_gelu_f32(x, tanh_approx); }
    __device__ double operator()(double x) const { return tg__pw_gelu_f64(x, tanh_approx); }
};

struct tg_cuda_silu_fn {
    __device__ float operator()(float x) const { return tg__pw_silu_f32(x); }
    __device__ double operator()(double x) const { return tg__pw_silu_f64(x); }
};

struct tg_cuda_mish_fn {
    __device__ float operator()(float x) const { return tg__pw_mish_f32(x); }
    __device__ double operator()(double x) const { return tg__pw_mish_f64(x); }
};

struct tg_cuda_softplus_fn {
    float bf, tf;
    double bd, td;
    __device__ float operator()(float x) const { return tg__pw_softplus_f32(x, bf, tf); }
    __device__ double operator()(double x) const { return tg__pw_softplus_f64(x, bd, td); }
};

struct tg_cuda_gelu_backward_fn {
    bool tanh_approx;
    __device__ float operator()(float g, float x) const
    {
        return tg__pw_gelu_backward_f32(g, x, tanh_approx);
    }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_gelu_backward_f64(g, x, tanh_approx);
    }
};

struct tg_cuda_silu_backward_fn {
    __device__ float operator()(float g, float x) const { return tg__pw_silu_backward_f32(g, x); }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_silu_backward_f64(g, x);
    }
};

struct tg_cuda_mish_backward_fn {
    __device__ float operator()(float g, float x) const { return tg__pw_mish_backward_f32(g, x); }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_mish_backward_f64(g, x);
    }
};

struct tg_cuda_softplus_backward_fn {
    float bf, tf;
    double bd, td;
    __device__ float operator()(float g, float x) const
    {
        return tg__pw_softplus_backward_f32(g, x, bf, tf);
    }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_softplus_backward_f64(g, x, bd, td);
    }
};

struct tg_cuda_log_sigmoid_fn {
    __device__ float operator()(float x) const { return tg__pw_log_sigmoid_f32(x); }
    __device__ double operator()(double x) const { return tg__pw_log_sigmoid_f64(x); }
};

struct tg_cuda_log_sigmoid_buffer_fn {
    __device__ float operator()(float x) const { return tg__pw_log_sigmoid_buffer_f32(x); }
    __device__ double operator()(double x) const { return tg__pw_log_sigmoid_buffer_f64(x); }
};

struct tg_cuda_log_sigmoid_backward_fn {
    __device__ float operator()(float g, float x) const
    {
        return tg__pw_log_sigmoid_backward_f32(g, x);
    }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_log_sigmoid_backward_f64(g, x);
    }
};

/* ------------------------------------------------------------------ runners */

template <class F>
static tg_tensor *actlm_unary(tg_actlm_op op, const F &f, tg_tensor *self, tg_tensor *out)
{
    tg_iter it;
    if (tg__actlm_unary_iter_build(&it, op, TG_CUDA_ITER_FLAGS, self, out, true) != 0) return NULL;
    if (tg__cuda_pw_run<TG_CUDA_FLOATING, 1>(&it, f) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

template <class F>
static tg_tensor *actlm_binary(tg_actlm_op op, const F &f, tg_tensor *grad_output, tg_tensor *self,
                               tg_tensor *grad_input)
{
    tg_iter it;
    if (tg__actlm_binary_iter_build(&it, op, TG_CUDA_ITER_FLAGS, grad_output, self, grad_input,
                                    true) != 0)
        return NULL;
    if (tg__cuda_pw_run<TG_CUDA_FLOATING, 2>(&it, f) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

/* ------------------------------------------------------------------ forward */

extern "C" tg_tensor *tg__cuda_gelu_out(tg_tensor *self, const char *approximate, tg_tensor *out)
{
    bool tanh_approx;
    if (tg__actlm_gelu_approximate(TG_ACTLM_GELU, approximate, &tanh_approx) != 0) return NULL;
    tg_cuda_gelu_fn f = { tanh_approx };
    return actlm_unary(TG_ACTLM_GELU, f, self, out);
}

extern "C" tg_tensor *tg__cuda_silu_out(tg_tensor *self, tg_tensor *out)
{
    return actlm_unary(TG_ACTLM_SILU, tg_cuda_silu_fn{}, self, out);
}

extern "C" tg_tensor *tg__cuda_mish_out(tg_tensor *self, tg_tensor *out)
{
    return actlm_unary(TG_ACTLM_MISH, tg_cuda_mish_fn{}, self, out);
}

extern "C" tg_tensor *tg__cuda_softplus_out(tg_tensor *self, double beta, double threshold,
                                            tg_tensor *out)
{
    tg_cuda_softplus_fn f = { (float)beta, (float)threshold, beta, threshold };
    return actlm_unary(TG_ACTLM_SOFTPLUS, f, self, out);
}

/* ------------------------------------------------------------------ backward */

extern "C" tg_tensor *tg__cuda_gelu_backward_out(tg_tensor *grad_output, tg_tensor *self,
                                                 const char *approximate, tg_tensor *grad_input)
{
    bool tanh_approx;
    if (tg__actlm_gelu_approximate(TG_ACTLM_GELU_BACKWARD, approximate, &tanh_approx) != 0)
        return NULL;
    tg_cuda_gelu_backward_fn f = { tanh_approx };
    return actlm_binary(TG_ACTLM_GELU_BACKWARD, f, grad_output, self, grad_input);
}

extern "C" tg_tensor *tg__cuda_silu_backward_out(tg_tensor *grad_output, tg_tensor *self,
                                                 tg_tensor *grad_input)
{
    return actlm_binary(TG_ACTLM_SILU_BACKWARD, tg_cuda_silu_backward_fn{}, grad_output, self,
                        grad_input);
}

extern "C" tg_tensor *tg__cuda_mish_backward(tg_tensor *grad_output, tg_tensor *self)
{
    return actlm_binary(TG_ACTLM_MISH_BACKWARD, tg_cuda_mish_backward_fn{}, grad_output, self,
                        NULL);
}

extern "C" tg_tensor *tg__cuda_softplus_backward_out(tg_tensor *grad_output, tg_tensor *self,
                                                     double beta, double threshold,
                                                     tg_tensor *grad_input)
{
    tg_cuda_softplus_backward_fn f = { (float)beta, (float)threshold, beta, threshold };
    return actlm_binary(TG_ACTLM_SOFTPLUS_BACKWARD, f, grad_output, self, grad_input);
}

/* ------------------------------------------------------------------ log_sigmoid */

extern "C" tg_output_buffer tg__cuda_log_sigmoid_forward(tg_tensor *self)
{
    tg_output_buffer r = { NULL, NULL };
    r.output = actlm_unary(TG_ACTLM_LOG_SIGMOID, tg_cuda_log_sigmoid_fn{}, self, NULL);
    if (!r.output) return r;
    r.buffer = actlm_unary(TG_ACTLM_LOG_SIGMOID, tg_cuda_log_sigmoid_buffer_fn{}, self, NULL);
    if (!r.buffer) {
        tg_release(r.output);
        r.output = NULL;
    }
    return r;
}

/* buffer is recomputed from self, as PyTorch's CUDA kernel does. */
extern "C" tg_tensor *tg__cuda_log_sigmoid_backward(tg_tensor *grad_output, tg_tensor *self,
                                                    tg_tensor *buffer)
{
    (void)buffer;
    return actlm_binary(TG_ACTLM_LOG_SIGMOID_BACKWARD, tg_cuda_log_sigmoid_backward_fn{},
                        grad_output, self, NULL);
}
