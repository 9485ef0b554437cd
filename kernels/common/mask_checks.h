/* Argument checks of masked_fill_ and tril/triu, shared by the CPU kernels (kernels/cpu/mask.c),
 * the CUDA kernels (kernels/cuda/mask.cu) and the functional composites
 * (kernels/composite/mask.c): PyTorch's messages. Static inline, C and C++. Each returns 0, or
 * -1 with the error recorded. */
#ifndef TG_MASK_CHECKS_H
#define TG_MASK_CHECKS_H

#include "tg_kutil.h"
#include "pointwise_convert.h"

#include <string.h>

/* The mask must be bool; a value tensor must be zero-dim. */
static inline int tg__masked_fill_check(const char *op, const tg_tensor *mask,
                                        const tg_tensor *value)
{
    if (mask->dtype != TG_BOOL)
        return tg__fail(op, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                        tg__k_meta_name(mask->dtype));
    if (value && value->ndim != 0)
        return tg__fail(op,
                        "masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                        "with %lld dimension(s).",
                        (long long)value->ndim);
    return 0;
}

/* value converted once into self's dtype (PyTorch's cast of the Scalar), as raw bytes the
 * kernels copy into every masked element. */
static inline void tg__masked_fill_value_bytes(unsigned char bytes[16], tg_dtype dt, double value)
{
    memset(bytes, 0, 16);
    tg__pw_convert((char *)bytes, dt, (const char *)&value, TG_FLOAT64);
}

/* tril/triu work on the last two dims: PyTorch 1.13 wraps dim -2, which fails for < 2 dims. */
static inline int tg__tri_check(const char *op, const tg_tensor *self)
{
    if (self->ndim >= 2) return 0;
    return tg__fail(op, "Dimension out of range (expected to be in range of [-1, 0], but got -2)");
}

/* The kept columns [*lo, *hi) of row i of a (rows, cols) matrix: tril keeps col - i <= diagonal,
 * triu keeps col - i >= diagonal. */
static inline void tg__tri_row_range(bool lower, int64_t i, int64_t cols, int64_t diagonal,
                                     int64_t *lo, int64_t *hi)
{
    if (lower) {
        int64_t h = i + diagonal + 1;
        *lo = 0;
        *hi = h < 0 ? 0 : (h > cols ? cols : h);
    } else {
        int64_t l = i + diagonal;
        *lo = l < 0 ? 0 : (l > cols ? cols : l);
        *hi = cols;
    }
}

/* masked_fill_'s iteration on every backend: self written in place with its own dtype (the
 * mask broadcast to it, never the other way), read and written without casts. 0, or -1 with
 * the error recorded. */
static inline int tg__masked_fill_iter_build(tg_iter *it, tg_tensor *self, tg_tensor *mask)
{
    tg_tensor *outputs[1] = { self };
    tg_tensor *inputs[1] = { mask };
    int flags = TG_ITER_NO_BROADCAST_OUT | TG_ITER_NO_INPUT_CAST | TG_ITER_NO_OUTPUT_CAST |
                TG_ITER_KEEP_OUTPUT_DTYPE;
    return tg__iter_build(it, "masked_fill_", flags, outputs, 1, inputs, 1);
}

#endif
