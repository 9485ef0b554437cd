// The per-launch baseline of bench/bench_cuda.c: `n` launches of an empty kernel on a stream.
// Built only with CUDA (the Makefile compiles bench/*.cu with nvcc into tg_bench).
#include <cuda_runtime_api.h>

__global__ void bench_empty_kernel() {}

extern "C" int bench_launch_empty(cudaStream_t s, long n)
{
    for (long i = 0; i < n; i++) bench_empty_kernel<<<1, 1, 0, s>>>();
    return (int)cudaGetLastError();
}
