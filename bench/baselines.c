/* Baselines measured in the same process as the tensorgen workloads, so that one run shows how
 * close the library gets to what this machine can do:
 *   stream_add_16M, stream_sum_16M   plain OpenMP loops over the same 16M float32 arrays
 *                                    (src "stream"), counted like add_16M_out and sum_16M;
 *   blas_sgemm_256/1024/2048         cblas_sgemm called directly on the same sizes as mm_*
 *                                    (src "openblas-direct"), the ceiling for tg_mm_out. */
#include "bench.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#define STREAM_N (16L * 1024 * 1024)

/* Fills x[n] with uniform values in [0.5, 1.5) from a small LCG (fresh, never zero). */
static void fill_random(float *x, long n, uint64_t seed)
{
    uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (long i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = 0.5f + (float)(s >> 40) / (float)(1 << 24);
    }
}

typedef struct stream_ctx {
    float *a, *b, *c;
    float sink;
} stream_ctx;

static bool stream_add(void *p)
{
    stream_ctx *s = p;
    float *restrict a = s->a, *restrict b = s->b, *restrict c = s->c;
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < STREAM_N; i++) c[i] = a[i] + b[i];
    return true;
}

/* Each thread sums its blocks into 64 partial sums (four 16-float vectors, so four additions
 * are in flight rather than one chain), then the partials are added up. */
#define SUM_LANES 64
static bool stream_sum(void *p)
{
    stream_ctx *s = p;
    const float *restrict a = s->a;
    float acc = 0;
#pragma omp parallel reduction(+ : acc)
    {
        float part[SUM_LANES] = { 0 };
#pragma omp for schedule(static)
        for (long i = 0; i < STREAM_N; i += SUM_LANES)
            for (int j = 0; j < SUM_LANES; j++) part[j] += a[i + j];
        for (int j = 0; j < SUM_LANES; j++) acc += part[j];
    }
    s->sink = acc;
    return true;
}

void bench_stream(void)
{
    if (!bench_wanted("stream_add_16M") && !bench_wanted("stream_sum_16M")) return;
    stream_ctx s = { aligned_alloc(64, STREAM_N * 4), aligned_alloc(64, STREAM_N * 4),
                     aligned_alloc(64, STREAM_N * 4), 0 };
    if (!s.a || !s.b || !s.c) {
        fprintf(stderr, "stream: out of memory\n");
        goto done;
    }
    fill_random(s.a, STREAM_N, 1);
    fill_random(s.b, STREAM_N, 2);
    fill_random(s.c, STREAM_N, 3);
    double secs[BENCH_MAX_REPEATS];
    if (bench_wanted("stream_add_16M") && bench_time(stream_add, &s, 10, 2, secs))
        bench_emit("stream_add_16M", "GB/s", "stream", secs, 3.0 * 4 * STREAM_N, 0);
    if (bench_wanted("stream_sum_16M") && bench_time(stream_sum, &s, 10, 2, secs))
        bench_emit("stream_sum_16M", "GB/s", "stream", secs, 1.0 * 4 * STREAM_N, 0);
done:
    free(s.a);
    free(s.b);
    free(s.c);
}

typedef struct gemm_ctx {
    int n;
    float *a, *b, *c;
} gemm_ctx;

static bool gemm_call(void *p)
{
    gemm_ctx *g = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n, g->n, 1.0f, g->a, g->n, g->b,
                g->n, 0.0f, g->c, g->n);
    return true;
}

void bench_blas_direct(void)
{
    static const int sizes[] = { 256, 1024, 2048 };
    for (int k = 0; k < 3; k++) {
        int n = sizes[k];
        char name[64];
        snprintf(name, sizeof name, "blas_sgemm_%d", n);
        if (!bench_wanted(name)) continue;
        long nn = (long)n * n;
        gemm_ctx g = { n, aligned_alloc(64, nn * 4), aligned_alloc(64, nn * 4),
                       aligned_alloc(64, nn * 4) };
        if (g.a && g.b && g.c) {
            fill_random(g.a, nn, 10 + k);
            fill_random(g.b, nn, 20 + k);
            fill_random(g.c, nn, 30 + k);
            double flop = 2.0 * n * n * n, secs[BENCH_MAX_REPEATS];
            int64_t inner = (int64_t)(2e9 / flop); /* as torch_bench.py: ~2 GFLOP a repeat */
            if (inner < 1) inner = 1;
            if (bench_time(gemm_call, &g, inner, 1, secs))
                bench_emit(name, "GFLOP/s", "openblas-direct", secs, flop, 0);
        }
        free(g.a);
        free(g.b);
        free(g.c);
    }
}
