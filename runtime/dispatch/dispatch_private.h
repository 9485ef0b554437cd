/* Private to runtime/dispatch (keys.c, boxed_values.c, cpu_fallback.c, registry.c, dispatch.c,
 * boxed.c, library.c). */
#ifndef TG_DISPATCH_DISPATCH_PRIVATE_H
#define TG_DISPATCH_DISPATCH_PRIVATE_H

#include "core/rt_private.h"
#include "dispatch/dispatch.h"

#define TG__KEY(k) ((tg_keyset)1 << (k))
/* The keys of devices (CPU, CUDA, backends): one of them always runs in the end. */
#define TG__DEVICE_KEYS (TG__KEY(TG_KEY_BACKEND_LAST + 1) - 1)

/* Provided by generated code (tg_register.c): tensorgen's own operator table, in op-enum
 * order. */
tg_op_entry *const *tg__generated_ops(int *n);

/* The files of the room, bottom up: each calls only the ones listed before it.
 * keys.c: tensors' keys, excluded keys, keys' names, and the error that lists an operator's
 * keys: "add.Tensor: no kernel for key CUDA; the operator has kernels for: CPU". -1. */
int tg__no_kernel(const tg_op_entry *e, int key);

/* boxed_values.c: a failed boxed call consumes its arguments: the tensor references the stack
 * owns are released (lists among arguments are borrowed) and it is emptied. -1. */
int tg__boxed_fail(tg_boxed_stack *s);

/* cpu_fallback.c: the CUDA key's fallback, built in (the registry holds it like a registered
 * one): an operator without a CUDA kernel runs its CPU kernel on copies, with a one-time
 * warning naming it. */
int tg__cuda_cpu_fallback(const tg_op_entry *e, tg_keyset ks, tg_boxed_stack *s, void *ctx);

/* registry.c: operators by name and what libraries and backends registered. An operator by
 * name, tensorgen's own ("add.Tensor", "aten::add.Tensor", lock-free) or a library's
 * ("myops::nms"); NULL if none. */
tg_op_entry *tg__registry_find(const char *name);
/* Some registered operator whose name ends with "::<bare>" (for "did you mean" errors). */
const char *tg__registry_suggest(const char *bare);
/* A boxed kernel registered for (e, key); the key's fallback. true with *fn, *ctx set. */
bool tg__registry_boxed_kernel(const tg_op_entry *e, int key, tg_boxed_kernel *fn, void **ctx);
bool tg__registry_fallback(int key, tg_boxed_kernel *fn, void **ctx);
/* Whether match(lib, ctx) holds for a registered library (library.c asks whether one lives
 * in a shared object). */
bool tg__registry_any_library(bool (*match)(const tg_library *lib, void *ctx), void *ctx);

/* dispatch.c: how a call is served, once its key set is known (tg__dispatch_resolve). */
typedef struct tg__resolved {
    int key;               /* the key that serves it */
    tg_fnptr kernel;       /* an unboxed kernel, or NULL */
    tg_boxed_kernel boxed; /* else a boxed kernel or the key's fallback */
    void *ctx;             /* boxed's */
} tg__resolved;
/* 0, or -1 with the error that lists the operator's keys. */
int tg__dispatch_resolve(const tg_op_entry *e, tg_keyset ks, tg__resolved *r);

/* boxed.c (calls by name and boxed calls) and library.c (tg_load_library) stand on these. */

#endif
