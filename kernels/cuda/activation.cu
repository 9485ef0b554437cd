/* CUDA activation kernels: leaky_relu, hardswish, hardsigmoid, elu (structured out= kernels)
 * and leaky_relu_backward, hardtanh_backward, hardswish_backward, hardsigmoid_backward,
 * elu_backward. The same operators, checks and scalar functions as kernels/cpu/activation.c:
 *
 *   forward:  self (any shape, floating) -> out (self's shape and dtype; out= of self's dtype)
 *   backward: grad_output, self (broadcast, promoted to one floating dtype) -> a new tensor
 *
 * The scalar functions (kernels/common/pointwise_scalar.h) run in the compute type (float for
 * float16, bfloat16 and float32, double for float64) through the generic elementwise launcher
 * (pointwise.cuh); the Scalar parameters are converted to the compute type on the host, as the
 * CPU kernels do. float32 elu uses tg__pw_exp_f32, the CPU's own exp. */
#include "pointwise.cuh"
#include "activation_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/elu.h"
#include "kernels/elu_backward.h"
#include "kernels/hardsigmoid.h"
#include "kernels/hardsigmoid_backward.h"
#include "kernels/hardswish.h"
#include "kernels/hardswish_backward.h"
#include "kernels/hardtanh_backward.h"
#include "kernels/leaky_relu.h"
#include "kernels/leaky_relu_backward.h"

/* ------------------------------------------------------------------ functors */

struct tg_cuda_leaky_relu_fn {
    float sf;
    double sd;
    __device__ float operator()(float x) const { return tg__pw_leaky_relu_f32(x, sf); }
    __device__ double operator()(double x) const { return tg__pw_leaky_relu_f64(x, sd); }
};

struct tg_cuda_hardswish_fn {
    __device__ float operator()(float x) const { return tg__pw_hardswish_f32(x); }
    __device__ double operator()(double x) const { return tg__pw_hardswish_f64(x); }
};

struct tg_cuda_hardsigmoid_fn {
    __device__ float operator()(float x) const { return tg__pw_hardsigmoid_f32(x); }
    __device__ double operator()(double x) const { return tg__pw_hardsigmoid_f64(x); }
};

struct tg_cuda_elu_fn {
    tg_act_elu_coefs_f32 cf;
    tg_act_elu_coefs_f64 cd;
    __device__ float operator()(float x) const
    {
        return tg__pw_elu_f32(x, cf.neg, cf.pos, cf.negipt);
    }
    __device__ double operator()(double x) const
    {
        return tg__pw_elu_f64(x, cd.neg, cd.pos, cd.negipt);
    }
};

struct tg_cuda_leaky_relu_backward_fn {
    float sf;
    double sd;
    __device__ float operator()(float g, float x) const
    {
        return tg__pw_leaky_relu_backward_f32(g, x, sf);
    }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_leaky_relu_backward_f64(g, x, sd);
    }
};

struct tg_cuda_hardtanh_backward_fn {
    float lof, hif;
    double lod, hid;
    __device__ float operator()(float g, float x) const
    {
        return tg__pw_hardtanh_backward_f32(g, x, lof, hif);
    }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_hardtanh_backward_f64(g, x, lod, hid);
    }
};

struct tg_cuda_hardswish_backward_fn {
    __device__ float operator()(float g, float x) const
    {
        return tg__pw_hardswish_backward_f32(g, x);
    }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_hardswish_backward_f64(g, x);
    }
};

struct tg_cuda_hardsigmoid_backward_fn {
    __device__ float operator()(float g, float x) const
    {
        return tg__pw_hardsigmoid_backward_f32(g, x);
    }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_hardsigmoid_backward_f64(g, x);
    }
};

struct tg_cuda_elu_backward_fn {
    tg_act_elu_coefs_f32 cf;
    tg_act_elu_coefs_f64 cd;
    bool is_result;
    __device__ float operator()(float g, float x) const
    {
        return tg__pw_elu_backward_f32(g, x, cf.neg, cf.pos, cf.negipt, is_result);
    }
    __device__ double operator()(double g, double x) const
    {
        return tg__pw_elu_backward_f64(g, x, cd.neg, cd.pos, cd.negipt, is_result);
    }
};

/* ------------------------------------------------------------------ runners */

template <class F>
static tg_tensor *act_unary(tg_act_op op, const F &f, tg_tensor *self, tg_tensor *out)
{
    tg_iter it;
    if (tg__act_unary_iter_build(&it, op, TG_CUDA_ITER_FLAGS, self, out, true) != 0) return NULL;
    if (tg__cuda_pw_run<TG_CUDA_FLOATING, 1>(&it, f) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

template <class F>
static tg_tensor *act_binary(tg_act_op op, const F &f, tg_tensor *grad_output, tg_tensor *self)
{
    tg_iter it;
    if (tg__act_binary_iter_build(&it, op, TG_CUDA_ITER_FLAGS, grad_output, self, true) != 0)
        return NULL;
    if (tg__cuda_pw_run<TG_CUDA_FLOATING, 2>(&it, f) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

/* ------------------------------------------------------------------ forward */

extern "C" tg_tensor *tg__cuda_leaky_relu_out(tg_tensor *self, double negative_slope,
                                              tg_tensor *out)
{
    tg_cuda_leaky_relu_fn f = { (float)negative_slope, negative_slope };
    return act_unary(TG_ACT_LEAKY_RELU, f, self, out);
}

extern "C" tg_tensor *tg__cuda_hardswish_out(tg_tensor *self, tg_tensor *out)
{
    return act_unary(TG_ACT_HARDSWISH, tg_cuda_hardswish_fn{}, self, out);
}

extern "C" tg_tensor *tg__cuda_hardsigmoid_out(tg_tensor *self, tg_tensor *out)
{
    return act_unary(TG_ACT_HARDSIGMOID, tg_cuda_hardsigmoid_fn{}, self, out);
}

extern "C" tg_tensor *tg__cuda_elu_out(tg_tensor *self, double alpha, double scale,
                                       double input_scale, tg_tensor *out)
{
    tg_cuda_elu_fn f = { tg__act_elu_coefs_f32(alpha, scale, input_scale),
                         tg__act_elu_coefs_f64(alpha, scale, input_scale) };
    return act_unary(TG_ACT_ELU, f, self, out);
}

/* ------------------------------------------------------------------ backward */

extern "C" tg_tensor *tg__cuda_leaky_relu_backward(tg_tensor *grad_output, tg_tensor *self,
                                                   double negative_slope, bool self_is_result)
{
    if (tg__act_check_is_result(TG_ACT_LEAKY_RELU_BACKWARD, self_is_result, negative_slope) != 0)
        return NULL;
    tg_cuda_leaky_relu_backward_fn f = { (float)negative_slope, negative_slope };
    return act_binary(TG_ACT_LEAKY_RELU_BACKWARD, f, grad_output, self);
}

extern "C" tg_tensor *tg__cuda_hardtanh_backward(tg_tensor *grad_output, tg_tensor *self,
                                                 double min_val, double max_val)
{
    tg_cuda_hardtanh_backward_fn f = { (float)min_val, (float)max_val, min_val, max_val };
    return act_binary(TG_ACT_HARDTANH_BACKWARD, f, grad_output, self);
}

extern "C" tg_tensor *tg__cuda_hardswish_backward(tg_tensor *grad_output, tg_tensor *self)
{
    return act_binary(TG_ACT_HARDSWISH_BACKWARD, tg_cuda_hardswish_backward_fn{}, grad_output,
                      self);
}

extern "C" tg_tensor *tg__cuda_hardsigmoid_backward(tg_tensor *grad_output, tg_tensor *self)
{
    return act_binary(TG_ACT_HARDSIGMOID_BACKWARD, tg_cuda_hardsigmoid_backward_fn{}, grad_output,
                      self);
}

extern "C" tg_tensor *tg__cuda_elu_backward(tg_tensor *grad_output, double alpha, double scale,
                                            double input_scale, bool is_result,
                                            tg_tensor *self_or_result)
{
    if (tg__act_check_is_result(TG_ACT_ELU_BACKWARD, is_result, alpha) != 0) return NULL;
    tg_cuda_elu_backward_fn f = { tg__act_elu_coefs_f32(alpha, scale, input_scale),
                                  tg__act_elu_coefs_f64(alpha, scale, input_scale), is_result };
    return act_binary(TG_ACT_ELU_BACKWARD, f, grad_output, self_or_result);
}
