/* The CPU emulator of the CUDA backend (tests/cuda_emu, `make test-cuda-emu`) checked against
 * what a GPU does, so that a green emulated run means something: device memory is not host
 * memory, stream work runs only when something waits for it, launches and cuBLAS calls check
 * their arguments, float16/bfloat16 round as the hardware and the CPU kernels do. Built only
 * in the emulated flavour (TG_CUDA_EMU). */
#ifdef TG_CUDA_EMU
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "tensorgen.h"
#include "cuda/cuda_rt.h"

static float *device_floats(tg_tensor **t, int64_t n, float value)
{
    *t = tg_full(TG_INTS(n), value, .dtype = TG_FLOAT32, .device = TG_DEVICE_CUDA(0));
    cr_assert(*t, "%s", tg_last_error());
    return (float *)tg_tensor_data(*t);
}

/* A host read of device memory is a crash on a GPU; the emulator traps it. */
Test(cuda_emu, host_access_to_device_memory_faults, .signal = SIGSEGV)
{
    tg_tensor *t;
    volatile float *p = device_floats(&t, 4, 1.0f);
    cr_assert(tg_cuda_synchronize() == 0);
    (void)p[0];
}

/* Stream work waits until something synchronises: a copy on the legacy stream (cudaMemcpy)
 * does not wait for tensorgen's non-blocking stream, a stream synchronisation does. */
Test(cuda_emu, stream_work_runs_when_waited_for)
{
    tg_tensor *t;
    float *p = device_floats(&t, 4, 1.0f);
    cr_assert(tg_cuda_synchronize() == 0);
    cudaStream_t s = tg__cuda_stream(0);
    cr_assert_eq(cudaMemsetAsync(p, 0, 4 * sizeof(float), s), cudaSuccess);
    float h[4];
    cr_assert_eq(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_expect_eq(h[0], 1.0f, "the memset ran before anything waited for it");
    cr_assert_eq(cudaStreamSynchronize(s), cudaSuccess);
    cr_assert_eq(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
    cr_expect_eq(h[0], 0.0f);
    tg_release(t);
}

/* Copies check which side is device memory, and how much of it there is. */
Test(cuda_emu, copies_check_their_pointers)
{
    tg_tensor *t;
    float *p = device_floats(&t, 4, 1.0f);
    float h[256] = { 0 }; /* the block holds 512 bytes (the caching allocator rounds up) */
    cr_expect_eq(cudaMemcpy(p, h, 4 * sizeof(float), cudaMemcpyDeviceToHost),
                 cudaErrorInvalidValue);
    cr_expect_eq(cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost), cudaErrorInvalidValue,
                 "past the end");
    cr_expect_eq(cudaGetLastError(), cudaErrorInvalidValue);
    cr_expect_eq(cudaGetLastError(), cudaSuccess, "reading the last error clears it");
    tg_release(t);
}

/* cuBLAS's own checks: leading dimensions at least the stored rows, matching types. */
Test(cuda_emu, cublas_checks_its_arguments)
{
    tg_tensor *t;
    float *p = device_floats(&t, 64, 1.0f);
    cublasHandle_t h = tg__cublas_handle("test", 0);
    cr_assert(h, "%s", tg_last_error());
    float one = 1, zero = 0;
    /* C (4 x 4) = A (4 x 4) B (4 x 4), column-major, lda 3 < m */
    cr_expect_eq(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, p, CUDA_R_32F, 3, p + 16,
                              CUDA_R_32F, 4, &zero, p + 32, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 CUBLAS_STATUS_INVALID_VALUE);
    /* op(A) = A^T with A stored 4 x 4: lda 4 is fine; mixed types are not */
    cr_expect_eq(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 4, 4, 4, &one, p, CUDA_R_32F, 4, p + 16,
                              CUDA_R_16F, 4, &zero, p + 32, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 CUBLAS_STATUS_NOT_SUPPORTED);
    cr_expect_eq(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 4, 4, 4, &one, p, CUDA_R_32F, 4, p + 16,
                              CUDA_R_32F, 4, &zero, p + 32, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 CUBLAS_STATUS_SUCCESS);
    float c[16];
    cr_assert_eq(tg_cuda_synchronize(), 0);
    cr_assert_eq(cudaMemcpy(c, p + 32, sizeof c, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < 16; i++)
        cr_expect_eq(c[i], 4.0f, "C[%d] = %g: a row of four ones times a column", i, c[i]);
    tg_release(t);
}

/* The emulator's float16/bfloat16 rounding against the CPU kernels' (runtime/dtype.c) on
 * 2^17 float32 values spread over [-70000, 70000], subnormals and specials included: the two
 * sides of every CUDA-vs-CPU test convert alike. */
Test(cuda_emu, half_rounding_matches_the_cpu)
{
    enum { N = 1 << 17 };
    tg_tensor *f = tg_empty(TG_INTS(N), .dtype = TG_FLOAT32);
    float *v = (float *)tg_tensor_data(f);
    for (int i = 0; i < N; i++) v[i] = (float)((i - N / 2) * (70000.0 / (N / 2)) + i * 1e-3);
    v[0] = 1e-7f;
    v[1] = -3e-8f;
    v[2] = 65519.0f;
    v[3] = 65520.0f;
    v[4] = 1.0f / 0.0f;
    v[5] = 0.0f / 0.0f;
    v[6] = 3.3895314e38f;
    v[7] = 5.9604645e-8f;
    v[8] = 2.9802322e-8f;
    v[9] = 2.9802326e-8f;
    tg_tensor *gf = tg_to_device(f, TG_DEVICE_CUDA(0));
    cr_assert(gf, "%s", tg_last_error());
    const tg_dtype half[2] = { TG_FLOAT16, TG_BFLOAT16 };
    for (int k = 0; k < 2; k++) {
        tg_tensor *c = tg_to(f, half[k]), *g = tg_to(gf, half[k]);
        cr_assert(c && g, "%s", tg_last_error());
        tg_tensor *back = tg_to_device(g, TG_DEVICE_CPU);
        const uint16_t *a = tg_tensor_data(c), *b = tg_tensor_data(back);
        int bad = 0;
        for (int i = 0; i < N && bad < 5; i++)
            if (a[i] != b[i] && !(v[i] != v[i])) {
                bad++;
                cr_expect(false, "%s of %.9g: CPU %04x, emulated device %04x",
                          tg_dtype_name(half[k]), v[i], a[i], b[i]);
            }
        tg_release(c);
        tg_release(g);
        tg_release(back);
    }
    tg_release(f);
    tg_release(gf);
}
#endif
