/* tensorgen's profiler: what each operator call cost, as a table and as a Chrome trace
 * (docs/profiling.md). Included by <tensorgen.h>.
 *
 *     tg_profiler_start(.record_shapes = true, .profile_memory = true);
 *     ... forward, backward, optimizer step ...
 *     tg_profiler_stop();
 *     tg_profiler_print_table(.sort_by = TG_PROF_SORT_SELF_CPU, .row_limit = 10);
 *     tg_profiler_export_chrome_trace("trace.json");   // chrome://tracing or ui.perfetto.dev
 *
 * While it runs, every operator called through the public functions or tg_call_boxed (in-tree
 * and out-of-tree alike), every backward node the autograd engine runs ("MulBackward0"),
 * every user range (TG_RECORD_FUNCTION) and, with .profile_memory, every allocation and free
 * of tensor memory is recorded, on every thread. Results stay until the next start or
 * tg_profiler_reset(). Functions returning int give 0, or -1 with tg_last_error() set. */
#ifndef TG_PROFILER_H
#define TG_PROFILER_H

#include "tg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_profiler_opts {
    bool record_shapes;  /* input shapes and dtypes of each operator call */
    bool profile_memory; /* allocations and frees of tensor memory */
    bool with_cuda;      /* time CUDA operators with CUDA events on their stream */
    int64_t max_events;  /* all threads together; later events are dropped and counted */
} tg_profiler_opts;
int tg_profiler_start_fn(tg_profiler_opts opts);
#define tg_profiler_start(...)                                        \
    tg_profiler_start_fn((tg_profiler_opts){ .record_shapes = false,  \
                                             .profile_memory = false, \
                                             .with_cuda = true,       \
                                             .max_events = 1000000,   \
                                             __VA_ARGS__ })
/* Ends recording (operators still open on other threads are closed at this instant) and
 * keeps the results. Warns when events were dropped for .max_events. */
int tg_profiler_stop(void);
bool tg_profiler_is_enabled(void);
/* Set while a session records: what tg_profiler_is_enabled says, as a plain global, which the
 * generated operator functions test with one load (they take their boxed path, where the call
 * is recorded, while it is set). Only the profiler writes it. */
extern bool tg_profiler_recording;
/* Events kept / dropped by the last (or the running) session. */
int64_t tg_profiler_num_events(void);
int64_t tg_profiler_dropped_events(void);
/* Frees the results of the last session (not while one runs). */
void tg_profiler_reset(void);

/* ---- user ranges: a named span around any code, on this thread; nestable. A no-op while
 * the profiler is off. ---- */
void tg_record_function_begin(const char *name);
void tg_record_function_end(void);
/* TG_RECORD_FUNCTION("data loading") { ... } (do not leave the block with return/goto). */
#define TG_RECORD_FUNCTION(name)                                                 \
    for (bool tg__rf_once = (tg_record_function_begin(name), true); tg__rf_once; \
         tg__rf_once = false, tg_record_function_end())

/* ---- the summary table (PyTorch's key_averages().table()) ---- */
typedef enum tg_profiler_sort {
    TG_PROF_SORT_SELF_CPU, /* default */
    TG_PROF_SORT_TOTAL_CPU,
    TG_PROF_SORT_AVG_CPU,
    TG_PROF_SORT_CUDA_TOTAL,
    TG_PROF_SORT_CALLS,
    TG_PROF_SORT_SELF_MEMORY,
    TG_PROF_SORT_MEMORY,
    TG_PROF_SORT_NAME
} tg_profiler_sort;
typedef struct tg_profiler_table_opts {
    tg_profiler_sort sort_by;
    int row_limit;             /* the top N rows; 0: all */
    bool group_by_input_shape; /* one row per (name, input shapes) */
} tg_profiler_table_opts;
/* The table as text (malloc'd: free() it), or NULL + error when nothing was recorded. */
char *tg_profiler_table_fn(tg_profiler_table_opts opts);
#define tg_profiler_table(...)                                                       \
    tg_profiler_table_fn((tg_profiler_table_opts){ .sort_by = TG_PROF_SORT_SELF_CPU, \
                                                   .row_limit = 0,                   \
                                                   .group_by_input_shape = false,    \
                                                   __VA_ARGS__ })
/* The same, printed on stdout. */
int tg_profiler_print_table_fn(tg_profiler_table_opts opts);
#define tg_profiler_print_table(...)                                                       \
    tg_profiler_print_table_fn((tg_profiler_table_opts){ .sort_by = TG_PROF_SORT_SELF_CPU, \
                                                         .row_limit = 0,                   \
                                                         .group_by_input_shape = false,    \
                                                         __VA_ARGS__ })

/* ---- the trace: Chrome's trace event JSON ("traceEvents"), for chrome://tracing and
 * Perfetto: one track per thread and per CUDA stream, forward -> backward arrows. ---- */
int tg_profiler_export_chrome_trace(const char *path);

#ifdef __cplusplus
}
#endif
#endif
