/* native_dropout on CUDA, with the CPU kernel's semantics, dtype rules and messages
 * (kernels/cpu/dropout.c): mask[i] = u[i] < 1 - p with u[i] uniform 32-bit draws from
 * Philox4x32-10 (Salmon et al. 2011) keyed by a 64-bit seed taken from the default generator
 * on each call (tg_manual_seed makes runs reproducible; the CUDA stream of draws differs from
 * the CPU's), counter = element index / 4; output[i] = input[i] * mask[i] * (1 / (1 - p)) (0
 * when p = 1). */
#include "tg_cuda.cuh"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/native_dropout.h"
#include "philox.cuh"
#include "dropout_checks.h"

#define THREADS 256

/* ------------------------------------------------------------------ dropout */

/* x, y contiguous (n elements), m bool. keep when the 32-bit draw is below keep_below
 * (q * 2^32; 2^32 keeps everything). */
template <typename T>
__global__ void dropout_kernel(const T *x, T *y, bool *m, int64_t n, uint64_t seed,
                               uint64_t keep_below, float scale_f, double scale_d)
{
    typedef typename tg_cuda_compute_of<T>::type A;
    const A scale = sizeof(T) == 8 ? (A)scale_d : (A)scale_f;
    uint2 key = tg__philox_key(seed);
    int64_t groups = (n + 3) / 4;
    for (int64_t g = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; g < groups;
         g += (int64_t)gridDim.x * blockDim.x) {
        uint4 r =
            tg__philox4x32_10(make_uint4((uint32_t)g, (uint32_t)((uint64_t)g >> 32), 0, 0), key);
        uint32_t u[4] = { r.x, r.y, r.z, r.w };
#pragma unroll
        for (int k = 0; k < 4; k++) {
            int64_t i = g * 4 + k;
            if (i >= n) break;
            bool keep = (uint64_t)u[k] < keep_below;
            m[i] = keep;
            /* input * mask * scale: a dropped NaN or inf stays NaN, as PyTorch's input.mul(mask) */
            y[i] = tg__cuda_narrow<T>(tg__cuda_widen(x[i]) * (keep ? (A)1 : (A)0) * scale);
        }
    }
}

/* x, out, mask contiguous on one device (see tg_dropout_fill_fn). */
static int dropout_fill(const tg_tensor *x, tg_tensor *out, tg_tensor *mask, double p,
                        bool training)
{
    const char *op = "native_dropout";
    int64_t n = tg__numel(x);
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, x->device, &rc);
    if (rc || n == 0) return rc;
    if (!training) {
        if (tg__cuda_ok(op, cudaMemcpyAsync(tg__k_data(out), tg__k_data(x),
                                            (size_t)n * tg_dtype_size(x->dtype),
                                            cudaMemcpyDeviceToDevice, st)) ||
            tg__cuda_ok(op, cudaMemsetAsync(tg__k_data(mask), 1, (size_t)n, st)))
            return -1;
        return 0;
    }
    double q = 1 - p, scale = q == 0 ? 0.0 : 1.0 / q;
    uint64_t keep_below = (uint64_t)ldexp(q, 32);
    uint64_t seed = tg__random_u64(tg__default_generator());
    tg__cuda_dispatch_float(x->dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        dropout_kernel<T><<<tg__cuda_blocks((n + 3) / 4, THREADS), THREADS, 0, st>>>(
            (const T *)tg__k_data(x), (T *)tg__k_data(out), (bool *)tg__k_data(mask), n, seed,
            keep_below, (float)scale, scale);
    });
    return tg__cuda_launch_ok(op);
}

extern "C" tg_tensors2 tg__cuda_native_dropout(tg_tensor *input, double p, tg_opt_bool train)
{
    tg_tensors2 res = { NULL, NULL };
    tg__native_dropout_run(input, p, train, dropout_fill, &res.r0, &res.r1);
    return res;
}
