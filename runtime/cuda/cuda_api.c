/* The public CUDA API (tg_core.h). It exists in every build: without TG_WITH_CUDA there are no
 * devices, tg_cuda_synchronize has nothing to wait for, and the memory figures are zero. */
#include "core/core.h"

#ifdef TG_WITH_CUDA
#include "cuda/cuda_rt.h"

bool tg_cuda_is_built(void) { return true; }
bool tg_cuda_is_available(void) { return tg__cuda_device_count() > 0; }
int tg_cuda_device_count(void) { return tg__cuda_device_count(); }

int tg_cuda_synchronize(void)
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

int64_t tg_cuda_memory_allocated(int device) { return tg__cuda_allocator_stat(device, 0); }
int64_t tg_cuda_memory_reserved(int device) { return tg__cuda_allocator_stat(device, 1); }
int64_t tg_cuda_max_memory_allocated(int device) { return tg__cuda_allocator_stat(device, 2); }
void tg_cuda_empty_cache(void) { tg__cuda_allocator_empty_cache(); }

#else

bool tg_cuda_is_built(void) { return false; }
bool tg_cuda_is_available(void) { return false; }
int tg_cuda_device_count(void) { return 0; }
int tg_cuda_synchronize(void) { return 0; }
int64_t tg_cuda_memory_allocated(int device)
{
    (void)device;
    return 0;
}
int64_t tg_cuda_memory_reserved(int device)
{
    (void)device;
    return 0;
}
int64_t tg_cuda_max_memory_allocated(int device)
{
    (void)device;
    return 0;
}
void tg_cuda_empty_cache(void) {}

#endif
