/* Shared helpers of build/bench/tg_bench: timing, statistics and the JSON line format of
 * ../shared/bench-anchors (see bench/README.md). */
#ifndef TG_BENCH_H
#define TG_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#define BENCH_MAX_REPEATS 64

/* Settings every workload reads; filled once by main(). */
typedef struct bench_config {
    int threads;          /* intra-op threads (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, else 2) */
    int repeats;          /* timed repeats per workload (>= 7) */
    const char *coretype; /* OPENBLAS_CORETYPE or "auto" */
    const char *only;     /* comma list of name substrings, or NULL for all */
    bool smoke;           /* BENCH_SMOKE=1: tiny sizes, one call, one repeat: checks that the
                               GPU workloads run (on the CUDA emulator too), measures nothing */
} bench_config;

extern bench_config bench_cfg;

/* Monotonic wall clock in seconds. */
double bench_now(void);

/* True when the workload `name` was selected (--only). */
bool bench_wanted(const char *name);

/* A timed body: runs the workload once (one "call"); returns false on failure. */
typedef bool (*bench_body)(void *ctx);

/* Runs `body` `inner` times per repeat, after `warmup` untimed repeats, for bench_cfg.repeats
 * repeats; stores seconds PER CALL of each repeat in secs[]. Returns false if a call failed. */
bool bench_time(bench_body body, void *ctx, int64_t inner, int warmup, double *secs);

/* Converts per-call seconds into the unit and prints one JSON line. `work` is the amount one
 * call does in the unit's numerator (bytes for GB/s, FLOP for GFLOP/s); `scale` converts
 * seconds for time units (1e9 for ns/call, 1e3 for ms). Exactly one of them is used:
 * work > 0 means a throughput (higher is better), else a time (lower is better). */
void bench_emit(const char *name, const char *unit, const char *src, const double *secs,
                double work, double scale);

/* bench_emit with `extra`, more JSON members ("\"loss0\": 10.97663"), appended when not NULL. */
void bench_emit_extra(const char *name, const char *unit, const char *src, const double *secs,
                      double work, double scale, const char *extra);

/* Autograd workloads: the tiny-graph overhead and the MLP training step (bench/bench_autograd.c). */
void bench_autograd(void);

/* Vision workloads: convolution, pooling, batch norm, the ResNet-8 step (bench/bench_vision.c). */
void bench_vision(void);

/* Language-model workloads: layer norm, GELU, attention, embedding, the GPT training steps
 * (bench/bench_lm.c). */
void bench_lm(void);
/* The data loader: an epoch of augmented digits with 2 workers (bench/bench_loader.c). */
void bench_loader(void);

/* Functional-transform workloads: the forward, jvp and hvp of an MLP 784-512-10
 * (bench/bench_functional.c). */
void bench_functional(void);

/* The MLP of the training-step workloads, on the CPU (bench/bench_autograd.c) and on the GPU
 * (bench/bench_cuda.c): Linear, ReLU, Linear, ReLU, Linear, all tensors on one device. */
#define BENCH_MLP_LAYERS 3
typedef struct bench_mlp {
    struct tg_tensor *p[2 * BENCH_MLP_LAYERS]; /* weight (out, in), bias (out) per layer, leaves
                                                   that require grad */
    struct tg_tensor *x, *y;                   /* (batch, in) inputs, (batch) int64 classes */
} bench_mlp;

/* One training step as a bench_body on a bench_mlp: opt.zero_grad(set_to_none=True);
 * cross_entropy(model(x), y).backward(); opt.step() (plain SGD, lr 0.01). */
bool bench_mlp_step(void *mlp);

/* GPU workloads and their baselines (bench/bench_cuda.c): only in builds with TG_WITH_CUDA,
 * and a note on stderr instead when no device is present. */
void bench_cuda(void);

/* Baselines measured in the same process (bench/baselines.c). */
void bench_stream(void);
void bench_blas_direct(void);

#endif
