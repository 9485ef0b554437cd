/* Boxed calls: the one path shared by calls by name, the generated functions' slow path
 * (boxed kernels, fallbacks, CUDA's CPU fallback among them, the profiler) and operator
 * libraries. Operators are found by name in the registry (tensorgen's own and libraries'). */
#include "dispatch/dispatch_private.h"
#include "profiler/profiler.h"

#include <string.h>

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
    if (!e) return tg__boxed_fail(s); /* tg_op_find recorded why */
    if (!s) return tg__fail(e->name, "no argument stack");
    if (s->n != e->nargs) {
        tg__error(e->name, "a boxed call takes %d argument%s, the stack holds %d", e->nargs,
                  e->nargs == 1 ? "" : "s", s->n);
        return tg__boxed_fail(s);
    }
    if (!e->call_boxed) {
        tg__error(e->name, "the operator has no boxed entry");
        return tg__boxed_fail(s);
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
    if (tg__dispatch_resolve(e, ks, &r)) return tg__boxed_fail(s);
    if (TG__UNLIKELY(tg__prof_active())) return run_profiled(e, &r, ks, s);
    return run(e, &r, ks, s);
}

int tg_call_boxed(const char *name, tg_boxed_stack *s)
{
    const tg_op_entry *e = tg_op_find(name);
    if (!e) return tg__boxed_fail(s);
    return tg_call_boxed_op(e, s);
}
