/* _foreach_norm on CUDA, with the CPU kernel's checks and arithmetic (foreach_norm_checks.h):
 * per tensor, a contiguous copy when needed, then BLOCKS blocks accumulate grid-strided
 * partials in double (a shared-memory tree per block) and one block combines the BLOCKS
 * partials in order and writes the finished norm in the tensor's dtype. The grid is fixed, so
 * the result does not vary from run to run (it may differ from the CPU's by the summation
 * order: a few ulp of the double sum, before the rounding to the dtype). */
#include "tg_cuda.cuh"
/* The generated prototype of the operator defined here (the compiler checks it). */
#include "foreach_norm_checks.h"
#include "kernels/_foreach_norm.h"

#define THREADS 256
#define BLOCKS 64

__device__ double block_merge(tg_norm_kind k, double acc)
{
    __shared__ double s[THREADS];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if ((int)threadIdx.x < h)
            s[threadIdx.x] = tg__norm_merge(k, s[threadIdx.x], s[threadIdx.x + h]);
        __syncthreads();
    }
    return s[0];
}

/* part[blockIdx.x]: this block's accumulator over the elements i = block + k * grid. */
__global__ void __launch_bounds__(THREADS)
    partial_kernel(const char *x, tg_dtype dt, int64_t n, tg_norm_kind k, double p, double *part)
{
    int64_t es = tg__cuda_elem_size(dt);
    double acc = tg__norm_init(k);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        acc = tg__norm_add(k, p, acc, tg__cuda_load<double>(x + i * es, dt));
    acc = block_merge(k, acc);
    if (threadIdx.x == 0) part[blockIdx.x] = acc;
}

/* One block: the partials combined (in a fixed tree), finished, stored in out's dtype. */
__global__ void __launch_bounds__(THREADS)
    finish_kernel(const double *part, int nparts, tg_norm_kind k, double p, char *out, tg_dtype dt)
{
    double acc = tg__norm_init(k);
    for (int i = threadIdx.x; i < nparts; i += blockDim.x) acc = tg__norm_merge(k, acc, part[i]);
    acc = block_merge(k, acc);
    if (threadIdx.x == 0) tg__cuda_store(out, dt, tg__norm_finish(k, p, acc));
}

static tg_tensor *norm_of(const char *op, tg_tensor *t, tg_norm_kind kind, double p, double *part,
                          cudaStream_t st)
{
    tg_tensor *x = tg__cuda_contiguous(op, t, t->dtype);
    tg_tensor *r = x ? tg__empty(op, NULL, 0, t->dtype, t->device) : NULL;
    int64_t n = tg__numel(t);
    if (r) {
        partial_kernel<<<BLOCKS, THREADS, 0, st>>>(tg__k_data(x), t->dtype, n, kind, p, part);
        finish_kernel<<<1, THREADS, 0, st>>>(part, BLOCKS, kind, p, tg__k_data(r), t->dtype);
        if (tg__cuda_launch_ok(op)) {
            tg_release(r);
            r = NULL;
        }
    }
    tg_release(x);
    return r;
}

extern "C" tg_tensor_list tg__cuda_foreach_norm(tg_tensor_list self, double ord)
{
    const char *op = "_foreach_norm";
    if (tg__foreach_norm_check(op, self, ord) != 0) return tg_tensor_list{ NULL, 0 };
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self.data[0]->device, &rc);
    if (rc) return tg_tensor_list{ NULL, 0 };
    int64_t np = BLOCKS;
    tg_tensor *part = tg__empty(op, &np, 1, TG_FLOAT64, self.data[0]->device);
    tg_tensor **items = part ? tg_tensor_list_alloc(op, self.len) : NULL;
    if (!items) {
        tg_release(part);
        return tg_tensor_list{ NULL, 0 };
    }
    tg_norm_kind kind = tg__norm_kind(ord);
    for (int64_t i = 0; i < self.len; i++) {
        /* the partials buffer is reused: kernels on one stream run in order */
        items[i] = norm_of(op, self.data[i], kind, ord, (double *)tg__k_data(part), st);
        if (!items[i]) {
            tg_release(part);
            return tg_tensor_list_fail(items, self.len);
        }
    }
    /* part is freed only after the stream is done with it */
    if (tg__cuda_ok(op, cudaStreamSynchronize(st))) {
        tg_release(part);
        return tg_tensor_list_fail(items, self.len);
    }
    tg_release(part);
    return tg_tensor_list{ items, self.len };
}
