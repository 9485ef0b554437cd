/* The op table: one tg_op_entry row per operator, in the shard of its group
 * (generated/tg_ops_<k>.c, beside its public function), and generated/tg_register.c, which
 * lists them in op-enum order and registers them. */
#include "emit/emit_internal.h"

static const struct {
    int slot;
    const char *key;
} slot_keys[] = {
    { TGA_SLOT_CPU, "TG_KEY_CPU" },
    { TGA_SLOT_CUDA, "TG_KEY_CUDA" },
    { TGA_SLOT_AUTOGRAD, "TG_KEY_AUTOGRAD" },
};

static void kernel_slots(tge_ctx *c, const tga_op *op, tgs_list *out)
{
    for (size_t s = 0; s < sizeof slot_keys / sizeof slot_keys[0]; s++) {
        for (int k = 0; k < op->nkernels; k++) {
            const tga_kernel *kn = &op->kernels[k];
            /* CUDA kernels are added by the CUDA backend (tg_register_cuda.c) */
            if (!(kn->slots & slot_keys[s].slot) || kn->cuda_only) continue;
            tgs_list_addf(out, c->arena, "[%s] = (tg_fnptr)%s,", slot_keys[s].key, kn->symbol);
            break;
        }
    }
}

/* The composite kernel (CompositeImplicitAutograd / CompositeExplicitAutograd, and glue
 * around one), which serves every device, backends registered at run time too; "NULL". */
static const char *composite(tge_ctx *c, const tga_op *op)
{
    for (int k = 0; k < op->nkernels; k++) {
        const tga_kernel *kn = &op->kernels[k];
        bool composite_key = kn->key == TGM_KEY_COMPOSITE_IMPLICIT ||
                             kn->key == TGM_KEY_COMPOSITE_EXPLICIT ||
                             kn->key == TGM_KEY_COMPOSITE_EXPLICIT_NONFUNCTIONAL;
        if (composite_key && (kn->slots & TGA_SLOT_CPU))
            return tgs_fmt(c->arena, "(tg_fnptr)%s", kn->symbol);
    }
    return "NULL";
}

static const char *row(tge_ctx *c, const tgt_template *t, const tga_op *op)
{
    tgs_list slots = { 0 };
    kernel_slots(c, op, &slots);
    int ntensor = 0;
    for (int i = 0; i < op->nargs; i++) ntensor += tga_kind_is_tensor(op->args[i].kind);
    tgt_env *e = tge_env(c);
    tgt_set(e, "name", op->row_name);
    tgt_set(e, "schema", tgs_c_string(c->arena, tga_schema_line(c->arena, op->f)));
    tgt_set_list(e, "kernels", &slots);
    tgt_set(e, "boxed", op->boxed_name);
    tgt_set(e, "composite", composite(c, op));
    tgt_setf(e, "ntensor", "%d", ntensor);
    tgt_setf(e, "nargs", "%d", op->nargs);
    tgt_set(e, "row", tge_row_name(c, op));
    return tgt_render_str(t, e, c->arena);
}

void tge_emit_register(tge_ctx *c)
{
    tge_shard_kind *k =
        tge_shard_kind_get(c, "ops", "tg_ops.c.in", tge_ops_sections, TGE_OPS_SECTIONS);
    tgt_template t = tge_template(c, "tg_register_row.c.in");
    tgs_list externs = { 0 }, rows = { 0 };
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        int s = tge_shard_of(c, op->f->schema.base);
        tge_shard_add(c, k, s, TGE_OPS_ROWS, row(c, &t, op));
        tgs_list_addf(&externs, c->arena, "extern tg_op_entry %s;", tge_row_name(c, op));
        tgs_list_addf(&rows, c->arena, "&%s,", tge_row_name(c, op));
    }
    /* tensorgen's own table is the runtime's (it finds it through tg__generated_ops); a
     * library's registers itself when loaded. */
    tgt_template reg =
        tge_template(c, c->model->ns ? "tg_register_library.c.in" : "tg_register_core.c.in");
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "externs", &externs);
    tgt_set_list(e, "rows", &rows);
    tgt_set(e, "registration", tgt_render_str(&reg, tge_env(c), c->arena));
    tge_render_file(c, "tg_register.c.in", e, c->opts->out_dir, tge_out_name(c, "register.c"));
}
