/* The glue that tgen's generated operator code calls: the fast path of dispatch used by every
 * generated function (tg_ops.c), and the boxing and unboxing of arguments and results for the
 * boxed callers (tg_boxed.c) and the functions' boxed path. Kept out of the per-operator
 * generated files, which hold only per-operator code; tgen's templates include it
 * (docs/generated-code.md, "Dispatch", "Boxed calls"). Installed (as <tensorgen/dispatch/op_glue.h>): an operator
 * library's generated code includes it too, so it calls only public functions and
 * dispatch.h's.
 *
 * Everything is static inline: the stubs are on every operator call, and a translation unit
 * that uses only some of these helpers compiles warning-free. Ownership follows the stack's
 * rule (tg_library.h, tg_ivalue): a TENSOR on a tg_boxed_stack is a reference the stack owns.
 * Written by hand, except most schema types' boxing helpers: tgen generates those from the
 * type table (dispatch/schema_types.h) into tg_boxing.h, included below; none is written by a
 * macro. */
#ifndef TG_DISPATCH_OP_GLUE_H
#define TG_DISPATCH_OP_GLUE_H

#include <math.h>
#include <string.h>

#include "dispatch/dispatch.h"

/* ------------------------------------------------------------------ stubs (tg_ops.c) */

static inline TG__UNUSED bool tg__any_null(tg_tensor *const *ts, int n)
{
    for (int i = 0; i < n; i++)
        if (!ts[i]) return true;
    return false;
}

/* A NULL tensor argument: the error that produced it is normally recorded already (the first
 * error wins); a NULL from nowhere gets one naming the argument. Returns NULL. */
static inline TG__UNUSED void *tg__null_arg(const char *op, const char *arg)
{
    return tg_set_error(op, "argument '%s' is NULL", arg);
}

/* An int list argument as its kernel takes it. An option written as a plain number (`.stride
 * = 2` fills len and leaves data NULL, tg_core.h) is the number n times, in buf (n is the
 * schema's N of int[N], 1 for int[]; buf is NULL for a positional argument, which cannot be
 * written so); an option left out is `dflt`. A NULL list is None for an optional kind, the empty
 * list for a plain one (`tg_full(TG_NO_INTS, 1)` is 0-dim). */
static inline TG__UNUSED tg_int_list tg__int_list_arg(tg_int_list l, int64_t *buf, int n,
                                                      bool optional, tg_int_list dflt)
{
    if (l.data) return l;
    if (l.len == TG__DEFAULT_LEN && buf) return dflt;
    if (l.len == TG_NONE_LEN || l.len == TG__DEFAULT_LEN || !buf)
        return optional ? TG_NO_INTS : TG_INTS_EMPTY;
    for (int i = 0; i < n; i++) buf[i] = l.len;
    return (tg_int_list){ .len = n, .data = buf };
}

/* The profiler runs: the stub takes its boxed path (the fallback function beside it), where
 * tg_call_boxed_op records the call with its inputs, like any boxed call. Off, this is one load
 * of a global and a branch predicted not taken: no TLS, no call. */
static inline TG__UNUSED bool tg__stub_profiled(void)
{
    return __builtin_expect(__atomic_load_n(&tg_profiler_recording, __ATOMIC_RELAXED), 0);
}

/* Records a kernel's result in the open scope; passes NULL (an error) through. */
static inline TG__UNUSED tg_tensor *tg__track_result(tg_tensor *t)
{
    return t ? tg_scope_track(t) : NULL;
}

/* The fast path of dispatch: the highest key of the set has a kernel in the operator's row
 * (the stub passes its row of the library's table). Everything else (a lower key, a boxed
 * kernel or fallback, the CUDA->CPU fallback, the error listing the keys) is
 * tg_dispatch_lookup's; *boxed then says to take the boxed path. */
static inline TG__UNUSED tg_fnptr tg__pick_kernel(const tg_op_entry *row, tg_keyset ks, bool *boxed)
{
    if (ks) {
        int top = 63 - __builtin_clzll(ks);
        tg_fnptr k = top < TG_NUM_KEYS ? tg__row_kernel(row, top) : NULL;
        if (k) return k;
    }
    return tg_dispatch_lookup(row, ks, boxed);
}

/* The key set of a Tensor[] argument: the union of its elements' keys (none for a Tensor[]?'s
 * None, whose length is negative). */
static inline TG__UNUSED tg_keyset tg__list_keys(tg_tensor_list l)
{
    tg_keyset ks = 0;
    for (int64_t i = 0; i < l.len; i++) ks |= tg_dispatch_tensor_keys(l.data[i]);
    return ks;
}

/* The key set of a Tensor?[] argument: its elements may be None. */
static inline TG__UNUSED tg_keyset tg__opt_list_keys(tg_tensor_list l)
{
    tg_keyset ks = 0;
    for (int64_t i = 0; i < l.len; i++) ks |= l.data[i] ? tg_dispatch_tensor_keys(l.data[i]) : 0;
    return ks;
}

/* The key set of a Tensor? argument: none when it is None. */
static inline TG__UNUSED tg_keyset tg__opt_keys(const tg_tensor *t)
{
    return t ? tg_dispatch_tensor_keys(t) : 0;
}

/* Factories have no tensor to take a device from: their `device` option picks the backend,
 * and CPU is the default (tg__or_cpu). */
static inline TG__UNUSED tg_keyset tg__device_keys(tg_device d)
{
    /* A device type is its dispatch key (TG_DEVICE_NONE, unset, gives none). */
    return d.type >= 0 && d.type <= TG_KEY_BACKEND_LAST ? (tg_keyset)1 << d.type : 0;
}

static inline TG__UNUSED tg_keyset tg__or_cpu(tg_keyset ks)
{
    return ks ? ks : (tg_keyset)1 << TG_KEY_CPU;
}

/* ------------------------------------------------------------------ boxing
 * Each schema type (a kind of dispatch/schema_types.h's table) has a pair of helpers:
 * tg__box_<suffix> pushes an argument of its C type (the stubs' fallback path; a tensor is
 * pushed as a new reference the stack owns), tg__unbox_<suffix> reads one into *out (the boxed
 * callers of tg_boxed.c; borrowed: the stack keeps its references) and returns true when the
 * value does not fit the type. A kind that can be a result has tg__push_<suffix> (the stack
 * takes the kernel's result; 0, or -1 when the kernel failed, its error recorded) and
 * tg__boxed_result_<suffix> (result i of the `n` a boxed call left, as the stub's return type;
 * a missing or mistyped result gives the error value). The kinds with a shape of their own are
 * written below; the others are generated from the table into tg_boxing.h, included after
 * them. */

static inline TG__UNUSED void tg__push_iv(tg_boxed_stack *s, tg_ivalue v)
{
    if (s->n < TG_STACK_MAX) s->v[s->n++] = v;
}
static inline TG__UNUSED tg_ivalue *tg__boxed_result_at(tg_boxed_stack *s, int n, int i)
{
    return s->n >= n ? &s->v[s->n - n + i] : NULL;
}

/* ---- Tensor: NULL boxes as None; unboxing requires a tensor ---- */

static inline TG__UNUSED void tg__box_tensor(tg_boxed_stack *s, tg_tensor *t)
{
    tg__push_iv(s, t ? (tg_ivalue){ .tag = TG_IV_TENSOR, .v.t = tg_retain(t) }
                     : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED bool tg__unbox_tensor(const tg_ivalue *v, tg_tensor **out)
{
    *out = v->tag == TG_IV_TENSOR ? v->v.t : NULL;
    return !*out;
}
/* Results: the stack takes the kernel's references, all or none. */
static inline TG__UNUSED int tg__push_tensors(tg_boxed_stack *s, tg_tensor *const *ts, int n)
{
    bool ok = s->n + n <= TG_STACK_MAX;
    for (int i = 0; i < n; i++) ok = ok && ts[i];
    if (!ok) {
        for (int i = 0; i < n; i++) tg_release(ts[i]);
        return -1; /* the kernel recorded its error */
    }
    for (int i = 0; i < n; i++) s->v[s->n++] = (tg_ivalue){ .tag = TG_IV_TENSOR, .v.t = ts[i] };
    return 0;
}
/* The reference moves to the caller and is recorded in the open scope. */
static inline TG__UNUSED tg_tensor *tg__boxed_result_tensor(tg_boxed_stack *s, int n, int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    return v && v->tag == TG_IV_TENSOR ? tg__track_result(v->v.t) : NULL;
}

/* A tuple's Tensor? result: the kernel's reference moves to the stack; NULL is None. */
static inline TG__UNUSED void tg__push_opt_tensor(tg_boxed_stack *s, tg_tensor *t)
{
    tg__push_iv(s, t ? (tg_ivalue){ .tag = TG_IV_TENSOR, .v.t = t }
                     : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED tg_tensor *tg__boxed_result_opt_tensor(tg_boxed_stack *s, int n, int i)
{
    return tg__boxed_result_tensor(s, n, i); /* None: NULL */
}

/* ---- Tensor[] and Tensor?[]: borrowed lists; a Tensor[] has no NULL element, a Tensor?[]'s
 * elements may be None (NULL) ---- */

static inline TG__UNUSED void tg__box_tensor_list(tg_boxed_stack *s, tg_tensor_list l)
{
    tg__push_iv(s, (tg_ivalue){ .tag = TG_IV_TENSOR_LIST, .v.tensors = l });
}
static inline TG__UNUSED bool tg__unbox_tensor_list(const tg_ivalue *v, tg_tensor_list *out)
{
    if (v->tag != TG_IV_TENSOR_LIST) return true;
    *out = v->v.tensors;
    return tg__any_null(out->data, (int)out->len);
}
static inline TG__UNUSED void tg__box_opt_tensor_list(tg_boxed_stack *s, tg_tensor_list l)
{
    tg__box_tensor_list(s, l);
}
static inline TG__UNUSED bool tg__unbox_opt_tensor_list(const tg_ivalue *v, tg_tensor_list *out)
{
    if (v->tag != TG_IV_TENSOR_LIST) return true;
    *out = v->v.tensors;
    return false;
}
/* ---- Tensor[]?: None (TG_NO_TENSORS, a length of TG_NONE_LEN) boxes as None; a present list
 * as a Tensor[] ---- */
static inline TG__UNUSED void tg__box_tensor_list_or_none(tg_boxed_stack *s, tg_tensor_list l)
{
    if (tg_is_none_tensors(l)) tg__push_iv(s, (tg_ivalue){ .tag = TG_IV_NONE });
    else tg__box_tensor_list(s, l);
}
static inline TG__UNUSED bool tg__unbox_tensor_list_or_none(const tg_ivalue *v, tg_tensor_list *out)
{
    *out = TG_NO_TENSORS;
    return v->tag != TG_IV_NONE && tg__unbox_tensor_list(v, out);
}
/* A Tensor[] result: the stack takes over the kernel's array and element references (the
 * caller of tg_call_boxed releases them with tg_tensor_list_release). */
static inline TG__UNUSED int tg__push_tensor_list(tg_boxed_stack *s, tg_tensor_list l)
{
    if (!l.data) return -1; /* the kernel recorded its error */
    if (s->n >= TG_STACK_MAX) {
        tg_tensor_list_release(l);
        return -1;
    }
    s->v[s->n++] = (tg_ivalue){ .tag = TG_IV_TENSOR_LIST, .v.tensors = l };
    return 0;
}
/* The stack owned the array and the elements; now the caller does. */
static inline TG__UNUSED tg_tensor_list tg__boxed_result_tensor_list(tg_boxed_stack *s, int n,
                                                                     int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    if (!v || v->tag != TG_IV_TENSOR_LIST || !v->v.tensors.data) return (tg_tensor_list){ NULL, 0 };
    return tg_scope_track_list(v->v.tensors);
}

/* ---- float, Scalar: an int or a bool is taken where a Scalar is expected ---- */

static inline TG__UNUSED void tg__box_double(tg_boxed_stack *s, double v)
{
    tg__push_iv(s, (tg_ivalue){ .tag = TG_IV_DOUBLE, .v.d = v });
}
static inline TG__UNUSED bool tg__unbox_double(const tg_ivalue *v, double *out)
{
    if (v->tag == TG_IV_INT) *out = (double)v->v.i;
    else if (v->tag == TG_IV_BOOL) *out = v->v.b;
    else *out = v->v.d;
    return v->tag != TG_IV_DOUBLE && v->tag != TG_IV_INT && v->tag != TG_IV_BOOL;
}
static inline TG__UNUSED int tg__push_double(tg_boxed_stack *s, double v)
{
    s->v[s->n++] = (tg_ivalue){ .tag = TG_IV_DOUBLE, .v.d = v };
    return 0;
}
static inline TG__UNUSED double tg__boxed_result_double(tg_boxed_stack *s, int n, int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    return v && v->tag == TG_IV_DOUBLE ? v->v.d : v && v->tag == TG_IV_INT ? (double)v->v.i : NAN;
}

/* ---- Device: a device of type TG_DEVICE_NONE boxes as None ---- */

static inline TG__UNUSED void tg__box_device(tg_boxed_stack *s, tg_device v)
{
    tg__push_iv(s, v.type != TG_DEVICE_NONE ? (tg_ivalue){ .tag = TG_IV_DEVICE, .v.device = v }
                                            : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED bool tg__unbox_device(const tg_ivalue *v, tg_device *out)
{
    *out = v->v.device;
    return v->tag != TG_IV_DEVICE;
}

/* ---- every other kind, generated from dispatch/schema_types.h ---- */
#include "tg_boxing.h"

/* ------------------------------------------------------------------ boxed callers (tg_boxed.c)
 * and the stubs' fallback path */

/* What a failed boxed call left on the stack (normally nothing: callers consume their
 * arguments), released. */
static inline TG__UNUSED void tg__drop_stack(tg_boxed_stack *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i].tag == TG_IV_TENSOR) tg_release(s->v[i].v.t);
    s->n = 0;
}

/* Drops the top n values, releasing the tensors the stack owns. */
static inline TG__UNUSED void tg__drop_args(tg_boxed_stack *s, int n)
{
    for (int i = s->n - n; i < s->n; i++)
        if (s->v[i].tag == TG_IV_TENSOR) tg_release(s->v[i].v.t);
    s->n -= n;
}

/* Fewer than nargs values on the stack: -1 with an error (nothing is consumed). */
static inline TG__UNUSED int tg__boxed_underflow(tg_boxed_stack *s, const char *op, int nargs)
{
    tg_set_error(op, "boxed call needs %d arguments on the stack, found %d", nargs, s->n);
    return -1;
}

/* Argument i of nargs does not have its schema type: consumes the arguments and returns -1
 * with "add.Tensor: argument 'other' (position 2) must be Tensor, not int". */
static inline TG__UNUSED int tg__boxed_bad_arg(tg_boxed_stack *s, int nargs, int i, const char *op,
                                               const char *arg, const char *type)
{
    const tg_ivalue *v = &s->v[s->n - nargs + i];
    const char *got = tg_ivalue_tag_name(v->tag);
    /* a tensor of the right tag that failed: NULL (Tensor) or holding a NULL (Tensor[]) */
    if (!strcmp(type, got) || (v->tag == TG_IV_TENSOR && !v->v.t)) got = "a NULL tensor";
    tg__drop_args(s, nargs);
    tg_set_error(op, "argument '%s' (position %d) must be %s, not %s", arg, i + 1, type, got);
    return -1;
}

#endif
