/* The suggestion of an unknown operator name (tgm_suggest_overload, model.h): the nearest
 * overload, among the overloads of the same base name when the base exists (`add.Tenser`:
 * add.Tensor), else of the base a rename prefixed (`qr`: linalg_qr), else of the nearest base
 * by edit distance. The distance is cut off as soon as it cannot beat the best so far, and a
 * character-count bound rules most candidates out first, so 400 unknown names against 2,600
 * overloads cost a few milliseconds. Backend files (codegen/backend/) and kernel libraries
 * (codegen/select/) name their operators against a spec with it. */
#include <string.h>

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

/* The candidates of suggestions: the base names of the overloads (with their counts), and
 * per base name its overloads. */
struct tgm_suggestions {
    tgm_arena *a;
    const char **bases;
    counts *base_counts;
    int nbases, cap, counts_cap;
    tgm_name_map *by_base; /* base -> tgs_list * of full names */
};

static void add_candidate(tgm_suggestions *c, const tgm_func *f)
{
    tgm_arena *a = c->a;
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

tgm_suggestions *tgm_suggestions_new(tgm_arena *a)
{
    tgm_suggestions *c = tgm_alloc(a, sizeof *c);
    *c = (tgm_suggestions){ .a = a, .by_base = tgm__map_new(a) };
    return c;
}

void tgm_suggestions_add(tgm_suggestions *c, const tgm_model *m)
{
    for (int i = 0; i < m->nfuncs; i++) add_candidate(c, m->funcs[i]);
}

/* Whether `name` ends with `_<base>`. */
static bool ends_with_word(const char *name, const char *base, size_t n)
{
    size_t len = strlen(name);
    return len > n && name[len - n - 1] == '_' && !strcmp(name + len - n, base);
}

/* The overload of `base` nearest to `name`, or its first. */
static const char *overload_of(const tgm_suggestions *c, const char *base, const char *name)
{
    const tgs_list *l = tgm__map_get(c->by_base, base);
    const char *best = nearest(name, l->items, NULL, l->n, (int)strlen(name));
    return best ? best : l->items[0];
}

const char *tgm_suggest_overload(const tgm_suggestions *c, const char *name)
{
    tgm_arena *a = c->a;
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
