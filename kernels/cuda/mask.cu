/* masked_fill_ and tril/triu on CUDA. Semantics, checks and messages are the CPU kernels'
 * (kernels/cpu/mask.c, kernels/common/mask_checks.h).
 *
 * masked_fill_: one iteration with self as output and the mask as input (broadcast to self);
 * one thread per element copies the value's bytes (converted to self's dtype on the host) where
 * the mask is set. A zero-dim CPU mask is read on the host. tril/triu: one thread per element of
 * the output, which copies its source element or writes zero. */
#include "tg_cuda.cuh"
#include "mask_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/masked_fill.h"
#include "kernels/tril.h"
#include "kernels/triu.h"

/* ------------------------------------------------------------------ masked_fill_ */

struct fill_args {
    char *out;
    const char *mask; /* NULL: the mask is a host value, `host_mask` */
    bool host_mask;
    int64_t n, esize;
    unsigned char value[16];
};

__global__ void tg__cuda_masked_fill_kernel(fill_args a, tg_cuda_offsets<2> oc)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.n;
         i += (int64_t)blockDim.x * gridDim.x) {
        int64_t off[2];
        oc.get(i, off);
        bool m = a.mask ? *(const unsigned char *)(a.mask + off[1]) != 0 : a.host_mask;
        if (!m) continue;
        char *o = a.out + off[0];
        for (int64_t b = 0; b < a.esize; b++) o[b] = (char)a.value[b];
    }
}

static tg_tensor *masked_fill_impl(tg_tensor *self, tg_tensor *mask, double value)
{
    tg_iter it;
    if (tg__masked_fill_iter_build(&it, self, mask) != 0) return NULL;
    if (tg__cuda_check_outputs(&it) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    fill_args a;
    a.out = it.data[0];
    a.n = it.numel;
    a.esize = (int64_t)tg_dtype_size(self->dtype);
    tg__masked_fill_value_bytes(a.value, self->dtype, value);
    a.host_mask = false;
    a.mask = it.data[1];
    if (tg__cuda_is_host_operand(&it, 1)) {
        a.host_mask = *(const unsigned char *)it.data[1] != 0;
        a.mask = NULL;
    }
    int rc = 0;
    if (a.n > 0) {
        tg_cuda_offsets<2> oc = tg__cuda_offsets_from_iter<2>(&it);
        int device = tg__cuda_iter_device(&it);
        tg__cuda_masked_fill_kernel<<<tg__cuda_blocks(a.n, TG_CUDA_THREADS), TG_CUDA_THREADS, 0,
                                      tg__cuda_stream(device)>>>(a, oc);
        rc = tg__cuda_launch_ok("masked_fill_");
    }
    if (rc != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    tg_tensor *r = tg__iter_finish(&it, 0);
    if (r) tg__bump_version(r);
    return r;
}

extern "C" tg_tensor *tg__cuda_masked_fill__scalar(tg_tensor *self, tg_tensor *mask, double value)
{
    if (tg__masked_fill_check("masked_fill_", mask, NULL) != 0) return NULL;
    return masked_fill_impl(self, mask, value);
}

/* value: zero-dim, on self's device or the CPU (read back to the host once). */
extern "C" tg_tensor *tg__cuda_masked_fill__tensor(tg_tensor *self, tg_tensor *mask,
                                                   tg_tensor *value)
{
    if (tg__masked_fill_check("masked_fill_", mask, value) != 0) return NULL;
    if (value->device.type == TG_CUDA && tg__cuda_same_device("masked_fill_", self, value))
        return NULL;
    double v = tg_item(value);
    if (tg__has_error()) return NULL;
    return masked_fill_impl(self, mask, v);
}

/* ------------------------------------------------------------------ tril / triu */

struct tri_args {
    char *dst;
    const char *src;
    int64_t n, rows, cols, diagonal, esize;
    bool lower;
};

/* oc: operand 0 dst, 1 src, over the (logical, row-major) shape of self. */
__global__ void tg__cuda_tri_kernel(tri_args a, tg_cuda_offsets<2> oc)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.n;
         i += (int64_t)blockDim.x * gridDim.x) {
        int64_t col = i % a.cols, row = (i / a.cols) % a.rows;
        int64_t off[2];
        oc.get(i, off);
        bool keep = a.lower ? col - row <= a.diagonal : col - row >= a.diagonal;
        char *d = a.dst + off[0];
        const char *s = a.src + off[1];
        for (int64_t b = 0; b < a.esize; b++) d[b] = keep ? s[b] : (char)0;
    }
}

static tg_tensor *tri_out(const char *op, bool lower, tg_tensor *self, int64_t diagonal,
                          tg_tensor *out)
{
    if (tg__tri_check(op, self) != 0) return NULL;
    if (out && tg__cuda_same_device(op, self, out)) return NULL;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    if (rc) return NULL;
    tg_tensor *res =
        tg__cuda_prepare_out(op, out, self->sizes, self->ndim, self->dtype, self->device);
    if (!res) return NULL;
    tri_args a;
    a.dst = tg__k_data(res);
    a.src = tg__k_data(self);
    a.n = tg__numel(self);
    a.rows = self->sizes[self->ndim - 2];
    a.cols = self->sizes[self->ndim - 1];
    a.diagonal = diagonal;
    a.esize = (int64_t)tg_dtype_size(self->dtype);
    a.lower = lower;
    if (a.n > 0) {
        const int64_t *strides[2] = { res->strides, self->strides };
        const int64_t esize[2] = { a.esize, a.esize };
        tg_cuda_offsets<2> oc =
            tg__cuda_offsets_from_strides<2>(self->sizes, self->ndim, strides, esize);
        tg__cuda_tri_kernel<<<tg__cuda_blocks(a.n, TG_CUDA_THREADS), TG_CUDA_THREADS, 0, st>>>(a,
                                                                                               oc);
        if (tg__cuda_launch_ok(op) != 0) {
            tg_release(res);
            return NULL;
        }
    }
    if (out) tg__bump_version(res);
    return res;
}

extern "C" tg_tensor *tg__cuda_tril_out(tg_tensor *self, int64_t diagonal, tg_tensor *out)
{
    return tri_out("tril", true, self, diagonal, out);
}

extern "C" tg_tensor *tg__cuda_triu_out(tg_tensor *self, int64_t diagonal, tg_tensor *out)
{
    return tri_out("triu", false, self, diagonal, out);
}
