/* Boxed calls: the one path shared by calls by name, the generated functions' slow path
 * (boxed kernels, fallbacks, CUDA's CPU fallback among them, the profiler) and operator
 * libraries.
 * tensorgen's own operators come from the generated table (tg__generated_ops), indexed once
 * (sorted by name, binary search; pthread_once makes the first lookup thread-safe);
 * libraries' operators from the registry. */
#include "dispatch/dispatch_private.h"
#include "profiler/profiler.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static tg_op_entry **index_;
static int nindex;
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static int by_name(const void *a, const void *b)
{
    return strcmp((*(tg_op_entry *const *)a)->name, (*(tg_op_entry *const *)b)->name);
}

static void build_index(void)
{
    int n = 0;
    tg_op_entry *const *ops = tg__generated_ops(&n);
    if (!ops || n <= 0) return;
    index_ = malloc((size_t)n * sizeof *index_);
    if (!index_) return; /* lookups then fail with "unknown operator" */
    for (int i = 0; i < n; i++) index_[i] = ops[i];
    qsort(index_, (size_t)n, sizeof *index_, by_name);
    nindex = n;
}

tg_op_entry *tg__builtin_find(const char *name)
{
    pthread_once(&index_once, build_index);
    int lo = 0, hi = nindex - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(index_[mid]->name, name);
        if (c == 0) return index_[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

const tg_op_entry *tg_op_find(const char *name)
{
    const char *op = "op_find";
    if (!name) return tg__error(op, "unknown operator '(null)'");
    const tg_op_entry *e = tg__registry_find(name);
    if (e) return e;
    const char *like = strstr(name, "::") ? NULL : tg__registry_suggest(name);
    if (like)
        return tg__error(op,
                         "unknown operator '%s' (did you mean '%s'? a library's operators "
                         "are called with their namespace)",
                         name, like);
    return tg__error(op, "unknown operator '%s'", name);
}

const char *tg_op_name(const tg_op_entry *op) { return op ? op->name : NULL; }
const char *tg_op_schema(const tg_op_entry *op) { return op ? op->schema : NULL; }
int tg_op_num_arguments(const tg_op_entry *op) { return op ? op->nargs : -1; }

const char *tg_ivalue_tag_name(tg_ivalue_tag tag)
{
    static const char *const names[] = {
        [TG_IV_NONE] = "None",
        [TG_IV_TENSOR] = "Tensor",
        [TG_IV_INT] = "int",
        [TG_IV_DOUBLE] = "float",
        [TG_IV_BOOL] = "bool",
        [TG_IV_INT_LIST] = "int[]",
        [TG_IV_TENSOR_LIST] = "Tensor[]",
        [TG_IV_DTYPE] = "ScalarType",
        [TG_IV_DEVICE] = "Device",
        [TG_IV_STRING] = "str",
        [TG_IV_GENERATOR] = "Generator",
        [TG_IV_LAYOUT] = "Layout",
        [TG_IV_MEMORY_FORMAT] = "MemoryFormat",
        [TG_IV_FLOAT_LIST] = "float[]",
        [TG_IV_BOOL_LIST] = "bool[]",
        [TG_IV_STR_LIST] = "str[]",
        [TG_IV_STORAGE] = "Storage",
        [TG_IV_QUANTIZER] = "ConstQuantizerPtr",
        [TG_IV_QSCHEME] = "QScheme",
    };
    return (unsigned)tag < sizeof names / sizeof names[0] && names[tag] ? names[tag] : "?";
}

void tg_boxed_clear(tg_boxed_stack *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        if (s->v[i].tag == TG_IV_TENSOR) tg_release(s->v[i].v.t);
        if (s->v[i].tag == TG_IV_TENSOR_LIST) tg_tensor_list_release(s->v[i].v.tensors);
        if (s->v[i].tag == TG_IV_INT_LIST) tg_int_list_release(s->v[i].v.ints);
    }
    s->n = 0;
}

/* A boxed call consumes its arguments whether it succeeds or not: on failure, the tensor
 * references the stack owns are released (lists among arguments are borrowed). */
static int fail_and_drop(tg_boxed_stack *s)
{
    for (int i = 0; s && i < s->n; i++)
        if (s->v[i].tag == TG_IV_TENSOR) tg_release(s->v[i].v.t);
    if (s) s->n = 0;
    return -1;
}

/* ---- the CPU fallback: copy device tensors to the CPU, run the CPU kernel, write back what
 * the kernel modified, and move results to the device ---- */

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
        return fail_and_drop(s);
    }
    tg_fnptr cpu = tg__row_kernel(e, TG_KEY_CPU);
    if (!cpu) {
        tg__error(e->name, "no CPU kernel to fall back to");
        return fail_and_drop(s);
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
    if (rc != 0 && !have_results) fail_and_drop(s);
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
        return fail_and_drop(s);
    }
    tg__warn_once(e->name,
                  "%s: no CUDA kernel; falling back to the CPU kernel (arguments are copied to "
                  "the CPU and results back)",
                  e->name);
    return tg_call_boxed_cpu(e, s);
}

/* ---- calls ---- */

/* Runs what serves the call, with scope recording suspended, like the generated stubs do. */
static int run(const tg_op_entry *e, const tg__resolved *r, tg_keyset ks, tg_boxed_stack *s)
{
    int token = tg_scope_suspend();
    int rc = r->kernel ? e->call_boxed(r->kernel, s) : r->boxed(e, ks, s, r->ctx);
    tg_scope_resume(token);
    return rc;
}

/* run, recorded by the profiler. Every operator call passes here while the profiler runs: the
 * generated functions take their boxed path then (templates/tg_ops_stub.c.in). The inputs are
 * the stack's tensors; the device, the first one not on the CPU (a factory's device argument
 * too). */
static __attribute__((noinline)) int run_profiled(const tg_op_entry *e, const tg__resolved *r,
                                                  tg_keyset ks, tg_boxed_stack *s)
{
    const tg_tensor *ins[TG_STACK_MAX];
    tg_device dev = TG_DEVICE_CPU;
    for (int i = 0; i < s->n; i++) {
        const tg_ivalue *v = &s->v[i];
        ins[i] = v->tag == TG_IV_TENSOR ? v->v.t : NULL;
        if (ins[i] && ins[i]->device.type != TG_CPU && dev.type == TG_CPU) dev = ins[i]->device;
        if (v->tag == TG_IV_DEVICE && v->v.device.type > TG_CPU && dev.type == TG_CPU)
            dev = v->v.device;
        for (int64_t j = 0; v->tag == TG_IV_TENSOR_LIST && j < v->v.tensors.len; j++) {
            const tg_tensor *t = v->v.tensors.data[j];
            if (t && t->device.type != TG_CPU && dev.type == TG_CPU) dev = t->device;
        }
    }
    bool below = tg_dispatch_excluded_keys() & TG__KEY(TG_KEY_AUTOGRAD);
    int64_t token = tg__prof_begin_op(e->name, ins, s->n, dev, below);
    int rc = run(e, r, ks, s);
    tg__prof_end(token);
    return rc;
}

int tg_call_boxed_op(const tg_op_entry *e, tg_boxed_stack *s)
{
    if (!e) return fail_and_drop(s); /* tg_op_find recorded why */
    if (!s) return tg__fail(e->name, "no argument stack");
    if (s->n != e->nargs) {
        tg__error(e->name, "a boxed call takes %d argument%s, the stack holds %d", e->nargs,
                  e->nargs == 1 ? "" : "s", s->n);
        return fail_and_drop(s);
    }
    if (!e->call_boxed) {
        tg__error(e->name, "the operator has no boxed entry");
        return fail_and_drop(s);
    }
    tg_keyset ks = 0, device_arg = 0;
    for (int i = 0; i < s->n; i++) {
        const tg_ivalue *v = &s->v[i];
        if (v->tag == TG_IV_TENSOR && v->v.t) ks |= tg_dispatch_tensor_keys(v->v.t);
        if (v->tag == TG_IV_DEVICE && tg__valid_device_type(v->v.device.type))
            device_arg = TG__KEY(v->v.device.type);
        if (v->tag == TG_IV_TENSOR_LIST)
            for (int64_t j = 0; j < v->v.tensors.len; j++)
                if (v->v.tensors.data[j]) ks |= tg_dispatch_tensor_keys(v->v.tensors.data[j]);
    }
    /* A factory (no tensor) runs where its device argument says, as its generated function. */
    ks = (ks ? ks : device_arg) & ~tg_dispatch_excluded_keys();
    tg__resolved r;
    if (tg__dispatch_resolve(e, ks, &r)) return fail_and_drop(s);
    if (TG__UNLIKELY(tg__prof_active())) return run_profiled(e, &r, ks, s);
    return run(e, &r, ks, s);
}

int tg_call_boxed(const char *name, tg_boxed_stack *s)
{
    const tg_op_entry *e = tg_op_find(name);
    if (!e) return fail_and_drop(s);
    return tg_call_boxed_op(e, s);
}
