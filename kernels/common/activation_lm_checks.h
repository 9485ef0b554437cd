/* Argument checks and iteration setup of the language-model activations (gelu, silu, mish,
 * softplus and their backward operators), shared by the CPU kernels (kernels/cpu/
 * activation_lm.c) and the CUDA kernels (kernels/cuda/activation_lm.cu) so that both refuse
 * the same inputs in PyTorch 1.13's words. Each check returns 0, or records the error naming
 * the operator and returns -1. Compiles as C and as C++ (host code only).
 *
 * As for the vision activations (activation_checks.h): a forward operator is a structured
 * unary operator (the result, and an out=, have self's dtype); a backward operator is a binary
 * one over (grad_output, self), broadcast and promoted, into a new tensor or the user's
 * grad_input; only floating dtypes have a kernel, others are refused naming PyTorch's kernel. */
#ifndef TG_ACTIVATION_LM_CHECKS_H
#define TG_ACTIVATION_LM_CHECKS_H

#include "pointwise_checks.h"

typedef enum tg_actlm_op {
    TG_ACTLM_GELU,
    TG_ACTLM_GELU_BACKWARD,
    TG_ACTLM_SILU,
    TG_ACTLM_SILU_BACKWARD,
    TG_ACTLM_MISH,
    TG_ACTLM_MISH_BACKWARD,
    TG_ACTLM_SOFTPLUS,
    TG_ACTLM_SOFTPLUS_BACKWARD,
    TG_ACTLM_LOG_SIGMOID,
    TG_ACTLM_LOG_SIGMOID_BACKWARD,
    TG_ACTLM_NOPS
} tg_actlm_op;

static inline const char *tg__actlm_name(tg_actlm_op op)
{
    static const char *const names[TG_ACTLM_NOPS] = {
        "gelu",
        "gelu_backward",
        "silu",
        "silu_backward",
        "mish",
        "mish_backward",
        "softplus",
        "softplus_backward",
        "log_sigmoid_forward",
        "log_sigmoid_backward",
    };
    return names[op];
}

/* PyTorch's kernel names (the AT_DISPATCH names of its CPU and CUDA kernels). */
static inline const char *tg__actlm_kernel_name(tg_actlm_op op, bool cuda)
{
    static const char *const cpu[TG_ACTLM_NOPS] = {
        "GeluKernelImpl",  "GeluBackwardKernelImpl",   "silu_cpu",     "silu_backward_cpu",
        "mish_cpu",        "mish_backward_cpu",        "softplus_cpu", "softplus_backward_cpu",
        "log_sigmoid_cpu", "log_sigmoid_backward_cpu",
    };
    static const char *const gpu[TG_ACTLM_NOPS] = {
        "GeluCUDAKernelImpl",
        "GeluBackwardCUDAKernelImpl",
        "silu_cuda",
        "silu_backward_cuda",
        "mish_cuda",
        "mish_backward_cuda",
        "softplus_cuda",
        "softplus_backward_cuda",
        "log_sigmoid_forward_cuda",
        "log_sigmoid_backward_cuda",
    };
    return cuda ? gpu[op] : cpu[op];
}

/* gelu's approximate string: 0 with *tanh_approx set, or PyTorch's error (-1). */
static inline int tg__actlm_gelu_approximate(tg_actlm_op op, const char *approximate,
                                             bool *tanh_approx)
{
    if (approximate && strcmp(approximate, "tanh") == 0) {
        *tanh_approx = true;
        return 0;
    }
    if (approximate && strcmp(approximate, "none") == 0) {
        *tanh_approx = false;
        return 0;
    }
    return tg__fail(tg__actlm_name(op), "approximate argument must be either none or tanh.");
}

static inline int tg__actlm_check_dtype(tg_actlm_op op, tg_dtype t, bool cuda)
{
    if (tg_dtype_is_floating(t)) return 0;
    return tg__fail(tg__actlm_name(op), "\"%s\" not implemented for '%s'",
                    tg__actlm_kernel_name(op, cuda), tg__dtype_torch_name(t));
}

/* out = f(self): out NULL (allocated), self (in place) or the user's out= of self's dtype. */
static inline int tg__actlm_unary_iter_build(tg_iter *it, tg_actlm_op op, int flags,
                                             tg_tensor *self, tg_tensor *out, bool cuda)
{
    if (out && out != self && out->dtype != self->dtype)
        return tg__fail(tg__actlm_name(op), "Found dtype %s but expected %s",
                        tg__dtype_torch_name(out->dtype), tg__dtype_torch_name(self->dtype));
    tg_tensor *ins[1] = { self };
    if (tg__pw_iter_build(it, tg__actlm_name(op), flags, out, self, ins, 1) != 0) return -1;
    if (tg__actlm_check_dtype(op, it->dtype, cuda) != 0) {
        tg__iter_abort(it);
        return -1;
    }
    return 0;
}

/* grad_input = f(grad_output, self), broadcast and promoted; grad_input NULL (allocated) or
 * the user's. */
static inline int tg__actlm_binary_iter_build(tg_iter *it, tg_actlm_op op, int flags,
                                              tg_tensor *grad_output, tg_tensor *self,
                                              tg_tensor *grad_input, bool cuda)
{
    tg_tensor *ins[2] = { grad_output, self };
    if (tg__pw_iter_build(it, tg__actlm_name(op), flags, grad_input, NULL, ins, 2) != 0) return -1;
    if (tg__actlm_check_dtype(op, it->dtype, cuda) != 0) {
        tg__iter_abort(it);
        return -1;
    }
    return 0;
}

/* glu's checks (PyTorch 1.13's order): no scalars, dim in range (wrapped into *wrapped), an
 * even size along it, a floating dtype ("glu_cpu" / "glu_cuda" otherwise). */
static inline int tg__actlm_glu_check(const char *op, const tg_tensor *self, int64_t dim,
                                      int64_t *wrapped)
{
    const int64_t n = self->ndim;
    if (n == 0)
        return tg__fail(op, "glu does not support scalars because halving size must be even");
    if (dim < -n || dim >= n)
        return tg__fail(op,
                        "Dimension out of range (expected to be in range of [%lld, %lld], but got "
                        "%lld)",
                        (long long)-n, (long long)(n - 1), (long long)dim);
    *wrapped = dim < 0 ? dim + n : dim;
    if (self->sizes[*wrapped] % 2 != 0)
        return tg__fail(op, "Halving dimension must be even, but dimension %lld is size %lld",
                        (long long)*wrapped, (long long)self->sizes[*wrapped]);
    if (!tg_dtype_is_floating(self->dtype))
        return tg__fail(op, "\"%s\" not implemented for '%s'",
                        self->device.type == TG_CUDA ? "glu_cuda" : "glu_cpu",
                        tg__dtype_torch_name(self->dtype));
    return 0;
}

#endif
