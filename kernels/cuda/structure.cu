/* flip, roll, repeat and repeat_interleave.Tensor on CUDA. Semantics and messages are the CPU
 * kernels' (kernels/cpu/structure.c, structure_checks.h).
 *
 * flip, roll and repeat are one gather kernel: a thread per output element (grid-strided),
 * which maps its row-major index through tg_gather_map (the same host/device function as the
 * CPU) to self's element offset and copies the element's bytes (1, 2, 4 or 8; every dtype).
 * The output is contiguous, so the writes are coalesced.
 *
 * repeat_interleave.Tensor reads repeats on the host (PyTorch does too: the result size is a
 * host value), checks them and copies their cumulative sums to the device; a thread per output
 * element then finds its index by binary search in the sums. */
#include "tg_cuda.cuh"
#include "structure_checks.h"

#include "kernels/flip.h"
#include "kernels/repeat.h"
#include "kernels/repeat_interleave.h"
#include "kernels/roll.h"

#include <stdlib.h>

template <typename E>
__global__ void gather_kernel(const E *x, E *y, tg_gather_map m, int64_t numel)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < numel;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = x[tg__gather_offset(&m, i)];
}

/* res (contiguous, on self's device) = the gather of self by m. 0 or -1 + error. */
static int gather_into(const char *op, const tg_tensor *self, const tg_gather_map *m,
                       tg_tensor *res)
{
    int64_t numel = tg__numel(res);
    if (numel == 0) return 0;
    cudaStream_t st;
    if (tg__cuda_begin(op, self, NULL, 0, &st)) return -1;
    unsigned blocks = tg__cuda_blocks(numel, TG_CUDA_THREADS);
    const char *x = tg__k_data(self);
    char *y = tg__k_data(res);
    switch (tg_dtype_size(self->dtype)) {
    case 1:
        gather_kernel<uint8_t>
            <<<blocks, TG_CUDA_THREADS, 0, st>>>((const uint8_t *)x, (uint8_t *)y, *m, numel);
        break;
    case 2:
        gather_kernel<uint16_t>
            <<<blocks, TG_CUDA_THREADS, 0, st>>>((const uint16_t *)x, (uint16_t *)y, *m, numel);
        break;
    case 4:
        gather_kernel<uint32_t>
            <<<blocks, TG_CUDA_THREADS, 0, st>>>((const uint32_t *)x, (uint32_t *)y, *m, numel);
        break;
    default:
        gather_kernel<uint64_t>
            <<<blocks, TG_CUDA_THREADS, 0, st>>>((const uint64_t *)x, (uint64_t *)y, *m, numel);
        break;
    }
    return tg__cuda_launch_ok(op);
}

static tg_tensor *gather_new(const char *op, const tg_tensor *self, const tg_gather_map *m)
{
    tg_tensor *res = tg__empty(op, m->sizes, m->ndim, self->dtype, self->device);
    if (res && gather_into(op, self, m, res) != 0) {
        tg_release(res);
        res = NULL;
    }
    return res;
}

extern "C" tg_tensor *tg__cuda_flip(tg_tensor *self, tg_int_list dims)
{
    tg_gather_map m;
    if (tg__flip_map("flip", self, dims, &m) != 0) return NULL;
    return gather_new("flip", self, &m);
}

extern "C" tg_tensor *tg__cuda_roll(tg_tensor *self, tg_int_list shifts, tg_int_list dims)
{
    const char *op = "roll";
    tg_gather_map m;
    bool flat;
    if (tg__roll_map(op, self, shifts, dims, &m, &flat) != 0) return NULL;
    if (!flat) return gather_new(op, self, &m);
    /* the flattened (row-major) self, rolled, in self's shape */
    tg_tensor *c = tg__cuda_contiguous(op, self, self->dtype);
    if (!c) return NULL;
    tg_tensor *res = tg__empty(op, self->sizes, self->ndim, self->dtype, self->device);
    if (res) {
        tg__roll_flat_map(&m, tg__numel(self), shifts.data[0]);
        if (gather_into(op, c, &m, res) != 0) {
            tg_release(res);
            res = NULL;
        }
    }
    tg_release(c);
    return res;
}

extern "C" tg_tensor *tg__cuda_repeat(tg_tensor *self, tg_int_list repeats)
{
    tg_gather_map m;
    if (tg__repeat_map("repeat", self, repeats, &m) != 0) return NULL;
    return gather_new("repeat", self, &m);
}

/* y[j] = the i with cum[i - 1] <= j < cum[i] (cum: n inclusive sums, nondecreasing). */
template <typename T>
__global__ void repeat_interleave_kernel(const int64_t *cum, int64_t n, T *y, int64_t total)
{
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < total;
         j += (int64_t)gridDim.x * blockDim.x) {
        int64_t lo = 0, hi = n - 1; /* the first i with cum[i] > j */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (cum[mid] > j) hi = mid;
            else lo = mid + 1;
        }
        y[j] = (T)lo;
    }
}

extern "C" tg_tensor *tg__cuda_repeat_interleave_tensor(tg_tensor *repeats, tg_opt_int output_size)
{
    const char *op = "repeat_interleave";
    if (tg__repeat_interleave_check(op, repeats) != 0) return NULL;
    int64_t n = repeats->sizes[0];
    if (n == 0) return tg__empty(op, repeats->sizes, 1, repeats->dtype, repeats->device);
    /* repeats and their sums on the host */
    tg_tensor *host = tg__empty(op, &n, 1, TG_INT64, TG_DEVICE_CPU);
    tg_tensor *hcum = tg__empty(op, &n, 1, TG_INT64, TG_DEVICE_CPU);
    tg_tensor *dcum = NULL, *res = NULL;
    int64_t total = 0;
    if (!host || !hcum || tg__copy_into(op, host, repeats) != 0) goto done;
    {
        const int64_t *r = (const int64_t *)tg__k_data(host);
        int64_t *cum = (int64_t *)tg__k_data(hcum);
        for (int64_t i = 0; i < n; i++)
            cum[i] = (int64_t)((uint64_t)(i ? cum[i - 1] : 0) + (uint64_t)r[i]);
        if (tg__repeat_interleave_total(op, r, cum, n, output_size, &total) != 0) goto done;
    }
    dcum = tg__empty(op, &n, 1, TG_INT64, repeats->device);
    if (!dcum || tg__copy_into(op, dcum, hcum) != 0) goto done;
    res = tg__empty(op, &total, 1, repeats->dtype, repeats->device);
    if (!res || total == 0) goto done;
    {
        int rc;
        cudaStream_t st = tg__cuda_select_stream(op, repeats->device, &rc);
        if (rc == 0) {
            unsigned blocks = tg__cuda_blocks(total, TG_CUDA_THREADS);
            const int64_t *c = (const int64_t *)tg__k_data(dcum);
            if (repeats->dtype == TG_INT64)
                repeat_interleave_kernel<int64_t>
                    <<<blocks, TG_CUDA_THREADS, 0, st>>>(c, n, (int64_t *)tg__k_data(res), total);
            else
                repeat_interleave_kernel<int32_t>
                    <<<blocks, TG_CUDA_THREADS, 0, st>>>(c, n, (int32_t *)tg__k_data(res), total);
            rc = tg__cuda_launch_ok(op);
        }
        if (rc) {
            tg_release(res);
            res = NULL;
        }
    }
done:
    tg_release(host);
    tg_release(hcum);
    tg_release(dcum);
    return res;
}
