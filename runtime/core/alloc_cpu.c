/* The CPU allocator: 64-byte aligned blocks, rounded up to size classes (four per power of
 * two, so at most 25% is wasted), with freed blocks cached for reuse.
 *
 * Small blocks (<= 64 KiB) go through a per-thread cache first, so most allocations take no
 * lock; larger ones, and a thread cache's overflow, go to one global cache under a mutex.
 * Reusing large blocks matters: a fresh 64 MiB block from the kernel costs ~16k page faults,
 * as much as the elementwise op that fills it. The global cache holds at most
 * TG__CACHE_CAP bytes; tg__cpu_allocator_empty_cache() returns everything to the system,
 * and an allocation that fails empties the cache and retries before reporting out of memory.
 *
 * Under AddressSanitizer cached blocks are poisoned (all but their link word), so
 * use-after-free is still caught. */
#include "core/rt_private.h"

#include <pthread.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* The link word stays unpoisoned: LeakSanitizer ignores pointers stored in poisoned memory
 * and would report every cached block behind the first as leaked. */
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((char *)(p) + sizeof(void *), (n) - sizeof(void *))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ALIGN 64
#define MAX_LOG 47 /* larger requests are refused (OOM) */
#define NCLASS (4 + (MAX_LOG - 7) * 4)
#define THREAD_MAX_BYTES ((size_t)64 << 10)
#define THREAD_PER_CLASS 8
#define TG__CACHE_CAP ((size_t)1 << 30)

typedef struct free_block {
    struct free_block *next;
} free_block;

/* Size classes: 64, 128, 192, 256 bytes, then for 2^k < n <= 2^(k+1) (k >= 8) the four
 * classes 5/4, 6/4, 7/4 and 8/4 of 2^k. Every class is a multiple of 64, as aligned_alloc
 * requires. */
static int size_class(size_t n, size_t *rounded)
{
    if (n <= 4 * ALIGN) {
        size_t q = n ? (n + ALIGN - 1) / ALIGN : 1;
        *rounded = q * ALIGN;
        return (int)q - 1;
    }
    int k = 63 - __builtin_clzll((unsigned long long)(n - 1)); /* 2^k < n <= 2^(k+1) */
    size_t step = (size_t)1 << (k - 2);
    size_t q = (n + step - 1) / step; /* 5..8 */
    *rounded = q * step;
    return 4 + (k - 8) * 4 + (int)(q - 5);
}

static size_t class_size(int c)
{
    if (c < 4) return (size_t)(c + 1) * ALIGN;
    int k = (c - 4) / 4 + 8;
    return ((size_t)1 << (k - 2)) * (size_t)((c - 4) % 4 + 5);
}

/* ---- global cache ---- */
static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *global_free[NCLASS];
static size_t global_bytes;

/* ---- per-thread cache ---- */
typedef struct thread_cache {
    free_block *head[NCLASS];
    uint8_t count[NCLASS];
    bool registered;
} thread_cache;
static _Thread_local thread_cache tcache;
static pthread_key_t tcache_key;
static pthread_once_t tcache_once = PTHREAD_ONCE_INIT;

static void os_free(void *p) { free(p); }

static void global_put(void *p, int c, size_t rounded)
{
    pthread_mutex_lock(&global_lock);
    if (global_bytes + rounded <= TG__CACHE_CAP) {
        free_block *b = p;
        UNPOISON(b, sizeof *b);
        b->next = global_free[c];
        POISON(b, rounded);
        global_free[c] = b;
        global_bytes += rounded;
        p = NULL;
    }
    pthread_mutex_unlock(&global_lock);
    if (p) os_free(p);
}

static void *global_get(int c, size_t rounded)
{
    pthread_mutex_lock(&global_lock);
    free_block *b = global_free[c];
    if (b) {
        UNPOISON(b, rounded);
        global_free[c] = b->next;
        global_bytes -= rounded;
    }
    pthread_mutex_unlock(&global_lock);
    return b;
}

/* Thread exit: the thread's cached blocks move to the global cache (or the system). */
static void tcache_flush(void *unused)
{
    (void)unused;
    for (int c = 0; c < NCLASS; c++) {
        size_t rounded = class_size(c);
        while (tcache.head[c]) {
            free_block *b = tcache.head[c];
            UNPOISON(b, sizeof *b);
            tcache.head[c] = b->next;
            tcache.count[c]--;
            global_put(b, c, rounded);
        }
    }
}

static void tcache_key_init(void) { pthread_key_create(&tcache_key, tcache_flush); }

static void tcache_register(void)
{
    pthread_once(&tcache_once, tcache_key_init);
    pthread_setspecific(tcache_key, &tcache); /* any non-NULL value triggers the flush */
    tcache.registered = true;
}

void *tg__cpu_alloc(size_t nbytes)
{
    size_t rounded;
    if (nbytes > ((size_t)1 << (MAX_LOG + 1))) return NULL;
    int c = size_class(nbytes, &rounded);
    if (rounded <= THREAD_MAX_BYTES) {
        thread_cache *tc = TG__TLS_ADDR(tcache);
        free_block *b = tc->head[c];
        if (b) {
            UNPOISON(b, rounded);
            tc->head[c] = b->next;
            tc->count[c]--;
            return b;
        }
    }
    void *p = global_get(c, rounded);
    if (p) return p;
    p = aligned_alloc(ALIGN, rounded);
    if (!p) {
        tg__cpu_allocator_empty_cache();
        p = aligned_alloc(ALIGN, rounded);
    }
    return p;
}

void tg__cpu_free(void *p, size_t nbytes)
{
    if (!p) return;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    thread_cache *tc = TG__TLS_ADDR(tcache);
    if (rounded <= THREAD_MAX_BYTES && tc->count[c] < THREAD_PER_CLASS) {
        if (TG__UNLIKELY(!tc->registered)) tcache_register();
        free_block *b = p;
        b->next = tc->head[c];
        POISON(b, rounded);
        tc->head[c] = b;
        tc->count[c]++;
        return;
    }
    global_put(p, c, rounded);
}

void tg__cpu_allocator_empty_cache(void)
{
    tcache_flush(NULL);
    pthread_mutex_lock(&global_lock);
    for (int c = 0; c < NCLASS; c++) {
        while (global_free[c]) {
            free_block *b = global_free[c];
            UNPOISON(b, sizeof *b);
            global_free[c] = b->next;
            os_free(b);
        }
    }
    global_bytes = 0;
    pthread_mutex_unlock(&global_lock);
}

size_t tg__cpu_allocator_cached_bytes(void)
{
    pthread_mutex_lock(&global_lock);
    size_t n = global_bytes;
    pthread_mutex_unlock(&global_lock);
    return n;
}
