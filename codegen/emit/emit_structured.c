/* generated/tg_structured.c: glue kernels for structured_delegate, autogen and
 * scalar_overload_of entries, and the stubs of missing kernels; generated/tg_register_cuda.c:
 * the same glue around CUDA kernels, and the table of the CUDA kernels, which the CUDA backend
 * (libtensorgen_cuda) registers when it loads. */
#include <string.h>

#include "emit/emit_internal.h"

/* The C expression of result i of a call whose value is in `var`: the value itself for one
 * result, else a field of the result struct. */
static const char *result_field(tge_ctx *c, const tga_op *op, const char *var, int i)
{
    return op->nrets == 1 ? var : tgs_fmt(c->arena, "%s.%s", var, op->rets[i].name);
}

/* `return <op's results>;` built from the expressions vals[0..nrets). */
static const char *return_values(tge_ctx *c, const tga_op *op, const char *const *vals)
{
    if (op->nrets == 1) return tgs_fmt(c->arena, "return %s;", vals[0]);
    tgs_list l = { 0 };
    for (int i = 0; i < op->nrets; i++) tgs_list_add(&l, c->arena, vals[i]);
    return tgs_fmt(c->arena, "return (%s){ %s };", op->ret_struct,
                   tgs_list_join(&l, c->arena, ", "));
}

/* An autogen'ed out= entry: the functional kernel's results, each copied into its out=
 * argument (in order); the outs are returned, each a new reference. */
static const char *autogen_body(tge_ctx *c, const tga_op *op, const tga_kernel *k)
{
    const tga_op *fn = op->functional;
    const char *err = tga_error_value(c->arena, op);
    tgs_list lines = { 0 }, release = { 0 };
    const char **outs = tgm_alloc(c->arena, sizeof *outs * (size_t)op->nrets);
    tgs_list_addf(&lines, c->arena, "%s = %s(%s);", tga_var_decl(c->arena, fn->ret_ctype, "tg_r"),
                  k->target, k->call_args);
    tgs_list_addf(&lines, c->arena, "if (!%s) return %s;", result_field(c, fn, "tg_r", 0), err);
    int r = 0;
    for (int i = 0; i < op->nargs; i++) {
        if (!tga_is_out_arg(op->args[i].arg)) continue;
        outs[r] = tgs_fmt(c->arena, "tg_o%d", r);
        tgs_list_addf(&lines, c->arena, "tg_tensor *%s = tg_copy_to_out(%s, %s, %s);", outs[r],
                      tgs_c_string(c->arena, op->opname), op->args[i].name,
                      result_field(c, fn, "tg_r", r));
        tgs_list_addf(&release, c->arena, "tg_release(%s);", result_field(c, fn, "tg_r", r));
        r++;
    }
    tgs_list_add(&lines, c->arena, tgs_list_join(&release, c->arena, "\n"));
    tgs_list ok = { 0 }, drop = { 0 };
    for (int i = 0; i < r; i++) {
        tgs_list_add(&ok, c->arena, outs[i]);
        tgs_list_addf(&drop, c->arena, "tg_release(%s);", outs[i]);
    }
    if (r > 1)
        tgs_list_addf(&lines, c->arena, "if (!(%s)) {\n    %s\n    return %s;\n}",
                      tgs_list_join(&ok, c->arena, " && "),
                      tgs_list_join(&drop, c->arena, "\n    "), err);
    tgs_list_add(&lines, c->arena, return_values(c, op, outs));
    return tgs_list_join(&lines, c->arena, "\n");
}

/* An autogen'ed functional entry of an in-place / mutable one: each written argument is
 * cloned, the in-place kernel runs on the clones, and the results are its results followed
 * by the clones it does not return (autogen.c's order). */
static const char *functional_body(tge_ctx *c, const tga_op *op, const tga_kernel *k)
{
    const tga_op *m = op->mutating;
    const char *err = tga_error_value(c->arena, op);
    const char *name = tgs_c_string(c->arena, op->opname);
    tgs_list lines = { 0 }, clones = { 0 };
    for (int i = 0; i < m->nargs; i++) {
        if (!m->args[i].arg->type.alias.is_write) continue;
        const char *cl = tgs_fmt(c->arena, "tg_c_%s", op->args[i].name);
        tgs_list_addf(&lines, c->arena, "tg_tensor *%s = tg_tensor_copy(%s, %s);", cl, name,
                      op->args[i].name);
        tgs_list_add(&clones, c->arena, cl);
    }
    tgs_list drop = { 0 };
    for (int i = 0; i < clones.n; i++)
        tgs_list_addf(&drop, c->arena, "tg_release(%s);", clones.items[i]);
    tgs_list check = { 0 };
    for (int i = 0; i < clones.n; i++) tgs_list_add(&check, c->arena, clones.items[i]);
    if (clones.n)
        tgs_list_addf(&lines, c->arena, "if (!(%s)) {\n    %s\n    return %s;\n}",
                      tgs_list_join(&check, c->arena, " && "),
                      tgs_list_join(&drop, c->arena, "\n    "), err);
    const char **vals = tgm_alloc(c->arena, sizeof *vals * (size_t)op->nrets);
    if (m->nrets) {
        tgs_list_addf(&lines, c->arena, "%s = %s(%s);",
                      tga_var_decl(c->arena, m->ret_ctype, "tg_r"), k->target, k->call_args);
        tgs_list_addf(&lines, c->arena, "if (!%s) {\n    %s\n    return %s;\n}",
                      result_field(c, m, "tg_r", 0), tgs_list_join(&drop, c->arena, "\n    "), err);
        for (int i = 0; i < m->nrets; i++) vals[i] = result_field(c, m, "tg_r", i);
    }
    /* The clones m does not return become the remaining results; those it does return were
     * returned by m as new references, so the glue's own reference to them is dropped. */
    int r = m->nrets;
    for (int i = 0; i < m->nargs; i++) {
        const tgm_arg *ma = m->args[i].arg;
        if (!ma->type.alias.is_write) continue;
        const char *cl = tgs_fmt(c->arena, "tg_c_%s", op->args[i].name);
        if (tgm_schema_returns_alias(&m->f->schema, ma->type.alias.set))
            tgs_list_addf(&lines, c->arena, "tg_release(%s);", cl);
        else if (r < op->nrets) vals[r++] = cl;
    }
    tgs_list_add(&lines, c->arena, return_values(c, op, vals));
    return tgs_list_join(&lines, c->arena, "\n");
}

/* A missing kernel's stub: PyTorch's message for an operator a backend lacks. */
static const char *missing_body(tge_ctx *c, const tga_op *op, const tga_kernel *k)
{
    tgs_list lines = { 0 };
    for (int i = 0; i < op->nargs; i++)
        tgs_list_addf(&lines, c->arena, "(void)%s;", op->args[i].name);
    tgs_list_addf(&lines, c->arena,
                  "tg_set_error(%s, \"'%%s' is not implemented for %s (%%s)\", %s, %s);",
                  tgs_c_string(c->arena, op->opname), k->key == TGM_KEY_CUDA ? "CUDA" : "CPU",
                  tgs_c_string(c->arena, op->row_name), tgs_c_string(c->arena, k->call_args));
    tgs_list_addf(&lines, c->arena, "return %s;", tga_error_value(c->arena, op));
    return tgs_list_join(&lines, c->arena, "\n");
}

static const char *glue_body(tge_ctx *c, const tga_op *op, const tga_kernel *k)
{
    switch (k->origin) {
    case TGA_KERNEL_MISSING: return missing_body(c, op, k);
    case TGA_KERNEL_AUTOGEN: return autogen_body(c, op, k);
    case TGA_KERNEL_FUNCTIONAL: return functional_body(c, op, k);
    default: break;
    }
    const tga_op *d = op->delegate;
    if (!d || !op->ret_struct || !strcmp(op->ret_ctype, d->ret_ctype))
        return tgs_fmt(c->arena, "return %s(%s);", k->target, k->call_args);
    /* The delegate's result struct has another name (other return names): same fields. */
    const char **vals = tgm_alloc(c->arena, sizeof *vals * (size_t)op->nrets);
    for (int i = 0; i < op->nrets; i++) vals[i] = result_field(c, d, "tg_r", i);
    return tgs_fmt(c->arena, "%s = %s(%s);\n%s", tga_var_decl(c->arena, d->ret_ctype, "tg_r"),
                   k->target, k->call_args, return_values(c, op, vals));
}

static const char *glue(tge_ctx *c, const tgt_template *t, const tga_op *op, const tga_kernel *k)
{
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(c->arena, op->f));
    tgt_set(e, "decl", tga_kernel_decl(c->arena, op, k->symbol));
    tgt_set(e, "body", glue_body(c, op, k));
    return tgt_render_str(t, e, c->arena);
}

/* A Scalar overload's kernel: each Scalar standing for a Tensor of the Tensor overload
 * becomes the wrapped number tg_w_<name> for the call, released after it. */
static const char *scalar_overload(tge_ctx *c, const tgt_template *t, const tga_op *op,
                                   const tga_kernel *k)
{
    const tga_op *to = op->tensor_overload;
    const char **args = tgm_alloc(c->arena, sizeof *args * (size_t)(op->nargs + 1));
    tgs_list wraps = { 0 }, releases = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        const char *name = op->args[i].name;
        args[i] = name;
        if (op->args[i].kind == to->args[i].kind) continue;
        args[i] = tgs_fmt(c->arena, "tg_w_%s", name);
        tgs_list_addf(&wraps, c->arena, "tg_tensor *%s = tg_wrap_scalar(%s);", args[i], name);
        tgs_list_addf(&releases, c->arena, "tg_release(%s);", args[i]);
    }
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(c->arena, op->f));
    tgt_set(e, "decl", tga_kernel_decl(c->arena, op, k->symbol));
    tgt_set_list(e, "wraps", &wraps);
    tgt_set(e, "result_decl", tga_var_decl(c->arena, op->ret_ctype, "tg_r"));
    tgt_set(e, "call", tga_public_call(c->arena, to, args));
    tgt_set_list(e, "releases", &releases);
    return tgt_render_str(t, e, c->arena);
}

/* The entry whose kernel a glue kernel calls (a missing kernel's stub calls none). */
static const tga_op *glue_callee(const tga_op *op, tga_origin origin)
{
    return origin == TGA_KERNEL_STRUCTURED   ? op->delegate
           : origin == TGA_KERNEL_AUTOGEN    ? op->functional
           : origin == TGA_KERNEL_FUNCTIONAL ? op->mutating
                                             : NULL;
}

static bool is_glue(tga_origin origin)
{
    return origin == TGA_KERNEL_STRUCTURED || origin == TGA_KERNEL_AUTOGEN ||
           origin == TGA_KERNEL_FUNCTIONAL || origin == TGA_KERNEL_MISSING;
}

/* tg_structured_<k>.c: the glue that compiles everywhere, and the Scalar overloads, in the
 * shard of their operator's group; each shard includes only the headers of the operators it
 * names, so that adding an operator without glue leaves every shard alone. */
static void emit_glue(tge_ctx *c)
{
    static const char *const sections[] = { "glue", "scalar_overloads" };
    tge_shard_kind *sk = tge_shard_kind_get(c, "structured", "tg_structured.c.in", sections, 2);
    tgt_template one = tge_template(c, "tg_structured_glue.c.in");
    tgt_template scalar = tge_template(c, "tg_scalar_overload.c.in");
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        int s = tge_shard_of(c, op->f->schema.base);
        for (int k = 0; k < op->nkernels; k++) {
            const tga_kernel *kn = &op->kernels[k];
            if (is_glue(kn->origin) && !kn->cuda_only) {
                tge_shard_add(c, sk, s, 0, glue(c, &one, op, kn));
                tge_shard_include(c, sk, s, tge_op_header(c, "kernels", op));
                const tga_op *callee = glue_callee(op, kn->origin);
                if (callee) tge_shard_include(c, sk, s, tge_op_header(c, "kernels", callee));
            } else if (kn->origin == TGA_KERNEL_SCALAR) {
                tge_shard_add(c, sk, s, 1, scalar_overload(c, &scalar, op, kn));
                tge_shard_include(c, sk, s, tge_op_header(c, "kernels", op));
                tge_shard_include(c, sk, s, tge_op_header(c, "ops", op->tensor_overload));
            }
        }
    }
}

/* Adds `#include "<header>"` once. */
static void include_once(tge_ctx *c, tgm_name_map *seen, tgs_list *out, const char *header)
{
    const char *line = tgs_fmt(c->arena, "#include \"%s\"", header);
    if (tgm__map_put(seen, line, (void *)line) == NULL) tgs_list_add(out, c->arena, line);
}

/* tg_register_cuda.c: the glue around CUDA kernels, and the table of every kernel that serves
 * an operator's CUDA slot, which the CUDA backend registers when it loads. */
static void emit_cuda(tge_ctx *c)
{
    tgm_name_map *seen = tgm__map_new(c->arena);
    tgs_list includes = { 0 }, items = { 0 }, entries = { 0 };
    tgt_template one = tge_template(c, "tg_structured_glue.c.in");
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        for (int k = 0; k < op->nkernels; k++) {
            const tga_kernel *kn = &op->kernels[k];
            if (!kn->cuda_only) continue;
            include_once(c, seen, &includes, tge_op_header(c, "kernels", op));
            if (is_glue(kn->origin)) {
                tgs_list_add(&items, c->arena, glue(c, &one, op, kn));
                const tga_op *callee = glue_callee(op, kn->origin);
                if (callee) include_once(c, seen, &includes, tge_op_header(c, "kernels", callee));
            }
            if (kn->slots & TGA_SLOT_CUDA)
                tgs_list_addf(&entries, c->arena, "{ %s, TG_KEY_CUDA, (tg_fnptr)%s },",
                              tgs_c_string(c->arena, op->row_name), kn->symbol);
        }
    }
    tgt_env *e = tge_env(c);
    if (includes.n == 0) tgs_list_add(&includes, c->arena, "/* (no CUDA kernels) */");
    if (items.n == 0) tgs_list_add(&items, c->arena, "/* (no glue) */");
    tgt_set_list(e, "includes", &includes);
    tgt_set_list(e, "glue", &items);
    tgt_set_list(e, "entries", &entries);
    tgt_setf(e, "nentries", "%d", entries.n);
    tge_render_file(c, "tg_register_cuda.c.in", e, c->opts->out_dir,
                    tge_out_name(c, "register_cuda.c"));
}

void tge_emit_structured(tge_ctx *c)
{
    emit_glue(c);
    emit_cuda(c);
}
