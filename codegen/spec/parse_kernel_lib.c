/* A selection's file -> tgk_list (select/select.h): ExecuTorch's kernel-library YAML, or a
 * plain list of operator names.
 *
 * The kernel-library form (ExecuTorch's kernels/portable/functions.yaml and the like) is a list
 * of entries, each either
 *   - op: add.out                        a core operator, picked by its full name
 *   - func: ns::name.overload(...) -> T  an operator declared here (custom), by its schema
 * with `kernels:`, a list of {arg_meta, kernel_name}: arg_meta `null` (the kernel serves every
 * dtype and dim order) or a mapping from tensor arguments to [type alias, dim-order alias]
 * (defined by the entry's `type_alias:` and `dim_order_alias:`). The kernel names are C++
 * names; their C symbols are made as dispatch kernels' are (select_libs.c). Other fields of native_functions.yaml
 * that ExecuTorch's files carry (`variants`, `tags`, ...) are accepted as data and counted.
 * Names are resolved against the core spec afterwards (select_resolve.c). */
#include <stdio.h>
#include <string.h>

#include "select/select.h"
#include "spec/frontend.h"

/* What tgm__parse_entries hands each entry: the model it wants (unused but for its arena),
 * with the list being read beside it. */
typedef struct kl_ctx {
    tgm_model m; /* first: the parse context's model pointer is this struct's address */
    tgk_list *l;
} kl_ctx;

static const char *const entry_fields[] = { "op", "func", "kernels", "type_alias",
                                            "dim_order_alias",
                                            /* native fields, accepted as data */
                                            "variants", "tags", "dispatch", "cpp_no_default_args",
                                            "device_check", "device_guard", "python_module",
                                            "manual_cpp_binding", NULL };
#define FIRST_DATA_FIELD 5

static void count_data_field(tgk_list *l, const char *name)
{
    for (int i = 0; i < l->ndata; i++)
        if (!strcmp(l->data_fields[i], name)) {
            l->data_counts[i]++;
            return;
        }
    if (l->ndata < (int)(sizeof l->data_fields / sizeof *l->data_fields)) {
        l->data_fields[l->ndata] = name;
        l->data_counts[l->ndata++] = 1;
    }
}

static const yaml_node_t *field(tgm_parse_ctx *c, const yaml_node_t *entry, const char *name)
{
    for (yaml_node_pair_t *p = entry->data.mapping.pairs.start; p < entry->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key);
        if (k->type == YAML_SCALAR_NODE && !strcmp(tgm__scalar(k), name))
            return tgm__yaml_node(c->d, p->value);
    }
    return NULL;
}

/* `type_alias: {T0: [Double, Float]}` / `dim_order_alias: {D0: [0, 1, 2, 3]}`: the alias
 * names, checked for shape; values are data. */
static tgm_name_map *read_aliases(tgm_parse_ctx *c, tgk_list *l, const yaml_node_t *v,
                                  const char *what)
{
    tgm_name_map *names = tgm__map_new(c->a);
    if (!v) return names;
    if (v->type != YAML_MAPPING_NODE) {
        tgm_error(tgm__node_loc(c->d, v), "'%s' must be a mapping of alias names to lists, not %s",
                  what, tgm__node_kind(v));
        return names;
    }
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key), *val = tgm__yaml_node(c->d, p->value);
        const char *name = tgm__key_text(c->d, k, "alias names");
        if (!name) continue;
        if (val->type != YAML_SEQUENCE_NODE) {
            tgm_error(tgm__node_loc(c->d, val), "%s '%s' must be a list, not %s", what, name,
                      tgm__node_kind(val));
            continue;
        }
        tgm__map_put(names, tgm_strdup(c->a, name), (void *)name);
        l->naliases++;
    }
    return names;
}

/* The argument names a kernel's arg_meta may use: the schema's, when known here (a `- func:`),
 * else checked against the core's in select_resolve.c (NULL). */
static void read_arg_meta(tgm_parse_ctx *c, tgk_list *l, const yaml_node_t *v, tgm_name_map *types,
                          tgm_name_map *orders, const tgm_schema *s)
{
    l->nmeta++;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key), *val = tgm__yaml_node(c->d, p->value);
        const char *arg = tgm__key_text(c->d, k, "arg_meta keys");
        if (!arg) continue;
        if (s && tgm_schema_arg_index(s, arg) < 0) {
            tgm_error(tgm__node_loc(c->d, k),
                      "arg_meta names '%s', which is not an argument of '%s'", arg, s->full_name);
            continue;
        }
        const yaml_node_item_t *it =
            val->type == YAML_SEQUENCE_NODE ? val->data.sequence.items.start : NULL;
        if (!it || val->data.sequence.items.top - it != 2) {
            tgm_error(tgm__node_loc(c->d, val),
                      "arg_meta of '%s' must be [type alias, dim-order alias], not %s", arg,
                      tgm__node_kind(val));
            continue;
        }
        for (int i = 0; i < 2; i++) {
            yaml_node_t *alias = tgm__yaml_node(c->d, it[i]);
            tgm_name_map *defined = i ? orders : types;
            const char *what = i ? "dim_order_alias" : "type_alias";
            if (alias->type != YAML_SCALAR_NODE || !tgm__map_get(defined, tgm__scalar(alias)))
                tgm_error(tgm__node_loc(c->d, alias),
                          "arg_meta of '%s': '%s' is not defined by the entry's '%s'", arg,
                          alias->type == YAML_SCALAR_NODE ? tgm__scalar(alias) : "(not a name)",
                          what);
        }
    }
}

static void read_kernels(tgm_parse_ctx *c, tgk_list *l, tgk_entry *e, const yaml_node_t *entry,
                         const tgm_schema *s)
{
    const yaml_node_t *v = field(c, entry, "kernels");
    tgm_name_map *types = read_aliases(c, l, field(c, entry, "type_alias"), "type_alias");
    tgm_name_map *orders =
        read_aliases(c, l, field(c, entry, "dim_order_alias"), "dim_order_alias");
    if (!v) return;
    if (v->type != YAML_SEQUENCE_NODE) {
        tgm_error(tgm__node_loc(c->d, v),
                  "'kernels' must be a list of {arg_meta, kernel_name} mappings, not %s",
                  tgm__node_kind(v));
        return;
    }
    static const char *const kernel_fields[] = { "arg_meta", "kernel_name", NULL };
    int cap = 0;
    const tgk_kernel *any = NULL;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        yaml_node_t *k = tgm__yaml_node(c->d, *it);
        if (k->type != YAML_MAPPING_NODE) {
            tgm_error(tgm__node_loc(c->d, k),
                      "a kernel must be a mapping with 'kernel_name', not %s", tgm__node_kind(k));
            continue;
        }
        bool bad = false;
        for (yaml_node_pair_t *p = k->data.mapping.pairs.start; p < k->data.mapping.pairs.top; p++)
            bad |= !tgm__field_name(c->d, k->data.mapping.pairs.start, p, kernel_fields);
        if (bad) continue;
        const yaml_node_t *name = field(c, k, "kernel_name"), *meta = field(c, k, "arg_meta");
        if (!name || name->type != YAML_SCALAR_NODE) {
            tgm_error(tgm__node_loc(c->d, name ? name : k), "a kernel needs 'kernel_name:', %s",
                      name ? "a string" : "which is missing");
            continue;
        }
        tgk_kernel kn = { tgm__text_start(c->d, name), tgm_strdup(c->a, tgm__scalar(name)), true };
        if (!tgm__is_kernel_name(kn.name)) {
            tgm_error(kn.loc, "kernel_name '%s' is not a C++ name (identifiers joined by '::')",
                      kn.name);
            continue;
        }
        if (meta && meta->type == YAML_MAPPING_NODE) {
            kn.any = false;
            read_arg_meta(c, l, meta, types, orders, s);
        } else if (meta && (meta->type != YAML_SCALAR_NODE ||
                            (strcmp(tgm__scalar(meta), "null") && strcmp(tgm__scalar(meta), "~") &&
                             *tgm__scalar(meta)))) {
            tgm_error(tgm__node_loc(c->d, meta),
                      "arg_meta must be null or a mapping of arguments to [type alias, dim-order "
                      "alias], not %s%s%s",
                      meta->type == YAML_SCALAR_NODE ? "'" : "",
                      meta->type == YAML_SCALAR_NODE ? tgm__scalar(meta) : tgm__node_kind(meta),
                      meta->type == YAML_SCALAR_NODE ? "'" : "");
            continue;
        }
        tgk_kernel *slot = TGS_PUSH(c->a, e->kernels, e->nkernels, cap);
        *slot = kn;
        if (kn.any && any) {
            tgm_error(kn.loc, "a second kernel for every dtype ('arg_meta: null') of '%s'",
                      e->name);
            tgm_note(any->loc, "the first is '%s'", any->name);
        } else if (kn.any) any = slot;
    }
}

/* `aten::add.out` is `add.out`: the core's namespace. */
static const char *drop_aten(const char *name, tgm_loc *loc)
{
    if (!strncmp(name, "aten::", 6)) {
        loc->col += 6;
        return name + 6;
    }
    return name;
}

static void parse_entry(tgm_parse_ctx *c, const yaml_node_t *entry)
{
    tgk_list *l = ((kl_ctx *)c->m)->l;
    const yaml_node_t *op = NULL, *func = NULL;
    bool bad = false;
    yaml_node_pair_t *pairs = entry->data.mapping.pairs.start;
    for (yaml_node_pair_t *p = pairs; p < entry->data.mapping.pairs.top; p++) {
        const char *key = tgm__field_name(c->d, pairs, p, entry_fields);
        if (!key) {
            bad = true;
            continue;
        }
        for (int i = FIRST_DATA_FIELD; entry_fields[i]; i++)
            if (!strcmp(key, entry_fields[i])) count_data_field(l, entry_fields[i]);
        if (!strcmp(key, "op")) op = tgm__yaml_node(c->d, p->value);
        if (!strcmp(key, "func")) func = tgm__yaml_node(c->d, p->value);
    }
    tgm_loc at = tgm__node_loc(c->d, entry);
    if (op && func) {
        tgm_error(at, "an entry has 'op:' (a core operator) or 'func:' (a schema), not both");
        return;
    }
    if (!op && !func) {
        if (!bad) tgm_error(at, "entry has neither 'op:' (a core operator) nor 'func:' (a schema)");
        return;
    }
    const yaml_node_t *v = op ? op : func;
    if (v->type != YAML_SCALAR_NODE) {
        tgm_error(tgm__node_loc(c->d, v), "'%s' must be a string, not %s", op ? "op" : "func",
                  tgm__node_kind(v));
        return;
    }
    tgk_entry e = { .loc = tgm__text_start(c->d, v), .is_func = func != NULL };
    if (op) {
        e.name = tgm_strdup(c->a, drop_aten(tgm__scalar(v), &e.loc));
    } else {
        tgm_func *f = tgm_alloc(c->a, sizeof *f);
        f->loc = at;
        f->variant_function = f->device_guard = true;
        const char *text = tgm_strdup(c->a, tgm__scalar(v));
        if (tgm__parse_schema_span(c->a, text, e.loc, tgm__node_span(c->a, c->d, v), &f->schema))
            return;
        if (f->schema.ns && !strcmp(f->schema.ns, "aten")) f->schema.ns = NULL;
        e.name = f->schema.full_name;
        e.custom = f;
    }
    read_kernels(c, l, &e, entry, e.custom ? &e.custom->schema : NULL);
    if (!bad) *TGS_PUSH(c->a, l->entries, l->n, l->cap) = e;
}

/* A plain list: one name per line, `#` to the end of a line a comment. */
static int read_plain(tgm_arena *a, const char *path, tgk_list *l)
{
    int before = tgm_error_count();
    FILE *f = fopen(path, "r");
    if (!f) {
        tgm_error((tgm_loc){ path, 0, 0 }, "cannot open file");
        return 1;
    }
    char line[1024];
    for (int n = 1; fgets(line, sizeof line, f); n++) {
        line[strcspn(line, "#\r\n")] = '\0';
        size_t lead = 0;
        const char *name = tgm__trim_dup(a, line, strlen(line), &lead);
        if (!*name) continue;
        tgm_loc loc = { path, n, (int)lead + 1 };
        name = drop_aten(name, &loc);
        const char *dot = strchr(name, '.');
        const char *base = dot ? tgm_strndup(a, name, (size_t)(dot - name)) : name;
        if (!tgm__is_ident(base) || (dot && !tgm__is_ident(dot + 1))) {
            tgm_error(loc, "'%s' is not an operator name (name or name.overload, one per line)",
                      name);
            continue;
        }
        *TGS_PUSH(a, l->entries, l->n, l->cap) = (tgk_entry){ .loc = loc, .name = name };
    }
    fclose(f);
    return tgm_error_count() - before;
}

int tgk_read(tgm_arena *a, const char *path, tgk_list *out)
{
    *out = (tgk_list){ .path = path };
    size_t n = strlen(path);
    out->yaml =
        (n > 5 && !strcmp(path + n - 5, ".yaml")) || (n > 4 && !strcmp(path + n - 4, ".yml"));
    if (!out->yaml) return read_plain(a, path, out);
    kl_ctx k = { .m = { .arena = a }, .l = out };
    return tgm__parse_entries(&k.m, path, "op", parse_entry);
}
