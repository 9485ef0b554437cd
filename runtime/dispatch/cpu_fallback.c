/* The CPU fallback (PyTorch's cpu_fallback): copy device tensors to the CPU, run the CPU
 * kernel, write back what the kernel modified, and move results to the device. CUDA's fallback
 * is built on it (tg__cuda_cpu_fallback, which the registry holds from the start); a backend's
 * boxed fallback may call tg_call_boxed_cpu too. */
#include "dispatch/dispatch_private.h"

#include <stdlib.h>

/* A CPU copy of a device tensor with the same strides: the bytes it can reach are copied into
 * a flat CPU tensor and viewed with t's geometry (so the copy's version counter tells whether
 * the kernel wrote into it). */
static tg_tensor *to_cpu(const char *op, const tg_tensor *t)
{
    const tg_device_hooks *h = tg__device_hooks((tg_device_type)t->device.type);
    if (!h) return tg__error(op, "no device backend to copy from");
    int64_t span = 1;
    for (int64_t i = 0; i < t->ndim; i++) {
        if (t->strides[i] < 0) return tg__error(op, "negative strides are not supported");
        if (t->sizes[i] == 0) span = 0;
    }
    if (span)
        for (int64_t i = 0; i < t->ndim; i++) span += (t->sizes[i] - 1) * t->strides[i];
    tg_tensor *flat = tg__empty(op, &span, 1, t->dtype, TG_DEVICE_CPU);
    if (!flat) return NULL;
    size_t nbytes = (size_t)span * tg_dtype_size(t->dtype);
    if (nbytes &&
        h->copy(tg_tensor_data(flat), TG_DEVICE_CPU, tg_tensor_data(t), t->device, nbytes)) {
        tg_release(flat);
        return NULL;
    }
    tg_tensor *v = tg__make_view(flat, t->sizes, t->strides, t->ndim, 0);
    tg_release(flat);
    return v;
}

/* Copies CPU tensor c into device tensor d (same shape; d contiguous). */
static int to_device_into(const char *op, tg_tensor *d, tg_tensor *c)
{
    const tg_device_hooks *h = tg__device_hooks((tg_device_type)d->device.type);
    if (!h || !tg__is_contiguous(d))
        return tg__fail(
            op, "cannot write a CPU fallback result back into a non-contiguous device tensor");
    tg_tensor *cc = tg__contiguous(op, c);
    if (!cc) return -1;
    size_t nbytes = (size_t)tg__numel(cc) * tg_dtype_size(cc->dtype);
    int rc = nbytes
                 ? h->copy(tg_tensor_data(d), d->device, tg_tensor_data(cc), TG_DEVICE_CPU, nbytes)
                 : 0;
    tg_release(cc);
    if (rc == 0) tg__bump_version(d);
    return rc;
}

static tg_tensor *to_device(const char *op, tg_tensor *c, tg_device dev)
{
    tg_tensor *d = tg__empty(op, c->sizes, c->ndim, c->dtype, dev);
    if (d && to_device_into(op, d, c)) {
        tg_release(d);
        d = NULL;
    }
    return d;
}

typedef struct moved {
    tg_tensor *orig, *cpu;
} moved; /* owned references */

/* Result *slot (owned) of the CPU kernel, on the device: the original of an in-place/out=
 * argument, or a copy; a CPU argument returned as it is stays (copy_(cpu, device_tensor)).
 * 0, or -1 + error (the slot is then NULL). */
static int result_to_device(const char *op, tg_tensor **slot, const moved *mv, int nmv,
                            tg_tensor *const *cpu_args, int ncpu, tg_device dev)
{
    tg_tensor *r = *slot, *d = NULL;
    if (!r || r->device.type != TG_CPU) return 0;
    for (int k = 0; k < ncpu; k++)
        if (cpu_args[k] == r) return 0;
    for (int k = 0; k < nmv && !d; k++)
        if (mv[k].cpu == r) d = tg_retain(mv[k].orig);
    if (!d) d = to_device(op, r, dev);
    tg_release(r);
    *slot = d;
    return d ? 0 : -1;
}

int tg_call_boxed_cpu(const tg_op_entry *e, tg_boxed_stack *s)
{
    if (!e || !s) {
        tg__error("call_boxed_cpu", "no %s", e ? "argument stack" : "operator");
        return tg__boxed_fail(s);
    }
    tg_fnptr cpu = tg__row_kernel(e, TG_KEY_CPU);
    if (!cpu) {
        tg__error(e->name, "no CPU kernel to fall back to");
        return tg__boxed_fail(s);
    }
    moved mv[TG_STACK_MAX];
    tg_tensor *cpu_args[TG_STACK_MAX];       /* arguments already on the CPU (borrowed) */
    tg_tensor **lists[TG_STACK_MAX] = { 0 }; /* CPU copies of tensor-list arguments */
    int64_t list_len[TG_STACK_MAX] = { 0 };
    int nmv = 0, ncpu = 0, nargs = s->n, rc = -1;
    bool have_results = false;
    tg_device dev = TG_DEVICE_CPU;
    for (int i = 0; i < nargs; i++) {
        tg_ivalue *v = &s->v[i];
        if (v->tag == TG_IV_TENSOR && v->v.t && v->v.t->device.type == TG_CPU)
            cpu_args[ncpu++] = v->v.t;
        if (v->tag == TG_IV_TENSOR && v->v.t && v->v.t->device.type != TG_CPU) {
            tg_tensor *c = to_cpu(e->name, v->v.t);
            if (!c) goto out;
            dev = v->v.t->device;
            mv[nmv].orig = v->v.t; /* the stack's reference moves here */
            mv[nmv++].cpu = tg_retain(c);
            v->v.t = c;
        } else if (v->tag == TG_IV_TENSOR_LIST && v->v.tensors.len > 0) {
            int64_t n = v->v.tensors.len;
            lists[i] = calloc((size_t)n, sizeof(tg_tensor *));
            if (!lists[i]) {
                tg__error(e->name, "out of memory");
                goto out;
            }
            list_len[i] = n;
            for (int64_t j = 0; j < n; j++) {
                tg_tensor *t = v->v.tensors.data[j];
                if (t && t->device.type != TG_CPU) dev = t->device;
                lists[i][j] = !t                         ? NULL
                              : t->device.type == TG_CPU ? tg_retain(t)
                                                         : to_cpu(e->name, t);
                if (t && !lists[i][j]) goto out;
            }
            v->v.tensors.data = lists[i];
        }
    }
    rc = e->call_boxed(cpu, s);
    for (int k = 0; rc == 0 && k < nmv; k++) { /* in-place and out= arguments */
        tg_tensor *o = mv[k].orig, *c = mv[k].cpu;
        if (tg__version(c) == 0) continue;
        if (tg__resize_out(e->name, o, c->sizes, c->ndim) || to_device_into(e->name, o, c)) rc = -1;
    }
    have_results = rc == 0;
    for (int j = 0; rc == 0 && j < s->n; j++) { /* results */
        tg_ivalue *v = &s->v[j];
        if (v->tag == TG_IV_TENSOR)
            rc = result_to_device(e->name, &v->v.t, mv, nmv, cpu_args, ncpu, dev);
        /* A Tensor[] result owns its array: its elements are replaced in place. */
        for (int64_t i = 0; v->tag == TG_IV_TENSOR_LIST && rc == 0 && i < v->v.tensors.len; i++)
            rc = result_to_device(e->name, (tg_tensor **)&v->v.tensors.data[i], mv, nmv, cpu_args,
                                  ncpu, dev);
    }
    if (have_results && rc != 0) tg_boxed_clear(s); /* an error, not half a result */
out:
    if (rc != 0 && !have_results) tg__boxed_fail(s);
    for (int k = 0; k < nmv; k++) {
        tg_release(mv[k].orig);
        tg_release(mv[k].cpu);
    }
    for (int i = 0; i < nargs; i++) {
        if (!lists[i]) continue;
        for (int64_t j = 0; j < list_len[i]; j++) tg_release(lists[i][j]);
        free(lists[i]);
    }
    return rc;
}

int tg__cuda_cpu_fallback(const tg_op_entry *e, tg_keyset ks, tg_boxed_stack *s, void *ctx)
{
    (void)ks;
    (void)ctx;
    if (!tg__row_kernel(e, TG_KEY_CPU)) {
        tg__no_kernel(e, TG_KEY_CUDA);
        return tg__boxed_fail(s);
    }
    tg__warn_once(e->name,
                  "%s: no CUDA kernel; falling back to the CPU kernel (arguments are copied to "
                  "the CPU and results back)",
                  e->name);
    return tg_call_boxed_cpu(e, s);
}
