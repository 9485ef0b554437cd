/* Private to runtime/dispatch (dispatch.c, boxed.c, registry.c, library.c). */
#ifndef TG_DISPATCH_DISPATCH_PRIVATE_H
#define TG_DISPATCH_DISPATCH_PRIVATE_H

#include "core/rt_private.h"
#include "dispatch/dispatch.h"

#define TG__KEY(k) ((tg_keyset)1 << (k))
/* The keys of devices (CPU, CUDA, backends): one of them always runs in the end. */
#define TG__DEVICE_KEYS (TG__KEY(TG_KEY_BACKEND_LAST + 1) - 1)

/* How a call is served, once its key set is known (tg__dispatch_resolve). */
typedef struct tg__resolved {
    int key;               /* the key that serves it */
    tg_fnptr kernel;       /* an unboxed kernel, or NULL */
    tg_boxed_kernel boxed; /* else a boxed kernel or the key's fallback */
    void *ctx;             /* boxed's */
} tg__resolved;
/* 0, or -1 with the error that lists the operator's keys. */
int tg__dispatch_resolve(const tg_op_entry *e, tg_keyset ks, tg__resolved *r);
/* That error: "add.Tensor: no kernel for key CUDA; the operator has kernels for: CPU". -1. */
int tg__no_kernel(const tg_op_entry *e, int key);

/* Provided by generated code (tg_register.c): tensorgen's own operator table, in op-enum
 * order. */
tg_op_entry *const *tg__generated_ops(int *n);

/* registry.c: what libraries and backends registered. An operator by name, tensorgen's own
 * ("add.Tensor", "aten::add.Tensor") or a library's ("myops::nms"); NULL if none. */
tg_op_entry *tg__registry_find(const char *name);
/* Some registered operator whose name ends with "::<bare>" (for "did you mean" errors). */
const char *tg__registry_suggest(const char *bare);
/* A boxed kernel registered for (e, key); the key's fallback. true with *fn, *ctx set. */
bool tg__registry_boxed_kernel(const tg_op_entry *e, int key, tg_boxed_kernel *fn, void **ctx);
bool tg__registry_fallback(int key, tg_boxed_kernel *fn, void **ctx);
/* Whether a registered library lives in the shared object behind dlopen handle `handle`. */
bool tg__registry_has_library_in(void *handle);

/* library.c: whether `lib` lives in the shared object behind `handle`. */
bool tg__library_in(const tg_library *lib, void *handle);

/* boxed.c: tensorgen's own operator by name ("add.Tensor"), lock-free; NULL if none. */
tg_op_entry *tg__builtin_find(const char *name);
/* The CUDA key's fallback, built in (registry.c holds it like a registered one): an operator
 * without a CUDA kernel runs its CPU kernel on copies, with a one-time warning naming it. */
int tg__cuda_cpu_fallback(const tg_op_entry *e, tg_keyset ks, tg_boxed_stack *s, void *ctx);

#endif
