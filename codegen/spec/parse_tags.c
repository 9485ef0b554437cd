/* tags.yaml -> the set of tags an entry of native_functions.yaml may carry.
 *
 * Each entry is `- tag: name` with a `desc:` text (PyTorch's format). With a tags file, a
 * `tags:` value of native_functions.yaml that the file does not define is an error (validate.c),
 * so a misspelt tag is caught; tgen keeps tags as data and generates nothing from them. */
#include <string.h>

#include "spec/frontend.h"

static const char *const tag_fields[] = { "tag", "desc", NULL };

static void parse_tag(tgm_parse_ctx *c, const yaml_node_t *entry)
{
    const yaml_node_pair_t *pairs = entry->data.mapping.pairs.start;
    const char *name = NULL;
    tgm_loc name_loc = { 0 };
    for (const yaml_node_pair_t *p = pairs; p < entry->data.mapping.pairs.top; p++) {
        const char *key = tgm__field_name(c->d, pairs, p, tag_fields);
        yaml_node_t *v = tgm__yaml_node(c->d, p->value);
        if (!key) continue;
        if (v->type != YAML_SCALAR_NODE) {
            tgm_error(tgm__node_loc(c->d, v), "'%s' must be a string, not %s", key,
                      tgm__node_kind(v));
            continue;
        }
        if (strcmp(key, "tag")) continue;
        name = tgm__scalar(v);
        name_loc = tgm__text_start(c->d, v);
        if (!tgm__is_ident(name)) {
            tgm_error(name_loc, "tag '%s' is not an identifier", name);
            name = NULL;
        }
    }
    if (!name) {
        if (!name_loc.file) tgm_error(tgm__node_loc(c->d, entry), "entry has no 'tag:' field");
        return;
    }
    tgm_loc *loc = tgm_alloc(c->a, sizeof *loc);
    *loc = name_loc;
    const tgm_loc *first = tgm__map_put(c->m->tags, tgm_strdup(c->a, name), loc);
    if (first) {
        tgm_error(name_loc, "tag '%s' is defined twice", name);
        tgm_note(*first, "'%s' was defined here", name);
    }
}

int tgm_parse_tags(tgm_model *m, const char *path)
{
    m->tags = tgm__map_new(m->arena);
    return tgm__parse_entries(m, path, "tag", parse_tag);
}
