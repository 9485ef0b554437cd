/* cuda-emu: what a .cu file sees from <cuda_runtime.h>, for running tensorgen's CUDA kernels on
 * the CPU (`make test-cuda-emu`, docs/cuda.md "Testing without a GPU").
 *
 * The .cu sources are compiled unchanged by g++ except for one rewrite done by
 * tests/cuda_emu/unchevron.pl: `kernel<<<grid, block, smem, stream>>>(args)` becomes
 * `tg_emu_launch("kernel", kernel, grid, block, smem, stream)(args)`. The launch is queued on
 * the stream and runs when the stream is synchronised, like on a GPU; each CUDA thread of a
 * block is a fiber (tests/cuda_emu/emu_launch.cpp), so __syncthreads and __shared__ memory
 * behave as on the device. Qualifiers (__global__, __device__, ...) vanish, __shared__ becomes
 * per-block storage, threadIdx & co. read the running fiber's coordinates. */
#ifndef TG_EMU_CUDA_RUNTIME_H
#define TG_EMU_CUDA_RUNTIME_H

#include "cuda_runtime_api.h"

#ifdef __cplusplus
#include <cmath>
#include <cstdint>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __restrict__ __restrict
/* Blocks run one at a time on one OS thread, every fiber of a block on the same one: a
 * thread-local static is exactly one block's shared memory. */
#define __shared__ static thread_local

struct uint2 {
    unsigned int x, y;
};
struct uint3 {
    unsigned int x, y, z;
};
struct uint4 {
    unsigned int x, y, z, w;
};
inline uint2 make_uint2(unsigned int x, unsigned int y) { return uint2{ x, y }; }
inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w)
{
    return uint4{ x, y, z, w };
}
struct dim3 {
    unsigned int x, y, z;
    dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
    dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

extern thread_local uint3 tg_emu_threadIdx, tg_emu_blockIdx;
extern thread_local dim3 tg_emu_blockDim, tg_emu_gridDim;
#define threadIdx tg_emu_threadIdx
#define blockIdx tg_emu_blockIdx
#define blockDim tg_emu_blockDim
#define gridDim tg_emu_gridDim

/* Waits until every thread of the block has arrived (the running fiber yields). */
void tg_emu_syncthreads(void);
#define __syncthreads() tg_emu_syncthreads()

/* Atomics: the fibers of a launch run one at a time, so plain read-modify-writes are atomic. */
template <class T, class U> inline T atomicAdd(T *p, U v)
{
    T o = *p;
    *p = (T)(o + (T)v);
    return o;
}
template <class T, class U> inline T atomicMin(T *p, U v)
{
    T o = *p;
    if ((T)v < o) *p = (T)v;
    return o;
}
template <class T, class U> inline T atomicMax(T *p, U v)
{
    T o = *p;
    if ((T)v > o) *p = (T)v;
    return o;
}
template <class T, class U> inline T atomicExch(T *p, U v)
{
    T o = *p;
    *p = (T)v;
    return o;
}

/* Intrinsics: IEEE operations in round-to-nearest (the host's default mode). */
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline unsigned int __umulhi(unsigned int a, unsigned int b)
{
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
template <class T> inline T __ldg(const T *p) { return *p; }

/* One queued launch: the kernel's name, its configuration, and a callable running one CUDA
 * thread (each call gets its own copy of the arguments, as each device thread does). */
void tg_emu_enqueue_kernel(const char *name, dim3 grid, dim3 block, size_t smem,
                           cudaStream_t stream, const void *const *pointer_args, int npointer_args,
                           std::function<void()> thread_body);

template <class A> static inline const void *tg_emu_pointer_of(const A &a)
{
    if constexpr (std::is_pointer<A>::value) return (const void *)a;
    else return nullptr;
}

template <class... P> struct tg_emu_launcher {
    const char *name;
    void (*kernel)(P...);
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;

    template <class... A> void operator()(A &&...args) const
    {
        /* Converted as a call converts them, then copied into the queued launch. */
        std::tuple<typename std::decay<P>::type...> params(std::forward<A>(args)...);
        const void *ptrs[sizeof...(P) + 1] = { nullptr };
        int np = 0;
        std::apply([&](const auto &...p) { ((ptrs[np++] = tg_emu_pointer_of(p)), ...); }, params);
        void (*k)(P...) = kernel;
        tg_emu_enqueue_kernel(name, grid, block, smem, stream, ptrs, np,
                              [k, params]() { std::apply(k, params); });
    }
};

template <class... P>
static inline tg_emu_launcher<P...> tg_emu_launch(const char *name, void (*kernel)(P...), dim3 grid,
                                                  dim3 block, size_t smem = 0,
                                                  cudaStream_t stream = 0)
{
    return tg_emu_launcher<P...>{ name, kernel, grid, block, smem, stream };
}

template <class K>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *num_blocks, K,
                                                                        int block_size,
                                                                        size_t dynamic_smem)
{
    return tg_emu_occupancy(num_blocks, block_size, dynamic_smem);
}
#endif /* __cplusplus */

#endif
