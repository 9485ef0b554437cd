/* A backend file's operator names against the native spec it targets: each must name an
 * overload of that spec or one of the file's own custom operators. An unknown name is an
 * error naming the nearest overload: among the overloads of the same base name when the base
 * exists (`add.Tenser`: add.Tensor), else among all of them. The edit distance is cut off as
 * soon as it cannot beat the best so far, so 400 unknown names against 2,600 overloads cost a
 * few milliseconds. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "spec/frontend.h"

/* Levenshtein distance of a and b, or limit + 1 once it is certain to exceed limit. */
static int distance(const char *a, const char *b, int limit)
{
    size_t la = strlen(a), lb = strlen(b);
    int row[128];
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

/* Character counts of a name, by the low 6 bits of each byte: the edit distance of two names
 * is at least half the sum of their counts' differences (an edit changes it by at most 2),
 * which rules most candidates out before the distance is computed. */
typedef struct counts {
    unsigned char c[64];
} counts;

static counts count(const char *s)
{
    counts h = { { 0 } };
    for (; *s; s++)
        if (h.c[*s & 63] < 255) h.c[*s & 63]++;
    return h;
}

static int count_bound(const counts *a, const counts *b)
{
    int diff = 0;
    for (int i = 0; i < 64; i++) diff += a->c[i] > b->c[i] ? a->c[i] - b->c[i] : b->c[i] - a->c[i];
    return (diff + 1) / 2;
}

/* The nearest of names[0..n) to `name`, at most `limit` edits away; cs: their counts, or
 * NULL. */
static const char *nearest(const char *name, const char *const *names, const counts *cs, int n,
                           int limit)
{
    counts h = count(name);
    const char *best = NULL;
    for (int i = 0; i < n && limit >= 0; i++) {
        counts ci = cs ? cs[i] : count(names[i]);
        if (count_bound(&h, &ci) > limit) continue;
        int d = distance(name, names[i], limit);
        if (d <= limit) {
            best = names[i];
            limit = d - 1; /* only a strictly nearer name replaces it */
        }
    }
    return best;
}

static int default_limit(const char *name)
{
    int limit = (int)strlen(name) / 3;
    return limit < 1 ? 1 : limit;
}

const char *tgb_nearest(const char *name, const char *const *names, int n)
{
    return nearest(name, names, NULL, n, default_limit(name));
}

/* The candidates of suggestions: the base names of the overloads (with their counts), and
 * per base name its overloads. */
typedef struct candidates {
    const char **bases;
    counts *base_counts;
    int nbases, cap, counts_cap;
    tgm_name_map *by_base; /* base -> tgs_list * of full names */
} candidates;

static void add_candidate(tgm_arena *a, candidates *c, const tgm_func *f)
{
    const char *full = f->schema.full_name;
    const char *dot = strchr(full, '.');
    const char *base = dot ? tgm_strndup(a, full, (size_t)(dot - full)) : full;
    tgs_list *l = tgm__map_get(c->by_base, base);
    if (!l) {
        l = tgm_alloc(a, sizeof *l);
        tgm__map_put(c->by_base, base, l);
        *TGS_PUSH(a, c->bases, c->nbases, c->cap) = base;
        c->nbases--;
        *TGS_PUSH(a, c->base_counts, c->nbases, c->counts_cap) = count(base);
    }
    tgs_list_add(l, a, full);
}

/* Whether `name` ends with `_<base>`. */
static bool ends_with_word(const char *name, const char *base, size_t n)
{
    size_t len = strlen(name);
    return len > n && name[len - n - 1] == '_' && !strcmp(name + len - n, base);
}

/* The overload of `base` nearest to `name`, or its first. */
static const char *overload_of(const candidates *c, const char *base, const char *name)
{
    const tgs_list *l = tgm__map_get(c->by_base, base);
    const char *best = nearest(name, l->items, NULL, l->n, (int)strlen(name));
    return best ? best : l->items[0];
}

static const char *suggest(tgm_arena *a, const candidates *c, const char *name)
{
    const char *dot = strchr(name, '.');
    const char *base = dot ? tgm_strndup(a, name, (size_t)(dot - name)) : name;
    if (tgm__map_get(c->by_base, base)) return overload_of(c, base, name); /* the base is right */
    /* A rename adds a prefix (qr: linalg_qr): the shortest base that ends with this one as a
     * word, else the nearest base by edit distance; then its overload nearest to the name. */
    size_t n = strlen(base);
    const char *best = NULL;
    for (int i = 0; i < c->nbases; i++)
        if (ends_with_word(c->bases[i], base, n) && (!best || strlen(c->bases[i]) < strlen(best)))
            best = c->bases[i];
    if (!best) best = nearest(base, c->bases, c->base_counts, c->nbases, default_limit(base));
    return best ? overload_of(c, best, name) : NULL;
}

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
    candidates c = { .by_base = tgm__map_new(a) };
    for (int i = 0; i < native->nfuncs; i++) add_candidate(a, &c, native->funcs[i]);
    for (int k = 0; k < b->nlibs; k++)
        for (int i = 0; i < b->libs[k].model->nfuncs; i++)
            add_candidate(a, &c, b->libs[k].model->funcs[i]);
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
            const char *near = suggest(a, &c, n->name);
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
