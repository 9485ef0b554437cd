/* generated/tg_structured.c: glue kernels for structured_delegate, autogen and
 * scalar_overload_of entries, and the stubs of missing kernels. */
#include <string.h>

#include "emit_internal.h"

static const tga_arg *out_arg(const tga_op *op)
{
    for (int i = 0; i < op->nargs; i++)
        if (tga_is_out_arg(op->args[i].arg)) return &op->args[i];
    return NULL;
}

/* A missing kernel's stub: PyTorch's message for an operator a backend lacks. */
static const char *missing_body(tge_ctx *c, const tga_op *op, const tga_kernel *k)
{
    tgs_list lines = { 0 };
    for (int i = 0; i < op->nargs; i++)
        tgs_list_addf(&lines, c->arena, "(void)%s;", op->args[i].name);
    tgs_list_addf(
        &lines, c->arena, "tg__error(%s, \"'%%s' is not implemented for %s (%%s)\", %s, %s);",
        tgs_c_string(c->arena, op->opname), k->key == TGM_KEY_CUDA ? "CUDA" : "CPU",
        tgs_c_string(c->arena, op->f->schema.full_name), tgs_c_string(c->arena, k->call_args));
    tgs_list_addf(&lines, c->arena, "return %s;", tga_error_value(c->arena, op));
    return tgs_list_join(&lines, c->arena, "\n");
}

static const char *glue_body(tge_ctx *c, const tga_op *op, const tga_kernel *k)
{
    if (k->origin == TGA_KERNEL_MISSING) return missing_body(c, op, k);
    if (k->origin == TGA_KERNEL_STRUCTURED)
        return tgs_fmt(c->arena, "return %s(%s);", k->target, k->call_args);
    const tga_arg *out = out_arg(op);
    return tgs_fmt(c->arena,
                   "tg_tensor *tg_result = %s(%s);\n"
                   "if (!tg_result) return NULL;\n"
                   "tg_tensor *tg_out = tg__copy_to_out(\"%s\", %s, tg_result);\n"
                   "tg_release(tg_result);\n"
                   "return tg_out;",
                   k->target, k->call_args, op->opname, out ? out->name : "NULL");
}

static const char *glue(tge_ctx *c, const tgt_template *t, const tga_op *op, const tga_kernel *k)
{
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(c->arena, op->f));
    tgt_set(e, "guard_begin", k->cuda_only ? "#ifdef TG_WITH_CUDA" : "");
    tgt_set(e, "guard_end", k->cuda_only ? "#endif" : "");
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
        tgs_list_addf(&wraps, c->arena, "tg_tensor *%s = tg__wrap_scalar(%s);", args[i], name);
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

void tge_emit_structured(tge_ctx *c)
{
    tgt_template one = tge_template(c, "tg_structured_glue.c.in");
    tgt_template scalar = tge_template(c, "tg_scalar_overload.c.in");
    tgs_list items = { 0 }, scalars = { 0 };
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        for (int k = 0; k < op->nkernels; k++) {
            tga_origin origin = op->kernels[k].origin;
            if (origin == TGA_KERNEL_STRUCTURED || origin == TGA_KERNEL_AUTOGEN ||
                origin == TGA_KERNEL_MISSING)
                tgs_list_add(&items, c->arena, glue(c, &one, op, &op->kernels[k]));
            else if (origin == TGA_KERNEL_SCALAR)
                tgs_list_add(&scalars, c->arena, scalar_overload(c, &scalar, op, &op->kernels[k]));
        }
    }
    if (scalars.n == 0) tgs_list_add(&scalars, c->arena, "/* (none) */");
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "glue", &items);
    tgt_set_list(e, "scalar_overloads", &scalars);
    tge_render_file(c, "tg_structured.c.in", e, c->opts->out_dir, "tg_structured.c");
}
