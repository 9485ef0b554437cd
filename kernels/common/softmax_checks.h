/* Argument checks of _softmax / _log_softmax and their backward data ops, shared by the CPU
 * kernels (kernels/cpu/softmax.c) and the CUDA kernels (kernels/cuda/softmax.cu):
 * PyTorch's messages. Static inline, C and C++. Each returns 0, or -1 with the error recorded. */
#ifndef TG_SOFTMAX_CHECKS_H
#define TG_SOFTMAX_CHECKS_H

#include "tg_kutil.h"
#include <string.h>

/* Floating inputs only; `d` is the wrapped dim (PyTorch names the last-dim kernel). */
static inline int tg__softmax_check_dtype(const char *op, bool lg, const tg_tensor *self, int64_t d)
{
    if (tg_dtype_is_floating(self->dtype)) return 0;
    bool last = self->ndim == 0 || d == self->ndim - 1;
    return tg__fail(op, "\"%s%s_kernel_impl\" not implemented for '%s'",
                    lg ? "log_softmax" : "softmax", last ? "_lastdim" : "",
                    tg__dtype_torch_name(self->dtype));
}

/* grad_output and output of one shape, a floating grad_output, and dim wrapped into *d. */
static inline int tg__softmax_backward_check(const char *op, const char *check_name,
                                             const tg_tensor *grad_output, const tg_tensor *output,
                                             int64_t dim, int64_t *d)
{
    if (grad_output->ndim != output->ndim ||
        memcmp(grad_output->sizes, output->sizes, sizeof(int64_t) * (size_t)output->ndim) != 0) {
        char a[256], b[256];
        return tg__fail(
            op,
            "Expected tensor for argument #1 'grad_output' to have the same size as tensor for argument "
            "#2 'output'; but %s does not equal %s (while checking arguments for %s)",
            tg__shape_str(a, sizeof a, grad_output->sizes, grad_output->ndim),
            tg__shape_str(b, sizeof b, output->sizes, output->ndim), check_name);
    }
    if (!tg_dtype_is_floating(grad_output->dtype))
        return tg__fail(op, "\"%s\" not implemented for '%s'", op,
                        tg__dtype_torch_name(grad_output->dtype));
    *d = tg__wrap_dim(op, dim, output->ndim);
    return *d < 0 ? -1 : 0;
}

#endif
