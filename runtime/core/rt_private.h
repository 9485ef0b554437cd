/* Private to the runtime: helpers shared by the files of every room (core, dispatch, autograd,
 * cuda) that neither kernels nor generated code should see. */
#ifndef TG_CORE_RT_PRIVATE_H
#define TG_CORE_RT_PRIVATE_H

#include "core/core.h"

/* Thread-locals (errors, grad mode, excluded keys, scopes, node caches) are plain
 * _Thread_local. The library is built with TLS descriptors (-mtls-dialect=gnu2 on x86-64, the
 * default on aarch64; Makefile): an access is one indirect call returning the variable's offset,
 * where the traditional -fPIC model calls __tls_get_addr. The initial-exec model, faster still,
 * is not used: it marks the library STATIC_TLS, and glibc then refuses to dlopen it once its TLS
 * (about 2.7 KB) exceeds the small static reserve ("cannot allocate memory in static TLS
 * block"), which is how every language binding loads a library. */

/* The address of thread-local `var`, computed once: in the shared library each access to a
 * thread-local is a call through its TLS descriptor, and GCC recomputes the address at every
 * use rather than keep it in a register (tg__empty made five such calls, a 1-element tg_add
 * thirteen). The empty asm makes the pointer opaque, so a hot function that takes it once
 * pays one call. A thread's thread-locals do not move while it runs. */
#define TG__TLS_ADDR(var)                      \
    __extension__({                            \
        __typeof__(&(var)) tg__tls_p = &(var); \
        __asm__("" : "+r"(tg__tls_p));         \
        tg__tls_p;                             \
    })

#define TG__LIKELY(x) __builtin_expect(!!(x), 1)
#define TG__UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Reference counts: a sole owner (count 1) releases without an atomic read-modify-write,
 * since no other thread can hold a reference to increment from. Returns true when the
 * caller dropped the last reference. */
static inline bool tg__ref_dec(int64_t *rc)
{
    if (__atomic_load_n(rc, __ATOMIC_ACQUIRE) == 1) return true;
    return __atomic_sub_fetch(rc, 1, __ATOMIC_ACQ_REL) == 0;
}
static inline void tg__ref_inc(int64_t *rc) { __atomic_add_fetch(rc, 1, __ATOMIC_RELAXED); }

/* tensor.c: what the rooms above core register, so that core never calls them by name (as
 * device backends register their hooks, device.c). Autograd registers how a dying tensor's
 * autograd meta is freed (autograd/meta.c); the profiler sets an observer of tensor memory
 * while a session records memory (nbytes > 0 allocated, < 0 freed), and NULL when it stops. */
void tg__register_autograd_meta_free(void (*fn)(struct tg_autograd_meta *m));
typedef void (*tg__memory_observer)(int64_t nbytes, tg_device device);
void tg__set_memory_observer(tg__memory_observer fn);

/* tensor.c: tg_release that says whether it released (0) or refused a misuse (-1, reported:
 * a double release, or a reference only a scope holds). */
int tg__release(tg_tensor *t);
/* "the float32 [2, 3] tensor made by add" into buf, for messages; t may be dead. */
char *tg__describe(char *buf, size_t cap, const tg_tensor *t);
/* scope.c: whether an open scope of this thread recorded `array`, a Tensor[] result's array
 * (false while a kernel runs with the scope suspended). Scans the open scopes' entries. */
bool tg__scope_holds_array(const void *array);

/* dtype.c */
extern tg_dtype tg__default_dtype_value;
static inline bool tg__is_float(tg_dtype t)
{
    return t == TG_FLOAT16 || t == TG_BFLOAT16 || t == TG_FLOAT32 || t == TG_FLOAT64;
}
extern const uint8_t tg__dtype_sizes[TG_NUM_DTYPES];

/* grad_mode.c / dispatch.c */
extern _Thread_local bool tg__grad_enabled_tls;

/* tg__is_contiguous with the one- and zero-dim cases inline (the iterator's fast path). */
bool tg__is_contiguous(const tg_tensor *t);
static inline bool tg__is_contiguous_fast(const tg_tensor *t)
{
    if (t->ndim == 0) return true;
    if (t->ndim == 1) return t->strides[0] == 1 || t->sizes[0] <= 1;
    return tg__is_contiguous(t);
}

/* Whether sizes a (na dims) broadcast to sizes b (nb dims): PyTorch's is_expandable_to. */
static inline bool tg__expandable_to(const int64_t *a, int64_t na, const int64_t *b, int64_t nb)
{
    if (na > nb) return false;
    for (int64_t i = 1; i <= na; i++)
        if (a[na - i] != b[nb - i] && a[na - i] != 1) return false;
    return true;
}

/* copy_out.c: the conversion loop shared by tg__copy_into and iterator temporaries. */
void tg__convert_loop(char *dst, tg_dtype dt, int64_t dstride, const char *src, tg_dtype st,
                      int64_t sstride, int64_t n);

/* text_buf.c: a growable NUL-terminated string ({ 0 } is empty; the owner frees p). After an
 * allocation failure `oom` is set and appends do nothing. */
typedef struct tg__text_buf {
    char *p;
    size_t n, cap;
    bool oom;
} tg__text_buf;
void tg__text_put(tg__text_buf *b, const char *s, size_t n);
void tg__text_printf(tg__text_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* text_buf.c: grows the array *arr of *cap elements of `elem` bytes to hold `need` (its
 * capacity starting at `first` and doubling). false on out of memory (*arr is kept). */
bool tg__array_reserve(void **arr, int64_t *cap, int64_t need, size_t elem, int64_t first);

#endif
