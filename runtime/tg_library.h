/* tensorgen's operator registry, for operator libraries, device backends and dynamic callers
 * (docs/extending.md). It does what PyTorch's TORCH_LIBRARY, torch.ops.load_library,
 * TORCH_LIBRARY_IMPL, m.fallback and PrivateUse1 do:
 *
 *   - call any operator by name, with its arguments on a stack of boxed values;
 *   - load a library of operators that `tgen --gen --namespace NS` generated (its operators
 *     register themselves when it loads; tg_load_library loads one at run time);
 *   - register a device backend, which gets a device type and a dispatch key of its own
 *     (tg_backend.h, which this header includes: the keys, the backend's hooks);
 *   - register kernels for existing operators under a key, and a boxed fallback that serves
 *     every operator without a kernel there.
 *
 * Registration takes a lock and may happen at any time; calls never do (an operator's row is
 * read with one atomic load). Everything here records an error naming what failed and
 * returns -1 (or NULL) on bad input, like the rest of the API. */
#ifndef TG_LIBRARY_H
#define TG_LIBRARY_H

#include "dispatch/schema_types.h"
#include "tg_backend.h"
#include "tg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ boxed values */
/* Every operator can be called with its arguments on a stack, all of them (defaults too), in
 * schema order. What a schema type is on the stack: a tag, TG_IV_NONE, TG_IV_TENSOR, TG_IV_INT,
 * ..., one per row of dispatch/schema_types.h's TG_IVALUE_TAGS (with the member of the union
 * below that holds it), and the tag of each schema type is its row of TG_SCHEMA_KINDS there. */
typedef enum tg_ivalue_tag {
#define TG__IVALUE_TAG(tag, name, member) TG_IV_##tag,
    TG_IVALUE_TAGS(TG__IVALUE_TAG)
#undef TG__IVALUE_TAG
} tg_ivalue_tag;

typedef struct tg_ivalue {
    tg_ivalue_tag tag;
    union {
        tg_tensor *t; /* TENSOR: the stack owns a reference */
        int64_t i;    /* INT, DTYPE, LAYOUT, MEMORY_FORMAT, QSCHEME */
        double d;
        bool b;
        tg_int_list ints;     /* an argument: points into caller memory while the call runs;
                               * an int[] result owns its array (tg_int_list_release) */
        tg_float_list floats; /* arguments, borrowed like ints */
        tg_bool_list bools;
        tg_str_list strs;
        tg_tensor_list tensors; /* an argument: borrowed, like ints; a result: owned (the
                                 * array and a reference per element) */
        tg_device device;
        const char *s;
        tg_generator *g;
        void *p; /* STORAGE (tg_storage *), QUANTIZER (tg_quantizer *): borrowed */
    } v;
} tg_ivalue;

#define TG_STACK_MAX 32
typedef struct tg_boxed_stack {
    tg_ivalue v[TG_STACK_MAX];
    int n;
} tg_boxed_stack;

/* The schema's name of a boxed value's type ("int", "Tensor[]"), for messages. */
const char *tg_ivalue_tag_name(tg_ivalue_tag tag);

/* Pushing arguments: each returns 0, or -1 when the stack is full (nothing pushed, and for a
 * tensor no reference taken). A tensor is pushed as a new reference the stack owns (NULL is
 * None); lists are borrowed and must outlive the call. */
static inline tg_ivalue *tg__boxed_next(tg_boxed_stack *s, tg_ivalue_tag tag)
{
    if (s->n >= TG_STACK_MAX) return NULL;
    tg_ivalue *v = &s->v[s->n++];
    v->tag = tag;
    return v;
}
static inline int tg_boxed_push_tensor(tg_boxed_stack *s, tg_tensor *t)
{
    tg_ivalue *v = tg__boxed_next(s, t ? TG_IV_TENSOR : TG_IV_NONE);
    if (v && t) v->v.t = tg_retain(t);
    return v ? 0 : -1;
}
static inline int tg_boxed_push_int(tg_boxed_stack *s, int64_t i)
{
    tg_ivalue *v = tg__boxed_next(s, TG_IV_INT);
    if (v) v->v.i = i;
    return v ? 0 : -1;
}
static inline int tg_boxed_push_double(tg_boxed_stack *s, double d)
{
    tg_ivalue *v = tg__boxed_next(s, TG_IV_DOUBLE);
    if (v) v->v.d = d;
    return v ? 0 : -1;
}
static inline int tg_boxed_push_bool(tg_boxed_stack *s, bool b)
{
    tg_ivalue *v = tg__boxed_next(s, TG_IV_BOOL);
    if (v) v->v.b = b;
    return v ? 0 : -1;
}
static inline int tg_boxed_push_none(tg_boxed_stack *s)
{
    return tg__boxed_next(s, TG_IV_NONE) ? 0 : -1;
}
static inline int tg_boxed_push_int_list(tg_boxed_stack *s, tg_int_list l)
{
    tg_ivalue *v = tg__boxed_next(s, TG_IV_INT_LIST);
    if (v) v->v.ints = l;
    return v ? 0 : -1;
}
/* A Tensor[] or Tensor?[] (borrowed, like an int list); TG_NO_TENSORS pushes None (Tensor[]?). */
static inline int tg_boxed_push_tensor_list(tg_boxed_stack *s, tg_tensor_list l)
{
    tg_ivalue *v = tg__boxed_next(s, tg_is_none_tensors(l) ? TG_IV_NONE : TG_IV_TENSOR_LIST);
    if (v) v->v.tensors = l;
    return v ? 0 : -1;
}
/* Releases what the stack owns (tensors; Tensor[] and int[] results) and empties it. */
void tg_boxed_clear(tg_boxed_stack *s);

/* ------------------------------------------------------------------ calls by name */
/* One operator's row in the dispatch table: opaque here (dispatch/dispatch.h has the layout,
 * for generated code). */
typedef struct tg_op_entry tg_op_entry;

/* Finds an operator: "add.Tensor" or "aten::add.Tensor" (tensorgen's own operators, the
 * overload after the dot), "myops::nms" (a library's: the namespace is required). NULL with
 * "unknown operator 'x'" otherwise. */
const tg_op_entry *tg_op_find(const char *name);
const char *tg_op_name(const tg_op_entry *op);   /* "add.Tensor", "myops::nms" */
const char *tg_op_schema(const tg_op_entry *op); /* the schema it was declared with */
int tg_op_num_arguments(const tg_op_entry *op);  /* what a boxed call takes */

/* Calls an operator: the stack holds exactly its arguments; on success they are replaced by
 * its results (a TENSOR result is an owned reference; a Tensor[] result owns its array and a
 * reference per element: tg_boxed_clear or tg_tensor_list_release gives them back). Dispatch
 * and autograd work as for the typed function. The call consumes its arguments whether it
 * succeeds or not; on failure the stack is empty and the error names the operator ("add.Tensor:
 * argument 'other' (position 2) must be Tensor, not int"). Returns 0 or -1. */
int tg_call_boxed(const char *name, tg_boxed_stack *s);
int tg_call_boxed_op(const tg_op_entry *op, tg_boxed_stack *s);

/* ------------------------------------------------------------------ operator libraries */
/* Loads a shared library of operators (generated by `tgen --gen --namespace NS`, linked
 * against libtensorgen), like torch.ops.load_library: its operators are registered when it
 * loads, and callable by name ("NS::op") and through its generated header. Loading the same
 * library again does nothing. Errors: the file cannot be loaded (dlopen's reason), it is not
 * an operator library (it defines no operator table), or its registration failed (a name
 * already registered, a library built for another ABI); the library is then unloaded. A
 * loaded library stays loaded for the life of the process. Returns 0 or -1. */
int tg_load_library(const char *path);

/* ------------------------------------------------------------------ kernels and fallbacks */
/* An unboxed kernel, cast to tg_fnptr: a function taking every argument of the operator in
 * schema order, in the C types of its generated function (no options struct), and returning
 * what the operator returns: a new reference, or NULL with an error (docs/extending.md). */
typedef void (*tg_fnptr)(void);
/* A boxed kernel: gets the operator, the call's key set and the stack holding its arguments
 * (what tg_call_boxed was given), and behaves like a boxed call: consumes the arguments,
 * leaves the results, returns 0 or -1 with an error. `ctx` is what was registered with it. */
typedef int (*tg_boxed_kernel)(const tg_op_entry *op, tg_keyset keys, tg_boxed_stack *s, void *ctx);

/* Registers `kernel` for operator `op` (a name as for tg_op_find) under `key` (CPU, CUDA or a
 * backend's key; Autograd kernels come from derivatives). An error when the operator already
 * has a kernel for that key. */
int tg_register_kernel(const char *op, int key, tg_fnptr kernel);
/* The same with a boxed kernel (one function can serve several operators). */
int tg_register_boxed_kernel(const char *op, int key, tg_boxed_kernel fn, void *ctx);
/* A boxed fallback for `key`: it runs for every operator that has no kernel (boxed or not)
 * for that key, like PyTorch's m.fallback. One per key; CUDA's is built in (the CPU kernel on
 * copies, tg_call_boxed_cpu, with a one-time warning naming the operator). */
int tg_register_fallback(int key, tg_boxed_kernel fn, void *ctx);
/* For fallbacks (PyTorch's cpu_fallback): runs op's CPU kernel on the stack's arguments,
 * copying tensors from their devices to the CPU first (through the backends' hooks) and
 * writing back what the kernel modified in place; results go to the device of the inputs.
 * Consumes the arguments like a boxed call. 0 or -1. */
int tg_call_boxed_cpu(const tg_op_entry *op, tg_boxed_stack *s);

#ifdef __cplusplus
}
#endif

#endif
