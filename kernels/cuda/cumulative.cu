/* cumsum and cumprod on CUDA (cumsum.out, cumprod.out). Semantics, result dtype and messages
 * are the CPU kernels' (kernels/cpu/cumulative.c, structure_checks.h).
 *
 * self is seen as slices along dim: slice s = (o, i) of [outer, n, inner] starts at row-major
 * index o * n * inner + i (its offset from the tensor's geometry, so any strides work) and
 * steps by the stride of dim. One thread scans one slice sequentially; neighbouring threads
 * take neighbouring i, so for a scan over a leading dim their loads are coalesced. The
 * accumulator is the CPU's (double for the floating dtypes, int64 for the integers, bool for
 * bool), so the values equal the CPU's bit for bit. Each element is read before its result is
 * written, so out may be self. */
#include "tg_cuda.cuh"
#include "structure_checks.h"

#include "kernels/cumprod.h"
#include "kernels/cumsum.h"

/* Slices of one operand: where slice s starts and the step along dim (bytes). */
struct cum_slices {
    tg_cuda_offsets<1> oc;
    int64_t n, inner, step;
};

static cum_slices cum_slices_of(const tg_tensor *t, int64_t d)
{
    cum_slices sl;
    sl.oc = tg__cuda_offsets_from_tensor(t);
    sl.n = t->ndim ? t->sizes[d] : 1;
    sl.step = t->ndim ? t->strides[d] * (int64_t)tg_dtype_size(t->dtype) : 0;
    sl.inner = 1;
    for (int64_t k = d + 1; k < t->ndim; k++) sl.inner *= t->sizes[k];
    return sl;
}

__device__ __forceinline__ int64_t cum_slice_offset(const cum_slices &sl, int64_t s)
{
    int64_t o = s / sl.inner, i = s % sl.inner, off;
    sl.oc.get(o * sl.n * sl.inner + i, &off);
    return off;
}

/* One slice per thread. x is self (dtype st), y the result (dtype rt); fl / src_fl say
 * whether rt / st are floating (decided on the host). */
__global__ void cum_kernel(const char *x, cum_slices xs, tg_dtype st, char *y, cum_slices ys,
                           tg_dtype rt, bool fl, bool src_fl, bool prod, int64_t nslices)
{
    for (int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; s < nslices;
         s += (int64_t)gridDim.x * blockDim.x) {
        const char *xp = x + cum_slice_offset(xs, s);
        char *yp = y + cum_slice_offset(ys, s);
        double facc = prod ? 1.0 : 0.0;
        uint64_t iacc = prod ? 1 : 0;
        for (int64_t k = 0; k < xs.n; k++) {
            /* self.to(result dtype) first, as on the CPU */
            alignas(8) char tmp[8]; /* typed stores into it need the alignment */
            if (src_fl) tg__cuda_store(tmp, rt, tg__cuda_load<double>(xp + k * xs.step, st));
            else tg__cuda_store(tmp, rt, tg__cuda_load<int64_t>(xp + k * xs.step, st));
            if (fl) {
                double v = tg__cuda_load<double>(tmp, rt);
                facc = prod ? facc * v : facc + v;
                tg__cuda_store(yp + k * ys.step, rt, facc);
            } else {
                uint64_t v = (uint64_t)tg__cuda_load<int64_t>(tmp, rt);
                iacc = prod ? iacc * v : iacc + v;
                if (rt == TG_BOOL) iacc = iacc != 0;
                tg__cuda_store(yp + k * ys.step, rt, (int64_t)iacc);
            }
        }
    }
}

static tg_tensor *cum_common(const char *op, bool prod, tg_tensor *self, int64_t dim,
                             tg_dtype dtype, tg_tensor *out)
{
    int64_t d;
    tg_dtype rt;
    if (tg__cum_check(op, self, dim, dtype, out, &d, &rt) != 0) return NULL;
    if (tg__cuda_same_device(op, self, out)) return NULL;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    if (rc) return NULL;
    tg_tensor *res = tg__cuda_prepare_out(op, out, self->sizes, self->ndim, rt, self->device);
    if (!res) return NULL;
    int64_t numel = tg__numel(self);
    if (numel == 0) return res;
    cum_slices xs = cum_slices_of(self, d), ys = cum_slices_of(res, d);
    int64_t nslices = numel / xs.n;
    cum_kernel<<<tg__cuda_blocks(nslices, TG_CUDA_THREADS), TG_CUDA_THREADS, 0, st>>>(
        tg__k_data(self), xs, self->dtype, tg__k_data(res), ys, rt, tg_dtype_is_floating(rt),
        tg_dtype_is_floating(self->dtype), prod, nslices);
    return tg__k_result_out(tg__cuda_launch_ok(op) == 0, res, out != NULL);
}

extern "C" tg_tensor *tg__cuda_cumsum_out(tg_tensor *self, int64_t dim, tg_dtype dtype,
                                          tg_tensor *out)
{
    return cum_common("cumsum", false, self, dim, dtype, out);
}

extern "C" tg_tensor *tg__cuda_cumprod_out(tg_tensor *self, int64_t dim, tg_dtype dtype,
                                           tg_tensor *out)
{
    return cum_common("cumprod", true, self, dim, dtype, out);
}
