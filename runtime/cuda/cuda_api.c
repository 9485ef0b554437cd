/* The CUDA backend's side of the public tg_cuda_* functions (the core's cuda_backend.c calls
 * these through tg__cuda_backend once the backend has registered, cuda_device.c). */
#include "cuda/cuda_rt.h"

static int device_count(void) { return tg__cuda_device_count(); }

static int synchronize(void)
{
    const char *op = "cuda_synchronize";
    int n = tg__cuda_device_count();
    if (n == 0) return 0;
    int prev = -1;
    (void)cudaGetDevice(&prev);
    int rc = 0;
    for (int d = 0; d < n && rc == 0; d++)
        if (tg__cuda_set_device(op, d) || tg__cuda_check(op, cudaDeviceSynchronize())) rc = -1;
    if (prev >= 0) (void)cudaSetDevice(prev);
    return rc;
}

static void *stream(int device)
{
    int n = tg__cuda_device_count();
    if (device < 0 || device >= n)
        return tg__error("cuda_stream", "invalid device %d: %d CUDA device%s", device, n,
                         n == 1 ? "" : "s");
    return (void *)tg__cuda_stream(device);
}

const tg__cuda_backend tg__cuda_backend_api = {
    .device_count = device_count,
    .synchronize = synchronize,
    .memory_stat = tg__cuda_allocator_stat,
    .empty_cache = tg__cuda_allocator_empty_cache,
    .stream = stream,
};
