/* The CPU capability (runtime/core/cpu_capability.c): its name, TG_CPU_CAPABILITY honoured
 * when the CPU has it, refused with a warning otherwise. Each Criterion test runs in a fresh
 * process, so each sees the choice made for the first time. `make test-capabilities` runs
 * this suite under each capability the CPU supports. */
#include "rt_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char warned[512];
static int nwarn;

static void handler(const char *msg, void *user)
{
    (void)user;
    snprintf(warned, sizeof warned, "%s", msg);
    nwarn++;
}

static bool supported(const char *cap)
{
#if defined(__x86_64__) || defined(__i386__)
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (strcmp(cap, "avx2") == 0) return avx2;
    if (strcmp(cap, "avx512") == 0)
        return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
#endif
    return strcmp(cap, "default") == 0;
}

static const char *best(void)
{
    return supported("avx512") ? "avx512" : supported("avx2") ? "avx2" : "default";
}

TestSuite(cpu_capability);

/* Without TG_CPU_CAPABILITY the best the CPU has; with it, that one (when supported). */
Test(cpu_capability, reports_the_one_in_use)
{
    const char *want = getenv("TG_CPU_CAPABILITY");
    const char *got = tg_cpu_capability();
    if (want && *want && supported(want)) cr_expect_str_eq(got, want);
    else if (!want || !*want) cr_expect_str_eq(got, best());
    cr_expect_str_eq(tg_cpu_capability(), got, "the choice is made once");
}

Test(cpu_capability, unknown_name_warns_and_uses_the_best)
{
    setenv("TG_CPU_CAPABILITY", "sse9", 1);
    tg_set_warning_handler(handler, NULL);
    cr_expect_str_eq(tg_cpu_capability(), best());
    cr_expect_eq(nwarn, 1);
    cr_expect(strstr(warned, "TG_CPU_CAPABILITY=sse9 is not a capability") != NULL, "%s", warned);
    tg_set_warning_handler(NULL, NULL);
}

/* A capability the CPU lacks is refused (with a warning naming it), else honoured silently. */
Test(cpu_capability, forcing_each_capability)
{
    static const char *const caps[] = { "default", "avx2", "avx512" };
    for (int k = 0; k < 3; k++) {
        /* each capability in its own child: the choice is made once per process */
        fflush(NULL);
        pid_t pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) {
            setenv("TG_CPU_CAPABILITY", caps[k], 1);
            nwarn = 0;
            tg_set_warning_handler(handler, NULL);
            const char *got = tg_cpu_capability();
            bool ok = supported(caps[k]) ? strcmp(got, caps[k]) == 0 && nwarn == 0
                                         : strcmp(got, best()) == 0 && nwarn == 1 &&
                                               strstr(warned, "refused") != NULL;
            _exit(ok ? 0 : 1);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "TG_CPU_CAPABILITY=%s", caps[k]);
    }
}
