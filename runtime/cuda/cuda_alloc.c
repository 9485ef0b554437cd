/* The caching CUDA allocator: device memory from cudaMalloc is kept after its tensor dies and
 * handed to the next request of the same size class on the same device (and stream: there is
 * one stream per device, so work that used a block is ordered before work that reuses it).
 *
 * Size classes: requests round up to 512 bytes below 1 MiB and to 2 MiB above, so a training
 * loop that allocates the same shapes every step stops calling cudaMalloc after its first step.
 * When cudaMalloc fails, the device's cached blocks are freed and the request retried once;
 * a second failure is PyTorch's "CUDA out of memory. Tried to allocate ..." error.
 * tg_cuda_empty_cache() returns every cached block to the driver. Thread-safe (one lock). */

#include "cuda/cuda_rt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_DEVICES 64
#define NBUCKETS 256
#define SMALL_LIMIT ((size_t)1 << 20)
#define SMALL_ROUND ((size_t)512)
#define LARGE_ROUND ((size_t)2 << 20)

typedef struct cblock {
    void *ptr;
    size_t size;
    struct cblock *next;
} cblock;

typedef struct dev_cache {
    cblock *free_blocks[NBUCKETS]; /* cached blocks, hashed by size class */
    int64_t allocated;             /* bytes in live blocks (rounded sizes) */
    int64_t reserved;              /* bytes obtained from cudaMalloc and not yet freed */
    int64_t peak_allocated;
} dev_cache;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dev_cache caches[MAX_DEVICES];

static size_t round_size(size_t n)
{
    if (n == 0) n = 1;
    size_t r = n < SMALL_LIMIT ? SMALL_ROUND : LARGE_ROUND;
    return (n + r - 1) / r * r;
}

static unsigned bucket_of(size_t size) { return (unsigned)((size / SMALL_ROUND) % NBUCKETS); }

static int valid_device(int d) { return d >= 0 && d < MAX_DEVICES && d < tg__cuda_device_count(); }

/* Frees every cached block of device d (lock held). */
static void release_cached(int d)
{
    int prev = -1;
    (void)cudaGetDevice(&prev);
    if (cudaSetDevice(d) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    dev_cache *c = &caches[d];
    for (int b = 0; b < NBUCKETS; b++) {
        while (c->free_blocks[b]) {
            cblock *k = c->free_blocks[b];
            c->free_blocks[b] = k->next;
            if (cudaFree(k->ptr) != cudaSuccess) (void)cudaGetLastError();
            c->reserved -= (int64_t)k->size;
            free(k);
        }
    }
    if (prev >= 0 && prev != d) (void)cudaSetDevice(prev);
}

static void fmt_bytes(char *buf, size_t cap, double b)
{
    const char *unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    if (u == 0) snprintf(buf, cap, "%.0f bytes", b);
    else snprintf(buf, cap, "%.2f %s", b, unit[u]);
}

/* PyTorch's wording, with tensorgen's own figures (lock held). */
static void oom_error(const char *op, size_t nbytes, int d)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) (void)cudaGetLastError();
    char req[32], tot[32], alloc[32], fr[32], res[32];
    fmt_bytes(req, sizeof req, (double)nbytes);
    fmt_bytes(tot, sizeof tot, (double)total_b);
    fmt_bytes(alloc, sizeof alloc, (double)caches[d].allocated);
    fmt_bytes(fr, sizeof fr, (double)free_b);
    fmt_bytes(res, sizeof res, (double)caches[d].reserved);
    tg__error(op,
              "CUDA out of memory. Tried to allocate %s (GPU %d; %s total capacity; %s already "
              "allocated; %s free; %s reserved in total by tensorgen)",
              req, d, tot, alloc, fr, res);
}

void *tg__cuda_alloc(const char *op, size_t nbytes, int d)
{
    if (!valid_device(d)) {
        (void)tg__cuda_set_device(op, d); /* records CUDA's own message */
        if (!tg__has_error()) tg__error(op, "CUDA error: invalid device ordinal");
        return NULL;
    }
    size_t size = round_size(nbytes);
    unsigned b = bucket_of(size);
    void *p = NULL;
    pthread_mutex_lock(&lock);
    dev_cache *c = &caches[d];
    for (cblock **pp = &c->free_blocks[b]; *pp; pp = &(*pp)->next) {
        if ((*pp)->size == size) {
            cblock *k = *pp;
            *pp = k->next;
            p = k->ptr;
            free(k);
            break;
        }
    }
    if (!p) {
        int prev = -1;
        (void)cudaGetDevice(&prev);
        cudaError_t e = cudaSetDevice(d);
        if (e == cudaSuccess) {
            e = cudaMalloc(&p, size);
            if (e == cudaErrorMemoryAllocation) { /* give the cache back and retry once */
                (void)cudaGetLastError();
                release_cached(d);
                (void)cudaSetDevice(d);
                e = cudaMalloc(&p, size);
            }
        }
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            p = NULL;
            if (e == cudaErrorMemoryAllocation) oom_error(op, nbytes, d);
            else tg__cuda_check(op, e);
        } else {
            c->reserved += (int64_t)size;
        }
        if (prev >= 0 && prev != d) (void)cudaSetDevice(prev);
    }
    if (p) {
        c->allocated += (int64_t)size;
        if (c->allocated > c->peak_allocated) c->peak_allocated = c->allocated;
    }
    pthread_mutex_unlock(&lock);
    return p;
}

void tg__cuda_free(void *p, size_t nbytes, int d)
{
    if (!p || d < 0 || d >= MAX_DEVICES) return;
    size_t size = round_size(nbytes);
    cblock *k = malloc(sizeof *k);
    pthread_mutex_lock(&lock);
    dev_cache *c = &caches[d];
    c->allocated -= (int64_t)size;
    if (k) {
        k->ptr = p;
        k->size = size;
        k->next = c->free_blocks[bucket_of(size)];
        c->free_blocks[bucket_of(size)] = k;
    } else { /* no room to remember it: give it back */
        if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
        c->reserved -= (int64_t)size;
    }
    pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------------ stats and cache */

int64_t tg__cuda_allocator_stat(int d, int which)
{
    if (d < 0 || d >= MAX_DEVICES) return 0;
    pthread_mutex_lock(&lock);
    int64_t v = which == 0   ? caches[d].allocated
                : which == 1 ? caches[d].reserved
                             : caches[d].peak_allocated;
    pthread_mutex_unlock(&lock);
    return v;
}

void tg__cuda_allocator_empty_cache(void)
{
    int n = tg__cuda_device_count();
    pthread_mutex_lock(&lock);
    for (int d = 0; d < n && d < MAX_DEVICES; d++) release_cached(d);
    pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------------ the device hook */

static void *hook_alloc(const char *op, size_t nbytes, tg_device dev)
{
    return tg__cuda_alloc(op, nbytes, dev.index);
}
static void hook_free(void *p, size_t nbytes, tg_device dev)
{
    tg__cuda_free(p, nbytes, dev.index);
}
static int hook_copy(void *dst, tg_device dd, const void *src, tg_device sd, size_t nbytes)
{
    return tg__cuda_memcpy("copy_", dst, dd, src, sd, nbytes);
}

/* Registered by cuda_device.c when the library loads. */
const tg_device_hooks tg__cuda_device_hooks = {
    .alloc = hook_alloc,
    .free = hook_free,
    .copy = hook_copy,
};
