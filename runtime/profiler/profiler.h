/* runtime/profiler: the recording interface the other rooms call (internal, not installed).
 * The public side is tg_profiler.h.
 *
 * Who includes it: dispatch/op_glue.h (the stubs test tg__prof_active), dispatch/boxed.c
 * (every operator call is recorded there), autograd (node creation and the engine's applies)
 * and cuda/ (the CUDA event timer). It needs only tg_core.h, so every room above core may
 * include it; the profiler's own files include core/. Core itself does not: the profiler sets
 * core's memory observer (tg__set_memory_observer, core/rt_private.h) to tg__prof_memory while
 * a session records memory.
 *
 * Cost when off: one load of a global and a predictable branch at each hook; nothing else.
 * Every function below except the flag test may only be called when the flag was seen set
 * (they cope with the session having stopped since). */
#ifndef TG_PROFILER_PROFILER_H
#define TG_PROFILER_PROFILER_H

#include "tg_profiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tg_profiler_recording (tg_profiler.h): one load and one branch on the stubs' fast path. */
static inline bool tg__prof_active(void)
{
    return __atomic_load_n(&tg_profiler_recording, __ATOMIC_RELAXED);
}

/* One operator call: `name` outlives the process (an op table row's name). inputs[i] is the
 * i-th argument when it is a tensor, NULL otherwise (shapes are kept only with
 * .record_shapes). `device` is where it runs (a CUDA op is timed on its stream).
 * `below_autograd`: the call runs with the autograd key excluded; when the innermost open
 * event is the same operator, this is its autograd kernel's redispatch, which is part of
 * that call and not recorded again (as in PyTorch). Returns a token for tg__prof_end, or -1
 * when nothing was recorded. */
int64_t tg__prof_begin_op(const char *name, const tg_tensor *const *inputs, int ninputs,
                          tg_device device, bool below_autograd);
/* A backward node's apply: its name ("MulBackward0"), its sequence number and the profiler
 * thread of the forward call that created it (tg_node.prof_thread). */
int64_t tg__prof_begin_backward(const char *name, uint64_t sequence_nr, uint32_t fwd_thread);
void tg__prof_end(int64_t token);

/* A node was created with this sequence number: the innermost operator open on this thread
 * made it (the forward end of the forward -> backward link). Returns this thread's profiler
 * id, which the node keeps. */
uint32_t tg__prof_node_created(uint64_t sequence_nr);

/* nbytes of tensor memory allocated (> 0) or freed (< 0) on `device`: core's memory observer
 * while a session records memory (.profile_memory). */
void tg__prof_memory(int64_t nbytes, tg_device device);

/* ---- device timers: a device backend times work on its streams (runtime/cuda registers
 * one for CUDA at load). All calls come from the profiler, on any thread. ---- */
typedef struct tg__prof_device_timer {
    /* Marks the start of an operator on `device_index`'s stream; a handle, or -1. */
    int64_t (*start)(int device_index);
    void (*stop)(int64_t handle);
    /* After the session: waits for the work and gives its start on the profiler's clock
     * (tg__prof_now_ns, in µs; the backend anchors its stream to it) and its duration in µs,
     * and the stream (the trace's track). 0, or -1 when the timing failed. */
    int (*read)(int64_t handle, double *start_us, double *dur_us, int64_t *stream);
    /* Frees every handle (at the end of a session's collection). */
    void (*reset)(void);
} tg__prof_device_timer;
void tg__prof_register_device_timer(tg_device_type type, const tg__prof_device_timer *t);
/* The profiler's clock, in ns (CLOCK_MONOTONIC), for device timers to anchor their streams. */
int64_t tg__prof_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
