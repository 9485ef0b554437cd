/* cuda-emu internals shared by emu_memory.cpp, emu_runtime.cpp, emu_launch.cpp and
 * emu_cublas.cpp. The model (docs/cuda.md, "Testing without a GPU"):
 *   - devices: TG_CUDA_EMU_DEVICES of them (default 2), each with TG_CUDA_EMU_MEMORY_MB of
 *     memory (default 8192), a current device per host thread;
 *   - memory: each cudaMalloc block is its own mapping with a guard page on either side, and is
 *     inaccessible (PROT_NONE) except while work of its device runs, so a host access to
 *     device memory, a kernel running past a block's end or touching another device's memory
 *     faults, and the fault handler says which;
 *   - streams: FIFO queues of work run when something synchronises (cudaStreamSynchronize,
 *     cudaDeviceSynchronize, cudaFree, a synchronous copy, a copy to pageable host memory), so
 *     a missing synchronisation reads stale data as it would on a GPU. The legacy default
 *     stream (0) runs its work at once, after the device's blocking streams. */
#ifndef TG_EMU_INTERNAL_H
#define TG_EMU_INTERNAL_H

#include "cuda_runtime.h"
#include "cublas_v2.h"

#include <deque>
#include <functional>
#include <mutex>

namespace tg_emu {

constexpr int kMaxDevices = 16;

/* One unit of stream work; `devices` is a bit mask of the devices whose memory it touches. */
struct Op {
    unsigned devices;
    const char *what; /* shown when it faults: kernel name, "cublasGemmEx", ... */
    std::function<void()> run;
};

struct Stream {
    int device;
    bool blocking; /* false: cudaStreamNonBlocking */
    bool legacy;   /* the device's default stream (stream 0) */
    std::deque<Op> queue;
};

/* Every entry point holds this lock; work that a drain runs does not call the API. */
std::recursive_mutex &lock();

int device_count();
int current_device();
/* Records e as this thread's last error (unless cudaSuccess) and returns it. */
cudaError_t fail(cudaError_t e);

/* ---- memory (emu_memory.cpp) */
struct Block {
    char *map; /* the whole mapping, guard pages included */
    size_t map_len;
    char *ptr;   /* what cudaMalloc returned */
    size_t size; /* what was asked for */
    int device;
};
cudaError_t alloc(void **p, size_t size, int device);
cudaError_t release(void *p); /* p must be a block's start */
size_t used_bytes(int device);
size_t capacity_bytes();
/* The block holding [p, p + n), or null. */
const Block *find(const void *p, size_t n);
/* Opens (or closes again) the memory of every device in the mask for the calling work. */
void open_devices(unsigned mask, const char *what);
void close_devices(unsigned mask);
/* Stops the process with a message naming what went wrong (a GPU would fault). */
[[noreturn]] void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- streams (emu_runtime.cpp) */
/* The stream a handle names (0: the current device's legacy stream). */
Stream *stream_of(cudaStream_t s);
void enqueue(Stream *s, Op op);
void drain(Stream *s);
void drain_device(int device, bool blocking_only);

/* ---- kernels (emu_launch.cpp) */
void run_grid(const char *name, dim3 grid, dim3 block, const std::function<void()> &thread_body);

} // namespace tg_emu

#endif
