/* Argument checks and iteration setup of the activation operators (leaky_relu, hardswish,
 * hardsigmoid, elu and the backward operators of those and of hardtanh), shared by the CPU
 * kernels (kernels/cpu/activation.c) and the CUDA kernels (kernels/cuda/activation.cu), so
 * that both backends refuse the same inputs with PyTorch 1.13's words and build the same
 * iterations. Each check returns 0, or records the error naming `op` and returns -1. Compiles
 * as C and as C++ (host code only).
 *
 * What PyTorch does, and this reproduces:
 *   - the forward operators are structured unary operators (TensorIterator's unary_op): the
 *     result has self's dtype, an out= tensor must have it too ("Found dtype Double but
 *     expected Float"), and only floating dtypes have a kernel;
 *   - the backward operators are binary operators over (grad_output, self) that broadcast and
 *     promote the two to one dtype, floating only;
 *   - a dtype without a kernel is refused naming PyTorch's kernel: "\"leaky_relu_cpu\" not
 *     implemented for 'Long'" (kernel names are PyTorch's, hardtanh_backward's CPU one
 *     included: "hardshrink_backward_cpu"). float16 has no CPU kernel in PyTorch 1.13; we
 *     provide one (PyTorch's CUDA kernels have it). */
#ifndef TG_ACTIVATION_CHECKS_H
#define TG_ACTIVATION_CHECKS_H

#include "pointwise_checks.h"

/* The operators, for the tables below and the kernels' dispatch. */
typedef enum tg_act_op {
    TG_ACT_LEAKY_RELU,
    TG_ACT_LEAKY_RELU_BACKWARD,
    TG_ACT_HARDTANH_BACKWARD,
    TG_ACT_HARDSWISH,
    TG_ACT_HARDSWISH_BACKWARD,
    TG_ACT_HARDSIGMOID,
    TG_ACT_HARDSIGMOID_BACKWARD,
    TG_ACT_ELU,
    TG_ACT_ELU_BACKWARD,
    TG_ACT_NOPS
} tg_act_op;

/* The operator's name (for errors) and PyTorch's kernel names on each backend. */
static inline const char *tg__act_name(tg_act_op op)
{
    static const char *const names[TG_ACT_NOPS] = {
        "leaky_relu",         "leaky_relu_backward", "hardtanh_backward",    "hardswish",
        "hardswish_backward", "hardsigmoid",         "hardsigmoid_backward", "elu",
        "elu_backward",
    };
    return names[op];
}

static inline const char *tg__act_kernel_name(tg_act_op op, bool cuda)
{
    static const char *const cpu[TG_ACT_NOPS] = {
        "leaky_relu_cpu",          "leaky_relu_backward_cpu",
        "hardshrink_backward_cpu", "hardswish_cpu",
        "hardswish_backward_cpu",  "hardsigmoid_cpu",
        "hardsigmoid_backward",    "elu_cpu",
        "elu_backward_cpu",
    };
    static const char *const gpu[TG_ACT_NOPS] = {
        "leaky_relu_cuda",           "leaky_relu_backward_cuda",
        "hardtanh_backward_cuda",    "hardswish_cuda",
        "hardswish_backward_cuda",   "hardsigmoid_cuda",
        "hardsigmoid_backward_cuda", "elu_cuda",
        "elu_backward_cuda",
    };
    return cuda ? gpu[op] : cpu[op];
}

/* A floating computation dtype, else PyTorch's dispatch error. */
static inline int tg__act_check_dtype(tg_act_op op, tg_dtype t, bool cuda)
{
    if (tg_dtype_is_floating(t)) return 0;
    return tg__fail(tg__act_name(op), "\"%s\" not implemented for '%s'",
                    tg__act_kernel_name(op, cuda), tg__dtype_torch_name(t));
}

/* leaky_relu_backward and elu_backward from the result (of the in-place forward) need a
 * non-negative slope: the result's sign is the input's only then. */
static inline int tg__act_check_is_result(tg_act_op op, bool is_result, double slope)
{
    if (!is_result || slope >= 0.0) return 0;
    if (op == TG_ACT_LEAKY_RELU_BACKWARD)
        return tg__fail(tg__act_name(op),
                        "In-place leakyReLu backward calculation is triggered with a negative "
                        "slope which is not supported. This is caused by calling in-place "
                        "forward function with a negative slope, please call out-of-place "
                        "version instead. File an issue at https://github.com/pytorch/pytorch "
                        "if you do require supporting in-place leakRelu backward calculation "
                        "with negative slope");
    return tg__fail(tg__act_name(op),
                    "In-place elu backward calculation is triggered with a negative slope which "
                    "is not supported. This is caused by calling in-place forward function with "
                    "a negative slope, please call out-of-place version instead.");
}

/* The iteration of a forward operator: out = f(self), out NULL (allocated), self (in place)
 * or the user's out=, which must have self's dtype; then the dtype check. `flags` are the
 * backend's. 0, or -1 with the error recorded (nothing held). */
static inline int tg__act_unary_iter_build(tg_iter *it, tg_act_op op, int flags, tg_tensor *self,
                                           tg_tensor *out, bool cuda)
{
    if (out && out != self && out->dtype != self->dtype)
        return tg__fail(tg__act_name(op), "Found dtype %s but expected %s",
                        tg__dtype_torch_name(out->dtype), tg__dtype_torch_name(self->dtype));
    tg_tensor *ins[1] = { self };
    if (tg__pw_iter_build(it, tg__act_name(op), flags, out, self, ins, 1) != 0) return -1;
    if (tg__act_check_dtype(op, it->dtype, cuda) != 0) {
        tg__iter_abort(it);
        return -1;
    }
    return 0;
}

/* The iteration of a backward operator: out = f(grad_output, self), broadcast and promoted
 * to one (floating) dtype, out allocated. 0, or -1 with the error recorded (nothing held). */
static inline int tg__act_binary_iter_build(tg_iter *it, tg_act_op op, int flags,
                                            tg_tensor *grad_output, tg_tensor *self, bool cuda)
{
    tg_tensor *ins[2] = { grad_output, self };
    if (tg__pw_iter_build(it, tg__act_name(op), flags, NULL, NULL, ins, 2) != 0) return -1;
    if (tg__act_check_dtype(op, it->dtype, cuda) != 0) {
        tg__iter_abort(it);
        return -1;
    }
    return 0;
}

/* elu's coefficients in a compute type: negcoef = alpha * scale (multiplied in that type, as
 * PyTorch's alpha.to<T>() * scale.to<T>()), poscoef = scale, negiptcoef = input_scale. */
typedef struct tg_act_elu_coefs_f32 {
    float neg, pos, negipt;
} tg_act_elu_coefs_f32;
typedef struct tg_act_elu_coefs_f64 {
    double neg, pos, negipt;
} tg_act_elu_coefs_f64;

static inline tg_act_elu_coefs_f32 tg__act_elu_coefs_f32(double alpha, double scale,
                                                         double input_scale)
{
    tg_act_elu_coefs_f32 c = { (float)alpha * (float)scale, (float)scale, (float)input_scale };
    return c;
}
static inline tg_act_elu_coefs_f64 tg__act_elu_coefs_f64(double alpha, double scale,
                                                         double input_scale)
{
    tg_act_elu_coefs_f64 c = { alpha * scale, scale, input_scale };
    return c;
}

#endif
