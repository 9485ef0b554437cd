/* Recording: sessions, per-thread event buffers, the stack of open events, memory and user
 * ranges.
 *
 * Each OS thread that records gets one prof_thread for the life of the process (its TLS
 * pointer never dangles); a session start empties every thread's buffer, and a thread that
 * has exited is freed then. A thread appends to its own buffer under the buffer's lock,
 * which only tg_profiler_stop contends for: stop closes each buffer (closing the events still
 * open at that instant), so threads may keep running while a session ends. A token (begin ->
 * end) carries the session number, so an end that arrives after a stop, or in a later
 * session, is ignored. */
#include "profiler/profiler_private.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

bool tg_profiler_recording;
prof_session tg__prof_session;
pthread_mutex_t tg__prof_lock = PTHREAD_MUTEX_INITIALIZER;

static bool running;         /* under tg__prof_lock */
static uint32_t session_gen; /* bumped by each start; tokens carry it */
static prof_thread *all_threads;
static uint32_t next_thread_id = 1;
static int64_t nrecorded, ndropped; /* atomics: events taken / refused for max_events */
static bool warned_full;
static const tg__prof_device_timer *timers[2];

static _Thread_local prof_thread *my;
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

int64_t tg__prof_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tg__prof_register_device_timer(tg_device_type type, const tg__prof_device_timer *t)
{
    if (type >= 0 && type < 2) __atomic_store_n(&timers[type], t, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------ threads */

/* Thread exit: the buffer stays (its events belong to the session) and is freed by the next
 * start or reset. */
static void thread_exit(void *p)
{
    prof_thread *t = p;
    pthread_mutex_lock(&tg__prof_lock);
    t->os_tid = -t->os_tid - 1; /* < 0: the thread is gone */
    pthread_mutex_unlock(&tg__prof_lock);
}
static void exit_key_init(void) { pthread_key_create(&exit_key, thread_exit); }

static void thread_clear(prof_thread *t)
{
    for (int32_t i = 0; i < t->nstrings; i++) free(t->strings[i]);
    free(t->strings);
    free(t->ev);
    free(t->shapes);
    t->strings = NULL;
    t->ev = NULL;
    t->shapes = NULL;
    t->nev = t->capev = t->nshapes = t->capshapes = t->nstrings = t->capstrings = 0;
    t->open = -1;
}

/* This thread's buffer (made on first use); NULL when out of memory. */
static prof_thread *thread_buf(void)
{
    if (TG__LIKELY(my != NULL)) return my;
    pthread_once(&exit_once, exit_key_init);
    prof_thread *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_init(&t->lock, NULL);
    t->open = -1;
    t->os_tid = (int64_t)syscall(SYS_gettid);
    pthread_mutex_lock(&tg__prof_lock);
    t->id = next_thread_id++;
    t->gen = session_gen;
    t->closed = !running;
    t->next = all_threads;
    all_threads = t;
    pthread_mutex_unlock(&tg__prof_lock);
    pthread_setspecific(exit_key, t);
    my = t;
    return t;
}

/* Per-thread buffers start at 256 entries and double. */
#define FIRST_CAP 256

/* A slot for one more event under .max_events, or false (counted, warned once). */
static bool take_slot(void)
{
    if (__atomic_fetch_add(&nrecorded, 1, __ATOMIC_RELAXED) < tg__prof_session.opts.max_events)
        return true;
    __atomic_fetch_add(&nrecorded, -1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ndropped, 1, __ATOMIC_RELAXED);
    if (!__atomic_exchange_n(&warned_full, true, __ATOMIC_RELAXED))
        tg__warn("profiler: max_events (%lld) reached; later events are dropped and counted "
                 "(tg_profiler_dropped_events)",
                 (long long)tg__prof_session.opts.max_events);
    return false;
}

/* Appends an event to t (locked, open for the session); its index, or -1. */
static int32_t push_event(prof_thread *t, prof_kind kind, const char *name)
{
    if (!tg__array_reserve((void **)&t->ev, &t->capev, t->nev + 1, sizeof *t->ev, FIRST_CAP))
        return -1;
    if (!take_slot()) return -1;
    int32_t i = t->nev++;
    prof_event *e = &t->ev[i];
    memset(e, 0, sizeof *e);
    e->name = name;
    e->kind = (uint8_t)kind;
    e->dur_ns = -1;
    e->seq = -1;
    e->gpu = -1;
    e->gpu_dur_us = -1;
    e->parent = -1;
    e->shapes = -1;
    e->device_type = TG_CPU;
    return i;
}

/* Opens event i (the innermost from now on). */
static void open_event(prof_thread *t, int32_t i)
{
    t->ev[i].parent = t->open;
    t->open = i;
}

/* Closes the open event i at `now`, and any opened inside it that are still open. */
static void close_event(prof_thread *t, int32_t i, int64_t now)
{
    bool on_stack = false;
    for (int32_t j = t->open; j >= 0 && !on_stack; j = t->ev[j].parent) on_stack = j == i;
    if (!on_stack) return;
    for (;;) {
        int32_t j = t->open;
        prof_event *e = &t->ev[j];
        e->dur_ns = now - e->start_ns;
        t->open = e->parent;
        if (e->parent >= 0) {
            t->ev[e->parent].child_ns += e->dur_ns;
            t->ev[e->parent].mem_total += e->mem_total;
        }
        if (e->gpu >= 0) timers[e->device_type]->stop(e->gpu);
        if (j == i) break;
    }
}

static inline int64_t token_of(int32_t i) { return (int64_t)session_gen << 32 | (uint32_t)i; }

/* Locks this thread's buffer when it records for the running session; NULL otherwise. */
static prof_thread *lock_recording(void)
{
    prof_thread *t = thread_buf();
    if (!t) return NULL;
    pthread_mutex_lock(&t->lock);
    if (t->closed || t->gen != session_gen) {
        pthread_mutex_unlock(&t->lock);
        return NULL;
    }
    return t;
}

/* ------------------------------------------------------------------ hooks */

int64_t tg__prof_begin_op(const char *name, const tg_tensor *const *inputs, int ninputs,
                          tg_device device, bool below_autograd)
{
    prof_thread *t = lock_recording();
    if (!t) return -1;
    int32_t i = -1;
    if (below_autograd && t->open >= 0 && t->ev[t->open].kind == PROF_OP &&
        t->ev[t->open].name == name)
        goto out;
    i = push_event(t, PROF_OP, name);
    if (i < 0) goto out;
    prof_event *e = &t->ev[i];
    e->device_type = (int8_t)device.type;
    e->device_index = (int8_t)device.index;
    if (tg__prof_session.opts.record_shapes && ninputs > 0) {
        int n = ninputs < PROF_MAX_SHAPE_INPUTS ? ninputs : PROF_MAX_SHAPE_INPUTS;
        if (tg__array_reserve((void **)&t->shapes, &t->capshapes, t->nshapes + n, sizeof *t->shapes,
                              FIRST_CAP)) {
            e->shapes = t->nshapes;
            e->ninputs = (uint8_t)n;
            for (int k = 0; k < n; k++) {
                prof_shape *s = &t->shapes[t->nshapes++];
                const tg_tensor *x = inputs[k];
                s->ndim = x ? (int8_t)x->ndim : -1;
                s->dtype = x ? (int8_t)x->dtype : -1;
                for (int64_t d = 0; x && d < x->ndim; d++) s->sizes[d] = x->sizes[d];
            }
        }
    }
    const tg__prof_device_timer *tm = device.type == TG_CUDA ? timers[TG_CUDA] : NULL;
    if (tm && tg__prof_session.opts.with_cuda) e->gpu = tm->start(device.index);
    open_event(t, i);
    t->ev[i].start_ns = tg__prof_now_ns();
out:
    pthread_mutex_unlock(&t->lock);
    return i < 0 ? -1 : token_of(i);
}

int64_t tg__prof_begin_backward(const char *name, uint64_t sequence_nr, uint32_t fwd_thread)
{
    prof_thread *t = lock_recording();
    if (!t) return -1;
    int32_t i = push_event(t, PROF_BACKWARD, name);
    if (i >= 0) {
        t->ev[i].seq = sequence_nr == UINT64_MAX ? -1 : (int64_t)sequence_nr;
        t->ev[i].fwd_thread = fwd_thread;
        open_event(t, i);
        t->ev[i].start_ns = tg__prof_now_ns();
    }
    pthread_mutex_unlock(&t->lock);
    return i < 0 ? -1 : token_of(i);
}

void tg__prof_end(int64_t token)
{
    int64_t now = tg__prof_now_ns();
    prof_thread *t = my;
    if (token < 0 || !t) return;
    pthread_mutex_lock(&t->lock);
    if (!t->closed && t->gen == (uint32_t)(token >> 32))
        close_event(t, (int32_t)(token & 0xffffffff), now);
    pthread_mutex_unlock(&t->lock);
}

uint32_t tg__prof_node_created(uint64_t sequence_nr)
{
    prof_thread *t = lock_recording();
    if (!t) return 0;
    int32_t o = t->open;
    if (o >= 0 && t->ev[o].kind == PROF_OP && t->ev[o].seq < 0) t->ev[o].seq = (int64_t)sequence_nr;
    uint32_t id = t->id;
    pthread_mutex_unlock(&t->lock);
    return id;
}

void tg__prof_memory(int64_t nbytes, tg_device device)
{
    prof_thread *t = lock_recording();
    if (!t) return;
    if (t->open >= 0) {
        t->ev[t->open].mem_self += nbytes;
        t->ev[t->open].mem_total += nbytes;
    }
    int32_t i = push_event(t, PROF_MEMORY, nbytes > 0 ? "[memory] alloc" : "[memory] free");
    if (i >= 0) {
        prof_event *e = &t->ev[i];
        e->start_ns = tg__prof_now_ns();
        e->dur_ns = 0;
        e->mem_self = e->mem_total = nbytes;
        e->parent = t->open;
        e->device_type = (int8_t)device.type;
        e->device_index = (int8_t)device.index;
    }
    pthread_mutex_unlock(&t->lock);
}

/* ------------------------------------------------------------------ user ranges */

void tg_record_function_begin(const char *name)
{
    if (!tg__prof_active()) return;
    prof_thread *t = lock_recording();
    if (!t) return;
    char *copy = strdup(name ? name : "(null)");
    if (copy && tg__array_reserve((void **)&t->strings, &t->capstrings, t->nstrings + 1,
                                  sizeof(char *), FIRST_CAP)) {
        t->strings[t->nstrings++] = copy;
        int32_t i = push_event(t, PROF_USER, copy);
        if (i >= 0) {
            open_event(t, i);
            t->ev[i].start_ns = tg__prof_now_ns();
        }
    } else {
        free(copy);
    }
    pthread_mutex_unlock(&t->lock);
}

/* Closes this thread's innermost open user range (a no-op when there is none). */
void tg_record_function_end(void)
{
    int64_t now = tg__prof_now_ns();
    prof_thread *t = my;
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    if (!t->closed && t->gen == session_gen) {
        int32_t j = t->open;
        while (j >= 0 && t->ev[j].kind != PROF_USER) j = t->ev[j].parent;
        if (j >= 0) close_event(t, j, now);
    }
    pthread_mutex_unlock(&t->lock);
}

/* ------------------------------------------------------------------ sessions */

/* Frees the last session's events; threads that have exited go entirely. Under the lock. */
static void clear_results(void)
{
    prof_thread **pp = &all_threads;
    while (*pp) {
        prof_thread *t = *pp;
        pthread_mutex_lock(&t->lock);
        thread_clear(t);
        t->closed = true;
        pthread_mutex_unlock(&t->lock);
        if (t->os_tid < 0) {
            *pp = t->next;
            pthread_mutex_destroy(&t->lock);
            free(t);
        } else {
            pp = &t->next;
        }
    }
    tg__prof_session.threads = NULL;
    tg__prof_session.nthreads = 0;
    tg__prof_session.stopped = false;
    nrecorded = ndropped = 0;
}

int tg_profiler_start_fn(tg_profiler_opts opts)
{
    const char *op = "profiler_start";
    if (opts.max_events <= 0)
        return tg__fail(op, "max_events must be positive, got %lld", (long long)opts.max_events);
    if (opts.max_events > INT32_MAX)
        return tg__fail(op, "max_events must be at most %d", INT32_MAX);
    pthread_mutex_lock(&tg__prof_lock);
    if (running) {
        pthread_mutex_unlock(&tg__prof_lock);
        return tg__fail(op, "the profiler is already running (sessions do not nest: call "
                            "tg_profiler_stop first)");
    }
    clear_results();
    session_gen++;
    tg__prof_session.opts = opts;
    tg__prof_session.start_ns = tg__prof_now_ns();
    warned_full = false;
    for (prof_thread *t = all_threads; t; t = t->next) {
        pthread_mutex_lock(&t->lock);
        t->gen = session_gen;
        t->closed = false;
        pthread_mutex_unlock(&t->lock);
    }
    running = true;
    tg__set_memory_observer(opts.profile_memory ? tg__prof_memory : NULL);
    __atomic_store_n(&tg_profiler_recording, true, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&tg__prof_lock);
    return 0;
}

/* The device times of every timed event, then the timers' handles are freed. */
static void collect_gpu(void)
{
    bool used[2] = { false, false };
    for (prof_thread *t = all_threads; t; t = t->next)
        for (int32_t i = 0; i < t->nev; i++) {
            prof_event *e = &t->ev[i];
            if (e->gpu < 0) continue;
            const tg__prof_device_timer *tm = timers[e->device_type];
            used[e->device_type] = true;
            double s = 0, d = -1;
            int64_t stream = 0;
            if (tm->read(e->gpu, &s, &d, &stream) == 0) {
                e->gpu_start_us = s;
                e->gpu_dur_us = d;
                e->gpu_stream = stream;
            }
            e->gpu = -1;
        }
    for (int k = 0; k < 2; k++)
        if (used[k] && timers[k]) timers[k]->reset();
}

int tg_profiler_stop(void)
{
    pthread_mutex_lock(&tg__prof_lock);
    if (!running) {
        pthread_mutex_unlock(&tg__prof_lock);
        return tg__fail("profiler_stop", "the profiler is not running (call tg_profiler_start "
                                         "first)");
    }
    __atomic_store_n(&tg_profiler_recording, false, __ATOMIC_RELEASE);
    tg__set_memory_observer(NULL);
    running = false;
    int64_t now = tg__prof_now_ns();
    uint32_t n = 0;
    for (prof_thread *t = all_threads; t; t = t->next) {
        pthread_mutex_lock(&t->lock);
        if (t->open >= 0) {
            int32_t root = t->open;
            while (t->ev[root].parent >= 0) root = t->ev[root].parent;
            close_event(t, root, now);
        }
        t->closed = true;
        pthread_mutex_unlock(&t->lock);
        n++;
    }
    collect_gpu();
    tg__prof_session.threads = all_threads;
    tg__prof_session.nthreads = n;
    tg__prof_session.stop_ns = now;
    tg__prof_session.stopped = true;
    int64_t dropped = __atomic_load_n(&ndropped, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&tg__prof_lock);
    if (dropped)
        tg__warn("profiler: %lld events were dropped after max_events (%lld) was reached; "
                 "raise .max_events or profile fewer steps",
                 (long long)dropped, (long long)tg__prof_session.opts.max_events);
    return 0;
}

bool tg_profiler_is_enabled(void) { return tg__prof_active(); }

int64_t tg_profiler_num_events(void) { return __atomic_load_n(&nrecorded, __ATOMIC_RELAXED); }
int64_t tg_profiler_dropped_events(void) { return __atomic_load_n(&ndropped, __ATOMIC_RELAXED); }

void tg_profiler_reset(void)
{
    pthread_mutex_lock(&tg__prof_lock);
    if (!running) {
        clear_results();
        session_gen++;
    }
    pthread_mutex_unlock(&tg__prof_lock);
}

int tg__prof_check_results(const char *op)
{
    if (tg__prof_active())
        return tg__fail(op, "the profiler is still running (call tg_profiler_stop first)");
    if (!tg__prof_session.stopped)
        return tg__fail(op,
                        "nothing was recorded (call tg_profiler_start and tg_profiler_stop first)");
    return 0;
}
