/* A selection's names against the core spec (tgk_resolve): each `- op:` (or plain) name must
 * be an overload of the core; an unknown one is an error naming the nearest overload (among
 * the overloads of its base name when the base exists, `add.Tenser` -> add.Tensor, else among
 * all). A `- func:` naming a core overload must carry the core's schema; the other `- func:`
 * entries are custom operators, validated as the operator library of their namespace would
 * be (select_libs.c). */
#include <string.h>

#include "select/select.h"
#include "spec/frontend.h"

/* Levenshtein distance of a and b, or limit + 1 as soon as it must exceed limit. */
static int distance(const char *a, const char *b, int limit)
{
    size_t la = strlen(a), lb = strlen(b);
    int row[160];
    if (lb >= sizeof row / sizeof *row || (int)(la > lb ? la - lb : lb - la) > limit)
        return limit + 1;
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0], best = row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], d = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < d) d = up + 1;
            if (row[j - 1] + 1 < d) d = row[j - 1] + 1;
            row[j] = d;
            diag = up;
            if (d < best) best = d;
        }
        if (best > limit) return limit + 1;
    }
    return row[lb];
}

static size_t base_len(const char *full)
{
    const char *dot = strchr(full, '.');
    return dot ? (size_t)(dot - full) : strlen(full);
}

/* The core overload nearest to `name`: of the same base name when it has any (however far),
 * else the nearest of all within half the name's length; NULL when none is that near. */
static const char *nearest(const tgm_model *core, const char *name)
{
    size_t nb = base_len(name);
    const char *best = NULL;
    int limit = 1000;
    for (int i = 0; i < core->nfuncs; i++) {
        const char *full = core->funcs[i]->schema.full_name;
        if (base_len(full) != nb || strncmp(full, name, nb)) continue;
        int d = distance(name, full, limit);
        if (d < limit) best = full, limit = d;
    }
    if (best) return best;
    limit = (int)strlen(name) / 3 + 1;
    for (int i = 0; i < core->nfuncs; i++) {
        int d = distance(name, core->funcs[i]->schema.full_name, limit - 1);
        if (d < limit) best = core->funcs[i]->schema.full_name, limit = d;
    }
    return best;
}

static void resolve_core(const tgm_model *core, tgk_entry *e)
{
    e->core = tgm_find_func(core, e->name);
    if (e->core) return;
    const char *near = nearest(core, e->name);
    if (near)
        tgm_error(e->loc, "'%s' is not an operator of the core spec; the nearest is '%s'", e->name,
                  near);
    else tgm_error(e->loc, "'%s' is not an operator of the core spec", e->name);
}

/* A `- func:` of a core overload: the same operator, so the same schema. */
static void resolve_func(tgm_arena *a, const tgm_model *core, tgk_entry *e)
{
    if (e->custom->schema.ns) return;
    const tgm_func *f = tgm_find_func(core, e->name);
    if (!f) return;
    const char *mine = tgm_schema_format(a, &e->custom->schema);
    const char *theirs = tgm_schema_format(a, &f->schema);
    if (strcmp(mine, theirs)) {
        tgm_error(e->loc,
                  "'%s' is an operator of the core spec with another schema: '%s'; pick it "
                  "with 'op: %s', or give the custom operator a name of its own",
                  e->name, theirs, e->name);
        return;
    }
    e->core = f;
    e->custom = NULL;
}

int tgk_resolve(const tgm_model *core, tgk_list *l)
{
    int before = tgm_error_count();
    tgm_arena *a = core->arena;
    tgm_name_map *seen = tgm__map_new(a);
    for (int i = 0; i < l->n; i++) {
        tgk_entry *e = &l->entries[i];
        if (e->custom) resolve_func(a, core, e);
        else resolve_core(core, e);
        if (!e->core) continue;
        const tgk_entry *first = tgm__map_put(seen, e->core->schema.full_name, e);
        if (first && l->yaml) {
            tgm_error(e->loc, "'%s' is selected twice", e->name);
            tgm_note(first->loc, "'%s' was selected here", e->name);
        }
    }
    /* The custom operators: one library per namespace, validated as such. */
    tgk_build_libraries(a, l);
    return tgm_error_count() - before;
}
