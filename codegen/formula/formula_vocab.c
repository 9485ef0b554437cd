/* The autograd vocabulary (docs/autograd.md): the functions derivative formulas may call that
 * are not operators, declared in the schema language in their own file
 * (specs/autograd_functions.yaml, `tgen --autograd-functions FILE`). Each entry is one
 * `- func: name.overload(args) -> returns` (and optionally `doc:`); it becomes a tga_op with
 * the argument kinds, defaults and returns of its schema, so that the checker resolves a call
 * of it exactly like a call of an operator. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "formula/formula.h"
#include "base/strbuf.h"

static void build_op(tgm_arena *a, tga_op *op)
{
    const tgm_schema *s = &op->f->schema;
    /* Overloads are distinct C functions: tg__grad_<name>, tg__grad_<name>_<overload>. */
    op->cname = *s->overload ? tgs_fmt(a, "tg__grad_%s_%s", s->base, s->overload)
                             : tgs_fmt(a, "tg__grad_%s", s->base);
    op->opname = s->base;
    op->nargs = s->nargs;
    op->args = tgm_alloc(a, sizeof *op->args * (size_t)(s->nargs + 1));
    for (int i = 0; i < s->nargs; i++) {
        const tgm_arg *sa = &s->args[i];
        tga_arg *ca = &op->args[i];
        *ca = tga_arg_view(a, sa);
        if (sa->def.kind == TGM_DEF_NONE_GIVEN) continue;
        const char *why, *values;
        ca->default_expr =
            tga_default_expr(a, ca->kind, &sa->type, &sa->def, "tg__unused", &values, &why);
        /* Only whether there is a default matters to the checker; a default without a C
         * form yet (an unmapped type) is still a default. */
        if (!ca->default_expr) ca->default_expr = sa->def.text ? sa->def.text : "?";
        ca->default_values = values; /* a list default: no static array to point at here */
        op->ndefaulted++;
    }
    op->nrets = s->nrets;
    op->rets = tgm_alloc(a, sizeof *op->rets * (size_t)(s->nrets + 1));
    for (int i = 0; i < s->nrets; i++) {
        op->rets[i].kind = tga_type_kind(&s->rets[i].type);
        op->rets[i].name = s->rets[i].name ? tga_ident(a, s->rets[i].name) : tgs_fmt(a, "r%d", i);
    }
    /* Several Tensor returns: a result struct of its own, <cname>_result. */
    if (s->nrets > 1) {
        op->ret_struct = tgs_fmt(a, "%s_result", op->cname);
        op->ret_ctype = op->ret_struct;
    } else if (s->nrets == 1) {
        op->ret_ctype = tga_ctype(op->rets[0].kind);
    }
}

/* Several files stack (--autograd-functions given again): the last file's entries come first,
 * so that a call is resolved against them before the earlier files', and an entry whose
 * `name.overload` a later file declares too is replaced by it (PyTorch 1.5's signatures over
 * today's). */
int tgf_vocab_load(tgm_arena *a, const char *const *paths, int npaths, tgf_vocab *out)
{
    memset(out, 0, sizeof *out);
    out->path = npaths ? paths[npaths - 1] : NULL;
    out->by_name = tgm__map_new(a);
    tgm_func ***funcs = tgm_alloc(a, sizeof *funcs * (size_t)(npaths + 1));
    int *nfuncs = tgm_alloc(a, sizeof *nfuncs * (size_t)(npaths + 1)), total = 0, errors = 0;
    for (int k = 0; k < npaths; k++) {
        errors += tgm_parse_vocab(a, paths[k], &funcs[k], &nfuncs[k]);
        total += nfuncs[k];
    }
    out->ops = tgm_alloc(a, sizeof *out->ops * (size_t)(total + 1));
    tgm_name_map *taken = tgm__map_new(a); /* full names, for the replacement */
    for (int k = npaths - 1; k >= 0; k--)
        for (int i = 0; i < nfuncs[k]; i++) {
            tgm_func *f = funcs[k][i];
            if (tgm__map_get(taken, f->schema.full_name)) continue;
            tgm__map_put(taken, f->schema.full_name, f);
            tga_op *op = &out->ops[out->n];
            memset(op, 0, sizeof *op);
            op->f = f;
            op->index = out->n++;
            build_op(a, op);
        }
    /* Groups by name: ops[] is final now, so pointers into it stay valid. */
    int *caps = tgm_alloc(a, sizeof *caps * (size_t)(out->n + 1));
    for (int i = 0; i < out->n; i++) {
        const char *name = out->ops[i].f->schema.base;
        tga_op_group *g = tgm__map_get(out->by_name, name);
        if (!g) {
            g = tgm_alloc(a, sizeof *g);
            tgm__map_put(out->by_name, name, g);
        }
        *TGS_PUSH(a, g->ops, g->n, caps[i]) = &out->ops[i];
    }
    return errors;
}

int tgf_vocab_find(const tgf_vocab *v, const char *name, const tga_op **found, int max)
{
    if (!v || !v->by_name) return 0;
    if (!strncmp(name, "at::", 4)) name += 4;
    const tga_op_group *g = tgm__map_get(v->by_name, name);
    int n = 0;
    for (int i = 0; g && i < g->n && n < max; i++) found[n++] = g->ops[i];
    return n;
}

bool tgf_vocab_prototype_ok(const tga_op *op)
{
    if (op->nrets == 0 || (op->nrets == 1 && !tga_ctype(op->rets[0].kind))) return false;
    for (int i = 0; op->nrets > 1 && i < op->nrets; i++)
        if (op->rets[i].kind != TGA_TENSOR) return false;
    for (int i = 0; i < op->nargs; i++)
        if (!tga_ctype(op->args[i].kind) || op->args[i].default_values) return false;
    return true;
}

const char *tgf_vocab_prototype(tgm_arena *a, const tga_op *op)
{
    if (!tgf_vocab_prototype_ok(op)) return NULL;
    tgs_list params = { 0 };
    for (int i = 0; i < op->nargs; i++) {
        if (!tga_ctype(op->args[i].kind)) return NULL;
        tgs_list_add(&params, a, tga_cdecl(a, op->args[i].kind, op->args[i].name));
    }
    const char *ret = op->ret_ctype;
    size_t n = strlen(ret);
    const char *proto = tgs_fmt(a, "%s%s%s(%s)", ret, n && ret[n - 1] == '*' ? "" : " ", op->cname,
                                op->nargs ? tgs_list_join(&params, a, ", ") : "void");
    if (!op->ret_struct) return proto;
    /* A tuple: its struct first (the caller ends the prototype with ';'). */
    tgs_list fields = { 0 };
    for (int i = 0; i < op->nrets; i++)
        tgs_list_addf(&fields, a, "tg_tensor *%s;", op->rets[i].name);
    return tgs_fmt(a, "typedef struct %s {\n    %s\n} %s;\n%s", op->ret_struct,
                   tgs_list_join(&fields, a, "\n    "), op->ret_struct, proto);
}

static bool readable(const char *path) { return access(path, R_OK) == 0; }

const char *tgf_vocab_default_path(tgm_arena *a, const char *derivatives, const char *argv0)
{
    static const char file[] = "autograd_functions.yaml";
    if (derivatives) {
        const char *slash = strrchr(derivatives, '/');
        const char *p =
            slash ? tgs_fmt(a, "%.*s/%s", (int)(slash - derivatives), derivatives, file) : file;
        if (readable(p)) return p;
    }
    /* The project's specs/ above tgen's directory: build/tgen, build/cuda-emu/tgen, ... */
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    if (slash) {
        const char *up = "/..";
        for (int level = 0; level < 3; level++, up = tgs_fmt(a, "%s/..", up)) {
            const char *p = tgs_fmt(a, "%.*s%s/specs/%s", (int)(slash - argv0), argv0, up, file);
            if (readable(p)) return p;
        }
    }
    return NULL;
}
