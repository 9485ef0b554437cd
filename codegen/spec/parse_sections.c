/* Sectioned spec files: op-plugin's op_plugin_functions.yaml and derivatives.yaml.
 *
 *   all_version: [v2.1, v2.2, ..., v2.15]     the PyTorch versions the file serves, oldest first
 *   official: [- func: ...]                   definitions: PyTorch's operators it implements,
 *   custom:   [- func: ...]                     its own, quantized ones; flattened into one
 *   quant:    [- func: ...]                     spec in file order
 *   symint:   [- func: ...]                   restatements of a definition above (its kernel
 *   autograd: [- func: ...]                     takes SymInt / has its own autograd kernel):
 *                                               checked to name one exactly, adding nothing
 *   backward: [- name: ...]                   (derivatives.yaml) derivative entries
 *
 * An entry's versions are the union of its version fields (`acl_op:`, `op_api:`, ... on a
 * func, `version:` on a derivative): `all_version`, a name or comma-separated names (`v2.1,
 * v2.2`), or a range `[v2.7, newest]`. An entry without one is in every version. Entries not
 * in the chosen version (--torch-version, else the newest) are skipped and counted: the
 * file holds several versions of some operators (`stft` for v2.1-v2.6 and for v2.7 on). */
#include <stdint.h>
#include <string.h>

#include "spec/frontend.h"

enum { MAX_VERSIONS = 64 }; /* a version set is a bit mask */

typedef struct versions {
    const char **names; /* all_version, oldest first */
    tgm_loc *locs;
    int n;
    int chosen; /* index of the version entries are taken for */
} versions;

static const struct {
    const char *name, *first_key;
    bool restates; /* entries restate a definition of another section */
} sections[] = {
    { "official", "func", false }, { "custom", "func", false },  { "quant", "func", false },
    { "symint", "func", true },    { "autograd", "func", true }, { "backward", "name", false },
};
enum { NSECTIONS = sizeof sections / sizeof sections[0] };

static int section_index(const char *name, const char *first_key)
{
    for (int i = 0; i < NSECTIONS; i++)
        if (!strcmp(sections[i].name, name) && !strcmp(sections[i].first_key, first_key)) return i;
    return -1;
}

/* "official:, custom:, ..." for an error: the sections a file of `first_key` entries has. */
static const char *section_names(tgm_arena *a, const char *first_key)
{
    tgs_list l = { 0 };
    for (int i = 0; i < NSECTIONS; i++)
        if (!strcmp(sections[i].first_key, first_key))
            tgs_list_add(&l, a, tgs_fmt(a, "'%s:'", sections[i].name));
    return tgs_list_join(&l, a, ", ");
}

static int version_index(const versions *vs, const char *name)
{
    if (!strcmp(name, "newest")) return vs->n - 1;
    for (int i = 0; i < vs->n; i++)
        if (!strcmp(vs->names[i], name)) return i;
    return -1;
}

static bool read_all_version(tgm_parse_ctx *c, const yaml_node_t *v, versions *vs)
{
    if (v->type != YAML_SEQUENCE_NODE) {
        tgm_error(tgm__node_loc(c->d, v), "'all_version' must be a list of versions, not %s",
                  tgm__node_kind(v));
        return false;
    }
    vs->n = tgm__node_names(c->a, c->d, v, "all_version", &vs->names, &vs->locs);
    if (vs->n < 0) return false;
    if (vs->n == 0 || vs->n > MAX_VERSIONS) {
        tgm_error(tgm__node_loc(c->d, v), "'all_version' must list 1 to %d versions, not %d",
                  MAX_VERSIONS, vs->n);
        return false;
    }
    for (int i = 0; i < vs->n; i++)
        for (int k = 0; k < i; k++)
            if (!strcmp(vs->names[i], vs->names[k])) {
                tgm_error(vs->locs[i], "version '%s' appears twice in 'all_version'", vs->names[i]);
                return false;
            }
    c->m->reading.versioned = true;
    const char *want = c->m->reading.torch_version;
    vs->chosen = want ? -1 : vs->n - 1;
    for (int i = 0; want && i < vs->n; i++)
        if (!strcmp(vs->names[i], want)) vs->chosen = i;
    if (vs->chosen < 0) {
        tgm_error(tgm__node_loc(c->d, v),
                  "--torch-version %s is not one of this file's versions (%s to %s)", want,
                  vs->names[0], vs->names[vs->n - 1]);
        return false;
    }
    c->m->reading.version_used = vs->names[vs->chosen];
    return true;
}

/* The versions a version field names, as a mask; 0 after an error. */
static uint64_t version_mask(tgm_parse_ctx *c, const versions *vs, const char *field,
                             const yaml_node_t *v)
{
    const char **names;
    tgm_loc *locs;
    if (v->type == YAML_SCALAR_NODE && !strcmp(tgm__scalar(v), "all_version"))
        return vs->n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << vs->n) - 1;
    int n = tgm__node_names(c->a, c->d, v, field, &names, &locs);
    if (n < 0) return 0;
    if (v->type == YAML_SEQUENCE_NODE && n != 2) {
        tgm_error(tgm__node_loc(c->d, v),
                  "a version range is '[FIRST, LAST]' (LAST may be 'newest'), not %d versions", n);
        return 0;
    }
    int idx[64];
    for (int i = 0; i < n && i < 64; i++) {
        idx[i] = version_index(vs, names[i]);
        if (idx[i] < 0) {
            tgm_error(locs[i], "unknown version '%s' in '%s' (this file's versions are %s to %s)",
                      names[i], field, vs->names[0], vs->names[vs->n - 1]);
            return 0;
        }
    }
    uint64_t mask = 0;
    if (v->type == YAML_SEQUENCE_NODE) {
        if (idx[0] > idx[1]) {
            tgm_error(tgm__node_loc(c->d, v), "version range [%s, %s] is empty: %s comes after %s",
                      names[0], names[1], names[0], names[1]);
            return 0;
        }
        for (int i = idx[0]; i <= idx[1]; i++) mask |= (uint64_t)1 << i;
    } else {
        for (int i = 0; i < n && i < 64; i++) mask |= (uint64_t)1 << idx[i];
    }
    return mask;
}

/* Whether an entry is in the chosen version (true after an error: the entry is then parsed,
 * so that its other errors are reported too). */
static bool in_version(tgm_parse_ctx *c, const versions *vs, const yaml_node_t *entry,
                       const char *first_key)
{
    bool any = false;
    uint64_t mask = 0;
    for (yaml_node_pair_t *p = entry->data.mapping.pairs.start; p < entry->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key);
        if (k->type != YAML_SCALAR_NODE) continue;
        const char *key = tgm__scalar(k);
        bool is_version =
            !strcmp(first_key, "name") ? !strcmp(key, "version") : tgm__is_version_field(key);
        if (!is_version) continue;
        uint64_t m = version_mask(c, vs, key, tgm__yaml_node(c->d, p->value));
        if (!m) return true;
        any = true;
        mask |= m;
    }
    return !any || (mask >> vs->chosen & 1);
}

/* A restating entry (`symint:`, `autograd:`), parsed and taken back out of the model. */
typedef struct restated {
    tgm_func *f;
    const char *section;
} restated;

/* Each restating entry must name a definition of the file (same schema): it adds nothing. */
static void check_restated(tgm_parse_ctx *c, int first, const restated *rs, int n)
{
    tgm_model *m = c->m;
    tgm_name_map *defs = tgm__map_new(c->a);
    for (int i = first; i < m->nfuncs; i++)
        if (!tgm__map_get(defs, m->funcs[i]->schema.full_name))
            tgm__map_put(defs, m->funcs[i]->schema.full_name, m->funcs[i]);
    for (int i = 0; i < n; i++) {
        const tgm_schema *s = &rs[i].f->schema;
        tgm_func *def = tgm__map_get(defs, s->full_name);
        if (def && !strcmp(tgm_schema_format(c->a, s), tgm_schema_format(c->a, &def->schema))) {
            m->reading.restated++;
            continue;
        }
        tgm_error(s->loc,
                  "'%s:' entry '%s' restates no definition of this file: it must repeat an "
                  "entry of 'official:', 'custom:' or 'quant:' of the same version exactly",
                  rs[i].section, s->full_name);
        if (def)
            tgm_note(def->schema.loc, "'%s' is defined as '%s'", s->full_name, def->schema.text);
    }
}

void tgm__parse_sections(tgm_parse_ctx *c, const yaml_node_t *root, const char *first_key,
                         void (*entry)(tgm_parse_ctx *c, const yaml_node_t *item))
{
    yaml_node_pair_t *pairs = root->data.mapping.pairs.start, *end = root->data.mapping.pairs.top;
    versions vs = { 0 };
    bool sectioned = false, version_ok = true;
    for (yaml_node_pair_t *p = pairs; p < end; p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key);
        if (k->type != YAML_SCALAR_NODE) continue;
        if (!strcmp(tgm__scalar(k), "all_version"))
            version_ok = read_all_version(c, tgm__yaml_node(c->d, p->value), &vs);
        sectioned |=
            !strcmp(tgm__scalar(k), "all_version") || section_index(tgm__scalar(k), first_key) >= 0;
    }
    if (!sectioned) {
        tgm_error(tgm__node_loc(c->d, root), "expected a list of '- %s:' entries, found %s",
                  first_key, tgm__node_kind(root));
        return;
    }
    if (!version_ok) return;
    if (!vs.n) {
        tgm_error(tgm__node_loc(c->d, root),
                  "a sectioned file starts with 'all_version:', the list of its versions");
        return;
    }
    c->sectioned = true;
    int first = c->m->nfuncs, nrs = 0, rcap = 0;
    restated *rs = NULL;
    for (yaml_node_pair_t *p = pairs; p < end; p++) {
        const char *key = tgm__field_name(c->d, pairs, p, NULL);
        if (!key || !strcmp(key, "all_version")) continue;
        int s = section_index(key, first_key);
        yaml_node_t *list = tgm__yaml_node(c->d, p->value);
        if (s < 0) {
            tgm_error(tgm__node_loc(c->d, tgm__yaml_node(c->d, p->key)),
                      "unknown section '%s' (this file's sections are %s)", key,
                      section_names(c->a, first_key));
            continue;
        }
        if (list->type != YAML_SEQUENCE_NODE) {
            tgm_error(tgm__node_loc(c->d, list),
                      "section '%s' must be a list of '- %s:' entries, not %s", key, first_key,
                      tgm__node_kind(list));
            continue;
        }
        for (yaml_node_item_t *it = list->data.sequence.items.start;
             it < list->data.sequence.items.top; it++) {
            yaml_node_t *item = tgm__yaml_node(c->d, *it);
            if (item->type != YAML_MAPPING_NODE) {
                tgm_error(tgm__node_loc(c->d, item),
                          "expected an entry (a mapping with '%s:'), found %s", first_key,
                          tgm__node_kind(item));
                continue;
            }
            if (!in_version(c, &vs, item, first_key)) {
                c->m->reading.version_skipped++;
                continue;
            }
            int before = c->m->nfuncs;
            entry(c, item);
            if (sections[s].restates && c->m->nfuncs > before)
                *TGS_PUSH(c->a, rs, nrs, rcap) = (restated){ c->m->funcs[--c->m->nfuncs], key };
        }
    }
    check_restated(c, first, rs, nrs);
}
