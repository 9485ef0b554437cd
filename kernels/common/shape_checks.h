/* Argument checks and the output shape of cat, shared by the CPU kernel (kernels/cpu/shape.c)
 * and the CUDA kernel (kernels/cuda/shape.cu): PyTorch's rules and messages. Static inline,
 * C and C++. */
#ifndef TG_SHAPE_CHECKS_H
#define TG_SHAPE_CHECKS_H

#include "tg_kutil.h"
#include <string.h>

/* PyTorch's canCast for real dtypes: no float -> integral, no non-bool -> bool. */
static inline bool tg__cat_can_cast(tg_dtype from, tg_dtype to)
{
    if (tg_dtype_is_floating(from) && tg_dtype_is_integral(to, true)) return false;
    if (from != TG_BOOL && to == TG_BOOL) return false;
    return true;
}

/* Legacy behaviour: 1-D tensors with no elements are ignored by cat. */
static inline bool tg__cat_skipped(const tg_tensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

/* Checks the inputs against the first non-skipped one and computes the output shape. */
static inline int tg__cat_shape(tg_tensor_list ts, int64_t *pdim, int64_t *shape, int64_t *ndim)
{
    const tg_tensor *ref = NULL;
    for (int64_t i = 0; i < ts.len; i++) {
        if (ts.data[i]->ndim == 0)
            return tg__fail("cat",
                            "zero-dimensional tensor (at position %lld) cannot be concatenated",
                            (long long)i);
        if (!ref && !tg__cat_skipped(ts.data[i])) ref = ts.data[i];
    }
    if (!ref) { /* every input is a legacy empty tensor */
        *ndim = 1;
        shape[0] = 0;
        int64_t d = tg__wrap_dim("cat", *pdim, 1);
        if (d < 0) return -1;
        *pdim = d;
        return 0;
    }
    int64_t d = tg__wrap_dim("cat", *pdim, ref->ndim);
    if (d < 0) return -1;
    *pdim = d;
    *ndim = ref->ndim;
    memcpy(shape, ref->sizes, sizeof(int64_t) * (size_t)ref->ndim);
    shape[d] = 0;
    for (int64_t i = 0; i < ts.len; i++) {
        const tg_tensor *t = ts.data[i];
        if (tg__cat_skipped(t)) continue;
        if (t->ndim != ref->ndim)
            return tg__fail("cat", "Tensors must have same number of dimensions: got %lld and %lld",
                            (long long)ref->ndim, (long long)t->ndim);
        for (int64_t k = 0; k < ref->ndim; k++) {
            if (k == d || t->sizes[k] == ref->sizes[k]) continue;
            return tg__fail(
                "cat",
                "Sizes of tensors must match except in dimension %lld. Expected size %lld "
                "but got size %lld for tensor number %lld in the list.",
                (long long)d, (long long)ref->sizes[k], (long long)t->sizes[k], (long long)i);
        }
        shape[d] += t->sizes[d];
    }
    return 0;
}

/* cat's out=: the promoted dtype must cast to out's, and no input may share out's storage.
 * 0 or -1 + error. */
static inline int tg__cat_check_out(tg_tensor_list tensors, tg_dtype dt, const tg_tensor *out)
{
    if (!tg__cat_can_cast(dt, out->dtype))
        return tg__fail("cat", "result type %s can't be cast to the desired output type %s",
                        tg__dtype_torch_name(dt), tg__dtype_torch_name(out->dtype));
    for (int64_t i = 0; i < tensors.len; i++)
        if (tensors.data[i]->storage == out->storage && tg__numel(tensors.data[i]) > 0)
            return tg__fail("cat",
                            "unsupported operation: the input tensors cannot refer to any "
                            "of the output memory locations. Found overlap in input tensor %lld.",
                            (long long)i);
    return 0;
}

/* cat's result (a new reference): out checked (tg__cat_check_out) and resized to shape, or a
 * new tensor of dtype dt on dev. NULL + error. */
static inline tg_tensor *tg__cat_result(tg_tensor_list tensors, tg_dtype dt, const int64_t *shape,
                                        int64_t ndim, tg_tensor *out, tg_device dev)
{
    if (!out) return tg__empty("cat", shape, ndim, dt, dev);
    if (tg__cat_check_out(tensors, dt, out) != 0 || tg__resize_out("cat", out, shape, ndim) != 0)
        return NULL;
    return tg_retain(out);
}

#endif
