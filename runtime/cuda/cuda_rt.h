/* runtime/cuda: the CUDA runtime layer's internal interface: what CUDA kernels (the .cu files
 * of kernels/cuda, C++) and runtime/cuda's own C files use; nothing else in the runtime. Not
 * installed. All of it is the CUDA backend, libtensorgen_cuda, compiled with TG_WITH_CUDA
 * (docs/cuda.md); the public API (tg_cuda_is_available, ...) is in tg_core.h and the core's
 * core/cuda_backend.c, which loads this backend.
 *
 * Model: one stream per device, created on first use; every kernel of the library is launched
 * on tg__cuda_stream(tensor's device), so work on one device runs in issue order and memory
 * freed by the caching allocator can be reused at once by later work on the same stream.
 * Host reads (tg_item, tg_tensor_to_doubles, tg_print) and host<->device copies synchronise
 * that stream. */
#ifndef TG_CUDA_CUDA_RT_H
#define TG_CUDA_CUDA_RT_H

#include "core/core.h"
#include "dispatch/dispatch.h" /* tg_library */

#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Checks a cudaError_t (passed as int so C callers need no cast). cudaSuccess gives 0;
 * anything else records "<op>: CUDA error: <cudaGetErrorString>" (out of memory:
 * "<op>: CUDA out of memory. ...") as this thread's error, clears CUDA's non-sticky last
 * error, and gives -1. */
int tg__cuda_check(const char *op, int cuda_error);
/* The same for a cublasStatus_t: "<op>: CUBLAS error: CUBLAS_STATUS_... (<meaning>)". */
int tg__cublas_check(const char *op, int cublas_status);
/* Checks the launch just made (cudaGetLastError): 0, or -1 + error naming op. Call after
 * every <<<...>>> launch. */
int tg__cuda_check_launch(const char *op);

/* Number of devices (0 when no driver or no device; never an error). */
int tg__cuda_device_count(void);
/* Makes `device` current for this thread (cudaSetDevice); 0, or -1 + error naming op
 * ("CUDA error: invalid device ordinal", "CUDA error: no CUDA-capable device is detected"). */
int tg__cuda_set_device(const char *op, int device);
/* The device's stream (non-blocking, created on first use, never destroyed). On failure
 * records an error naming "cuda_stream" and returns the legacy default stream (0). */
cudaStream_t tg__cuda_stream(int device);
/* Waits for the device's stream; 0, or -1 + error naming op. */
int tg__cuda_stream_sync(const char *op, int device);
/* The device's cuBLAS handle, bound to tg__cuda_stream(device), math mode CUBLAS_DEFAULT_MATH
 * (no TF32 unless the caller asks per call); created on first use. NULL + error naming op. */
cublasHandle_t tg__cublas_handle(const char *op, int device);
/* Device properties, read once per device (multiprocessor count, shared memory, ...). NULL +
 * error for a bad ordinal. */
const struct cudaDeviceProp *tg__cuda_props(const char *op, int device);

/* Scratch memory from the caching allocator (kernels' workspaces: CUB temp storage, partial
 * sums). Stream-ordered on the device's stream like tensor memory. NULL + error naming op
 * ("CUDA out of memory. Tried to allocate ..."). Give it back with tg__cuda_free and the same
 * nbytes. */
void *tg__cuda_alloc(const char *op, size_t nbytes, int device);
void tg__cuda_free(void *p, size_t nbytes, int device);

/* Raw copies of nbytes, any direction (tg_device says where each pointer lives). Host <->
 * device and device <-> other device copies are synchronous (they wait for the streams
 * involved); a copy within one device is queued on its stream. 0, or -1 + error naming op. */
int tg__cuda_memcpy(const char *op, void *dst, tg_device dst_device, const void *src,
                    tg_device src_device, size_t nbytes);

/* The CUDA device hook (cuda_alloc.c): caching allocation, raw copies. cuda_device.c
 * registers it with the core when the library loads. */
extern const tg_device_hooks tg__cuda_device_hooks;

/* The profiler's timer of CUDA operators (cuda_profiler.c): CUDA events on the device's
 * stream. cuda_device.c registers it with the profiler when the library loads. */
extern const struct tg__prof_device_timer tg__cuda_profiler_timer;

/* What the core's public tg_cuda_* functions call (cuda_api.c), and the table of CUDA kernels
 * (generated/tg_register_cuda.c): cuda_device.c registers both when the backend loads. */
extern const tg__cuda_backend tg__cuda_backend_api;
extern const tg_library tg__cuda_library;

/* Allocator statistics for the public tg_cuda_memory_* functions (cuda_api.c): which = 0
 * allocated, 1 reserved, 2 peak allocated, in bytes. */
int64_t tg__cuda_allocator_stat(int device, int which);
void tg__cuda_allocator_empty_cache(void);

/* The strided, broadcasting, converting copy between tensors on ONE device is the CUDA copy_
 * kernel's (kernels/cuda/copy.cu), which registers it with the core as the device's copy hook
 * (tg__register_device_copy); tg__copy_into uses it for the device side of every copy that is
 * not a contiguous byte copy. */

#ifdef __cplusplus
}
#endif

#endif
