/* generated/tg_kernels.h: kernel types and prototypes, glue and boxed-caller prototypes. */
#include <string.h>

#include "emit_internal.h"

void tge_emit_kernels_h(tge_ctx *c)
{
    tgs_list types = { 0 }, protos = { 0 }, glue = { 0 }, autograd = { 0 }, boxed = { 0 };
    /* Every kernel symbol met so far: a written kernel shared by several entries is declared
     * once (a map; scanning the earlier ops' kernels was quadratic in the number of entries). */
    tgm_name_map *seen = tgm__map_new(c->arena);
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        const char *ptr = tgs_fmt(c->arena, "(*%s)", op->kfn_type);
        tgs_list_addf(&types, c->arena, "typedef %s;", tga_kernel_decl(c->arena, op, ptr));
        tgs_list_addf(&boxed, c->arena, "int %s(tg_fnptr kernel, tg_boxed_stack *s);   /* %s */",
                      op->boxed_name, tgs_c_comment(c->arena, op->f->schema.full_name));
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
    if (glue.n == 0) tgs_list_add(&glue, c->arena, "/* (none) */");
    if (autograd.n == 0) tgs_list_add(&autograd, c->arena, "/* (none: no derivatives file) */");
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "kernel_types", &types);
    tgt_set_list(e, "kernel_protos", &protos);
    tgt_set_list(e, "glue_protos", &glue);
    tgt_set_list(e, "autograd_protos", &autograd);
    tgt_set_list(e, "boxed_protos", &boxed);
    tge_render_file(c, "tg_kernels.h.in", e, c->opts->out_dir, "tg_kernels.h");
}
