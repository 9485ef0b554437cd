/* A derivative entry's frame and descriptor (templates/tg_autograd_entry.c.in): what the
 * runtime's record.c and forward_run.c need to record any operator of the entry, as data.
 *
 *   frame    the call's arguments by the entry's names, each tensor's tangent (`<arg>_t`) and
 *            the outputs as the forward formulas read them (`result`, `result1`, a name)
 *   inputs   every tensor argument: where it and its tangent are in the frame
 *   edges    which inputs are the node's next edges, in key order
 *   saves    what the node keeps, from the frame or an output, into which field, how
 *   outputs  where each output is in the kernel's result and in the frame, and whether it is
 *            differentiable
 *   terms    the forward formulas' terms (formula_c.c compiles each to a function of the frame)
 *
 * An operator without an entry that records a NotImplemented node gets the same for itself:
 * a frame of its tensor arguments and a descriptor with no node. */
#include "emit/emit_autograd.h"

#include <string.h>

typedef struct entry_ctx {
    tge_ctx *c;
    const tge_ag_templates *t;
    const tga_op *op;
    const tgf_deriv *d; /* NULL: a NotImplemented operator */
    const char *name;   /* the descriptor's prefix: the node's name, or tg__ni_<op> */
    const char *frame;  /* its type */
    int *input_of;      /* [op->nargs]: the argument's row in the inputs table, or -1 */
} entry_ctx;

const char *tge_ag_entry_name(tge_ctx *c, const tga_op *op, const tgf_deriv *d)
{
    return d ? d->node_name : tgs_fmt(c->arena, "tg__ni_%s", op->cname);
}

static bool is_tensor(tga_kind k) { return k == TGA_TENSOR || k == TGA_OPT_TENSOR; }
static bool is_list(tga_kind k)
{
    return k == TGA_TENSOR_LIST || k == TGA_OPT_TENSOR_LIST || k == TGA_TENSOR_LIST_OR_NONE;
}

/* The frame's field of argument i (of output i): the entry's name for it. */
static const char *arg_field(const entry_ctx *x, bool out, int i)
{
    if (x->d) return tgf_saved_field(x->c->arena, x->d, out, i, 0);
    return x->op->args[i].name;
}

static tgs_list frame_fields(const entry_ctx *x)
{
    tgm_arena *a = x->c->arena;
    const tga_op *op = x->op;
    tgs_list fields = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        tga_kind k = op->args[i].kind;
        if (!x->d && !is_tensor(k) && !is_list(k)) continue; /* NotImplemented: tensors only */
        tgs_list_addf(&fields, a, "%s;", tga_cdecl(a, k, arg_field(x, false, i)));
        if (is_tensor(k)) tgs_list_addf(&fields, a, "tg_tensor *%s_t;", arg_field(x, false, i));
        else if (is_list(k))
            tgs_list_addf(&fields, a, "tg_tensor_list %s_t;", arg_field(x, false, i));
    }
    for (int i = 0; x->d && i < op->nrets; i++)
        tgs_list_addf(&fields, a, "%s;", tga_cdecl(a, op->rets[i].kind, arg_field(x, true, i)));
    return fields;
}

static const char *offset(const entry_ctx *x, const char *fieldname)
{
    return tgs_fmt(x->c->arena, "offsetof(%s, %s)", x->frame, fieldname);
}

static tgs_list input_rows(entry_ctx *x)
{
    tgs_list rows = { 0 };
    for (int i = 0; i < x->op->nargs; i++) {
        tga_kind k = x->op->args[i].kind;
        x->input_of[i] = -1;
        if (!is_tensor(k) && !is_list(k)) continue;
        x->input_of[i] = rows.n;
        tgt_env *e = tge_env(x->c);
        tgt_set(e, "frame", x->frame);
        tgt_set(e, "field", arg_field(x, false, i));
        tgt_setf(e, "arg", "%d", i);
        tgt_set(e, "list", is_list(k) ? "true" : "false");
        tgs_list_add(&rows, x->c->arena, tgt_render_str(&x->t->input, e, x->c->arena));
    }
    return rows;
}

/* The next edges as rows of the inputs table; *table gets `<name>_edges`, or NULL. */
static int edge_rows(const entry_ctx *x, tgs_list *tables, const char **table)
{
    tgs_list rows = { 0 };
    for (int k = 0; x->d && !x->d->limit && k < x->d->nedges; k++)
        tgs_list_addf(&rows, x->c->arena, "%d", x->input_of[x->d->edge_arg[k]]);
    *table = NULL;
    if (rows.n == 0) return 0;
    tgt_env *e = tge_env(x->c);
    *table = tgs_fmt(x->c->arena, "%s_edges", x->name);
    tgt_set(e, "type", "uint8_t");
    tgt_set(e, "name", *table);
    tgt_set(e, "values", tgs_list_join(&rows, x->c->arena, ", "));
    tgs_list_add(tables, x->c->arena, tgt_render_str(&x->t->array, e, x->c->arena));
    return rows.n;
}

/* ------------------------------------------------------------------ saves */

/* A dim of `xs.size(d)` in terms of the arguments in the frame `n` (literals, int arguments
 * and C operators: formula_check.c allows nothing else there). */
static const char *dim_expr(const entry_ctx *x, const tgf_node *n)
{
    tgm_arena *a = x->c->arena;
    switch (n->kind) {
    case TGF_LIT: return n->c;
    case TGF_INPUT: return tgs_fmt(a, "n->%s", arg_field(x, false, n->index));
    case TGF_COP:
        if (n->nargs == 1) return tgs_fmt(a, "(%s%s)", n->c, dim_expr(x, n->args[0]));
        return tgs_fmt(a, "(%s %s %s)", dim_expr(x, n->args[0]), n->c, dim_expr(x, n->args[1]));
    default: return "0";
    }
}

static const char *save_row(const entry_ctx *x, const char *kind, bool out, int i, const char *to,
                            const char *size, const char *dim)
{
    tgm_arena *a = x->c->arena;
    tgt_env *e = tge_env(x->c);
    tgt_set(e, "kind", kind);
    tgt_set(e, "output", out ? "true" : "false");
    tgt_set(e, "from", out ? tgs_fmt(a, "%d", i) : offset(x, arg_field(x, false, i)));
    tgt_setf(e, "node", "tg__node_%s", x->d->node_name);
    tgt_set(e, "to", to);
    tgt_set(e, "size", size ? size : "0");
    tgt_set(e, "dim", dim ? dim : "NULL");
    return tgt_render_str(&x->t->save, e, a);
}

/* A row saving input (output) i's use `use` into its node field. */
static void add_save(const entry_ctx *x, tgs_list *rows, const char *kind, bool out, int i,
                     unsigned use, const char *size)
{
    tgm_arena *a = x->c->arena;
    tgs_list_add(rows, a,
                 save_row(x, kind, out, i, tgf_saved_field(a, x->d, out, i, use), size, NULL));
}

/* The rows saving input or output i, by how the formulas use it (strings: see save_rows). */
static void source_saves(const entry_ctx *x, bool out, int i, tgs_list *rows)
{
    const tgf_deriv *d = x->d;
    tgm_arena *a = x->c->arena;
    unsigned u = out ? d->output_uses[i] : d->input_uses[i];
    tga_kind kind = out ? x->op->rets[i].kind : x->op->args[i].kind;
    if (u & TGF_USE_TENSOR) {
        add_save(x, rows, "TG_AG_SAVE_TENSOR", out, i, TGF_USE_TENSOR, NULL);
        if (kind == TGA_OPT_TENSOR)
            tgs_list_add(rows, a,
                         save_row(x, "TG_AG_SAVE_DEFINED", out, i,
                                  tgs_fmt(a, "%s_defined", tgf_saved_field(a, d, out, i, 0)), NULL,
                                  NULL));
        return;
    }
    bool sizes = u & TGF_USE_SIZES;
    if (sizes) add_save(x, rows, "TG_AG_SAVE_SIZES", out, i, TGF_USE_SIZES, NULL);
    if ((u & TGF_USE_DIM) && !sizes) add_save(x, rows, "TG_AG_SAVE_DIM", out, i, TGF_USE_DIM, NULL);
    if ((u & TGF_USE_NUMEL) && !sizes)
        add_save(x, rows, "TG_AG_SAVE_NUMEL", out, i, TGF_USE_NUMEL, NULL);
    if (u & TGF_USE_DTYPE) add_save(x, rows, "TG_AG_SAVE_DTYPE", out, i, TGF_USE_DTYPE, NULL);
    if (u & TGF_USE_DEVICE) add_save(x, rows, "TG_AG_SAVE_DEVICE", out, i, TGF_USE_DEVICE, NULL);
    if (!(u & TGF_USE_VALUE) || kind == TGA_STR || kind == TGA_OPT_STR) return;
    const char *how = kind == TGA_INT_LIST || kind == TGA_OPT_INT_LIST ? "TG_AG_SAVE_INTS"
                      : is_list(kind)                                  ? "TG_AG_SAVE_TENSORS"
                                                                       : "TG_AG_SAVE_VALUE";
    add_save(x, rows, how, out, i, TGF_USE_VALUE,
             strcmp(how, "TG_AG_SAVE_VALUE") ? NULL : tgs_fmt(a, "sizeof(%s)", tga_ctype(kind)));
}

/* In the order the node's trailing storage needs: each `xs.size(d)` the formulas read, the
 * inputs, the strings after every int list (alignment), then the outputs. The dim of each
 * `xs.size(d)` is a function of the frame (appended to *fns). */
static tgs_list save_rows(const entry_ctx *x, tgs_list *fns)
{
    const tgf_deriv *d = x->d;
    tgm_arena *a = x->c->arena;
    tgs_list rows = { 0 };
    if (!d || d->limit) return rows;
    for (int k = 0; k < d->nlist_sizes; k++) {
        const char *fn = tgs_fmt(a, "%s_list_size_%d", d->node_name, k);
        tgt_env *e = tge_env(x->c);
        tgt_set(e, "fn", fn);
        tgt_set(e, "frame", x->frame);
        tgt_set(e, "expr", dim_expr(x, d->list_sizes[k].dim));
        tgt_setf(e, "what", "The dim of %s's sizes that the node keeps.",
                 x->op->args[d->list_sizes[k].arg].name);
        tgs_list_add(fns, a, tgt_render_str(&x->t->dim, e, a));
        tgs_list_add(&rows, a,
                     save_row(x, "TG_AG_SAVE_LIST_SIZES", false, d->list_sizes[k].arg,
                              tgf_list_size_field(a, d, k), NULL, fn));
    }
    for (int i = 0; i < x->op->nargs; i++) source_saves(x, false, i, &rows);
    for (int i = 0; i < x->op->nargs; i++) {
        tga_kind k = x->op->args[i].kind;
        if ((d->input_uses[i] & TGF_USE_VALUE) && (k == TGA_STR || k == TGA_OPT_STR))
            tgs_list_add(&rows, a,
                         save_row(x, "TG_AG_SAVE_STR", false, i,
                                  tgf_saved_field(a, d, false, i, TGF_USE_VALUE), NULL, NULL));
    }
    for (int i = 0; i < x->op->nrets; i++) source_saves(x, true, i, &rows);
    return rows;
}

/* ------------------------------------------------------------------ outputs and terms */

static tgs_list output_rows(const entry_ctx *x)
{
    const tga_op *op = x->op;
    tgm_arena *a = x->c->arena;
    tgs_list rows = { 0 };
    for (int i = 0; i < op->nrets; i++) {
        tga_kind k = op->rets[i].kind;
        tgt_env *e = tge_env(x->c);
        tgt_set(e, "at",
                op->ret_struct ? tgs_fmt(a, "offsetof(%s, %s)", op->ret_struct, op->rets[i].name)
                               : "0");
        tgt_set(e, "alias", x->d ? offset(x, arg_field(x, true, i)) : "TG_AG_NONE");
        tgt_set(e, "ctype", tga_ctype(k));
        tgt_set(e, "kind",
                k == TGA_TENSOR        ? "TG_AG_OUT_TENSOR"
                : k == TGA_TENSOR_LIST ? "TG_AG_OUT_LIST"
                                       : "TG_AG_OUT_OTHER");
        tgt_set(e, "differentiable", !x->d || x->d->output_diff[i] ? "true" : "false");
        tgs_list_add(&rows, a, tgt_render_str(&x->t->output, e, a));
    }
    return rows;
}

static bool has_compiled(const tgf_deriv *d)
{
    for (int k = 0; d && k < d->nfw; k++)
        if (!d->fw[k].limit) return true;
    return false;
}

/* The forward formulas' terms: their functions (into *fns) and rows. */
static tgs_list term_rows(const entry_ctx *x, tgs_list *fns)
{
    const tgf_deriv *d = x->d;
    tgm_arena *a = x->c->arena;
    tgs_list rows = { 0 };
    for (int k = 0; has_compiled(d) && k < d->nfw; k++) {
        const tgf_fw_formula *f = &d->fw[k];
        bool list = x->op->rets[f->output].kind == TGA_TENSOR_LIST;
        for (int i = 0; !f->limit && i < f->nterms; i++) {
            const char *fn = tgs_fmt(a, "%s_jvp%d_%d", d->node_name, k, i);
            const char *what = tgs_fmt(a, "%s: %s (term %d)", f->src->vars, f->src->text, i);
            tgs_list_add(fns, a, tgf_compile_forward(a, d, f->terms[i].root, fn, x->frame, what));
            tgt_env *e = tge_env(x->c);
            tgt_setf(e, "output", "%d", f->output);
            tgt_set(e, "negate", f->terms[i].negate ? "true" : "false");
            tgt_setf(e, "tangents", "UINT64_C(0x%llx)", (unsigned long long)f->terms[i].tangents);
            tgt_set(e, "fn", list ? "NULL" : fn);
            tgt_set(e, "fn_list", list ? fn : "NULL");
            tgs_list_add(&rows, a, tgt_render_str(&x->t->term, e, a));
        }
    }
    return rows;
}

/* Why forward mode fails for the entry's operators when no term compiles: the reason tgen
 * gives for its last formula (NULL: it has none, "not implemented"). */
static const char *fw_why(const entry_ctx *x)
{
    const char *why = NULL;
    for (int k = 0; x->d && k < x->d->nfw; k++) why = x->d->fw[k].limit;
    return why && !has_compiled(x->d) ? tgs_c_string(x->c->arena, why) : "NULL";
}

/* ------------------------------------------------------------------ the descriptor */

const char *tge_ag_table(tge_ctx *c, const tge_ag_templates *t, const char *type, const char *name,
                         const tgs_list *rows, tgs_list *out)
{
    if (rows->n == 0) return NULL;
    tgt_env *e = tge_env(c);
    tgt_set(e, "type", type);
    tgt_set(e, "name", name);
    if (rows->n == 1) { /* one row: on the table's own line, without its trailing comma */
        const char *row = rows->items[0];
        size_t n = strlen(row);
        while (n && (row[n - 1] == '\n' || row[n - 1] == ' ')) n--;
        if (n && row[n - 1] == ',') n--;
        tgt_setf(e, "values", "%.*s", (int)n, row);
        tgs_list_add(out, c->arena, tgt_render_str(&t->array, e, c->arena));
    } else {
        tgt_set_list(e, "rows", rows);
        tgs_list_add(out, c->arena, tgt_render_str(&t->table, e, c->arena));
    }
    return name;
}

/* Renders the entry's table `what` of `type` (none without rows); its name, or NULL. */
static const char *table(const entry_ctx *x, const char *what, const char *type,
                         const tgs_list *rows, tgs_list *tables)
{
    return tge_ag_table(x->c, x->t, type, tgs_fmt(x->c->arena, "%s_%s", x->name, what), rows,
                        tables);
}

/* The node's type (tg_ag_node_type `<node>_type`): its vtable, formulas and saves. */
static const char *node_type(const entry_ctx *x, const char *formulas, int nformulas,
                             const char *saves, const tgs_list *save_rows)
{
    tgm_arena *a = x->c->arena;
    bool releases = false; /* it keeps a tensor, or a list of them */
    for (int i = 0; i < save_rows->n; i++)
        releases |= strstr(save_rows->items[i], "{ TG_AG_SAVE_TENSOR, ") ||
                    strstr(save_rows->items[i], "{ TG_AG_SAVE_TENSORS, ");
    tgt_env *e = tge_env(x->c);
    tgt_set(e, "node", x->d->node_name);
    tgt_set(e, "release", releases ? "tg__autograd_release_saved" : "NULL");
    tgt_set(e, "formulas", formulas ? tgs_fmt(a, "%s, %d", formulas, nformulas) : "NULL, 0");
    tgt_set(e, "saves", saves ? tgs_fmt(a, "%s, %d", saves, save_rows->n) : "NULL, 0");
    return tgt_render_str(&x->t->node_type, e, a);
}

const char *tge_ag_entry(tge_ctx *c, const tge_ag_templates *t, const tga_op *op,
                         const tgf_deriv *d, const char *formulas, int nformulas)
{
    tgm_arena *a = c->arena;
    const char *name = tge_ag_entry_name(c, op, d);
    const tga_op *eop = d ? d->op : op; /* the entry's own (functional) operator */
    entry_ctx x = { c,
                    t,
                    eop,
                    d,
                    name,
                    tgs_fmt(a, "tg__frame_%s", name),
                    tgm_alloc(a, sizeof(int) * (size_t)(eop->nargs + 1)) };
    tgt_env *e = tge_env(c);
    tgt_set(e, "what",
            d ? tgs_fmt(a, "%s's operators", d->node_name)
              : tgs_fmt(a, "%s (no derivative entry)", op->row_name));
    tgt_set(e, "frame", x.frame);
    tgt_set(e, "name", name);
    tgs_list fields = frame_fields(&x), fns = { 0 }, tables = { 0 };
    tgt_set_list(e, "fields", &fields);
    tgs_list inputs = input_rows(&x), saves = save_rows(&x, &fns), terms = term_rows(&x, &fns);
    tgs_list outputs = output_rows(&x);
    const char *inputs_t = table(&x, "inputs", "tg_ag_input", &inputs, &tables), *edges_t;
    int nedges = edge_rows(&x, &tables, &edges_t);
    const char *saves_t = table(&x, "saves", "tg_ag_save", &saves, &tables);
    const char *terms_t = table(&x, "terms", "tg_fw_term", &terms, &tables);
    const char *outputs_t = table(&x, "outputs", "tg_ag_output", &outputs, &tables);
    tgt_set_list(e, "functions", &fns);
    tgt_set_list(e, "tables", &tables);
    bool node = d && !d->limit;
    tgt_set(e, "node_type", node ? node_type(&x, formulas, nformulas, saves_t, &saves) : "");
    /* The initializer's fields: NotImplemented nodes need no vt; zero counts stay out. */
    tgt_set(e, "node",
            !d      ? ""
            : !node ? tgs_fmt(a, ".vt = &%s_vtable, .why = %s,", d->node_name,
                              tgs_c_string(a, d->limit))
                    : tgs_fmt(a, ".vt = &%s_type.vt, .node_size = sizeof(tg__node_%s),",
                              d->node_name, d->node_name));
    tgt_set(e, "inputs", inputs_t ? inputs_t : "NULL");
    tgt_setf(e, "ninputs", "%d", inputs.n);
    int list_edge = node && d->list_arg >= 0 ? x.input_of[d->list_arg] : -1;
    tgt_set(e, "edges",
            !node ? ""
                  : tgs_fmt(a, ".edges = %s, .nedges = %d, .list_edge = %d,",
                            edges_t ? edges_t : "NULL", nedges, list_edge));
    tgt_set(e, "saves", saves_t ? tgs_fmt(a, ".saves = %s, .nsaves = %d,", saves_t, saves.n) : "");
    tgt_set(e, "outputs", outputs_t);
    tgt_setf(e, "noutputs", "%d", outputs.n);
    tgt_set(e, "result_type", x.op->ret_ctype);
    tgt_set(e, "terms", terms_t ? tgs_fmt(a, ".terms = %s, .nterms = %d,", terms_t, terms.n) : "");
    const char *why = fw_why(&x);
    tgt_set(e, "fw_why", strcmp(why, "NULL") ? tgs_fmt(a, ".fw_why = %s,", why) : "");
    return tgt_render_str(&t->entry, e, a);
}
