/* Boxed calls by name: the one path shared by fallbacks, out-of-tree operators and dynamic
 * callers; it also runs the CUDA -> CPU fallback for operators without a CUDA kernel.
 * In-tree operators come from the generated table (tg__generated_ops), indexed once (sorted
 * by name, binary search; pthread_once makes the first lookup thread-safe); out-of-tree ones
 * from the registry. */
#include "dispatch/dispatch_private.h"
#include "profiler/profiler.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const tg_op_entry **index_;
static int nindex;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const tg_op_entry *const *)a)->name, (*(const tg_op_entry *const *)b)->name);
}

static void build_index(void)
{
    int n = 0;
    const tg_op_entry *ops = tg__generated_ops(&n);
    if (!ops || n <= 0) return;
    index_ = malloc((size_t)n * sizeof *index_);
    if (!index_) return; /* lookups then fail with "unknown operator" */
    for (int i = 0; i < n; i++) index_[i] = &ops[i];
    qsort(index_, (size_t)n, sizeof *index_, by_name);
    nindex = n;
}

const tg_op_entry *tg__find_op(const char *name)
{
    if (!name) return NULL;
    pthread_once(&index_once, build_index);
    const char *bare = strncmp(name, "aten::", 6) == 0 ? name + 6 : name;
    int lo = 0, hi = nindex - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(index_[mid]->name, bare);
        if (c == 0) return index_[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return tg__registry_find(name);
}

/* ---- the CUDA -> CPU fallback: copy device tensors to the CPU, run the CPU kernel, write
 * back what the kernel modified, and move results to the device ---- */

/* A CPU copy of a device tensor with the same strides: the bytes it can reach are copied into
 * a flat CPU tensor and viewed with t's geometry (so the copy's version counter tells whether
 * the kernel wrote into it). */
static tg_tensor *to_cpu(const char *op, const tg_tensor *t)
{
    const tg_device_allocator *a = tg__device_allocator((tg_device_type)t->device.type);
    if (!a) return tg__error(op, "no device backend to copy from");
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
        a->copy(tg_tensor_data(flat), TG_DEVICE_CPU, tg_tensor_data(t), t->device, nbytes)) {
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
    const tg_device_allocator *a = tg__device_allocator((tg_device_type)d->device.type);
    if (!a || !tg__is_contiguous(d))
        return tg__fail(
            op, "cannot write a CPU fallback result back into a non-contiguous device tensor");
    tg_tensor *cc = tg__contiguous(op, c);
    if (!cc) return -1;
    size_t nbytes = (size_t)tg__numel(cc) * tg_dtype_size(cc->dtype);
    int rc = nbytes
                 ? a->copy(tg_tensor_data(d), d->device, tg_tensor_data(cc), TG_DEVICE_CPU, nbytes)
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
 * argument, or a copy. 0, or -1 + error (the slot is then NULL). */
static int result_to_device(const char *op, tg_tensor **slot, const moved *mv, int nmv,
                            tg_device dev)
{
    tg_tensor *r = *slot, *d = NULL;
    if (!r || r->device.type != TG_CPU) return 0;
    for (int k = 0; k < nmv && !d; k++)
        if (mv[k].cpu == r) d = tg_retain(mv[k].orig);
    if (!d) d = to_device(op, r, dev);
    tg_release(r);
    *slot = d;
    return d ? 0 : -1;
}

/* Releases the results a kernel pushed (tensors and owned tensor and int lists). */
static void drop_results(tg_boxed_stack *s)
{
    for (int i = 0; i < s->n; i++) {
        if (s->v[i].tag == TG_IV_TENSOR) tg_release(s->v[i].v.t);
        if (s->v[i].tag == TG_IV_TENSOR_LIST) tg_tensor_list_release(s->v[i].v.tensors);
        if (s->v[i].tag == TG_IV_INT_LIST) tg_int_list_release(s->v[i].v.ints);
    }
    s->n = 0;
}

static int run_fallback(const tg_op_entry *e, tg_boxed_stack *s)
{
    tg__warn_once(e->name,
                  "%s: no CUDA kernel; falling back to the CPU kernel (arguments are "
                  "copied to the CPU and results back)",
                  e->name);
    moved mv[TG_STACK_MAX];
    tg_tensor **lists[TG_STACK_MAX] = { 0 }; /* CPU copies of tensor-list arguments */
    int64_t list_len[TG_STACK_MAX] = { 0 };
    int nmv = 0, nargs = s->n, rc = -1;
    tg_device dev = TG_DEVICE_CPU;
    for (int i = 0; i < nargs; i++) {
        tg_ivalue *v = &s->v[i];
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
    rc = e->call_boxed(e->kernels[TG_KEY_CPU], s);
    for (int k = 0; rc == 0 && k < nmv; k++) { /* in-place and out= arguments */
        tg_tensor *o = mv[k].orig, *c = mv[k].cpu;
        if (tg__version(c) == 0) continue;
        if (tg__resize_out(e->name, o, c->sizes, c->ndim) || to_device_into(e->name, o, c)) rc = -1;
    }
    bool have_results = rc == 0;
    for (int j = 0; rc == 0 && j < s->n; j++) { /* results */
        tg_ivalue *v = &s->v[j];
        if (v->tag == TG_IV_TENSOR) rc = result_to_device(e->name, &v->v.t, mv, nmv, dev);
        /* A Tensor[] result owns its array: its elements are replaced in place. */
        for (int64_t i = 0; v->tag == TG_IV_TENSOR_LIST && rc == 0 && i < v->v.tensors.len; i++)
            rc = result_to_device(e->name, (tg_tensor **)&v->v.tensors.data[i], mv, nmv, dev);
    }
    if (have_results && rc != 0) drop_results(s); /* the caller gets an error, not half a result */
out:
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

/* A boxed call consumes its arguments whether it succeeds or not. */
static int fail_and_drop(tg_boxed_stack *s)
{
    for (int i = 0; s && i < s->n; i++)
        if (s->v[i].tag == TG_IV_TENSOR) tg_release(s->v[i].v.t);
    if (s) s->n = 0;
    return -1;
}

/* Runs a kernel with scope recording suspended, like the generated stubs do. */
static int call_kernel(const tg_op_entry *e, tg_fnptr fn, tg_boxed_stack *s)
{
    int token = tg__scope_enter_kernel();
    int rc = fn ? e->call_boxed(fn, s) : run_fallback(e, s);
    tg__scope_leave_kernel(token);
    return rc;
}

/* call_kernel, recorded by the profiler. Every operator call passes here while the profiler
 * runs: the public stubs take their boxed path then (templates/tg_ops_stub.c.in). The inputs
 * are the stack's tensors; the device, the first one not on the CPU (a factory's device
 * argument too). */
static __attribute__((noinline)) int call_profiled(const tg_op_entry *e, tg_fnptr fn,
                                                   tg_boxed_stack *s)
{
    const tg_tensor *ins[TG_STACK_MAX];
    tg_device dev = TG_DEVICE_CPU;
    for (int i = 0; i < s->n; i++) {
        const tg_ivalue *v = &s->v[i];
        ins[i] = v->tag == TG_IV_TENSOR ? v->v.t : NULL;
        if (ins[i] && ins[i]->device.type != TG_CPU && dev.type == TG_CPU) dev = ins[i]->device;
        if (v->tag == TG_IV_DEVICE && v->v.device.type == TG_CUDA && dev.type == TG_CPU)
            dev = v->v.device;
        for (int64_t j = 0; v->tag == TG_IV_TENSOR_LIST && j < v->v.tensors.len; j++) {
            const tg_tensor *t = v->v.tensors.data[j];
            if (t && t->device.type != TG_CPU && dev.type == TG_CPU) dev = t->device;
        }
    }
    bool below = tg__excluded_keys() & (tg_keyset)1 << TG_KEY_AUTOGRAD;
    int64_t token = tg__prof_begin_op(e->name, ins, s->n, dev, below);
    int rc = call_kernel(e, fn, s);
    tg__prof_end(token);
    return rc;
}

int tg_call_boxed(const char *name, tg_boxed_stack *s)
{
    const tg_op_entry *e = tg__find_op(name);
    if (!e) {
        tg__error("call_boxed", "unknown operator '%s'", name ? name : "(null)");
        return fail_and_drop(s);
    }
    if (!s) return tg__fail(e->name, "no argument stack");
    tg_keyset ks = 0;
    for (int i = 0; i < s->n; i++) {
        const tg_ivalue *v = &s->v[i];
        if (v->tag == TG_IV_TENSOR && v->v.t) ks |= tg__tensor_keys(v->v.t);
        if (v->tag == TG_IV_TENSOR_LIST)
            for (int64_t j = 0; j < v->v.tensors.len; j++)
                if (v->v.tensors.data[j]) ks |= tg__tensor_keys(v->v.tensors.data[j]);
    }
    ks &= ~tg__excluded_keys();
    bool fallback = false;
    tg_fnptr fn = tg__dispatch_lookup(e, ks, &fallback);
    if (!e->call_boxed) {
        tg__error(e->name, "the operator has no boxed entry");
        return fail_and_drop(s);
    }
    if (!fn && !fallback) return fail_and_drop(s);
    if (TG__UNLIKELY(tg__prof_active())) return call_profiled(e, fallback ? NULL : fn, s);
    return call_kernel(e, fallback ? NULL : fn, s);
}
