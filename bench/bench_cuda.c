/* GPU workloads of build/bench/tg_bench (bench/README.md, "GPU"), with baselines measured in
 * the same run: cudaMemcpy device-to-device bandwidth, cuBLAS called directly, an empty kernel
 * launch. Compiled only with TG_WITH_CUDA and run only when a device is present (otherwise one
 * note on stderr). Device time comes from cudaEvents on tensorgen's stream of device 0; the
 * per-op overhead is host wall time per call (what a caller waits for before the next call).
 *
 * BENCH_SMOKE=1 shrinks every workload (sizes, calls per repeat) so that the whole set runs in
 * seconds on the CUDA emulator: `make test-cuda-emu` uses it to check that this file works
 * before a GPU session depends on it. Names keep their full-size spelling; the figures mean
 * nothing then.
 *
 * BENCH_TF32=1 lets float32 matmuls (tensorgen's and the cuBLAS baseline alike) use TF32
 * tensor cores; by default they are full float32 (CUBLAS_DEFAULT_MATH). */
#ifdef TG_WITH_CUDA

#include "bench.h"
#include "tensorgen.h"
#include "cuda/cuda_rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N256M (256L * 1024 * 1024)

int bench_launch_empty(cudaStream_t s, long n); /* bench_cuda_launch.cu */

/* A size or a call count: the real one, or the smoke run's. */
static int64_t scaled(int64_t full, int64_t smoke) { return bench_cfg.smoke ? smoke : full; }

typedef struct gctx {
    tg_tensor *a, *b, *out;
    void *pa, *pb, *pc;
    int64_t n;
    bool bf16;
} gctx;

static cudaStream_t stream0(void) { return tg__cuda_stream(0); }

/* Times `body` with cudaEvents: `inner` calls per repeat after one warm-up repeat; per-call
 * seconds into secs[]. False when a call or a CUDA call failed (error on stderr). */
static bool gpu_time(bench_body body, void *ctx, int64_t inner, double *secs)
{
    cudaEvent_t e0, e1;
    if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) return false;
    bool ok = true;
    for (int64_t i = 0; ok && i < inner; i++) ok = body(ctx); /* warm-up */
    for (int r = 0; ok && r < bench_cfg.repeats; r++) {
        cudaEventRecord(e0, stream0());
        for (int64_t i = 0; ok && i < inner; i++) ok = body(ctx);
        cudaEventRecord(e1, stream0());
        ok = ok && cudaEventSynchronize(e1) == cudaSuccess;
        float ms = 0;
        ok = ok && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
        secs[r] = ms * 1e-3 / (double)inner;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return ok && tg_cuda_synchronize() == 0;
}

static void gpu_run(const char *name, const char *unit, const char *src, bench_body body, void *c,
                    bool ok, int64_t inner, double work, double scale)
{
    if (!bench_wanted(name)) return;
    double secs[BENCH_MAX_REPEATS];
    if (!ok || !gpu_time(body, c, inner, secs)) {
        fprintf(stderr, "tg_bench: %s skipped: %s\n", name,
                tg_last_error() ? tg_last_error() : cudaGetErrorString(cudaGetLastError()));
        tg_clear_error();
        return;
    }
    bench_emit(name, unit, src, secs, work, scale);
}

static bool done(tg_tensor *r)
{
    if (!r) return false;
    tg_release(r);
    return true;
}

static tg_tensor *on_gpu(tg_tensor *t)
{ /* consumes t */
    tg_tensor *g = t ? tg_to_device(t, TG_DEVICE_CUDA(0)) : NULL;
    tg_release(t);
    return g;
}

static void release3(gctx *c)
{
    tg_release(c->a);
    tg_release(c->b);
    tg_release(c->out);
    c->a = c->b = c->out = NULL;
}

/* ---------------------------------------------------------------- memory-bound */

static bool body_add_out(void *p)
{
    gctx *c = p;
    return done(tg_add_out(c->a, c->b, c->out));
}
static bool body_sum(void *p)
{
    gctx *c = p;
    return done(tg_sum(c->a));
}
static bool body_memcpy(void *p)
{
    gctx *c = p;
    return cudaMemcpyAsync(c->pc, c->pa, (size_t)c->n * 4, cudaMemcpyDeviceToDevice, stream0()) ==
           cudaSuccess;
}

static void bench_gpu_memory(void)
{
    gctx c = { 0 };
    c.n = scaled(N256M, 1 << 16);
    c.a = tg_empty(TG_INTS(c.n), .device = TG_DEVICE_CUDA(0));
    c.b = tg_empty(TG_INTS(c.n), .device = TG_DEVICE_CUDA(0));
    c.out = tg_empty(TG_INTS(c.n), .device = TG_DEVICE_CUDA(0));
    bool ok = c.a && c.b && c.out;
    if (ok) { /* random inputs: uniform_ on the device when it has a kernel, else fallback */
        tg_tensor *r1 = tg_uniform_(c.a), *r2 = tg_uniform_(c.b);
        ok = r1 && r2;
        tg_release(r1);
        tg_release(r2);
    }
    if (ok) {
        c.pa = c.a->storage->data;
        c.pc = c.out->storage->data;
    }
    double bytes = 4.0 * (double)c.n;
    /* cudaMemcpy reads and writes every byte: 2 x 4 x N, the same count as a copy kernel */
    gpu_run("cuda_memcpy_d2d_256M", "GB/s", "cuda", body_memcpy, &c, ok, scaled(5, 1), 2 * bytes,
            0);
    gpu_run("cuda_add_256M_out", "GB/s", "tensorgen", body_add_out, &c, ok, scaled(5, 1), 3 * bytes,
            0);
    gpu_run("cuda_sum_256M", "GB/s", "tensorgen", body_sum, &c, ok, scaled(5, 1), bytes, 0);
    release3(&c);
}

/* ---------------------------------------------------------------- matmul */

static bool body_mm_out(void *p)
{
    gctx *c = p;
    return done(tg_mm_out(c->a, c->b, c->out));
}

/* out = a @ b for row-major (n, n) matrices: cuBLAS is column-major, so it computes
 * out^T = b^T @ a^T by swapping the operands. */
static bool body_cublas(void *p)
{
    gctx *c = p;
    cublasHandle_t h = tg__cublas_handle("bench", 0);
    if (!h) return false;
    int n = (int)c->n;
    float one = 1.0f, zero = 0.0f;
    cudaDataType_t t = c->bf16 ? CUDA_R_16BF : CUDA_R_32F;
    cublasComputeType_t ct = c->bf16                ? CUBLAS_COMPUTE_32F
                             : getenv("BENCH_TF32") ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                    : CUBLAS_COMPUTE_32F;
    return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, c->pb, t, n, c->pa, t, n, &zero,
                        c->pc, t, n, ct, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
}

static void bench_gpu_mm(void)
{
    if (getenv("BENCH_TF32")) {
        cublasHandle_t h = tg__cublas_handle("bench", 0);
        if (h) cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
    }
    const int64_t sizes[] = { scaled(4096, 64), scaled(8192, 96) };
    for (int bf = 0; bf < 2; bf++) {
        for (int k = 0; k < 2; k++) {
            int64_t n = sizes[k];
            char name[64], base[64];
            snprintf(name, sizeof name, "cuda_mm_%lld_%s%s", (long long)n, bf ? "bf16" : "f32",
                     !bf && getenv("BENCH_TF32") ? "_tf32" : "");
            snprintf(base, sizeof base, "cublas_gemm_%lld_%s%s", (long long)n, bf ? "bf16" : "f32",
                     !bf && getenv("BENCH_TF32") ? "_tf32" : "");
            if (!bench_wanted(name) && !bench_wanted(base)) continue;
            tg_dtype dt = bf ? TG_BFLOAT16 : TG_FLOAT32;
            gctx c = { 0 };
            c.n = n;
            c.bf16 = bf;
            c.a = on_gpu(tg_randn(TG_INTS(n, n), .dtype = dt));
            c.b = on_gpu(tg_randn(TG_INTS(n, n), .dtype = dt));
            c.out = tg_empty(TG_INTS(n, n), .dtype = dt, .device = TG_DEVICE_CUDA(0));
            bool ok = c.a && c.b && c.out;
            if (ok) {
                c.pa = c.a->storage->data;
                c.pb = c.b->storage->data;
                c.pc = c.out->storage->data;
            }
            double flop = 2.0 * (double)n * (double)n * (double)n;
            gpu_run(base, "GFLOP/s", "cublas", body_cublas, &c, ok, scaled(3, 1), flop, 0);
            gpu_run(name, "GFLOP/s", "tensorgen", body_mm_out, &c, ok, scaled(3, 1), flop, 0);
            release3(&c);
        }
    }
}

/* ---------------------------------------------------------------- softmax */

static bool body_softmax(void *p)
{
    gctx *c = p;
    return done(tg_softmax(c->a, -1));
}

static void bench_gpu_softmax(void)
{
    const int64_t shapes[][2] = { { 4096, 1024 }, { 8192, 8192 }, { 65536, 128 } };
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "cuda_softmax_%lldx%lld_lastdim", (long long)shapes[k][0],
                 (long long)shapes[k][1]);
        if (!bench_wanted(name)) continue;
        gctx c = { 0 };
        c.a = on_gpu(tg_randn(
            TG_INTS(scaled(shapes[k][0], shapes[k][0] / 64), scaled(shapes[k][1], 40 + k))));
        gpu_run(name, "ms", "tensorgen", body_softmax, &c, c.a != NULL, scaled(20, 1), 0, 1e3);
        release3(&c);
    }
}

/* ---------------------------------------------------------------- MLP training step */

static void bench_gpu_mlp(void)
{
    const char *name = "cuda_mlp_784_512_512_10_b128_sgd_step";
    if (!bench_wanted(name)) return;
    const int64_t w[BENCH_MLP_LAYERS + 1] = { scaled(784, 20), scaled(512, 24), scaled(512, 24),
                                              10 },
                                       batch = scaled(128, 16);
    bench_mlp c = { 0 };
    bool ok = true;
    c.x = on_gpu(tg_rand(TG_INTS(batch, w[0])));
    c.y = on_gpu(tg_randint(10, TG_INTS(batch)));
    ok = c.x && c.y;
    for (int l = 0; l < BENCH_MLP_LAYERS; l++) {
        double bound = 1.0 / sqrt((double)w[l]);
        tg_scope_begin();
        tg_tensor *wt =
            tg_add_scalar(tg_mul_scalar(tg_rand(TG_INTS(w[l + 1], w[l])), 2 * bound), -bound);
        tg_tensor *bt = tg_add_scalar(tg_mul_scalar(tg_rand(TG_INTS(w[l + 1])), 2 * bound), -bound);
        c.p[2 * l] = wt ? tg_scope_keep(tg_to_device(wt, TG_DEVICE_CUDA(0))) : NULL;
        c.p[2 * l + 1] = bt ? tg_scope_keep(tg_to_device(bt, TG_DEVICE_CUDA(0))) : NULL;
        tg_scope_end();
        ok = ok && c.p[2 * l] && c.p[2 * l + 1];
        if (c.p[2 * l]) tg_tensor_set_requires_grad(c.p[2 * l], true);
        if (c.p[2 * l + 1]) tg_tensor_set_requires_grad(c.p[2 * l + 1], true);
    }
    gpu_run(name, "ms/step", "tensorgen", bench_mlp_step, &c, ok, scaled(50, 1), 0, 1e3);
    for (int i = 0; i < 2 * BENCH_MLP_LAYERS; i++) {
        if (c.p[i]) tg_tensor_set_grad(c.p[i], NULL);
        tg_release(c.p[i]);
    }
    tg_release(c.x);
    tg_release(c.y);
}

/* ---------------------------------------------------------------- convolution */

/* conv2d_fwd / conv2d_fwdbwd of BENCH.md on device 0: 8x64x56x56, 64 3x3 filters, padding 1;
 * the default path (cuDNN where built) and the im2col + cuBLAS fallback (TG_CUDA_CONV=im2col). */
static bool body_gpu_conv_fwd(void *p)
{
    gctx *c = p;
    bool ok = false;
    TG_NO_GRAD {
        ok = done(tg_conv2d(c->a, c->b, .padding = TG_INTS(1, 1)));
    }
    return ok;
}

static bool body_gpu_conv_fwdbwd(void *p)
{
    gctx *c = p;
    tg_tensor_set_grad(c->a, NULL);
    tg_tensor_set_grad(c->b, NULL);
    tg_tensor *y = tg_conv2d(c->a, c->b, .padding = TG_INTS(1, 1));
    tg_tensor *s = tg_sum(y);
    bool ok = s && tg_backward(s) == 0;
    tg_release(s);
    tg_release(y);
    return ok;
}

static void bench_gpu_conv(void)
{
    static const char *const names[2][2] = { { "cuda_conv2d_fwd", "cuda_conv2d_fwdbwd" },
                                             { "cuda_conv2d_fwd_im2col",
                                               "cuda_conv2d_fwdbwd_im2col" } };
    for (int path = 0; path < 2; path++) {
        if (!bench_wanted(names[path][0]) && !bench_wanted(names[path][1])) continue;
        if (path) setenv("TG_CUDA_CONV", "im2col", 1);
        gctx c = { 0 };
        int64_t hw = scaled(56, 6), ch = scaled(64, 4);
        c.a = on_gpu(tg_rand(TG_INTS(scaled(8, 1), ch, hw, hw)));
        tg_scope_begin();
        c.b = tg_scope_keep(tg_mul_scalar(tg_rand(TG_INTS(ch, ch, 3, 3)), 0.01));
        tg_scope_end();
        c.b = on_gpu(c.b);
        bool ok = c.a && c.b;
        gpu_run(names[path][0], "ms", "tensorgen", body_gpu_conv_fwd, &c, ok, scaled(20, 1), 0,
                1e3);
        if (ok) {
            tg_tensor_set_requires_grad(c.a, true);
            tg_tensor_set_requires_grad(c.b, true);
        }
        gpu_run(names[path][1], "ms", "tensorgen", body_gpu_conv_fwdbwd, &c, ok, scaled(10, 1), 0,
                1e3);
        if (c.a) tg_tensor_set_grad(c.a, NULL);
        if (c.b) tg_tensor_set_grad(c.b, NULL);
        release3(&c);
        if (path) unsetenv("TG_CUDA_CONV");
    }
}

/* ---------------------------------------------------------------- per-op overhead */

static bool body_add1(void *p)
{
    gctx *c = p;
    return done(tg_add_out(c->a, c->b, c->out));
}

/* Host wall time per call of `inner` calls, the queue drained at the end of each repeat. */
static void host_time(const char *name, const char *src, bench_body body, void *c, bool ok,
                      int64_t inner)
{
    if (!bench_wanted(name)) return;
    double secs[BENCH_MAX_REPEATS];
    for (int64_t i = 0; ok && i < scaled(1000, 1); i++) ok = body(c);
    for (int r = 0; ok && r < bench_cfg.repeats; r++) {
        double t0 = bench_now();
        for (int64_t i = 0; ok && i < inner; i++) ok = body(c);
        ok = ok && tg_cuda_synchronize() == 0;
        secs[r] = (bench_now() - t0) / (double)inner;
    }
    if (!ok) {
        fprintf(stderr, "tg_bench: %s skipped: %s\n", name,
                tg_last_error() ? tg_last_error() : "CUDA call failed");
        tg_clear_error();
        return;
    }
    bench_emit(name, "ns/call", src, secs, 0, 1e9);
}

static bool body_empty_launch(void *p)
{
    (void)p;
    return bench_launch_empty(stream0(), 1) == 0;
}

static void bench_gpu_overhead(void)
{
    gctx c = { 0 };
    c.a = on_gpu(tg_randn(TG_INTS(1)));
    c.b = on_gpu(tg_randn(TG_INTS(1)));
    c.out = tg_empty(TG_INTS(1), .device = TG_DEVICE_CUDA(0));
    host_time("cuda_empty_kernel_launch", "cuda", body_empty_launch, NULL, true,
              scaled(100000, 10));
    host_time("cuda_overhead_add_out_1elem", "tensorgen", body_add1, &c, c.a && c.b && c.out,
              scaled(100000, 10));
    release3(&c);
}

void bench_cuda(void)
{
    if (!tg_cuda_is_available()) {
        fprintf(stderr, "tg_bench: GPU workloads skipped: no CUDA device\n");
        return;
    }
    bench_gpu_overhead();
    bench_gpu_memory();
    bench_gpu_mm();
    bench_gpu_softmax();
    bench_gpu_mlp();
    bench_gpu_conv();
    tg_cuda_empty_cache();
}

#endif /* TG_WITH_CUDA */
