/* native_functions.yaml -> tgm_func records.
 *
 * The file is a list of mappings, one per operator overload. Each field has a handler below;
 * a field without one is an error (a typo such as `dispach:` must not be silently ignored).
 * Per-entry problems are reported and parsing goes on with the next field and entry, so one
 * run shows every broken entry; cross-entry checks are in validate.c. */
#include <stdio.h>
#include <string.h>

#include "spec/frontend.h"

/* The text of a scalar field, or NULL (after an error) when the value is not a scalar. */
static const char *need_scalar(tgm_parse_ctx *c, const yaml_node_t *v, const char *field)
{
    if (v->type == YAML_SCALAR_NODE) return tgm_strdup(c->a, tgm__scalar(v));
    tgm_error(tgm__node_loc(c->d, v), "'%s' must be a string, not %s", field, tgm__node_kind(v));
    return NULL;
}

/* ---- dispatch keys ---- */

/* The dispatch keys tensorgen compiles. Any other key (SparseCPU, Meta, MPS, NestedTensorXPU,
 * and whatever a later PyTorch release adds) is data: kept as written (TGM_KEY_OTHER), counted
 * in `--check`'s summary, and given no code. A key only has to be an identifier. */
static const struct {
    const char *name;
    tgm_key key;
} compiled_keys[] = {
    { "CPU", TGM_KEY_CPU },
    { "CUDA", TGM_KEY_CUDA },
    { "CompositeImplicitAutograd", TGM_KEY_COMPOSITE_IMPLICIT },
    { "CompositeExplicitAutograd", TGM_KEY_COMPOSITE_EXPLICIT },
    { "CompositeExplicitAutogradNonFunctional", TGM_KEY_COMPOSITE_EXPLICIT_NONFUNCTIONAL },
};

static tgm_key lookup_key(const char *name)
{
    for (size_t i = 0; i < sizeof compiled_keys / sizeof compiled_keys[0]; i++)
        if (!strcmp(compiled_keys[i].name, name)) return compiled_keys[i].key;
    return TGM_KEY_OTHER;
}

bool tgm__is_kernel_name(const char *s)
{
    for (const char *p = s;; p += 2) {
        const char *e = strstr(p, "::");
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char buf[256];
        if (n == 0 || n >= sizeof buf) return false;
        memcpy(buf, p, n);
        buf[n] = '\0';
        if (!tgm__is_ident(buf)) return false;
        if (!e) return true;
        p = e;
    }
}

static void add_dispatch(tgm_parse_ctx *c, tgm_func *f, int *cap, const char *key_name,
                         tgm_loc key_loc, const yaml_node_t *v)
{
    if (!tgm__is_ident(key_name)) {
        tgm_error(key_loc, "invalid dispatch key '%s' (not an identifier)", key_name);
        return;
    }
    tgm_key key = lookup_key(key_name);
    for (int i = 0; i < f->ndispatch; i++)
        if (!strcmp(f->dispatch[i].key_name, key_name)) {
            tgm_error(key_loc, "dispatch key '%s' appears twice", key_name);
            tgm_note(f->dispatch[i].loc, "'%s' was given here", key_name);
            return;
        }
    const char *kernel = need_scalar(c, v, "dispatch");
    if (!kernel) return;
    if (!tgm__is_kernel_name(kernel)) {
        tgm_error(tgm__text_start(c->d, v), "invalid kernel name '%s' for dispatch key '%s'",
                  kernel, key_name);
        return;
    }
    tgm_dispatch_entry *e = TGS_PUSH(c->a, f->dispatch, f->ndispatch, *cap);
    *e = (tgm_dispatch_entry){ key_loc, key, tgm_strdup(c->a, key_name), kernel, NULL };
}

static void field_dispatch(tgm_parse_ctx *c, tgm_func *f, const yaml_node_t *v)
{
    f->has_dispatch = true;
    if (v->type != YAML_MAPPING_NODE) {
        tgm_error(tgm__node_loc(c->d, v),
                  "'dispatch' must be a mapping of dispatch keys to kernels, not %s",
                  tgm__node_kind(v));
        return;
    }
    int cap = 0;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key), *val = tgm__yaml_node(c->d, p->value);
        const char **keys;
        tgm_loc *locs;
        if (!tgm__key_text(c->d, k, "dispatch keys")) continue;
        int n = tgm__node_names(c->a, c->d, k, "dispatch", &keys, &locs);
        for (int i = 0; i < n; i++) /* `CPU, CUDA: add_out` is one entry per key */
            add_dispatch(c, f, &cap, keys[i], locs[i], val);
    }
}

/* ---- other fields ---- */

static void field_func(tgm_parse_ctx *c, tgm_func *f, const yaml_node_t *v, bool *ok)
{
    const char *text = need_scalar(c, v, "func");
    *ok = false;
    if (!text) return;
    tgm_loc loc = tgm__text_start(c->d, v);
    *ok = tgm__parse_schema_span(c->a, text, loc, tgm__node_span(c->a, c->d, v), &f->schema) == 0;
}

static void field_variants(tgm_parse_ctx *c, tgm_func *f, const yaml_node_t *v)
{
    const char **names;
    tgm_loc *locs;
    int n = tgm__node_names(c->a, c->d, v, "variants", &names, &locs);
    if (n < 0) return;
    f->variant_function = f->variant_method = false;
    for (int i = 0; i < n; i++) {
        if (!strcmp(names[i], "function")) f->variant_function = true;
        else if (!strcmp(names[i], "method")) f->variant_method = true;
        else tgm_error(locs[i], "unknown variant '%s' (expected 'function' or 'method')", names[i]);
    }
}

static void field_choice(tgm_parse_ctx *c, const yaml_node_t *v, const char *field,
                         const char *const *allowed, const char **out)
{
    const char *s = need_scalar(c, v, field);
    if (!s) return;
    for (int i = 0; allowed[i]; i++)
        if (!strcmp(s, allowed[i])) {
            *out = s;
            return;
        }
    tgm_error(tgm__text_start(c->d, v), "unknown %s '%s'", field, s);
}

/* A name of a ufunc_inner_loop line: an identifier, or (tensorgen) `family.name`. */
static bool ufunc_name_ok(tgm_arena *a, const char *s)
{
    const char *dot = strchr(s, '.');
    if (!dot) return tgm__is_ident(s);
    return tgm__is_ident(tgm__trim_dup(a, s, (size_t)(dot - s), NULL)) && tgm__is_ident(dot + 1);
}

/* `name (dtypes)`, or (tensorgen) `name, name (dtypes)`: one name per result. */
static void ufunc_line(tgm_parse_ctx *c, const yaml_node_t *val, const char *text,
                       tgm_ufunc_loop *u)
{
    const char *paren = strchr(text, '(');
    size_t n = paren ? (size_t)(paren - text) : strlen(text);
    const char *names = tgm__trim_dup(c->a, text, n, NULL);
    u->name = names;
    u->dtypes = "";
    u->dtypes_loc = tgm__text_start(c->d, val);
    if (paren) {
        const char *close = strchr(paren, ')');
        if (!close) {
            tgm_error(tgm__text_start(c->d, val), "missing ')' in ufunc_inner_loop '%s'", text);
            return;
        }
        u->dtypes = tgm__trim_dup(c->a, paren + 1, (size_t)(close - paren - 1), NULL);
        u->dtypes_loc.col += (int)(paren + 1 - text);
    }
    int cap = 0;
    for (const char *p = names;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *one = tgm__trim_dup(c->a, p, len, NULL);
        if (!ufunc_name_ok(c->a, one)) {
            tgm_error(tgm__text_start(c->d, val), "invalid ufunc_inner_loop name '%s'", one);
            return;
        }
        *TGS_PUSH(c->a, u->names, u->nnames, cap) = one;
        if (!comma) break;
        p = comma + 1;
    }
    if (u->nnames > 1) u->name = u->names[0];
}

static void field_ufunc(tgm_parse_ctx *c, tgm_func *f, const yaml_node_t *v)
{
    static const char *const keys[] = { "Generic",           "ScalarOnly",  "CPUScalar",
                                        "CPUVector",         "CUDAFunctor", "CUDAFunctorOnOther",
                                        "CUDAFunctorOnSelf", NULL };
    if (v->type != YAML_MAPPING_NODE) {
        tgm_error(tgm__node_loc(c->d, v), "'ufunc_inner_loop' must be a mapping, not %s",
                  tgm__node_kind(v));
        return;
    }
    int cap = 0;
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key), *val = tgm__yaml_node(c->d, p->value);
        const char *key = NULL, *text = need_scalar(c, val, "ufunc_inner_loop");
        field_choice(c, k, "ufunc_inner_loop key", keys, &key);
        if (!key || !text) continue;
        tgm_ufunc_loop *u = TGS_PUSH(c->a, f->ufunc_inner_loop, f->nufunc_inner_loop, cap);
        u->loc = tgm__node_loc(c->d, k);
        u->key = key;
        ufunc_line(c, val, text, u);
    }
}

static void field_list_of_strings(tgm_parse_ctx *c, const yaml_node_t *v, const char *field)
{
    if (v->type != YAML_SEQUENCE_NODE) {
        tgm_error(tgm__node_loc(c->d, v), "'%s' must be a list, not %s", field, tgm__node_kind(v));
        return;
    }
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
        need_scalar(c, tgm__yaml_node(c->d, *it), field);
}

static void field_cpp_no_default_args(tgm_parse_ctx *c, tgm_func *f, const yaml_node_t *v,
                                      bool have_schema)
{
    if (v->type != YAML_SEQUENCE_NODE) {
        tgm_error(tgm__node_loc(c->d, v), "'cpp_no_default_args' must be a list, not %s",
                  tgm__node_kind(v));
        return;
    }
    const char **names;
    tgm_loc *locs;
    int n = tgm__node_names(c->a, c->d, v, "cpp_no_default_args", &names, &locs);
    for (int i = 0; have_schema && i < n; i++) {
        int k = 0;
        while (k < f->schema.nargs && strcmp(f->schema.args[k].name, names[i])) k++;
        if (k == f->schema.nargs)
            tgm_error(locs[i], "cpp_no_default_args names '%s', which is not an argument of '%s'",
                      names[i], f->schema.full_name);
    }
    if (n > 0) {
        f->cpp_no_default_args = names;
        f->ncpp_no_default_args = n;
    }
}

static void field_name(tgm_parse_ctx *c, const yaml_node_t *v, const char *field, const char **out,
                       tgm_loc *loc)
{
    const char *s = need_scalar(c, v, field);
    if (!s) return;
    if (loc) *loc = tgm__text_start(c->d, v);
    *out = s;
}

/* ---- entries ---- */

static const char *const known_fields[] = {
    "func",
    "variants",
    "dispatch",
    "structured",
    "structured_delegate",
    "structured_inherits",
    "autogen",
    "tags",
    "device_check",
    "device_guard",
    "python_module",
    "manual_cpp_binding",
    "manual_kernel_registration",
    "cpp_no_default_args",
    "category_override",
    "precomputed",
    "ufunc_inner_loop",
    "use_const_ref_for_mutable_tensors",
    "c_name",
    "doc",
    "scalar_overload_of",
    "ufunc_meta",
    NULL,
};

static void parse_field(tgm_parse_ctx *c, tgm_func *f, const char *key, const yaml_node_t *v,
                        bool have_schema)
{
    static const char *const device_checks[] = { "NoCheck", "ExactSame", NULL };
    bool unused;
    if (!strcmp(key, "variants")) field_variants(c, f, v);
    else if (!strcmp(key, "dispatch")) field_dispatch(c, f, v);
    else if (!strcmp(key, "structured")) tgm__node_bool(c->d, v, key, &f->structured);
    else if (!strcmp(key, "structured_delegate"))
        field_name(c, v, key, &f->structured_delegate, &f->structured_delegate_loc);
    else if (!strcmp(key, "structured_inherits"))
        field_name(c, v, key, &f->structured_inherits, NULL);
    else if (!strcmp(key, "autogen")) {
        tgm_loc *locs = NULL;
        f->autogen_loc = tgm__node_loc(c->d, v);
        int n = tgm__node_names(c->a, c->d, v, key, &f->autogen, &locs);
        f->nautogen = n > 0 ? n : 0;
        f->autogen_locs = locs;
    } else if (!strcmp(key, "tags")) {
        tgm_loc *locs = NULL;
        int n = tgm__node_names(c->a, c->d, v, key, &f->tags, &locs);
        f->ntags = n > 0 ? n : 0;
        f->tag_locs = locs;
    } else if (!strcmp(key, "device_check"))
        field_choice(c, v, "device_check", device_checks, &f->device_check);
    else if (!strcmp(key, "device_guard")) tgm__node_bool(c->d, v, key, &f->device_guard);
    else if (!strcmp(key, "manual_cpp_binding"))
        tgm__node_bool(c->d, v, key, &f->manual_cpp_binding);
    else if (!strcmp(key, "manual_kernel_registration") ||
             !strcmp(key, "use_const_ref_for_mutable_tensors"))
        tgm__node_bool(c->d, v, key, &unused);
    else if (!strcmp(key, "python_module")) field_name(c, v, key, &f->python_module, NULL);
    else if (!strcmp(key, "category_override")) {
        const char *s;
        field_name(c, v, key, &s, NULL);
    } else if (!strcmp(key, "cpp_no_default_args")) field_cpp_no_default_args(c, f, v, have_schema);
    else if (!strcmp(key, "precomputed")) field_list_of_strings(c, v, key);
    else if (!strcmp(key, "ufunc_inner_loop")) field_ufunc(c, f, v);
    else if (!strcmp(key, "c_name")) {
        field_name(c, v, key, &f->c_name, NULL);
        if (f->c_name && !tgm__is_ident(f->c_name))
            tgm_error(tgm__text_start(c->d, v), "c_name '%s' is not a C identifier", f->c_name);
    } else if (!strcmp(key, "doc")) field_name(c, v, key, &f->doc, NULL);
    else if (!strcmp(key, "scalar_overload_of"))
        field_name(c, v, key, &f->scalar_overload_of, &f->scalar_overload_of_loc);
    else if (!strcmp(key, "ufunc_meta")) {
        field_name(c, v, key, &f->ufunc_meta, &f->ufunc_meta_loc);
        if (f->ufunc_meta && !tgm__is_ident(f->ufunc_meta))
            tgm_error(f->ufunc_meta_loc, "ufunc_meta '%s' is not a C identifier", f->ufunc_meta);
    }
}

bool tgm__native_field_known(const char *name)
{
    for (int i = 0; known_fields[i]; i++)
        if (!strcmp(known_fields[i], name)) return true;
    return false;
}

/* Checks the keys of an entry (strings, known, read as data (data_fields.c) or a vendor's
 * (tgm_parse_ctx.vendor_field), not repeated); returns the `func` value node. */
static yaml_node_t *check_keys(tgm_parse_ctx *c, const yaml_node_t *entry)
{
    yaml_node_t *func = NULL;
    yaml_node_pair_t *pairs = entry->data.mapping.pairs.start, *end = entry->data.mapping.pairs.top;
    for (yaml_node_pair_t *p = pairs; p < end; p++) {
        const char *key = tgm__field_name(c->d, pairs, p, NULL);
        if (!key) continue;
        if (!strcmp(key, "func")) func = tgm__yaml_node(c->d, p->value);
        else if (tgm__native_field_known(key)) continue;
        else if (c->vendor_field) c->vendor_field(c->vendor_ctx, key);
        else if (!tgm__data_field(c, key, tgm__yaml_node(c->d, p->value)))
            tgm_error(tgm__node_loc(c->d, tgm__yaml_node(c->d, p->key)), "unknown field '%s'", key);
    }
    return func;
}

void tgm__parse_native_entry(tgm_parse_ctx *c, const yaml_node_t *entry)
{
    tgm_func *f = tgm_alloc(c->a, sizeof *f);
    f->loc = tgm__node_loc(c->d, entry);
    f->variant_function = true;
    f->device_guard = true;
    yaml_node_t *func = check_keys(c, entry);
    bool ok = false;
    if (!func) tgm_error(f->loc, "entry has no 'func:' field");
    else field_func(c, f, func, &ok);
    for (yaml_node_pair_t *p = entry->data.mapping.pairs.start; p < entry->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key);
        if (k->type == YAML_SCALAR_NODE && strcmp(tgm__scalar(k), "func"))
            parse_field(c, f, tgm__scalar(k), tgm__yaml_node(c->d, p->value), ok);
    }
    /* An entry whose schema did not parse is dropped so that validation does not report
     * consequences of that error (a delegate "not found" because its schema was broken). */
    if (ok) tgm__add_func(c->m, f);
}

int tgm_parse_native_functions(tgm_model *m, const char *path)
{
    return tgm__parse_entries(m, path, "func", tgm__parse_native_entry);
}

int tgm__parse_aside(tgm_model *m, const char *path, tgm_func ***out, int *n)
{
    tgm_func **own = m->funcs;
    int nown = m->nfuncs;
    m->funcs = NULL;
    m->nfuncs = 0;
    int errors = tgm_parse_native_functions(m, path);
    *out = m->funcs;
    *n = m->nfuncs;
    m->funcs = own;
    m->nfuncs = nown;
    return errors;
}

int tgm_parse_imports(tgm_model *m, const char *path)
{
    /* Parsed like a native file, then moved aside: before the library's own entries. */
    int errors = tgm__parse_aside(m, path, &m->imports, &m->nimports);
    for (int i = 0; i < m->nimports; i++) {
        tgm_func *f = m->imports[i];
        if (!f->c_name) {
            tgm_error(f->loc,
                      "'%s' has no c_name: an interface file (--import) names each "
                      "operator's C function",
                      f->schema.full_name);
            errors++;
        }
        f->kind = tgm__schema_kind(&f->schema);
        f->schema.ns = NULL; /* tensorgen's own: aten */
    }
    return errors;
}
