/* native_dropout's argument checks and driver, shared by the CPU kernel (kernels/cpu/dropout.c)
 * and the CUDA kernel (kernels/cuda/dropout.cu): PyTorch's messages, and everything but the fill of
 * the output and the mask, which is the backend's. Static inline, C and C++. */
#ifndef TG_DROPOUT_CHECKS_H
#define TG_DROPOUT_CHECKS_H

#include "tg_kutil.h"

/* *training: whether dropout applies (train is None or true). 0, or -1 with the error recorded:
 * a drop probability outside [0, 1] when training, or an input that is not floating. */
static inline int tg__native_dropout_check(const tg_tensor *input, double p, tg_opt_bool train,
                                           bool *training)
{
    const char *op = "native_dropout";
    *training = tg_is_none_bool(train) || train != 0;
    if (*training && !(1 - p >= 0 && 1 - p <= 1))
        return tg__fail(op, "bernoulli_ expects p to be in [0, 1], but got p=%g", 1 - p);
    if (!tg_dtype_is_floating(input->dtype))
        return tg__fail(op, "\"native_dropout\" not implemented for '%s'",
                        tg__dtype_torch_name(input->dtype));
    return 0;
}

/* A backend's part of native_dropout: out and mask from x (all three contiguous, of x's shape
 * and on x's device; out in x's dtype, mask bool). Training: mask[i] = a draw below 1 - p,
 * out[i] = x[i] * mask[i] * scale with scale = 1 / (1 - p) (0 when p == 1); otherwise out is
 * a copy of x and mask is all true. 0, or -1 with the error recorded. */
typedef int (*tg_dropout_fill_fn)(const tg_tensor *x, tg_tensor *out, tg_tensor *mask, double p,
                                  bool training);

/* native_dropout on any backend: the checks, x = input made contiguous, out and mask allocated
 * like it, then the backend's fill. *output and *mask become new references (0), or stay NULL
 * with the error recorded (-1). */
static inline int tg__native_dropout_run(tg_tensor *input, double p, tg_opt_bool train,
                                         tg_dropout_fill_fn fill, tg_tensor **output,
                                         tg_tensor **mask)
{
    const char *op = "native_dropout";
    bool training;
    *output = *mask = NULL;
    if (tg__native_dropout_check(input, p, train, &training) != 0) return -1;
    tg_tensor *x = tg__contiguous(op, input);
    tg_tensor *o = x ? tg__empty_like(op, x, x->dtype) : NULL;
    tg_tensor *m = o ? tg__empty_like(op, x, TG_BOOL) : NULL;
    int rc = m ? fill(x, o, m, p, training) : -1;
    tg_release(x);
    if (rc != 0) {
        tg_release(o);
        tg_release(m);
        return -1;
    }
    *output = o;
    *mask = m;
    return 0;
}

#endif
