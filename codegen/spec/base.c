/* --base NATIVE.yaml: check a file against the spec it extends (docs/spec.md, "A file that
 * extends another").
 *
 * A backend's file (op-plugin's op_plugin_functions.yaml) declares its own operators and
 * restates, in `official:`, those of PyTorch it implements; its formulas call PyTorch's
 * operators freely, restated or not (`grad.mH()`). Checked alone, those calls are unknown. The
 * base is read as --import reads tensorgen's interface (into m->imports, which formulas fall
 * back on): its operators are known but not the file's, and nothing is generated for them. An
 * entry of the file naming a base operator must restate it with the same schema; it stays in
 * the model (its derivatives and dispatch are checked as any entry's) but is marked
 * (tgm_func.base) and not counted as one of the file's functions. */
#include <string.h>

#include "base/strbuf.h"
#include "spec/frontend.h"

int tgm_parse_base(tgm_model *m, const char *path)
{
    /* The base is not what the summary describes: what reading it counted (fields read as
     * data, ...) is dropped. */
    tgm_reading reading = m->reading;
    m->reading = (tgm_reading){ .torch_version = reading.torch_version };
    int errors = tgm__parse_aside(m, path, &m->imports, &m->nimports);
    m->reading = reading;
    m->reading.base = path;
    m->imports_base = true;
    for (int i = 0; i < m->nimports; i++)
        m->imports[i]->kind = tgm__schema_kind(&m->imports[i]->schema);
    return errors;
}

/* The type as the dispatcher compares it: a SymInt is an int (a kernel registered with int64_t
 * serves a SymInt schema; PyTorch moved many `int`s to `SymInt` after backends restated them),
 * SymFloat a float, SymBool a bool. */
static tgm_type concrete(tgm_type t)
{
    t.base = t.base == TGM_SYMINT     ? TGM_INT
             : t.base == TGM_SYMFLOAT ? TGM_FLOAT
             : t.base == TGM_SYMBOOL  ? TGM_BOOL
                                      : t.base;
    return t;
}

static bool same_type(const tgm_type *a, const tgm_type *b)
{
    tgm_type x = concrete(*a), y = concrete(*b);
    return tgm__type_eq(&x, &y);
}

static bool same_default(const tgm_default *a, const tgm_default *b)
{
    if (a->kind != b->kind) return false;
    if (a->kind == TGM_DEF_NONE_GIVEN) return true;
    const char *x = a->text ? a->text : "", *y = b->text ? b->text : "";
    for (;; x++, y++) { /* as written, spaces aside */
        while (*x == ' ') x++;
        while (*y == ' ') y++;
        if (*x != *y) return false;
        if (!*x) return true;
    }
}

static const char *default_text(tgm_arena *a, const tgm_default *d)
{
    return d->kind == TGM_DEF_NONE_GIVEN ? "no default" : tgs_fmt(a, "default %s", d->text);
}

/* What makes entry f another operator than the base's b, or NULL when it is the same: its
 * arguments' positions, types (SymInt as int), alias annotations, keyword-only split and
 * defaults, and its returns' types. The argument names are not compared: a kernel takes its
 * arguments by position, and callers use the base's names. */
static const char *difference(tgm_arena *a, const tgm_schema *f, const tgm_schema *b)
{
    if (f->nargs != b->nargs)
        return tgs_fmt(a, "%d arguments here, %d in the base", f->nargs, b->nargs);
    for (int i = 0; i < f->nargs; i++) {
        const tgm_arg *x = &f->args[i], *y = &b->args[i];
        if (!same_type(&x->type, &y->type))
            return tgs_fmt(a, "argument %d ('%s') is %s here, %s in the base", i + 1, x->name,
                           tgm__type_str(a, &x->type), tgm__type_str(a, &y->type));
        if (x->kwarg_only != y->kwarg_only)
            return tgs_fmt(a, "argument %d ('%s') is %s here, %s in the base", i + 1, x->name,
                           x->kwarg_only ? "keyword-only" : "positional",
                           y->kwarg_only ? "keyword-only" : "positional");
        if (!same_default(&x->def, &y->def))
            return tgs_fmt(a, "argument %d ('%s') has %s here, %s in the base", i + 1, x->name,
                           default_text(a, &x->def), default_text(a, &y->def));
    }
    if (f->nrets != b->nrets)
        return tgs_fmt(a, "%d returns here, %d in the base", f->nrets, b->nrets);
    for (int i = 0; i < f->nrets; i++)
        if (!same_type(&f->rets[i].type, &b->rets[i].type))
            return tgs_fmt(a, "return %d is %s here, %s in the base", i + 1,
                           tgm__type_str(a, &f->rets[i].type), tgm__type_str(a, &b->rets[i].type));
    return NULL;
}

int tgm_match_base(tgm_model *m)
{
    if (!m->imports_base) return 0;
    tgm_name_map *base = tgm__map_new(m->arena);
    for (int i = 0; i < m->nimports; i++)
        tgm__map_put(base, m->imports[i]->schema.full_name, m->imports[i]);
    int errors = 0;
    for (int i = 0; i < m->nfuncs; i++) {
        tgm_func *f = m->funcs[i];
        const tgm_func *b = tgm__map_get(base, f->schema.full_name);
        if (!b) continue;
        const char *why = difference(m->arena, &f->schema, &b->schema);
        if (!why) {
            f->base = b;
            m->reading.base_restated++;
            continue;
        }
        tgm_error(f->schema.loc,
                  "'%s' restates an operator of the base (--base) as another one: %s; an entry "
                  "naming a base operator must repeat its schema",
                  f->schema.full_name, why);
        tgm_note(b->schema.loc, "'%s' is declared there as '%s'", f->schema.full_name,
                 b->schema.text);
        errors++;
    }
    return errors;
}
