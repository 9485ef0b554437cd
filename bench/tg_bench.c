/* build/bench/tg_bench: the workloads of BENCH.md through tensorgen's public API, one JSON line
 * each, plus same-process baselines (bench/baselines.c). bench/run.sh adds the tgen timings and,
 * when present, the PyTorch and anchor figures; bench/README.md explains how to read them.
 *
 *   build/bench/tg_bench [--only name,substr,...] [--repeats N]
 *
 * Threads: OMP_NUM_THREADS, else OPENBLAS_NUM_THREADS, else 2. */
#include "bench.h"
#include "tensorgen.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void openblas_set_num_threads(int n); /* OpenBLAS's own API; cblas.h may not declare it */

#define N16M (16L * 1024 * 1024)

/* One workload's operands. Every body calls one operator and releases what it returns. */
typedef struct op_ctx {
    tg_tensor *a, *b, *out;
    tg_tensor *(*unary_out)(tg_tensor *self, tg_tensor *out); /* body_unary_out's operator */
} op_ctx;

static bool done(tg_tensor *r)
{
    if (!r) return false;
    tg_release(r);
    return true;
}

static bool body_add(void *p)
{
    op_ctx *c = p;
    return done(tg_add(c->a, c->b));
}
static bool body_add_out(void *p)
{
    op_ctx *c = p;
    return done(tg_add_out(c->a, c->b, c->out));
}
/* c->unary_out(a, out): the memory-bound unary workloads. */
static bool body_unary_out(void *p)
{
    op_ctx *c = p;
    return done(c->unary_out(c->a, c->out));
}
static bool body_sum(void *p)
{
    op_ctx *c = p;
    return done(tg_sum(c->a));
}
static bool body_pow_out(void *p)
{
    op_ctx *c = p;
    return done(tg_pow_scalar_out(c->a, 2.5, c->out));
}
static bool body_amax(void *p)
{
    op_ctx *c = p;
    return done(tg_amax(c->a, .dim = TG_INTS(0)));
}
/* Reduces the outer (strided) dimension of a 4096x4096 matrix: 4096 sums of stride 4096. */
static bool body_sum_dim0(void *p)
{
    op_ctx *c = p;
    return done(tg_sum(c->a, .dim = TG_INTS(0)));
}
static bool body_var_lastdim(void *p)
{
    op_ctx *c = p;
    return done(tg_var(c->a, .dim = TG_INTS(-1)));
}
static bool body_mm_out(void *p)
{
    op_ctx *c = p;
    return done(tg_mm_out(c->a, c->b, c->out));
}
static bool body_softmax(void *p)
{
    op_ctx *c = p;
    return done(tg_softmax(c->a, -1));
}

/* Times `body` and prints its line; when the inputs could not be made (`ok` false) or a call
 * fails, prints the library's error to stderr instead. */
static void run(const char *name, const char *unit, bench_body body, op_ctx *c, bool ok,
                int64_t inner, int warmup, double work, double scale)
{
    if (!bench_wanted(name)) return;
    double secs[BENCH_MAX_REPEATS];
    if (!ok || !bench_time(body, c, inner, warmup, secs)) {
        fprintf(stderr, "tg_bench: %s skipped: %s\n", name,
                tg_last_error() ? tg_last_error() : "could not create its inputs");
        tg_clear_error();
        return;
    }
    bench_emit(name, unit, "tensorgen", secs, work, scale);
}

static void release_ctx(op_ctx *c)
{
    tg_release(c->a);
    tg_release(c->b);
    tg_release(c->out);
    c->a = c->b = c->out = NULL;
}

/* Per-call cost of the generated stub, dispatch and allocation on 1-element tensors. */
static void bench_overhead(void)
{
    op_ctx c = { .a = tg_randn(TG_INTS(1)),
                 .b = tg_randn(TG_INTS(1)),
                 .out = tg_empty(TG_INTS(1)) };
    bool ok = c.a && c.b && c.out;
    run("overhead_add_1elem", "ns/call", body_add, &c, ok, 100000, 1, 0, 1e9);
    run("overhead_add_out_1elem", "ns/call", body_add_out, &c, ok, 100000, 1, 0, 1e9);
    /* The same calls recorded by the profiler (defaults: no shapes, no memory): what one
     * recorded operator call costs. Fewer calls per repeat, since every one is kept. */
    if (bench_wanted("overhead_add_1elem_profiled")) {
        bool on = ok && tg_profiler_start(.max_events = 10000000) == 0;
        run("overhead_add_1elem_profiled", "ns/call", body_add, &c, on, 10000, 1, 0, 1e9);
        if (on) tg_profiler_stop();
        tg_profiler_reset();
    }
    release_ctx(&c);
}

/* gelu.out with each approximation, in the unary table's shape. */
static tg_tensor *gelu_none_out(tg_tensor *x, tg_tensor *out) { return tg_gelu_out(x, out); }
static tg_tensor *gelu_tanh_out(tg_tensor *x, tg_tensor *out)
{
    return tg_gelu_out(x, out, .approximate = "tanh");
}

/* Memory-bound pointwise ops and the full reduction on 16M float32 (64 MiB per tensor). */
static void bench_memory_bound(void)
{
    static const char *const names[] = { "add_16M", "exp_16M",  "sigmoid_16M", "tanh_16M",
                                         "log_16M", "sin_16M",  "sqrt_16M",    "pow_16M",
                                         "sum_16M", "amax_16M", "gelu_16M",    "gelu_tanh_16M" };
    bool any = false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) any |= bench_wanted(names[i]);
    if (!any) return;
    op_ctx c = { .a = tg_rand(TG_INTS(N16M)),
                 .b = tg_rand(TG_INTS(N16M)),
                 .out = tg_empty(TG_INTS(N16M)) };
    bool ok = c.a && c.b && c.out;
    run("add_16M_out", "GB/s", body_add_out, &c, ok, 10, 2, 3.0 * 4 * N16M, 0);
    run("add_16M_alloc", "GB/s", body_add, &c, ok, 10, 2, 3.0 * 4 * N16M, 0);
    static const struct {
        const char *name;
        tg_tensor *(*fn)(tg_tensor *, tg_tensor *);
    } unary[] = { { "exp_16M_out", tg_exp_out },     { "sigmoid_16M_out", tg_sigmoid_out },
                  { "tanh_16M_out", tg_tanh_out },   { "log_16M_out", tg_log_out },
                  { "sin_16M_out", tg_sin_out },     { "sqrt_16M_out", tg_sqrt_out },
                  { "gelu_16M_out", gelu_none_out }, { "gelu_tanh_16M_out", gelu_tanh_out } };
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        c.unary_out = unary[i].fn;
        run(unary[i].name, "GB/s", body_unary_out, &c, ok, 10, 2, 2.0 * 4 * N16M, 0);
    }
    run("pow_16M_out", "GB/s", body_pow_out, &c, ok, 10, 2, 2.0 * 4 * N16M, 0);
    run("sum_16M", "GB/s", body_sum, &c, ok, 10, 2, 1.0 * 4 * N16M, 0);
    run("amax_16M", "GB/s", body_amax, &c, ok, 10, 2, 1.0 * 4 * N16M, 0);
    release_ctx(&c);
    if (bench_wanted("sum_16M_strided")) {
        op_ctx m = { .a = tg_rand(TG_INTS(4096, 4096)) };
        run("sum_16M_strided", "GB/s", body_sum_dim0, &m, m.a != NULL, 10, 2, 1.0 * 4 * N16M, 0);
        release_ctx(&m);
    }
}

/* Square float32 matrix products into an existing tensor, 2 n^3 FLOP each. */
static void bench_mm(void)
{
    static const int64_t sizes[] = { 256, 1024, 2048 };
    for (int k = 0; k < 3; k++) {
        int64_t n = sizes[k];
        char name[32];
        snprintf(name, sizeof name, "mm_%lld", (long long)n);
        if (!bench_wanted(name)) continue;
        op_ctx c = { .a = tg_rand(TG_INTS(n, n)),
                     .b = tg_rand(TG_INTS(n, n)),
                     .out = tg_empty(TG_INTS(n, n)) };
        double flop = 2.0 * (double)(n * n * n);
        int64_t inner = (int64_t)(2e9 / flop); /* as torch_bench.py: ~2 GFLOP a repeat */
        run(name, "GFLOP/s", body_mm_out, &c, c.a && c.b && c.out, inner < 1 ? 1 : inner, 1, flop,
            0);
        release_ctx(&c);
    }
}

static void bench_softmax(void)
{
    if (!bench_wanted("softmax_4096x1024_lastdim") && !bench_wanted("var_4096x1024_lastdim"))
        return;
    op_ctx c = { .a = tg_rand(TG_INTS(4096, 1024)), .b = NULL, .out = NULL };
    run("softmax_4096x1024_lastdim", "ms", body_softmax, &c, c.a != NULL, 10, 2, 0, 1e3);
    run("var_4096x1024_lastdim", "ms", body_var_lastdim, &c, c.a != NULL, 10, 2, 0, 1e3);
    release_ctx(&c);
}

static int env_int(const char *name)
{
    const char *s = getenv(name);
    return s && atoi(s) > 0 ? atoi(s) : 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            bench_cfg.only = argv[++i];
        } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
            bench_cfg.repeats = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--only name,substr,...] [--repeats N (7..%d)]\n", argv[0],
                    BENCH_MAX_REPEATS);
            return 2;
        }
    }
    bench_cfg.smoke = env_int("BENCH_SMOKE") != 0;
    if (bench_cfg.repeats < 7) bench_cfg.repeats = 7;
    if (bench_cfg.smoke) bench_cfg.repeats = 1;
    if (bench_cfg.repeats > BENCH_MAX_REPEATS) bench_cfg.repeats = BENCH_MAX_REPEATS;
    bench_cfg.threads = env_int("OMP_NUM_THREADS")        ? env_int("OMP_NUM_THREADS")
                        : env_int("OPENBLAS_NUM_THREADS") ? env_int("OPENBLAS_NUM_THREADS")
                                                          : 2;
    const char *ct = getenv("OPENBLAS_CORETYPE");
    bench_cfg.coretype = ct && *ct ? ct : "auto";

    /* One thread count for everything: tensorgen's pool, OpenBLAS (the OpenMP build shares
     * that pool) and the baselines' own OpenMP loops. */
    tg_set_num_threads(bench_cfg.threads);
    omp_set_num_threads(bench_cfg.threads);
    openblas_set_num_threads(bench_cfg.threads);
    tg_manual_seed(0);

    bench_overhead();
    bench_stream();
    bench_memory_bound();
    bench_blas_direct();
    bench_mm();
    bench_softmax();
    bench_autograd();
    bench_vision();
    bench_lm();
    bench_loader();
    bench_functional();
#ifdef TG_WITH_CUDA
    bench_cuda();
#endif

    if (tg_live_tensors() != 0)
        fprintf(stderr, "tg_bench: %lld tensors still alive at exit\n",
                (long long)tg_live_tensors());
    return 0;
}
