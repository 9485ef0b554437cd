/* Which kernel serves each dispatch key of each operator (docs/generated-code.md, "Kernels"):
 *   - written kernels, from `dispatch:` or PyTorch's implicit CompositeImplicitAutograd rule;
 *   - structured glue: a functional or in-place entry calls its delegate's out= kernel with
 *     NULL outs (allocate) or out = self;
 *   - autogen glue: a synthesised out= entry calls its functional entry's kernel, then copies
 *     into `out`;
 *   - Scalar overload glue: a `scalar_overload_of:` entry wraps its Scalar arguments as
 *     tensors and calls its Tensor overload's public function (a CompositeImplicitAutograd
 *     kernel).
 * Glue kernels are kernels like any other: they fill the same row slots as the kernel they
 * wrap. */
#include <string.h>

#include "api/api.h"
#include "api/api_internal.h"
#include "base/strbuf.h"

static int key_slots(tgm_key key)
{
    switch (key) {
    case TGM_KEY_CPU: return TGA_SLOT_CPU;
    case TGM_KEY_CUDA: return TGA_SLOT_CUDA;
    /* Implicit composites also serve autograd: autograd flows through the ops they call. */
    case TGM_KEY_COMPOSITE_IMPLICIT: return TGA_SLOT_CPU | TGA_SLOT_CUDA | TGA_SLOT_AUTOGRAD;
    case TGM_KEY_COMPOSITE_EXPLICIT:
    case TGM_KEY_COMPOSITE_EXPLICIT_NONFUNCTIONAL: return TGA_SLOT_CPU | TGA_SLOT_CUDA;
    default: return 0;
    }
}

static tga_kernel *add_kernel(tgm_arena *a, tga_op *op)
{
    tga_kernel *k = tgm_alloc(a, sizeof *k * (size_t)(op->nkernels + 1));
    if (op->nkernels) memcpy(k, op->kernels, sizeof *k * (size_t)op->nkernels);
    op->kernels = k;
    return &k[op->nkernels++];
}

/* A glue kernel of op that calls `wrapped` with `call_args`: it takes wrapped's key and row
 * slots, and is named <prefix>__structured_<key>_<cname>, <prefix>__autogen_<key>_<cname> or
 * <prefix>__functional_<key>_<cname>. */
static void add_glue(tgm_arena *a, tga_op *op, const tga_kernel *wrapped, tga_origin origin,
                     const char *call_args, tgm_loc loc)
{
    tga_kernel *k = add_kernel(a, op);
    k->key = wrapped->key;
    k->symbol = tgs_fmt(a, "%s__%s_%s_%s", op->prefix,
                        origin == TGA_KERNEL_STRUCTURED ? "structured"
                        : origin == TGA_KERNEL_AUTOGEN  ? "autogen"
                                                        : "functional",
                        tga_key_prefix(wrapped->key), op->cname);
    k->slots = wrapped->slots;
    k->cuda_only = wrapped->cuda_only;
    k->origin = origin;
    k->target = wrapped->symbol;
    k->call_args = call_args;
    k->loc = loc;
}

/* The op of entry f, or (f NULL) of the entry named full_name: a hash lookup, since this runs
 * once per entry. */
static const tga_op *find_op(const tga_ops *ops, const tgm_func *f, const char *full_name)
{
    const char *name = f ? f->schema.full_name : full_name;
    const tga_op *op = name ? tgm__map_get(ops->by_name, name) : NULL;
    return op && (!f || op->f == f) ? op : NULL;
}

static const tga_arg *find_arg(const tga_op *op, const char *schema_name)
{
    for (int i = 0; i < op->nargs; i++)
        if (strcmp(op->args[i].arg->name, schema_name) == 0) return &op->args[i];
    return NULL;
}

static bool has_backend_kernel(const tga_op *op)
{
    for (int i = 0; i < op->nkernels; i++)
        if (op->kernels[i].key == TGM_KEY_CPU || op->kernels[i].key == TGM_KEY_CUDA) return true;
    return false;
}

/* Stubs in the CPU and CUDA slots of an op that has no kernel for them: each fails naming the
 * operator, the backend and `why` (docs/generated-code.md, "Missing kernels"). */
static void add_missing(tgm_arena *a, tga_op *op, const char *why, tgm_loc loc)
{
    static const tgm_key keys[] = { TGM_KEY_CPU, TGM_KEY_CUDA };
    for (int i = 0; i < 2; i++) {
        tga_kernel *k = add_kernel(a, op);
        k->key = keys[i];
        k->symbol = tgs_fmt(a, "%s__missing_%s_%s", op->prefix, tga_key_prefix(keys[i]), op->cname);
        k->slots = keys[i] == TGM_KEY_CPU ? TGA_SLOT_CPU : TGA_SLOT_CUDA;
        k->cuda_only = keys[i] == TGM_KEY_CUDA;
        k->origin = TGA_KERNEL_MISSING;
        k->call_args = why;
        k->loc = loc;
    }
}

/* "SparseCPU, MPS": the keys an entry names that tensorgen does not compile. */
static const char *other_keys(tgm_arena *a, const tgm_func *f)
{
    tgs_list l = { 0 };
    for (int i = 0; i < f->ndispatch; i++)
        if (f->dispatch[i].key == TGM_KEY_OTHER) tgs_list_add(&l, a, f->dispatch[i].key_name);
    return tgs_list_join(&l, a, ", ");
}

/* ------------------------------------------------------------------ written kernels */

/* A backend kernel (CPU, CUDA) takes its slot from a composite one, as in PyTorch. */
static void resolve_slots(tga_op *op)
{
    int specific = 0;
    for (int i = 0; i < op->nkernels; i++)
        if (op->kernels[i].key == TGM_KEY_CPU || op->kernels[i].key == TGM_KEY_CUDA)
            specific |= op->kernels[i].slots;
    for (int i = 0; i < op->nkernels; i++)
        if (op->kernels[i].key != TGM_KEY_CPU && op->kernels[i].key != TGM_KEY_CUDA)
            op->kernels[i].slots &= ~specific;
}

static int assign_written(tgm_arena *a, tga_op *op)
{
    const tgm_func *f = op->f;
    if (f->is_autogen || f->structured_delegate || f->scalar_overload_of) return 0;
    if (!f->has_dispatch) {
        tga_kernel *k = add_kernel(a, op);
        k->key = TGM_KEY_COMPOSITE_IMPLICIT;
        k->symbol = tga_kernel_symbol(a, op->prefix, k->key, op->cname);
        k->slots = key_slots(k->key);
        k->loc = f->loc;
        return 0;
    }
    int errors = 0;
    for (int i = 0; i < f->ndispatch; i++) {
        const tgm_dispatch_entry *d = &f->dispatch[i];
        if (d->key == TGM_KEY_OTHER) continue;
        tga_kernel *k = add_kernel(a, op);
        k->key = d->key;
        k->symbol = d->symbol ? d->symbol : tga_kernel_symbol(a, op->prefix, d->key, d->kernel);
        k->slots = key_slots(d->key);
        k->cuda_only = d->key == TGM_KEY_CUDA;
        k->loc = d->loc;
    }
    if (!has_backend_kernel(op) && (op->nkernels == 0 || f->structured)) {
        /* Only keys tensorgen does not compile (or a structured kernel only for those). */
        const char *keys = other_keys(a, f);
        add_missing(a, op,
                    *keys ? tgs_fmt(a, "its kernels are for %s", keys)
                          : "its `dispatch:` names no kernel",
                    f->loc);
    }
    resolve_slots(op);
    return errors;
}

/* ------------------------------------------------------------------ structured glue */

/* The argument an in-place entry writes: `self` (wherever it is), else its first
 * write-aliased positional argument. */
static const tga_arg *mutated_arg(const tga_op *op)
{
    int self = tgm_schema_self_index(&op->f->schema);
    if (self >= 0 && self < op->nargs && op->args[self].arg == &op->f->schema.args[self])
        return &op->args[self];
    for (int i = 0; i < op->nargs; i++)
        if (!op->args[i].arg->kwarg_only && op->args[i].arg->type.alias.is_write)
            return &op->args[i];
    return op->nargs ? &op->args[0] : NULL;
}

/* The delegate's arguments in its order, taken from `op` by name; out= arguments become NULL
 * (functional) or the mutated argument (in-place). */
static const char *delegate_call_args(tgm_arena *a, const tga_op *op, const tga_op *d, int *errors)
{
    bool inplace = op->f->schema.inplace || op->f->kind == TGM_KIND_INPLACE;
    const tga_arg *self = inplace ? mutated_arg(op) : NULL;
    int nouts = 0;
    tgs_list args = { 0 };
    for (int i = 0; i < d->nargs; i++) {
        const tga_arg *da = &d->args[i];
        if (tga_is_out_arg(da->arg)) {
            nouts++;
            tgs_list_add(&args, a, self ? self->name : "NULL");
            continue;
        }
        const tga_arg *oa = find_arg(op, da->arg->name);
        if (!oa || oa->kind != da->kind) {
            tgm_error(op->f->loc, "'%s' delegates to '%s', whose argument '%s' it %s",
                      op->f->schema.full_name, d->f->schema.full_name, da->arg->name,
                      oa ? "has with another type" : "does not have");
            (*errors)++;
        }
        tgs_list_add(&args, a, oa ? oa->name : da->name);
    }
    if (inplace && nouts != 1) {
        tgm_error(op->f->loc,
                  "in-place '%s' delegates to '%s', which has %d out= arguments "
                  "(one expected)",
                  op->f->schema.full_name, d->f->schema.full_name, nouts);
        (*errors)++;
    }
    return tgs_list_join(&args, a, ", ");
}

/* Whether two ops return results of the same kinds in the same order, whatever their result
 * structs are named (nll_loss_forward's `(Tensor output, Tensor total_weight)` and its
 * delegate's unnamed pair): the glue then copies the fields across. */
static bool same_results(const tga_op *x, const tga_op *y)
{
    if (x->nrets != y->nrets) return false;
    for (int i = 0; i < x->nrets; i++)
        if (x->rets[i].kind != y->rets[i].kind) return false;
    return true;
}

static int assign_structured(tgm_arena *a, const tga_ops *ops, tga_op *op)
{
    const tgm_func *f = op->f;
    if (!f->structured_delegate || f->is_autogen) return 0;
    const tga_op *d =
        f->delegate ? find_op(ops, f->delegate, NULL) : find_op(ops, NULL, f->structured_delegate);
    tgm_loc loc = f->structured_delegate_loc.line ? f->structured_delegate_loc : f->loc;
    if (!d) {
        tgm_error(loc, "structured_delegate '%s' of '%s' names no entry", f->structured_delegate,
                  f->schema.full_name);
        return 1;
    }
    if (!d->f->structured) {
        tgm_error(loc, "structured_delegate '%s' of '%s' is not `structured: True`",
                  f->structured_delegate, f->schema.full_name);
        return 1;
    }
    int errors = 0;
    const char *call_args = delegate_call_args(a, op, d, &errors);
    if (op->ret_ctype && d->ret_ctype && strcmp(op->ret_ctype, d->ret_ctype) != 0 &&
        !same_results(op, d)) {
        tgm_error(loc, "'%s' returns %s but its structured delegate '%s' returns %s",
                  f->schema.full_name, op->ret_ctype, d->f->schema.full_name, d->ret_ctype);
        errors++;
    }
    for (int i = 0; i < d->nkernels; i++)
        if (d->kernels[i].key == TGM_KEY_CPU || d->kernels[i].key == TGM_KEY_CUDA)
            add_glue(a, op, &d->kernels[i], TGA_KERNEL_STRUCTURED, call_args, loc);
    return errors;
}

/* ------------------------------------------------------------------ Scalar overload glue */

/* validate.c matched the schemas (tensor_overload is set only then), so the C kinds agree: a
 * double where the Tensor overload has a tg_tensor *, the same kind everywhere else. */
static void assign_scalar_overload(tgm_arena *a, const tga_ops *ops, tga_op *op)
{
    const tgm_func *f = op->f;
    const tga_op *t = f->tensor_overload ? find_op(ops, f->tensor_overload, NULL) : NULL;
    if (!t) return;
    op->tensor_overload = t;
    tga_kernel *k = add_kernel(a, op);
    k->key = TGM_KEY_COMPOSITE_IMPLICIT;
    k->symbol = tgs_fmt(a, "%s__scalar_overload_%s", op->prefix, op->cname);
    k->slots = key_slots(k->key);
    k->origin = TGA_KERNEL_SCALAR;
    k->target = t->fn_name;
    k->loc = f->scalar_overload_of_loc;
}

/* ------------------------------------------------------------------ autogen glue */

/* The functional entry an autogen'ed `X.Y_out` copies from: `X.Y` (or `X` for `X.out`). */
static const tga_op *autogen_functional(tgm_arena *a, const tga_ops *ops, const tga_op *op)
{
    const tgm_schema *s = &op->f->schema;
    const char *ov = s->overload ? s->overload : "";
    size_t n = strlen(ov);
    const tga_op *found = NULL;
    if (n >= 4 && strcmp(ov + n - 4, "_out") == 0)
        found = find_op(ops, NULL, tgs_fmt(a, "%s.%.*s", s->base, (int)(n - 4), ov));
    else if (strcmp(ov, "out") == 0) found = find_op(ops, NULL, s->base);
    if (!found && op->f->autogen_from && op->f->autogen_from->kind == TGM_KIND_FUNCTIONAL)
        found = find_op(ops, op->f->autogen_from, NULL);
    if (!found && op->f->functional) found = find_op(ops, op->f->functional, NULL);
    return found;
}

/* Whether every return of op and every out= argument is a plain Tensor. */
static bool tensors_only(const tga_op *op)
{
    for (int i = 0; i < op->nrets; i++)
        if (op->rets[i].kind != TGA_TENSOR) return false;
    for (int i = 0; i < op->nargs; i++)
        if (tga_is_out_arg(op->args[i].arg) && op->args[i].kind != TGA_TENSOR) return false;
    return true;
}

/* The functional variant of an in-place or mutable entry m (autogen.c: m's arguments without
 * `(a!)`, returning m's returns and then each written argument m does not return): glue that
 * clones the written arguments, calls m's kernel on the clones, and returns m's results and
 * the clones. Returns false when m has a form this glue does not cover (a written argument or
 * a result that is not a plain Tensor). */
static bool assign_functional(tgm_arena *a, const tga_ops *ops, tga_op *op, tgm_loc loc)
{
    const tga_op *m = find_op(ops, op->f->autogen_from, NULL);
    if (!m || !tensors_only(m) || !tensors_only(op) || m->nargs != op->nargs) return false;
    tgs_list args = { 0 };
    for (int i = 0; i < m->nargs; i++) {
        const tgm_arg *ma = m->args[i].arg;
        if (ma->type.alias.is_write && m->args[i].kind != TGA_TENSOR) return false;
        tgs_list_add(&args, a,
                     ma->type.alias.is_write ? tgs_fmt(a, "tg_c_%s", op->args[i].name)
                                             : op->args[i].name);
    }
    const char *call_args = tgs_list_join(&args, a, ", ");
    op->mutating = m;
    for (int i = 0; i < m->nkernels; i++)
        if (m->kernels[i].origin != TGA_KERNEL_MISSING && m->kernels[i].slots)
            add_glue(a, op, &m->kernels[i], TGA_KERNEL_FUNCTIONAL, call_args, loc);
    return true;
}

static int assign_autogen(tgm_arena *a, const tga_ops *ops, tga_op *op)
{
    const tgm_func *f = op->f;
    if (!f->is_autogen) return 0;
    tgm_loc loc = f->autogen_from && f->autogen_from->autogen_loc.line
                      ? f->autogen_from->autogen_loc
                      : f->loc;
    bool from_mutating = f->kind == TGM_KIND_FUNCTIONAL && f->autogen_from &&
                         f->autogen_from->kind != TGM_KIND_FUNCTIONAL;
    if (from_mutating) {
        if (!assign_functional(a, ops, op, loc))
            add_missing(a, op,
                        tgs_fmt(a,
                                "tgen synthesises the functional variant of '%s' only where "
                                "what it writes and returns are Tensors",
                                f->autogen_from->schema.full_name),
                        loc);
        else if (!op->nkernels)
            add_missing(a, op,
                        tgs_fmt(a, "'%s', whose functional variant it is, has no kernel",
                                f->autogen_from->schema.full_name),
                        loc);
        return 0;
    }
    const tga_op *fn = autogen_functional(a, ops, op);
    if (!fn) {
        add_missing(a, op,
                    tgs_fmt(a,
                            "tgen synthesises out= entries from a functional entry, and "
                            "'%s' has none",
                            f->schema.full_name),
                    loc);
        return 0;
    }
    int errors = 0, nouts = 0;
    for (int i = 0; i < op->nargs; i++) nouts += tga_is_out_arg(op->args[i].arg);
    if (nouts != fn->nrets || !tensors_only(fn) || !tensors_only(op)) {
        add_missing(a, op,
                    tgs_fmt(a,
                            "tgen synthesises out= glue for Tensor results, and '%s' returns "
                            "%s",
                            fn->f->schema.full_name, fn->ret_ctype ? fn->ret_ctype : "other"),
                    loc);
        return 0;
    }
    tgs_list args = { 0 };
    for (int i = 0; i < fn->nargs; i++) {
        const tga_arg *oa = find_arg(op, fn->args[i].arg->name);
        if (!oa || oa->kind != fn->args[i].kind) {
            tgm_error(loc, "autogen '%s': argument '%s' of '%s' is missing or has another type",
                      f->schema.full_name, fn->args[i].arg->name, fn->f->schema.full_name);
            errors++;
        }
        tgs_list_add(&args, a, oa ? oa->name : fn->args[i].name);
    }
    const char *call_args = tgs_list_join(&args, a, ", ");
    for (int i = 0; i < fn->nkernels; i++)
        if (fn->kernels[i].origin != TGA_KERNEL_MISSING)
            add_glue(a, op, &fn->kernels[i], TGA_KERNEL_AUTOGEN, call_args, loc);
    if (!errors && !op->nkernels)
        add_missing(
            a, op,
            tgs_fmt(a, "'%s', whose out= variant it is, has no kernel", fn->f->schema.full_name),
            loc);
    return errors;
}

/* ------------------------------------------------------------------ consistency */

/* The kernel a written (or implicit composite) symbol stands for, and where it was named. */
typedef struct kernel_name {
    const char *written; /* without PyTorch's default `at::native::` */
    const tga_op *op;
    tgm_loc loc;
} kernel_name;

static const char *without_native(const char *kernel)
{
    return strncmp(kernel, "at::native::", 12) ? kernel : kernel + 12;
}

/* Distinct kernel names must make distinct symbols: `a::b_c` and `a_b::c` both make
 * tg__cpu_a_b_c, which would silently be one kernel. Reported once, at the second name.
 * (`at::native::foo` and `foo` are one kernel, as in PyTorch, and share a symbol.) */
static int check_kernel_names(tgm_arena *a, const tga_ops *ops)
{
    int errors = 0;
    tgm_name_map *first = tgm__map_new(a);
    for (int i = 0; i < ops->n; i++) {
        const tga_op *op = &ops->ops[i];
        const tgm_func *f = op->f;
        if (f->is_autogen || f->structured_delegate || f->scalar_overload_of) continue;
        int n = f->has_dispatch ? f->ndispatch : 1;
        for (int k = 0; k < n; k++) {
            const tgm_dispatch_entry *d = f->has_dispatch ? &f->dispatch[k] : NULL;
            tgm_key key = d ? d->key : TGM_KEY_COMPOSITE_IMPLICIT;
            const char *written = without_native(d ? d->kernel : op->cname);
            const char *symbol =
                d && d->symbol ? d->symbol : tga_kernel_symbol(a, op->prefix, key, written);
            if (!symbol) continue;
            kernel_name *kn = tgm_alloc(a, sizeof *kn);
            *kn = (kernel_name){ written, op, d ? d->loc : f->loc };
            const kernel_name *o = tgm__map_put(first, symbol, kn);
            if (!o || !strcmp(o->written, written)) continue;
            tgm_error(kn->loc,
                      "kernel '%s' of '%s' makes the C symbol %s, as kernel '%s' of '%s' at "
                      "%s:%d:%d does ('::' is written '_'); rename one of them",
                      written, f->schema.full_name, symbol, o->written, o->op->f->schema.full_name,
                      o->loc.file, o->loc.line, o->loc.col);
            errors++;
        }
    }
    return errors;
}

/* PyTorch names one kernel for overloads of different C++ types (`CompositeExplicitAutograd:
 * randn` on randn, randn.generator, randn.names), which C++ overloading resolves. In C a symbol
 * has one type: when the entries naming a written kernel disagree on its type, each gets its
 * own symbol, the kernel's with `__` and the entry's C name appended
 * (tg__composite_randn__randn_generator; docs/generated-code.md, "Kernels"). Entries that
 * agree share the symbol. Runs before glue is assigned, so glue calls the final symbols. */
static void split_overloaded_kernels(tgm_arena *a, tga_ops *ops)
{
    tgm_name_map *first = tgm__map_new(a), *overloaded = tgm__map_new(a);
    for (int i = 0; i < ops->n; i++) {
        tga_op *op = &ops->ops[i];
        for (int k = 0; k < op->nkernels; k++) {
            const tga_op *o = tgm__map_put(first, op->kernels[k].symbol, op);
            if (o && strcmp(o->ksig, op->ksig)) tgm__map_put(overloaded, op->kernels[k].symbol, op);
        }
    }
    for (int i = 0; i < ops->n; i++) {
        tga_op *op = &ops->ops[i];
        for (int k = 0; k < op->nkernels; k++)
            if (tgm__map_get(overloaded, op->kernels[k].symbol))
                op->kernels[k].symbol = tgs_fmt(a, "%s__%s", op->kernels[k].symbol, op->cname);
    }
}

/* One symbol, one prototype: kernels shared between entries must have one signature. Each
 * use of a symbol is compared with its first use (a map: comparing with every earlier op was
 * quadratic in the number of entries). */
static int check_kernel_symbols(tgm_arena *a, const tga_ops *ops)
{
    int errors = 0;
    tgm_name_map *first_use = tgm__map_new(a);
    for (int i = 0; i < ops->n; i++) {
        const tga_op *op = &ops->ops[i];
        for (int k = 0; k < op->nkernels; k++) {
            const tga_kernel *ki = &op->kernels[k];
            const tga_op *o = tgm__map_put(first_use, ki->symbol, (void *)op);
            if (!o || o == op || strcmp(o->ksig, op->ksig) == 0) continue;
            /* Ops of one C name: check_public_names reported them, and their kernels' split
             * symbols (symbol__cname) are equal for that reason only. */
            if (!strcmp(o->cname, op->cname)) continue;
            tgm_error(ki->loc,
                      "kernel %s of '%s' has type %s, but '%s' at %s:%d:%d "
                      "uses it as %s",
                      ki->symbol, op->f->schema.full_name, op->ksig, o->f->schema.full_name,
                      o->f->loc.file, o->f->loc.line, o->f->loc.col, o->ksig);
            errors++;
        }
    }
    return errors;
}

int tga_assign_kernels(tgm_arena *a, tga_ops *ops)
{
    int errors = 0;
    /* Written kernels first: glue wraps them; autogen may wrap structured glue. */
    for (int i = 0; i < ops->n; i++) errors += assign_written(a, &ops->ops[i]);
    errors += check_kernel_names(a, ops);
    split_overloaded_kernels(a, ops);
    for (int i = 0; i < ops->n; i++) assign_scalar_overload(a, ops, &ops->ops[i]);
    for (int i = 0; i < ops->n; i++) errors += assign_structured(a, ops, &ops->ops[i]);
    for (int i = 0; i < ops->n; i++) errors += assign_autogen(a, ops, &ops->ops[i]);
    for (int i = 0; i < ops->n; i++) {
        tga_op *op = &ops->ops[i];
        if (op->f->structured_delegate && !op->f->is_autogen)
            op->delegate = op->nkernels ? find_op(ops, NULL, op->f->structured_delegate) : NULL;
        if (op->f->is_autogen && !op->mutating) op->functional = autogen_functional(a, ops, op);
    }
    errors += check_kernel_symbols(a, ops);
    return errors;
}
