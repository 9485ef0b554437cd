/* Which library an entry belongs to, and files that mix several.
 *
 * An entry names its namespace in its schema (`myops::nms(...)`) or not. A file is one
 * library's: tensorgen's own (aten, no --namespace) or an operator library's (--namespace NS),
 * and an unqualified entry is that library's. A file whose entries name two or more
 * namespaces (ExecuTorch's portable_functions.yaml: `et_copy::`, `dim_order_ops::` and
 * unqualified core operators) is none of them: it is generated one namespace at a time with
 * --only-namespace NS, which takes NS's entries and skips the others (counted in the summary).
 * In such a file an unqualified entry is aten's, as in PyTorch's files. Without the flag the
 * file gets one error naming its namespaces. Generating one library per namespace in one run
 * would need one output per library; a run per namespace is simpler and as correct. */
#include <string.h>

#include "spec/frontend.h"

bool tgm_valid_namespace(const char *ns)
{
    size_t n = strlen(ns);
    if (!n || !(ns[0] >= 'a' && ns[0] <= 'z') || ns[n - 1] == '_') return false;
    for (size_t i = 0; i < n; i++)
        if (!((ns[i] >= 'a' && ns[i] <= 'z') || (ns[i] >= '0' && ns[i] <= '9') || ns[i] == '_'))
            return false;
    return strcmp(ns, "aten") && strcmp(ns, "tg");
}

typedef struct ns_count {
    const char *name;
    int count;
    tgm_loc first;          /* its first entry */
    const char *first_name; /* and that entry's name */
} ns_count;

/* The distinct written namespaces of the entries, in order of first appearance. */
static int written_namespaces(tgm_model *m, ns_count **out, int *unqualified)
{
    ns_count *ns = NULL;
    int n = 0, cap = 0;
    *unqualified = 0;
    for (int i = 0; i < m->nfuncs; i++) {
        const tgm_schema *s = &m->funcs[i]->schema;
        if (!s->ns) {
            (*unqualified)++;
            continue;
        }
        int k = 0;
        while (k < n && strcmp(ns[k].name, s->ns)) k++;
        if (k == n) *TGS_PUSH(m->arena, ns, n, cap) = (ns_count){ s->ns, 0, s->loc, s->full_name };
        ns[k].count++;
    }
    *out = ns;
    return n;
}

/* Keeps the entries (and derivative entries) of namespace `want`; an unqualified one is
 * `dflt`'s. Counts the others per namespace into m->reading. */
static void select_namespace(tgm_model *m, const char *want, const char *dflt)
{
    tgs_list skipped = { 0 };
    ns_count *counts = NULL;
    int ncounts = 0, cap = 0, kept = 0;
    for (int i = 0; i < m->nfuncs; i++) {
        tgm_func *f = m->funcs[i];
        const char *ns = f->schema.ns ? f->schema.ns : dflt;
        if (!strcmp(ns, want)) {
            m->funcs[kept++] = f;
            continue;
        }
        int k = 0;
        while (k < ncounts && strcmp(counts[k].name, ns)) k++;
        if (k == ncounts)
            *TGS_PUSH(m->arena, counts, ncounts, cap) = (ns_count){ ns, 0, f->loc, NULL };
        counts[k].count++;
        m->reading.ns_skipped++;
    }
    m->nfuncs = kept;
    int dkept = 0;
    for (int i = 0; i < m->nderivs; i++) {
        const char *ns = m->derivs[i]->schema.ns ? m->derivs[i]->schema.ns : dflt;
        if (!strcmp(ns, want)) m->derivs[dkept++] = m->derivs[i];
    }
    m->nderivs = dkept;
    for (int k = 0; k < ncounts; k++)
        tgs_list_add(&skipped, m->arena,
                     tgs_fmt(m->arena, "%s %d", counts[k].name, counts[k].count));
    m->reading.ns_skipped_names = tgs_list_join(&skipped, m->arena, ", ");
}

/* "aten, cadence, quantized_decomposed": the namespaces a mixed file's entries belong to. */
static const char *ns_list(tgm_arena *a, const ns_count *ns, int n, int unqualified)
{
    tgs_list l = { 0 };
    bool aten_written = false;
    for (int i = 0; i < n; i++) aten_written |= !strcmp(ns[i].name, "aten");
    if (unqualified && !aten_written) tgs_list_add(&l, a, "aten");
    for (int i = 0; i < n; i++) tgs_list_add(&l, a, ns[i].name);
    return tgs_list_join(&l, a, ", ");
}

/* A namespace written on an entry or a derivative name must be the library's (--namespace),
 * or `aten` for tensorgen's own. Each is then made the library's, so that an unqualified entry
 * of a library's spec belongs to it too. */
static void check_namespace(const tgm_model *m, tgm_schema *s, const char *what)
{
    const char *want = m->ns ? m->ns : "aten";
    if (s->ns && strcmp(s->ns, want)) {
        if (m->ns)
            tgm_error(s->loc, "%s '%s::%s' is not in this library's namespace '%s'", what, s->ns,
                      s->full_name, m->ns);
        else
            tgm_error(s->loc,
                      "%s '%s::%s' belongs to operator library '%s': generate it with "
                      "tgen --namespace %s",
                      what, s->ns, s->full_name, s->ns, s->ns);
    }
    s->ns = m->ns;
}

int tgm__check_namespaces(tgm_model *m)
{
    int before = tgm_error_count(), unqualified;
    bool reported = false; /* one error for the file: the entries need no more */
    ns_count *ns;
    int n = written_namespaces(m, &ns, &unqualified);
    bool aten_written = false;
    for (int i = 0; i < n; i++) aten_written |= !strcmp(ns[i].name, "aten");
    const char *only = m->reading.only_ns;
    if (only && m->nfuncs) {
        const char *file = m->funcs[0]->loc.file;
        /* One namespace written and the rest unqualified: those are its (a library's file). */
        const char *dflt = n == 1 && !aten_written ? ns[0].name : "aten";
        select_namespace(m, only, dflt);
        if (m->nfuncs == 0) {
            tgm_error((tgm_loc){ file, 0, 0 },
                      "--only-namespace %s: no entry is in namespace '%s' (the file's: %s)", only,
                      only, ns_list(m->arena, ns, n, unqualified));
        }
    } else if (n >= 2) {
        tgm_error(ns[1].first,
                  "operators of %d namespaces (%s) in one file: generate each with "
                  "--only-namespace NS, which takes NS's entries",
                  n + (unqualified && !aten_written), ns_list(m->arena, ns, n, unqualified));
        reported = true;
    } else if (n == 1 && !m->ns && !aten_written && ns[0].count > 1) {
        /* One error for the file, at its first such entry: the cause is one. */
        tgm_error(ns[0].first,
                  "%d operators of this file ('%s::%s', ...) belong to operator library '%s': "
                  "generate them with tgen --namespace %s",
                  ns[0].count, ns[0].name, ns[0].first_name, ns[0].name, ns[0].name);
        reported = true;
    }
    for (int i = 0; i < m->nfuncs; i++) {
        if (reported) m->funcs[i]->schema.ns = m->ns;
        else check_namespace(m, &m->funcs[i]->schema, "operator");
    }
    for (int i = 0; i < m->nderivs; i++) {
        if (reported) m->derivs[i]->schema.ns = m->ns;
        else check_namespace(m, &m->derivs[i]->schema, "derivative entry");
    }
    return tgm_error_count() - before;
}
