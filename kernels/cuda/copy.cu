/* CUDA copy_: self[...] = src on one device, broadcasting src to self's shape and converting
 * any dtype to any dtype, with any strides on either side (kernels/cpu/copy.c's semantics:
 * PyTorch's static_cast chain, see tg__pw_convert).
 *
 *   self (written in place, keeps its shape and dtype), src (broadcastable to self)
 *
 * Paths: (1) same dtype, same shape, both contiguous: one device-to-device cudaMemcpyAsync;
 * (2) otherwise the iterator (broadcast, coalescing) and one kernel: element bytes moved when
 * the dtypes agree, converted per element when they do not. A zero-dim CPU src (a Scalar
 * tensor) is read on the host and written as a fill.
 *
 * Copies between devices (CPU <-> CUDA, or two GPUs) are not this kernel's: it hands them to
 * the runtime's tg__copy_into, which moves bytes across (engineer A's tg__cuda_memcpy) and
 * comes back here for the same-device conversions.
 *
 * The kernel also serves the other CUDA kernels' copies through tg__cuda_copy_strided
 * (declared in tg_cuda.cuh): cat's slabs, contiguous temporaries, cuBLAS operands. */
#include "tg_cuda.cuh"
#include "pointwise.cuh"
#include "copy_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/copy.h"

/* data: dst, src. src_host: src is a host value, already in dst's dtype, in hv. */
struct tg_cuda_copy_args {
    char *dst;
    const char *src;
    tg_dtype dt, st;
    bool src_host;
    alignas(8) unsigned char hv[8];
    int64_t n;
};

__device__ __forceinline__ void tg__cuda_move_elem(char *d, const char *s, int size)
{
    switch (size) {
    case 1: *(uint8_t *)d = *(const uint8_t *)s; break;
    case 2: *(uint16_t *)d = *(const uint16_t *)s; break;
    case 4: *(uint32_t *)d = *(const uint32_t *)s; break;
    default: *(uint64_t *)d = *(const uint64_t *)s; break;
    }
}

__global__ void tg__cuda_copy_kernel(tg_cuda_copy_args a, tg_cuda_offsets<2> oc)
{
    const int size = (int)tg__cuda_elem_size(a.dt);
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += step) {
        int64_t off[2];
        oc.get(i, off);
        char *d = a.dst + off[0];
        if (a.src_host) tg__cuda_move_elem(d, (const char *)a.hv, size);
        else if (a.dt == a.st) tg__cuda_move_elem(d, a.src + off[1], size);
        else tg__pw_convert(d, a.dt, a.src + off[1], a.st);
    }
}

/* Launches the kernel on `device` (dst at operand 0, src at operand 1 of oc). */
static int copy_launch(const char *op, int device, const tg_cuda_copy_args &a,
                       const tg_cuda_offsets<2> &oc)
{
    tg_cuda_device_guard guard(device);
    tg__cuda_copy_kernel<<<tg__cuda_blocks(a.n, TG_CUDA_THREADS), TG_CUDA_THREADS, 0,
                           tg__cuda_stream(device)>>>(a, oc);
    return tg__cuda_launch_ok(op);
}

/* Declared in tg_cuda.cuh: the strided copy the other CUDA kernels use (cat's slabs,
 * contiguous temporaries, cuBLAS operands). */
int tg__cuda_copy_strided(const char *op, int device, char *dst, tg_dtype dt,
                          const int64_t *dst_strides, const char *src, tg_dtype st,
                          const int64_t *src_strides, const int64_t *sizes, int64_t ndim)
{
    tg_cuda_copy_args a;
    memset(&a, 0, sizeof a);
    a.dst = dst;
    a.src = src;
    a.dt = dt;
    a.st = st;
    a.n = 1;
    for (int64_t d = 0; d < ndim; d++) a.n *= sizes[d];
    if (a.n == 0) return 0;
    const int64_t *strides[2] = { dst_strides, src_strides };
    const int64_t esize[2] = { tg__cuda_elem_size(dt), tg__cuda_elem_size(st) };
    return copy_launch(op, device, a,
                       tg__cuda_offsets_from_strides<2>(sizes, ndim, strides, esize));
}

static bool same_device(const tg_tensor *a, const tg_tensor *b)
{
    return a->device.type == b->device.type && a->device.index == b->device.index;
}

/* The iterator path (2). 0 or -1 + error; bumps self's version through finish. */
static int copy_iter(tg_tensor *self, tg_tensor *src)
{
    tg_iter it;
    if (tg__copy_iter_build(&it, self, src, TG_CUDA_ITER_FLAGS) != 0) return -1;
    int rc = tg__cuda_check_outputs(&it);
    if (rc == 0 && it.numel > 0) {
        tg_cuda_copy_args a;
        memset(&a, 0, sizeof a);
        a.dst = it.data[0];
        a.src = it.data[1];
        a.dt = it.dtypes[0];
        a.st = it.dtypes[1];
        a.n = it.numel;
        a.src_host = tg__cuda_is_host_operand(&it, 1);
        if (a.src_host) {
            tg__pw_convert((char *)a.hv, a.dt, it.data[1], a.st);
            a.src = NULL;
        }
        rc = copy_launch("copy_", tg__cuda_iter_device(&it), a, tg__cuda_offsets_from_iter<2>(&it));
    }
    if (rc != 0) {
        tg__iter_abort(&it);
        return -1;
    }
    tg_tensor *r = tg__iter_finish(&it, 0);
    if (!r) return -1;
    tg_release(r);
    return 0;
}

/* copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!) */
extern "C" tg_tensor *tg__cuda_copy_(tg_tensor *self, tg_tensor *src, bool non_blocking)
{
    (void)non_blocking;
    /* Across devices the runtime moves the bytes and calls back for conversions; a zero-dim
     * CPU src is read on the host by the kernel. */
    const bool src_scalar = src->device.type == TG_CPU && src->ndim == 0;
    const bool across = !same_device(self, src) && !(src_scalar && self->device.type == TG_CUDA);
    tg_tensor *res;
    if (tg__copy_settled(self, src, across, &res)) return res;
    if (!src_scalar && self->dtype == src->dtype && tg__same_sizes(self, src) &&
        tg__is_contiguous(self) && tg__is_contiguous(src)) {
        size_t nbytes = (size_t)tg__numel(self) * tg_dtype_size(self->dtype);
        if (nbytes > 0) {
            const int device = tg__cuda_device_of(self);
            tg_cuda_device_guard guard(device);
            if (tg__cuda_ok("copy_", cudaMemcpyAsync(tg_tensor_data(self), tg_tensor_data(src),
                                                     nbytes, cudaMemcpyDeviceToDevice,
                                                     tg__cuda_stream(device))) != 0)
                return NULL;
        }
        tg__bump_version(self);
        return tg_retain(self);
    }
    if (copy_iter(self, src) != 0) return NULL;
    return tg_retain(self);
}

/* The core's strided-copy hook for CUDA tensors (tg__register_device_copy in core.h):
 * tg__copy_into calls it for the device side of every copy that is not a contiguous byte
 * copy. Registered when the library loads; the op table references this file's kernel, so a
 * static link always keeps it. */
static int copy_hook(const char *op, tg_tensor *dst, const tg_tensor *src)
{
    (void)op; /* tg__cuda_copy_ names "copy_" in its errors, as the operator does */
    tg_tensor *r = tg__cuda_copy_(dst, (tg_tensor *)src, false);
    if (!r) return -1;
    tg_release(r);
    return 0;
}

__attribute__((constructor)) static void register_copy_hook(void)
{
    tg__register_device_copy(TG_CUDA, copy_hook);
}
