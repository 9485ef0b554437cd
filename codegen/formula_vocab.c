/* The autograd vocabulary (docs/autograd.md): the functions derivative formulas may call that
 * are not operators, declared in the schema language in their own file
 * (specs/autograd_functions.yaml, `tgen --autograd-functions FILE`). Each entry is one
 * `- func: name.overload(args) -> returns` (and optionally `doc:`); it becomes a tga_op with
 * the argument kinds, defaults and returns of its schema, so that the checker resolves a call
 * of it exactly like a call of an operator. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "formula.h"
#include "frontend.h"
#include "strbuf.h"

typedef struct vocab_ctx {
    tgf_vocab *v;
    int cap;
} vocab_ctx;

static vocab_ctx *current; /* tgm__parse_entries' callback has no user pointer */

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
        ca->arg = sa;
        ca->name = tga_ident(a, sa->name);
        ca->kind = tga_type_kind(&sa->type);
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

static void parse_entry(tgm_parse_ctx *c, const yaml_node_t *entry)
{
    static const char *const known[] = { "func", "doc", NULL };
    tgf_vocab *v = current->v;
    const yaml_node_t *func = NULL;
    bool fields_ok = true;
    for (yaml_node_pair_t *p = entry->data.mapping.pairs.start; p < entry->data.mapping.pairs.top;
         p++) {
        const char *name = tgm__field_name(c->d, entry->data.mapping.pairs.start, p, known);
        if (!name) {
            fields_ok = false;
            continue;
        }
        const yaml_node_t *val = tgm__yaml_node(c->d, p->value);
        if (val->type != YAML_SCALAR_NODE) {
            tgm_error(tgm__node_loc(c->d, val), "'%s' must be a string, not %s", name,
                      tgm__node_kind(val));
            fields_ok = false;
        } else if (!strcmp(name, "func")) {
            func = val;
        }
    }
    if (!func) {
        if (fields_ok)
            tgm_error(tgm__node_loc(c->d, entry), "autograd vocabulary entry has no 'func:' field");
        return;
    }
    tgm_func *f = tgm_alloc(c->a, sizeof *f);
    f->loc = tgm__node_loc(c->d, entry);
    f->kind = TGM_KIND_FUNCTIONAL;
    const char *text = tgm__scalar(func);
    tgm_loc at = tgm__text_start(c->d, func);
    if (tgm_parse_schema(c->a, text, at, &f->schema) != 0) return;
    f->schema.span = tgm__node_span(c->a, c->d, func);
    const tgm_schema *s = &f->schema;
    /* A helper computes a value: it writes none of its arguments and is never in place. */
    for (int i = 0; i < s->nargs; i++)
        if (s->args[i].type.alias.is_write) {
            tgm_error(s->args[i].loc,
                      "argument '%s' of autograd function '%s' is written to (%s!); "
                      "vocabulary functions return new values",
                      s->args[i].name, s->full_name, s->args[i].type.alias.set);
            return;
        }
    if (s->inplace || s->nrets == 0) {
        tgm_error(s->loc, "autograd function '%s' %s", s->full_name,
                  s->inplace ? "is in place (its name ends in '_'); vocabulary functions return "
                               "new values"
                             : "returns nothing; formulas need a value");
        return;
    }
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->ops[i].f->schema.full_name, s->full_name)) {
            tgm_error(s->loc, "duplicate autograd function '%s'", s->full_name);
            tgm_note(v->ops[i].f->schema.loc, "the first one is here");
            return;
        }
    tga_op *op = TGS_PUSH(c->a, v->ops, v->n, current->cap);
    memset(op, 0, sizeof *op);
    op->f = f;
    op->index = v->n - 1;
    build_op(c->a, op);
}

int tgf_vocab_load(tgm_arena *a, const char *path, tgf_vocab *out)
{
    memset(out, 0, sizeof *out);
    out->path = path;
    out->by_name = tgm__map_new(a);
    if (!path) return 0;
    tgm_model m = { .arena = a };
    vocab_ctx ctx = { out, 0 };
    vocab_ctx *saved = current;
    current = &ctx;
    int errors = tgm__parse_entries(&m, path, "func", parse_entry);
    current = saved;
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
