/* runtime/core: the tensor and everything about it that needs no dispatcher: storage,
 * dtypes and promotion, errors, scopes, allocators and device hooks, the iterator, the
 * reduction planner, parallel loops, random numbers. Not installed.
 *
 * Who includes it: every kernel (kernels/cpu, kernels/cuda, kernels/composite, through the
 * generated per-operator kernel headers or directly), generated code, and the other runtime rooms
 * (dispatch/, autograd/, cuda/). Kernels use tensors, errors, the iterator and the
 * reduction planner, never the dispatcher or autograd (DESIGN.md). The runtime never names an
 * operator or a kernel. */
#ifndef TG_CORE_CORE_H
#define TG_CORE_CORE_H

#include "tg_core.h"
#include "tg_backend.h" /* tg_device_hooks, dispatch keys */
#include "tg_kernel.h"  /* tg_copy_to_out, tg_wrap_scalar, tg_tensor_copy */
#include <stdarg.h>

/* CUDA kernels (.cu, compiled as C++) include this header too. */
#ifdef __cplusplus
#define TG__ALIGNAS(n) alignas(n)
extern "C" {
#else
#define TG__ALIGNAS(n) _Alignas(n)
#endif

/* ------------------------------------------------------------------ storage and tensors */

/* Formats a shape PyTorch's way, "[3, 2]" ("[]" for 0-dim), into buf; returns buf. */
char *tg__shape_str(char *buf, size_t cap, const int64_t *sizes, int64_t ndim);
/* PyTorch's names for messages: "Float", "Long", "Bool", "Byte", "Half", ... */
const char *tg__dtype_torch_name(tg_dtype t);

/* A refcounted buffer shared by a tensor and all its views. */
typedef struct tg_storage {
    int64_t refcount; /* atomic */
    void *data;
    size_t nbytes;
    tg_device device;
    bool owns_data; /* false for tg_tensor_from_blob-style external memory */
    /* Runtime-private (tensor.c): where the struct and its bytes live, and the deleter of
     * external memory. Kernels never need these. */
    uint8_t alloc_kind; /* TG__STORAGE_* in tensor.c */
    void (*deleter)(void *data, void *ctx);
    void *deleter_ctx;
} tg_storage;

struct tg_autograd_meta; /* defined by runtime/autograd (autograd_private.h) */

struct tg_tensor {
    int64_t refcount; /* atomic; 0 once destroyed, so that tg_release sees a double release */
    /* How many of the references are held by open scopes (scope.c; atomic). tg_release
     * refuses to drop one when refcount <= scope_refs: the caller then holds none, and the
     * scope would release freed memory at its end. Next to refcount: one cache line. */
    int32_t scope_refs;
    tg_storage *storage;
    int64_t storage_offset; /* in elements */
    int64_t ndim;
    int64_t sizes[TG_MAX_DIMS];
    int64_t strides[TG_MAX_DIMS]; /* in elements */
    tg_dtype dtype;
    tg_device device;
    bool is_wrapped_number; /* a Scalar wrapped as a 0-dim tensor: weak in type promotion */
    bool requires_grad;
    bool fw_dual;         /* has had a forward-mode tangent (autograd/forward.c): dispatch
                           * sends its operators to their autograd kernels */
    int64_t *version;     /* shared by views of one base; heap cell, refcounted with base */
    tg_tensor *view_base; /* the tensor this one views (owned reference), or NULL */
    struct tg_autograd_meta *autograd; /* grad, grad_fn, hooks; NULL when unused */
    const char *made_by; /* the operator that made it ("view" for views), for messages */
};

/* New contiguous tensor (uninitialised) of the shape; NULL + error on bad shape or OOM.
 * `op` names the operator for error messages. */
tg_tensor *tg__empty(const char *op, const int64_t *sizes, int64_t ndim, tg_dtype dtype,
                     tg_device device);
tg_tensor *tg__empty_like(const char *op, const tg_tensor *t,
                          tg_dtype dtype); /* same shape, contiguous */
/* A view sharing t's storage and version counter with the given geometry. */
tg_tensor *tg__make_view(const tg_tensor *t, const int64_t *sizes, const int64_t *strides,
                         int64_t ndim, int64_t storage_offset);
/* A view of all of t (same storage and version counter) that does not keep t itself alive:
 * autograd saves its outputs this way, so output -> node -> saved output is no cycle. NULL
 * (no error) when t's version counter would not outlive t; the caller then copies. */
tg_tensor *tg__alias_without_owner(tg_tensor *t);
/* Wraps a Scalar as a 0-dim tensor: int64 when v is integral and `is_integral`, else float64;
 * bool for TG_BOOL. Marked as a wrapped number. */
tg_tensor *tg__scalar_tensor(double v, tg_dtype dtype, tg_device device);
tg_tensor *tg__wrapped_scalar(double v, bool is_integral);
bool tg__is_contiguous(const tg_tensor *t);
/* a and b have the same shape (dims and sizes; strides and dtypes may differ). */
static inline bool tg__same_sizes(const tg_tensor *a, const tg_tensor *b)
{
    if (a->ndim != b->ndim) return false;
    for (int64_t i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i]) return false;
    return true;
}
int64_t tg__numel(const tg_tensor *t);
/* Resizes `out` (an out= argument) to the given shape: allowed when it already has the shape,
 * or has zero elements (storage is reallocated). Otherwise an error naming `op`. */
int tg__resize_out(const char *op, tg_tensor *out, const int64_t *sizes, int64_t ndim);
/* Normalises a possibly negative dim against ndim (a 0-dim tensor accepts -1 and 0).
 * Returns -1 with "Dimension out of range (expected to be in range of [-2, 1], but got 3)". */
int64_t tg__wrap_dim(const char *op, int64_t dim, int64_t ndim);
void tg__bump_version(tg_tensor *t);     /* after an in-place write */
int64_t tg__version(const tg_tensor *t); /* the shared counter's value (autograd saves it) */
void tg__storage_retain(tg_storage *s);
void tg__storage_release(tg_storage *s);
/* Copies src into dst elementwise, broadcasting src to dst's shape and converting dtypes
 * (PyTorch's copy_ semantics, any strides, CPU). Bumps dst's version. 0 or -1 + error. */
int tg__copy_into(const char *op, tg_tensor *dst, const tg_tensor *src);
/* The fast case of a same-dtype copy where dst is a row-major matrix and src is laid out as
 * its transpose (a t() view of a contiguous matrix): copies in cache tiles and returns true
 * (without bumping dst's version), or returns false having done nothing. */
bool tg__copy_transposed_2d(tg_tensor *dst, const tg_tensor *src);
/* A contiguous tensor with t's values: a new reference to t itself when already contiguous,
 * else a copy. */
tg_tensor *tg__contiguous(const char *op, tg_tensor *t);
/* Element conversion helpers used by the reference paths (any dtype <-> double/int64). */
double tg__load_double(const void *p, tg_dtype t);
void tg__store_double(void *p, tg_dtype t, double v);
int64_t tg__load_int64(const void *p, tg_dtype t);
void tg__store_int64(void *p, tg_dtype t, int64_t v);
/* float16 / bfloat16 conversions (round to nearest even). */
float tg__half_to_float(uint16_t h);
uint16_t tg__float_to_half(float f);
float tg__bf16_to_float(uint16_t h);
uint16_t tg__float_to_bf16(float f);

/* ------------------------------------------------------------------ allocator */
/* 64-byte aligned CPU memory; freed blocks are cached by size class and reused. Thread-safe. */
void *tg__cpu_alloc(size_t nbytes);
void tg__cpu_free(void *p, size_t nbytes);
void tg__cpu_allocator_empty_cache(void);
/* Bytes currently held in the allocator's cache (freed, not yet returned to the system). */
size_t tg__cpu_allocator_cached_bytes(void);
/* ------------------------------------------------------------------ device hooks (device.c) */
/* A device other than the CPU plugs in at load time: its backend registers its hooks
 * (tg_device_hooks, tg_backend.h: memory and raw byte copies), its copy_ kernel the strided
 * copy. CUDA has a fixed device type (TG_CUDA) whose backend, libtensorgen_cuda, registers
 * with tg__register_device_hooks; backends registered at run time (tg_backend_register) get
 * types 2 to 7. tg__empty on a device without hooks fails with an error saying so. */
const tg_device_hooks *tg__device_hooks(tg_device_type type); /* NULL if none */
void tg__register_device_hooks(tg_device_type type, const tg_device_hooks *h);
/* Whether `type` names a device type (registered or not): CPU, CUDA or a backend slot. */
static inline bool tg__valid_device_type(int type)
{
    return type >= 0 && type <= TG_KEY_BACKEND_LAST;
}
/* The CUDA backend (cuda_backend.c): libtensorgen_cuda registers what the public tg_cuda_*
 * functions need when it loads; tg__cuda_backend_load loads it on first demand (once) and says
 * whether it is there, tg__cuda_backend_missing why not. */
typedef struct tg__cuda_backend {
    int (*device_count)(void); /* 0 without a driver or device; never an error */
    int (*synchronize)(void);  /* every device; 0, or -1 with an error */
    int64_t (*memory_stat)(int device, int which); /* 0 allocated, 1 reserved, 2 peak */
    void (*empty_cache)(void);
    void *(*stream)(int device); /* NULL with an error for a bad device */
} tg__cuda_backend;
void tg__register_cuda_backend(const tg__cuda_backend *b);
bool tg__cuda_backend_load(void);
const char *tg__cuda_backend_missing(void);

/* dst = src where both live on one device of the type: the strided, broadcasting, converting
 * copy (PyTorch's copy_), which only the device's kernels can do. 0, or -1 + error naming op.
 * tg__copy_into uses it for the device side of every copy that is not a contiguous byte copy. */
typedef int (*tg_device_copy_fn)(const char *op, tg_tensor *dst, const tg_tensor *src);
tg_device_copy_fn tg__device_copy(tg_device_type type); /* NULL if none */
void tg__register_device_copy(tg_device_type type, tg_device_copy_fn fn);
/* "cpu", "cuda", a backend's name: the device type's name in messages and printed devices. */
const char *tg__device_type_name(tg_device_type type);

/* ------------------------------------------------------------------ errors */
/* Records "<op>: <message>" as this thread's error unless one is already recorded (the first
 * error wins). Always returns NULL so kernels can `return tg__error(...)`. */
void *tg__error(const char *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *tg__verror(const char *op, const char *fmt, va_list ap);
/* tg__error for functions that return a status: records the error and is -1, so checks read
 * `if (bad) return tg__fail(op, ...);`. A macro, so that the compiler sees the -1 (callers'
 * flow analysis depends on it). */
#define tg__fail(...) ((void)tg__error(__VA_ARGS__), -1)
bool tg__has_error(void);
void tg__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tg__warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Misuse of the API that the library caught and ignored (a double release): recorded as the
 * thread's error, as "<op>: <message>", and also warned, since the call that misused returns
 * nothing to check and an earlier error may already be recorded. */
void tg__misuse(const char *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ CPU capability
 * Which per-capability build of the vector kernels runs (cpu_capability.c; the kernels' side
 * is kernels/cpu/cpu_cap.h). Chosen once, on first use; the order is "each includes the one
 * before". */
typedef enum tg_cpu_cap {
    TG_CPU_CAP_DEFAULT, /* baseline x86-64 (SSE2), or the portable C on other architectures */
    TG_CPU_CAP_AVX2,    /* AVX2 + FMA */
    TG_CPU_CAP_AVX512,  /* AVX-512 F, DQ, VL, BW */
    TG_CPU_CAP_COUNT
} tg_cpu_cap;
extern int tg__cpu_cap_value; /* -1 until chosen */
tg_cpu_cap tg__cpu_cap_slow(void);
static inline tg_cpu_cap tg__cpu_cap(void)
{
    int c = __atomic_load_n(&tg__cpu_cap_value, __ATOMIC_ACQUIRE);
    return c >= 0 ? (tg_cpu_cap)c : tg__cpu_cap_slow();
}

/* ------------------------------------------------------------------ type promotion */
/* PyTorch's result_type over operands: dimensioned tensors, zero-dim tensors and wrapped
 * numbers form three priority groups; a lower group changes the result only when it is of a
 * higher category (bool < integral < floating). TG_DTYPE_NONE stands for "undefined". */
typedef struct tg_result_type_state {
    tg_dtype dim, zero, wrapped;
} tg_result_type_state;
#define TG_RESULT_TYPE_INIT ((tg_result_type_state){ TG_DTYPE_NONE, TG_DTYPE_NONE, TG_DTYPE_NONE })
void tg__result_type_update(tg_result_type_state *s, const tg_tensor *t); /* NULL: skipped */
/* A Scalar argument without wrapping it: is_integral picks int64, else the default float. */
void tg__result_type_update_scalar(tg_result_type_state *s, double v, bool is_integral);
tg_dtype tg__result_type_finish(const tg_result_type_state *s);
tg_dtype tg__result_type(tg_tensor *const *ts, int n);

/* ------------------------------------------------------------------ iterator */
/* One broadcasting, type-promoting strided iteration (PyTorch's TensorIterator is the model).
 *
 * Operands: outputs first, then inputs. A NULL output is allocated with the broadcast shape
 * and the result dtype. After build, all operands share one shape of `ndim` dims, coalesced
 * and reordered so that dim 0 is the fastest-moving; `strides[op][d]` are in BYTES.
 * Inputs whose dtype differs from the common dtype are converted into temporaries by build
 * (or cast on the fly by the loop when TG_ITER_NO_INPUT_CAST is set), and an output whose
 * dtype differs from the computation dtype is computed into a temporary and copied back by
 * tg__iter_finish(). Kernels therefore see one dtype, `it->dtype`, for every operand unless
 * they opt out. */
#define TG_ITER_MAX_OPERANDS 8

typedef enum tg_iter_flags {
    TG_ITER_PROMOTE_INPUTS = 1 << 0,    /* compute in the promoted dtype of the inputs */
    TG_ITER_INT_TO_FLOAT = 1 << 1,      /* ... promoted further to the default float (div, exp) */
    TG_ITER_BOOL_OUTPUT = 1 << 2,       /* outputs are bool (comparisons) */
    TG_ITER_NO_BROADCAST_OUT = 1 << 3,  /* in-place: output shape may not grow */
    TG_ITER_NO_INPUT_CAST = 1 << 4,     /* kernel reads inputs in their own dtype */
    TG_ITER_KEEP_OUTPUT_DTYPE = 1 << 5, /* compute in the output's dtype (copy_, to) */
    /* Kernel writes each output in its own dtype (it->dtypes[i]): a given out= tensor of
     * another (castable) dtype is written directly instead of through a temporary copied back
     * by finish. CUDA kernels use it with TG_ITER_NO_INPUT_CAST, so they never need host-side
     * cast temporaries: they load it->dtypes[k], compute in it->dtype, store it->dtypes[i]. */
    TG_ITER_NO_OUTPUT_CAST = 1 << 6,
} tg_iter_flags;

typedef struct tg_iter {
    const char *op;
    int noutputs, ninputs, nops;
    tg_tensor *operands[TG_ITER_MAX_OPERANDS];     /* owned references (temporaries included) */
    tg_tensor *user_outputs[TG_ITER_MAX_OPERANDS]; /* where results go after finish */
    tg_dtype dtype;                                /* computation dtype (common dtype) */
    tg_dtype result_dtype;                         /* dtype of allocated outputs */
    int64_t shape[TG_MAX_DIMS];                    /* broadcast shape in the user's dim order */
    int64_t shape_ndim;
    int ndim;                                           /* after coalescing */
    int64_t sizes[TG_MAX_DIMS];                         /* coalesced, fastest first */
    int64_t strides[TG_ITER_MAX_OPERANDS][TG_MAX_DIMS]; /* bytes */
    char *data[TG_ITER_MAX_OPERANDS];                   /* base pointers */
    int64_t numel;
    bool is_contiguous; /* every operand contiguous in the same order: 1-D fast path */
    /* The dtype of the data data[k] points at: it->dtype except for inputs under
     * TG_ITER_NO_INPUT_CAST, outputs under TG_ITER_NO_OUTPUT_CAST and bool outputs under
     * TG_ITER_BOOL_OUTPUT. Under CUDA, data[k] of a CPU zero-dim input (allowed next to CUDA
     * operands) is a HOST pointer: read the value on the host and pass it by value. */
    tg_dtype dtypes[TG_ITER_MAX_OPERANDS];
    /* Runtime-private bookkeeping (iter.c). data[k] may point into scalar_buf, so a tg_iter
     * must not be copied by value after build. */
    uint32_t owned_operands;     /* bit k: operands[k] is an owned reference */
    uint32_t owned_user_outputs; /* bit k: user_outputs[k] was allocated by build */
    TG__ALIGNAS(16) unsigned char scalar_buf[TG_ITER_MAX_OPERANDS][16];
} tg_iter;

/* Builds the iteration. `outputs[i]` may be NULL (allocate). Returns 0, or -1 with an error
 * recorded (shape mismatch in PyTorch's words, unsafe cast to an out= dtype, ...). */
int tg__iter_build(tg_iter *it, const char *op, int flags, tg_tensor **outputs, int noutputs,
                   tg_tensor *const *inputs, int ninputs);
/* A 1-D inner loop over n elements: data[k] points at operand k's first element, strides[k]
 * is its step in bytes. `ctx` is the kernel's own closure. */
typedef void (*tg_iter_loop1d)(char **data, const int64_t *strides, int64_t n, void *ctx);
/* Runs `loop` over every element, splitting the range across OpenMP threads when numel is
 * above the grain size (32768). */
void tg__iter_for_each(tg_iter *it, tg_iter_loop1d loop, void *ctx);
/* Copies temporaries back into user outputs, returns output `i` as a new reference, and
 * releases everything the iterator holds. Call exactly once after a successful build. */
tg_tensor *tg__iter_finish(tg_iter *it, int i);
/* Like tg__iter_finish for every output: outs[i] receives output i as a new reference (all
 * NULL on a failed copy-back, with an error). For multi-output kernels. Returns 0 or -1. */
int tg__iter_finish_all(tg_iter *it, tg_tensor **outs);
/* Releases everything on an error path (after a successful build). */
void tg__iter_abort(tg_iter *it);

/* ------------------------------------------------------------------ reductions */
/* A reduction over `dims` (None/empty = all dims) of `self`: the output shape (with or without
 * kept dims) and a plan that views self as [outer, inner] where the reduced dims are "inner".
 * For each output element o (in the output's contiguous order), the reduced elements are at
 *   self_data + outer_offset(o) + inner offsets
 * Kernels iterate with tg__reduce_for_each, which hands each (output element, inner index set)
 * pair to the kernel as an inner loop over `inner_numel` elements with one stride when the
 * reduced dims coalesce to one, else via the general offset table. */
typedef struct tg_reduce_plan {
    const char *op;
    int64_t out_sizes[TG_MAX_DIMS];
    int64_t out_ndim;             /* user-facing output shape */
    bool reduce_dim[TG_MAX_DIMS]; /* per input dim */
    int64_t outer_numel, inner_numel;
    int outer_ndim, inner_ndim;
    int64_t outer_sizes[TG_MAX_DIMS], outer_strides[TG_MAX_DIMS]; /* input strides, elements */
    int64_t inner_sizes[TG_MAX_DIMS], inner_strides[TG_MAX_DIMS]; /* coalesced, fastest first */
} tg_reduce_plan;

/* dims may be NULL/ndims 0 meaning all. Errors for out-of-range or repeated dims ("dim 1
 * appears multiple times in the list of dims"). */
int tg__reduce_plan_make(tg_reduce_plan *p, const char *op, const tg_tensor *self,
                         const int64_t *dims, int64_t ndims, bool keepdim);
/* Element offset (in elements, from self's data pointer) of the first reduced element of
 * output element o, and of the j-th reduced element relative to it. */
int64_t tg__reduce_outer_offset(const tg_reduce_plan *p, int64_t o);
int64_t tg__reduce_inner_offset(const tg_reduce_plan *p, int64_t j);
/* Calls loop once per output element o (o in the output's contiguous order), splitting the
 * outputs across threads when the work is above the grain size. The reduced elements of o are
 * at (in elements, from self's data pointer)
 *   in_offset + (inner_offsets ? inner_offsets[j] : j * inner_stride),   j in [0, n)
 * with j running over the reduced dims in row-major order (so argmax's index is j).
 * inner_offsets is NULL when the reduced dims coalesce to one. Returns 0, or -1 + error. */
typedef void (*tg_reduce_loop)(int64_t o, int64_t in_offset, int64_t n, int64_t inner_stride,
                               const int64_t *inner_offsets, void *ctx);
int tg__reduce_for_each(const tg_reduce_plan *p, tg_reduce_loop loop, void *ctx);

/* ------------------------------------------------------------------ parallelism */
int64_t tg__grain_size(void); /* 32768 elements */
/* Runs fn(begin, end, ctx) over [0, n) in chunks across the intra-op OpenMP threads (serially
 * when n < grain or when already inside a parallel region). */
void tg__parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t b, int64_t e, void *ctx),
                      void *ctx);

/* ------------------------------------------------------------------ random numbers */
/* The CPU generator: xoshiro256** seeded through splitmix64, one stream per generator guarded
 * by a lock. (CUDA kernels draw from their own Philox4x32-10, kernels/cuda/philox.cuh.) */
tg_generator *tg__default_generator(void);
uint64_t tg__random_u64(tg_generator *g);   /* thread-safe */
double tg__random_uniform(tg_generator *g); /* [0, 1) */
double tg__random_normal(tg_generator *g);  /* N(0, 1) */
/* n draws under one lock (for kernels filling tensors; same stream as n single calls). */
void tg__random_u64_n(tg_generator *g, uint64_t *out, int64_t n);

#ifdef __cplusplus
}
#endif

#endif
