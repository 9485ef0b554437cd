/* Argument checks of the fused optimizer steps (sgd_step_, adam_step_), shared by the CPU
 * kernels (kernels/cpu/optim.c) and the CUDA kernels (kernels/cuda/optim.cu): torch.optim's
 * messages. Static inline, C and C++. Each returns 0, or -1 with the error recorded. */
#ifndef TG_OPTIM_CHECKS_H
#define TG_OPTIM_CHECKS_H

#include "tg_kutil.h"
#include <string.h>

/* A state tensor or gradient must have the parameter's shape and dtype. */
static inline int tg__optim_check_operand(const char *op, const char *what, const tg_tensor *self,
                                          const tg_tensor *t)
{
    char a[256], b[256];
    if (t->ndim != self->ndim ||
        memcmp(t->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) != 0)
        return tg__fail(op, "%s has shape %s but the parameter has shape %s", what,
                        tg__shape_str(a, sizeof a, t->sizes, t->ndim),
                        tg__shape_str(b, sizeof b, self->sizes, self->ndim));
    if (t->dtype != self->dtype)
        return tg__fail(op, "%s has dtype %s but the parameter has dtype %s", what,
                        tg__dtype_torch_name(t->dtype), tg__dtype_torch_name(self->dtype));
    return 0;
}

static inline int tg__optim_check_param(const char *op, const tg_tensor *self)
{
    if (tg_dtype_is_floating(self->dtype)) return 0;
    return tg__fail(op, "expected a floating point parameter, but got %s",
                    tg__dtype_torch_name(self->dtype));
}

/* sgd_step_'s hyperparameters and tensors (the momentum buffer only matters with momentum). */
static inline int tg__sgd_check(const char *op, const tg_tensor *self, const tg_tensor *grad,
                                const tg_tensor *momentum_buffer, double lr, double momentum,
                                double dampening, double weight_decay, bool nesterov)
{
    if (!(lr >= 0)) return tg__fail(op, "Invalid learning rate: %g", lr);
    if (!(momentum >= 0)) return tg__fail(op, "Invalid momentum value: %g", momentum);
    if (!(weight_decay >= 0)) return tg__fail(op, "Invalid weight_decay value: %g", weight_decay);
    if (nesterov && (momentum <= 0 || dampening != 0))
        return tg__fail(op, "Nesterov momentum requires a momentum and zero dampening");
    if (momentum != 0 && !momentum_buffer)
        return tg__fail(op, "momentum_buffer is required when momentum != 0");
    if (tg__optim_check_param(op, self) != 0 ||
        tg__optim_check_operand(op, "grad", self, grad) != 0)
        return -1;
    if (momentum != 0 && tg__optim_check_operand(op, "momentum_buffer", self, momentum_buffer) != 0)
        return -1;
    return 0;
}

/* adam_step_'s hyperparameters and tensors (max_exp_avg_sq only with amsgrad). */
static inline int tg__adam_check(const char *op, const tg_tensor *self, const tg_tensor *grad,
                                 const tg_tensor *exp_avg, const tg_tensor *exp_avg_sq,
                                 const tg_tensor *max_exp_avg_sq, int64_t step, double lr,
                                 double beta1, double beta2, double eps, double weight_decay,
                                 bool amsgrad)
{
    if (!(lr >= 0)) return tg__fail(op, "Invalid learning rate: %g", lr);
    if (!(eps >= 0)) return tg__fail(op, "Invalid epsilon value: %g", eps);
    if (!(beta1 >= 0 && beta1 < 1))
        return tg__fail(op, "Invalid beta parameter at index 0: %g", beta1);
    if (!(beta2 >= 0 && beta2 < 1))
        return tg__fail(op, "Invalid beta parameter at index 1: %g", beta2);
    if (!(weight_decay >= 0)) return tg__fail(op, "Invalid weight_decay value: %g", weight_decay);
    if (step < 1)
        return tg__fail(op, "step counts from 1 (this step included), but got %lld",
                        (long long)step);
    if (amsgrad && !max_exp_avg_sq) return tg__fail(op, "max_exp_avg_sq is required with amsgrad");
    if (tg__optim_check_param(op, self) != 0 ||
        tg__optim_check_operand(op, "grad", self, grad) != 0 ||
        tg__optim_check_operand(op, "exp_avg", self, exp_avg) != 0 ||
        tg__optim_check_operand(op, "exp_avg_sq", self, exp_avg_sq) != 0)
        return -1;
    if (amsgrad && tg__optim_check_operand(op, "max_exp_avg_sq", self, max_exp_avg_sq) != 0)
        return -1;
    return 0;
}

#endif
