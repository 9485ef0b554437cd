/* tensorgen core types: tensors, dtypes, devices, lists, optionals, errors, scopes.
 * The operator functions themselves are generated (generated/tg_ops.h); include the umbrella
 * header <tensorgen.h> rather than this file. */
#ifndef TG_CORE_H
#define TG_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal: marks the static inline helpers of tensorgen's headers that a translation unit
 * may leave unused (compilers that warn about unused static inline functions stay quiet). */
#if defined(__GNUC__)
#define TG__UNUSED __attribute__((unused))
#else
#define TG__UNUSED
#endif

/* ---- dtypes, in PyTorch's promotion order within each category ---- */
typedef enum tg_dtype {
    TG_DTYPE_NONE = -1, /* "no dtype given" for ScalarType? arguments */
    TG_BOOL = 0,
    TG_UINT8,
    TG_INT8,
    TG_INT16,
    TG_INT32,
    TG_INT64,
    TG_FLOAT16,
    TG_BFLOAT16,
    TG_FLOAT32,
    TG_FLOAT64,
    TG_NUM_DTYPES
} tg_dtype;

const char *tg_dtype_name(tg_dtype t); /* "float32", ... */
size_t tg_dtype_size(tg_dtype t);      /* bytes per element */
bool tg_dtype_is_floating(tg_dtype t);
bool tg_dtype_is_integral(tg_dtype t, bool include_bool);
/* PyTorch's promote_types(a, b). */
tg_dtype tg_promote_types(tg_dtype a, tg_dtype b);
/* The default floating dtype (float32 unless changed). */
tg_dtype tg_get_default_dtype(void);
/* Sets the default floating dtype (float16, bfloat16, float32 or float64); process-wide.
 * Returns the previous one, or TG_DTYPE_NONE with an error for a non-floating dtype. */
tg_dtype tg_set_default_dtype(tg_dtype t);
/* PyTorch's can_cast(from, to): false for float -> integral and for non-bool -> bool. */
bool tg_can_cast(tg_dtype from, tg_dtype to);

/* Tensors have at most this many dimensions. */
#define TG_MAX_DIMS 16

/* ---- devices ---- */
typedef enum tg_device_type { TG_DEVICE_NONE = -1, TG_CPU = 0, TG_CUDA = 1 } tg_device_type;
typedef struct tg_device {
    int8_t type;
    int8_t index;
} tg_device;
#define TG_DEVICE_CPU ((tg_device){ TG_CPU, 0 })
#define TG_DEVICE_UNSET ((tg_device){ TG_DEVICE_NONE, -1 })
/* CUDA device i (0-based), e.g. tg_to_device(t, TG_DEVICE_CUDA(0)). */
#define TG_DEVICE_CUDA(i) ((tg_device){ TG_CUDA, (int8_t)(i) })
/* A device as PyTorch writes one: "cpu", "cuda" (device 0), "cuda:1", a registered backend's
 * "name" or "name:0". 0 and *out set, or -1 with an error ("unknown device 'tpu' (expected
 * cpu, cuda, cuda:N or a registered backend's name)"); whether the device exists is the
 * caller's to ask (tg_cuda_device_count). */
int tg_device_parse(const char *text, tg_device *out);

/* ---- CUDA (docs/cuda.md) ----
 * Present in every build. tg_cuda_is_built() says whether the library was compiled with the
 * CUDA backend (nvcc found at build time); without it, or without a GPU and driver, there are
 * no devices and creating a CUDA tensor fails with an error naming the operator ("empty: CUDA
 * error: no CUDA-capable device is detected"). Memory figures are per device, in bytes, as
 * the caching allocator counts them (sizes rounded up to its size classes). */
bool tg_cuda_is_built(void);
bool tg_cuda_is_available(void); /* at least one device */
int tg_cuda_device_count(void);
/* Waits for all work queued on every device. 0, or -1 with an error (a failed kernel reports
 * here at the latest, as in PyTorch). */
int tg_cuda_synchronize(void);
int64_t tg_cuda_memory_allocated(int device);     /* held by live tensors and workspaces */
int64_t tg_cuda_memory_reserved(int device);      /* obtained from the driver: live + cached */
int64_t tg_cuda_max_memory_allocated(int device); /* peak of memory_allocated */
/* Returns every cached (unused) block to the driver; live tensors are untouched. */
void tg_cuda_empty_cache(void);
/* The stream (a cudaStream_t) tensorgen's kernels run on for `device`: an operator library's
 * CUDA kernels launch on it, so that their work is ordered with tensorgen's. NULL with an error
 * when there is no such device. */
void *tg_cuda_stream(int device);

typedef enum tg_layout { TG_LAYOUT_NONE = -1, TG_STRIDED = 0 } tg_layout;
typedef enum tg_memory_format {
    TG_MEMORY_FORMAT_NONE = -1,
    TG_CONTIGUOUS_FORMAT = 0,
    TG_PRESERVE_FORMAT,
    TG_CHANNELS_LAST,
    TG_CHANNELS_LAST_3D
} tg_memory_format;

/* ---- tensors (opaque) ---- */
typedef struct tg_tensor tg_tensor;
typedef struct tg_generator tg_generator;

/* References: every function that returns a tg_tensor* returns a NEW reference owned by the
 * caller (by the open scope, inside tg_scope_begin/end: see "scopes" below); arguments are
 * borrowed. tg_release(NULL) is a no-op. Misuse is reported, not a crash (docs/c-api.md,
 * "What is detected"): releasing a tensor whose every reference is an open scope's, or one
 * that is already freed (until a new tensor reuses its memory; in a -DTG_DEBUG or sanitizer
 * build, while it is among the thread's last 256 freed), records an error naming the tensor
 * ("release: the float32 [2, 3] tensor made by add belongs to an open scope, ..."), warns,
 * and leaves the tensor alone. */
tg_tensor *tg_retain(tg_tensor *t);
void tg_release(tg_tensor *t);
/* "I do not need this reference", for a result one discards, typically of an in-place or out=
 * call: `if (tg_drop(tg_uniform_(w, -0.1, 0.1)) != 0) goto fail;`. Releases t when the caller
 * owns it (no scope open); inside an open scope, which owns every result, leaves it to the
 * scope. Returns 0, or -1 when t is NULL (the call failed: tg_last_error() says why) or the
 * release was refused as misuse (above). Use it right on a call's result: for a reference held
 * from before the scope opened, tg_release is the call. */
int tg_drop(tg_tensor *t);

int64_t tg_tensor_dim(const tg_tensor *t);
int64_t tg_tensor_size(const tg_tensor *t, int64_t d); /* negative d counts from the end */
int64_t tg_tensor_stride(const tg_tensor *t, int64_t d);
const int64_t *tg_tensor_sizes(const tg_tensor *t);
const int64_t *tg_tensor_strides(const tg_tensor *t);
int64_t tg_tensor_numel(const tg_tensor *t);
int64_t tg_tensor_storage_offset(const tg_tensor *t);
tg_dtype tg_tensor_dtype(const tg_tensor *t);
tg_device tg_tensor_device(const tg_tensor *t);
bool tg_tensor_is_contiguous(const tg_tensor *t);
/* Pointer to element [0,...,0] (storage data + offset); valid while t lives. For a tensor on
 * a device (CUDA, a registered backend) it is that device's address, for the device's kernels:
 * the host must not read it (tg_to_device(t, TG_DEVICE_CPU) first). */
void *tg_tensor_data(const tg_tensor *t);

/* Creates a contiguous CPU tensor of the given shape and dtype holding a copy of `data`
 * (numel elements of dtype; NULL data leaves it uninitialised). Returns a new reference. */
tg_tensor *tg_tensor_from_data(const void *data, const int64_t *sizes, int64_t ndim,
                               tg_dtype dtype);
/* Copies the tensor's elements (any strides) converted to double into out[numel]. */
int tg_tensor_to_doubles(const tg_tensor *t, double *out, int64_t numel);
/* The single element of a one-element tensor, as double. NaN and an error otherwise. */
double tg_item(const tg_tensor *t);
/* Wraps caller memory (CPU) without copying: sizes/strides in elements (strides NULL means
 * contiguous). `deleter(data, ctx)` runs when the last tensor or view using the memory dies
 * (NULL: the caller keeps ownership and must outlive the tensors). Returns a new reference. */
tg_tensor *tg_tensor_from_blob(void *data, const int64_t *sizes, const int64_t *strides,
                               int64_t ndim, tg_dtype dtype, void (*deleter)(void *data, void *ctx),
                               void *ctx);
/* Prints like PyTorch's repr: tensor([[1., 2.], ...], dtype=...). */
void tg_print(const tg_tensor *t);
/* The same text as tg_print (without the newline) in a malloc'd string the caller free()s;
 * NULL on error. */
char *tg_tensor_to_string(const tg_tensor *t);

bool tg_tensor_requires_grad(const tg_tensor *t);
tg_tensor *tg_tensor_set_requires_grad(tg_tensor *t, bool requires_grad); /* returns t */
tg_tensor *tg_tensor_grad(const tg_tensor *t); /* new reference or NULL */

/* ---- lists and optionals used by generated signatures ----
 * The C types of the schema types (which one each schema type takes, and how its None is
 * spelled, is the table dispatch/schema_types.h). */
/* An int list holds its length first: an option written with a plain number where a list
 * belongs (`.dim = 1`, `.stride = 2`) fills `len` and leaves `data` NULL, and the generated
 * function reads that as the number, repeated for int[N] (PyTorch's `stride=2` is [2, 2]),
 * instead of a NULL list (docs/c-api.md, "Options"). None is TG_NO_INTS, { TG_NONE_LEN, NULL };
 * a present list has a non-NULL `data`, even when empty (TG_INTS_EMPTY). */
#define TG_NONE_LEN INT64_MIN
/* What an options macro passes for an int list option with a default other than None; the
 * generated function puts the default in (a plain number given instead overrides only .len). */
#define TG__DEFAULT_LEN (INT64_MIN + 1)
typedef struct tg_int_list {
    int64_t len;
    const int64_t *data;
} tg_int_list;
typedef struct tg_tensor_list {
    tg_tensor *const *data;
    int64_t len;
} tg_tensor_list;
/* Optional numbers (int?, float? / Scalar?, bool?) are plain values, None being a value no
 * argument takes: `.dim = 1` means 1 and `.scale = 0.5` means 0.5, as in PyTorch, and an
 * option left out is None (docs/c-api.md, "Options", says why not { has_value, value }
 * structs: a plain number written into one compiled and meant something else).
 *   int?      int64_t, None is TG_NONE_INT (INT64_MIN)
 *   float?    double, None is TG_NONE_FLOAT (a NaN with a payload of its own: any other NaN,
 *             0.0 / 0.0 say, is a value); test with tg_is_none_float, not ==
 *   bool?     signed char, None is TG_NONE_BOOL (-1); true and false as usual */
typedef int64_t tg_opt_int;
typedef double tg_opt_float;
typedef signed char tg_opt_bool;
typedef tg_opt_float tg_opt_scalar;
#define TG_NONE_INT INT64_MIN
#define TG_NONE_FLOAT (__builtin_nan("0x7467"))
#define TG_NONE_BOOL ((tg_opt_bool)-1)
static inline bool tg_is_none_int(tg_opt_int v) { return v == TG_NONE_INT; }
static inline bool tg_is_none_float(tg_opt_float v)
{
    tg_opt_float none = TG_NONE_FLOAT;
    return memcmp(&v, &none, sizeof v) == 0;
}
static inline bool tg_is_none_bool(tg_opt_bool v) { return v == TG_NONE_BOOL; }
/* float[] and Scalar[] (values as double), bool[N], and str[] / Dimname[] (dimension names:
 * tensorgen has no named tensors, so a kernel receives the names as strings). An optional list
 * is None when .data is NULL, like tg_int_list. A Tensor?[] argument is a tg_tensor_list whose
 * elements may be NULL (None). */
typedef struct tg_float_list {
    const double *data;
    int64_t len;
} tg_float_list;
typedef struct tg_bool_list {
    const bool *data;
    int64_t len;
} tg_bool_list;
typedef struct tg_str_list {
    const char *const *data;
    int64_t len;
} tg_str_list;
/* Types tensorgen passes through without using them itself: a Storage argument is an opaque
 * tg_storage pointer, a ConstQuantizerPtr an opaque quantizer pointer, a Stream the id of a
 * stream (0: the device's default stream), a QScheme one of PyTorch's quantization schemes. */
typedef struct tg_storage tg_storage;
typedef struct tg_quantizer tg_quantizer;
typedef int64_t tg_stream;
typedef enum tg_quant_scheme {
    TG_QSCHEME_NONE = -1, /* "no scheme given" for QScheme? and the error value */
    TG_PER_TENSOR_AFFINE = 0,
    TG_PER_CHANNEL_AFFINE,
    TG_PER_TENSOR_SYMMETRIC,
    TG_PER_CHANNEL_SYMMETRIC,
    TG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS
} tg_quant_scheme;

/* A Tensor[] result (tg_split, tg_unbind, tg_chunk, ...) is a tg_tensor_list whose `data`
 * array is heap memory owned by the caller together with a new reference to each element;
 * `data` is never NULL on success (an empty result has len 0), and an error gives
 * { NULL, 0 }. Outside a scope, give it back with tg_tensor_list_release. Inside a scope the
 * scope owns the elements and the array (tg_scope_end frees both), like any result: do not
 * release it yourself, keep it with tg_scope_keep_list (or keep single elements with
 * tg_scope_keep, and the array is freed at the scope's end). */
void tg_tensor_list_release(tg_tensor_list l); /* elements and array; { NULL, 0 } is a no-op */
/* For a kernel returning Tensor[]: a zeroed array of n tensor slots (never NULL for n == 0, so
 * that an empty result differs from an error), or NULL with an error naming op. Fill it and
 * return (tg_tensor_list){ items, n }; on an error path tg_tensor_list_fail releases the slots
 * filled so far, frees the array and returns { NULL, 0 }. */
tg_tensor **tg_tensor_list_alloc(const char *op, int64_t n);
tg_tensor_list tg_tensor_list_fail(tg_tensor **items, int64_t n);
/* An int[] result is a tg_int_list whose `data` array is heap memory owned by the caller
 * (never NULL on success; { NULL, 0 } on error); scopes do not record it. */
void tg_int_list_release(tg_int_list l); /* frees the array; { NULL, 0 } is a no-op */

/* TG_INTS(1, 2) is a tg_int_list of two values; an optional int list is None when .data is
 * NULL (TG_NO_INTS); TG_INTS_EMPTY is the empty, present list (a zero-dim shape). */
#define TG_INTS(...)                                                                              \
    ((tg_int_list){ .len = (int64_t)(sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), \
                    .data = (const int64_t[]){ __VA_ARGS__ } })
#define TG_NO_INTS ((tg_int_list){ .len = TG_NONE_LEN, .data = NULL })
/* The empty, present lists point at these (each translation unit has its own: no symbol). */
static const int64_t tg__empty_int_list_storage[1] = { 0 };
static const double tg__empty_float_list_storage[1] = { 0 };
static const bool tg__empty_bool_list_storage[1] = { false };
static const char *const tg__empty_str_list_storage[1] = { NULL };
#define TG_INTS_EMPTY ((tg_int_list){ .len = 0, .data = tg__empty_int_list_storage })
#define TG_TENSORS(...)                      \
    ((tg_tensor_list){                       \
        (tg_tensor *const[]){ __VA_ARGS__ }, \
        (int64_t)(sizeof((tg_tensor *const[]){ __VA_ARGS__ }) / sizeof(tg_tensor *)) })
/* A Tensor[]? argument's None: TG_NO_TENSORS, whose length is TG_NONE_LEN (a tg_tensor_list
 * with a NULL .data and length 0 stays the empty, present list). */
#define TG_NO_TENSORS ((tg_tensor_list){ .data = NULL, .len = TG_NONE_LEN })
static inline bool tg_is_none_tensors(tg_tensor_list l) { return l.len == TG_NONE_LEN; }
/* The other lists alike: TG_FLOATS(0.5, 2.0), TG_BOOLS(true, false, true), TG_STRS("N", "C")
 * (TG_DIMNAMES for Dimname[]); TG_NO_* is None, TG_*_EMPTY the empty, present list. */
#define TG__LIST(list_type, elem_type, ...)     \
    ((list_type){ (elem_type[]){ __VA_ARGS__ }, \
                  (int64_t)(sizeof((elem_type[]){ __VA_ARGS__ }) / sizeof(elem_type)) })
#define TG_FLOATS(...) TG__LIST(tg_float_list, const double, __VA_ARGS__)
#define TG_BOOLS(...) TG__LIST(tg_bool_list, const bool, __VA_ARGS__)
#define TG_STRS(...) TG__LIST(tg_str_list, const char *const, __VA_ARGS__)
#define TG_DIMNAMES(...) TG_STRS(__VA_ARGS__)
#define TG_NO_FLOATS ((tg_float_list){ NULL, 0 })
#define TG_NO_BOOLS ((tg_bool_list){ NULL, 0 })
#define TG_NO_STRS ((tg_str_list){ NULL, 0 })
#define TG_FLOATS_EMPTY ((tg_float_list){ tg__empty_float_list_storage, 0 })
#define TG_BOOLS_EMPTY ((tg_bool_list){ tg__empty_bool_list_storage, 0 })
#define TG_STRS_EMPTY ((tg_str_list){ tg__empty_str_list_storage, 0 })

/* ---- errors ---- */
/* The first error recorded on this thread since the last tg_clear_error(), or NULL. The
 * message names the operator: "add: The size of tensor a (3) must match ...". */
const char *tg_last_error(void);
void tg_clear_error(void);
/* Records "<op>: <message>" as this thread's error, unless an error is already recorded (the
 * first one wins), and returns NULL, so that a kernel of an operator library can write
 * `return tg_set_error("nms", "boxes must be 2-D, got %d-D", d);`. */
void *tg_set_error(const char *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Warnings (e.g. deprecated behaviour) go to a callback; the default prints to stderr. */
typedef void (*tg_warning_handler)(const char *msg, void *user);
void tg_set_warning_handler(tg_warning_handler fn, void *user);

/* ---- scopes: free every tensor made inside at once ---- */
/* Tensors returned by operators while a scope is open are recorded in it; tg_scope_end()
 * releases the scope's reference to each, except those passed to tg_scope_keep(), which
 * move to the enclosing scope (or to the caller when there is none). Scopes nest. A recorded
 * reference is the scope's, not the caller's: do not tg_release it (that is reported and
 * ignored when the scope's references are all the tensor has); tg_retain one of your own, or
 * tg_scope_keep it, to use the tensor after the scope. */
void tg_scope_begin(void);
tg_tensor *tg_scope_keep(tg_tensor *t); /* returns t */
/* Keeps a Tensor[] result: every element and the array move to the enclosing scope (or to the
 * caller, who then calls tg_tensor_list_release). Returns l. */
tg_tensor_list tg_scope_keep_list(tg_tensor_list l);
void tg_scope_end(void);
/* Records t in the innermost open scope (no-op without one, or inside a kernel, whose inner
 * results the kernel owns) and returns it: the generated functions do this with every tensor
 * they return; a hand-written function that returns new tensors may do the same. */
tg_tensor *tg_scope_track(tg_tensor *t);
/* The same for a Tensor[] result: the array and every element are recorded (freed together at
 * tg_scope_end). On out of memory the list is released and { NULL, 0 } returned with an
 * error. */
tg_tensor_list tg_scope_track_list(tg_tensor_list l);
/* Brackets a kernel call: while a scope is open, the tensors a kernel's own inner calls return
 * are not recorded (the kernel owns them, and releases or returns them). Returns a token for
 * tg_scope_resume; the generated functions track the kernel's result after resuming. */
int tg_scope_suspend(void);
void tg_scope_resume(int token);

/* ---- grad mode (thread-local) ---- */
bool tg_is_grad_enabled(void);
bool tg_set_grad_enabled(bool enabled); /* returns the previous mode */

/* ---- autograd ---- */
/* A node of the backward graph (PyTorch's grad_fn), e.g. "AddBackward0"; opaque. */
typedef struct tg_node tg_node;

/* Computes the gradient of `root` w.r.t. every leaf that requires grad and accumulates it
 * into the leaves' .grad. `.grad` is d(out)/d(root), required when root has more than one
 * element ("grad can be implicitly created only for scalar outputs"); `.retain_graph` keeps
 * the saved tensors for another backward; `.create_graph` records the backward itself, for
 * higher-order derivatives (and implies .retain_graph, as in PyTorch). Returns 0, or -1 with
 * an error recorded. */
typedef struct tg_backward_opts {
    tg_tensor *grad;
    bool retain_graph;
    bool create_graph;
} tg_backward_opts;
int tg_backward_fn(tg_tensor *root, tg_backward_opts opts);
#define tg_backward(root, ...)         \
    tg_backward_fn((root),             \
                   (tg_backward_opts){ \
                       .grad = NULL, .retain_graph = false, .create_graph = false, __VA_ARGS__ })

/* Gradients of `outputs` w.r.t. `inputs`, returned in grads[i] (new references; NULL for an
 * input the outputs do not depend on, which is an error unless .allow_unused) instead of being
 * accumulated into .grad. `.grad_outputs` (one per output, or empty) seeds the outputs. */
typedef struct tg_grad_opts {
    tg_tensor_list grad_outputs;
    bool retain_graph;
    bool create_graph;
    bool allow_unused;
} tg_grad_opts;
int tg_grad_fn(tg_tensor_list outputs, tg_tensor_list inputs, tg_tensor **grads, tg_grad_opts opts);
#define tg_grad(outputs, inputs, grads, ...)                \
    tg_grad_fn((outputs), (inputs), (grads),                \
               (tg_grad_opts){ .grad_outputs = { NULL, 0 }, \
                               .retain_graph = false,       \
                               .create_graph = false,       \
                               .allow_unused = false,       \
                               __VA_ARGS__ })

/* Sets (a new reference is taken) or clears (NULL) a tensor's .grad. */
void tg_tensor_set_grad(tg_tensor *t, tg_tensor *grad);
bool tg_tensor_is_leaf(const tg_tensor *t);
/* A new tensor sharing t's data with no history and requires_grad false. */
tg_tensor *tg_tensor_detach(tg_tensor *t);
/* Keeps .grad for a non-leaf tensor too. */
void tg_tensor_retain_grad(tg_tensor *t);
/* Runs fn(grad, ctx) when the gradient w.r.t. t is computed, before it is used; fn returns
 * NULL to keep grad, or a new reference that replaces it. */
typedef tg_tensor *(*tg_grad_hook)(tg_tensor *grad, void *ctx);
int tg_tensor_register_hook(tg_tensor *t, tg_grad_hook fn, void *ctx);

/* Inspection: t's grad_fn (borrowed; NULL for leaves), its name ("AddBackward0",
 * "AccumulateGrad"), and its next functions (borrowed; NULL where no gradient flows). */
tg_node *tg_tensor_grad_fn(const tg_tensor *t);
const char *tg_node_name(const tg_node *n);
int tg_node_num_next(const tg_node *n);
tg_node *tg_node_next(const tg_node *n, int i, int *input_nr);

/* ---- forward-mode AD (PyTorch's torch.autograd.forward_ad; docs/autograd.md, "Forward mode")
 *
 * A dual tensor is a primal value with a tangent attached at a dual level. Every differentiable
 * operator, run on dual tensors, gives outputs whose tangents are its Jacobian-vector product
 * (the `result:` formulas of derivatives.yaml, compiled by tgen). Levels nest (a jvp of a jvp)
 * and form one stack for the process, as in PyTorch; numbers count from 0 for the outermost. Forward mode composes with
 * reverse mode: the operations that compute tangents are recorded like any other, and
 * backward formulas run on dual tensors give dual gradients (a forward-over-reverse Hessian-
 * vector product). Exiting a level makes every tangent of it unreachable. */
#define TG_MAX_DUAL_LEVELS 8
/* Enters a new, innermost level; returns its number, or -1 with an error (more than
 * TG_MAX_DUAL_LEVELS nested). */
int tg_fw_dual_level_enter(void);
/* Exits `level`, which must be the innermost one; 0, or -1 with an error. */
int tg_fw_dual_level_exit(int level);
/* A block inside a new level named `level`: TG_DUAL_LEVEL(lv) { ... } (do not leave it with
 * return/goto/break). The block is skipped when the level cannot be entered. */
#define TG_DUAL_LEVEL(level)                                                            \
    for (int level = tg_fw_dual_level_enter(), tg__dl_once = (level >= 0); tg__dl_once; \
         tg__dl_once = 0, tg_fw_dual_level_exit(level))
/* A view of `primal` (sharing its storage and its reverse-mode history, like PyTorch's
 * make_dual) whose tangent at `level` is `tangent` (kept by reference). The tangent must have
 * primal's shape, dtype and device, and primal a floating dtype and no tangent at that level.
 * A new reference (tracked by the open scope), or NULL with an error naming make_dual. */
tg_tensor *tg_make_dual(tg_tensor *primal, tg_tensor *tangent, int level);
/* t's parts at `level`: `primal`, a view of t without the tangent of that level (tangents of
 * other levels stay), and `tangent`, t's tangent at that level or NULL when it has none. New
 * references (tracked by the open scope); both NULL with an error for a level not entered. */
typedef struct tg_dual {
    tg_tensor *primal;
    tg_tensor *tangent;
} tg_dual;
tg_dual tg_unpack_dual(tg_tensor *t, int level);

/* Grad mode off for a block: TG_NO_GRAD { ... } (do not leave the block with return/goto). */
#define TG_NO_GRAD                                                                       \
    for (bool tg__ng_prev = tg_set_grad_enabled(false), tg__ng_once = true; tg__ng_once; \
         tg__ng_once = false, tg_set_grad_enabled(tg__ng_prev))

/* ---- random numbers ---- */
/* The default CPU generator is seeded from the clock unless tg_manual_seed() is called. */
void tg_manual_seed(uint64_t seed);
tg_generator *tg_generator_new(uint64_t seed);
void tg_generator_free(tg_generator *g);
void tg_generator_manual_seed(tg_generator *g, uint64_t seed);
/* A generator's whole state (NULL: the default CPU generator) as a new uint8 CPU tensor, and
 * that state put back: the numbers drawn after tg_set_rng_state are those drawn after the
 * tg_get_rng_state that made it (torch.get_rng_state / set_rng_state). -1 with an error for a
 * tensor that is not such a state. */
tg_tensor *tg_get_rng_state(tg_generator *g);
int tg_set_rng_state(tg_generator *g, const tg_tensor *state);

/* ---- threads ---- */
void tg_set_num_threads(int n);
int tg_get_num_threads(void);

/* ---- CPU capability ---- */
/* The instruction set the CPU kernels run with: "default" (baseline x86-64, or the portable
 * build elsewhere), "avx2" (AVX2 + FMA) or "avx512" (AVX-512 F/DQ/VL/BW). The best the CPU
 * supports, unless the environment variable TG_CPU_CAPABILITY names a lower one. */
const char *tg_cpu_capability(void);

/* ---- live objects (leak checking) ---- */
int64_t tg_live_tensors(void);
int64_t tg_live_storages(void);

#ifdef __cplusplus
}
#endif
#endif
