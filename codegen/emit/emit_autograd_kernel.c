/* An operator's autograd kernel (api_autograd.c decides which kind; docs/generated-code.md,
 * "Autograd"):
 *   - recording (templates/tg_autograd_kernel.c.in): the arguments into the entry's frame,
 *     tg__autograd_begin, the operator below autograd through its public function,
 *     tg__autograd_end (runtime/autograd/record.h does the rest, from the entry's tables);
 *   - out= (templates/tg_autograd_out.c.in): refuses arguments that require grad or have a
 *     tangent, then runs the operator below autograd. */
#include "emit/emit_autograd.h"

static bool is_tensor(tga_kind k) { return k == TGA_TENSOR || k == TGA_OPT_TENSOR; }
static bool is_list(tga_kind k)
{
    return k == TGA_TENSOR_LIST || k == TGA_OPT_TENSOR_LIST || k == TGA_TENSOR_LIST_OR_NONE;
}

static const char *public_call(tge_ctx *c, const tga_op *op)
{
    const char **args = tgm_alloc(c->arena, sizeof *args * (size_t)(op->nargs + 1));
    for (int i = 0; i < op->nargs; i++) args[i] = op->args[i].name;
    return tga_public_call(c->arena, op, args);
}

/* The out= check: the single tensors as one array, then each list (lists first, as PyTorch's
 * order of messages has it). */
static tgs_list out_check(tge_ctx *c, const tga_op *op)
{
    tgs_list single = { 0 }, tests = { 0 }, lines = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        const char *name = op->args[i].name;
        if (is_tensor(op->args[i].kind)) tgs_list_add(&single, c->arena, name);
        else if (op->args[i].kind == TGA_TENSOR_LIST_OR_NONE) /* None: nothing to check */
            tgs_list_addf(&tests, c->arena,
                          "(!tg_is_none_tensors(%s) && "
                          "tg_autograd_check_out(\"%s\", %s.data, (int)%s.len))",
                          name, op->opname, name, name);
        else if (is_list(op->args[i].kind))
            tgs_list_addf(&tests, c->arena, "tg_autograd_check_out(\"%s\", %s.data, (int)%s.len)",
                          op->opname, name, name);
    }
    if (single.n) {
        tgs_list_addf(&lines, c->arena, "tg_tensor *const tg_in[] = { %s };",
                      tgs_list_join(&single, c->arena, ", "));
        tgs_list_addf(&tests, c->arena, "tg_autograd_check_out(\"%s\", tg_in, %d)", op->opname,
                      single.n);
    }
    if (tests.n)
        tgs_list_addf(&lines, c->arena, "if (%s) return %s;",
                      tgs_list_join(&tests, c->arena, " || "), tga_error_value(c->arena, op));
    return lines;
}

/* The frame's initializer: every argument under the entry's name for it (d), or the tensor
 * arguments (a NotImplemented operator's frame). */
static const char *frame_init(tge_ctx *c, const tga_op *op, const tgf_deriv *d)
{
    tgs_list l = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        tga_kind k = op->args[i].kind;
        if (!d && !is_tensor(k) && !is_list(k)) continue;
        tgs_list_addf(&l, c->arena, ".%s = %s",
                      d ? tgf_saved_field(c->arena, d, false, i, 0) : op->args[i].name,
                      op->args[i].name);
    }
    return tgs_list_join(&l, c->arena, ", ");
}

const char *tge_ag_kernel(tge_ctx *c, const tge_ag_templates *t, const tga_op *op,
                          const tgf_deriv *d)
{
    tgm_arena *a = c->arena;
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(a, op->f));
    tgt_set(e, "decl",
            tga_kernel_decl(a, op, tgs_fmt(a, "%s__autograd_kernel_%s", op->prefix, op->cname)));
    tgt_set(e, "result_decl", tga_var_decl(a, op->ret_ctype, "tg_r"));
    tgt_set(e, "public_call", public_call(c, op));
    if (op->autograd == TGA_AUTOGRAD_OUT) {
        tgs_list check = out_check(c, op);
        tgt_set_list(e, "check", &check);
        return tgt_render_str(&t->out, e, a);
    }
    const char *entry = tge_ag_entry_name(c, op, d);
    tgt_set(e, "name", op->opname);
    tgt_set(e, "row", op->row_name);
    tgt_set(e, "entry", entry);
    tgt_set(e, "inplace", op->f->kind == TGM_KIND_INPLACE ? "true" : "false");
    /* self's position in the schema (not always 0: pre-self positionals) */
    int self = op->f->kind == TGM_KIND_INPLACE ? tgm_schema_self_index(&op->f->schema) : 0;
    tgt_setf(e, "self", "%d", self > 0 ? self : 0);
    tgt_setf(e, "frame", "tg__frame_%s", entry);
    tgt_set(e, "frame_init", frame_init(c, op, d));
    tgt_set(e, "error_value", tga_error_value(a, op));
    return tgt_render_str(&t->kernel, e, a);
}
