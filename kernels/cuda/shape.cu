/* cat on CUDA: concatenation along a dim, with the CPU kernel's rules and messages
 * (kernels/cpu/shape.c). Each input (any strides, any dtype castable to the result's) is
 * copied into its slab of the output by one launch of the general strided copy kernel
 * (kc_copy_kernel): the slab is the output's geometry with the input's sizes, starting at the
 * input's offset along dim. */
#include "kc_common.cuh"

extern "C" tg_tensor *tg__cuda_cat_out(tg_tensor_list tensors, int64_t dim, tg_tensor *out);

/* PyTorch's canCast for real dtypes: no float -> integral, no non-bool -> bool. */
static bool can_cast(tg_dtype from, tg_dtype to)
{
    if (tg_dtype_is_floating(from) && tg_dtype_is_integral(to, true)) return false;
    if (from != TG_BOOL && to == TG_BOOL) return false;
    return true;
}

/* Legacy behaviour: 1-D tensors with no elements are ignored by cat. */
static bool skipped(const tg_tensor *t)
{
    return t->ndim == 1 && t->sizes[0] == 0;
}

/* Checks the inputs against the first non-skipped one and computes the output shape. */
static int cat_shape(tg_tensor_list ts, int64_t *pdim, int64_t *shape, int64_t *ndim)
{
    const tg_tensor *ref = NULL;
    for (int64_t i = 0; i < ts.len; i++) {
        if (ts.data[i]->ndim == 0) {
            tg__error("cat", "zero-dimensional tensor (at position %lld) cannot be concatenated", (long long)i);
            return -1;
        }
        if (!ref && !skipped(ts.data[i])) ref = ts.data[i];
    }
    if (!ref) {
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
        if (skipped(t)) continue;
        if (t->ndim != ref->ndim) {
            tg__error("cat", "Tensors must have same number of dimensions: got %lld and %lld", (long long)ref->ndim,
                      (long long)t->ndim);
            return -1;
        }
        for (int64_t k = 0; k < ref->ndim; k++) {
            if (k == d || t->sizes[k] == ref->sizes[k]) continue;
            tg__error("cat", "Sizes of tensors must match except in dimension %lld. Expected size %lld "
                      "but got size %lld for tensor number %lld in the list.", (long long)d,
                      (long long)ref->sizes[k], (long long)t->sizes[k], (long long)i);
            return -1;
        }
        shape[d] += t->sizes[d];
    }
    return 0;
}

extern "C" tg_tensor *tg__cuda_cat_out(tg_tensor_list tensors, int64_t dim, tg_tensor *out)
{
    if (tensors.len == 0) return (tg_tensor *)tg__error("cat", "torch.cat(): expected a non-empty list of Tensors");
    int64_t shape[TG_MAX_DIMS], ndim = 0;
    if (cat_shape(tensors, &dim, shape, &ndim) != 0) return NULL;
    tg_device dev = tensors.data[0]->device;
    tg_dtype dt = tensors.data[0]->dtype;
    for (int64_t i = 1; i < tensors.len; i++) {
        if (kc_same_device("cat", tensors.data[0], tensors.data[i])) return NULL;
        dt = tg_promote_types(dt, tensors.data[i]->dtype);
    }
    if (kc_same_device("cat", tensors.data[0], out)) return NULL;
    int rc;
    cudaStream_t st = kc_stream("cat", dev, &rc);
    if (rc) return NULL;
    tg_tensor *res;
    if (out) {
        if (!can_cast(dt, out->dtype))
            return (tg_tensor *)tg__error("cat", "result type %s can't be cast to the desired output type %s",
                                          tg__k_scalar_name(dt), tg__k_scalar_name(out->dtype));
        for (int64_t i = 0; i < tensors.len; i++)
            if (tensors.data[i]->storage == out->storage && tg__numel(tensors.data[i]) > 0)
                return (tg_tensor *)tg__error("cat", "unsupported operation: the input tensors cannot refer to any "
                                              "of the output memory locations. Found overlap in input tensor %lld.",
                                              (long long)i);
        if (tg__resize_out("cat", out, shape, ndim) != 0) return NULL;
        res = tg_retain(out);
    } else {
        res = tg__empty("cat", shape, ndim, dt, dev);
        if (!res) return NULL;
    }
    int64_t col = 0;       /* the next input's offset along dim */
    size_t oes = tg_dtype_size(res->dtype);
    for (int64_t i = 0; i < tensors.len; i++) {
        const tg_tensor *t = tensors.data[i];
        if (skipped(t)) continue;
        int64_t n = tg__numel(t);
        if (n > 0) {
            /* The slab of res that t fills: res's strides, t's sizes, offset col along dim. */
            kc_geo dg = kc_geo_of(t), sg = kc_geo_of(t);
            for (int d = 0; d < dg.ndim; d++) dg.strides[d] = res->strides[d];
            char *dst = kc_data(res) + col * res->strides[dim] * (int64_t)oes;
            kc_copy_kernel<<<kc_blocks(n, 256), 256, 0, st>>>(dst, dg, (int)res->dtype, kc_data(t), sg, (int)t->dtype, n);
            if (kc_launch_check("cat")) { tg_release(res); return NULL; }
        }
        col += t->sizes[dim];
    }
    if (out) tg__bump_version(res);
    return res;
}
