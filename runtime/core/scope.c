/* Scopes (thread-local): tensors handed out by the public API while a scope is open are
 * recorded in it, and tg_scope_end() drops the scope's reference to each of them.
 *
 * All open scopes share one array of entries; scope i owns entries [start[i], n). Keeping a
 * tensor marks its newest entry; at the end of the scope kept entries are compacted to the
 * front of its range, where they belong to the enclosing scope (or, with no enclosing scope,
 * their reference passes to the caller). With no scope open, tracking costs one
 * thread-local load.
 *
 * Each tensor counts the references scopes hold to it (tg_tensor.scope_refs): one per entry,
 * until the entry's reference is released at the scope's end or passes to the caller. That
 * count is how tg_release tells a caller's reference from a scope's (tensor.c), and how
 * tg_drop knows whether the result it is given is the open scope's. */
#include "core/rt_private.h"

#include <pthread.h>
#include <stdlib.h>

#define KEPT ((uintptr_t)1) /* low bit of an entry: kept (tensor pointers are aligned) */
/* Bit 1: the entry is the malloc'd array of a Tensor[] result (freed, not released, at the
 * end; its elements have entries of their own). malloc and tensor pointers are 16-aligned. */
#define ARRAY ((uintptr_t)2)
#define PTR(e) ((e) & ~(KEPT | ARRAY))

/* One thread's scopes, in one thread-local so that a function takes its address once
 * (TG__TLS_ADDR). */
typedef struct scope_state {
    int depth;
    /* Non-zero while a kernel runs under an open scope: what kernels get from their own inner
     * public calls belongs to the kernel (it releases or returns it), not to the user's
     * scope. */
    int suspended;
    uintptr_t *entries;
    int64_t nentries, capentries;
    int64_t *starts;
    int capstarts;
} scope_state;
static _Thread_local scope_state sc;

/* Frees this thread's arrays when it exits (tensors still recorded stay alive: a scope left
 * open by an exiting thread is the caller's leak, reported by the leak counters). */
static pthread_key_t scope_key;
static pthread_once_t scope_key_once = PTHREAD_ONCE_INIT;
static void scope_thread_exit(void *unused)
{
    (void)unused;
    scope_state *st = TG__TLS_ADDR(sc);
    free(st->entries);
    free(st->starts);
    *st = (scope_state){ 0 };
}
static void scope_key_init(void) { pthread_key_create(&scope_key, scope_thread_exit); }

void tg_scope_begin(void)
{
    scope_state *st = TG__TLS_ADDR(sc);
    if (st->capstarts == 0) {
        pthread_once(&scope_key_once, scope_key_init);
        pthread_setspecific(scope_key, &scope_key);
    }
    if (st->depth == st->capstarts) {
        int cap = st->capstarts ? st->capstarts * 2 : 8;
        int64_t *s = realloc(st->starts, (size_t)cap * sizeof *s);
        if (!s) {
            tg__error("scope_begin", "out of memory");
            return;
        }
        st->starts = s;
        st->capstarts = cap;
    }
    st->starts[st->depth++] = st->nentries;
}

/* Room for `more` entries; false on out of memory. */
static bool reserve(scope_state *st, int64_t more)
{
    if (st->nentries + more <= st->capentries) return true;
    int64_t cap = st->capentries ? st->capentries * 2 : 64;
    while (cap < st->nentries + more) cap *= 2;
    uintptr_t *e = realloc(st->entries, (size_t)cap * sizeof *e);
    if (!e) return false;
    st->entries = e;
    st->capentries = cap;
    return true;
}

/* t->scope_refs += d. A scope's reference that is t's only one (refcount 1) means no other
 * thread can reach t, so, as in tg__ref_dec, no atomic read-modify-write is needed then. */
static inline void scope_refs_add(tg_tensor *t, int32_t d)
{
    if (__atomic_load_n(&t->refcount, __ATOMIC_RELAXED) == 1)
        __atomic_store_n(&t->scope_refs, __atomic_load_n(&t->scope_refs, __ATOMIC_RELAXED) + d,
                         __ATOMIC_RELAXED);
    else __atomic_add_fetch(&t->scope_refs, d, __ATOMIC_RELAXED);
}

static __attribute__((noinline)) tg_tensor *track_slow(scope_state *st, tg_tensor *t)
{
    if (!reserve(st, 1)) {
        /* Cannot record it: the caller would never free it, so fail the call instead. */
        tg_release(t);
        return tg__error("scope", "out of memory recording a tensor in the open scope");
    }
    st->entries[st->nentries++] = (uintptr_t)t;
    scope_refs_add(t, 1);
    return t;
}

tg_tensor *tg_scope_track(tg_tensor *t)
{
    scope_state *st = TG__TLS_ADDR(sc);
    if (TG__LIKELY(st->depth == 0) || st->suspended || !t) return t;
    return track_slow(st, t);
}

tg_tensor_list tg_scope_track_list(tg_tensor_list l)
{
    scope_state *st = TG__TLS_ADDR(sc);
    if (TG__LIKELY(st->depth == 0) || st->suspended || !l.data) return l;
    if (!reserve(st, l.len + 1)) {
        tg_tensor_list_release(l);
        tg__error("scope", "out of memory recording a tensor list in the open scope");
        return (tg_tensor_list){ NULL, 0 };
    }
    /* The array first: released newest first, the elements go before their array. */
    st->entries[st->nentries++] = (uintptr_t)l.data | ARRAY;
    for (int64_t i = 0; i < l.len; i++) {
        st->entries[st->nentries++] = (uintptr_t)l.data[i];
        scope_refs_add(l.data[i], 1);
    }
    return l;
}

int tg_scope_suspend(void)
{
    scope_state *st = TG__TLS_ADDR(sc);
    if (TG__LIKELY(st->depth == 0) || st->suspended) return 0;
    st->suspended = 1;
    return 1;
}

void tg_scope_resume(int token)
{
    if (token) sc.suspended = 0;
}

tg_tensor *tg_scope_keep(tg_tensor *t)
{
    scope_state *st = TG__TLS_ADDR(sc);
    if (st->depth == 0 || !t) return t;
    for (int64_t i = st->nentries - 1; i >= st->starts[st->depth - 1]; i--) {
        if (st->entries[i] == (uintptr_t)t) { /* newest unkept entry of t */
            st->entries[i] |= KEPT;
            return t;
        }
    }
    return t; /* not made in this scope: it already belongs to someone else */
}

tg_tensor_list tg_scope_keep_list(tg_tensor_list l)
{
    scope_state *st = TG__TLS_ADDR(sc);
    if (st->depth == 0 || !l.data) return l;
    for (int64_t i = 0; i < l.len; i++) tg_scope_keep(l.data[i]);
    uintptr_t array = (uintptr_t)l.data | ARRAY;
    for (int64_t i = st->nentries - 1; i >= st->starts[st->depth - 1]; i--) {
        if (st->entries[i] == array) {
            st->entries[i] |= KEPT;
            break;
        }
    }
    return l;
}

void tg_scope_end(void)
{
    scope_state *st = TG__TLS_ADDR(sc);
    if (st->depth == 0) return;
    int64_t start = st->starts[--st->depth], kept = start;
    int64_t end = st->nentries;
    /* Release newest first, so that later results die before the inputs they came from. */
    for (int64_t i = end - 1; i >= start; i--) {
        if (st->entries[i] & KEPT) continue;
        if (st->entries[i] & ARRAY) {
            free((void *)PTR(st->entries[i]));
        } else {
            tg_tensor *t = (tg_tensor *)st->entries[i];
            scope_refs_add(t, -1); /* first: the reference released is no longer a scope's */
            tg_release(t);
        }
    }
    for (int64_t i = start; i < end; i++) {
        if (!(st->entries[i] & KEPT)) continue;
        if (st->depth == 0 && !(st->entries[i] & ARRAY)) /* the caller's reference now */
            scope_refs_add((tg_tensor *)PTR(st->entries[i]), -1);
        st->entries[kept++] = st->entries[i] & ~KEPT;
    }
    st->nentries = st->depth > 0 ? kept : start;
    if (st->depth == 0 && st->nentries == 0 && st->capentries > 4096) {
        free(st->entries); /* do not hold a huge array after a big scope */
        st->entries = NULL;
        st->capentries = 0;
    }
}

int tg_drop(tg_tensor *t)
{
    if (!t) return tg__fail("drop", "argument 't' is NULL");
    scope_state *st = TG__TLS_ADDR(sc);
    /* Every result returned while a scope is open (and not suspended for a kernel) was recorded
     * in it: a tensor the scopes hold references to is then the scope's to release. */
    if (st->depth > 0 && !st->suspended && __atomic_load_n(&t->scope_refs, __ATOMIC_RELAXED) > 0)
        return 0;
    return tg__release(t);
}

bool tg__scope_holds_array(const void *array)
{
    scope_state *st = TG__TLS_ADDR(sc);
    if (st->suspended) return false; /* a kernel's lists are its own */
    for (int64_t i = st->nentries - 1; i >= 0; i--)
        if ((st->entries[i] & ARRAY) && PTR(st->entries[i]) == (uintptr_t)array) return true;
    return false;
}
