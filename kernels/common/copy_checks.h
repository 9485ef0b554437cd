/* copy_'s rules shared by the CPU kernel (kernels/cpu/copy.c) and the CUDA kernel
 * (kernels/cuda/copy.cu): when a copy is a no-op or an overlap error, and the iterator that
 * carries the general case. Static inline, C and C++. */
#ifndef TG_COPY_CHECKS_H
#define TG_COPY_CHECKS_H

#include "tg_kutil.h"

/* PyTorch's overlap rule for contiguous operands on one storage (strided aliasing is not
 * detected, as there): 1 when self and src are the same memory, dtype and shape (the copy is a
 * no-op), -1 with the error recorded when their bytes partly overlap, else 0. */
static inline int tg__copy_check_overlap(const tg_tensor *self, const tg_tensor *src)
{
    if (self->storage != src->storage || !tg__is_contiguous(self) || !tg__is_contiguous(src))
        return 0;
    const char *d = (const char *)tg_tensor_data(self), *s = (const char *)tg_tensor_data(src);
    int64_t dn = tg__numel(self) * (int64_t)tg_dtype_size(self->dtype);
    int64_t sn = tg__numel(src) * (int64_t)tg_dtype_size(src->dtype);
    if (d == s && self->dtype == src->dtype && tg__same_sizes(self, src)) return 1;
    if (dn > 0 && sn > 0 && d < s + sn && s < d + dn)
        return tg__fail("copy_", "unsupported operation: some elements of the input tensor and the "
                                 "written-to tensor refer to a single memory location. Please "
                                 "clone() the tensor before performing the operation.");
    return 0;
}

/* The cases every backend's copy_ settles before copying: self is src, a copy between devices
 * (`across`: the runtime moves the bytes, tg__copy_into), the same memory (a no-op) and an
 * overlap error. true when the call is settled, with *res its result (a new reference to
 * self, or NULL after an error); false when the backend copies. */
static inline bool tg__copy_settled(tg_tensor *self, tg_tensor *src, bool across, tg_tensor **res)
{
    *res = NULL;
    int overlap = 1;
    if (self != src) {
        if (across) overlap = tg__copy_into("copy_", self, src) == 0 ? 1 : -1;
        else overlap = tg__copy_check_overlap(self, src);
    }
    if (overlap > 0) *res = tg_retain(self);
    return overlap != 0;
}

/* The iterator of copy_'s general case: self keeps its dtype and shape, src broadcasts to it;
 * `flags` adds the backend's. 0 or -1 + error. */
static inline int tg__copy_iter_build(tg_iter *it, tg_tensor *self, tg_tensor *src, int flags)
{
    tg_tensor *outs[1] = { self };
    tg_tensor *ins[1] = { src };
    return tg__iter_build(it, "copy_", TG_ITER_KEEP_OUTPUT_DTYPE | TG_ITER_NO_BROADCAST_OUT | flags,
                          outs, 1, ins, 1);
}

#endif
