/* generated/tg_op_list.h: the X-macro list of every operator. */
#include "emit_internal.h"

void tge_emit_op_list(tge_ctx *c) {
    tgt_template file = tge_template(c, "tg_op_list.h.in");
    tgt_list items = { 0 };
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        tgt_list_addf(&items, c->arena, "X(%s, \"%s\") \\", op->cname, op->f->schema.full_name);
    }
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "ops", &items);
    tge_add_file(c, c->opts->out_dir, "tg_op_list.h", tgt_render_str(&file, e, c->arena));
}
