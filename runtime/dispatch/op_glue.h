/* The glue that tgen's generated operator code calls: the fast path of dispatch used by every
 * generated function (tg_ops.c), and the boxing and unboxing of arguments and results for the
 * boxed callers (tg_boxed.c) and the functions' boxed path. Written by hand so that generated
 * files hold only per-operator code; tgen's templates include it (docs/generated-code.md,
 * "Dispatch", "Boxed calls"). Installed (as <tensorgen/dispatch/op_glue.h>): an operator
 * library's generated code includes it too, so it calls only public functions and
 * dispatch.h's.
 *
 * Everything is static inline: the stubs are on every operator call, and a translation unit
 * that uses only some of these helpers compiles warning-free. Ownership follows the stack's
 * rule (tg_library.h, tg_ivalue): a TENSOR on a tg_boxed_stack is a reference the stack owns. */
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

/* The key set of a Tensor[] argument: the union of its elements' keys. */
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

/* ------------------------------------------------------------------ boxing arguments
 * For the stubs' fallback path: tg__box_<type> pushes one argument of a C type (tgen's
 * tga_box_suffix names the type); a tensor is pushed as a new reference the stack owns. */

static inline TG__UNUSED void tg__push_iv(tg_boxed_stack *s, tg_ivalue v)
{
    if (s->n < TG_STACK_MAX) s->v[s->n++] = v;
}
static inline TG__UNUSED void tg__box_tensor(tg_boxed_stack *s, tg_tensor *t)
{
    tg__push_iv(s, t ? (tg_ivalue){ .tag = TG_IV_TENSOR, .v.t = tg_retain(t) }
                     : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_opt_tensor(tg_boxed_stack *s, tg_tensor *t)
{
    tg__box_tensor(s, t);
}
static inline TG__UNUSED void tg__box_tensor_list(tg_boxed_stack *s, tg_tensor_list l)
{
    tg__push_iv(s, (tg_ivalue){ .tag = TG_IV_TENSOR_LIST, .v.tensors = l });
}
static inline TG__UNUSED void tg__box_int(tg_boxed_stack *s, int64_t v)
{
    tg__push_iv(s, (tg_ivalue){ .tag = TG_IV_INT, .v.i = v });
}
static inline TG__UNUSED void tg__box_opt_int(tg_boxed_stack *s, tg_opt_int v)
{
    tg__push_iv(s, v.has_value ? (tg_ivalue){ .tag = TG_IV_INT, .v.i = v.value }
                               : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_int_list(tg_boxed_stack *s, tg_int_list v)
{
    tg__push_iv(s, (tg_ivalue){ .tag = TG_IV_INT_LIST, .v.ints = v });
}
static inline TG__UNUSED void tg__box_opt_int_list(tg_boxed_stack *s, tg_int_list v)
{
    tg__push_iv(s, v.data ? (tg_ivalue){ .tag = TG_IV_INT_LIST, .v.ints = v }
                          : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_double(tg_boxed_stack *s, double v)
{
    tg__push_iv(s, (tg_ivalue){ .tag = TG_IV_DOUBLE, .v.d = v });
}
static inline TG__UNUSED void tg__box_opt_double(tg_boxed_stack *s, tg_opt_float v)
{
    tg__push_iv(s, v.has_value ? (tg_ivalue){ .tag = TG_IV_DOUBLE, .v.d = v.value }
                               : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_bool(tg_boxed_stack *s, bool v)
{
    tg__push_iv(s, (tg_ivalue){ .tag = TG_IV_BOOL, .v.b = v });
}
static inline TG__UNUSED void tg__box_opt_bool(tg_boxed_stack *s, tg_opt_bool v)
{
    tg__push_iv(s, v.has_value ? (tg_ivalue){ .tag = TG_IV_BOOL, .v.b = v.value }
                               : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_dtype(tg_boxed_stack *s, tg_dtype v)
{
    tg__push_iv(s, v != TG_DTYPE_NONE ? (tg_ivalue){ .tag = TG_IV_DTYPE, .v.i = v }
                                      : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_opt_dtype(tg_boxed_stack *s, tg_dtype v)
{
    tg__box_dtype(s, v);
}
static inline TG__UNUSED void tg__box_layout(tg_boxed_stack *s, tg_layout v)
{
    tg__push_iv(s, v != TG_LAYOUT_NONE ? (tg_ivalue){ .tag = TG_IV_LAYOUT, .v.i = v }
                                       : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_opt_layout(tg_boxed_stack *s, tg_layout v)
{
    tg__box_layout(s, v);
}
static inline TG__UNUSED void tg__box_device(tg_boxed_stack *s, tg_device v)
{
    tg__push_iv(s, v.type != TG_DEVICE_NONE ? (tg_ivalue){ .tag = TG_IV_DEVICE, .v.device = v }
                                            : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_opt_device(tg_boxed_stack *s, tg_device v)
{
    tg__box_device(s, v);
}
static inline TG__UNUSED void tg__box_memory_format(tg_boxed_stack *s, tg_memory_format v)
{
    tg__push_iv(s, v != TG_MEMORY_FORMAT_NONE ? (tg_ivalue){ .tag = TG_IV_MEMORY_FORMAT, .v.i = v }
                                              : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_opt_memory_format(tg_boxed_stack *s, tg_memory_format v)
{
    tg__box_memory_format(s, v);
}
static inline TG__UNUSED void tg__box_opt_generator(tg_boxed_stack *s, tg_generator *g)
{
    tg__push_iv(s, g ? (tg_ivalue){ .tag = TG_IV_GENERATOR, .v.g = g }
                     : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_str(tg_boxed_stack *s, const char *v)
{
    tg__push_iv(s, v ? (tg_ivalue){ .tag = TG_IV_STRING, .v.s = v }
                     : (tg_ivalue){ .tag = TG_IV_NONE });
}
static inline TG__UNUSED void tg__box_opt_str(tg_boxed_stack *s, const char *v)
{
    tg__box_str(s, v);
}
static inline TG__UNUSED void tg__box_opt_tensor_list(tg_boxed_stack *s, tg_tensor_list l)
{
    tg__box_tensor_list(s, l);
}

/* The kinds below differ only by their C type, tag and union member; each macro writes the
 * box_ and unbox_ helpers (see "unboxing" below for what unbox_ returns) of a plain and an
 * optional kind. Lists: None is .data == NULL, a present empty list points at `empty`.
 * Pointers: None is NULL. Enums: None is the enum's `none` value. */
#define TG__BOXING_LIST(sfx, ctype, iv_tag, member, empty)                            \
    static inline TG__UNUSED void tg__box_##sfx(tg_boxed_stack *s, ctype v)           \
    {                                                                                 \
        tg__push_iv(s, (tg_ivalue){ .tag = iv_tag, .v.member = v });                  \
    }                                                                                 \
    static inline TG__UNUSED void tg__box_opt_##sfx(tg_boxed_stack *s, ctype v)       \
    {                                                                                 \
        tg__push_iv(s, v.data ? (tg_ivalue){ .tag = iv_tag, .v.member = v }           \
                              : (tg_ivalue){ .tag = TG_IV_NONE });                    \
    }                                                                                 \
    static inline TG__UNUSED bool tg__unbox_##sfx(const tg_ivalue *v, ctype *out)     \
    {                                                                                 \
        if (v->tag != iv_tag) return true;                                            \
        *out = v->v.member.data ? v->v.member : (ctype){ empty, 0 };                  \
        return false;                                                                 \
    }                                                                                 \
    static inline TG__UNUSED bool tg__unbox_opt_##sfx(const tg_ivalue *v, ctype *out) \
    {                                                                                 \
        *out = (ctype){ NULL, 0 };                                                    \
        return v->tag == TG_IV_NONE ? false : tg__unbox_##sfx(v, out);                \
    }
#define TG__BOXING_PTR(sfx, ctype, iv_tag)                                            \
    static inline TG__UNUSED void tg__box_##sfx(tg_boxed_stack *s, ctype v)           \
    {                                                                                 \
        tg__push_iv(s, v ? (tg_ivalue){ .tag = iv_tag, .v.p = (void *)v }             \
                         : (tg_ivalue){ .tag = TG_IV_NONE });                         \
    }                                                                                 \
    static inline TG__UNUSED void tg__box_opt_##sfx(tg_boxed_stack *s, ctype v)       \
    {                                                                                 \
        tg__box_##sfx(s, v);                                                          \
    }                                                                                 \
    static inline TG__UNUSED bool tg__unbox_##sfx(const tg_ivalue *v, ctype *out)     \
    {                                                                                 \
        *out = v->tag == iv_tag ? (ctype)v->v.p : NULL;                               \
        return !*out;                                                                 \
    }                                                                                 \
    static inline TG__UNUSED bool tg__unbox_opt_##sfx(const tg_ivalue *v, ctype *out) \
    {                                                                                 \
        *out = v->tag == iv_tag ? (ctype)v->v.p : NULL;                               \
        return v->tag != iv_tag && v->tag != TG_IV_NONE;                              \
    }
#define TG__BOXING_ENUM(sfx, ctype, iv_tag, none)                                     \
    static inline TG__UNUSED void tg__box_##sfx(tg_boxed_stack *s, ctype v)           \
    {                                                                                 \
        tg__push_iv(s, v != none ? (tg_ivalue){ .tag = iv_tag, .v.i = v }             \
                                 : (tg_ivalue){ .tag = TG_IV_NONE });                 \
    }                                                                                 \
    static inline TG__UNUSED void tg__box_opt_##sfx(tg_boxed_stack *s, ctype v)       \
    {                                                                                 \
        tg__box_##sfx(s, v);                                                          \
    }                                                                                 \
    static inline TG__UNUSED bool tg__unbox_##sfx(const tg_ivalue *v, ctype *out)     \
    {                                                                                 \
        *out = (ctype)v->v.i;                                                         \
        return v->tag != iv_tag;                                                      \
    }                                                                                 \
    static inline TG__UNUSED bool tg__unbox_opt_##sfx(const tg_ivalue *v, ctype *out) \
    {                                                                                 \
        *out = v->tag == iv_tag ? (ctype)v->v.i : none;                               \
        return v->tag != iv_tag && v->tag != TG_IV_NONE;                              \
    }

TG__BOXING_LIST(float_list, tg_float_list, TG_IV_FLOAT_LIST, floats, tg__empty_float_list_storage)
TG__BOXING_LIST(bool_list, tg_bool_list, TG_IV_BOOL_LIST, bools, tg__empty_bool_list_storage)
TG__BOXING_LIST(str_list, tg_str_list, TG_IV_STR_LIST, strs, tg__empty_str_list_storage)
TG__BOXING_PTR(storage, tg_storage *, TG_IV_STORAGE)
TG__BOXING_PTR(quantizer, const tg_quantizer *, TG_IV_QUANTIZER)
TG__BOXING_ENUM(qscheme, tg_quant_scheme, TG_IV_QSCHEME, TG_QSCHEME_NONE)

/* What a failed boxed call left on the stack (normally nothing: callers consume their
 * arguments), released. */
static inline TG__UNUSED void tg__drop_stack(tg_boxed_stack *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i].tag == TG_IV_TENSOR) tg_release(s->v[i].v.t);
    s->n = 0;
}

/* ------------------------------------------------------------------ results of a boxed call
 * Result i of the `n` that tg_call_boxed left on the stack, as the stub's return type; the
 * reference moves to the caller and is recorded in the open scope. A missing or mistyped
 * result gives the error value (NULL, 0, NaN, false). */

static inline TG__UNUSED tg_ivalue *tg__boxed_result_at(tg_boxed_stack *s, int n, int i)
{
    return s->n >= n ? &s->v[s->n - n + i] : NULL;
}
static inline TG__UNUSED tg_tensor *tg__boxed_result_tensor(tg_boxed_stack *s, int n, int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    return v && v->tag == TG_IV_TENSOR ? tg__track_result(v->v.t) : NULL;
}
/* A Tensor[] result: the stack owned the array and the elements; now the caller does. */
static inline TG__UNUSED tg_tensor_list tg__boxed_result_tensor_list(tg_boxed_stack *s, int n,
                                                                     int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    if (!v || v->tag != TG_IV_TENSOR_LIST || !v->v.tensors.data) return (tg_tensor_list){ NULL, 0 };
    return tg_scope_track_list(v->v.tensors);
}
static inline TG__UNUSED int64_t tg__boxed_result_int(tg_boxed_stack *s, int n, int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    return v && v->tag == TG_IV_INT ? v->v.i : 0;
}
static inline TG__UNUSED double tg__boxed_result_double(tg_boxed_stack *s, int n, int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    return v && v->tag == TG_IV_DOUBLE ? v->v.d : v && v->tag == TG_IV_INT ? (double)v->v.i : NAN;
}
static inline TG__UNUSED bool tg__boxed_result_bool(tg_boxed_stack *s, int n, int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    return v && v->tag == TG_IV_BOOL && v->v.b;
}
static inline TG__UNUSED tg_dtype tg__boxed_result_dtype(tg_boxed_stack *s, int n, int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    return v && v->tag == TG_IV_DTYPE ? (tg_dtype)v->v.i : TG_DTYPE_NONE;
}
static inline TG__UNUSED tg_quant_scheme tg__boxed_result_qscheme(tg_boxed_stack *s, int n, int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    return v && v->tag == TG_IV_QSCHEME ? (tg_quant_scheme)v->v.i : TG_QSCHEME_NONE;
}
/* An int[] result: the stack owned the array; now the caller does. */
static inline TG__UNUSED tg_int_list tg__boxed_result_int_list(tg_boxed_stack *s, int n, int i)
{
    tg_ivalue *v = tg__boxed_result_at(s, n, i);
    return v && v->tag == TG_IV_INT_LIST && v->v.ints.data ? v->v.ints : TG_NO_INTS;
}

/* ------------------------------------------------------------------ boxed callers (tg_boxed.c) */

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

/* ---- unboxing: each reads one argument into *out (borrowed: the stack keeps its references)
 * and returns true when the value does not fit the type ---- */

static inline TG__UNUSED bool tg__unbox_tensor(const tg_ivalue *v, tg_tensor **out)
{
    *out = v->tag == TG_IV_TENSOR ? v->v.t : NULL;
    return !*out;
}
static inline TG__UNUSED bool tg__unbox_opt_tensor(const tg_ivalue *v, tg_tensor **out)
{
    *out = v->tag == TG_IV_TENSOR ? v->v.t : NULL;
    return v->tag != TG_IV_TENSOR && v->tag != TG_IV_NONE;
}
static inline TG__UNUSED bool tg__unbox_tensor_list(const tg_ivalue *v, tg_tensor_list *out)
{
    if (v->tag != TG_IV_TENSOR_LIST) return true;
    *out = v->v.tensors;
    return tg__any_null(out->data, (int)out->len);
}
/* Tensor?[]: like Tensor[], and its elements may be None (NULL). */
static inline TG__UNUSED bool tg__unbox_opt_tensor_list(const tg_ivalue *v, tg_tensor_list *out)
{
    if (v->tag != TG_IV_TENSOR_LIST) return true;
    *out = v->v.tensors;
    return false;
}
static inline TG__UNUSED bool tg__unbox_int(const tg_ivalue *v, int64_t *out)
{
    *out = v->v.i;
    return v->tag != TG_IV_INT;
}
static inline TG__UNUSED bool tg__unbox_opt_int(const tg_ivalue *v, tg_opt_int *out)
{
    *out = v->tag == TG_IV_INT ? TG_OPT_INT(v->v.i) : TG_NONE_INT;
    return v->tag != TG_IV_INT && v->tag != TG_IV_NONE;
}
/* A present list is never .data == NULL (that means None). */
static inline TG__UNUSED bool tg__unbox_int_list(const tg_ivalue *v, tg_int_list *out)
{
    if (v->tag != TG_IV_INT_LIST) return true;
    *out = v->v.ints.data ? v->v.ints : TG_INTS_EMPTY;
    return false;
}
static inline TG__UNUSED bool tg__unbox_opt_int_list(const tg_ivalue *v, tg_int_list *out)
{
    *out = TG_NO_INTS;
    return v->tag == TG_IV_NONE ? false : tg__unbox_int_list(v, out);
}
static inline TG__UNUSED bool tg__unbox_double(const tg_ivalue *v, double *out)
{
    if (v->tag == TG_IV_INT) *out = (double)v->v.i;
    else if (v->tag == TG_IV_BOOL) *out = v->v.b;
    else *out = v->v.d;
    return v->tag != TG_IV_DOUBLE && v->tag != TG_IV_INT && v->tag != TG_IV_BOOL;
}
static inline TG__UNUSED bool tg__unbox_opt_double(const tg_ivalue *v, tg_opt_float *out)
{
    double d = 0;
    *out = TG_NONE_FLOAT;
    if (v->tag == TG_IV_NONE) return false;
    if (tg__unbox_double(v, &d)) return true;
    *out = TG_OPT_FLOAT(d);
    return false;
}
static inline TG__UNUSED bool tg__unbox_bool(const tg_ivalue *v, bool *out)
{
    *out = v->v.b;
    return v->tag != TG_IV_BOOL;
}
static inline TG__UNUSED bool tg__unbox_opt_bool(const tg_ivalue *v, tg_opt_bool *out)
{
    *out = v->tag == TG_IV_BOOL ? TG_OPT_BOOL(v->v.b) : TG_NONE_BOOL;
    return v->tag != TG_IV_BOOL && v->tag != TG_IV_NONE;
}
static inline TG__UNUSED bool tg__unbox_dtype(const tg_ivalue *v, tg_dtype *out)
{
    *out = (tg_dtype)v->v.i;
    return v->tag != TG_IV_DTYPE;
}
static inline TG__UNUSED bool tg__unbox_opt_dtype(const tg_ivalue *v, tg_dtype *out)
{
    *out = v->tag == TG_IV_DTYPE ? (tg_dtype)v->v.i : TG_DTYPE_NONE;
    return v->tag != TG_IV_DTYPE && v->tag != TG_IV_NONE;
}
static inline TG__UNUSED bool tg__unbox_layout(const tg_ivalue *v, tg_layout *out)
{
    *out = (tg_layout)v->v.i;
    return v->tag != TG_IV_LAYOUT;
}
static inline TG__UNUSED bool tg__unbox_opt_layout(const tg_ivalue *v, tg_layout *out)
{
    *out = v->tag == TG_IV_LAYOUT ? (tg_layout)v->v.i : TG_LAYOUT_NONE;
    return v->tag != TG_IV_LAYOUT && v->tag != TG_IV_NONE;
}
static inline TG__UNUSED bool tg__unbox_device(const tg_ivalue *v, tg_device *out)
{
    *out = v->v.device;
    return v->tag != TG_IV_DEVICE;
}
static inline TG__UNUSED bool tg__unbox_opt_device(const tg_ivalue *v, tg_device *out)
{
    *out = v->tag == TG_IV_DEVICE ? v->v.device : TG_DEVICE_UNSET;
    return v->tag != TG_IV_DEVICE && v->tag != TG_IV_NONE;
}
static inline TG__UNUSED bool tg__unbox_memory_format(const tg_ivalue *v, tg_memory_format *out)
{
    *out = (tg_memory_format)v->v.i;
    return v->tag != TG_IV_MEMORY_FORMAT;
}
static inline TG__UNUSED bool tg__unbox_opt_memory_format(const tg_ivalue *v, tg_memory_format *out)
{
    *out = v->tag == TG_IV_MEMORY_FORMAT ? (tg_memory_format)v->v.i : TG_MEMORY_FORMAT_NONE;
    return v->tag != TG_IV_MEMORY_FORMAT && v->tag != TG_IV_NONE;
}
static inline TG__UNUSED bool tg__unbox_opt_generator(const tg_ivalue *v, tg_generator **out)
{
    *out = v->tag == TG_IV_GENERATOR ? v->v.g : NULL;
    return v->tag != TG_IV_GENERATOR && v->tag != TG_IV_NONE;
}
static inline TG__UNUSED bool tg__unbox_str(const tg_ivalue *v, const char **out)
{
    *out = v->tag == TG_IV_STRING ? v->v.s : NULL;
    return !*out;
}
static inline TG__UNUSED bool tg__unbox_opt_str(const tg_ivalue *v, const char **out)
{
    *out = v->tag == TG_IV_STRING ? v->v.s : NULL;
    return v->tag != TG_IV_STRING && v->tag != TG_IV_NONE;
}

/* ---- results: the stack takes the kernel's reference; each returns 0, or -1 when the
 * kernel failed (its error is recorded) ---- */

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
static inline TG__UNUSED int tg__push_int(tg_boxed_stack *s, int64_t v)
{
    s->v[s->n++] = (tg_ivalue){ .tag = TG_IV_INT, .v.i = v };
    return 0;
}
static inline TG__UNUSED int tg__push_double(tg_boxed_stack *s, double v)
{
    s->v[s->n++] = (tg_ivalue){ .tag = TG_IV_DOUBLE, .v.d = v };
    return 0;
}
static inline TG__UNUSED int tg__push_bool(tg_boxed_stack *s, bool v)
{
    s->v[s->n++] = (tg_ivalue){ .tag = TG_IV_BOOL, .v.b = v };
    return 0;
}
static inline TG__UNUSED int tg__push_dtype(tg_boxed_stack *s, tg_dtype v)
{
    if (v == TG_DTYPE_NONE) return -1; /* the kernel recorded its error */
    s->v[s->n++] = (tg_ivalue){ .tag = TG_IV_DTYPE, .v.i = v };
    return 0;
}
static inline TG__UNUSED int tg__push_qscheme(tg_boxed_stack *s, tg_quant_scheme v)
{
    if (v == TG_QSCHEME_NONE) return -1; /* the kernel recorded its error */
    s->v[s->n++] = (tg_ivalue){ .tag = TG_IV_QSCHEME, .v.i = v };
    return 0;
}
/* An int[] result: the stack takes over the kernel's array (the caller of tg_call_boxed frees
 * it with tg_int_list_release). */
static inline TG__UNUSED int tg__push_int_list(tg_boxed_stack *s, tg_int_list l)
{
    if (!l.data) return -1; /* the kernel recorded its error */
    if (s->n >= TG_STACK_MAX) {
        tg_int_list_release(l);
        return -1;
    }
    s->v[s->n++] = (tg_ivalue){ .tag = TG_IV_INT_LIST, .v.ints = l };
    return 0;
}

#endif
