/* multinomial.out on CUDA: the CPU kernel's checks, messages and row sampling
 * (multinomial_checks.h), one thread per row (correct, not fast: a thread walks its row).
 *
 * The weights are copied to a rows x n float64 scratch, checked by one kernel (one code per
 * row, read back on the host for PyTorch's error), then sampled. Stream: each call draws one
 * 64-bit key from the tg_generator (the default one when NULL, as uniform_ on CUDA does), and
 * draw t of row r is Philox4x32-10 (philox.cuh) under that key on the counter (r, t): the same
 * seed gives the same samples; the sequence is not the CPU's (nor PyTorch's). */
#include "tg_cuda.cuh"
/* The generated prototype of the operator defined here (the compiler checks it). */
#include "kernels/multinomial.h"
#include "multinomial_checks.h"
#include "philox.cuh"

#define ROW_THREADS 64

/* codes[r]: tg__multinomial_row_bad of row r of w (rows x n). */
__global__ void check_kernel(const double *w, int64_t rows, int64_t n, int *codes)
{
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < rows;
         r += (int64_t)gridDim.x * blockDim.x)
        codes[r] = tg__multinomial_row_bad(w + r * n, n);
}

/* Row r: its ustride draws into u, then the shared sampling into res (rows x k). */
__global__ void sample_kernel(double *w, double *u, tg_sort_pair *pairs, int64_t rows, int64_t n,
                              int64_t k, int64_t ustride, bool replacement, uint64_t seed,
                              int64_t *res)
{
    const uint2 key = tg__philox_key(seed);
    for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < rows;
         r += (int64_t)gridDim.x * blockDim.x) {
        double *ur = u + r * ustride;
        for (int64_t t = 0; t < ustride; t++) {
            uint4 b = tg__philox4x32_10(make_uint4((uint32_t)r, (uint32_t)((uint64_t)r >> 32),
                                                   (uint32_t)t, (uint32_t)((uint64_t)t >> 32)),
                                        key);
            ur[t] = tg__multinomial_u01(((uint64_t)b.x << 32) | b.y);
        }
        if (replacement) tg__multinomial_with(w + r * n, n, ur, k, res + r * k, 1);
        else tg__multinomial_without(w + r * n, n, ur, k, pairs + r * 2 * n, res + r * k, 1);
    }
}

extern "C" tg_tensor *tg__cuda_multinomial_out(tg_tensor *self, int64_t num_samples,
                                               bool replacement, tg_generator *generator,
                                               tg_tensor *out)
{
    const char *op = "multinomial";
    int64_t rows, n;
    if (tg__multinomial_check(op, self, num_samples, replacement, out, &rows, &n) != 0) return NULL;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    if (rc) return NULL;
    int64_t sizes[2] = { rows, num_samples };
    tg_tensor *res = tg__cuda_prepare_out(op, out, self->ndim == 2 ? sizes : sizes + 1, self->ndim,
                                          TG_INT64, self->device);
    if (!res || rows == 0) return res;
    int64_t ustride = replacement ? num_samples : n;
    int64_t wsz[2] = { rows, n }, usz = rows * ustride, psz = replacement ? 1 : rows * 2 * n * 2;
    int64_t csz = rows;
    /* a fresh float64 copy: the sampling turns it into running sums */
    tg_tensor *w = tg__empty(op, wsz, 2, TG_FLOAT64, self->device);
    tg_tensor *u = tg__empty(op, &usz, 1, TG_FLOAT64, self->device);
    tg_tensor *pairs = tg__empty(op, &psz, 1, TG_INT64, self->device); /* 2 words a pair */
    tg_tensor *codes = tg__empty(op, &csz, 1, TG_INT32, self->device);
    tg_tensor *ix = tg__is_contiguous(res) ? tg_retain(res)
                                           : tg__empty(op, sizes + (self->ndim == 2 ? 0 : 1),
                                                       self->ndim, TG_INT64, self->device);
    rc = w && u && pairs && codes && ix ? 0 : -1;
    if (rc == 0) {
        /* self viewed as rows x n (a 1-D self is one row) */
        int64_t strides[2] = { self->ndim == 2 ? self->strides[0] : 0,
                               self->strides[self->ndim - 1] };
        rc = tg__cuda_copy_strided(op, tg__cuda_device_of(w), tg__k_data(w), TG_FLOAT64, w->strides,
                                   tg__k_data(self), self->dtype, strides, wsz, 2);
    }
    if (rc == 0) {
        check_kernel<<<tg__cuda_blocks(rows, ROW_THREADS), ROW_THREADS, 0, st>>>(
            (const double *)tg__k_data(w), rows, n, (int *)tg__k_data(codes));
        rc = tg__cuda_launch_ok(op);
    }
    if (rc == 0) {
        int *hc = (int *)malloc(sizeof(int) * (size_t)rows);
        rc = hc ? 0 : tg__fail(op, "out of memory");
        if (rc == 0)
            rc = tg__cuda_ok(op, cudaMemcpyAsync(hc, tg__k_data(codes), sizeof(int) * (size_t)rows,
                                                 cudaMemcpyDeviceToHost, st)) ||
                 tg__cuda_ok(op, cudaStreamSynchronize(st));
        int bad = 0;
        for (int64_t r = 0; rc == 0 && r < rows; r++)
            if (hc[r] > bad) bad = hc[r];
        free(hc);
        if (rc == 0 && bad) rc = tg__multinomial_fail(op, bad);
    }
    if (rc == 0) {
        uint64_t seed = tg__random_u64(generator ? generator : tg__default_generator());
        sample_kernel<<<tg__cuda_blocks(rows, ROW_THREADS), ROW_THREADS, 0, st>>>(
            (double *)tg__k_data(w), (double *)tg__k_data(u), (tg_sort_pair *)tg__k_data(pairs),
            rows, n, num_samples, ustride, replacement, seed, (int64_t *)tg__k_data(ix));
        rc = tg__cuda_launch_ok(op);
        /* the scratch is released below: wait until the kernel is done with it */
        if (rc == 0) rc = tg__cuda_ok(op, cudaStreamSynchronize(st));
    }
    if (rc == 0 && ix != res) {
        tg_tensor *c = tg__cuda_copy_broadcast(op, res, ix) == 0 ? tg_retain(res) : NULL;
        rc = c ? 0 : -1;
        tg_release(c);
    }
    tg_release(w);
    tg_release(u);
    tg_release(pairs);
    tg_release(codes);
    tg_release(ix);
    return tg__k_result_out(rc == 0, res, out != NULL);
}
