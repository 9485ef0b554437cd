/* Scopes (thread-local): tensors handed out by the public API while a scope is open are
 * recorded in it, and tg_scope_end() drops the scope's reference to each of them.
 *
 * All open scopes share one array of entries; scope i owns entries [start[i], n). Keeping a
 * tensor marks its newest entry; at the end of the scope kept entries are compacted to the
 * front of its range, where they belong to the enclosing scope (or, with no enclosing scope,
 * their reference passes to the caller). With no scope open, tracking costs one
 * thread-local load. */
#include "core/rt_private.h"

#include <pthread.h>
#include <stdlib.h>

#define KEPT ((uintptr_t)1) /* low bit of an entry: kept (tensor pointers are aligned) */
/* Bit 1: the entry is the malloc'd array of a Tensor[] result (freed, not released, at the
 * end; its elements have entries of their own). malloc and tensor pointers are 16-aligned. */
#define ARRAY ((uintptr_t)2)
#define PTR(e) ((e) & ~(KEPT | ARRAY))

static _Thread_local int depth;
/* Non-zero while a kernel runs under an open scope: what kernels get from their own inner
 * public calls belongs to the kernel (it releases or returns it), not to the user's scope. */
static _Thread_local int suspended;
static _Thread_local uintptr_t *entries;
static _Thread_local int64_t nentries, capentries;
static _Thread_local int64_t *starts;
static _Thread_local int capstarts;

/* Frees this thread's arrays when it exits (tensors still recorded stay alive: a scope left
 * open by an exiting thread is the caller's leak, reported by the leak counters). */
static pthread_key_t scope_key;
static pthread_once_t scope_key_once = PTHREAD_ONCE_INIT;
static void scope_thread_exit(void *unused)
{
    (void)unused;
    free(entries);
    free(starts);
    entries = NULL;
    starts = NULL;
    nentries = capentries = 0;
    capstarts = depth = suspended = 0;
}
static void scope_key_init(void) { pthread_key_create(&scope_key, scope_thread_exit); }

void tg_scope_begin(void)
{
    if (capstarts == 0) {
        pthread_once(&scope_key_once, scope_key_init);
        pthread_setspecific(scope_key, &scope_key);
    }
    if (depth == capstarts) {
        int cap = capstarts ? capstarts * 2 : 8;
        int64_t *s = realloc(starts, (size_t)cap * sizeof *s);
        if (!s) {
            tg__error("scope_begin", "out of memory");
            return;
        }
        starts = s;
        capstarts = cap;
    }
    starts[depth++] = nentries;
}

/* Room for `more` entries; false on out of memory. */
static bool reserve(int64_t more)
{
    if (nentries + more <= capentries) return true;
    int64_t cap = capentries ? capentries * 2 : 64;
    while (cap < nentries + more) cap *= 2;
    uintptr_t *e = realloc(entries, (size_t)cap * sizeof *e);
    if (!e) return false;
    entries = e;
    capentries = cap;
    return true;
}

static __attribute__((noinline)) tg_tensor *track_slow(tg_tensor *t)
{
    if (!reserve(1)) {
        /* Cannot record it: the caller would never free it, so fail the call instead. */
        tg_release(t);
        return tg__error("scope", "out of memory recording a tensor in the open scope");
    }
    entries[nentries++] = (uintptr_t)t;
    return t;
}

tg_tensor *tg_scope_track(tg_tensor *t)
{
    if (TG__LIKELY(depth == 0) || suspended || !t) return t;
    return track_slow(t);
}

tg_tensor_list tg_scope_track_list(tg_tensor_list l)
{
    if (TG__LIKELY(depth == 0) || suspended || !l.data) return l;
    if (!reserve(l.len + 1)) {
        tg_tensor_list_release(l);
        tg__error("scope", "out of memory recording a tensor list in the open scope");
        return (tg_tensor_list){ NULL, 0 };
    }
    /* The array first: released newest first, the elements go before their array. */
    entries[nentries++] = (uintptr_t)l.data | ARRAY;
    for (int64_t i = 0; i < l.len; i++) entries[nentries++] = (uintptr_t)l.data[i];
    return l;
}

int tg_scope_suspend(void)
{
    if (TG__LIKELY(depth == 0) || suspended) return 0;
    suspended = 1;
    return 1;
}

void tg_scope_resume(int token)
{
    if (token) suspended = 0;
}

tg_tensor *tg_scope_keep(tg_tensor *t)
{
    if (depth == 0 || !t) return t;
    for (int64_t i = nentries - 1; i >= starts[depth - 1]; i--) {
        if (entries[i] == (uintptr_t)t) { /* newest unkept entry of t */
            entries[i] |= KEPT;
            return t;
        }
    }
    return t; /* not made in this scope: it already belongs to someone else */
}

tg_tensor_list tg_scope_keep_list(tg_tensor_list l)
{
    if (depth == 0 || !l.data) return l;
    for (int64_t i = 0; i < l.len; i++) tg_scope_keep(l.data[i]);
    uintptr_t array = (uintptr_t)l.data | ARRAY;
    for (int64_t i = nentries - 1; i >= starts[depth - 1]; i--) {
        if (entries[i] == array) {
            entries[i] |= KEPT;
            break;
        }
    }
    return l;
}

void tg_scope_end(void)
{
    if (depth == 0) return;
    int64_t start = starts[--depth], kept = start;
    int64_t end = nentries;
    /* Release newest first, so that later results die before the inputs they came from. */
    for (int64_t i = end - 1; i >= start; i--) {
        if (entries[i] & KEPT) continue;
        if (entries[i] & ARRAY) free((void *)PTR(entries[i]));
        else tg_release((tg_tensor *)entries[i]);
    }
    for (int64_t i = start; i < end; i++)
        if (entries[i] & KEPT) entries[kept++] = entries[i] & ~KEPT;
    nentries = depth > 0 ? kept : start;
    if (depth == 0 && nentries == 0 && capentries > 4096) {
        free(entries); /* do not hold a huge array after a big scope */
        entries = NULL;
        capentries = 0;
    }
}
