/* The C view of every operator: names, argument and return types, and the checks that the
 * whole set can be emitted (unsupported types, name collisions). Kernel assignment is in
 * api_kernels.c. */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/api_internal.h"
#include "base/strbuf.h"

/* ------------------------------------------------------------------ arguments and returns */

tga_arg tga_arg_view(tgm_arena *a, const tgm_arg *sa)
{
    return (tga_arg){ .arg = sa, .name = tga_ident(a, sa->name), .kind = tga_type_kind(&sa->type) };
}

static int build_args(tgm_arena *a, tga_op *op)
{
    const tgm_schema *s = &op->f->schema;
    int errors = 0;
    op->nargs = s->nargs;
    op->args = tgm_alloc(a, sizeof *op->args * (size_t)(s->nargs ? s->nargs : 1));
    for (int i = 0; i < s->nargs; i++) {
        const tgm_arg *sa = &s->args[i];
        tga_arg *ca = &op->args[i];
        *ca = tga_arg_view(a, sa);
        if (ca->kind == TGA_UNSUPPORTED) {
            tgm_error(sa->loc,
                      "type '%s' of argument '%s' of '%s' has no C mapping in tgen "
                      "(see docs/generated-code.md, \"Type mapping\")",
                      tga_type_text(a, &sa->type), sa->name, s->full_name);
            errors++;
            continue;
        }
        const char *why;
        const char *storage = tgs_fmt(a, "%s__default_%s_%s", op->prefix, op->cname, sa->name);
        ca->default_expr =
            tga_default_expr(a, ca->kind, &sa->type, &sa->def, storage, &ca->default_values, &why);
        if (ca->default_values) ca->default_array = storage;
        if (sa->def.kind != TGM_DEF_NONE_GIVEN && !ca->default_expr) {
            tgm_error(sa->loc, "default '%s' of argument '%s' (%s) of '%s': %s",
                      sa->def.text ? sa->def.text : "?", sa->name, tga_type_text(a, &sa->type),
                      s->full_name, why ? why : "unsupported");
            errors++;
        }
        if (ca->default_expr) op->ndefaulted++;
    }
    return errors;
}

/* The kinds a result may have (those the type table gives an error value): a Tensor[] or
 * int[] return owns its array (docs/c-api.md, "Results"); an int[] only alone (a struct field
 * owning an array of ints: not yet). */
static tga_kind ret_kind(const tgm_type *t, bool in_tuple)
{
    tga_kind k = tga_type_kind(t);
    /* A Tensor? in a tuple (torchaudio's `-> (Tensor, Tensor?)`): NULL when absent. Alone it
     * could not be told from an error, which is NULL too. */
    if (k == TGA_OPT_TENSOR) return in_tuple ? k : TGA_UNSUPPORTED;
    if (!tga_kind_is_result(k) || (k == TGA_INT_LIST && in_tuple)) return TGA_UNSUPPORTED;
    return k;
}

static int build_rets(tgm_arena *a, tga_op *op)
{
    const tgm_schema *s = &op->f->schema;
    if (s->nrets == 0) { /* `-> ()`: an int status, 0 or -1 with an error recorded */
        op->ret_ctype = "int";
        return 0;
    }
    op->nrets = s->nrets;
    op->rets = tgm_alloc(a, sizeof *op->rets * (size_t)s->nrets);
    int errors = 0;
    /* Fields take the return names only when every return has one (the struct is then named
     * after them); otherwise r0, r1, ... like the tg_tensorsN / tg_tuple_* structs. */
    bool named = true;
    for (int i = 0; i < s->nrets; i++) named &= s->rets[i].name != NULL;
    for (int i = 0; i < s->nrets; i++) {
        const tgm_return *r = &s->rets[i];
        op->rets[i].kind = ret_kind(&r->type, s->nrets > 1);
        op->rets[i].name = named ? tga_ident(a, r->name) : tgs_fmt(a, "r%d", i);
        if (op->rets[i].kind == TGA_UNSUPPORTED) {
            tgm_error(r->loc, "return type '%s' of '%s' has no C mapping in tgen%s",
                      tga_type_text(a, &r->type), s->full_name,
                      tga_type_kind(&r->type) == TGA_OPT_TENSOR
                          ? " (a 'Tensor?' is returned only in a tuple, where NULL means absent)"
                          : "");
            errors++;
        }
    }
    if (s->nrets == 1) {
        op->ret_ctype = tga_ctype(op->rets[0].kind ? op->rets[0].kind : TGA_TENSOR);
    } else {
        op->ret_struct = tga_result_struct_name(a, op->prefix, s);
        op->ret_ctype = op->ret_struct;
    }
    return errors;
}

static void build_names(tgm_arena *a, tga_op *op)
{
    const char *p = op->prefix, *ns = op->f->schema.ns;
    op->opname = tga_opname(a, op->f);
    op->row_name = ns ? tgs_fmt(a, "%s::%s", ns, op->f->schema.full_name) : op->f->schema.full_name;
    op->enum_name = tga_enum_name(a, p, op->cname);
    op->fn_name =
        op->ndefaulted ? tgs_fmt(a, "%s_%s_fn", p, op->cname) : tgs_fmt(a, "%s_%s", p, op->cname);
    op->opts_name = op->ndefaulted ? tgs_fmt(a, "%s_%s_opts", p, op->cname) : NULL;
    op->kfn_type = tgs_fmt(a, "%s__kfn_%s", p, op->cname);
    op->boxed_name = tgs_fmt(a, "%s__boxed_%s", p, op->cname);
}

static void build_ksig(tgm_arena *a, tga_op *op)
{
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "%s(", op->ret_ctype ? op->ret_ctype : "?");
    for (int i = 0; i < op->nargs; i++) {
        const char *c = tga_ctype(op->args[i].kind);
        tgs_printf(&b, "%s%s", i ? ", " : "", c ? c : "?");
    }
    tgs_puts(&b, ")");
    op->ksig = tgs_finish(&b, a);
}

/* ------------------------------------------------------------------ collisions */

typedef struct name_use {
    const char *name;
    const tga_op *op;
    const char *what;
} name_use;

/* Every public identifier an op defines; two ops defining the same one cannot both compile.
 * `by_name` maps each name to its first use (a hash map: a scan of the earlier uses made this
 * quadratic in the number of entries). */
static int check_public_names(tgm_arena *a, const tgm_model *m, const tga_ops *ops,
                              tgm_name_map *by_name)
{
    int cap = ops->n * 3 + 1, n = 0, errors = 0;
    name_use *uses = tgm_alloc(a, sizeof *uses * (size_t)cap);
    for (int i = 0; i < ops->n; i++) {
        const tga_op *op = &ops->ops[i];
        uses[n++] = (name_use){ tgs_fmt(a, "%s_%s", op->prefix, op->cname), op, "function" };
        if (op->opts_name) {
            uses[n++] = (name_use){ op->fn_name, op, "function" };
            uses[n++] = (name_use){ op->opts_name, op, "options struct" };
        }
    }
    for (int i = 0; i < n; i++) {
        /* The runtime's names are kept without their `tg_`. */
        const tgm_loc *rt = m->runtime_names && !strncmp(uses[i].name, "tg_", 3)
                                ? tgm__map_get(m->runtime_names, uses[i].name + 3)
                                : NULL;
        if (rt) {
            const tgm_func *fi = uses[i].op->f;
            tgm_error(fi->loc,
                      "C name '%s' (%s of '%s') is declared by the runtime at %s:%d:%d; "
                      "give the operator another `c_name:`",
                      uses[i].name, uses[i].what, fi->schema.full_name, rt->file, rt->line,
                      rt->col);
            errors++;
            continue;
        }
        const name_use *first = tgm__map_put(by_name, uses[i].name, &uses[i]);
        if (!first || first->op == uses[i].op) continue;
        const tgm_func *fi = uses[i].op->f, *fj = first->op->f;
        tgm_error(fi->loc,
                  "C name '%s' (%s of '%s') is already used by '%s' at %s:%d:%d; "
                  "give one of them a `c_name:`",
                  uses[i].name, uses[i].what, fi->schema.full_name, fj->schema.full_name,
                  fj->loc.file, fj->loc.line, fj->loc.col);
        errors++;
    }
    return errors;
}

/* Ops returning the same result struct must agree on its fields (each is compared with the
 * first op that uses the struct); its name must not be an op's C name. by_name is
 * check_public_names' map, whose `tg_<cname>` names are the functions' names. */
static int check_result_structs(tgm_arena *a, const tga_ops *ops, const tgm_name_map *by_name)
{
    int errors = 0;
    tgm_name_map *first_use = tgm__map_new(a);
    for (int i = 0; i < ops->n; i++) {
        const tga_op *op = &ops->ops[i];
        if (!op->ret_struct) continue;
        const name_use *fn = tgm__map_get(by_name, op->ret_struct);
        if (fn && !strcmp(fn->what, "function")) {
            tgm_error(op->f->loc, "result struct '%s' of '%s' has the C name of '%s'",
                      op->ret_struct, op->f->schema.full_name, fn->op->f->schema.full_name);
            errors++;
        }
        const tga_op *o = tgm__map_put(first_use, op->ret_struct, (void *)op);
        if (!o) continue;
        bool same = o->nrets == op->nrets;
        for (int r = 0; same && r < op->nrets; r++) same = o->rets[r].kind == op->rets[r].kind;
        if (!same) {
            tgm_error(op->f->loc,
                      "result struct '%s' of '%s' differs from the one of '%s' "
                      "(same return names, other types)",
                      op->ret_struct, op->f->schema.full_name, o->f->schema.full_name);
            errors++;
        }
    }
    return errors;
}

/* Indexes the ops by full name and groups them by base name (the formula checker's overload
 * lookup, tgf_find_ops). */
static void index_ops(tgm_arena *a, tga_ops *ops)
{
    ops->by_name = tgm__map_new(a);
    for (int i = 0; i < ops->n; i++)
        tgm__map_put(ops->by_name, ops->ops[i].f->schema.full_name, &ops->ops[i]);
    ops->by_base = tgm__map_new(a);
    int *caps = tgm_alloc(a, sizeof *caps * (size_t)(ops->n ? ops->n : 1));
    for (int i = 0; i < ops->n; i++) {
        const tga_op *op = &ops->ops[i];
        tga_op_group *g = tgm__map_get(ops->by_base, op->f->schema.base);
        if (!g) {
            g = tgm_alloc(a, sizeof *g);
            tgm__map_put(ops->by_base, op->f->schema.base, g);
        }
        /* One capacity slot per op, indexed by the group's first op: groups never share one. */
        int *cap = &caps[g->n ? g->ops[0]->index : i];
        *TGS_PUSH(a, g->ops, g->n, *cap) = op;
    }
}

/* ------------------------------------------------------------------ the whole view */

/* The C view of each of the n funcs (names[i] their C names), with the library prefix. */
static int build_each(tgm_arena *a, tga_ops *out, tgm_func *const *funcs, int n,
                      const char *const *cnames, const char *prefix)
{
    int errors = 0;
    out->n = n;
    out->prefix = prefix;
    out->ops = tgm_alloc(a, sizeof *out->ops * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        tga_op *op = &out->ops[i];
        op->f = funcs[i];
        op->index = i;
        op->prefix = prefix;
        op->cname = cnames[i];
        errors += build_args(a, op);
        errors += build_rets(a, op);
        build_names(a, op);
        build_ksig(a, op);
    }
    return errors;
}

/* tensorgen's operators as a library sees them: their C names are fixed (`c_name:` in the
 * interface file), their prefix is tensorgen's, and only their signatures matter (nothing is
 * generated for them). */
static int build_imports(const tgm_model *m, tgm_arena *a, tga_ops *out)
{
    *out = (tga_ops){ 0 };
    const char **cnames = tgm_alloc(a, sizeof *cnames * (size_t)(m->nimports ? m->nimports : 1));
    for (int i = 0; i < m->nimports; i++) cnames[i] = tga_cname(a, m->imports[i]);
    int errors = build_each(a, out, m->imports, m->nimports, cnames, "tg");
    index_ops(a, out);
    return errors;
}

int tga_build_ops(const tgm_model *m, tgm_arena *a, tga_ops *out)
{
    *out = (tga_ops){ 0 };
    const char **cnames = tgm_alloc(a, sizeof *cnames * (size_t)(m->nfuncs ? m->nfuncs : 1));
    tga_assign_cnames(a, m, cnames);
    int errors = build_each(a, out, m->funcs, m->nfuncs, cnames, tga_prefix(m));
    if (m->nimports) {
        tga_ops *imports = tgm_alloc(a, sizeof *imports);
        errors += build_imports(m, a, imports);
        imports->is_base = m->imports_base;
        out->imports = imports;
    }
    tgm_name_map *by_name = tgm__map_new(a);
    errors += check_public_names(a, m, out, by_name);
    errors += check_result_structs(a, out, by_name);
    index_ops(a, out);
    errors += tga_assign_kernels(a, out);
    errors += tga_assign_autograd(m, a, out);
    return errors;
}

/* ------------------------------------------------------------------ helpers */

const tga_arg *tga_device_arg(const tga_op *op)
{
    for (int i = 0; i < op->nargs; i++)
        if (op->args[i].kind == TGA_DEVICE || op->args[i].kind == TGA_OPT_DEVICE)
            return &op->args[i];
    return NULL;
}

const char *tga_schema_line(tgm_arena *a, const tgm_func *f)
{
    char *s = tgm_strdup(a, f->schema.text ? f->schema.text : f->schema.full_name);
    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\t' || *p == '\r') *p = ' ';
    return s;
}

const char *tga_schema_comment(tgm_arena *a, const tgm_func *f)
{
    return tgs_c_comment(a, tga_schema_line(a, f));
}
