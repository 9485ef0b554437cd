/* glu's argument checks, shared by its composite kernels (kernels/composite/activation_lm.c)
 * on every device. The other language-model activations are generated pointwise operators
 * (kernels/common/ufunc/activation_lm.h, ufunc_meta.c). Compiles as C and as C++ (host code
 * only). */
#ifndef TG_ACTIVATION_LM_CHECKS_H
#define TG_ACTIVATION_LM_CHECKS_H

#include "pointwise_checks.h"

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
