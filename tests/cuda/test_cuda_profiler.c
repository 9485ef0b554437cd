/* The profiler on CUDA operators: CUDA events on the device's stream time them (the timer
 * runtime/cuda registers), the table gains the CUDA columns and the trace a track per device
 * and stream. Skipped without a CUDA build or device; run on the emulator by `make test`. */
#include <unistd.h>

#include "kt_cuda.h"
#include "tensorgen.h"
#include "../profiler/trace_json.h"

Test(cuda_profiler, cuda_ops_are_timed_on_their_stream)
{
#ifndef TG_WITH_CUDA
    KT_SKIP_NO_CUDA_BUILD();
#else
    KT_REQUIRE_DEVICE("cuda_profiler");
    tg_scope_begin(); /* owns the inputs, their copies and the products */
    tg_tensor *a = kt_cuda(kt_rand((int64_t[]){ 64, 64 }, 2, TG_FLOAT32, 1, -1, 1));
    cr_assert_eq(tg_profiler_start(.record_shapes = true, .profile_memory = true), 0);
    for (int i = 0; i < 3; i++) tg_mm(a, a);
    cr_assert_eq(tg_profiler_stop(), 0);
    tg_scope_end();
    char *s = tg_profiler_table();
    cr_assert(s, "%s", tg_last_error());
    cr_expect(strstr(s, "CUDA total") && strstr(s, "Self CUDA time total"), "%s", s);
    free(s);
    char path[128];
    snprintf(path, sizeof path, "/tmp/tg_prof_cuda_%d.json", (int)getpid());
    cr_assert_eq(tg_profiler_export_chrome_trace(path), 0, "%s", tg_last_error());
    trace t = trace_load(path);
    unlink(path);
    int kernels = 0;
    for (int i = 0; i < t.n; i++) {
        const tev *e = &t.ev[i];
        if (!tev_is(e, "X", "mm")) continue;
        if (strcmp(e->cat, "kernel") == 0) {
            kernels++;
            continue;
        }
        const cJSON *dev = cJSON_GetObjectItemCaseSensitive(e->args, "Device");
        cr_expect(cJSON_IsString(dev) && strcmp(dev->valuestring, "cuda:0") == 0);
    }
    cr_expect_eq(kernels, 3, "%d mm events on the CUDA track", kernels);
    trace_free(&t);
    tg_profiler_reset();
    cr_expect_eq(tg_live_tensors(), 0);
#endif
}
