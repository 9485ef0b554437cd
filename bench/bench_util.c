/* Timing, statistics and JSON output for build/bench/tg_bench. */
#include "bench.h"
#include "tensorgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bench_config bench_cfg = { .threads = 2, .repeats = 7, .coretype = "auto", .only = NULL };

double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

bool bench_wanted(const char *name)
{
    if (!bench_cfg.only || !*bench_cfg.only) return true;
    /* Each comma-separated word of --only selects the names that contain it. */
    const char *p = bench_cfg.only;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len > 0) {
            char word[128];
            if (len >= sizeof word) len = sizeof word - 1;
            memcpy(word, p, len);
            word[len] = '\0';
            if (strstr(name, word)) return true;
        }
        p += strcspn(p, ",");
        if (*p == ',') p++;
    }
    return false;
}

bool bench_time(bench_body body, void *ctx, int64_t inner, int warmup, double *secs)
{
    for (int w = 0; w < warmup; w++)
        for (int64_t i = 0; i < inner; i++)
            if (!body(ctx)) return false;
    for (int r = 0; r < bench_cfg.repeats; r++) {
        double t0 = bench_now();
        for (int64_t i = 0; i < inner; i++)
            if (!body(ctx)) return false;
        secs[r] = (bench_now() - t0) / (double)inner;
    }
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_emit(const char *name, const char *unit, const char *src, const double *secs,
                double work, double scale)
{
    bench_emit_extra(name, unit, src, secs, work, scale, NULL);
}

void bench_emit_extra(const char *name, const char *unit, const char *src, const double *secs,
                      double work, double scale, const char *extra)
{
    int n = bench_cfg.repeats;
    double v[BENCH_MAX_REPEATS];
    for (int i = 0; i < n; i++) v[i] = work > 0 ? work / secs[i] / 1e9 : secs[i] * scale;
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    /* The median as Python's statistics.median computes it (mean of the middle two when n is
     * even); the best is the fastest repeat: highest throughput, or lowest time. */
    double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    double best = work > 0 ? v[n - 1] : v[0];
    printf("{\"name\": \"%s\", \"unit\": \"%s\", \"value\": %.4f, \"best\": %.4f, "
           "\"median\": %.4f, \"n\": %d, \"threads\": %d, \"src\": \"%s\", \"coretype\": \"%s\", "
           "\"cpu_capability\": \"%s\"%s%s}\n",
           name, unit, median, best, median, n, bench_cfg.threads, src, bench_cfg.coretype,
           tg_cpu_capability(), extra ? ", " : "", extra ? extra : "");
    fflush(stdout);
}
