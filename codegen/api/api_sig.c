/* The C signatures of an operator's functions, as text: the public function and its options
 * struct, kernels (all arguments in schema order), the value returned on error and calls of
 * the public function. Pure functions of the C view (api.h); every emitter that declares or
 * calls an operator's function takes its text from here, so the declarations in tg_ops.h,
 * tg_kernels.h and docs/ops.md cannot drift apart. */
#include <string.h>

#include "api/api.h"
#include "base/strbuf.h"

const char *tga_var_decl(tgm_arena *a, const char *ctype, const char *name)
{
    size_t n = strlen(ctype);
    return tgs_fmt(a, "%s%s%s", ctype, n && ctype[n - 1] == '*' ? "" : " ", name);
}

const char *tga_kernel_params(tgm_arena *a, const tga_op *op)
{
    if (op->nargs == 0) return "void";
    tgs_list params = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *ca = &op->args[i];
        tgs_list_add(&params, a, ca->kind ? tga_cdecl(a, ca->kind, ca->name) : ca->name);
    }
    return tgs_list_join(&params, a, ", ");
}

const char *tga_kernel_decl(tgm_arena *a, const tga_op *op, const char *name)
{
    const char *fn = tgs_fmt(a, "%s(%s)", name, tga_kernel_params(a, op));
    return tga_var_decl(a, op->ret_ctype ? op->ret_ctype : "void", fn);
}

const char *tga_positional_params(tgm_arena *a, const tga_op *op)
{
    tgs_list params = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *ca = &op->args[i];
        if (!ca->default_expr && ca->kind)
            tgs_list_add(&params, a, tga_cdecl(a, ca->kind, ca->name));
    }
    return tgs_list_join(&params, a, ", ");
}

const char *tga_public_prototype(tgm_arena *a, const tga_op *op)
{
    const char *pos = tga_positional_params(a, op);
    const char *params = pos;
    if (op->opts_name)
        params = *pos ? tgs_fmt(a, "%s, %s opts", pos, op->opts_name)
                      : tgs_fmt(a, "%s opts", op->opts_name);
    if (!*params) params = "void";
    const char *fn = tgs_fmt(a, "%s(%s)", op->fn_name, params);
    return tga_var_decl(a, op->ret_ctype ? op->ret_ctype : "void", fn);
}

/* How to write what an option takes beyond a plain value of its C type, for its field's
 * comment; "" when nothing needs saying. */
static const char *option_spelling(tgm_arena *a, const tga_arg *ca)
{
    int n = ca->arg->type.list_size;
    switch (ca->kind) {
    case TGA_OPT_INT: return "; None: TG_NONE_INT";
    case TGA_OPT_DOUBLE: return "; None: TG_NONE_FLOAT";
    case TGA_OPT_BOOL: return "; None: TG_NONE_BOOL";
    case TGA_INT_LIST:
    case TGA_OPT_INT_LIST:
        return tgs_fmt(a, "; TG_INTS(...), or one int%s%s",
                       n == 2  ? " for both"
                       : n > 2 ? tgs_fmt(a, " for all %d", n)
                               : "",
                       ca->kind == TGA_OPT_INT_LIST ? "; None: TG_NO_INTS" : "");
    case TGA_OPT_DTYPE: return "; None: TG_DTYPE_NONE";
    case TGA_TENSOR_LIST_OR_NONE: return "; TG_TENSORS(...); None: TG_NO_TENSORS";
    case TGA_OPT_TENSOR:
    case TGA_OPT_STR:
    case TGA_OPT_GENERATOR: return "; None: NULL";
    case TGA_INT:
        return strncmp(ca->default_expr, "TG_REDUCTION_", 13) ? ""
                                                              : "; TG_REDUCTION_NONE, _MEAN, _SUM";
    default: return "";
    }
}

const char *tga_opts_struct(tgm_arena *a, const tga_op *op)
{
    if (!op->opts_name) return "";
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "typedef struct %s {\n", op->opts_name);
    for (int i = 0; i < op->nargs; i++) {
        const tga_arg *ca = &op->args[i];
        if (!ca->default_expr) continue;
        tgs_printf(&b, "    %s;   /* %s, default %s%s */\n", tga_cdecl(a, ca->kind, ca->name),
                   tga_type_text(a, &ca->arg->type),
                   tgs_c_comment(a, ca->arg->def.text ? ca->arg->def.text : ca->default_expr),
                   option_spelling(a, ca));
    }
    tgs_printf(&b, "} %s;", op->opts_name);
    return tgs_finish(&b, a);
}

const char *tga_error_value(tgm_arena *a, const tga_op *op)
{
    if (op->ret_struct) return tgs_fmt(a, "(%s){ 0 }", op->ret_struct);
    if (op->nrets == 0) return "-1"; /* `-> ()`: the status */
    const tga_kind_info *r = tga_kind_row(op->rets[0].kind);
    return r && r->error[0] ? r->error : "NULL";
}

const char *tga_public_call(tgm_arena *a, const tga_op *op, const char *const *args)
{
    tgs_list pos = { 0 }, opts = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        if (op->args[i].default_expr)
            tgs_list_addf(&opts, a, ".%s = %s", op->args[i].name, args[i]);
        else tgs_list_add(&pos, a, args[i]);
    }
    if (op->opts_name)
        tgs_list_addf(&pos, a, "(%s){ %s }", op->opts_name, tgs_list_join(&opts, a, ", "));
    return tgs_fmt(a, "%s(%s)", op->fn_name, tgs_list_join(&pos, a, ", "));
}
