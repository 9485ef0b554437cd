/* A selection's names against the core spec (tgk_resolve): each `- op:` (or plain) name must
 * be an overload of the core; an unknown one is an error naming the nearest overload
 * (tgm_suggest_overload, spec/suggest.c). A `- func:` naming a core overload must carry the core's schema; the other `- func:`
 * entries are custom operators, validated as the operator library of their namespace would
 * be (select_libs.c). */
#include <string.h>

#include "select/select.h"
#include "spec/frontend.h"

static void resolve_core(const tgm_model *core, tgm_suggestions **suggestions, tgk_entry *e)
{
    e->core = tgm_find_func(core, e->name);
    if (e->core) return;
    if (!*suggestions) { /* built on the first unknown name */
        *suggestions = tgm_suggestions_new(core->arena);
        tgm_suggestions_add(*suggestions, core);
    }
    const char *near = tgm_suggest_overload(*suggestions, e->name);
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
    tgm_suggestions *suggestions = NULL;
    for (int i = 0; i < l->n; i++) {
        tgk_entry *e = &l->entries[i];
        if (e->custom) resolve_func(a, core, e);
        else resolve_core(core, &suggestions, e);
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
