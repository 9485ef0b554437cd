/* Argument checks of nll_loss_forward / nll_loss_backward, shared by the CPU kernels
 * (kernels/cpu/loss.c) and the CUDA kernels (kernels/cuda/loss.cu): PyTorch's messages in
 * PyTorch's order. Static inline, C and C++. Each returns 0, or -1 with the error recorded. */
#ifndef TG_LOSS_CHECKS_H
#define TG_LOSS_CHECKS_H

#include "tg_kutil.h"

/* self (C) or (N, C), target () or (N) int64/uint8, weight (C) of self's dtype or NULL. */
static inline int tg__nll_check(const char *op, const tg_tensor *self, const tg_tensor *target,
                                const tg_tensor *weight)
{
    char s1[256], s2[256];
    if (self->ndim < 1 || self->ndim > 2) return tg__fail(op, "input tensor should be 1D or 2D");
    if (target->ndim > 1)
        return tg__fail(op, "0D or 1D target tensor expected, multi-target not supported");
    bool no_batch_dim = self->ndim == 1 && target->ndim == 0;
    if (!no_batch_dim && (target->ndim == 0 || self->sizes[0] != target->sizes[0]))
        return tg__fail(op, "size mismatch (got input: %s, target: %s)",
                        tg__shape_str(s1, sizeof s1, self->sizes, self->ndim),
                        tg__shape_str(s2, sizeof s2, target->sizes, target->ndim));
    int64_t c = self->sizes[self->ndim - 1];
    if (weight && !(weight->ndim == 1 && weight->sizes[0] == c))
        return tg__fail(
            op,
            "weight tensor should be defined either for all %lld classes or no classes but got weight tensor "
            "of shape: %s",
            (long long)c, tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim));
    if (!tg_dtype_is_floating(self->dtype))
        return tg__fail(op, "\"nll_loss_out_frame\" not implemented for '%s'",
                        tg__dtype_torch_name(self->dtype));
    if (target->dtype != TG_INT64 && target->dtype != TG_UINT8)
        return tg__fail(op, "expected scalar type Long but found %s",
                        tg__dtype_torch_name(target->dtype));
    if (weight && weight->dtype != self->dtype)
        return tg__fail(op, "expected scalar type %s but found %s",
                        tg__dtype_torch_name(self->dtype), tg__dtype_torch_name(weight->dtype));
    return 0;
}

/* nll_loss_backward's grad_output and total_weight: n samples, per_sample for reduction
 * 'none' on a batch. */
static inline int tg__nll_backward_check(const char *op, const tg_tensor *grad_output,
                                         const tg_tensor *total_weight, bool per_sample, int64_t n)
{
    char s1[256];
    if (tg__numel(total_weight) != 1)
        return tg__fail(
            op, "expected total_weight to be a single element tensor, got: %s (%lld elements)",
            tg__shape_str(s1, sizeof s1, total_weight->sizes, total_weight->ndim),
            (long long)tg__numel(total_weight));
    if (per_sample && (grad_output->ndim != 1 || grad_output->sizes[0] != n))
        return tg__fail(
            op,
            "Expected a tensor of dimension 1 and tensor.size[0] == %lld but got: dimension %lld and "
            "tensor.size[0] == %lld",
            (long long)n, (long long)grad_output->ndim,
            (long long)(grad_output->ndim ? grad_output->sizes[0] : 1));
    if (!per_sample && tg__numel(grad_output) != 1)
        return tg__fail(op, "Expected a single element grad_output tensor, but got: %s",
                        tg__shape_str(s1, sizeof s1, grad_output->sizes, grad_output->ndim));
    return 0;
}

#endif
