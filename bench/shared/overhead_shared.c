/* build/bench/tg_bench_shared: the per-call overhead workloads of tg_bench, through the shared
 * library (libtensorgen.so.0, as pkg-config links a user's program) instead of the static one.
 * The difference is what a shared library costs: a call through the PLT, and each thread-local
 * reached through its TLS descriptor (the price of loading with dlopen, docs/architecture.md).
 *   tg_bench_shared [--only name,substr,...] [--repeats N]      one JSON line per workload */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "tensorgen.h"

typedef struct operands {
    tg_tensor *a, *b, *out;
} operands;

static bool body_add(void *p)
{
    operands *c = p;
    tg_tensor *r = tg_add(c->a, c->b);
    tg_release(r);
    return r != NULL;
}

static bool body_add_out(void *p)
{
    operands *c = p;
    tg_tensor *r = tg_add_out(c->a, c->b, c->out);
    tg_release(r);
    return r != NULL;
}

static void run(const char *name, bench_body body, operands *c)
{
    double secs[BENCH_MAX_REPEATS];
    if (!bench_wanted(name)) return;
    if (!bench_time(body, c, 100000, 1, secs)) {
        fprintf(stderr, "tg_bench_shared: %s skipped: %s\n", name, tg_last_error());
        tg_clear_error();
        return;
    }
    bench_emit(name, "ns/call", "tensorgen", secs, 0, 1e9);
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--only")) bench_cfg.only = argv[i + 1];
        else if (!strcmp(argv[i], "--repeats")) bench_cfg.repeats = atoi(argv[i + 1]);
    }
    if (bench_cfg.repeats < 7) bench_cfg.repeats = 7;
    if (bench_cfg.repeats > BENCH_MAX_REPEATS) bench_cfg.repeats = BENCH_MAX_REPEATS;
    operands c = { tg_randn(TG_INTS(1)), tg_randn(TG_INTS(1)), tg_empty(TG_INTS(1)) };
    if (!c.a || !c.b || !c.out) {
        fprintf(stderr, "tg_bench_shared: %s\n", tg_last_error());
        return 1;
    }
    run("overhead_add_1elem_shared", body_add, &c);
    run("overhead_add_out_1elem_shared", body_add_out, &c);
    tg_release(c.a);
    tg_release(c.b);
    tg_release(c.out);
    return 0;
}
