/* Intra-op parallelism: one OpenMP team, sized by tg_set_num_threads (default: OpenMP's
 * max threads, which honours OMP_NUM_THREADS). OpenBLAS gets the same count when it is
 * linked in (weak symbol), so the two never oversubscribe the cores together. */
#include "core/rt_private.h"

#include <omp.h>

#define GRAIN 32768

/* Declared weak: present only when the program links OpenBLAS. */
extern void openblas_set_num_threads(int n) __attribute__((weak));

static int num_threads; /* 0: not yet read from OpenMP */

int64_t tg__grain_size(void) { return GRAIN; }

int tg_get_num_threads(void)
{
    int n = __atomic_load_n(&num_threads, __ATOMIC_RELAXED);
    if (TG__UNLIKELY(n == 0)) {
        n = omp_get_max_threads();
        if (n < 1) n = 1;
        __atomic_store_n(&num_threads, n, __ATOMIC_RELAXED);
    }
    return n;
}

void tg_set_num_threads(int n)
{
    if (n < 1) n = 1;
    __atomic_store_n(&num_threads, n, __ATOMIC_RELAXED);
    omp_set_num_threads(n); /* for kernels that open their own parallel regions */
    if (openblas_set_num_threads) openblas_set_num_threads(n);
}

/* Each thread gets one contiguous range (rounded to 16 elements so that ranges start on
 * whole vectors/cache lines for the common dtypes, unless that would leave a thread without
 * work: n = 8 tasks on 2 threads must split 4 + 4, not 8 + 0): one call per thread, which is what lets
 * contiguous kernels run at memory bandwidth. Errors recorded inside fn on worker threads
 * stay on those threads, so fn must not fail. */
void tg__parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t b, int64_t e, void *ctx),
                      void *ctx)
{
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (n <= grain) {
        fn(0, n, ctx);
        return;
    }
    int nt = tg_get_num_threads();
    if (nt <= 1 || omp_in_parallel()) {
        fn(0, n, ctx);
        return;
    }
    int64_t most = (n + grain - 1) / grain;
    if (nt > most) nt = (int)most;
#pragma omp parallel num_threads(nt)
    {
        int64_t T = omp_get_num_threads(), tid = omp_get_thread_num();
        int64_t chunk = (n + T - 1) / T;
        if (n >= 16 * T) chunk = (chunk + 15) & ~(int64_t)15;
        int64_t b = tid * chunk, e = b + chunk < n ? b + chunk : n;
        if (b < e) fn(b, e, ctx);
    }
}
