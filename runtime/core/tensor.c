/* Tensors and storages: creation, views, reference counting, metadata, leak counters.
 *
 * Memory layout. Every tensor header lives in a "block" that also has room for one storage
 * struct, the version counter of a base tensor, and 64 bytes of inline data:
 *
 *   [ tg_tensor | tg_storage | version | owners | inline data (64 B, 64-aligned) ]
 *
 * A fresh tensor uses all of it: one allocation (usually popped from a per-thread free list)
 * for header, storage and, for tensors of <= 64 bytes, the data itself. That is what keeps
 * `tg_add` of two one-element tensors in the tens of nanoseconds. A view uses only the header
 * part and references its base's storage. The block is freed when both its users are gone:
 * `owners` counts the tensor and, while in use, the embedded storage (which views of the
 * tensor may keep alive after the tensor itself died).
 *
 * Version counters: a base tensor's counter is the `version` cell of its block; views point at
 * their base's cell and hold an owned reference to the base (view_base), so the cell outlives
 * every view. view_base is always the root base, so releasing a view recurses one level only.
 *
 * Live counters (tg_live_tensors/storages) are per-thread plain counters summed on demand, so
 * the hot path pays no atomic read-modify-write for leak accounting.
 *
 * Misuse (docs/c-api.md, "What is detected"): tg_release refuses, with an error and a warning,
 * to drop a reference when refcount <= scope_refs: either the tensor is dead (a destroyed
 * tensor's refcount is 0) or every reference left is an open scope's. The block cache reuses
 * the newest block first, so a dead header is soon a live one; a debug build (-DTG_DEBUG) and
 * the sanitizer build instead keep the last BLOCK_CACHE_MAX freed blocks in a quarantine and
 * never reuse them, so that a double release within that window is reported too (ASan reports
 * the later ones as use after free). */
#include "core/rt_private.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cached blocks keep their first words readable: the refcount and scope_refs, which a double
 * release reads (and finds dead), and the free-list link (t.storage), which LeakSanitizer must
 * be able to follow. */
#define KEEP_READABLE (offsetof(struct tg_tensor, storage) + sizeof(tg_storage *))
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* Cached blocks are poisoned except the words above. */
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((char *)(p) + KEEP_READABLE, (n)-KEEP_READABLE)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define IS_POISONED(p) __asan_address_is_poisoned(p)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#define IS_POISONED(p) ((void)(p), 0)
#endif
#if defined(TG_DEBUG) || defined(__SANITIZE_ADDRESS__)
#define QUARANTINE 1
#else
#define QUARANTINE 0
#endif

#define INLINE_BYTES 64
#define BLOCK_CACHE_MAX 256

/* Storage kinds (tg_storage.alloc_kind): where the struct lives and who frees the bytes. */
enum {
    TG__STORAGE_EMBEDDED = 0x10, /* struct inside a tensor block; else malloc'd alone */
    TG__DATA_INLINE = 0,         /* bytes inside the block */
    TG__DATA_CPU = 1,            /* tg__cpu_alloc */
    TG__DATA_DEVICE = 2,         /* registered device allocator */
    TG__DATA_EXTERNAL = 3,       /* caller memory, freed by the deleter if any */
    TG__DATA_MASK = 0x0f,
};

typedef struct tblock {
    struct tg_tensor t; /* first: a tg_tensor* is a tblock* */
    tg_storage s;
    int64_t version;
    int64_t owners; /* atomic: 1 for the tensor + 1 while s is in use */
    _Alignas(64) unsigned char inline_data[INLINE_BYTES];
} tblock;

#define BLOCK_OF_STORAGE(sp) ((tblock *)((char *)(sp)-offsetof(tblock, s)))

/* ------------------------------------------------------------------ per-thread state */

typedef struct thread_state {
    int64_t tensors, storages; /* live objects created minus destroyed on this thread */
    struct thread_state *next, *prev;
    tblock *free_blocks; /* cached blocks, linked through t.storage (quarantine: oldest first) */
    tblock *free_newest; /* the quarantine's newest block */
    int nfree;
    bool registered;
} thread_state;

static _Thread_local thread_state ts;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static thread_state *threads;                   /* registered, live threads */
static int64_t exited_tensors, exited_storages; /* folded in at thread exit */
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&threads_lock);
    exited_tensors += ts.tensors;
    exited_storages += ts.storages;
    if (ts.prev) ts.prev->next = ts.next;
    else threads = ts.next;
    if (ts.next) ts.next->prev = ts.prev;
    ts.registered = false;
    pthread_mutex_unlock(&threads_lock);
    while (ts.free_blocks) {
        tblock *b = ts.free_blocks;
        UNPOISON(b, sizeof *b);
        ts.free_blocks = (tblock *)b->t.storage;
        free(b);
    }
    ts.free_newest = NULL;
    ts.nfree = 0;
    ts.tensors = ts.storages = 0;
}

static void thread_key_init(void) { pthread_key_create(&thread_key, thread_exit); }

static __attribute__((noinline)) void thread_register(void)
{
    pthread_once(&thread_key_once, thread_key_init);
    pthread_setspecific(thread_key, &ts);
    pthread_mutex_lock(&threads_lock);
    ts.prev = NULL;
    ts.next = threads;
    if (threads) threads->prev = &ts;
    threads = &ts;
    ts.registered = true;
    pthread_mutex_unlock(&threads_lock);
}

/* The functions below take this thread's state as `me`, which each public entry computes
 * once (TG__TLS_ADDR, rt_private.h). */
/* Only this thread writes its counters; readers on other threads load them atomically. */
static inline void count_add(thread_state *me, int64_t *c, int64_t d)
{
    if (TG__UNLIKELY(!me->registered)) thread_register();
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
}

static int64_t count_sum(size_t field_offset, const int64_t *exited)
{
    pthread_mutex_lock(&threads_lock);
    int64_t n = *exited;
    for (thread_state *s = threads; s; s = s->next)
        n += __atomic_load_n((int64_t *)((char *)s + field_offset), __ATOMIC_RELAXED);
    pthread_mutex_unlock(&threads_lock);
    return n;
}

int64_t tg_live_tensors(void)
{
    return count_sum(offsetof(thread_state, tensors), &exited_tensors);
}
int64_t tg_live_storages(void)
{
    return count_sum(offsetof(thread_state, storages), &exited_storages);
}

/* ------------------------------------------------------------------ blocks */

static __attribute__((noinline)) tblock *block_alloc_slow(void)
{
    return aligned_alloc(64, sizeof(tblock));
}

static inline tblock *block_alloc(thread_state *me)
{
    tblock *b = me->free_blocks;
    if (!QUARANTINE && TG__LIKELY(b != NULL)) {
        UNPOISON(b, sizeof *b);
        me->free_blocks = (tblock *)b->t.storage;
        me->nfree--;
        return b;
    }
    return block_alloc_slow();
}

/* The debug builds' block_free: b joins the quarantine (never reused), whose oldest block goes
 * back to malloc when it holds more than BLOCK_CACHE_MAX. */
static void quarantine_add(thread_state *me, tblock *b)
{
    if (TG__UNLIKELY(!me->registered)) thread_register();
    b->t.storage = NULL;
    POISON(b, sizeof *b);
    if (me->free_newest) me->free_newest->t.storage = (tg_storage *)b;
    else me->free_blocks = b;
    me->free_newest = b;
    if (++me->nfree > BLOCK_CACHE_MAX) {
        tblock *old = me->free_blocks;
        me->free_blocks = (tblock *)old->t.storage;
        me->nfree--;
        UNPOISON(old, sizeof *old);
        free(old);
    }
}

static inline void block_free(thread_state *me, tblock *b)
{
    if (QUARANTINE) {
        quarantine_add(me, b);
        return;
    }
    if (TG__LIKELY(me->nfree < BLOCK_CACHE_MAX)) {
        if (TG__UNLIKELY(!me->registered)) thread_register();
        b->t.storage = (tg_storage *)me->free_blocks;
        POISON(b, sizeof *b);
        me->free_blocks = b;
        me->nfree++;
        return;
    }
    free(b);
}

static inline void block_owner_release(thread_state *me, tblock *b)
{
    if (tg__ref_dec(&b->owners)) block_free(me, b);
}

/* ------------------------------------------------------------------ what rooms above register
 * Core never calls autograd or the profiler by name (as it never calls a device backend):
 * they register what core must call, as devices register their hooks (device.c). */

/* Frees a tensor's autograd meta when the tensor dies. Registered by autograd (meta.c) before
 * it makes the first meta: a tensor with a meta always finds it set. */
static void (*autograd_meta_free)(struct tg_autograd_meta *m);

void tg__register_autograd_meta_free(void (*fn)(struct tg_autograd_meta *m))
{
    __atomic_store_n(&autograd_meta_free, fn, __ATOMIC_RELEASE);
}

/* Tensor memory for an observer (the profiler's .profile_memory): every storage's bytes, the
 * ones inside a tensor's block included, when they are made and when they go. External memory
 * is the caller's and is not counted. The profiler sets the observer while a session records
 * memory and clears it when the session stops; unset, this is one load and a branch. */
static tg__memory_observer memory_observer;

void tg__set_memory_observer(tg__memory_observer fn)
{
    __atomic_store_n(&memory_observer, fn, __ATOMIC_RELAXED);
}

static inline tg__memory_observer memory_observed(void)
{
    return __atomic_load_n(&memory_observer, __ATOMIC_RELAXED);
}
static inline void report_memory(int64_t nbytes, tg_device device)
{
    tg__memory_observer fn = memory_observed();
    if (TG__UNLIKELY(fn != NULL) && nbytes) fn(nbytes, device);
}

/* ------------------------------------------------------------------ storages */

static inline void storage_free_data(tg_storage *s)
{
    if (TG__UNLIKELY(memory_observed() != NULL) &&
        (s->alloc_kind & TG__DATA_MASK) != TG__DATA_EXTERNAL)
        report_memory(-(int64_t)s->nbytes, s->device);
    switch (s->alloc_kind & TG__DATA_MASK) {
    case TG__DATA_CPU: tg__cpu_free(s->data, s->nbytes); break;
    case TG__DATA_DEVICE: {
        const tg_device_hooks *a = tg__device_hooks((tg_device_type)s->device.type);
        if (a) a->free(s->data, s->nbytes, s->device);
        break;
    }
    case TG__DATA_EXTERNAL:
        if (s->deleter) s->deleter(s->data, s->deleter_ctx);
        break;
    default: break;
    }
}

/* Allocates nbytes for s (not inline); 0 or -1 with an out-of-memory error. */
static int storage_alloc_data(const char *op, tg_storage *s, size_t nbytes, tg_device dev)
{
    s->nbytes = nbytes;
    s->device = dev;
    s->owns_data = true;
    s->deleter = NULL;
    s->deleter_ctx = NULL;
    if (dev.type == TG_CPU) {
        s->alloc_kind = (s->alloc_kind & ~TG__DATA_MASK) | TG__DATA_CPU;
        s->data = tg__cpu_alloc(nbytes);
        if (!s->data)
            return tg__fail(
                op, "DefaultCPUAllocator: not enough memory: you tried to allocate %zu bytes.",
                nbytes);
        report_memory((int64_t)nbytes, dev);
        return 0;
    }
    const tg_device_hooks *a = tg__device_hooks((tg_device_type)dev.type);
    if (!a && dev.type == TG_CUDA && tg__cuda_backend_load()) a = tg__device_hooks(TG_CUDA);
    if (!a && dev.type == TG_CUDA)
        return tg__fail(op, "CUDA is not available: %s", tg__cuda_backend_missing());
    if (!a) return tg__fail(op, "no backend is registered for device type %d", dev.type);
    s->alloc_kind = (s->alloc_kind & ~TG__DATA_MASK) | TG__DATA_DEVICE;
    /* The allocator usually records its own error naming op ("CUDA out of memory. Tried to
     * allocate ...", "CUDA error: no CUDA-capable device is detected"): the first one wins. */
    s->data = a->alloc(op, nbytes, dev);
    if (!s->data)
        return tg__fail(op, "out of memory on device %s:%d. Tried to allocate %zu bytes.",
                        tg__device_type_name((tg_device_type)dev.type), dev.index, nbytes);
    report_memory((int64_t)nbytes, dev);
    return 0;
}

void tg__storage_retain(tg_storage *s)
{
    if (s) tg__ref_inc(&s->refcount);
}

void tg__storage_release(tg_storage *s)
{
    if (!s || !tg__ref_dec(&s->refcount)) return;
    thread_state *me = TG__TLS_ADDR(ts);
    storage_free_data(s);
    count_add(me, &me->storages, -1);
    if (s->alloc_kind & TG__STORAGE_EMBEDDED) block_owner_release(me, BLOCK_OF_STORAGE(s));
    else free(s);
}

/* ------------------------------------------------------------------ tensor lifetime */

tg_tensor *tg_retain(tg_tensor *t)
{
    if (t) tg__ref_inc(&t->refcount);
    return t;
}

static void tensor_destroy(tg_tensor *t)
{
    tblock *b = (tblock *)t;
    tg_storage *s = t->storage;
    tg_tensor *base = t->view_base;
    thread_state *me = TG__TLS_ADDR(ts);
    __atomic_store_n(&t->refcount, 0, __ATOMIC_RELAXED); /* dead: see tg_release */
    if (t->autograd) __atomic_load_n(&autograd_meta_free, __ATOMIC_ACQUIRE)(t->autograd);
    count_add(me, &me->tensors, -1);
    if (s == &b->s) {
        if (tg__ref_dec(&s->refcount)) {
            /* Tensor and its own storage die together: we held every owner of the block. */
            storage_free_data(s);
            count_add(me, &me->storages, -1);
            block_free(me, b);
        } else {
            block_owner_release(me, b);
        }
    } else {
        tg__storage_release(s);
        block_owner_release(me, b);
    }
    if (base) tg_release(base);
}

/* "the float32 [2, 3] tensor made by add", for messages about t, which may be dead (its
 * fields are then read from a quarantined block, where the sanitizer build poisoned them). */
char *tg__describe(char *buf, size_t cap, const tg_tensor *t)
{
    bool poisoned = IS_POISONED(&t->ndim);
    if (poisoned) UNPOISON(t, sizeof *t);
    char shape[256];
    int64_t nd = t->ndim >= 0 && t->ndim <= TG_MAX_DIMS ? t->ndim : 0;
    snprintf(buf, cap, "the %s %s tensor made by %s",
             t->dtype >= 0 && t->dtype < TG_NUM_DTYPES ? tg_dtype_name(t->dtype) : "?",
             tg__shape_str(shape, sizeof shape, t->sizes, nd), t->made_by ? t->made_by : "?");
    if (poisoned) POISON(t, sizeof *t);
    return buf;
}

/* tg_release's misuse path, out of line: reports and leaves the memory as it is. */
static __attribute__((noinline, cold)) void release_misuse(const tg_tensor *t, int64_t refcount)
{
    char what[384];
    tg__describe(what, sizeof what, t);
    if (refcount <= 0)
        tg__misuse("release", "double release of %s: it was freed already; ignored", what);
    else
        tg__misuse("release",
                   "%s belongs to an open scope, not to the caller, who holds no reference "
                   "of its own; ignored (tg_scope_end releases it; tg_scope_keep keeps it)",
                   what);
}

static inline int release(tg_tensor *t)
{
    if (!t) return 0;
    int64_t rc = __atomic_load_n(&t->refcount, __ATOMIC_ACQUIRE);
    /* One compare on the line of refcount catches both misuses: a dead tensor (0) and one
     * whose every reference is a scope's. */
    if (TG__UNLIKELY(rc <= __atomic_load_n(&t->scope_refs, __ATOMIC_RELAXED))) {
        release_misuse(t, rc);
        return -1;
    }
    /* tg__ref_dec with the count already loaded: a sole owner needs no atomic decrement. */
    if (rc == 1 || __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) == 0) tensor_destroy(t);
    return 0;
}

void tg_release(tg_tensor *t) { release(t); }
int tg__release(tg_tensor *t) { return release(t); }

/* A header with every field set except geometry, storage and version; `op` made it. */
static inline tg_tensor *header_new(thread_state *me, tblock *b, const char *op, tg_dtype dtype,
                                    tg_device dev)
{
    tg_tensor *t = &b->t;
    t->refcount = 1;
    t->scope_refs = 0;
    t->made_by = op;
    t->storage_offset = 0;
    t->dtype = dtype;
    t->device = dev;
    t->is_wrapped_number = false;
    t->requires_grad = false;
    t->fw_dual = false;
    t->view_base = NULL;
    t->autograd = NULL;
    b->owners = 1;
    count_add(me, &me->tensors, 1);
    return t;
}

/* The error half of check_shape, out of line so the check itself stays small. */
static __attribute__((noinline, cold)) int shape_error(const char *op, const int64_t *sizes,
                                                       int64_t ndim, tg_dtype dtype)
{
    char buf[256];
    if (ndim < 0 || ndim > TG_MAX_DIMS)
        tg__error(op, "tensors may have at most %d dimensions, got %lld", TG_MAX_DIMS,
                  (long long)ndim);
    else if (dtype < 0 || dtype >= TG_NUM_DTYPES) tg__error(op, "invalid dtype %d", (int)dtype);
    for (int64_t i = 0; i < ndim && i < TG_MAX_DIMS; i++) {
        if (sizes[i] < 0)
            return tg__fail(op, "Trying to create tensor with negative dimension %lld: %s",
                            (long long)sizes[i], tg__shape_str(buf, sizeof buf, sizes, ndim));
    }
    return tg__fail(op, "the number of elements of a tensor of shape %s overflows int64",
                    tg__shape_str(buf, sizeof buf, sizes, ndim));
}

static inline int check_shape(const char *op, const int64_t *sizes, int64_t ndim, tg_dtype dtype,
                              size_t *nbytes_out, int64_t *numel_out)
{
    if (TG__UNLIKELY(ndim < 0 || ndim > TG_MAX_DIMS || dtype < 0 || dtype >= TG_NUM_DTYPES))
        return shape_error(op, sizes, ndim, dtype);
    uint64_t numel = 1, nbytes = 0;
    bool bad = false;
    for (int64_t i = 0; i < ndim; i++) /* a negative size becomes huge: overflow or > max */
        bad |= sizes[i] < 0 || __builtin_mul_overflow(numel, (uint64_t)sizes[i], &numel);
    bad |= numel > INT64_MAX ||
           __builtin_mul_overflow(numel, (uint64_t)tg__dtype_sizes[dtype], &nbytes);
    if (TG__UNLIKELY(bad)) return shape_error(op, sizes, ndim, dtype);
    *nbytes_out = (size_t)nbytes;
    *numel_out = (int64_t)numel;
    return 0;
}

static inline void set_contiguous_geometry(tg_tensor *t, const int64_t *sizes, int64_t ndim)
{
    int64_t st = 1;
    t->ndim = ndim;
    for (int64_t i = ndim - 1; i >= 0; i--) {
        t->sizes[i] = sizes[i];
        t->strides[i] = st;
        st *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

/* The tensor of a fresh block whose embedded storage s is ready: contiguous geometry, the
 * block's own version counter, and both owners of the block (the tensor and its storage). */
static tg_tensor *block_tensor(thread_state *me, tblock *b, const char *op, tg_dtype dtype,
                               tg_device device, const int64_t *sizes, int64_t ndim)
{
    tg_tensor *t = header_new(me, b, op, dtype, device);
    b->owners = 2;
    b->version = 0;
    t->version = &b->version;
    t->storage = &b->s;
    set_contiguous_geometry(t, sizes, ndim);
    count_add(me, &me->storages, 1);
    return t;
}

tg_tensor *tg__empty(const char *op, const int64_t *sizes, int64_t ndim, tg_dtype dtype,
                     tg_device device)
{
    size_t nbytes = 0;
    int64_t numel = 0;
    if (check_shape(op, sizes, ndim, dtype, &nbytes, &numel)) return NULL;
    thread_state *me = TG__TLS_ADDR(ts);
    tblock *b = block_alloc(me);
    if (!b) return tg__error(op, "out of memory allocating a tensor header");
    tg_storage *s = &b->s;
    s->refcount = 1;
    s->alloc_kind = TG__STORAGE_EMBEDDED;
    if (nbytes <= INLINE_BYTES && device.type == TG_CPU) {
        s->data = b->inline_data;
        s->nbytes = nbytes;
        s->device = device;
        s->owns_data = true;
        s->deleter = NULL;
        s->deleter_ctx = NULL;
        report_memory((int64_t)nbytes, device);
    } else if (storage_alloc_data(op, s, nbytes, device)) {
        block_free(me, b);
        return NULL;
    }
    return block_tensor(me, b, op, dtype, device, sizes, ndim);
}

tg_tensor *tg__empty_like(const char *op, const tg_tensor *t, tg_dtype dtype)
{
    if (!t) return NULL;
    return tg__empty(op, t->sizes, t->ndim, dtype == TG_DTYPE_NONE ? t->dtype : dtype, t->device);
}

/* A base tensor's version cell lives in its block next to the embedded storage, and that
 * block outlives the tensor while the storage is referenced; so a view that holds only the
 * storage keeps the cell valid. False for a base whose storage was replaced (an out= resize
 * reallocates it), whose cell then lives with the tensor alone. */
static bool version_lives_with_storage(const tg_tensor *t)
{
    return (const char *)t->version == (const char *)t->storage + sizeof(tg_storage);
}

tg_tensor *tg__alias_without_owner(tg_tensor *t)
{
    if (!t) return NULL;
    if (!t->view_base && !version_lives_with_storage(t)) return NULL;
    tg_tensor *v = tg__make_view(t, t->sizes, t->strides, t->ndim, t->storage_offset);
    if (v && v->view_base == t) { /* t is a base: the storage alone keeps the cell */
        v->view_base = NULL;
        tg_release(t);
    }
    return v;
}

tg_tensor *tg__make_view(const tg_tensor *t, const int64_t *sizes, const int64_t *strides,
                         int64_t ndim, int64_t storage_offset)
{
    if (!t) return NULL;
    if (ndim < 0 || ndim > TG_MAX_DIMS)
        return tg__error("view", "tensors may have at most %d dimensions, got %lld", TG_MAX_DIMS,
                         (long long)ndim);
    thread_state *me = TG__TLS_ADDR(ts);
    tblock *b = block_alloc(me);
    if (!b) return tg__error("view", "out of memory allocating a tensor header");
    tg_tensor *v = header_new(me, b, "view", t->dtype, t->device);
    tg_tensor *root = t->view_base ? t->view_base : (tg_tensor *)t;
    v->storage = t->storage;
    tg__storage_retain(t->storage);
    v->view_base = tg_retain(root);
    v->version = t->version;
    v->storage_offset = storage_offset;
    v->ndim = ndim;
    for (int64_t i = 0; i < ndim; i++) {
        v->sizes[i] = sizes[i];
        v->strides[i] = strides[i];
    }
    return v;
}

tg_tensor *tg__scalar_tensor(double v, tg_dtype dtype, tg_device device)
{
    tg_tensor *t = tg__empty("scalar_tensor", NULL, 0, dtype, TG_DEVICE_CPU);
    if (!t) return NULL;
    tg__store_double(tg_tensor_data(t), dtype, v);
    if (device.type == TG_CPU) return t;
    tg_tensor *d = tg__empty("scalar_tensor", NULL, 0, dtype, device);
    const tg_device_hooks *a = tg__device_hooks((tg_device_type)device.type);
    if (d && a &&
        a->copy(tg_tensor_data(d), device, tg_tensor_data(t), TG_DEVICE_CPU,
                tg_dtype_size(dtype)) != 0) {
        tg_release(d);
        d = NULL;
    }
    tg_release(t);
    return d;
}

tg_tensor *tg__wrapped_scalar(double v, bool is_integral)
{
    tg_tensor *t;
    if (is_integral && v >= -9223372036854775808.0 && v < 9223372036854775808.0) {
        t = tg__empty("wrapped_scalar", NULL, 0, TG_INT64, TG_DEVICE_CPU);
        if (t) *(int64_t *)tg_tensor_data(t) = (int64_t)v;
    } else {
        t = tg__empty("wrapped_scalar", NULL, 0, TG_FLOAT64, TG_DEVICE_CPU);
        if (t) *(double *)tg_tensor_data(t) = v;
    }
    if (t) t->is_wrapped_number = true;
    return t;
}

tg_tensor *tg_wrap_scalar(double v) { return tg__wrapped_scalar(v, isfinite(v) && v == trunc(v)); }

tg_tensor *tg_tensor_from_data(const void *data, const int64_t *sizes, int64_t ndim, tg_dtype dtype)
{
    tg_tensor *t = tg__empty("tensor_from_data", sizes, ndim, dtype, TG_DEVICE_CPU);
    if (!t) return NULL;
    if (data && t->storage->nbytes) memcpy(t->storage->data, data, t->storage->nbytes);
    return tg_scope_track(t);
}

tg_tensor *tg_tensor_from_blob(void *data, const int64_t *sizes, const int64_t *strides,
                               int64_t ndim, tg_dtype dtype, void (*deleter)(void *data, void *ctx),
                               void *ctx)
{
    const char *op = "tensor_from_blob";
    size_t nbytes = 0;
    int64_t numel = 0;
    if (check_shape(op, sizes, ndim, dtype, &nbytes, &numel)) return NULL;
    int64_t span = numel ? 1 : 0; /* elements from data[0] to the furthest one */
    if (strides) {
        for (int64_t i = 0; i < ndim; i++) {
            if (strides[i] < 0) return tg__error(op, "negative strides are not supported");
            if (numel) span += (sizes[i] - 1) * strides[i];
        }
    } else {
        span = numel;
    }
    if (!data && span) return tg__error(op, "data is NULL");
    thread_state *me = TG__TLS_ADDR(ts);
    tblock *b = block_alloc(me);
    if (!b) return tg__error(op, "out of memory allocating a tensor header");
    tg_storage *s = &b->s;
    s->refcount = 1;
    s->alloc_kind = TG__STORAGE_EMBEDDED | TG__DATA_EXTERNAL;
    s->data = data;
    s->nbytes = (size_t)span * tg__dtype_sizes[dtype];
    s->device = TG_DEVICE_CPU;
    s->owns_data = false;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    tg_tensor *t = block_tensor(me, b, op, dtype, TG_DEVICE_CPU, sizes, ndim);
    if (strides)
        for (int64_t i = 0; i < ndim; i++) t->strides[i] = strides[i];
    return tg_scope_track(t);
}

/* ------------------------------------------------------------------ metadata */

int64_t tg_tensor_dim(const tg_tensor *t) { return t ? t->ndim : 0; }

int64_t tg_tensor_size(const tg_tensor *t, int64_t d)
{
    if (!t) return -1;
    int64_t w = tg__wrap_dim("size", d, t->ndim);
    if (w < 0) return -1;
    return t->ndim ? t->sizes[w] : 1;
}

int64_t tg_tensor_stride(const tg_tensor *t, int64_t d)
{
    if (!t) return -1;
    int64_t w = tg__wrap_dim("stride", d, t->ndim);
    if (w < 0) return -1;
    return t->ndim ? t->strides[w] : 1;
}

const int64_t *tg_tensor_sizes(const tg_tensor *t) { return t ? t->sizes : NULL; }
const int64_t *tg_tensor_strides(const tg_tensor *t) { return t ? t->strides : NULL; }
int64_t tg_tensor_storage_offset(const tg_tensor *t) { return t ? t->storage_offset : 0; }
tg_dtype tg_tensor_dtype(const tg_tensor *t) { return t ? t->dtype : TG_DTYPE_NONE; }
tg_device tg_tensor_device(const tg_tensor *t) { return t ? t->device : TG_DEVICE_UNSET; }

int64_t tg__numel(const tg_tensor *t)
{
    int64_t n = 1;
    for (int64_t i = 0; i < t->ndim; i++) n *= t->sizes[i];
    return n;
}
int64_t tg_tensor_numel(const tg_tensor *t) { return t ? tg__numel(t) : 0; }

/* PyTorch's rule: dims of size 1 may have any stride, and an empty tensor is contiguous. */
bool tg__is_contiguous(const tg_tensor *t)
{
    int64_t expected = 1;
    for (int64_t i = t->ndim - 1; i >= 0; i--) {
        int64_t sz = t->sizes[i];
        if (sz == 0) return true;
        if (sz != 1) {
            if (t->strides[i] != expected) {
                for (int64_t j = 0; j < i; j++)
                    if (t->sizes[j] == 0) return true;
                return false;
            }
            expected *= sz;
        }
    }
    return true;
}
bool tg_tensor_is_contiguous(const tg_tensor *t) { return t ? tg__is_contiguous(t) : false; }

void *tg_tensor_data(const tg_tensor *t)
{
    if (!t || !t->storage || !t->storage->data) return NULL;
    return (char *)t->storage->data + t->storage_offset * (int64_t)tg__dtype_sizes[t->dtype];
}

void tg__bump_version(tg_tensor *t)
{
    if (t && t->version) __atomic_add_fetch(t->version, 1, __ATOMIC_RELAXED);
}

int64_t tg__version(const tg_tensor *t)
{
    return t && t->version ? __atomic_load_n(t->version, __ATOMIC_RELAXED) : 0;
}

int64_t tg__wrap_dim(const char *op, int64_t dim, int64_t ndim)
{
    int64_t n = ndim > 0 ? ndim : 1; /* a 0-dim tensor accepts -1 and 0 */
    if (dim < -n || dim >= n)
        return tg__fail(
            op, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
            (long long)-n, (long long)(n - 1), (long long)dim);
    return dim < 0 ? dim + n : dim;
}

int tg__resize_out(const char *op, tg_tensor *out, const int64_t *sizes, int64_t ndim)
{
    if (!out) return -1;
    bool same = out->ndim == ndim;
    for (int64_t i = 0; same && i < ndim; i++) same = out->sizes[i] == sizes[i];
    if (same) return 0;
    if (tg__numel(out) != 0) {
        char a[256], b[256];
        return tg__fail(op,
                        "output with shape %s doesn't match the required output shape %s "
                        "(out= tensors are resized only when they have no elements)",
                        tg__shape_str(a, sizeof a, out->sizes, out->ndim),
                        tg__shape_str(b, sizeof b, sizes, ndim));
    }
    size_t nbytes = 0;
    int64_t numel = 0;
    if (check_shape(op, sizes, ndim, out->dtype, &nbytes, &numel)) return -1;
    if (nbytes > 0) {
        tg_storage *s = malloc(sizeof *s);
        if (!s) return tg__fail(op, "out of memory");
        s->refcount = 1;
        s->alloc_kind = 0;
        if (storage_alloc_data(op, s, nbytes, out->device)) {
            free(s);
            return -1;
        }
        thread_state *me = TG__TLS_ADDR(ts);
        count_add(me, &me->storages, 1);
        tg__storage_release(out->storage);
        out->storage = s;
    }
    out->storage_offset = 0;
    set_contiguous_geometry(out, sizes, ndim);
    return 0;
}

/* ------------------------------------------------------------------ element access */

/* Copies the bytes of t's storage that t can reach to host memory (for device tensors);
 * returns a malloc'd buffer and sets *base to t's element 0 inside it. */
static void *host_copy(const tg_tensor *t, const char **base)
{
    int64_t lo = 0, hi = 0; /* element offsets relative to element 0 */
    for (int64_t i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 0) return NULL;
        int64_t d = (t->sizes[i] - 1) * t->strides[i];
        if (d < 0) lo += d;
        else hi += d;
    }
    size_t es = tg__dtype_sizes[t->dtype];
    size_t n = (size_t)(hi - lo + 1) * es;
    const tg_device_hooks *a = tg__device_hooks((tg_device_type)t->device.type);
    char *buf = malloc(n);
    if (!buf) return tg__error("to_cpu", "out of memory");
    if (!a || a->copy(buf, TG_DEVICE_CPU, (const char *)tg_tensor_data(t) + lo * (int64_t)es,
                      t->device, n) != 0) {
        free(buf);
        return tg__error("to_cpu", "cannot copy from device %s",
                         tg__device_type_name((tg_device_type)t->device.type));
    }
    *base = buf - lo * (int64_t)es;
    return buf;
}

int tg_tensor_to_doubles(const tg_tensor *t, double *out, int64_t numel)
{
    const char *op = "to_doubles";
    if (!t) return -1;
    int64_t n = tg__numel(t);
    if (n != numel)
        return tg__fail(op, "the tensor has %lld elements but the buffer holds %lld", (long long)n,
                        (long long)numel);
    if (n == 0) return 0;
    const char *base = tg_tensor_data(t);
    void *buf = NULL;
    if (t->device.type != TG_CPU && !(buf = host_copy(t, &base))) return -1;
    size_t es = tg__dtype_sizes[t->dtype];
    int64_t idx[TG_MAX_DIMS] = { 0 };
    int64_t nd = t->ndim;
    int64_t off = 0; /* element offset of idx */
    for (int64_t k = 0; k < n; k++) {
        out[k] = tg__load_double(base + off * (int64_t)es, t->dtype);
        for (int64_t d = nd - 1; d >= 0; d--) { /* odometer, last dim fastest */
            if (++idx[d] < t->sizes[d]) {
                off += t->strides[d];
                break;
            }
            off -= (idx[d] - 1) * t->strides[d];
            idx[d] = 0;
        }
    }
    free(buf);
    return 0;
}

double tg_item(const tg_tensor *t)
{
    if (!t) return NAN;
    int64_t n = tg__numel(t);
    if (n != 1) {
        tg__error("item", "a Tensor with %lld elements cannot be converted to Scalar",
                  (long long)n);
        return NAN;
    }
    double v;
    if (tg_tensor_to_doubles(t, &v, 1)) return NAN;
    return v;
}

/* ------------------------------------------------------------------ autograd fields */

bool tg_tensor_requires_grad(const tg_tensor *t) { return t && t->requires_grad; }

tg_tensor *tg_tensor_set_requires_grad(tg_tensor *t, bool requires_grad)
{
    if (!t) return NULL;
    if (requires_grad && !tg__is_float(t->dtype)) {
        tg__error("requires_grad_", "only Tensors of floating point and complex dtype can "
                                    "require gradients");
        return t;
    }
    t->requires_grad = requires_grad;
    return t;
}
