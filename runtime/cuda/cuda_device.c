/* CUDA devices: count, current device, one stream and one cuBLAS handle per device, device
 * properties, and the mapping of CUDA and cuBLAS statuses to tensorgen errors. */

#include "cuda/cuda_rt.h"
#include "profiler/profiler.h"

#include <pthread.h>
#include <stdio.h>

#define TG_CUDA_MAX_DEVICES 64

static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static int device_count;

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t streams[TG_CUDA_MAX_DEVICES];
static bool stream_made[TG_CUDA_MAX_DEVICES];
static cublasHandle_t blas[TG_CUDA_MAX_DEVICES];
static struct cudaDeviceProp props[TG_CUDA_MAX_DEVICES];
static bool props_read[TG_CUDA_MAX_DEVICES];

/* ------------------------------------------------------------------ registration */

/* The backend registers with the core when it loads (dlopen'ed by core/cuda_backend.c, or
 * linked whole into a static program): its device hooks, its event timer, what the public
 * tg_cuda_* functions call, and its kernels. This only stores pointers; CUDA itself starts on
 * first use. The core's copy kernel (kernels/cuda/copy.cu) registers itself the same way. */
__attribute__((constructor)) static void register_cuda_backend(void)
{
    tg__register_device_hooks(TG_CUDA, &tg__cuda_device_hooks);
    tg__prof_register_device_timer(TG_CUDA, &tg__cuda_profiler_timer);
    tg_library_constructor(&tg__cuda_library);
    tg__register_cuda_backend(&tg__cuda_backend_api);
}

/* ------------------------------------------------------------------ errors */

int tg__cuda_check(const char *op, int cuda_error)
{
    if (cuda_error == cudaSuccess) return 0;
    (void)cudaGetLastError(); /* clear a non-sticky error so later calls start clean */
    if (cuda_error == cudaErrorMemoryAllocation)
        tg__error(op, "CUDA out of memory. (%s)", cudaGetErrorString((cudaError_t)cuda_error));
    else tg__error(op, "CUDA error: %s", cudaGetErrorString((cudaError_t)cuda_error));
    return -1;
}

int tg__cuda_check_launch(const char *op) { return tg__cuda_check(op, (int)cudaGetLastError()); }

static const char *cublas_status_meaning(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the CUDA runtime or cuBLAS failed to initialise";
    case CUBLAS_STATUS_ALLOC_FAILED: return "out of device memory";
    case CUBLAS_STATUS_INVALID_VALUE: return "an unsupported value or parameter was passed";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "the device lacks a feature the call needs";
    case CUBLAS_STATUS_MAPPING_ERROR: return "a GPU memory space could not be accessed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal cuBLAS operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    default: return "unknown status";
    }
}

static const char *cublas_status_name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

int tg__cublas_check(const char *op, int cublas_status)
{
    cublasStatus_t s = (cublasStatus_t)cublas_status;
    if (s == CUBLAS_STATUS_SUCCESS) return 0;
    return tg__fail(op, "CUBLAS error: %s (%s)", cublas_status_name(s), cublas_status_meaning(s));
}

/* ------------------------------------------------------------------ devices */

static void count_devices(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0; /* no driver, no device */
    (void)cudaGetLastError();
    device_count = n < TG_CUDA_MAX_DEVICES ? n : TG_CUDA_MAX_DEVICES;
}

int tg__cuda_device_count(void)
{
    pthread_once(&count_once, count_devices);
    return device_count;
}

/* 0 when `device` names an existing device, else -1 with the error CUDA itself would give. */
static int check_ordinal(const char *op, int device)
{
    int n = tg__cuda_device_count();
    if (n == 0) return tg__cuda_check(op, cudaErrorNoDevice);
    if (device < 0 || device >= n) return tg__cuda_check(op, cudaErrorInvalidDevice);
    return 0;
}

int tg__cuda_set_device(const char *op, int device)
{
    if (check_ordinal(op, device)) return -1;
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur == device) return 0;
    return tg__cuda_check(op, cudaSetDevice(device));
}

const struct cudaDeviceProp *tg__cuda_props(const char *op, int device)
{
    if (check_ordinal(op, device)) return NULL;
    const struct cudaDeviceProp *p = NULL;
    pthread_mutex_lock(&dev_lock);
    if (props_read[device] ||
        tg__cuda_check(op, cudaGetDeviceProperties(&props[device], device)) == 0) {
        props_read[device] = true;
        p = &props[device];
    }
    pthread_mutex_unlock(&dev_lock);
    return p;
}

/* The device's stream in *out; 0, or -1 + error naming op. */
static int get_stream(const char *op, int device, cudaStream_t *out)
{
    *out = 0;
    if (check_ordinal(op, device)) return -1;
    pthread_mutex_lock(&dev_lock);
    if (!stream_made[device]) {
        int prev = -1;
        (void)cudaGetDevice(&prev);
        if (tg__cuda_check(op, cudaSetDevice(device)) == 0 &&
            tg__cuda_check(op,
                           cudaStreamCreateWithFlags(&streams[device], cudaStreamNonBlocking)) == 0)
            stream_made[device] = true;
        if (prev >= 0 && prev != device) (void)cudaSetDevice(prev);
    }
    bool ok = stream_made[device];
    if (ok) *out = streams[device];
    pthread_mutex_unlock(&dev_lock);
    return ok ? 0 : -1;
}

cudaStream_t tg__cuda_stream(int device)
{
    cudaStream_t s;
    (void)get_stream("cuda_stream", device, &s);
    return s;
}

int tg__cuda_stream_sync(const char *op, int device)
{
    cudaStream_t s;
    if (get_stream(op, device, &s)) return -1;
    return tg__cuda_check(op, cudaStreamSynchronize(s));
}

cublasHandle_t tg__cublas_handle(const char *op, int device)
{
    cudaStream_t s;
    if (get_stream(op, device, &s)) return NULL;
    pthread_mutex_lock(&dev_lock);
    if (!blas[device]) {
        int prev = -1;
        (void)cudaGetDevice(&prev);
        cublasHandle_t h = NULL;
        if (tg__cuda_check(op, cudaSetDevice(device)) == 0 &&
            tg__cublas_check(op, cublasCreate(&h)) == 0) {
            if (tg__cublas_check(op, cublasSetStream(h, s)) ||
                tg__cublas_check(op, cublasSetMathMode(h, CUBLAS_DEFAULT_MATH))) {
                cublasDestroy(h);
                h = NULL;
            }
        }
        blas[device] = h;
        if (prev >= 0 && prev != device) (void)cudaSetDevice(prev);
    }
    cublasHandle_t h = blas[device];
    pthread_mutex_unlock(&dev_lock);
    return h;
}

/* ------------------------------------------------------------------ copies */

static int dev_of(tg_device d) { return d.type == TG_CUDA ? d.index : -1; }

int tg__cuda_memcpy(const char *op, void *dst, tg_device dst_device, const void *src,
                    tg_device src_device, size_t nbytes)
{
    if (nbytes == 0) return 0;
    int dd = dev_of(dst_device), sd = dev_of(src_device);
    if (dd < 0 && sd < 0) return tg__fail(op, "tg__cuda_memcpy: neither side is a CUDA device");
    if ((dd >= 0 && check_ordinal(op, dd)) || (sd >= 0 && check_ordinal(op, sd))) return -1;
    if (dd >= 0 && sd >= 0 && dd == sd) { /* within one device: stream-ordered */
        cudaStream_t s;
        if (get_stream(op, dd, &s) || tg__cuda_set_device(op, dd)) return -1;
        return tg__cuda_check(op, cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, s));
    }
    if (dd >= 0 && sd >= 0) { /* device to another device */
        /* The destination's pending work may still use dst; the copy runs on the source's
         * stream after its pending writes, and completes before we return. */
        if (tg__cuda_stream_sync(op, dd)) return -1;
        cudaStream_t s;
        if (get_stream(op, sd, &s) || tg__cuda_set_device(op, sd)) return -1;
        if (tg__cuda_check(op, cudaMemcpyPeerAsync(dst, dd, src, sd, nbytes, s))) return -1;
        return tg__cuda_check(op, cudaStreamSynchronize(s));
    }
    int d = dd >= 0 ? dd : sd; /* host <-> device: synchronous */
    cudaStream_t s;
    if (get_stream(op, d, &s) || tg__cuda_set_device(op, d)) return -1;
    enum cudaMemcpyKind kind = dd >= 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    if (tg__cuda_check(op, cudaMemcpyAsync(dst, src, nbytes, kind, s))) return -1;
    return tg__cuda_check(op, cudaStreamSynchronize(s));
}
