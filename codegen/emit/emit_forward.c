/* Forward mode in generated/tg_autograd.c (docs/autograd.md, "Forward mode"): for each
 * derivative entry with `result:` formulas, a context struct (every argument, the tangents,
 * the outputs) and one C function per term of each formula (formula_c.c,
 * tgf_compile_forward); for each operator with an autograd kernel, `tg__fwk_<op>`: the operator
 * run below autograd, then the tangents of its outputs at every dual level where an input has
 * one. The autograd kernel calls tg__fwk_<op> where it ran the operator below autograd, so
 * reverse and forward mode share the kernel; without an entered level it costs one call that
 * returns at once.
 *
 * At one level L the function suspends L (the formulas' operators see the primal values and
 * the tangents of the other levels), reads each tangent a running term needs (zeros for an
 * input without one), runs the terms whose tangents are present (a term of absent tangents is
 * zero: skipped) and attaches their sum to the output (tg__fw_set, tg__fw_set_inplace). */
#include <string.h>

#include "emit/emit_internal.h"
#include "formula/formula.h"

static bool is_tensor(tga_kind k) { return k == TGA_TENSOR || k == TGA_OPT_TENSOR; }
static bool is_list(tga_kind k) { return k == TGA_TENSOR_LIST || k == TGA_OPT_TENSOR_LIST; }

/* text with every line indented by `levels` * 4 spaces. */
static const char *indent(tge_ctx *c, const char *text, int levels)
{
    tgs_buf b;
    tgs_buf_init(&b);
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n) tgs_printf(&b, "%*s%.*s", 4 * levels, "", (int)n, p);
        if (!e) break;
        tgs_puts(&b, "\n");
        p = e + 1;
    }
    return tgs_finish(&b, c->arena);
}

static const char *ctx_type(tge_ctx *c, const tgf_deriv *d)
{
    return tgs_fmt(c->arena, "tg__fw_%s", d->node_name);
}

static const char *term_fn(tge_ctx *c, const tgf_deriv *d, int k, int t)
{
    return tgs_fmt(c->arena, "%s_jvp%d_%d", d->node_name, k, t);
}

/* The entry's forward formulas that compile (an entry may have none). */
static bool has_compiled(const tgf_deriv *d)
{
    for (int k = 0; d && k < d->nfw; k++)
        if (!d->fw[k].limit) return true;
    return false;
}

const char *tge_forward_entry_code(tge_ctx *c, const tgf_deriv *d)
{
    if (!has_compiled(d)) return NULL;
    const tga_op *op = d->op;
    tgs_list fields = { 0 }, fns = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        const char *f = tgf_saved_field(c->arena, d, false, i, 0);
        tga_kind k = op->args[i].kind;
        tgs_list_addf(&fields, c->arena, "%s;", tga_cdecl(c->arena, k, f));
        if (is_tensor(k)) tgs_list_addf(&fields, c->arena, "tg_tensor *%s_t;", f);
        else if (is_list(k)) tgs_list_addf(&fields, c->arena, "tg_tensor_list %s_t;", f);
    }
    for (int i = 0; i < op->nrets; i++)
        tgs_list_addf(
            &fields, c->arena, "%s;",
            tga_cdecl(c->arena, op->rets[i].kind, tgf_saved_field(c->arena, d, true, i, 0)));
    for (int k = 0; k < d->nfw; k++) {
        const tgf_fw_formula *f = &d->fw[k];
        for (int t = 0; !f->limit && t < f->nterms; t++)
            tgs_list_add(&fns, c->arena,
                         tgf_compile_forward(
                             c->arena, d, f->terms[t].root, term_fn(c, d, k, t), ctx_type(c, d),
                             tgs_fmt(c->arena, "%s: %s (term %d)", f->src->vars, f->src->text, t)));
    }
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "/* Forward mode of %s */\ntypedef struct %s {\n", d->node_name, ctx_type(c, d));
    for (int i = 0; i < fields.n; i++) tgs_printf(&b, "    %s\n", fields.items[i]);
    tgs_printf(&b, "} %s;\n\n", ctx_type(c, d));
    for (int i = 0; i < fns.n; i++) tgs_printf(&b, "%s\n", fns.items[i]);
    return tgs_finish(&b, c->arena);
}

/* The test "argument i has a tangent at tg_l". */
static const char *has_tangent(tge_ctx *c, const tga_op *op, int i)
{
    const char *name = op->args[i].name;
    if (is_list(op->args[i].kind))
        return tgs_fmt(c->arena, "tg__fw_has_list(%s.data, (int)%s.len, tg_l)", name, name);
    return tgs_fmt(c->arena, "tg__fw_has(%s, tg_l)", name);
}

/* Reads the tangent of argument i into the context, once, for a term that runs. */
static const char *load_tangent(tge_ctx *c, const tgf_deriv *d, const tga_op *op, int i)
{
    const char *f = tgf_saved_field(c->arena, d, false, i, 0);
    const char *name = op->args[i].name;
    if (is_list(op->args[i].kind))
        return tgs_fmt(
            c->arena,
            "if (!tg_x.%s_t.data && !(tg_x.%s_t = tg__fw_tangents_or_zeros(%s, tg_l)).data)\n"
            "    goto fail;",
            f, f, name);
    return tgs_fmt(c->arena,
                   "if (!tg_x.%s_t && %s && !(tg_x.%s_t = tg__fw_tangent_or_zeros(%s, tg_l)))\n"
                   "    goto fail;",
                   f, name, f, name);
}

/* The value of output i in the kernel's result `tg_r`. */
static const char *ret_val(tge_ctx *c, const tga_op *op, int i)
{
    return op->ret_struct ? tgs_fmt(c->arena, "tg_r.%s", op->rets[i].name) : "tg_r";
}

/* Loads of the tangents a term reads (bits: argument indices), and its run condition. */
static void term_inputs(tge_ctx *c, const tga_op *op, const tgf_deriv *d, uint64_t bits,
                        tgs_list *cond, tgs_list *loads)
{
    for (int i = 0; i < op->nargs && i < 64; i++)
        if (bits >> i & 1) {
            tgs_list_add(cond, c->arena, has_tangent(c, op, i));
            tgs_list_add(loads, c->arena, load_tangent(c, d, op, i));
        }
}

/* The statements computing and attaching the tangent of formula k's output. */
static void output_code(tge_ctx *c, tgs_list *lines, const tga_op *op, const tgf_deriv *d, int k,
                        bool inplace)
{
    const tgf_fw_formula *f = &d->fw[k];
    const char *out = ret_val(c, op, f->output);
    if (op->rets[f->output].kind == TGA_TENSOR_LIST) { /* one term giving the whole list */
        tgs_list cond = { 0 }, loads = { 0 };
        term_inputs(c, op, d, f->terms[0].tangents, &cond, &loads);
        tgs_list_add(&loads, c->arena,
                     tgs_fmt(c->arena,
                             "if (tg__fw_set_list(\"%s\", %s, %s(&tg_x), tg_l))\n    goto fail;",
                             op->opname, out, term_fn(c, d, k, 0)));
        const char *body = tgs_list_join(&loads, c->arena, "\n");
        tgs_list_addf(lines, c->arena, "if (%s) {\n%s\n}",
                      cond.n ? tgs_list_join(&cond, c->arena, " || ") : "true", indent(c, body, 1));
        return;
    }
    tgs_list inner = { 0 };
    tgs_list_add(&inner, c->arena, "tg_tensor *tg_t = NULL;");
    for (int t = 0; t < f->nterms; t++) {
        tgs_list cond = { 0 }, loads = { 0 };
        term_inputs(c, op, d, f->terms[t].tangents, &cond, &loads);
        tgs_list_addf(&loads, c->arena,
                      "if (!(tg_t = tg__fw_add_term(tg_t, %s(&tg_x), %s)))\n    goto fail;",
                      term_fn(c, d, k, t), f->terms[t].negate ? "true" : "false");
        const char *body = tgs_list_join(&loads, c->arena, "\n");
        if (cond.n)
            tgs_list_addf(&inner, c->arena, "if (%s) {\n%s\n}",
                          tgs_list_join(&cond, c->arena, " || "), indent(c, body, 1));
        else tgs_list_add(&inner, c->arena, body);
    }
    tgs_list_addf(&inner, c->arena,
                  "if (tg_t && tg__fw_set%s(\"%s\", %s, tg_t, tg_l))\n    goto fail;",
                  inplace ? "_inplace" : "", op->opname, out);
    tgs_list_addf(lines, c->arena, "if (%s && tg__gen_differentiable(%s)) {\n%s\n}", out, out,
                  indent(c, tgs_list_join(&inner, c->arena, "\n"), 1));
}

/* The tests "an input has a tangent" (at any level: tg__fw_any; at tg_l: tg__fw_any_level),
 * over the array `arr` of the single tensors (declared into *decl) and each list. */
static void tangent_tests(tge_ctx *c, const tga_op *op, const char *arr, tgs_list *decl,
                          const char **any, const char **at_level)
{
    tgs_list single = { 0 }, a = { 0 }, l = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        const char *name = op->args[i].name;
        if (is_tensor(op->args[i].kind)) tgs_list_add(&single, c->arena, name);
        else if (is_list(op->args[i].kind)) {
            tgs_list_addf(&a, c->arena, "tg__fw_any(%s.data, (int)%s.len)", name, name);
            tgs_list_addf(&l, c->arena, "tg__fw_any_level(%s.data, (int)%s.len, tg_l)", name, name);
        }
    }
    if (single.n) {
        tgs_list_addf(decl, c->arena, "tg_tensor *const %s[] = { %s };", arr,
                      tgs_list_join(&single, c->arena, ", "));
        tgs_list_addf(&a, c->arena, "tg__fw_any(%s, %d)", arr, single.n);
        tgs_list_addf(&l, c->arena, "tg__fw_any_level(%s, %d, tg_l)", arr, single.n);
    }
    *any = a.n ? tgs_list_join(&a, c->arena, " || ") : NULL;
    *at_level = l.n ? tgs_list_join(&l, c->arena, " || ") : NULL;
}

/* Releases the kernel's result tg_r. */
static const char *release_result(tge_ctx *c, const tga_op *op)
{
    if (!op->ret_struct)
        return op->rets[0].kind == TGA_TENSOR_LIST ? "tg_tensor_list_release(tg_r);"
                                                   : "tg_release(tg_r);";
    tgs_list l = { 0 };
    for (int i = 0; i < op->nrets; i++)
        if (op->rets[i].kind == TGA_TENSOR)
            tgs_list_addf(&l, c->arena, "tg_release(tg_r.%s);", op->rets[i].name);
    return tgs_list_join(&l, c->arena, " ");
}

/* The test "a differentiable output of tg_r is floating" (could carry a tangent). */
static const char *floating_output(tge_ctx *c, const tga_op *op, const tgf_deriv *d)
{
    tgs_list l = { 0 };
    for (int i = 0; i < op->nrets; i++) {
        if (d && !d->output_diff[i]) continue;
        const char *v = ret_val(c, op, i);
        if (op->rets[i].kind == TGA_TENSOR)
            tgs_list_addf(&l, c->arena, "(%s && tg__gen_differentiable(%s))", v, v);
        else if (op->rets[i].kind == TGA_TENSOR_LIST)
            tgs_list_addf(&l, c->arena, "(%s.len > 0 && tg__gen_differentiable(%s.data[0]))", v, v);
    }
    return l.n ? tgs_fmt(c->arena, "(%s)", tgs_list_join(&l, c->arena, " || ")) : "false";
}

/* Whether op's kernels get forward-mode code: some output may have a tangent, some input may. */
static bool has_forward(tge_ctx *c, const tga_op *op, const tgf_deriv *d, const char *arr,
                        tgs_list *decl, const char **any, const char **at_level)
{
    if (op->nrets == 0 || op->autograd == TGA_AUTOGRAD_OUT) return false;
    bool differentiable = false;
    for (int i = 0; i < op->nrets; i++)
        differentiable |= (!d || d->output_diff[i]) &&
                          (op->rets[i].kind == TGA_TENSOR || op->rets[i].kind == TGA_TENSOR_LIST);
    tangent_tests(c, op, arr, decl, any, at_level);
    return differentiable && *any;
}

/* The error of an op whose formula is missing or not compiled. */
static const char *not_compiled_call(tge_ctx *c, const tga_op *op, const tgf_deriv *d)
{
    const char *why = NULL;
    for (int k = 0; d && k < d->nfw; k++) why = d->fw[k].limit;
    return why ? tgs_fmt(c->arena, "tg__fw_not_compiled(\"%s\", %s)", op->row_name,
                         tgs_c_string(c->arena, why))
               : tgs_fmt(c->arena, "tg__fw_not_implemented(\"%s\")", op->row_name);
}

/* The call of tg__fwt_<op> with the kernel's arguments, self as it was, the result. */
static const char *tangents_call(tge_ctx *c, const tga_op *op)
{
    tgs_list args = { 0 };
    for (int i = 0; i < op->nargs; i++) tgs_list_add(&args, c->arena, op->args[i].name);
    if (op->f->kind == TGM_KIND_INPLACE) tgs_list_add(&args, c->arena, "tg_self0");
    tgs_list_add(&args, c->arena, "tg_r");
    return tgs_fmt(c->arena, "tg__fwt_%s(%s)", op->cname, tgs_list_join(&args, c->arena, ", "));
}

/* tg__fwt_<op>: the outputs' tangents at every level where an input has one; 0 or -1. */
static const char *tangents_fn(tge_ctx *c, const tga_op *op, const tgf_deriv *d,
                               const char *at_level)
{
    bool inplace = op->f->kind == TGM_KIND_INPLACE;
    const char *params = tga_kernel_params(c->arena, op);
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b,
               "/* %s: its outputs' tangents, after it ran (and recorded its history) */\n"
               "static int tg__fwt_%s(%s%s%s%s)\n{\n",
               op->row_name, op->cname, strcmp(params, "void") ? params : "",
               inplace ? ", tg_tensor *tg_self0" : "", op->nargs ? ", " : "",
               tga_var_decl(c->arena, op->ret_ctype, "tg_r"));
    tgs_list decl = { 0 }, init = { 0 }, release = { 0 }, body = { 0 };
    const char *any, *unused;
    tangent_tests(c, op, "tg_in", &decl, &any, &unused);
    for (int i = 0; i < decl.n; i++) tgs_printf(&b, "    %s\n", decl.items[i]);
    for (int i = 0; i < op->nargs; i++) {
        const char *f = tgf_saved_field(c->arena, d, false, i, 0);
        tgs_list_addf(&init, c->arena, ".%s = %s", f,
                      inplace && i == 0 ? "tg_self0" : op->args[i].name);
        if (is_tensor(op->args[i].kind))
            tgs_list_addf(&release, c->arena, "tg_release(tg_x.%s_t);", f);
        else if (is_list(op->args[i].kind))
            tgs_list_addf(&release, c->arena, "tg_tensor_list_release(tg_x.%s_t);", f);
    }
    /* The outputs as the formulas read them: aliases with the outputs' history, not holding
     * the tangent being computed (which may record a node saving them: no cycle). */
    for (int i = 0; i < op->nrets; i++) {
        const char *f = tgf_saved_field(c->arena, d, true, i, 0);
        if (op->rets[i].kind == TGA_TENSOR) {
            tgs_list_addf(&init, c->arena, ".%s = tg__fw_output_alias(%s, tg_l)", f,
                          ret_val(c, op, i));
            tgs_list_addf(&release, c->arena, "tg_release(tg_x.%s);", f);
        } else {
            tgs_list_addf(&init, c->arena, ".%s = %s", f, ret_val(c, op, i));
        }
    }
    for (int k = 0; k < d->nfw; k++)
        if (!d->fw[k].limit) output_code(c, &body, op, d, k, inplace);
    tgs_printf(&b,
               "    for (int tg_l = 0; tg_l < tg__fw_levels(); tg_l++) {\n"
               "        if (!(%s))\n            continue;\n"
               "        int tg_fs = tg__fw_suspend(tg_l), tg_sc = tg_scope_suspend(), tg_rc = -1;\n"
               "        %s tg_x = { %s };\n",
               at_level, ctx_type(c, d), tgs_list_join(&init, c->arena, ", "));
    for (int i = 0; i < op->nrets; i++)
        if (op->rets[i].kind == TGA_TENSOR)
            tgs_printf(&b, "        if (%s && !tg_x.%s)\n            goto fail;\n",
                       ret_val(c, op, i), tgf_saved_field(c->arena, d, true, i, 0));
    tgs_printf(&b,
               "%s\n"
               "        tg_rc = 0;\n"
               "    fail:\n"
               "%s\n"
               "        tg_scope_resume(tg_sc);\n"
               "        tg__fw_resume(tg_fs);\n"
               "        if (tg_rc)\n            return -1;\n"
               "    }\n    return 0;\n}\n",
               indent(c, tgs_list_join(&body, c->arena, "\n"), 2),
               indent(c, tgs_list_join(&release, c->arena, "\n"), 2));
    return tgs_finish(&b, c->arena);
}

const char *tge_forward_kernel_code(tge_ctx *c, const tga_op *op, const tgf_deriv *d,
                                    const char *below_call)
{
    tgs_list decl = { 0 };
    const char *any, *at_level;
    if (!has_forward(c, op, d, "tg_in", &decl, &any, &at_level)) return NULL;
    const char *fail = tga_error_value(c->arena, op);
    tgs_buf b;
    tgs_buf_init(&b);
    bool compiled = has_compiled(d);
    if (compiled) tgs_printf(&b, "%s\n", tangents_fn(c, op, d, at_level));
    tgs_printf(&b, "/* %s below autograd, then its outputs' tangents */\nstatic %s\n{\n",
               op->row_name,
               tga_kernel_decl(c->arena, op, tgs_fmt(c->arena, "tg__fwk_%s", op->cname)));
    for (int i = 0; i < decl.n; i++) tgs_printf(&b, "    %s\n", decl.items[i]);
    tgs_printf(&b, "    if (!(%s))\n        return %s;\n", any, below_call);
    if (!compiled) { /* an error only when an output can have a tangent (argmax's cannot) */
        tgs_printf(&b,
                   "    %s = %s;\n    if (%s) {\n        %s\n        %s;\n        return %s;\n"
                   "    }\n    return tg_r;\n}\n",
                   tga_var_decl(c->arena, op->ret_ctype, "tg_r"), below_call,
                   floating_output(c, op, d), release_result(c, op), not_compiled_call(c, op, d),
                   fail);
        return tgs_finish(&b, c->arena);
    }
    bool inplace = op->f->kind == TGM_KIND_INPLACE;
    if (inplace) /* the formulas read self as it was (PyTorch's original_self) */
        tgs_printf(
            &b, "    tg_tensor *tg_self0 = tg_clone(%s);\n    if (!tg_self0)\n        return %s;\n",
            op->args[0].name, fail);
    tgs_printf(&b, "    %s = %s;\n", tga_var_decl(c->arena, op->ret_ctype, "tg_r"), below_call);
    tgs_list none = { 0 };
    for (int i = 0; i < op->nrets; i++)
        if (op->rets[i].kind == TGA_TENSOR || op->rets[i].kind == TGA_TENSOR_LIST)
            tgs_list_addf(&none, c->arena, op->rets[i].kind == TGA_TENSOR ? "!%s" : "!%s.data",
                          ret_val(c, op, i));
    tgs_printf(&b, "    if (!(%s) && %s) {\n        %s\n        %s = %s;\n    }\n",
               tgs_list_join(&none, c->arena, " && "), tangents_call(c, op), release_result(c, op),
               "tg_r", fail);
    if (inplace) tgs_puts(&b, "    tg_release(tg_self0);\n");
    tgs_puts(&b, "    return tg_r;\n}\n");
    return tgs_finish(&b, c->arena);
}

void tge_forward_record(tge_ctx *c, const tga_op *op, const tgf_deriv *d, const char *node,
                        const char **before, const char **release, const char **after)
{
    *before = *release = *after = "";
    tgs_list decl = { 0 };
    const char *any, *at_level;
    /* (tg_fw_in: the recording kernel declares tg_in for its own test) */
    if (!has_forward(c, op, d, "tg_fw_in", &decl, &any, &at_level)) return;
    const char *fail = tga_error_value(c->arena, op);
    tgs_list b = decl;
    tgs_list_addf(&b, c->arena, "bool tg_fw = %s;", any);
    *before = tgs_list_join(&b, c->arena, "\n");
    if (!has_compiled(d)) { /* after the op: an error when an output can have a tangent */
        *after = tgs_fmt(c->arena,
                         "if (tg_fw && %s) {\n    tg_autograd_node_release(%s);\n    %s\n"
                         "    %s;\n    return %s;\n}",
                         floating_output(c, op, d), node, release_result(c, op),
                         not_compiled_call(c, op, d), fail);
        return;
    }
    bool inplace = op->f->kind == TGM_KIND_INPLACE;
    if (inplace) {
        tgs_list_addf(&b, c->arena,
                      "tg_tensor *tg_self0 = NULL;\n"
                      "if (tg_fw && !(tg_self0 = tg_clone(%s))) {\n"
                      "    tg_autograd_node_release(%s);\n    return %s;\n}",
                      op->args[0].name, node, fail);
        *release = "tg_release(tg_self0);";
    }
    *before = tgs_list_join(&b, c->arena, "\n");
    *after = tgs_fmt(c->arena,
                     "if (tg_fw && %s) {\n%s    tg_autograd_node_release(%s);\n    %s\n"
                     "    return %s;\n}%s",
                     tangents_call(c, op), inplace ? "    tg_release(tg_self0);\n" : "", node,
                     release_result(c, op), fail, inplace ? "\ntg_release(tg_self0);" : "");
}
