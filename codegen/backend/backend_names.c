/* A backend file's operator names against the native spec it targets: each must name an
 * overload of that spec or one of the file's own custom operators. An unknown name is an
 * error naming the nearest overload (tgm_suggest_overload, spec/suggest.c). */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "spec/frontend.h"

static const tgm_func *find(const tgm_model *native, tgb_backend *b, tgb_name *n)
{
    const tgm_func *f = tgm_find_func(native, n->name);
    if (f) return f;
    for (int i = 0; i < b->nlibs; i++)
        if ((f = tgm_find_func(b->libs[i].model, n->name))) {
            n->ns = b->libs[i].ns;
            return f;
        }
    return NULL;
}

static const char *const list_names[TGB_NLISTS] = { "supported", "autograd", "full_codegen",
                                                    "ir_gen", "symint" };

/* A name given twice in one list, or both in `supported` and `full_codegen` (both would give
 * the operator's kernel). */
static void check_duplicates(tgm_arena *a, const tgb_backend *b)
{
    tgm_name_map *kernels = tgm__map_new(a);
    for (int l = 0; l < TGB_NLISTS; l++) {
        tgm_name_map *seen = tgm__map_new(a);
        for (int i = 0; i < b->nnames[l]; i++) {
            const tgb_name *n = &b->names[l][i], *first = tgm__map_put(seen, n->name, (void *)n);
            const char *list = b->sectioned && l == TGB_SUPPORTED ? "aten" : list_names[l];
            if (first) {
                tgm_error(n->loc, "'%s' appears twice in '%s'", n->name, list);
                tgm_note(first->loc, "'%s' was given here", n->name);
                continue;
            }
            if (l != TGB_SUPPORTED && l != TGB_FULL_CODEGEN) continue;
            if ((first = tgm__map_put(kernels, n->name, (void *)n))) {
                tgm_error(n->loc, "'%s' is in 'full_codegen' and in 'supported': give it in one",
                          n->name);
                tgm_note(first->loc, "'%s' was given here", n->name);
            }
        }
    }
}

static int by_position(const void *x, const void *y)
{
    const tgb_name *a = *(tgb_name *const *)x, *b = *(tgb_name *const *)y;
    return a->loc.line != b->loc.line ? a->loc.line - b->loc.line : a->loc.col - b->loc.col;
}

int tgb_resolve(const tgm_model *native, tgb_backend *b)
{
    int before = tgm_error_count();
    tgm_arena *a = native->arena;
    tgm_suggestions *c = tgm_suggestions_new(a);
    tgm_suggestions_add(c, native);
    for (int k = 0; k < b->nlibs; k++) tgm_suggestions_add(c, b->libs[k].model);
    /* In file order, whatever list a name is in. */
    tgb_name **all = NULL;
    int nall = 0, cap = 0;
    for (int l = 0; l < TGB_NLISTS; l++)
        for (int i = 0; i < b->nnames[l]; i++) *TGS_PUSH(a, all, nall, cap) = &b->names[l][i];
    if (nall) qsort(all, (size_t)nall, sizeof *all, by_position);
    for (int i = 0; i < nall; i++) {
        tgb_name *n = all[i];
        n->func = find(native, b, n);
        if (!n->func) {
            const char *near = tgm_suggest_overload(c, n->name);
            if (near)
                tgm_error(n->loc, "unknown operator '%s' (not in %s); did you mean '%s'?", n->name,
                          b->target, near);
            else tgm_error(n->loc, "unknown operator '%s' (not in %s)", n->name, b->target);
            continue;
        }
        if (n->own_schema && !n->ns &&
            strcmp(tgm_schema_format(a, n->schema), tgm_schema_format(a, &n->func->schema)))
            b->differing_schemas++;
    }
    check_duplicates(a, b);
    return tgm_error_count() - before;
}
