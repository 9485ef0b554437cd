/* cat on CUDA: concatenation along a dim, with the CPU kernel's rules and messages
 * (kernels/cpu/shape.c). Each input (any strides, any dtype castable to the result's) is
 * copied into its slab of the output by one launch of the general strided copy
 * (tg__cuda_copy_strided): the slab is the output's strides with the input's sizes, starting at
 * the input's offset along dim. */
#include "tg_cuda.cuh"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/cat.h"
#include "shape_checks.h" /* the CPU kernel's checks and output shape */

extern "C" tg_tensor *tg__cuda_cat_out(tg_tensor_list tensors, int64_t dim, tg_tensor *out)
{
    if (tensors.len == 0)
        return (tg_tensor *)tg__error("cat", "torch.cat(): expected a non-empty list of Tensors");
    int64_t shape[TG_MAX_DIMS], ndim = 0;
    if (tg__cat_shape(tensors, &dim, shape, &ndim) != 0) return NULL;
    tg_device dev = tensors.data[0]->device;
    tg_dtype dt = tensors.data[0]->dtype;
    for (int64_t i = 1; i < tensors.len; i++) {
        if (tg__cuda_same_device("cat", tensors.data[0], tensors.data[i])) return NULL;
        dt = tg_promote_types(dt, tensors.data[i]->dtype);
    }
    if (tg__cuda_same_device("cat", tensors.data[0], out)) return NULL;
    int rc;
    tg__cuda_select_stream("cat", dev, &rc);
    if (rc) return NULL;
    tg_tensor *res = tg__cat_result(tensors, dt, shape, ndim, out, dev);
    if (!res) return NULL;
    int64_t col = 0; /* the next input's offset along dim */
    size_t oes = tg_dtype_size(res->dtype);
    for (int64_t i = 0; i < tensors.len; i++) {
        const tg_tensor *t = tensors.data[i];
        if (tg__cat_skipped(t)) continue;
        /* The slab of res that t fills: res's strides, t's sizes, offset col along dim. */
        char *dst = tg__k_data(res) + col * res->strides[dim] * (int64_t)oes;
        if (tg__cuda_copy_strided("cat", tg__cuda_device_of(res), dst, res->dtype, res->strides,
                                  tg__k_data(t), t->dtype, t->strides, t->sizes, t->ndim) != 0) {
            tg_release(res);
            return NULL;
        }
        col += t->sizes[dim];
    }
    if (out) tg__bump_version(res);
    return res;
}
