/* The C view of every operator: names, argument and return types, and the checks that the
 * whole set can be emitted (unsupported types, name collisions). Kernel assignment is in
 * api_kernels.c. */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "api_internal.h"
#include "strbuf.h"

/* ------------------------------------------------------------------ arguments and returns */

static int build_args(tgm_arena *a, tga_op *op)
{
    const tgm_schema *s = &op->f->schema;
    int errors = 0;
    op->nargs = s->nargs;
    op->args = tgm_alloc(a, sizeof *op->args * (size_t)(s->nargs ? s->nargs : 1));
    for (int i = 0; i < s->nargs; i++) {
        const tgm_arg *sa = &s->args[i];
        tga_arg *ca = &op->args[i];
        ca->arg = sa;
        ca->name = tga_ident(a, sa->name);
        ca->kind = tga_type_kind(&sa->type);
        if (ca->kind == TGA_UNSUPPORTED) {
            tgm_error(sa->loc,
                      "type '%s' of argument '%s' of '%s' has no C mapping in tgen "
                      "(see docs/generated-code.md, \"Type mapping\")",
                      tga_type_text(a, &sa->type), sa->name, s->full_name);
            errors++;
            continue;
        }
        const char *why;
        const char *storage = tgs_fmt(a, "tg__default_%s_%s", op->cname, sa->name);
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

/* A Tensor[] return is a tg_tensor_list owning its array (docs/c-api.md, "Results"). */
static tga_kind ret_kind(const tgm_type *t)
{
    tga_kind k = tga_type_kind(t);
    return k == TGA_TENSOR || k == TGA_TENSOR_LIST || k == TGA_INT || k == TGA_DOUBLE ||
                   k == TGA_BOOL
               ? k
               : TGA_UNSUPPORTED;
}

static int build_rets(tgm_arena *a, tga_op *op)
{
    const tgm_schema *s = &op->f->schema;
    if (s->nrets == 0) {
        tgm_error(op->f->loc, "'%s' returns nothing; tgen emits operators that return values",
                  s->full_name);
        return 1;
    }
    op->nrets = s->nrets;
    op->rets = tgm_alloc(a, sizeof *op->rets * (size_t)s->nrets);
    int errors = 0;
    for (int i = 0; i < s->nrets; i++) {
        const tgm_return *r = &s->rets[i];
        op->rets[i].kind = ret_kind(&r->type);
        op->rets[i].name = r->name ? tga_ident(a, r->name) : tgs_fmt(a, "r%d", i);
        /* A list among several returns would need a struct field owning an array: not yet. */
        if (op->rets[i].kind == TGA_UNSUPPORTED ||
            (s->nrets > 1 && op->rets[i].kind == TGA_TENSOR_LIST) ||
            (s->nrets > 1 && !r->name && op->rets[i].kind != TGA_TENSOR)) {
            tgm_error(r->loc, "return type '%s' of '%s' has no C mapping in tgen",
                      tga_type_text(a, &r->type), s->full_name);
            errors++;
        }
    }
    if (s->nrets == 1) {
        op->ret_ctype = tga_ctype(op->rets[0].kind ? op->rets[0].kind : TGA_TENSOR);
    } else {
        op->ret_struct = tga_result_struct_name(a, s);
        op->ret_ctype = op->ret_struct;
    }
    return errors;
}

static void build_names(tgm_arena *a, tga_op *op)
{
    op->opname = tga_opname(a, op->f);
    op->enum_name = tga_enum_name(a, op->cname);
    op->fn_name =
        op->ndefaulted ? tgs_fmt(a, "tg_%s_fn", op->cname) : tgs_fmt(a, "tg_%s", op->cname);
    op->opts_name = op->ndefaulted ? tgs_fmt(a, "tg_%s_opts", op->cname) : NULL;
    op->kfn_type = tgs_fmt(a, "tg__kfn_%s", op->cname);
    op->boxed_name = tgs_fmt(a, "tg__boxed_%s", op->cname);
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

/* Every public identifier an op defines; two ops defining the same one cannot both compile. */
static int check_public_names(tgm_arena *a, const tga_ops *ops)
{
    int cap = ops->n * 3 + 1, n = 0, errors = 0;
    name_use *uses = tgm_alloc(a, sizeof *uses * (size_t)cap);
    for (int i = 0; i < ops->n; i++) {
        const tga_op *op = &ops->ops[i];
        uses[n++] = (name_use){ tgs_fmt(a, "tg_%s", op->cname), op, "function" };
        if (op->opts_name) {
            uses[n++] = (name_use){ op->fn_name, op, "function" };
            uses[n++] = (name_use){ op->opts_name, op, "options struct" };
        }
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++) {
            if (strcmp(uses[i].name, uses[j].name) != 0 || uses[i].op == uses[j].op) continue;
            const tgm_func *fi = uses[i].op->f, *fj = uses[j].op->f;
            tgm_error(fi->loc,
                      "C name '%s' (%s of '%s') is already used by '%s' at %s:%d:%d; "
                      "give one of them a `c_name:`",
                      uses[i].name, uses[i].what, fi->schema.full_name, fj->schema.full_name,
                      fj->loc.file, fj->loc.line, fj->loc.col);
            errors++;
            break;
        }
    }
    return errors;
}

/* Ops returning the same result struct must agree on its fields; its name must not be an
 * op's C name. */
static int check_result_structs(tgm_arena *a, const tga_ops *ops)
{
    int errors = 0;
    for (int i = 0; i < ops->n; i++) {
        const tga_op *op = &ops->ops[i];
        if (!op->ret_struct) continue;
        for (int j = 0; j < ops->n; j++) {
            const tga_op *o = &ops->ops[j];
            if (strcmp(tgs_fmt(a, "tg_%s", o->cname), op->ret_struct) == 0) {
                tgm_error(op->f->loc, "result struct '%s' of '%s' has the C name of '%s'",
                          op->ret_struct, op->f->schema.full_name, o->f->schema.full_name);
                errors++;
            }
            if (j >= i || !o->ret_struct || strcmp(o->ret_struct, op->ret_struct) != 0) continue;
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
    }
    return errors;
}

/* ------------------------------------------------------------------ the whole view */

int tga_build_ops(const tgm_model *m, tgm_arena *a, tga_ops *out)
{
    int errors = 0;
    out->n = m->nfuncs;
    out->ops = tgm_alloc(a, sizeof *out->ops * (size_t)(m->nfuncs ? m->nfuncs : 1));
    for (int i = 0; i < m->nfuncs; i++) {
        tga_op *op = &out->ops[i];
        op->f = m->funcs[i];
        op->index = i;
        op->cname = tga_cname(a, op->f);
        errors += build_args(a, op);
        errors += build_rets(a, op);
        build_names(a, op);
        build_ksig(a, op);
    }
    errors += check_public_names(a, out);
    errors += check_result_structs(a, out);
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

const char *tga_schema_comment(tgm_arena *a, const tgm_func *f)
{
    return tgs_comment_text(a, f->schema.text ? f->schema.text : f->schema.full_name);
}
