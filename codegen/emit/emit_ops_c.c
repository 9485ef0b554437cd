/* generated/tg_ops_<k>.c: the public functions (dispatch stubs) and their boxed fallbacks, in
 * the shard of their operator group, beside the group's table rows (emit_register.c). */
#include <string.h>

#include "emit/emit_internal.h"

/* How the stub reads argument i: by name, or from the options struct. */
static const char *arg_ref(tge_ctx *c, const tga_arg *ca)
{
    return ca->default_expr ? tgs_fmt(c->arena, "opts.%s", ca->name) : ca->name;
}

/* NULL checks of required tensors (and of each tensor of a list). */
static void null_checks(tge_ctx *c, const tga_op *op, tgs_list *out)
{
    bool returns_tensor = !op->ret_struct && op->rets && op->rets[0].kind == TGA_TENSOR;
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *ca = &op->args[i];
        const char *ref = arg_ref(c, ca), *cond;
        if (ca->kind == TGA_TENSOR) cond = tgs_fmt(c->arena, "!%s", ref);
        else if (ca->kind == TGA_TENSOR_LIST)
            cond = tgs_fmt(c->arena, "tg__any_null(%s.data, (int)%s.len)", ref, ref);
        else if (ca->kind == TGA_TENSOR_LIST_OR_NONE) /* None is no list: nothing to check */
            cond =
                tgs_fmt(c->arena, "!tg_is_none_tensors(%s) && tg__any_null(%s.data, (int)%s.len)",
                        ref, ref, ref);
        else continue;
        if (returns_tensor)
            tgs_list_addf(out, c->arena, "if (%s) return tg__null_arg(\"%s\", \"%s\");", cond,
                          op->opname, ca->arg->name);
        else
            tgs_list_addf(out, c->arena, "if (%s) { tg__null_arg(\"%s\", \"%s\"); return %s; }",
                          cond, op->opname, ca->arg->name, tga_error_value(c->arena, op));
    }
}

/* The key set before exclusions: the union of the tensor arguments' keys; an op without
 * tensors dispatches on its device option, else on CPU. */
static const char *key_expr(tge_ctx *c, const tga_op *op)
{
    tgs_list terms = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *ca = &op->args[i];
        const char *ref = arg_ref(c, ca);
        if (ca->kind == TGA_TENSOR)
            tgs_list_addf(&terms, c->arena, "tg_dispatch_tensor_keys(%s)", ref);
        else if (ca->kind == TGA_OPT_TENSOR)
            tgs_list_addf(&terms, c->arena, "tg__opt_keys(%s)", ref);
        else if (ca->kind == TGA_TENSOR_LIST || ca->kind == TGA_TENSOR_LIST_OR_NONE)
            tgs_list_addf(&terms, c->arena, "tg__list_keys(%s)", ref);
        else if (ca->kind == TGA_OPT_TENSOR_LIST)
            tgs_list_addf(&terms, c->arena, "tg__opt_list_keys(%s)", ref);
    }
    if (terms.n == 1) return terms.items[0];
    if (terms.n) return tgs_fmt(c->arena, "(%s)", tgs_list_join(&terms, c->arena, " | "));
    const tga_arg *dev = tga_device_arg(op);
    if (dev) return tgs_fmt(c->arena, "tg__or_cpu(tg__device_keys(%s))", arg_ref(c, dev));
    return "tg__or_cpu(0)";
}

static const char *call_args(tge_ctx *c, const tga_op *op)
{
    tgs_list args = { 0 };
    for (int i = 0; i < op->nargs; i++) tgs_list_add(&args, c->arena, arg_ref(c, &op->args[i]));
    return tgs_list_join(&args, c->arena, ", ");
}

/* The suffix of a result's tg__boxed_result_ helper: its kind's (a Tensor when unknown). */
static const char *result_suffix(tga_kind k)
{
    const char *s = tga_box_suffix(k);
    return s ? s : "tensor";
}

/* The kernel call and the return. The kernel runs with scope recording suspended (what its
 * inner public calls return is its own business); what it returns is recorded afterwards. */
static const char *call_and_return(tge_ctx *c, const tga_op *op)
{
    const char *call = tgs_fmt(c->arena, "tg_kernel(%s)", call_args(c, op));
    tga_kind k0 = op->nrets ? op->rets[0].kind : TGA_INT; /* `-> ()`: an int status */
    bool tensor_result = op->ret_struct || k0 == TGA_TENSOR;
    tgs_buf b;
    tgs_buf_init(&b);
    if (!op->ret_struct && k0 == TGA_TENSOR_LIST) {
        /* The list's array and elements are recorded in the open scope together. */
        tgs_puts(&b, "int tg_sc = tg_scope_suspend();\n");
        tgs_printf(&b, "tg_tensor_list tg_r = %s;\n", call);
        tgs_puts(&b, "tg_scope_resume(tg_sc);\n");
        tgs_puts(&b, "return tg_r.data ? tg_scope_track_list(tg_r) : tg_r;");
    } else if (!tensor_result && (k0 == TGA_INT || k0 == TGA_DOUBLE || k0 == TGA_BOOL) &&
               op->nrets) {
        tgs_printf(&b, "return %s;", call);
    } else if (!tensor_result) {
        /* `-> ()`, ScalarType, QScheme, int[]: nothing to record, but the kernel still runs
         * with recording suspended (the tensors its inner calls return are its own). */
        tgs_puts(&b, "int tg_sc = tg_scope_suspend();\n");
        tgs_printf(&b, "%s = %s;\n", tga_var_decl(c->arena, op->ret_ctype, "tg_r"), call);
        tgs_puts(&b, "tg_scope_resume(tg_sc);\n");
        tgs_puts(&b, "return tg_r;");
    } else {
        const char *type = op->ret_struct ? op->ret_struct : "tg_tensor *";
        tgs_puts(&b, "int tg_sc = tg_scope_suspend();\n");
        tgs_printf(&b, "%s%stg_r = %s;\n", type, op->ret_struct ? " " : "", call);
        tgs_puts(&b, "tg_scope_resume(tg_sc);\n");
        if (!op->ret_struct) {
            tgs_puts(&b, "return tg__track_result(tg_r);");
        } else {
            for (int r = 0; r < op->nrets; r++) {
                const char *f = op->rets[r].name;
                if (op->rets[r].kind == TGA_TENSOR || op->rets[r].kind == TGA_OPT_TENSOR)
                    tgs_printf(&b, "tg_r.%s = tg__track_result(tg_r.%s);\n", f, f);
                else if (op->rets[r].kind == TGA_TENSOR_LIST)
                    tgs_printf(&b, "if (tg_r.%s.data) tg_r.%s = tg_scope_track_list(tg_r.%s);\n", f,
                               f, f);
            }
            tgs_puts(&b, "return tg_r;");
        }
    }
    return tgs_finish(&b, c->arena);
}

/* The fallback's results, taken from the stack tg_call_boxed leaves. */
static const char *unbox_results(tge_ctx *c, const tga_op *op)
{
    if (op->nrets == 0) return "return 0;";
    if (!op->ret_struct)
        return tgs_fmt(c->arena, "return tg__boxed_result_%s(&tg_s, 1, 0);",
                       result_suffix(op->rets[0].kind));
    tgs_list fields = { 0 };
    for (int r = 0; r < op->nrets; r++)
        tgs_list_addf(&fields, c->arena, "tg__boxed_result_%s(&tg_s, %d, %d)",
                      result_suffix(op->rets[r].kind), op->nrets, r);
    return tgs_fmt(c->arena, "return (%s){ %s };", op->ret_struct,
                   tgs_list_join(&fields, c->arena, ", "));
}

bool tge_int_list_default(const tga_arg *ca)
{
    return ca->default_expr && (ca->kind == TGA_INT_LIST || ca->kind == TGA_OPT_INT_LIST) &&
           ca->arg->def.kind != TGM_DEF_NONE;
}

/* Int list arguments as the kernels take them (tg__int_list_arg): options given as a plain
 * number become the list it stands for, options left out their default, a NULL plain list the
 * empty one. */
static void int_list_args(tge_ctx *c, const tga_op *op, tgs_list *out)
{
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *ca = &op->args[i];
        bool optional = ca->kind == TGA_OPT_INT_LIST;
        if (ca->kind != TGA_INT_LIST && !(optional && ca->default_expr)) continue;
        const char *ref = arg_ref(c, ca);
        if (!ca->default_expr) {
            tgs_list_addf(out, c->arena,
                          "%s = tg__int_list_arg(%s, NULL, 0, false, TG_INTS_EMPTY);", ref, ref);
            continue;
        }
        int n = ca->arg->type.list_size > 0 ? ca->arg->type.list_size : 1;
        const char *dflt = tge_int_list_default(ca)
                               ? tgs_fmt(c->arena, "(tg_int_list)%s", ca->default_expr)
                               : "TG_NO_INTS";
        tgs_list_addf(out, c->arena, "int64_t tg_%s_buf[%d];", ca->name, n);
        tgs_list_addf(out, c->arena, "%s = tg__int_list_arg(%s, tg_%s_buf, %d, %s, %s);", ref, ref,
                      ca->name, n, optional ? "true" : "false", dflt);
    }
}

static const char *stub(tge_ctx *c, const tgt_template *t, const tga_op *op)
{
    tgs_list boxes = { 0 }, checks = { 0 }, lists = { 0 };
    int_list_args(c, op, &lists);
    for (int i = 0; i < op->nargs; i++)
        tgs_list_addf(&boxes, c->arena, "tg__box_%s(&tg_s, %s);", tga_box_suffix(op->args[i].kind),
                      op->args[i].name);
    null_checks(c, op, &checks);

    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(c->arena, op->f));
    tgt_set(e, "fallback_decl",
            tga_kernel_decl(c->arena, op, tgs_fmt(c->arena, "fallback_%s", op->cname)));
    tgt_set_list(e, "box_args", &boxes);
    tgt_set(e, "full_name", op->row_name);
    tgt_set(e, "error_value", tga_error_value(c->arena, op));
    tgt_set(e, "unbox_results", unbox_results(c, op));
    tgt_set(e, "prototype", tga_public_prototype(c->arena, op));
    tgt_set_list(e, "null_checks", &checks);
    tgt_set_list(e, "int_lists", &lists);
    tgt_set(e, "keys", key_expr(c, op));
    tgt_set(e, "kfn", op->kfn_type);
    tgt_set(e, "row", tge_row_name(c, op));
    tgt_setf(e, "fallback_call", "fallback_%s(%s)", op->cname, call_args(c, op));
    tgt_set(e, "call", call_and_return(c, op));
    return tgt_render_str(t, e, c->arena);
}

/* The shards' sections, shared with emit_register.c (which adds the rows). */
const char *const tge_ops_sections[TGE_OPS_SECTIONS] = { "defaults", "rows", "stubs" };

void tge_emit_ops_c(tge_ctx *c)
{
    tge_shard_kind *k =
        tge_shard_kind_get(c, "ops", "tg_ops.c.in", tge_ops_sections, TGE_OPS_SECTIONS);
    tgt_template t = tge_template(c, "tg_ops_stub.c.in");
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        int s = tge_shard_of(c, op->f->schema.base);
        tge_shard_include(c, k, s, tge_op_header(c, "ops", op));
        tge_shard_include(c, k, s, tge_op_header(c, "kernels", op));
        tge_shard_add(c, k, s, TGE_OPS_STUBS, stub(c, &t, op));
        for (int a = 0; a < op->nargs; a++)
            if (op->args[a].default_array)
                tge_shard_add(c, k, s, TGE_OPS_DEFAULTS,
                              tgs_fmt(c->arena, "const %s %s[] = { %s };",
                                      tga_list_elem_ctype(op->args[a].kind),
                                      op->args[a].default_array, op->args[a].default_values));
    }
}
