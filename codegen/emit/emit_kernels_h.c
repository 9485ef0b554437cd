/* The kernel headers: generated/kernels/<op>.h, one per operator (kernel types and
 * prototypes, glue and autograd-kernel prototypes of its entries), and generated/tg_kernels.h,
 * which includes them all and declares the boxed callers and the op table (they need the
 * dispatcher's types, which kernels never see). */
#include <string.h>

#include "emit/emit_internal.h"

/* Renders the header of one operator group. `seen` holds the written kernels already declared
 * in this header: a written kernel shared by several entries is declared once. */
static void group_header(tge_ctx *c, const tge_group *g)
{
    tgs_list types = { 0 }, protos = { 0 }, glue = { 0 }, autograd = { 0 };
    tgm_name_map *seen = tgm__map_new(c->arena);
    for (int i = 0; i < g->n; i++) {
        const tga_op *op = g->ops[i];
        const char *ptr = tgs_fmt(c->arena, "(*%s)", op->kfn_type);
        tgs_list_addf(&types, c->arena, "typedef %s;", tga_kernel_decl(c->arena, op, ptr));
        for (int k = 0; k < op->nkernels; k++) {
            const tga_kernel *kn = &op->kernels[k];
            bool declared_before = tgm__map_put(seen, kn->symbol, (void *)kn) != NULL;
            if (kn->origin == TGA_KERNEL_WRITTEN) {
                if (declared_before) continue;
                tgs_list_addf(&protos, c->arena, "/* %s */\n%s;\n",
                              tga_schema_comment(c->arena, op->f),
                              tga_kernel_decl(c->arena, op, kn->symbol));
            } else if (kn->origin == TGA_KERNEL_AUTOGRAD) {
                tgs_list_addf(&autograd, c->arena, "%s;   /* %s */",
                              tga_kernel_decl(c->arena, op, kn->symbol),
                              tgs_c_comment(c->arena, op->f->schema.full_name));
            } else {
                tgs_list_addf(&glue, c->arena, "%s;   /* %s */",
                              tga_kernel_decl(c->arena, op, kn->symbol),
                              tgs_c_comment(c->arena, op->f->schema.full_name));
            }
        }
    }
    if (protos.n == 0) tgs_list_add(&protos, c->arena, "/* (none) */");
    if (glue.n == 0) tgs_list_add(&glue, c->arena, "/* (none) */");
    if (autograd.n == 0) tgs_list_add(&autograd, c->arena, "/* (none) */");
    tgt_env *e = tge_env(c);
    tgt_set(e, "base", g->base);
    tgt_set(e, "guard", tge_guard_name(c, g->base));
    tgt_set_list(e, "kernel_types", &types);
    tgt_set_list(e, "kernel_protos", &protos);
    tgt_set_list(e, "glue_protos", &glue);
    tgt_set_list(e, "autograd_protos", &autograd);
    tge_render_file(c, "tg_kernels_op.h.in", e, c->opts->out_dir,
                    tgs_fmt(c->arena, "%s/%s.h", tge_op_dir(c, "kernels"), g->base));
}

void tge_emit_kernels_h(tge_ctx *c)
{
    int ngroups = 0;
    const tge_group *groups = tge_groups(c, &ngroups);
    tgs_list headers = { 0 }, boxed = { 0 };
    for (int g = 0; g < ngroups; g++) {
        group_header(c, &groups[g]);
        tgs_list_addf(&headers, c->arena, "#include \"%s/%s.h\"", tge_op_dir(c, "kernels"),
                      groups[g].base);
    }
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        tgs_list_addf(&boxed, c->arena, "int %s(tg_fnptr kernel, tg_boxed_stack *s);   /* %s */",
                      op->boxed_name, tgs_c_comment(c->arena, op->f->schema.full_name));
    }
    if (headers.n == 0) tgs_list_add(&headers, c->arena, "/* (none) */");
    if (boxed.n == 0) tgs_list_add(&boxed, c->arena, "/* (none) */");
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "kernel_headers", &headers);
    tgt_set_list(e, "boxed_protos", &boxed);
    tge_render_file(c, "tg_kernels.h.in", e, c->opts->out_dir, tge_out_name(c, "kernels.h"));
}
