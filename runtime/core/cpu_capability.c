/* The CPU capability the vector kernels run with: chosen once, on first use, from CPUID (or
 * from TG_CPU_CAPABILITY when it names one the CPU has), then fixed for the process.
 *
 * The library is compiled for baseline x86-64 (SSE2); the kernel files under kernels/cpu/cap/
 * are compiled once more per capability and export one table per capability
 * (kernels/cpu/cpu_cap.h). Everything else asks tg__cpu_cap() which table to use, so a library
 * built on an AVX-512 machine runs everywhere, and uses AVX-512 where it exists. */
#include "core/core.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const char *const cap_names[TG_CPU_CAP_COUNT] = { "default", "avx2", "avx512" };

/* What the CPU (and the OS, which must save the wide registers) supports; libgcc's
 * __builtin_cpu_supports checks XGETBV as well as CPUID. */
static bool cap_supported(tg_cpu_cap c)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    switch (c) {
    case TG_CPU_CAP_DEFAULT: return true;
    case TG_CPU_CAP_AVX2: return avx2;
    case TG_CPU_CAP_AVX512:
        return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
    default: return false;
    }
#else
    return c == TG_CPU_CAP_DEFAULT; /* other architectures build only the portable kernels */
#endif
}

static tg_cpu_cap best_supported(void)
{
    for (int c = TG_CPU_CAP_COUNT - 1; c > 0; c--)
        if (cap_supported((tg_cpu_cap)c)) return (tg_cpu_cap)c;
    return TG_CPU_CAP_DEFAULT;
}

int tg__cpu_cap_value = -1;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
    tg_cpu_cap best = best_supported(), pick = best;
    const char *want = getenv("TG_CPU_CAPABILITY");
    if (want && *want) {
        int found = -1;
        for (int c = 0; c < TG_CPU_CAP_COUNT; c++)
            if (strcmp(want, cap_names[c]) == 0) found = c;
        if (found < 0)
            tg__warn("TG_CPU_CAPABILITY=%s is not a capability (default, avx2, avx512): using %s",
                     want, cap_names[best]);
        else if (!cap_supported((tg_cpu_cap)found))
            tg__warn("TG_CPU_CAPABILITY=%s refused: this CPU does not support it; using %s", want,
                     cap_names[best]);
        else pick = (tg_cpu_cap)found;
    }
    __atomic_store_n(&tg__cpu_cap_value, (int)pick, __ATOMIC_RELEASE);
}

tg_cpu_cap tg__cpu_cap_slow(void)
{
    pthread_once(&chosen_once, choose);
    return (tg_cpu_cap)__atomic_load_n(&tg__cpu_cap_value, __ATOMIC_ACQUIRE);
}

const char *tg_cpu_capability(void) { return cap_names[tg__cpu_cap()]; }
