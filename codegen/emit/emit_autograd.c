/* generated/tg_autograd.c and generated/tg_grad_op_list.h: backward nodes (struct, compiled
 * formulas, apply, release_saved, vtable) per derivative entry, and the autograd kernel of each
 * operator (api_autograd.c decides which kind). docs/generated-code.md, "Autograd".
 *
 * The fixed text is in templates/tg_autograd_*.c.in (node, release, kernel, not_impl, out,
 * record, record_list, engine, engine_missing); this file computes their holes: the node's
 * fields, the calls of the compiled formulas (formula_c.c), the lines that save, link and record
 * per operator, and whether the spec has the operators the engine calls. */
#include <string.h>

#include "emit/emit_internal.h"
#include "formula/formula.h"

/* The templates of one run, loaded once. */
typedef struct templates {
    tgt_template node, release, kernel, not_impl, out, record, record_list, engine, engine_missing,
        engine_fw, engine_fw_missing;
} templates;

static bool is_tensor_kind(tga_kind k) { return k == TGA_TENSOR || k == TGA_OPT_TENSOR; }
/* Tensor[] or Tensor?[] (whose NULL elements the runtime's checks and edges skip). */
static bool is_tensor_list_kind(tga_kind k)
{
    return k == TGA_TENSOR_LIST || k == TGA_OPT_TENSOR_LIST;
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
    if (u & TGF_USE_SIZES) tgs_list_addf(fields, c->arena, "tg_saved_sizes %s;", F(TGF_USE_SIZES));
    if ((u & TGF_USE_DIM) && !(u & TGF_USE_SIZES))
        tgs_list_addf(fields, c->arena, "int64_t %s;", F(TGF_USE_DIM));
    if ((u & TGF_USE_NUMEL) && !(u & TGF_USE_SIZES))
        tgs_list_addf(fields, c->arena, "int64_t %s;", F(TGF_USE_NUMEL));
    if (u & TGF_USE_DTYPE) tgs_list_addf(fields, c->arena, "tg_dtype %s;", F(TGF_USE_DTYPE));
    if (u & TGF_USE_DEVICE) tgs_list_addf(fields, c->arena, "tg_device %s;", F(TGF_USE_DEVICE));
    if (u & TGF_USE_VALUE)
        tgs_list_addf(fields, c->arena, "%s;%s", tga_cdecl(c->arena, kind, F(TGF_USE_VALUE)),
                      kind == TGA_INT_LIST || kind == TGA_OPT_INT_LIST || kind == TGA_STR ||
                              kind == TGA_OPT_STR
                          ? "   /* points after the struct */"
                          : "");
#undef F
}

static tgs_list node_fields(tge_ctx *c, const tgf_deriv *d)
{
    const tga_op *op = d->op;
    tgs_list fields = { 0 };
    tgs_list_add(&fields, c->arena, "tg_node base;");
    for (int i = 0; i < op->nargs; i++) source_fields(c, d, false, i, op->args[i].kind, &fields);
    for (int i = 0; i < op->nrets; i++) source_fields(c, d, true, i, op->rets[i].kind, &fields);
    for (int k = 0; k < d->nlist_sizes; k++)
        tgs_list_addf(&fields, c->arena, "tg_int_list %s;   /* points after the struct */",
                      tgf_list_size_field(c->arena, d, k));
    return fields;
}

static const char *fn_name(tge_ctx *c, const tgf_deriv *d, const tgf_formula *f)
{
    tgs_list l = { 0 };
    for (int k = 0; k < f->src->nvars; k++) tgs_list_add(&l, c->arena, f->src->var_names[k]);
    return tgs_fmt(c->arena, "%s_%s", d->node_name, tgs_list_join(&l, c->arena, "_"));
}

static const char *needs_any(tge_ctx *c, const tgf_deriv *d, const tgf_formula *f)
{
    tgs_list l = { 0 };
    for (int k = 0; k < f->src->nvars; k++)
        if (f->edges[k] < 0) /* the elements of a Tensor[]: the edges after the fixed ones */
            tgs_list_addf(&l, c->arena, "tg__gen_needs_from(node, %d)", d->nedges);
        else tgs_list_addf(&l, c->arena, "tg__node_needs_input_grad(node, %d)", f->edges[k]);
    const char *s = tgs_list_join(&l, c->arena, " || ");
    return f->src->nvars > 1 ? tgs_fmt(c->arena, "(%s)", s) : s;
}

/* The statement of apply that runs formula f when one of its inputs needs a gradient. */
static const char *formula_call(tge_ctx *c, const tgf_deriv *d, const tgf_formula *f)
{
    const char *cond = tgs_fmt(c->arena, "tg_rc == 0 && %s", needs_any(c, d, f));
    const char *fn = fn_name(c, d, f);
    if (f->root->kind == TGF_NOT_IMPL)
        return tgs_fmt(c->arena, "if (%s)\n    tg_rc = tg_autograd_not_implemented(%s);", cond,
                       tgs_c_string(c->arena, f->root->c));
    if (f->src->nvars > 1 || tgf_formula_may_be_undefined(f))
        return tgs_fmt(c->arena, "if (%s)\n    tg_rc = %s(n, grads, out);", cond, fn);
    if (f->edges[0] < 0) /* a Tensor[] argument: one gradient per element edge */
        return tgs_fmt(
            c->arena,
            "if (%s)\n    tg_rc = tg__gen_distribute(node, %d, %s(n, grads), out, \"%s\");", cond,
            d->nedges, fn, f->src->vars);
    return tgs_fmt(c->arena, "if (%s && !(out[%d] = %s(n, grads)))\n    tg_rc = -1;", cond,
                   f->edges[0], fn);
}

/* release_saved, for a node that saves tensors ("" otherwise). */
static const char *release_saved(tge_ctx *c, const templates *t, const tgf_deriv *d, tgt_env *e)
{
    const tga_op *op = d->op;
    tgs_list releases = { 0 };
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < (pass ? op->nrets : op->nargs); i++)
            if ((pass ? d->output_uses : d->input_uses)[i] & TGF_USE_TENSOR)
                tgs_list_addf(&releases, c->arena, "tg_autograd_saved_release(&n->%s);",
                              tgf_saved_field(c->arena, d, pass, i, TGF_USE_TENSOR));
    for (int i = 0; i < op->nargs; i++) /* Tensor[] / Tensor?[] values (tg__gen_keep_tensors) */
        if ((d->input_uses[i] & TGF_USE_VALUE) &&
            (op->args[i].kind == TGA_TENSOR_LIST || op->args[i].kind == TGA_OPT_TENSOR_LIST)) {
            /* emptied: release_saved runs after backward and again when the node dies */
            const char *fld = tgf_saved_field(c->arena, d, 0, i, TGF_USE_VALUE);
            tgs_list_addf(&releases, c->arena,
                          "tg_tensor_list_release(n->%s);\nn->%s = (tg_tensor_list){ NULL, 0 };",
                          fld, fld);
        }
    if (releases.n == 0) return "";
    tgt_set_list(e, "releases", &releases);
    return tgt_render_str(&t->release, e, c->arena);
}

static const char *node_code(tge_ctx *c, const templates *t, const tgf_deriv *d)
{
    tgs_list formulas = { 0 }, calls = { 0 }, unused = { 0 };
    bool compiled = false;
    const char *type = node_type(c, d);
    for (int i = 0; i < d->nformulas; i++) {
        const tgf_formula *f = &d->formulas[i];
        if (!f->root) continue;
        if (f->root->kind != TGF_NOT_IMPL) {
            tgs_list_addf(&formulas, c->arena, "%s\n",
                          tgf_compile(c->arena, d, f, fn_name(c, d, f), type));
            compiled = true;
        }
        tgs_list_add(&calls, c->arena, formula_call(c, d, f));
    }
    if (!compiled) { /* only compiled formulas are called with n, grads and out */
        tgs_list_add(&unused, c->arena, "(void)n;");
        tgs_list_add(&unused, c->arena, "(void)grads;");
        tgs_list_add(&unused, c->arena, "(void)out;");
    }
    tgt_env *e = tge_env(c);
    tgt_set(e, "node", d->node_name);
    tgt_set(e, "type", type);
    tgt_set(e, "name_text", tgs_c_comment(c->arena, d->dv->name_text));
    tgs_list fields = node_fields(c, d);
    tgt_set_list(e, "fields", &fields);
    tgt_set_list(e, "formulas", &formulas);
    tgt_set_list(e, "unused", &unused);
    tgt_set_list(e, "calls", &calls);
    const char *release = release_saved(c, t, d, e);
    tgt_set(e, "release_saved", release);
    tgt_set(e, "release", *release ? tgs_fmt(c->arena, "%s_release_saved", d->node_name) : "NULL");
    return tgt_render_str(&t->node, e, c->arena);
}

/* ------------------------------------------------------------------ kernels */

static const char *below_call(tge_ctx *c, const tga_op *op)
{
    tgs_list args = { 0 };
    for (int i = 0; i < op->nargs; i++) tgs_list_add(&args, c->arena, op->args[i].name);
    return tgs_fmt(c->arena, "tg__below_%s(%s)", op->cname, tgs_list_join(&args, c->arena, ", "));
}

/* The test of the call's tensors by `check` (tg_autograd_any_requires_grad or tg_autograd_check_out):
 * the array `tg_in` of single tensors and an expression per Tensor[] argument; the kernel
 * returns `fail` when the test holds (when it does not, with `negate`). Nothing without
 * tensors. */
static tgs_list tensor_check(tge_ctx *c, const tga_op *op, const char *check, const char *fail,
                             bool negate)
{
    tgs_list single = { 0 }, tests = { 0 }, lines = { 0 };
    const char *prefix = negate ? "" : tgs_fmt(c->arena, "\"%s\", ", op->opname);
    for (int i = 0; i < op->nargs; i++) {
        const char *name = op->args[i].name;
        if (is_tensor_kind(op->args[i].kind)) tgs_list_add(&single, c->arena, name);
        else if (is_tensor_list_kind(op->args[i].kind))
            tgs_list_addf(&tests, c->arena, "%s(%s%s.data, (int)%s.len)", check, prefix, name,
                          name);
    }
    if (single.n) {
        tgs_list_addf(&lines, c->arena, "tg_tensor *const tg_in[] = { %s };",
                      tgs_list_join(&single, c->arena, ", "));
        tgs_list_addf(&tests, c->arena, "%s(%stg_in, %d)", check, prefix, single.n);
    }
    const char *all = tgs_list_join(&tests, c->arena, " || ");
    if (tests.n)
        tgs_list_addf(&lines, c->arena,
                      negate ? "if (!(%s))\n    return %s;" : "if (%s)\n    return %s;", all, fail);
    return lines;
}

/* The value of output i of the call's result `tg_r`. */
static const char *ret_val(tge_ctx *c, const tga_op *op, int i)
{
    return op->ret_struct ? tgs_fmt(c->arena, "tg_r.%s", op->rets[i].name) : "tg_r";
}

/* Saves input i (before the op) or output i (after it) into the node `tg_n`. */
static void save_source(tge_ctx *c, tgs_list *lines, const tgf_deriv *d, bool out, int i,
                        bool inplace)
{
    const tga_op *op = d->op;
    unsigned u = out ? d->output_uses[i] : d->input_uses[i];
    const char *v = out ? ret_val(c, op, i) : op->args[i].name;
    tga_kind kind = out ? op->rets[i].kind : op->args[i].kind;
    tgm_arena *a = c->arena;
#define F(use) tgf_saved_field(a, d, out, i, use)
    if (u & TGF_USE_TENSOR) {
        if (!out && inplace && i == 0)
            /* The formula needs self as it was: save a copy made before the op (PyTorch's
             * original_self), recorded by autograd so that double backward reaches self. */
            tgs_list_addf(lines, a,
                          "tg_tensor *tg_orig = tg_clone(%s);\n"
                          "if (!tg_orig) {\n    tg_autograd_node_release(&tg_n->base);\n"
                          "    return %s;\n}\n"
                          "tg_autograd_save(&tg_n->%s, tg_orig, false, 0);\n"
                          "tg_release(tg_orig);",
                          v, tga_error_value(a, op), F(TGF_USE_TENSOR));
        else
            tgs_list_addf(lines, a, "tg_autograd_save(&tg_n->%s, %s, %s, %d);", F(TGF_USE_TENSOR),
                          v, out ? "true" : "false", out ? i : 0);
        if (kind == TGA_OPT_TENSOR)
            tgs_list_addf(lines, a, "tg_n->%s_defined = %s != NULL;", F(0), v);
        return;
    }
    if (u & TGF_USE_SIZES)
        tgs_list_addf(lines, a, "tg__saved_sizes_save(&tg_n->%s, %s);", F(TGF_USE_SIZES), v);
    if ((u & TGF_USE_DIM) && !(u & TGF_USE_SIZES))
        tgs_list_addf(lines, a, "tg_n->%s = tg_tensor_dim(%s);", F(TGF_USE_DIM), v);
    if ((u & TGF_USE_NUMEL) && !(u & TGF_USE_SIZES))
        tgs_list_addf(lines, a, "tg_n->%s = tg_tensor_numel(%s);", F(TGF_USE_NUMEL), v);
    if (u & TGF_USE_DTYPE)
        tgs_list_addf(lines, a, "tg_n->%s = tg_tensor_dtype(%s);", F(TGF_USE_DTYPE), v);
    if (u & TGF_USE_DEVICE)
        tgs_list_addf(lines, a, "tg_n->%s = tg_tensor_device(%s);", F(TGF_USE_DEVICE), v);
    if (u & TGF_USE_VALUE) {
        if (kind == TGA_INT_LIST || kind == TGA_OPT_INT_LIST)
            tgs_list_addf(lines, a, "tg_n->%s = tg__gen_keep_ints(%s, &tg_cursor);",
                          F(TGF_USE_VALUE), v);
        else if (kind == TGA_TENSOR_LIST || kind == TGA_OPT_TENSOR_LIST)
            /* the caller's array may die before backward: a copy holding references */
            tgs_list_addf(lines, a, "tg_n->%s = tg__gen_keep_tensors(%s);", F(TGF_USE_VALUE), v);
        else if (kind != TGA_STR && kind != TGA_OPT_STR) /* strings: save_inputs, last */
            tgs_list_addf(lines, a, "tg_n->%s = %s;", F(TGF_USE_VALUE), v);
    }
#undef F
}

/* Bytes of int lists and strings the node keeps after its struct (ints first: aligned). */
static const char *extra_bytes(tge_ctx *c, const tgf_deriv *d)
{
    const tga_op *op = d->op;
    tgs_list ints = { 0 }, strs = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        if (!(d->input_uses[i] & TGF_USE_VALUE)) continue;
        tga_kind k = op->args[i].kind;
        if (k == TGA_INT_LIST || k == TGA_OPT_INT_LIST)
            tgs_list_addf(&ints, c->arena, "tg__gen_ints_bytes(%s)", op->args[i].name);
        else if (k == TGA_STR || k == TGA_OPT_STR)
            tgs_list_addf(&strs, c->arena, "tg__gen_str_bytes(%s)", op->args[i].name);
    }
    for (int k = 0; k < d->nlist_sizes; k++)
        tgs_list_addf(&ints, c->arena, "(size_t)%s.len * sizeof(int64_t)",
                      op->args[d->list_sizes[k].arg].name);
    for (int i = 0; i < strs.n; i++) tgs_list_add(&ints, c->arena, strs.items[i]);
    return ints.n ? tgs_list_join(&ints, c->arena, " + ") : NULL;
}

/* Edges: an entry's keys in order (RECORD), or every tensor argument (NOT_IMPL). */
static tgs_list edges(tge_ctx *c, const tga_op *op, const tgf_deriv *d, const char *node)
{
    tgs_list lines = { 0 };
    const char *loop = "for (int64_t tg_i = 0; tg_i < %s.len; tg_i++)\n"
                       "    tg_autograd_node_set_next_edge(%s, %s, %s.data[tg_i]);";
    if (d) {
        for (int e = 0; e < d->nedges; e++)
            tgs_list_addf(&lines, c->arena, "tg_autograd_node_set_next_edge(%s, %d, %s);", node, e,
                          op->args[d->edge_arg[e]].name);
        const char *list = d->list_arg >= 0 ? op->args[d->list_arg].name : NULL;
        if (list)
            tgs_list_addf(&lines, c->arena, loop, list, node,
                          tgs_fmt(c->arena, "%d + (int)tg_i", d->nedges), list);
        return lines;
    }
    tgs_list_add(&lines, c->arena, "int tg_e = 0;");
    for (int i = 0; i < op->nargs; i++) {
        const char *name = op->args[i].name;
        if (is_tensor_kind(op->args[i].kind))
            tgs_list_addf(&lines, c->arena, "tg_autograd_node_set_next_edge(%s, tg_e++, %s);", node,
                          name);
        else if (is_tensor_list_kind(op->args[i].kind))
            tgs_list_addf(&lines, c->arena, loop, name, node, "tg_e++", name);
    }
    return lines;
}

static const char *num_next(tge_ctx *c, const tga_op *op)
{
    int fixed = 0;
    tgs_list l = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        fixed += is_tensor_kind(op->args[i].kind);
        if (is_tensor_list_kind(op->args[i].kind))
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
        if (n->nargs == 1) return tgs_fmt(c->arena, "(%s%s)", n->c, record_expr(c, op, n->args[0]));
        return tgs_fmt(c->arena, "(%s %s %s)", record_expr(c, op, n->args[0]), n->c,
                       record_expr(c, op, n->args[1]));
    default: return "0";
    }
}

/* What the node keeps of the inputs, in the order its trailing storage needs: each
 * `xs.size(d)` the formulas read (the elements' sizes), the inputs, then the strings after
 * every int list (extra_bytes reserves ints first for the same reason: alignment). */
static tgs_list save_inputs(tge_ctx *c, const tgf_deriv *d, bool inplace)
{
    const tga_op *op = d->op;
    tgs_list lines = { 0 };
    for (int k = 0; k < d->nlist_sizes; k++)
        tgs_list_addf(&lines, c->arena, "tg_n->%s = tg__gen_keep_list_sizes(%s, %s, &tg_cursor);",
                      tgf_list_size_field(c->arena, d, k), op->args[d->list_sizes[k].arg].name,
                      record_expr(c, op, d->list_sizes[k].dim));
    for (int i = 0; i < op->nargs; i++) save_source(c, &lines, d, false, i, inplace);
    for (int i = 0; i < op->nargs; i++) {
        tga_kind k = op->args[i].kind;
        if ((d->input_uses[i] & TGF_USE_VALUE) && (k == TGA_STR || k == TGA_OPT_STR))
            tgs_list_addf(&lines, c->arena, "tg_n->%s = tg__gen_keep_str(%s, &tg_cursor);",
                          tgf_saved_field(c->arena, d, false, i, TGF_USE_VALUE), op->args[i].name);
    }
    return lines;
}

/* The holes shared by both record templates: the node (the entry's, or NotImplemented's when
 * d is NULL) with `noutputs` outputs, its edges and what it saves of the inputs. */
static tgt_env *record_env(tge_ctx *c, const tga_op *op, const tgf_deriv *d, const char *decl,
                           const char *noutputs, bool inplace, const tgf_deriv *fd)
{
    tgt_env *e = tge_env(c);
    const char *node = d ? "&tg_n->base" : "tg_n";
    const char *extra = d ? extra_bytes(c, d) : NULL;
    /* Forward mode (emit_forward.c): without an input requiring grad, the op runs through
     * tg__fwk_<op>; with one, the tangents follow the history. */
    const char *fw_before, *fw_release, *fw_after;
    tge_forward_record(c, op, fd, node, &fw_before, &fw_release, &fw_after);
    const char *plain_call =
        *fw_before ? tgs_replace(c->arena, below_call(c, op), "tg__below_", "tg__fwk_")
                   : below_call(c, op);
    tgs_list check = tensor_check(c, op, "tg_autograd_any_requires_grad", plain_call, true);
    tgt_set(e, "forward_before", fw_before);
    tgt_set(e, "forward_release", fw_release);
    tgt_set(e, "forward_after", fw_after);
    tgs_list saves = { 0 }, links = edges(c, op, d, node);
    if (d) {
        const char *next = d->list_arg < 0 ? tgs_fmt(c->arena, "%d", d->nedges)
                                           : tgs_fmt(c->arena, "%d + (int)%s.len", d->nedges,
                                                     op->args[d->list_arg].name);
        tgt_setf(e, "node_new",
                 "%s *tg_n = (%s *)tg_autograd_node_new(sizeof *tg_n%s%s, &%s_vtable, %s, %s);",
                 node_type(c, d), node_type(c, d), extra ? " + " : "", extra ? extra : "",
                 d->node_name, noutputs, next);
        saves = save_inputs(c, d, inplace);
    } else {
        tgt_setf(
            e, "node_new",
            "tg_node *tg_n = tg_autograd_node_new(sizeof(tg_node), &tg__ni_vtable_%s, %s, %s);",
            op->cname, noutputs, num_next(c, op));
    }
    tgt_set(e, "decl", decl);
    tgt_set(e, "node", node);
    tgt_set(e, "fail", tga_error_value(c->arena, op));
    tgt_set(e, "below_call", below_call(c, op));
    tgt_set(e, "cursor", extra ? "char *tg_cursor = (char *)(tg_n + 1);" : "");
    tgt_set_list(e, "check", &check);
    tgt_set_list(e, "edges", &links);
    tgt_set_list(e, "save_inputs", &saves);
    return e;
}

/* An op returning one Tensor[]: its node has an output per element, so the op runs first (it
 * is never in place, so the inputs saved after it are as they were), then the node is made
 * with the list's length and every element gets history. */
static const char *record_list_kernel(tge_ctx *c, const templates *t, const tga_op *op,
                                      const tgf_deriv *d, const char *decl, const tgf_deriv *fd)
{
    tgt_env *e = record_env(c, op, d, decl, "(int)tg_r.len", false, fd);
    tgs_list history = { 0 };
    if (!d || d->output_diff[0])
        tgs_list_addf(&history, c->arena,
                      "for (int64_t tg_i = 0; tg_i < tg_r.len; tg_i++)\n"
                      "    if (tg__gen_differentiable(tg_r.data[tg_i]))\n"
                      "        tg_autograd_set_history(tg_r.data[tg_i], %s, (int)tg_i);",
                      d ? "&tg_n->base" : "tg_n");
    tgt_set_list(e, "history", &history);
    return tgt_render_str(&t->record_list, e, c->arena);
}

static const char *record_kernel(tge_ctx *c, const templates *t, const tga_op *op,
                                 const tgf_deriv *d, const char *decl, const tgf_deriv *fd)
{
    if (op->nrets == 1 && op->rets[0].kind == TGA_TENSOR_LIST)
        return record_list_kernel(c, t, op, d, decl, fd);
    bool inplace = op->f->kind == TGM_KIND_INPLACE;
    tgt_env *e = record_env(c, op, d, decl, tgs_fmt(c->arena, "%d", op->nrets), inplace, fd);
    const char *node = d ? "&tg_n->base" : "tg_n";
    tgs_list history = { 0 }, saves = { 0 };
    /* The call failed when every Tensor output is NULL: an operator with an output mask
     * (convolution_backward) leaves the outputs it was not asked for undefined. */
    tgs_list all_null = { 0 };
    for (int i = 0; i < op->nrets; i++)
        if (op->rets[i].kind == TGA_TENSOR)
            tgs_list_addf(&all_null, c->arena, "!%s", ret_val(c, op, i));
    if (!all_null.n) tgs_list_addf(&all_null, c->arena, "!%s", ret_val(c, op, 0));
    for (int i = 0; i < op->nrets; i++)
        if ((!d || d->output_diff[i]) && op->rets[i].kind == TGA_TENSOR)
            tgs_list_addf(
                &history, c->arena,
                "if (tg__gen_differentiable(%s))\n    tg_autograd_set_history(%s, %s, %d);",
                ret_val(c, op, i), ret_val(c, op, i), node, i);
    for (int i = 0; d && i < op->nrets; i++) save_source(c, &saves, d, true, i, inplace);
    const char *check =
        tgs_fmt(c->arena, "if (tg_autograd_check_inplace(\"%s\", %s))\n    return %s;", op->opname,
                op->nargs ? op->args[0].name : "NULL", tga_error_value(c->arena, op));
    tgt_set(e, "inplace_check", inplace ? check : "");
    tgt_set(e, "result_decl", tga_var_decl(c->arena, op->ret_ctype, "tg_r"));
    tgt_set(e, "failed", tgs_list_join(&all_null, c->arena, " && "));
    tgt_set_list(e, "history", &history);
    tgt_set_list(e, "save_outputs", &saves);
    return tgt_render_str(&t->record, e, c->arena);
}

static const char *out_kernel(tge_ctx *c, const templates *t, const tga_op *op, const char *decl)
{
    tgt_env *e = tge_env(c);
    tgs_list check =
        tensor_check(c, op, "tg_autograd_check_out", tga_error_value(c->arena, op), false);
    tgt_set(e, "decl", decl);
    tgt_set_list(e, "check", &check);
    tgt_set(e, "below_call", below_call(c, op));
    return tgt_render_str(&t->out, e, c->arena);
}

/* The node of a NotImplemented kernel: its backward fails naming the operator, and for an
 * entry d tgen cannot compile (d->limit), why. */
static const char *not_impl_node_code(tge_ctx *c, const templates *t, const tga_op *op,
                                      const tgf_deriv *d)
{
    tgt_env *e = tge_env(c);
    const char *name = tgs_c_string(c->arena, op->row_name);
    tgt_set(e, "cname", op->cname);
    tgt_set(e, "node", d ? d->node_name : "NotImplemented");
    tgt_setf(e, "fail_call",
             d ? "tg__gen_not_generated(%s, %s)" : "tg_autograd_not_implemented(%s)", name,
             d ? tgs_c_string(c->arena, d->limit) : "");
    return tgt_render_str(&t->not_impl, e, c->arena);
}

/* The kernel proper, by kind; NULL for none (or an entry that failed to check: reported). A
 * NotImplemented kernel comes with its node (*not_impl_node, "" for the others). */
static const char *kernel_body(tge_ctx *c, const templates *t, const tga_op *op,
                               const tgf_derivs *ds, const char **not_impl_node)
{
    const char *decl = tga_kernel_decl(
        c->arena, op, tgs_fmt(c->arena, "%s__autograd_kernel_%s", op->prefix, op->cname));
    *not_impl_node = "";
    const tgf_deriv *fd = op->autograd == TGA_AUTOGRAD_RECORD ? ds->by_op[op->index] : NULL;
    switch (op->autograd) {
    case TGA_AUTOGRAD_OUT: return out_kernel(c, t, op, decl);
    case TGA_AUTOGRAD_NOT_IMPL:
        *not_impl_node = not_impl_node_code(c, t, op, NULL);
        return record_kernel(c, t, op, NULL, decl, NULL);
    case TGA_AUTOGRAD_RECORD: {
        const tgf_deriv *d = ds->by_op[op->index];
        if (!d) return NULL;
        if (!d->limit) return record_kernel(c, t, op, d, decl, fd);
        /* An entry tgen cannot compile: a node of the entry's name whose backward fails. */
        *not_impl_node = not_impl_node_code(c, t, op, d);
        return record_kernel(c, t, op, NULL, decl, fd);
    }
    default: return NULL;
    }
}

/* The schema comment, `tg__below_<cname>` (the public call with autograd excluded) and the
 * kernel. */
static const char *kernel_code(tge_ctx *c, const templates *t, const tga_op *op,
                               const tgf_derivs *ds)
{
    const char *not_impl_node;
    const char *kernel = kernel_body(c, t, op, ds, &not_impl_node);
    if (!kernel) return NULL;
    /* Forward mode: tg__fwk_<op> (the op, then its tangents) and tg__fwt_<op> (emit_forward.c). */
    const char *fwk = op->autograd == TGA_AUTOGRAD_OUT
                          ? NULL
                          : tge_forward_kernel_code(c, op, ds->by_op[op->index], below_call(c, op));
    if (fwk) not_impl_node = tgs_fmt(c->arena, "%s\n%s", fwk, not_impl_node);
    const char **args = tgm_alloc(c->arena, sizeof *args * (size_t)(op->nargs + 1));
    for (int i = 0; i < op->nargs; i++) args[i] = op->args[i].name;
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(c->arena, op->f));
    tgt_set(e, "below_decl",
            tga_kernel_decl(c->arena, op, tgs_fmt(c->arena, "tg__below_%s", op->cname)));
    tgt_set(e, "result_decl", tga_var_decl(c->arena, op->ret_ctype, "tg_r"));
    tgt_set(e, "public_call", tga_public_call(c->arena, op, args));
    tgt_set(e, "not_impl_node", not_impl_node);
    tgt_set(e, "kernel", kernel);
    return tgt_render_str(&t->kernel, e, c->arena);
}

/* ------------------------------------------------------------------ files */

static templates load_templates(tge_ctx *c)
{
    return (templates){
        tge_template(c, "tg_autograd_node.c.in"),
        tge_template(c, "tg_autograd_release.c.in"),
        tge_template(c, "tg_autograd_kernel.c.in"),
        tge_template(c, "tg_autograd_not_impl.c.in"),
        tge_template(c, "tg_autograd_out.c.in"),
        tge_template(c, "tg_autograd_record.c.in"),
        tge_template(c, "tg_autograd_record_list.c.in"),
        tge_template(c, "tg_autograd_engine.c.in"),
        tge_template(c, "tg_autograd_engine_missing.c.in"),
        tge_template(c, "tg_autograd_engine_fw.c.in"),
        tge_template(c, "tg_autograd_engine_fw_missing.c.in"),
    };
}

/* ------------------------------------------------------------------ engine calls */

/* The operators tg_autograd_engine.c.in calls, each with the schema its call is written for
 * (in the message of a spec that lacks one) and the arguments it passes by name, with their C
 * types and values; the other parameters must have defaults. The call is written with the C
 * names tgen derives for the spec (docs/c-api.md "Names": `tg_sum(...)` for the project's
 * spec, `tg_sum_dim_intlist(...)` for PyTorch's), into the template's hole of the same key. */
typedef struct engine_arg {
    const char *name, *ctype, *value;
} engine_arg;

static const struct engine_op {
    bool forward; /* forward mode's (tg_autograd_engine_fw.c.in) */
    const char *key, *full_name, *schema;
    engine_arg args[4];
} engine_ops[] = {
    { false,
      "zeros",
      "zeros",
      "zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None) -> Tensor",
      { { "size", "tg_int_list", "((tg_int_list){ m->sizes, m->ndim })" },
        { "dtype", "tg_dtype", "m->dtype" },
        { "device", "tg_device", "m->device" } } },
    { false,
      "sum",
      "sum.dim_IntList",
      "sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
      "dtype=None) -> Tensor",
      { { "self", "tg_tensor *", "r" },
        { "dim", "tg_int_list", "((tg_int_list){ dims, nd })" },
        { "keepdim", "bool", "true" } } },
    { false,
      "reshape",
      "reshape",
      "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
      { { "self", "tg_tensor *", "s" },
        { "shape", "tg_int_list", "((tg_int_list){ m->sizes, m->ndim })" } } },
    { false,
      "to",
      "to.dtype",
      "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
      "MemoryFormat? memory_format=None) -> Tensor(a)",
      { { "self", "tg_tensor *", "r" }, { "dtype", "tg_dtype", "m->dtype" } } },
    { false,
      "add",
      "add.Tensor",
      "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      { { "self", "tg_tensor *", "a" }, { "other", "tg_tensor *", "b" } } },
    { true,
      "alias",
      "view",
      "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
      { { "self", "tg_tensor *", "t" },
        { "size", "tg_int_list", "((tg_int_list){ tg_tensor_sizes(t), tg_tensor_dim(t) })" } } },
    { true,
      "sub",
      "sub.Tensor",
      "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      { { "self", "tg_tensor *", "a" }, { "other", "tg_tensor *", "b" } } },
    { true, "neg", "neg", "neg(Tensor self) -> Tensor", { { "self", "tg_tensor *", "a" } } },
    { true,
      "copy_",
      "copy_",
      "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
      { { "self", "tg_tensor *", "dst" }, { "src", "tg_tensor *", "src" } } },
    { false,
      "ones_like",
      "ones_like",
      "ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
      { { "self", "tg_tensor *", "t" } } },
};

/* The call of engine operator e with the spec's op, or NULL when op cannot take it (an
 * argument it lacks or of another C type, a parameter without default it does not pass). The
 * public macro form: positional arguments, then `.name = value` for the defaulted ones. */
static const char *engine_call(tge_ctx *c, const struct engine_op *e, const tga_op *op)
{
    if (!op || op->nrets != 1 || op->rets[0].kind != TGA_TENSOR) return NULL;
    int given = 0;
    for (int k = 0; k < 4 && e->args[k].name; k++) given++;
    tgs_list pos = { 0 }, opts = { 0 };
    int used = 0;
    for (int i = 0; i < op->nargs; i++) {
        const engine_arg *a = NULL;
        for (int k = 0; k < given; k++)
            if (!strcmp(op->f->schema.args[i].name, e->args[k].name)) a = &e->args[k];
        if (!a) {
            if (!op->args[i].default_expr) return NULL;
            continue;
        }
        const char *ctype = tga_ctype(op->args[i].kind);
        if (!ctype || strcmp(ctype, a->ctype)) return NULL;
        used++;
        if (op->args[i].default_expr)
            tgs_list_addf(&opts, c->arena, ".%s = %s", op->args[i].name, a->value);
        else tgs_list_add(&pos, c->arena, a->value);
    }
    if (used != given) return NULL;
    /* with defaults, the public name is the macro over <name>_fn */
    const char *fn =
        op->opts_name ? tgs_fmt(c->arena, "%s_%s", op->prefix, op->cname) : op->fn_name;
    for (int i = 0; i < opts.n; i++) tgs_list_add(&pos, c->arena, opts.items[i]);
    return tgs_fmt(c->arena, "%s(%s)", fn, tgs_list_join(&pos, c->arena, ", "));
}

/* Sets the template's hole of each engine operator to its call; returns the schemas of those
 * this spec lacks, "; " separated, or NULL when it has them all. */
static const char *engine_calls(tge_ctx *c, tgt_env *env, bool forward)
{
    tgs_list missing = { 0 };
    for (size_t k = 0; k < sizeof engine_ops / sizeof engine_ops[0]; k++) {
        if (engine_ops[k].forward != forward) continue;
        const tga_op *op = tgm__map_get(c->ops.by_name, engine_ops[k].full_name);
        const char *call = engine_call(c, &engine_ops[k], op);
        if (call) tgt_set(env, engine_ops[k].key, call);
        else tgs_list_add(&missing, c->arena, engine_ops[k].schema);
    }
    return missing.n ? tgs_list_join(&missing, c->arena, "; ") : NULL;
}

/* The engine section: the real calls, or calls that report what the spec lacks. */
static const char *engine_code(tge_ctx *c, const templates *t)
{
    const char *parts[2];
    for (int forward = 0; forward < 2; forward++) {
        tgt_env *e = tge_env(c);
        const char *missing = engine_calls(c, e, forward);
        if (missing) tgt_set(e, "missing", missing);
        const tgt_template *tp = forward ? (missing ? &t->engine_fw_missing : &t->engine_fw)
                                         : (missing ? &t->engine_missing : &t->engine);
        parts[forward] = tgt_render_str(tp, e, c->arena);
    }
    return tgs_fmt(c->arena, "%s%s", parts[0], parts[1]);
}

static void find_helpers(tge_ctx *c, const tgf_node *n, tgm_name_map *seen, tgs_list *out)
{
    if (n->kind == TGF_HELPER && !tgm__map_put(seen, n->callee->cname, (void *)n->callee))
        tgs_list_addf(out, c->arena, "%s;", tgf_vocab_prototype(c->arena, n->callee));
    for (int i = 0; i < n->nargs; i++) find_helpers(c, n->args[i], seen, out);
}

/* The prototypes of the autograd vocabulary functions the formulas call (tg__grad_<name>,
 * implemented by the runtime; a missing one is a link error naming it), or NULL for none:
 * the generated file is unchanged when no formula calls one. */
static const char *helper_prototypes(tge_ctx *c, const tgf_derivs *ds)
{
    tgm_name_map *seen = tgm__map_new(c->arena);
    tgs_list protos = { 0 };
    for (int i = 0; i < ds->n; i++)
        for (int k = 0; ds->d[i].op && !ds->d[i].limit && k < ds->d[i].nformulas; k++)
            if (ds->d[i].formulas[k].root)
                find_helpers(c, ds->d[i].formulas[k].root, seen, &protos);
    if (protos.n == 0) return NULL;
    return tgs_fmt(c->arena,
                   "/* Autograd vocabulary functions the formulas call (%s; the runtime "
                   "implements them). */\n%s\n",
                   c->model->autograd_functions ? c->model->autograd_functions : "-",
                   tgs_list_join(&protos, c->arena, "\n"));
}

void tge_emit_autograd(tge_ctx *c)
{
    tgf_derivs ds;
    /* Checked as --check does: what tgen cannot generate is a reason on the entry (its
     * operators record a failing node), not an error. */
    int nforward;
    if (tgf_check_all(c->model, &c->ops, c->arena, false, &ds) != 0 ||
        tgf_check_forward(&ds, &c->ops, c->arena, &nforward) != 0)
        return;
    tgf_mark_limits(&ds, c->arena);
    templates t = load_templates(c);
    tgs_list nodes = { 0 }, kernels = { 0 }, grad_ops = { 0 };
    const char *protos = helper_prototypes(c, &ds); /* before the nodes that call them */
    if (protos) tgs_list_add(&nodes, c->arena, protos);
    for (int i = 0; i < ds.n; i++) {
        if (ds.d[i].op && !ds.d[i].limit)
            tgs_list_addf(&nodes, c->arena, "%s\n", node_code(c, &t, &ds.d[i]));
        const char *fw = ds.d[i].op ? tge_forward_entry_code(c, &ds.d[i]) : NULL;
        if (fw) tgs_list_add(&nodes, c->arena, fw);
    }
    for (int i = 0; i < c->ops.n; i++) {
        const tga_op *op = &c->ops.ops[i];
        const char *k = kernel_code(c, &t, op, &ds);
        if (k) tgs_list_addf(&kernels, c->arena, "%s\n", k);
        if (op->autograd == TGA_AUTOGRAD_RECORD && ds.by_op[i] && !ds.by_op[i]->limit)
            tgs_list_addf(&grad_ops, c->arena, "X(%s, \"%s\") \\", op->cname, op->row_name);
    }
    if (nodes.n == 0) tgs_list_add(&nodes, c->arena, "/* (none: no derivatives file) */");
    if (kernels.n == 0) tgs_list_add(&kernels, c->arena, "/* (none) */");
    tgt_env *e = tge_env(c);
    tgt_set_list(e, "nodes", &nodes);
    tgt_set_list(e, "kernels", &kernels);
    /* The engine's calls are tensorgen's own; an operator library has none. */
    tgt_set(e, "engine", c->model->ns ? "" : engine_code(c, &t));
    tge_render_file(c, "tg_autograd.c.in", e, c->opts->out_dir, tge_out_name(c, "autograd.c"));
    e = tge_env(c);
    tgt_set_list(e, "ops", &grad_ops);
    tge_render_file(c, "tg_grad_op_list.h.in", e, c->opts->out_dir,
                    tge_out_name(c, "grad_op_list.h"));
}
