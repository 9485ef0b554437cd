/* docs/ops.md: the operator reference. */
#include <string.h>

#include "emit/emit_internal.h"

/* "`tg_add(self, other)`, options `.alpha`". */
static const char *call_line(tge_ctx *c, const tga_op *op)
{
    tgs_list pos = { 0 }, opts = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *ca = &op->args[i];
        if (ca->default_expr) tgs_list_addf(&opts, c->arena, "`.%s`", ca->name);
        else tgs_list_add(&pos, c->arena, ca->name);
    }
    const char *call = tgs_fmt(c->arena, "`%s_%s(%s)`", op->prefix, op->cname,
                               tgs_list_join(&pos, c->arena, ", "));
    if (!opts.n) return call;
    return tgs_fmt(c->arena, "%s, options %s", call, tgs_list_join(&opts, c->arena, ", "));
}

static const char *slot_names(tge_ctx *c, int slots)
{
    tgs_list names = { 0 };
    if (slots & TGA_SLOT_CPU) tgs_list_add(&names, c->arena, "CPU");
    if (slots & TGA_SLOT_CUDA) tgs_list_add(&names, c->arena, "CUDA");
    if (slots & TGA_SLOT_AUTOGRAD) tgs_list_add(&names, c->arena, "Autograd");
    return tgs_list_join(&names, c->arena, ", ");
}

static const char *dispatch_line(tge_ctx *c, const tga_op *op)
{
    tgs_list parts = { 0 };
    for (int k = 0; k < op->nkernels; k++) {
        const tga_kernel *kn = &op->kernels[k];
        if (!kn->slots) continue;
        const char *what = "";
        if (kn->origin == TGA_KERNEL_STRUCTURED)
            what = tgs_fmt(c->arena, " (structured: calls `%s`)", kn->target);
        else if (kn->origin == TGA_KERNEL_AUTOGEN)
            what = tgs_fmt(c->arena, " (autogen: `%s`, then copy into out)", kn->target);
        else if (kn->origin == TGA_KERNEL_SCALAR)
            what = tgs_fmt(c->arena, " (Scalar overload: wraps its Scalars, then calls `%s`)",
                           kn->target);
        else if (kn->origin == TGA_KERNEL_MISSING)
            what = tgs_fmt(c->arena, " (missing: fails, %s)", kn->call_args);
        else if (kn->origin == TGA_KERNEL_AUTOGRAD)
            what = op->autograd == TGA_AUTOGRAD_RECORD ? " (records the backward node)"
                   : op->autograd == TGA_AUTOGRAD_OUT  ? " (refuses arguments that require grad)"
                                                       : " (backward not implemented)";
        tgs_list_addf(&parts, c->arena, "%s → `%s`%s%s", slot_names(c, kn->slots), kn->symbol, what,
                      kn->cuda_only ? " (builds with CUDA)" : "");
    }
    return parts.n ? tgs_list_join(&parts, c->arena, "; ") : "none";
}

static const char *variants(const tga_op *op)
{
    if (op->f->variant_function && op->f->variant_method) return "function, method";
    if (op->f->variant_method) return "method";
    return "function";
}

static const char *signature(tge_ctx *c, const tga_op *op)
{
    const char *proto = tgs_fmt(c->arena, "%s;", tga_public_prototype(c->arena, op));
    if (!op->opts_name) return proto;
    return tgs_fmt(c->arena, "%s\n%s", tga_opts_struct(c->arena, op), proto);
}

static const char *entry(tge_ctx *c, const tgt_template *t, const tga_op *op)
{
    tgt_env *e = tge_env(c);
    tgt_set(e, "cname", op->cname);
    /* With its blank line, so that an operator without `doc:` gets no empty paragraph. */
    tgt_set(e, "doc", op->f->doc && *op->f->doc ? tgs_fmt(c->arena, "%s\n\n", op->f->doc) : "");
    tgt_set(e, "signature", signature(c, op));
    tgt_set(e, "schema", tga_schema_comment(c->arena, op->f));
    tgt_set(e, "call", call_line(c, op));
    tgt_set(e, "variants", variants(op));
    tgt_set(e, "dispatch", dispatch_line(c, op));
    return tgt_render_str(t, e, c->arena);
}

void tge_emit_docs(tge_ctx *c)
{
    tgs_list index = { 0 }, entries = tge_per_op(c, "ops_entry.md.in", entry);
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        tgs_list kernels = { 0 };
        for (int k = 0; k < op->nkernels; k++)
            tgs_list_addf(&kernels, c->arena, "`%s`", op->kernels[k].symbol);
        tgs_list_addf(&index, c->arena, "| [`%s_%s`](#%s_%s) | `%s` | %s |", op->prefix, op->cname,
                      op->prefix, op->cname, op->row_name, tgs_list_join(&kernels, c->arena, ", "));
    }
    tgt_env *e = tge_env(c);
    tgt_setf(e, "count", "%d", c->ops.n);
    tgt_set_list(e, "index", &index);
    tgt_set_list(e, "ops", &entries);
    /* tensorgen's reference is docs/ops.md; a library's, <ns>_ops.md */
    tge_render_file(c, "ops.md.in", e, c->opts->docs_dir,
                    c->model->ns ? tge_out_name(c, "ops.md") : "ops.md");
}
