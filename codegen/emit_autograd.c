/* generated/tg_autograd.c and generated/tg_grad_op_list.h: backward nodes (struct, compiled
 * formulas, apply, release_saved, vtable) per derivative entry, and the autograd kernel of each
 * operator (api_autograd.c decides which kind). docs/generated-code.md, "Autograd". */
#include <string.h>

#include "emit_internal.h"
#include "formula.h"

static bool is_tensor_kind(tga_kind k) { return k == TGA_TENSOR || k == TGA_OPT_TENSOR; }

/* A comment-safe copy of a formula or schema: no `*\/`, one line. */
static const char *comment_text(tge_ctx *c, const char *s)
{
    char *t = tgm_strdup(c->arena, s);
    for (char *p = t; *p; p++) {
        if (*p == '\n' || *p == '\t' || *p == '\r')
            *p = ' ';
        if (p[0] == '*' && p[1] == '/')
            p[1] = '|';
    }
    return t;
}

static const char *node_type(tge_ctx *c, const tgf_deriv *d)
{
    return tgs_fmt(c->arena, "tg__node_%s", d->node_name);
}

/* ------------------------------------------------------------------ node structs */

/* The fields one input or output needs, by how the formulas use it. */
static void source_fields(tge_ctx *c, const tgf_deriv *d, bool out, int i, tga_kind kind,
                          tgs_list *fields)
{
    unsigned u = out ? d->output_uses[i] : d->input_uses[i];
#define F(use) tgf_saved_field(c->arena, d, out, i, use)
    if (u & TGF_USE_TENSOR) {
        tgs_list_addf(fields, c->arena, "tg_saved %s;", F(TGF_USE_TENSOR));
        if (kind == TGA_OPT_TENSOR)
            tgs_list_addf(fields, c->arena, "bool %s_defined;   /* not None */", F(0));
        return;
    }
    if (u & TGF_USE_SIZES)
        tgs_list_addf(fields, c->arena, "tg_saved_sizes %s;", F(TGF_USE_SIZES));
    if ((u & TGF_USE_DIM) && !(u & TGF_USE_SIZES))
        tgs_list_addf(fields, c->arena, "int64_t %s;", F(TGF_USE_DIM));
    if ((u & TGF_USE_NUMEL) && !(u & TGF_USE_SIZES))
        tgs_list_addf(fields, c->arena, "int64_t %s;", F(TGF_USE_NUMEL));
    if (u & TGF_USE_DTYPE)
        tgs_list_addf(fields, c->arena, "tg_dtype %s;", F(TGF_USE_DTYPE));
    if (u & TGF_USE_DEVICE)
        tgs_list_addf(fields, c->arena, "tg_device %s;", F(TGF_USE_DEVICE));
    if (u & TGF_USE_VALUE)
        tgs_list_addf(fields, c->arena, "%s;%s", tga_cdecl(c->arena, kind, F(TGF_USE_VALUE)),
                      kind == TGA_INT_LIST || kind == TGA_OPT_INT_LIST || kind == TGA_STR ||
                      kind == TGA_OPT_STR ? "   /* points after the struct */" : "");
#undef F
}

static bool saves_tensors(const tgf_deriv *d)
{
    for (int i = 0; i < d->op->nargs; i++)
        if (d->input_uses[i] & TGF_USE_TENSOR)
            return true;
    for (int i = 0; i < d->op->nrets; i++)
        if (d->output_uses[i] & TGF_USE_TENSOR)
            return true;
    return false;
}

static const char *fn_name(tge_ctx *c, const tgf_deriv *d, const tgf_formula *f)
{
    tgs_list l = { 0 };
    for (int k = 0; k < f->src->nvars; k++)
        tgs_list_add(&l, c->arena, f->src->var_names[k]);
    return tgs_fmt(c->arena, "%s_%s", d->node_name, tgs_list_join(&l, c->arena, "_"));
}

static const char *needs_any(tge_ctx *c, const tgf_deriv *d, const tgf_formula *f)
{
    tgs_list l = { 0 };
    for (int k = 0; k < f->src->nvars; k++)
        if (f->edges[k] < 0)   /* the elements of a Tensor[]: the edges after the fixed ones */
            tgs_list_addf(&l, c->arena, "tg__gen_needs_from(node, %d)", d->nedges);
        else
            tgs_list_addf(&l, c->arena, "tg__node_needs_input_grad(node, %d)", f->edges[k]);
    const char *s = tgs_list_join(&l, c->arena, " || ");
    return f->src->nvars > 1 ? tgs_fmt(c->arena, "(%s)", s) : s;
}

static const char *node_code(tge_ctx *c, const tgf_deriv *d)
{
    const tga_op *op = d->op;
    const char *type = node_type(c, d);
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_list fields = { 0 };
    tgs_list_add(&fields, c->arena, "tg_node base;");
    for (int i = 0; i < op->nargs; i++)
        source_fields(c, d, false, i, op->args[i].kind, &fields);
    for (int i = 0; i < op->nrets; i++)
        source_fields(c, d, true, i, op->rets[i].kind, &fields);
    for (int k = 0; k < d->nlist_sizes; k++)
        tgs_list_addf(&fields, c->arena, "tg_int_list %s;   /* points after the struct */",
                      tgf_list_size_field(c->arena, d, k));
    tgs_printf(&b, "/* %s: %s */\ntypedef struct %s {\n", d->node_name,
               comment_text(c, d->dv->name_text), type);
    for (int i = 0; i < fields.n; i++)
        tgs_printf(&b, "    %s\n", fields.items[i]);
    tgs_printf(&b, "} %s;\n\n", type);

    for (int i = 0; i < d->nformulas; i++) {
        const tgf_formula *f = &d->formulas[i];
        if (f->root && f->root->kind != TGF_NOT_IMPL)
            tgs_printf(&b, "%s\n", tgf_compile(c->arena, d, f, fn_name(c, d, f), type));
    }

    tgs_printf(&b, "static int %s_apply(tg_node *node, tg_tensor *const *grads, tg_tensor **out)\n{\n"
               "    %s *n = (%s *)node;\n"
               "    int tg_sc = tg__scope_enter_kernel(), tg_rc = 0;\n"
               "    (void)n;\n    (void)grads;\n    (void)out;\n", d->node_name, type, type);
    for (int i = 0; i < d->nformulas; i++) {
        const tgf_formula *f = &d->formulas[i];
        if (!f->root)
            continue;
        const char *cond = tgs_fmt(c->arena, "tg_rc == 0 && %s", needs_any(c, d, f));
        if (f->root->kind == TGF_NOT_IMPL)
            tgs_printf(&b, "    if (%s)\n        tg_rc = tg__not_implemented(%s);\n", cond,
                       tgs_c_string(c->arena, f->root->c));
        else if (f->src->nvars > 1)
            tgs_printf(&b, "    if (%s)\n        tg_rc = %s(n, grads, out);\n", cond, fn_name(c, d, f));
        else if (f->edges[0] < 0)   /* a Tensor[] argument: one gradient per element edge */
            tgs_printf(&b, "    if (%s)\n        tg_rc = tg__gen_distribute(node, %d, %s(n, grads), out, \"%s\");\n",
                       cond, d->nedges, fn_name(c, d, f), f->src->vars);
        else
            tgs_printf(&b, "    if (%s && !(out[%d] = %s(n, grads)))\n        tg_rc = -1;\n", cond,
                       f->edges[0], fn_name(c, d, f));
    }
    tgs_puts(&b, "    tg__scope_leave_kernel(tg_sc);\n    return tg_rc;\n}\n\n");

    bool release = saves_tensors(d);
    if (release) {
        tgs_printf(&b, "static void %s_release_saved(tg_node *node)\n{\n    %s *n = (%s *)node;\n",
                   d->node_name, type, type);
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < (pass ? op->nrets : op->nargs); i++)
                if ((pass ? d->output_uses : d->input_uses)[i] & TGF_USE_TENSOR)
                    tgs_printf(&b, "    tg__saved_release(&n->%s);\n",
                               tgf_saved_field(c->arena, d, pass, i, TGF_USE_TENSOR));
        tgs_puts(&b, "}\n\n");
    }
    tgs_printf(&b, "static const tg_node_vtable %s_vtable = { \"%s\", %s_apply, %s };\n",
               d->node_name, d->node_name, d->node_name,
               release ? tgs_fmt(c->arena, "%s_release_saved", d->node_name) : "NULL");
    return tgs_finish(&b, c->arena);
}

/* ------------------------------------------------------------------ kernels */

/* `static <ret> tg__below_<cname>(<params>)`: the public call with autograd excluded. */
static const char *below_fn(tge_ctx *c, const tga_op *op)
{
    const char **args = tgm_alloc(c->arena, sizeof *args * (size_t)(op->nargs + 1));
    for (int i = 0; i < op->nargs; i++)
        args[i] = op->args[i].name;
    const char *name = tgs_fmt(c->arena, "tg__below_%s", op->cname);
    return tgs_fmt(c->arena,
                   "static %s\n{\n"
                   "    tg_keyset tg_prev = tg__autograd_below_begin();\n"
                   "    %s = %s;\n"
                   "    tg__autograd_below_end(tg_prev);\n"
                   "    return tg_r;\n}\n",
                   tga_kernel_decl(c->arena, op, name), tga_var_decl(c->arena, op->ret_ctype, "tg_r"),
                   tga_public_call(c->arena, op, args));
}

static const char *below_call(tge_ctx *c, const tga_op *op)
{
    tgs_list args = { 0 };
    for (int i = 0; i < op->nargs; i++)
        tgs_list_add(&args, c->arena, op->args[i].name);
    return tgs_fmt(c->arena, "tg__below_%s(%s)", op->cname, tgs_list_join(&args, c->arena, ", "));
}

/* The tensors of the call, for tg__any_requires_grad and tg__check_out_no_grad: the array
 * `tg_in` of single tensors, and an expression per Tensor[] argument. */
static void tensor_args(tge_ctx *c, const tga_op *op, tgs_buf *b, const char *check, const char *fail,
                        bool negate)
{
    tgs_list single = { 0 }, tests = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        if (is_tensor_kind(op->args[i].kind))
            tgs_list_add(&single, c->arena, op->args[i].name);
        else if (op->args[i].kind == TGA_TENSOR_LIST)
            tgs_list_addf(&tests, c->arena, "%s(%s%s.data, (int)%s.len)", check,
                          negate ? "" : tgs_fmt(c->arena, "\"%s\", ", op->opname), op->args[i].name,
                          op->args[i].name);
    }
    if (single.n) {
        tgs_printf(b, "    tg_tensor *const tg_in[] = { %s };\n", tgs_list_join(&single, c->arena, ", "));
        tgs_list_addf(&tests, c->arena, "%s(%stg_in, %d)", check,
                      negate ? "" : tgs_fmt(c->arena, "\"%s\", ", op->opname), single.n);
    }
    const char *all = tgs_list_join(&tests, c->arena, " || ");
    if (tests.n == 0)
        return;
    if (negate)
        tgs_printf(b, "    if (!(%s))\n        return %s;\n", all, fail);
    else
        tgs_printf(b, "    if (%s)\n        return %s;\n", all, fail);
}

static const char *out_kernel(tge_ctx *c, const tga_op *op, const char *decl)
{
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "%s\n{\n", decl);
    tensor_args(c, op, &b, "tg__check_out_no_grad", tga_error_value(c->arena, op), false);
    tgs_printf(&b, "    return %s;\n}\n", below_call(c, op));
    return tgs_finish(&b, c->arena);
}

/* The value of output i of the call's result `tg_r`. */
static const char *ret_val(tge_ctx *c, const tga_op *op, int i)
{
    return op->ret_struct ? tgs_fmt(c->arena, "tg_r.%s", op->rets[i].name) : "tg_r";
}

/* Saves input i (before the op) or output i (after it) into the node `tg_n`. */
static void save_source(tge_ctx *c, tgs_buf *b, const tgf_deriv *d, const tga_op *op, bool out, int i,
                        bool inplace)
{
    unsigned u = out ? d->output_uses[i] : d->input_uses[i];
    const char *v = out ? ret_val(c, op, i) : op->args[i].name;
    tga_kind kind = out ? op->rets[i].kind : op->args[i].kind;
#define F(use) tgf_saved_field(c->arena, d, out, i, use)
    if (u & TGF_USE_TENSOR) {
        if (!out && inplace && i == 0) {
            /* The formula needs self as it was: save a copy made before the op (PyTorch's
             * original_self), recorded by autograd so that double backward reaches self. */
            tgs_printf(b, "    tg_tensor *tg_orig = tg_clone(%s);\n"
                          "    if (!tg_orig) {\n        tg__node_release(&tg_n->base);\n"
                          "        return %s;\n    }\n"
                          "    tg__saved_save(&tg_n->%s, tg_orig, false, 0);\n"
                          "    tg_release(tg_orig);\n", v, tga_error_value(c->arena, op), F(TGF_USE_TENSOR));
        } else {
            tgs_printf(b, "    tg__saved_save(&tg_n->%s, %s, %s, %d);\n", F(TGF_USE_TENSOR), v,
                       out ? "true" : "false", out ? i : 0);
        }
        if (kind == TGA_OPT_TENSOR)
            tgs_printf(b, "    tg_n->%s_defined = %s != NULL;\n", F(0), v);
        return;
    }
    if (u & TGF_USE_SIZES)
        tgs_printf(b, "    tg__saved_sizes_save(&tg_n->%s, %s);\n", F(TGF_USE_SIZES), v);
    if ((u & TGF_USE_DIM) && !(u & TGF_USE_SIZES))
        tgs_printf(b, "    tg_n->%s = tg_tensor_dim(%s);\n", F(TGF_USE_DIM), v);
    if ((u & TGF_USE_NUMEL) && !(u & TGF_USE_SIZES))
        tgs_printf(b, "    tg_n->%s = tg_tensor_numel(%s);\n", F(TGF_USE_NUMEL), v);
    if (u & TGF_USE_DTYPE)
        tgs_printf(b, "    tg_n->%s = tg_tensor_dtype(%s);\n", F(TGF_USE_DTYPE), v);
    if (u & TGF_USE_DEVICE)
        tgs_printf(b, "    tg_n->%s = tg_tensor_device(%s);\n", F(TGF_USE_DEVICE), v);
    if (u & TGF_USE_VALUE) {
        if (kind == TGA_INT_LIST || kind == TGA_OPT_INT_LIST)
            tgs_printf(b, "    tg_n->%s = tg__gen_keep_ints(%s, &tg_cursor);\n", F(TGF_USE_VALUE), v);
        else if (kind == TGA_STR || kind == TGA_OPT_STR)
            ;   /* copied last by save_strings: int lists before them stay 8-byte aligned */
        else
            tgs_printf(b, "    tg_n->%s = %s;\n", F(TGF_USE_VALUE), v);
    }
#undef F
}

/* Bytes of int lists and strings the node keeps after its struct (ints first: aligned). */
static const char *extra_bytes(tge_ctx *c, const tgf_deriv *d, const tga_op *op)
{
    tgs_list ints = { 0 }, strs = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        if (!(d->input_uses[i] & TGF_USE_VALUE))
            continue;
        tga_kind k = op->args[i].kind;
        if (k == TGA_INT_LIST || k == TGA_OPT_INT_LIST)
            tgs_list_addf(&ints, c->arena, "tg__gen_ints_bytes(%s)", op->args[i].name);
        else if (k == TGA_STR || k == TGA_OPT_STR)
            tgs_list_addf(&strs, c->arena, "tg__gen_str_bytes(%s)", op->args[i].name);
    }
    for (int k = 0; k < d->nlist_sizes; k++)
        tgs_list_addf(&ints, c->arena, "(size_t)%s.len * sizeof(int64_t)",
                      op->args[d->list_sizes[k].arg].name);
    for (int i = 0; i < strs.n; i++)
        tgs_list_add(&ints, c->arena, strs.items[i]);
    return ints.n ? tgs_list_join(&ints, c->arena, " + ") : NULL;
}

/* Edges: an entry's keys in order (RECORD), or every tensor argument (NOT_IMPL). */
static void set_edges(tge_ctx *c, tgs_buf *b, const tga_op *op, const tgf_deriv *d, const char *node)
{
    if (d) {
        for (int e = 0; e < d->nedges; e++)
            tgs_printf(b, "    tg__node_set_next_edge(%s, %d, %s);\n", node, e,
                       op->args[d->edge_arg[e]].name);
        if (d->list_arg >= 0)
            tgs_printf(b, "    for (int64_t tg_i = 0; tg_i < %s.len; tg_i++)\n"
                          "        tg__node_set_next_edge(%s, %d + (int)tg_i, %s.data[tg_i]);\n",
                       op->args[d->list_arg].name, node, d->nedges, op->args[d->list_arg].name);
        return;
    }
    tgs_puts(b, "    int tg_e = 0;\n");
    for (int i = 0; i < op->nargs; i++) {
        const char *name = op->args[i].name;
        if (is_tensor_kind(op->args[i].kind))
            tgs_printf(b, "    tg__node_set_next_edge(%s, tg_e++, %s);\n", node, name);
        else if (op->args[i].kind == TGA_TENSOR_LIST)
            tgs_printf(b, "    for (int64_t tg_i = 0; tg_i < %s.len; tg_i++)\n"
                          "        tg__node_set_next_edge(%s, tg_e++, %s.data[tg_i]);\n", name, node, name);
    }
}

static const char *num_next(tge_ctx *c, const tga_op *op)
{
    int fixed = 0;
    tgs_list l = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        fixed += is_tensor_kind(op->args[i].kind);
        if (op->args[i].kind == TGA_TENSOR_LIST)
            tgs_list_addf(&l, c->arena, "(int)%s.len", op->args[i].name);
    }
    const char *lists = tgs_list_join(&l, c->arena, " + ");
    return l.n ? tgs_fmt(c->arena, "%d + %s", fixed, lists) : tgs_fmt(c->arena, "%d", fixed);
}

/* A dim of `xs.size(d)` in terms of the kernel's parameters (literals, int arguments and C
 * operators: formula_check.c allows nothing else there). */
static const char *record_expr(tge_ctx *c, const tga_op *op, const tgf_node *n)
{
    switch (n->kind) {
    case TGF_LIT: return n->c;
    case TGF_INPUT: return op->args[n->index].name;
    case TGF_COP:
        if (n->nargs == 1)
            return tgs_fmt(c->arena, "(%s%s)", n->c, record_expr(c, op, n->args[0]));
        return tgs_fmt(c->arena, "(%s %s %s)", record_expr(c, op, n->args[0]), n->c,
                       record_expr(c, op, n->args[1]));
    default: return "0";
    }
}

/* Copies the string arguments the formulas read after every int list in the node's trailing
 * storage (extra_bytes reserves ints first for the same reason: alignment). */
static void save_strings(tge_ctx *c, tgs_buf *b, const tgf_deriv *d, const tga_op *op)
{
    for (int i = 0; i < op->nargs; i++) {
        tga_kind k = op->args[i].kind;
        if ((d->input_uses[i] & TGF_USE_VALUE) && (k == TGA_STR || k == TGA_OPT_STR))
            tgs_printf(b, "    tg_n->%s = tg__gen_keep_str(%s, &tg_cursor);\n",
                       tgf_saved_field(c->arena, d, false, i, TGF_USE_VALUE), op->args[i].name);
    }
}

/* Saves each `xs.size(d)` the formulas read: the elements' sizes, after the struct. */
static void save_list_sizes(tge_ctx *c, tgs_buf *b, const tgf_deriv *d, const tga_op *op)
{
    for (int k = 0; k < d->nlist_sizes; k++)
        tgs_printf(b, "    tg_n->%s = tg__gen_keep_list_sizes(%s, %s, &tg_cursor);\n",
                   tgf_list_size_field(c->arena, d, k), op->args[d->list_sizes[k].arg].name,
                   record_expr(c, op, d->list_sizes[k].dim));
}

/* An op returning one Tensor[]: its node has an output per element, so the op runs first (it
 * is never in place, so the inputs saved after it are as they were), then the node is made
 * with the list's length and every element gets history. */
static const char *record_list_kernel(tge_ctx *c, const tga_op *op, const tgf_deriv *d, const char *decl)
{
    const char *fail = tga_error_value(c->arena, op);
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "%s\n{\n", decl);
    tensor_args(c, op, &b, "tg__any_requires_grad", below_call(c, op), true);
    tgs_printf(&b, "    tg_tensor_list tg_r = %s;\n    if (!tg_r.data)\n        return tg_r;\n", below_call(c, op));
    const char *node = d ? "&tg_n->base" : "tg_n";
    const char *extra = d ? extra_bytes(c, d, op) : NULL;
    if (d) {
        const char *next = d->list_arg < 0 ? tgs_fmt(c->arena, "%d", d->nedges)
                           : tgs_fmt(c->arena, "%d + (int)%s.len", d->nedges, op->args[d->list_arg].name);
        tgs_printf(&b, "    %s *tg_n = (%s *)tg__node_new(sizeof *tg_n%s%s, &%s_vtable, (int)tg_r.len, %s);\n",
                   node_type(c, d), node_type(c, d), extra ? " + " : "", extra ? extra : "",
                   d->node_name, next);
    } else {
        tgs_printf(&b, "    tg_node *tg_n = tg__node_new(sizeof(tg_node), &tg__ni_vtable_%s, (int)tg_r.len, %s);\n",
                   op->cname, num_next(c, op));
    }
    tgs_printf(&b, "    if (!tg_n) {\n        tg_tensor_list_release(tg_r);\n        return %s;\n    }\n", fail);
    if (extra)
        tgs_puts(&b, "    char *tg_cursor = (char *)(tg_n + 1);\n");
    set_edges(c, &b, op, d, node);
    if (d)
        save_list_sizes(c, &b, d, op);
    for (int i = 0; d && i < op->nargs; i++)
        save_source(c, &b, d, op, false, i, false);
    if (d)
        save_strings(c, &b, d, op);
    if (!d || d->output_diff[0])
        tgs_printf(&b, "    for (int64_t tg_i = 0; tg_i < tg_r.len; tg_i++)\n"
                      "        if (tg__gen_differentiable(tg_r.data[tg_i]))\n"
                      "            tg__set_history(tg_r.data[tg_i], %s, (int)tg_i);\n", node);
    tgs_printf(&b, "    tg__node_release(%s);\n    return tg_r;\n}\n", node);
    return tgs_finish(&b, c->arena);
}

static const char *record_kernel(tge_ctx *c, const tga_op *op, const tgf_deriv *d, const char *decl)
{
    if (op->nrets == 1 && op->rets[0].kind == TGA_TENSOR_LIST)
        return record_list_kernel(c, op, d, decl);
    bool inplace = op->f->kind == TGM_KIND_INPLACE;
    const char *fail = tga_error_value(c->arena, op);
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "%s\n{\n", decl);
    tensor_args(c, op, &b, "tg__any_requires_grad", below_call(c, op), true);
    if (inplace)
        tgs_printf(&b, "    if (tg__check_inplace(\"%s\", %s))\n        return %s;\n", op->opname,
                   op->args[0].name, fail);
    const char *node = d ? "&tg_n->base" : "tg_n";
    if (d) {
        const char *extra = extra_bytes(c, d, op);
        const char *next = d->list_arg < 0 ? tgs_fmt(c->arena, "%d", d->nedges)
                           : tgs_fmt(c->arena, "%d + (int)%s.len", d->nedges, op->args[d->list_arg].name);
        tgs_printf(&b, "    %s *tg_n = (%s *)tg__node_new(sizeof *tg_n%s%s, &%s_vtable, %d, %s);\n",
                   node_type(c, d), node_type(c, d), extra ? " + " : "", extra ? extra : "",
                   d->node_name, op->nrets, next);
    } else {
        tgs_printf(&b, "    tg_node *tg_n = tg__node_new(sizeof(tg_node), &tg__ni_vtable_%s, %d, %s);\n",
                   op->cname, op->nrets, num_next(c, op));
    }
    tgs_printf(&b, "    if (!tg_n)\n        return %s;\n", fail);
    if (d && extra_bytes(c, d, op))
        tgs_puts(&b, "    char *tg_cursor = (char *)(tg_n + 1);\n");
    set_edges(c, &b, op, d, node);
    if (d)
        save_list_sizes(c, &b, d, op);
    for (int i = 0; d && i < op->nargs; i++)
        save_source(c, &b, d, op, false, i, inplace);
    if (d)
        save_strings(c, &b, d, op);
    tgs_printf(&b, "    %s = %s;\n", tga_var_decl(c->arena, op->ret_ctype, "tg_r"), below_call(c, op));
    tgs_printf(&b, "    if (!%s) {\n        tg__node_release(%s);\n        return %s;\n    }\n",
               ret_val(c, op, 0), node, fail);
    for (int i = 0; i < op->nrets; i++)
        if (!d || d->output_diff[i])
            tgs_printf(&b, "    if (tg__gen_differentiable(%s))\n        tg__set_history(%s, %s, %d);\n",
                       ret_val(c, op, i), ret_val(c, op, i), node, i);
    for (int i = 0; d && i < op->nrets; i++)
        save_source(c, &b, d, op, true, i, inplace);
    tgs_printf(&b, "    tg__node_release(%s);\n    return tg_r;\n}\n", node);
    return tgs_finish(&b, c->arena);
}

static const char *not_impl_node(tge_ctx *c, const tga_op *op)
{
    return tgs_fmt(c->arena,
                   "static int tg__ni_apply_%s(tg_node *node, tg_tensor *const *grads, tg_tensor **out)\n{\n"
                   "    (void)node;\n    (void)grads;\n    (void)out;\n"
                   "    return tg__not_implemented(\"%s\");\n}\n\n"
                   "static const tg_node_vtable tg__ni_vtable_%s = { \"NotImplemented\", tg__ni_apply_%s, NULL };\n\n",
                   op->cname, op->f->schema.full_name, op->cname, op->cname);
}

static const char *kernel_code(tge_ctx *c, const tga_op *op, const tgf_derivs *ds)
{
    const char *name = tgs_fmt(c->arena, "tg__autograd_kernel_%s", op->cname);
    const char *decl = tga_kernel_decl(c->arena, op, name);
    const char *head = tgs_fmt(c->arena, "/* %s */\n%s\n", tga_schema_comment(c->arena, op->f),
                               below_fn(c, op));
    switch (op->autograd) {
    case TGA_AUTOGRAD_OUT: return tgs_fmt(c->arena, "%s%s", head, out_kernel(c, op, decl));
    case TGA_AUTOGRAD_NOT_IMPL:
        return tgs_fmt(c->arena, "%s%s%s", head, not_impl_node(c, op), record_kernel(c, op, NULL, decl));
    case TGA_AUTOGRAD_RECORD:
        if (ds->by_op[op->index])
            return tgs_fmt(c->arena, "%s%s", head, record_kernel(c, op, ds->by_op[op->index], decl));
        return NULL;   /* its entry failed to check: already reported */
    default: return NULL;
    }
}

/* ------------------------------------------------------------------ files */

void tge_emit_autograd(tge_ctx *c)
{
    tgf_derivs ds;
    if (tgf_check_all(c->model, &c->ops, c->arena, &ds) != 0)
        return;
    tgs_list nodes = { 0 }, kernels = { 0 }, grad_ops = { 0 };
    for (int i = 0; i < ds.n; i++)
        if (ds.d[i].op)
            tgs_list_addf(&nodes, c->arena, "%s\n", node_code(c, &ds.d[i]));
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        const char *k = kernel_code(c, op, &ds);
        if (k)
            tgs_list_addf(&kernels, c->arena, "%s\n", k);
        if (op->autograd == TGA_AUTOGRAD_RECORD && ds.by_op[i])
            tgs_list_addf(&grad_ops, c->arena, "X(%s, \"%s\") \\", op->cname, op->f->schema.full_name);
    }
    if (nodes.n == 0)
        tgs_list_add(&nodes, c->arena, "/* (none: no derivatives file) */");
    if (kernels.n == 0)
        tgs_list_add(&kernels, c->arena, "/* (none) */");
    tgt_template file = tge_template(c, "tg_autograd.c.in");
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "nodes", &nodes);
    tgt_set_list(e, "kernels", &kernels);
    tge_add_file(c, c->opts->out_dir, "tg_autograd.c", tgt_render_str(&file, e, c->arena));
    tgt_template list = tge_template(c, "tg_grad_op_list.h.in");
    e = tge_env(c);
    tgt_set_list(e, "ops", &grad_ops);
    tge_add_file(c, c->opts->out_dir, "tg_grad_op_list.h", tgt_render_str(&list, e, c->arena));
}
