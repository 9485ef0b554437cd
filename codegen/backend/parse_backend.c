/* Reading a backend file (backend.h). Two shapes, told apart by the root mapping's keys:
 *
 *   torchgen's (xla, torch_npu):  backend: XLA / cpp_namespace: torch_xla / supported: [names]
 *                                 / autograd: / full_codegen: / ir_gen: / symint: / custom:
 *   torch_mlu's (a root `aten:`): aten: / vision: / audio: / custom: lists of `- func:`
 *                                 entries; the file names no backend (--backend-name does)
 *
 * A list item is a name (`- add.Tensor`), or a mapping whose `func:` is a name or a whole
 * schema, with vendor fields beside it (`op_api: True`, `derived_type: bang`). Sections of
 * full `- func:` entries (`custom:`, torch_mlu's `vision:` and `audio:`) are operator
 * libraries: their entries are read by the native spec's own entry parser, in a model of
 * their own. Keys that mean nothing to tensorgen are data, counted for the summary. */
#include <ctype.h>
#include <string.h>

#include "backend/backend.h"
#include "spec/frontend.h"

typedef struct reader {
    tgm_arena *a;
    tgm_yaml_doc *d;
    tgb_backend *b;
    int caps[TGB_NLISTS], libs_cap, vendor_cap;
} reader;

static void count_vendor(reader *r, const char *key)
{
    for (int i = 0; i < r->b->nvendor; i++)
        if (!strcmp(r->b->vendor[i].key, key)) {
            r->b->vendor[i].count++;
            return;
        }
    *TGS_PUSH(r->a, r->b->vendor, r->b->nvendor, r->vendor_cap) =
        (tgb_vendor){ tgm_strdup(r->a, key), 1 };
}

/* An operator name: `base` or `base.overload`, each made of identifier characters. */
static bool is_op_name(const char *s)
{
    const char *dot = strchr(s, '.');
    if (dot && (dot == s || !dot[1] || strchr(dot + 1, '.'))) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.')) return false;
    return true;
}

/* A name or a schema (`foo(Tensor x) -> Tensor`) as list `l`'s next name. */
static void add_name(reader *r, tgb_list l, const yaml_node_t *v)
{
    const char *text = tgm__scalar(v);
    tgm_loc loc = tgm__text_start(r->d, v);
    tgb_name n = { .loc = loc, .name = tgm_strdup(r->a, text) };
    if (strchr(text, '(')) {
        tgm_schema *s = tgm_alloc(r->a, sizeof *s);
        if (tgm__parse_schema_span(r->a, n.name, loc, tgm__node_span(r->a, r->d, v), s)) return;
        n.name = s->full_name;
        n.own_schema = true;
        n.schema = s;
    } else if (!is_op_name(text)) {
        tgm_error(loc, "'%s' is not an operator name (`name` or `name.overload`)", text);
        return;
    }
    *TGS_PUSH(r->a, r->b->names[l], r->b->nnames[l], r->caps[l]) = n;
}

/* One item of a list of names: a name, or a mapping with `func:` and vendor fields
 * (`custom_autograd: True` also puts the operator in the autograd list). */
static void read_item(reader *r, tgb_list l, const char *list, const yaml_node_t *item)
{
    if (item->type == YAML_SCALAR_NODE) {
        add_name(r, l, item);
        return;
    }
    if (item->type != YAML_MAPPING_NODE) {
        tgm_error(tgm__node_loc(r->d, item),
                  "'%s' items must be operator names or '- func:' entries, not %s", list,
                  tgm__node_kind(item));
        return;
    }
    const yaml_node_pair_t *pairs = item->data.mapping.pairs.start;
    const yaml_node_t *func = NULL;
    bool custom_autograd = false;
    for (const yaml_node_pair_t *p = pairs; p < item->data.mapping.pairs.top; p++) {
        const char *key = tgm__field_name(r->d, pairs, p, NULL);
        const yaml_node_t *v = tgm__yaml_node(r->d, p->value);
        if (!key) continue;
        if (!strcmp(key, "func")) func = v;
        else count_vendor(r, key);
        if (!strcmp(key, "custom_autograd") && !tgm__node_bool(r->d, v, key, &custom_autograd))
            return;
    }
    if (!func) {
        tgm_error(tgm__node_loc(r->d, item), "'%s' entry has no 'func:' field", list);
        return;
    }
    if (func->type != YAML_SCALAR_NODE) {
        tgm_error(tgm__node_loc(r->d, func), "'func' must be a string, not %s",
                  tgm__node_kind(func));
        return;
    }
    add_name(r, l, func);
    if (custom_autograd && l != TGB_AUTOGRAD) add_name(r, TGB_AUTOGRAD, func);
}

static void read_list(reader *r, tgb_list l, const char *list, const yaml_node_t *v)
{
    if (v->type == YAML_SCALAR_NODE && !*tgm__scalar(v)) return; /* `symint:` left empty */
    if (v->type != YAML_SEQUENCE_NODE) {
        tgm_error(tgm__node_loc(r->d, v), "'%s' must be a list of operator names, not %s", list,
                  tgm__node_kind(v));
        return;
    }
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
        read_item(r, l, list, tgm__yaml_node(r->d, *it));
}

/* A vendor's field of a custom entry (`derived_type:`, `exposed:`): counted, not an error (the
 * native parser's hook, tgm_parse_ctx.vendor_field). */
static void vendor_field(void *r, const char *key) { count_vendor(r, key); }

/* A section of `- func:` entries: the operator library `ns`. An entry without `dispatch:`
 * gets its kernel from the backend (a kernel under the backend's key, which the library does
 * not compile: its CPU and CUDA slots fail naming it; the backend's registration fills its
 * key). */
static void read_library(reader *r, const char *ns, const char *section, const yaml_node_t *v)
{
    if (v->type != YAML_SEQUENCE_NODE) {
        tgm_error(tgm__node_loc(r->d, v), "'%s' must be a list of '- func:' entries, not %s",
                  section, tgm__node_kind(v));
        return;
    }
    tgb_library *lib = TGS_PUSH(r->a, r->b->libs, r->b->nlibs, r->libs_cap);
    lib->ns = ns;
    lib->section = section;
    lib->loc = tgm__node_loc(r->d, v);
    lib->model = tgm_alloc(r->a, sizeof *lib->model);
    lib->model->arena = r->a;
    lib->model->ns = ns;
    tgm_parse_ctx c = {
        .m = lib->model, .a = r->a, .d = r->d, .vendor_field = vendor_field, .vendor_ctx = r
    };
    yaml_node_item_t *start = v->data.sequence.items.start, *top = v->data.sequence.items.top;
    for (yaml_node_item_t *it = start; it < top; it++) {
        yaml_node_t *item = tgm__yaml_node(r->d, *it);
        if (item->type != YAML_MAPPING_NODE) {
            tgm_error(tgm__node_loc(r->d, item),
                      "'%s' items must be '- func:' entries with a schema, not %s", section,
                      tgm__node_kind(item));
            continue;
        }
        int before = lib->model->nfuncs;
        tgm__parse_native_entry(&c, item);
        if (lib->model->nfuncs == before) continue;
        tgm_func *f = lib->model->funcs[before];
        if (f->has_dispatch) continue;
        f->has_dispatch = true;
        f->dispatch = tgm_alloc(r->a, sizeof *f->dispatch);
        f->dispatch[0] =
            (tgm_dispatch_entry){ f->loc, TGM_KEY_OTHER, r->b->name, f->schema.base, NULL };
        f->ndispatch = 1;
    }
}

static const char *scalar_field(reader *r, const yaml_node_t *v, const char *key)
{
    if (v->type == YAML_SCALAR_NODE && *tgm__scalar(v)) return tgm_strdup(r->a, tgm__scalar(v));
    tgm_error(tgm__node_loc(r->d, v), "'%s' must be a name, not %s", key,
              v->type == YAML_SCALAR_NODE ? "an empty string" : tgm__node_kind(v));
    return NULL;
}

/* The backend's name: an identifier; its C name is the name in lower case ("XLA": "xla"),
 * which is also what tg_backend_register gets, so it must not be tensorgen's own. */
static bool set_name(reader *r, const char *name, tgm_loc loc)
{
    char *c = tgm_strdup(r->a, name);
    for (char *p = c; *p; p++) *p = (char)tolower((unsigned char)*p);
    if (!tgm__is_ident(name) || strlen(name) > 31 || !strcmp(c, "cpu") || !strcmp(c, "cuda")) {
        tgm_error(loc,
                  "backend name '%s': expected an identifier of at most 31 characters, other "
                  "than CPU and CUDA",
                  name);
        return false;
    }
    r->b->name = tgm_strdup(r->a, name);
    r->b->cname = c;
    return true;
}

/* cpp_namespace `at_npu::native` as the prefix of kernel names: `at_npu_native`. */
static bool set_kernel_prefix(reader *r, const char *ns, tgm_loc loc)
{
    char *p = tgs_replace(r->a, ns, "::", "_");
    if (!tgm__is_ident(p)) {
        tgm_error(loc, "cpp_namespace '%s' is not a C++ namespace (identifiers joined by '::')",
                  ns);
        return false;
    }
    r->b->kernel_prefix = p;
    return true;
}

static const yaml_node_t *root_value(reader *r, const yaml_node_t *root, const char *key,
                                     tgm_loc *loc)
{
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = tgm__yaml_node(r->d, p->key);
        if (k->type == YAML_SCALAR_NODE && !strcmp(tgm__scalar(k), key)) {
            if (loc) *loc = tgm__node_loc(r->d, k);
            return tgm__yaml_node(r->d, p->value);
        }
    }
    return NULL;
}

static const struct {
    const char *key;
    tgb_list list;
} lists[] = {
    { "supported", TGB_SUPPORTED },       { "aten", TGB_SUPPORTED }, { "autograd", TGB_AUTOGRAD },
    { "full_codegen", TGB_FULL_CODEGEN }, { "ir_gen", TGB_IR_GEN },  { "symint", TGB_SYMINT },
};

static void read_root(reader *r, const yaml_node_t *root, const char *name_override,
                      const char *custom_ns)
{
    tgm_loc at = tgm__node_loc(r->d, root);
    r->b->sectioned = root_value(r, root, "aten", NULL) != NULL;
    const yaml_node_t *v = root_value(r, root, "backend", &at);
    const char *name = name_override ? name_override : v ? scalar_field(r, v, "backend") : NULL;
    if (!name && !v) {
        if (r->b->sectioned)
            tgm_error(at,
                      "this file (torch_mlu's sectioned form: 'aten:', 'custom:', ...) does not "
                      "name its backend: give it with --backend-name NAME, or add 'backend: "
                      "NAME'");
        else
            tgm_error(at, "a backend file needs 'backend: NAME' (the backend's name, e.g. "
                          "'backend: XLA'), beside 'supported:'");
    }
    if (!name || !set_name(r, name, v && !name_override ? tgm__text_start(r->d, v) : at)) return;
    tgm_loc ns_at;
    v = root_value(r, root, "cpp_namespace", &ns_at);
    const char *ns = v ? scalar_field(r, v, "cpp_namespace") : NULL;
    if (v && (!ns || !set_kernel_prefix(r, ns, ns_at))) return;
    if (!v) r->b->kernel_prefix = r->b->cname;

    /* The libraries add nodes to the document, which may move `root`: the pairs stay. */
    const yaml_node_pair_t *pairs = root->data.mapping.pairs.start,
                           *top = root->data.mapping.pairs.top;
    for (const yaml_node_pair_t *p = pairs; p < top; p++) {
        const char *key = tgm__field_name(r->d, pairs, p, NULL);
        const yaml_node_t *val = tgm__yaml_node(r->d, p->value);
        if (!key || !strcmp(key, "backend") || !strcmp(key, "cpp_namespace")) continue;
        size_t i = 0;
        while (i < sizeof lists / sizeof *lists && strcmp(lists[i].key, key)) i++;
        if (i < sizeof lists / sizeof *lists) read_list(r, lists[i].list, key, val);
        else if (!strcmp(key, "custom"))
            read_library(r, custom_ns ? custom_ns : r->b->cname, "custom", val);
        else if (r->b->sectioned && !strcmp(key, "vision"))
            read_library(r, "torchvision", "vision", val);
        else if (r->b->sectioned && !strcmp(key, "audio"))
            read_library(r, "torchaudio", "audio", val);
        else count_vendor(r, tgs_fmt(r->a, "%s:", key));
    }
}

int tgb_parse(tgm_arena *a, const char *path, const char *name_override, const char *custom_ns,
              tgb_backend *out)
{
    int before = tgm_error_count();
    memset(out, 0, sizeof *out);
    out->path = path;
    tgm_yaml_doc d;
    reader r = { .a = a, .d = &d, .b = out };
    if (tgm__yaml_load(a, path, &d)) {
        const yaml_node_t *root = yaml_document_get_root_node(&d.doc);
        if (!root || root->type != YAML_MAPPING_NODE)
            tgm_error(root ? tgm__node_loc(&d, root) : (tgm_loc){ d.path, 0, 0 },
                      "expected a backend file (a mapping with 'backend:' and 'supported:'), "
                      "found %s",
                      root ? tgm__node_kind(root) : "an empty file");
        else read_root(&r, root, name_override, custom_ns);
    }
    tgm__yaml_done(&d);
    for (int i = 0; tgm_error_count() == before && i < out->nlibs; i++)
        tgm_validate(out->libs[i].model);
    return tgm_error_count() - before;
}
