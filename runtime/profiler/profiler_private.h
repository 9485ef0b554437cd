/* runtime/profiler's own files: the recorded events and the session that owns them. */
#ifndef TG_PROFILER_PROFILER_PRIVATE_H
#define TG_PROFILER_PROFILER_PRIVATE_H

#include "core/rt_private.h"
#include "profiler/profiler.h"

#include <pthread.h>

typedef enum prof_kind {
    PROF_OP,       /* an operator call */
    PROF_BACKWARD, /* a backward node's apply */
    PROF_USER,     /* tg_record_function_begin/end */
    PROF_MEMORY    /* an allocation (bytes > 0) or free (bytes < 0): an instant */
} prof_kind;

#define PROF_MAX_SHAPE_INPUTS 8 /* shapes kept per call (PyTorch keeps them all; 8 is plenty) */

typedef struct prof_event {
    const char *name;  /* static (op table, node vtable) or owned by the thread's strings */
    int64_t start_ns;  /* profiler clock */
    int64_t dur_ns;    /* -1 while open */
    int64_t child_ns;  /* time inside directly nested events (self = dur - child) */
    int64_t mem_self;  /* bytes allocated minus freed directly inside (or the MEMORY amount) */
    int64_t mem_total; /* mem_self plus the nested events' mem_total */
    int64_t seq;       /* OP: the autograd node it created; BACKWARD: the node's; else -1 */
    int64_t gpu;       /* device timer handle, or -1 */
    double gpu_start_us, gpu_dur_us; /* filled at stop; gpu_dur_us < 0: none */
    int64_t gpu_stream;
    int32_t parent;      /* index in the same thread's events, or -1 */
    int32_t shapes;      /* first of this event's inputs in the thread's shape pool, or -1 */
    uint32_t fwd_thread; /* BACKWARD: the forward thread's profiler id */
    uint8_t kind;
    uint8_t ninputs; /* inputs described in the shape pool */
    int8_t device_type;
    int8_t device_index;
} prof_event;

/* One input of a call in the shape pool: a tensor's sizes and dtype, or "not a tensor". */
typedef struct prof_shape {
    int8_t ndim; /* -1: not a tensor */
    int8_t dtype;
    int64_t sizes[TG_MAX_DIMS];
} prof_shape;

/* What one thread recorded in one session. The thread appends under `lock` (uncontended but
 * for tg_profiler_stop, which closes the buffer while the thread may still be running). */
typedef struct prof_thread {
    pthread_mutex_t lock;
    uint32_t id;    /* 1, 2, ... in the order threads first recorded */
    int64_t os_tid; /* gettid(): the trace's tid; < 0 once the thread has exited */
    uint32_t gen;   /* the session the buffer records for */
    bool closed;    /* no session records here now: nothing is appended */
    prof_event *ev;
    int32_t nev;
    int64_t capev;
    prof_shape *shapes;
    int32_t nshapes;
    int64_t capshapes;
    int32_t open;   /* innermost open event, or -1 */
    char **strings; /* user range names (owned) */
    int32_t nstrings;
    int64_t capstrings;
    struct prof_thread *next; /* the session's list */
} prof_thread;

/* The results of the last session (or the running one). */
typedef struct prof_session {
    tg_profiler_opts opts;
    prof_thread *threads; /* newest first */
    uint32_t nthreads;
    int64_t start_ns, stop_ns;
    bool stopped;
} prof_session;

extern prof_session tg__prof_session;
extern pthread_mutex_t tg__prof_lock; /* guards tg__prof_session's list and start/stop */
/* A recorded session exists and has stopped; else -1 + error naming op. */
int tg__prof_check_results(const char *op);

/* Text of event e's input shapes "[[2, 3], [3], []]" ([] for an argument that is not a
 * tensor; "" without .record_shapes). Returns the length written (truncated to cap). */
int tg__prof_shapes_str(const prof_thread *t, const prof_event *e, char *buf, size_t cap);
/* The trace's tid of a thread (its OS thread id, also after the thread exited). */
static inline int64_t tg__prof_tid(const prof_thread *t)
{
    return t->os_tid < 0 ? -t->os_tid - 1 : t->os_tid;
}
/* Counts the session's events of every kind (0 when none was kept). */
int64_t tg__prof_count_events(void);

#endif
