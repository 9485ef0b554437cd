/* generated/tg_op_list.h: the X-macro list of every operator, and of those with a CUDA kernel
 * of their own (a `CUDA:` dispatch entry), which the CUDA coverage test checks. */
#include "emit/emit_internal.h"

void tge_emit_op_list(tge_ctx *c)
{
    tgs_list items = { 0 }, cuda = { 0 };
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        tgs_list_addf(&items, c->arena, "X(%s, \"%s\") \\", op->cname, op->row_name);
        bool has_cuda = false;
        for (int k = 0; k < op->nkernels; k++)
            if (op->kernels[k].key == TGM_KEY_CUDA && op->kernels[k].origin == TGA_KERNEL_WRITTEN)
                has_cuda = true; /* its own `CUDA:` entry, not structured/autogen glue */
        if (has_cuda) tgs_list_addf(&cuda, c->arena, "X(%s, \"%s\") \\", op->cname, op->row_name);
    }
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "ops", &items);
    tgt_set_list(e, "cuda_ops", &cuda);
    tge_render_file(c, "tg_op_list.h.in", e, c->opts->out_dir, tge_out_name(c, "op_list.h"));
}
