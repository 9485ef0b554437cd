/* native_dropout's argument checks, shared by the CPU kernel (kernels/cpu/dropout.c) and the
 * CUDA kernel (kernels/cuda/nn.cu): PyTorch's messages. Static inline, C and C++. */
#ifndef TG_DROPOUT_CHECKS_H
#define TG_DROPOUT_CHECKS_H

#include "tg_kutil.h"

/* *training: whether dropout applies (train is None or true). 0, or -1 with the error recorded:
 * a drop probability outside [0, 1] when training, or an input that is not floating. */
static inline int tg__native_dropout_check(const tg_tensor *input, double p, tg_opt_bool train, bool *training)
{
    const char *op = "native_dropout";
    *training = !train.has_value || train.value;
    if (*training && !(1 - p >= 0 && 1 - p <= 1)) {
        tg__error(op, "bernoulli_ expects p to be in [0, 1], but got p=%g", 1 - p);
        return -1;
    }
    if (!tg_dtype_is_floating(input->dtype)) {
        tg__error(op, "\"native_dropout\" not implemented for '%s'", tg__dtype_torch_name(input->dtype));
        return -1;
    }
    return 0;
}

#endif
