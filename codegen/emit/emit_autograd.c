/* generated/tg_autograd.c and generated/tg_grad_op_list.h (docs/generated-code.md,
 * "Autograd"): per derivative entry its backward node and its descriptor, per operator its
 * autograd kernel (emit_autograd_node.c, emit_autograd_entry.c, emit_autograd_kernel.c), and
 * the operator calls the runtime's engine needs. The fixed text is in
 * templates/tg_autograd*.c.in; the protocol the kernels follow is the runtime's
 * (runtime/autograd/record.h). */
#include <string.h>

#include "emit/emit_autograd.h"

/* The sections of an autograd shard. */
enum { PROTOS, NODES, KERNELS };

tge_ag_templates tge_ag_load_templates(tge_ctx *c)
{
    return (tge_ag_templates){
        .node = tge_template(c, "tg_autograd_node.c.in"),
        .node_type = tge_template(c, "tg_autograd_node_type.c.in"),
        .not_generated = tge_template(c, "tg_autograd_not_generated.c.in"),
        .entry = tge_template(c, "tg_autograd_entry.c.in"),
        .table = tge_template(c, "tg_autograd_table.c.in"),
        .array = tge_template(c, "tg_autograd_array.c.in"),
        .input = tge_template(c, "tg_autograd_input.c.in"),
        .save = tge_template(c, "tg_autograd_save.c.in"),
        .output = tge_template(c, "tg_autograd_output.c.in"),
        .term = tge_template(c, "tg_autograd_term.c.in"),
        .formula = tge_template(c, "tg_autograd_formula.c.in"),
        .dim = tge_template(c, "tg_autograd_dim.c.in"),
        .kernel = tge_template(c, "tg_autograd_kernel.c.in"),
        .out = tge_template(c, "tg_autograd_out.c.in"),
    };
}

/* ------------------------------------------------------------------ engine calls */

/* The operators tg_autograd_engine.c.in calls, each with the schema its call is written for
 * (in the message of a spec that lacks one) and the arguments it passes by name, with their C
 * types and values; the other parameters must have defaults. The call is written with the C
 * names tgen derives for the spec (docs/c-api.md "Names": `tg_sum(...)` for the project's
 * spec, `tg_sum_dim_intlist(...)` for PyTorch's), into the template's hole of the same key. */
typedef struct engine_arg {
    const char *name, *ctype, *value;
} engine_arg;

/* The engine's calls come in groups, each rendered by its template or, when the spec lacks one
 * of the group's operators, by the template reporting that. */
enum { ENGINE_BACKWARD, ENGINE_CLONE, ENGINE_FORWARD, ENGINE_GROUPS };
static const char *const engine_templates[ENGINE_GROUPS][2] = {
    [ENGINE_BACKWARD] = { "tg_autograd_engine.c.in", "tg_autograd_engine_missing.c.in" },
    [ENGINE_CLONE] = { "tg_autograd_engine_clone.c.in", "tg_autograd_engine_clone_missing.c.in" },
    [ENGINE_FORWARD] = { "tg_autograd_engine_fw.c.in", "tg_autograd_engine_fw_missing.c.in" },
};

static const struct engine_op {
    int group;
    const char *key, *full_name, *schema;
    engine_arg args[4];
} engine_ops[] = {
    { ENGINE_BACKWARD,
      "zeros",
      "zeros",
      "zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None) -> Tensor",
      { { "size", "tg_int_list", "((tg_int_list){ .len = m->ndim, .data = m->sizes })" },
        { "dtype", "tg_dtype", "m->dtype" },
        { "device", "tg_device", "m->device" } } },
    { ENGINE_BACKWARD,
      "sum",
      "sum.dim_IntList",
      "sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
      "dtype=None) -> Tensor",
      { { "self", "tg_tensor *", "r" },
        { "dim", "tg_int_list", "((tg_int_list){ .len = nd, .data = dims })" },
        { "keepdim", "bool", "true" } } },
    { ENGINE_BACKWARD,
      "reshape",
      "reshape",
      "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
      { { "self", "tg_tensor *", "s" },
        { "shape", "tg_int_list", "((tg_int_list){ .len = m->ndim, .data = m->sizes })" } } },
    { ENGINE_BACKWARD,
      "to",
      "to.dtype",
      "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
      "MemoryFormat? memory_format=None) -> Tensor(a)",
      { { "self", "tg_tensor *", "r" }, { "dtype", "tg_dtype", "m->dtype" } } },
    { ENGINE_BACKWARD,
      "add",
      "add.Tensor",
      "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      { { "self", "tg_tensor *", "a" }, { "other", "tg_tensor *", "b" } } },
    { ENGINE_FORWARD,
      "alias",
      "view",
      "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
      { { "self", "tg_tensor *", "t" },
        { "size", "tg_int_list",
          "((tg_int_list){ .len = tg_tensor_dim(t), .data = tg_tensor_sizes(t) })" } } },
    { ENGINE_FORWARD,
      "sub",
      "sub.Tensor",
      "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      { { "self", "tg_tensor *", "a" }, { "other", "tg_tensor *", "b" } } },
    { ENGINE_FORWARD,
      "neg",
      "neg",
      "neg(Tensor self) -> Tensor",
      { { "self", "tg_tensor *", "a" } } },
    { ENGINE_FORWARD,
      "copy_",
      "copy_",
      "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
      { { "self", "tg_tensor *", "dst" }, { "src", "tg_tensor *", "src" } } },
    { ENGINE_CLONE,
      "clone",
      "clone",
      "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
      { { "self", "tg_tensor *", "t" } } },
    { ENGINE_BACKWARD,
      "ones_like",
      "ones_like",
      "ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      { { "self", "tg_tensor *", "t" } } },
};

/* The call of engine operator e with the spec's op, or NULL when op cannot take it (an
 * argument it lacks or of another C type, a parameter without default it does not pass). The
 * public macro form: positional arguments, then `.name = value` for the defaulted ones. */
static const char *engine_call(tge_ctx *c, const struct engine_op *e, const tga_op *op)
{
    if (!op || op->nrets != 1 || op->rets[0].kind != TGA_TENSOR) return NULL;
    int given = 0;
    for (int k = 0; k < 4 && e->args[k].name; k++) given++;
    tgs_list pos = { 0 }, opts = { 0 };
    int used = 0;
    for (int i = 0; i < op->nargs; i++) {
        const engine_arg *a = NULL;
        for (int k = 0; k < given; k++)
            if (!strcmp(op->f->schema.args[i].name, e->args[k].name)) a = &e->args[k];
        if (!a) {
            if (!op->args[i].default_expr) return NULL;
            continue;
        }
        const char *ctype = tga_ctype(op->args[i].kind);
        if (!ctype || strcmp(ctype, a->ctype)) return NULL;
        used++;
        if (op->args[i].default_expr)
            tgs_list_addf(&opts, c->arena, ".%s = %s", op->args[i].name, a->value);
        else tgs_list_add(&pos, c->arena, a->value);
    }
    if (used != given) return NULL;
    /* with defaults, the public name is the macro over <name>_fn */
    const char *fn =
        op->opts_name ? tgs_fmt(c->arena, "%s_%s", op->prefix, op->cname) : op->fn_name;
    for (int i = 0; i < opts.n; i++) tgs_list_add(&pos, c->arena, opts.items[i]);
    return tgs_fmt(c->arena, "%s(%s)", fn, tgs_list_join(&pos, c->arena, ", "));
}

/* Sets the template's hole of each engine operator to its call; returns the schemas of those
 * this spec lacks, "; " separated, or NULL when it has them all. */
static const char *engine_calls(tge_ctx *c, tgt_env *env, int group)
{
    tgs_list missing = { 0 };
    for (size_t k = 0; k < sizeof engine_ops / sizeof engine_ops[0]; k++) {
        if (engine_ops[k].group != group) continue;
        const tga_op *op = tgm__map_get(c->ops.by_name, engine_ops[k].full_name);
        const char *call = engine_call(c, &engine_ops[k], op);
        if (call) tgt_set(env, engine_ops[k].key, call);
        else tgs_list_add(&missing, c->arena, engine_ops[k].schema);
    }
    return missing.n ? tgs_list_join(&missing, c->arena, "; ") : NULL;
}

/* The headers of the operators the engine calls that the spec has. */
static tgs_list engine_includes(tge_ctx *c)
{
    tgm_name_map *seen = tgm__map_new(c->arena);
    tgs_list l = { 0 };
    for (size_t k = 0; k < sizeof engine_ops / sizeof engine_ops[0]; k++) {
        const tga_op *op = tgm__map_get(c->ops.by_name, engine_ops[k].full_name);
        if (!op) continue;
        const char *line = tgs_fmt(c->arena, "#include \"%s\"", tge_op_header(c, "ops", op));
        if (!tgm__map_put(seen, line, (void *)line)) tgs_list_add(&l, c->arena, line);
    }
    return l;
}

/* The engine section: the real calls, or calls that report what the spec lacks. */
static const char *engine_code(tge_ctx *c)
{
    tgs_list parts = { 0 };
    for (int group = 0; group < ENGINE_GROUPS; group++) {
        tgt_env *e = tge_env(c);
        const char *missing = engine_calls(c, e, group);
        if (missing) tgt_set(e, "missing", missing);
        tgt_template t = tge_template(c, engine_templates[group][missing != NULL]);
        tgs_list_add(&parts, c->arena, tgt_render_str(&t, e, c->arena));
    }
    return tgs_list_join(&parts, c->arena, "");
}

/* The headers of the operators a formula calls, and the prototypes of the vocabulary functions
 * it calls (tg__grad_<name>, implemented by the runtime; a missing one is a link error naming
 * it), added to shard s once. */
static void formula_needs(tge_ctx *c, tge_shard_kind *k, int s, const tgf_node *n)
{
    if (n->kind == TGF_CALL && n->callee)
        tge_shard_include(c, k, s, tge_op_header(c, "ops", n->callee));
    if (n->kind == TGF_HELPER) {
        const char *proto = tgs_fmt(c->arena, "%s;", tgf_vocab_prototype(c->arena, n->callee));
        tge_shard_add_once(c, k, s, PROTOS, proto);
    }
    for (int i = 0; i < n->nargs; i++) formula_needs(c, k, s, n->args[i]);
}
/* What the autograd kernel of op records: its entry (NULL for none, or for an operator that
 * records a NotImplemented node without one). */
static const tgf_deriv *entry_of(const tgf_derivs *ds, const tga_op *op)
{
    return op->autograd == TGA_AUTOGRAD_RECORD ? ds->by_op[op->index] : NULL;
}

/* Everything the code of entry d calls: its formulas' and forward terms' operators. */
static void entry_needs(tge_ctx *c, tge_shard_kind *k, int s, const tgf_deriv *d)
{
    for (int i = 0; !d->limit && i < d->nformulas; i++)
        if (d->formulas[i].root) formula_needs(c, k, s, d->formulas[i].root);
    for (int f = 0; f < d->nfw; f++)
        for (int t = 0; !d->fw[f].limit && t < d->fw[f].nterms; t++)
            formula_needs(c, k, s, d->fw[f].terms[t].root);
}

/* The shard of an entry and of the kernels recording it: its operator's group. */
static int shard_of(tge_ctx *c, const tga_op *op, const tgf_deriv *d)
{
    return tge_shard_of(c, (d ? d->op : op)->f->schema.base);
}

void tge_emit_autograd(tge_ctx *c)
{
    tgf_derivs ds;
    /* Checked as --check does: what tgen cannot generate is a reason on the entry (its
     * operators record a failing node), not an error. */
    int nforward;
    if (tgf_check_all(c->model, &c->ops, c->arena, false, &ds) != 0 ||
        tgf_check_forward(&ds, &c->ops, c->arena, &nforward) != 0)
        return;
    tgf_mark_limits(&ds, c->arena);
    tge_ag_templates t = tge_ag_load_templates(c);
    static const char *const sections[] = { "protos", "nodes", "kernels" };
    tge_shard_kind *k = tge_shard_kind_get(c, "autograd", "tg_autograd.c.in", sections, 3);
    for (int i = 0; i < ds.n; i++) {
        const tgf_deriv *d = &ds.d[i];
        if (!d->op) continue;
        int s = shard_of(c, d->op, d);
        entry_needs(c, k, s, d);
        const char *formulas;
        int nformulas;
        const char *node = tge_ag_node(c, &t, d, &formulas, &nformulas);
        tge_shard_add(c, k, s, NODES, tgs_fmt(c->arena, "%s\n", node));
        tge_shard_add(
            c, k, s, NODES,
            tgs_fmt(c->arena, "%s\n", tge_ag_entry(c, &t, d->op, d, formulas, nformulas)));
    }
    tgs_list grad_ops = { 0 };
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        if (op->autograd == TGA_AUTOGRAD_NONE) continue;
        const tgf_deriv *d = entry_of(&ds, op);
        if (op->autograd == TGA_AUTOGRAD_RECORD && !d) continue; /* failed to check: reported */
        int s = shard_of(c, op, d);
        tge_shard_include(c, k, s, tge_op_header(c, "ops", op));
        tge_shard_include(c, k, s, tge_op_header(c, "kernels", op));
        if (op->autograd == TGA_AUTOGRAD_NOT_IMPL)
            tge_shard_add(c, k, s, KERNELS,
                          tgs_fmt(c->arena, "%s\n", tge_ag_entry(c, &t, op, NULL, NULL, 0)));
        tge_shard_add(c, k, s, KERNELS, tgs_fmt(c->arena, "%s\n", tge_ag_kernel(c, &t, op, d)));
        if (d && !d->limit)
            tgs_list_addf(&grad_ops, c->arena, "X(%s, \"%s\") \\", op->cname, op->row_name);
    }
    /* The engine's calls are tensorgen's own; an operator library has none. */
    if (!c->model->ns) {
        tgt_env *e = tge_env(c);
        tgs_list includes = engine_includes(c);
        tgt_set_list(e, "includes", &includes);
        tgt_set(e, "engine", engine_code(c));
        tge_render_file(c, "tg_autograd_engine_file.c.in", e, c->opts->out_dir,
                        tge_out_name(c, "autograd_engine.c"));
    }
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "ops", &grad_ops);
    tge_render_file(c, "tg_grad_op_list.h.in", e, c->opts->out_dir,
                    tge_out_name(c, "grad_op_list.h"));
}
