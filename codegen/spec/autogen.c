/* `autogen:` synthesises the overloads PyTorch's code generator derives from an entry instead
 * of having them written out:
 *
 *   - the out= variant of any non-out entry E = `base[.ov]`, named `base.out` or `base.ov_out`:
 *     E's arguments (an in-place entry's `self` loses its `(a!)`), then keyword-only
 *     `Tensor(a!) out` for one return or `out0, out1, ...` (aliases a, b, ... skipping letters
 *     E already uses) for several, returning them as `Tensor(a!)` (or `()` when a return is a
 *     list, which cannot be returned by alias);
 *   - the functional variant of an in-place entry (`base[.ov]`; `__iand__` gives `__and__`) or
 *     of a mutable one (`base_functional[.ov]`): every `(x!)` dropped, returning E's returns
 *     plus a copy `<arg>_out` of each written argument E does not already return.
 *
 * The synthesised entries are appended to m->funcs with is_autogen and autogen_from set, no
 * dispatch, and the function variant only; their schema text is the canonical formatting. */
#include <stdio.h>
#include <string.h>

#include "spec/frontend.h"

static tgm_type strip_write(tgm_type t)
{
    if (t.alias.is_write) t.alias = (tgm_alias){ 0 };
    return t;
}

static void set_name(tgm_arena *a, tgm_schema *s, const char *full)
{
    const char *dot = strchr(full, '.');
    s->full_name = tgm_strdup(a, full);
    s->base = dot ? tgm_strndup(a, full, (size_t)(dot - full)) : s->full_name;
    s->overload = dot ? tgm_strdup(a, dot + 1) : "";
    size_t n = strlen(s->base);
    s->dunder = n > 4 && !strncmp(s->base, "__", 2) && !strcmp(s->base + n - 2, "__");
}

static void make_functional(tgm_arena *a, const tgm_func *e, tgm_schema *s)
{
    const tgm_schema *es = &e->schema;
    int acap = 0, rcap = 0;
    for (int i = 0; i < es->nargs; i++) {
        tgm_arg *arg = TGS_PUSH(a, s->args, s->nargs, acap);
        *arg = es->args[i];
        arg->type = strip_write(arg->type);
        arg->is_out = false;
    }
    for (int i = 0; i < es->nrets; i++) {
        tgm_return *r = TGS_PUSH(a, s->rets, s->nrets, rcap);
        *r = es->rets[i];
        r->type = strip_write(r->type);
    }
    for (int i = 0; i < es->nargs; i++) {
        const tgm_arg *arg = &es->args[i];
        if (!arg->type.alias.is_write || tgm_schema_returns_alias(es, arg->type.alias.set))
            continue;
        tgm_return *r = TGS_PUSH(a, s->rets, s->nrets, rcap);
        *r = (tgm_return){ arg->loc, tgs_fmt(a, "%s_out", arg->name), strip_write(arg->type) };
    }
}

static const char *unused_alias(tgm_arena *a, const tgm_schema *s, char *next)
{
    for (;; (*next)++) {
        char set[2] = { *next, 0 };
        bool used = false;
        for (int i = 0; i < s->nargs && !used; i++)
            used = s->args[i].type.alias.set && !strcmp(s->args[i].type.alias.set, set);
        if (!used) {
            (*next)++;
            return tgm_strdup(a, set);
        }
    }
}

static bool make_out(tgm_arena *a, const tgm_func *e, tgm_loc loc, tgm_schema *s)
{
    const tgm_schema *es = &e->schema;
    int acap = 0, rcap = 0;
    int self = e->kind == TGM_KIND_INPLACE ? tgm_schema_self_index(es) : -1;
    for (int i = 0; i < es->nargs; i++) {
        tgm_arg *arg = TGS_PUSH(a, s->args, s->nargs, acap);
        *arg = es->args[i];
        if (i == self) arg->type = strip_write(arg->type);
    }
    /* What the out= arguments receive: E's returns, or `self` for an in-place `-> ()`. */
    tgm_return results[64];
    int nres = 0;
    for (int i = 0; i < es->nrets && nres < 64; i++) results[nres++] = es->rets[i];
    if (nres == 0 && self >= 0) results[nres++] = (tgm_return){ loc, NULL, es->args[self].type };
    if (nres == 0) {
        tgm_error(loc, "cannot derive an out= variant of '%s': it returns nothing", es->full_name);
        return false;
    }
    bool any_list = false;
    for (int i = 0; i < nres; i++) {
        if (results[i].type.base != TGM_TENSOR) {
            tgm_error(loc, "cannot derive an out= variant of '%s': it returns '%s'", es->full_name,
                      tgm__type_str(a, &results[i].type));
            return false;
        }
        any_list |= results[i].type.is_list;
    }
    char next = 'a';
    int first_out = s->nargs;
    for (int i = 0; i < nres; i++) {
        tgm_arg *out = TGS_PUSH(a, s->args, s->nargs, acap);
        *out = (tgm_arg){ .loc = loc, .kwarg_only = true, .is_out = true };
        out->name = nres == 1 ? "out" : tgs_fmt(a, "out%d", i);
        out->type = results[i].type;
        out->type.alias = (tgm_alias){ 0 }; /* E's own `(a!)` must not block letter a */
        out->type.alias = (tgm_alias){ unused_alias(a, s, &next), true, NULL };
    }
    for (int i = 0; i < nres && !any_list; i++) {
        tgm_return *r = TGS_PUSH(a, s->rets, s->nrets, rcap);
        *r = (tgm_return){ loc, results[i].name, s->args[first_out + i].type };
    }
    return true;
}

/* The names autogen may give for entry e: its out= variant and, for in-place and mutable
 * entries, its functional variant. */
static void derivable_names(tgm_arena *a, const tgm_func *e, const char **out_name,
                            const char **fn_name)
{
    const tgm_schema *es = &e->schema;
    const char *base = es->base;
    if (es->dunder && e->kind == TGM_KIND_INPLACE) base = tgs_fmt(a, "__%s", es->base + 3);
    const char *ov = es->overload;
    *out_name = *ov ? tgs_fmt(a, "%s.%s_out", base, ov) : tgs_fmt(a, "%s.out", base);
    *fn_name = NULL;
    const char *fbase = e->kind == TGM_KIND_MUTABLE   ? tgs_fmt(a, "%s_functional", base)
                        : e->kind == TGM_KIND_INPLACE ? base
                                                      : NULL;
    if (fbase) *fn_name = *ov ? tgs_fmt(a, "%s.%s", fbase, ov) : fbase;
}

static void synthesise(tgm_model *m, tgm_func *e, const char *name, tgm_loc loc)
{
    tgm_arena *a = m->arena;
    if (e->kind == TGM_KIND_OUT || e->kind == TGM_KIND_SCRATCH) {
        tgm_error(loc, "cannot autogenerate '%s' from '%s', which is already an out= function",
                  name, e->schema.full_name);
        return;
    }
    const char *out_name, *fn_name;
    derivable_names(a, e, &out_name, &fn_name);
    tgm_func *g = tgm_alloc(a, sizeof *g);
    g->loc = loc;
    g->schema.loc = loc;
    if (!strcmp(name, out_name)) {
        if (!make_out(a, e, loc, &g->schema)) return;
    } else if (fn_name && !strcmp(name, fn_name)) {
        make_functional(a, e, &g->schema);
    } else {
        if (fn_name)
            tgm_error(
                loc,
                "cannot autogenerate '%s' from '%s': the names it can derive are '%s' and '%s'",
                name, e->schema.full_name, fn_name, out_name);
        else
            tgm_error(loc, "cannot autogenerate '%s' from '%s': the out= variant would be '%s'",
                      name, e->schema.full_name, out_name);
        return;
    }
    set_name(a, &g->schema, name);
    g->schema.ns = e->schema.ns; /* the library's, like its source entry */
    g->schema.text = tgm_schema_format(a, &g->schema);
    g->kind = tgm__schema_kind(&g->schema);
    g->variant_function = true;
    g->device_guard = true;
    g->is_autogen = true;
    g->autogen_from = e;
    tgm_func *prev = tgm__map_put(m->func_index, g->schema.full_name, g);
    /* The functional and the in-place entry of a group may both ask for their out= variant
     * (PyTorch 2.9's `_foreach_lerp.List_out`): the same schema twice is one entry, as in
     * torchgen, which derives it once per group. */
    if (prev && prev->is_autogen && !strcmp(prev->schema.text, g->schema.text)) return;
    if (prev) {
        tgm_error(loc, "autogen '%s' duplicates an existing entry", name);
        tgm_note(prev->schema.loc, "'%s' is declared here", name);
        return;
    }
    tgm__add_func(m, g);
}

int tgm__autogen_all(tgm_model *m)
{
    int before = tgm_error_count(), n = m->nfuncs;
    for (int i = 0; i < n; i++) {
        tgm_func *e = m->funcs[i];
        if (e->invalid) continue; /* its error is reported; a derived entry would repeat it */
        for (int j = 0; j < e->nautogen; j++)
            synthesise(m, e, e->autogen[j], e->autogen_locs ? e->autogen_locs[j] : e->autogen_loc);
    }
    return tgm_error_count() - before;
}
