/* State dicts (tg_nn_state.h): a module's parameters and persistent buffers put into a
 * tg_state under PyTorch's names, and loaded back all or nothing with PyTorch's report of
 * missing, unexpected and mismatched keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_private.h"
#include "ops/_to_copy.h"
#include "ops/copy.h"

int tg_module_state_dict_fn(tg_module *m, tg_state *s, tg_state_dict_opts opts)
{
    tg_named_tensors l;
    if (!s) {
        tg_set_error("state_dict", "state is NULL");
        return -1;
    }
    if (tg_module_named_tensors(m, &l, .buffers = true, .persistent_only = true,
                                .keep_duplicates = opts.keep_tied) != 0)
        return -1;
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < l.len; i++) {
        size_t n = strlen(opts.prefix ? opts.prefix : "") + strlen(l.data[i].name) + 1;
        char *key = malloc(n);
        if (!key) {
            tg_set_error("state_dict", "out of memory");
            rc = -1;
            break;
        }
        snprintf(key, n, "%s%s", opts.prefix ? opts.prefix : "", l.data[i].name);
        rc = tg_state_put_tensor(s, key, *l.data[i].slot);
        free(key);
    }
    tg_named_tensors_free(&l);
    return rc;
}

int tg_module_save_fn(tg_module *m, const char *path, tg_state_dict_opts opts)
{
    tg_state *s = tg_state_new();
    int rc = s && tg_module_state_dict_fn(m, s, opts) == 0 ? tg_state_save(s, path) : -1;
    tg_state_free(s);
    return rc;
}

/* ---- the report ---- */

typedef struct strs {
    char **data;
    int64_t len, cap;
} strs;

static int strs_add(strs *l, const char *text)
{
    if (l->len == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 8;
        char **d = realloc(l->data, sizeof *d * (size_t)cap);
        if (!d) return -1;
        l->data = d;
        l->cap = cap;
    }
    if (!(l->data[l->len] = strdup(text))) return -1;
    l->len++;
    return 0;
}

static void strs_free(strs *l)
{
    for (int64_t i = 0; i < l->len; i++) free(l->data[i]);
    free(l->data);
    *l = (strs){ 0 };
}

void tg_load_report_free(tg_load_report *r)
{
    if (!r) return;
    strs a = { r->missing, r->n_missing, 0 }, b = { r->unexpected, r->n_unexpected, 0 },
         c = { r->mismatched, r->n_mismatched, 0 };
    strs_free(&a);
    strs_free(&b);
    strs_free(&c);
    *r = (tg_load_report){ 0 };
}

/* ---- loading ---- */

/* The module key a state key stands for under opts (prefix and renames applied), malloc'd;
 * NULL (no error) when the key lies outside the prefix, or on out of memory (*oom set). */
static char *module_key(const char *key, const tg_load_opts *o, bool *oom)
{
    size_t np = strlen(o->prefix);
    if (strncmp(key, o->prefix, np) != 0) return NULL;
    key += np;
    const char *from = "", *to = "";
    for (int i = 0; i < o->n_rename; i++)
        if (strncmp(key, o->rename[i].from, strlen(o->rename[i].from)) == 0) {
            from = o->rename[i].from;
            to = o->rename[i].to;
            break;
        }
    size_t n = strlen(to) + strlen(key + strlen(from)) + 1;
    char *k = malloc(n);
    if (!k) *oom = true;
    else snprintf(k, n, "%s%s", to, key + strlen(from));
    return k;
}

typedef struct load {
    tg_named_tensors dst;  /* the module's keys, tied ones under each name */
    const char **src_key;  /* per module key: the state key read into it, or NULL */
    tg_tensor **converted; /* per module key: the state's tensor in the slot's dtype/device */
    strs missing, unexpected, mismatched;
} load;

static int64_t find_dst(const load *L, const char *name)
{
    for (int64_t i = 0; i < L->dst.len; i++)
        if (strcmp(L->dst.data[i].name, name) == 0) return i;
    return -1;
}

/* Matches the state's keys to the module's: src_key filled, report lists built. */
static int match(load *L, tg_state *s, const tg_load_opts *o)
{
    char shape_a[128], shape_b[128], text[512];
    bool oom = false;
    for (int64_t i = 0; i < tg_state_num_tensors(s) && !oom; i++) {
        const char *key = tg_state_tensor_name(s, i);
        char *mk = module_key(key, o, &oom);
        if (!mk) continue;
        int64_t j = find_dst(L, mk);
        if (j < 0) oom |= strs_add(&L->unexpected, mk) != 0;
        else {
            tg_tensor *src = tg_state_tensor(s, key), *d = *L->dst.data[j].slot;
            if (!src) {
                free(mk);
                return -1;
            }
            bool same = tg_tensor_dim(src) == tg_tensor_dim(d);
            for (int64_t k = 0; same && k < tg_tensor_dim(d); k++)
                same = tg_tensor_size(src, k) == tg_tensor_size(d, k);
            if (same) L->src_key[j] = key;
            else {
                snprintf(text, sizeof text, "%s: %s in the state, %s in the model", mk,
                         tg__nn_shape_str(src, shape_a, sizeof shape_a),
                         tg__nn_shape_str(d, shape_b, sizeof shape_b));
                oom |= strs_add(&L->mismatched, text) != 0;
            }
        }
        free(mk);
    }
    /* A key is missing unless it, or a key tied to it (the same tensor), was found. */
    for (int64_t j = 0; j < L->dst.len && !oom; j++) {
        bool found = L->src_key[j] != NULL;
        for (int64_t k = 0; k < L->dst.len && !found; k++)
            found = L->src_key[k] && *L->dst.data[k].slot == *L->dst.data[j].slot;
        if (!found) oom |= strs_add(&L->missing, L->dst.data[j].name) != 0;
    }
    if (oom) tg_set_error("load_state_dict", "out of memory");
    return oom ? -1 : 0;
}

/* PyTorch's message: "Error(s) in loading state_dict for GPT2: Missing key(s): ..." */
static void report_error(const load *L, tg_module *m, const tg_load_opts *o, const char *where)
{
    char msg[1024];
    size_t used = 0;
    const strs *lists[3] = { &L->mismatched, &L->missing, &L->unexpected };
    const char *titles[3] = { "size mismatch", "Missing key(s)", "Unexpected key(s)" };
    for (int t = 0; t < 3; t++) {
        if (!lists[t]->len || (t > 0 && !o->strict)) continue;
        used +=
            (size_t)snprintf(msg + used, sizeof msg - used, "%s%s: ", used ? "; " : "", titles[t]);
        for (int64_t i = 0; i < lists[t]->len && used < sizeof msg; i++)
            used += (size_t)snprintf(msg + used, sizeof msg - used, "%s\"%s\"", i ? ", " : "",
                                     lists[t]->data[i]);
        if (used >= sizeof msg) break;
    }
    tg_set_error("load_state_dict", "Error(s) in loading state_dict for %s%s%s: %s",
                 tg_module_type_name(m), *where ? " from " : "", where, msg);
}

static void hand_over_report(load *L, tg_load_report *r)
{
    if (r) {
        tg_load_report_free(r);
        *r = (tg_load_report){ L->missing.data,   L->missing.len,     L->unexpected.data,
                               L->unexpected.len, L->mismatched.data, L->mismatched.len };
        L->missing = L->unexpected = L->mismatched = (strs){ 0 };
    }
    strs_free(&L->missing);
    strs_free(&L->unexpected);
    strs_free(&L->mismatched);
}

int tg_module_load_state_dict_fn(tg_module *m, tg_state *s, tg_load_opts opts)
{
    if (!m || !s) {
        tg_set_error("load_state_dict", "%s is NULL", m ? "the state" : "the module");
        return -1;
    }
    if (!opts.prefix) opts.prefix = "";
    load L = { 0 };
    if (tg_module_named_tensors(m, &L.dst, .buffers = true, .persistent_only = true,
                                .keep_duplicates = true) != 0)
        return -1;
    L.src_key = calloc((size_t)L.dst.len + 1, sizeof *L.src_key);
    L.converted = calloc((size_t)L.dst.len + 1, sizeof *L.converted);
    int rc = L.src_key && L.converted ? match(&L, s, &opts) : -1;
    if (!L.src_key || !L.converted) tg_set_error("load_state_dict", "out of memory");
    if (rc == 0 && (L.mismatched.len || (opts.strict && (L.missing.len || L.unexpected.len)))) {
        report_error(&L, m, &opts, tg_state_path(s));
        rc = -1;
    }
    /* Every tensor converted to its slot's dtype and device before any is written. */
    for (int64_t j = 0; rc == 0 && j < L.dst.len; j++) {
        if (!L.src_key[j]) continue;
        tg_tensor *d = *L.dst.data[j].slot, *src = tg_state_tensor(s, L.src_key[j]);
        TG__NN_OWN L.converted[j] =
            tg__to_copy(src, .dtype = tg_tensor_dtype(d), .device = tg_tensor_device(d));
        if (!L.converted[j]) rc = -1;
    }
    for (int64_t j = 0; rc == 0 && j < L.dst.len; j++) {
        if (!L.converted[j]) continue;
        TG__NN_OWN
        {
            tg_tensor *r = tg_copy_(*L.dst.data[j].slot, L.converted[j]);
            if (!r) rc = -1;
            tg_release(r);
        }
    }
    for (int64_t j = 0; j < L.dst.len && L.converted; j++) tg_release(L.converted[j]);
    free(L.converted);
    free(L.src_key);
    tg_named_tensors_free(&L.dst);
    hand_over_report(&L, opts.report);
    return rc;
}

int tg_module_load_fn(tg_module *m, const char *path, tg_load_opts opts)
{
    tg_state *s = tg_state_open(path);
    if (!s) return -1;
    int rc = tg_module_load_state_dict_fn(m, s, opts);
    tg_state_free(s);
    return rc;
}
