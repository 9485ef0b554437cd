/* cuda-emu runtime API: devices, errors, cudaMalloc/cudaFree, streams, copies and memsets, with
 * the CUDA 12 runtime's semantics for the calls tensorgen makes (see emu_internal.h for the
 * model). Only what the library uses is here; each call checks its arguments as CUDA does and
 * records failures as the thread's last error. */
#include "emu_internal.h"

#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <memory>
#include <vector>

namespace tg_emu {

std::recursive_mutex &lock()
{
    static std::recursive_mutex m;
    return m;
}

int device_count()
{
    static int n = [] {
        const char *e = getenv("TG_CUDA_EMU_DEVICES");
        int v = e ? atoi(e) : 2;
        return v < 0 ? 0 : v > kMaxDevices ? kMaxDevices : v;
    }();
    return n;
}

static thread_local int current = 0;
static thread_local cudaError_t last_error = cudaSuccess;

int current_device() { return current; }

cudaError_t fail(cudaError_t e)
{
    if (e != cudaSuccess) last_error = e;
    return e;
}

/* ------------------------------------------------------------------ streams */

static Stream legacy[kMaxDevices];
static std::vector<Stream *> created; /* never destroyed: tensorgen keeps its streams */

static Stream *legacy_of(int device)
{
    Stream *s = &legacy[device];
    s->device = device;
    s->blocking = true;
    s->legacy = true;
    return s;
}

Stream *stream_of(cudaStream_t s)
{
    if (!s) return legacy_of(current);
    for (Stream *c : created)
        if ((cudaStream_t)c == s) return c;
    return nullptr;
}

static void run(Op &op)
{
    open_devices(op.devices, op.what);
    op.run();
    close_devices(op.devices);
}

void drain(Stream *s)
{
    while (!s->queue.empty()) {
        Op op = std::move(s->queue.front());
        s->queue.pop_front();
        run(op);
    }
}

void drain_device(int device, bool blocking_only)
{
    for (Stream *c : created)
        if (c->device == device && (c->blocking || !blocking_only)) drain(c);
}

void enqueue(Stream *s, Op op)
{
    if (s->legacy) { /* the legacy stream waits for the blocking streams, then runs */
        drain_device(s->device, true);
        run(op);
    } else {
        s->queue.push_back(std::move(op));
    }
}

} // namespace tg_emu

using namespace tg_emu;

#define LOCKED std::lock_guard<std::recursive_mutex> guard_(lock())

static bool valid_device(int d) { return d >= 0 && d < device_count(); }

extern "C" {

/* ------------------------------------------------------------------ devices and errors */

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count) return fail(cudaErrorInvalidValue);
    *count = device_count();
    return *count ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device)
{
    if (device_count() == 0) return fail(cudaErrorNoDevice);
    if (!valid_device(device)) return fail(cudaErrorInvalidDevice);
    current = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device) return fail(cudaErrorInvalidValue);
    if (device_count() == 0) return fail(cudaErrorNoDevice);
    *device = current;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop) return fail(cudaErrorInvalidValue);
    if (!valid_device(device))
        return fail(device_count() ? cudaErrorInvalidDevice : cudaErrorNoDevice);
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "cuda-emu device %d (CPU emulation)", device);
    prop->totalGlobalMem = capacity_bytes();
    prop->sharedMemPerBlock = 48 * 1024;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->major = 9;
    prop->minor = 0;
    /* Few by default, so that emulated grids stay small; TG_CUDA_EMU_SMS=132 sizes grids for an H200. */
    const char *sms = getenv("TG_CUDA_EMU_SMS");
    prop->multiProcessorCount = sms && atoi(sms) > 0 ? atoi(sms) : 2;
    prop->maxThreadsPerMultiProcessor = 2048;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    struct cudaDeviceProp p;
    if (!value) return fail(cudaErrorInvalidValue);
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) return e;
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    default: return fail(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t tg_emu_occupancy(int *num_blocks, int block_size, size_t dynamic_smem)
{
    if (!num_blocks || block_size <= 0 || block_size > 1024 || dynamic_smem > 48 * 1024)
        return fail(cudaErrorInvalidValue);
    int n = 2048 / block_size;
    *num_blocks = n > 32 ? 32 : n;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    LOCKED;
    if (device_count() == 0) return fail(cudaErrorNoDevice);
    drain_device(current, false);
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return last_error; }

const char *cudaGetErrorName(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    }
    return "cudaErrorUnknown";
}

/* The CUDA 12 runtime's strings. */
const char *cudaGetErrorString(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    }
    return "unrecognized error code";
}

/* ------------------------------------------------------------------ memory */

cudaError_t cudaMalloc(void **ptr, size_t size)
{
    LOCKED;
    if (device_count() == 0) return fail(cudaErrorNoDevice);
    return alloc(ptr, size, current);
}

cudaError_t cudaFree(void *ptr)
{
    LOCKED;
    if (!ptr) return cudaSuccess;
    const Block *b = find(ptr, 1);
    if (!b || b->ptr != ptr) return fail(cudaErrorInvalidValue);
    drain_device(b->device, false); /* cudaFree synchronises the device */
    return release(ptr);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    LOCKED;
    if (!free_bytes || !total_bytes) return fail(cudaErrorInvalidValue);
    *total_bytes = capacity_bytes();
    *free_bytes = capacity_bytes() - used_bytes(current);
    return cudaSuccess;
}

/* ------------------------------------------------------------------ copies */

/* Which side of a copy is device memory, checked against the kind; -1 for a mismatch. */
static int device_side(const void *p, size_t n, bool want_device)
{
    const Block *b = find(p, n);
    if (want_device) return b ? b->device : -1;
    return b ? -1 : kMaxDevices; /* kMaxDevices: "host, fine" */
}

static cudaError_t copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                        cudaStream_t stream, bool async)
{
    LOCKED;
    if (n == 0) return cudaSuccess;
    if (!dst || !src) return fail(cudaErrorInvalidValue);
    Stream *s = stream_of(stream);
    if (!s) return fail(cudaErrorInvalidResourceHandle);
    if (kind == cudaMemcpyDefault) {
        bool dd = find(dst, n) != nullptr, sd = find(src, n) != nullptr;
        kind = dd ? (sd ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                  : (sd ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    }
    bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind > cudaMemcpyDefault) return fail(cudaErrorInvalidMemcpyDirection);
    int dd = device_side(dst, n, dst_dev), sd = device_side(src, n, src_dev);
    if (dd < 0 || sd < 0) return fail(cudaErrorInvalidValue);
    unsigned mask = (dst_dev ? 1u << dd : 0) | (src_dev ? 1u << sd : 0);
    if (!async) drain_device(current, true); /* the legacy stream waits for blocking streams */
    switch (kind) {
    case cudaMemcpyHostToHost: memcpy(dst, src, n); return cudaSuccess;
    case cudaMemcpyHostToDevice: {
        /* From pageable memory: staged at the call, so the caller may reuse its buffer. */
        std::shared_ptr<std::vector<char>> staged =
            std::make_shared<std::vector<char>>((const char *)src, (const char *)src + n);
        Op op{ mask, "cudaMemcpy (host to device)",
               [dst, staged] { memcpy(dst, staged->data(), staged->size()); } };
        if (async) enqueue(s, std::move(op));
        else enqueue(legacy_of(current), std::move(op));
        return cudaSuccess;
    }
    case cudaMemcpyDeviceToHost: {
        /* To pageable memory: returns once the copy is done, after the stream's earlier work. */
        if (async) drain(s);
        open_devices(mask, "cudaMemcpy (device to host)");
        memcpy(dst, src, n);
        close_devices(mask);
        return cudaSuccess;
    }
    default: {
        Op op{ mask, "cudaMemcpy (device to device)", [dst, src, n] { memcpy(dst, src, n); } };
        if (async) enqueue(s, std::move(op));
        else enqueue(legacy_of(current), std::move(op));
        return cudaSuccess;
    }
    }
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return copy(dst, src, count, kind, 0, false);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    return copy(dst, src, count, kind, stream, true);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                size_t count, cudaStream_t stream)
{
    LOCKED;
    if (count == 0) return cudaSuccess;
    if (!valid_device(dst_device) || !valid_device(src_device)) return fail(cudaErrorInvalidDevice);
    const Block *db = find(dst, count), *sb = find(src, count);
    if (!db || !sb || db->device != dst_device || sb->device != src_device)
        return fail(cudaErrorInvalidValue);
    Stream *s = stream_of(stream);
    if (!s) return fail(cudaErrorInvalidResourceHandle);
    unsigned mask = (1u << dst_device) | (1u << src_device);
    enqueue(s, Op{ mask, "cudaMemcpyPeerAsync", [dst, src, count] { memcpy(dst, src, count); } });
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
    LOCKED;
    if (count == 0) return cudaSuccess;
    const Block *b = find(ptr, count);
    if (!b) return fail(cudaErrorInvalidValue);
    Stream *s = stream_of(stream);
    if (!s) return fail(cudaErrorInvalidResourceHandle);
    enqueue(s, Op{ 1u << b->device, "cudaMemsetAsync",
                   [ptr, value, count] { memset(ptr, value, count); } });
    return cudaSuccess;
}

/* ------------------------------------------------------------------ streams */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    LOCKED;
    if (!stream || flags > cudaStreamNonBlocking) return fail(cudaErrorInvalidValue);
    if (device_count() == 0) return fail(cudaErrorNoDevice);
    Stream *s = new Stream();
    s->device = current;
    s->blocking = !(flags & cudaStreamNonBlocking);
    s->legacy = false;
    created.push_back(s);
    *stream = (cudaStream_t)s;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    LOCKED;
    Stream *s = stream_of(stream);
    if (!s) return fail(cudaErrorInvalidResourceHandle);
    if (s->legacy) drain_device(s->device, true);
    drain(s);
    return cudaSuccess;
}

/* ------------------------------------------------------------------ events */

/* An event records the host's clock when the stream reaches it (so elapsed times are the
 * emulator's own, meaningless as GPU figures). */
struct CUevent_st {
    Stream *stream;
    bool done;
    double ms;
};

static double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    if (!event) return fail(cudaErrorInvalidValue);
    *event = new CUevent_st{ nullptr, false, 0 };
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    LOCKED;
    Stream *s = stream_of(stream);
    if (!event || !s) return fail(cudaErrorInvalidResourceHandle);
    event->stream = s;
    event->done = false;
    enqueue(s, Op{ 0, "cudaEventRecord", [event] {
                      event->ms = now_ms();
                      event->done = true;
                  } });
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    LOCKED;
    if (!event) return fail(cudaErrorInvalidResourceHandle);
    if (event->stream) drain(event->stream);
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms || !start || !end) return fail(cudaErrorInvalidValue);
    if (!start->done || !end->done) return fail(cudaErrorInvalidResourceHandle);
    *ms = (float)(end->ms - start->ms);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    delete event;
    return cudaSuccess;
}

} // extern "C"

/* ------------------------------------------------------------------ kernel launches */

void tg_emu_enqueue_kernel(const char *name, dim3 grid, dim3 block, size_t smem,
                           cudaStream_t stream, const void *const *pointer_args, int npointer_args,
                           std::function<void()> thread_body)
{
    LOCKED;
    if (device_count() == 0) {
        fail(cudaErrorNoDevice);
        return;
    }
    Stream *s = stream_of(stream);
    if (!s) {
        fail(cudaErrorInvalidResourceHandle);
        return;
    }
    if (s->device != current) {
        fail(cudaErrorInvalidResourceHandle);
        return;
    } /* another device's stream */
    unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 ||
        grid.z > 65535 || block.x == 0 || block.y == 0 || block.z == 0 || block.x > 1024 ||
        block.y > 1024 || block.z > 64 || threads > 1024 || smem > 48 * 1024) {
        fail(cudaErrorInvalidConfiguration);
        return;
    }
    /* A pointer argument must be memory of the launching device (or null). */
    for (int i = 0; i < npointer_args; i++) {
        const void *p = pointer_args[i];
        if (!p) continue;
        const Block *b = find(p, 1);
        if (!b) die("kernel %s: pointer argument %d (%p) is not device memory", name, i, p);
        if (b->device != s->device)
            die("kernel %s launched on cuda:%d: pointer argument %d is memory of cuda:%d", name,
                s->device, i, b->device);
    }
    enqueue(s, Op{ 1u << s->device, name, [name, grid, block, body = std::move(thread_body)] {
                      run_grid(name, grid, block, body);
                  } });
}
