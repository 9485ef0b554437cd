/* tg_state (tg_nn_state.h): named tensors and text metadata on their way to or from one
 * safetensors file. A state opened from a file reads its tensors lazily from the mapping; what
 * is put afterwards overrides what the file holds. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_private.h"

typedef struct entry {
    char *name;
    tg_tensor *tensor; /* owned; for a file's entry, NULL until first read */
    char *value;       /* metadata: the text */
} entry;

typedef struct entries {
    entry *data;
    int64_t len, cap;
} entries;

struct tg_state {
    char *path;
    tg_safetensors *file; /* NULL for a new state */
    entries tensors, meta;
};

static entry *find(entries *e, const char *name)
{
    for (int64_t i = 0; i < e->len; i++)
        if (strcmp(e->data[i].name, name) == 0) return &e->data[i];
    return NULL;
}

/* The entry `name`, appended when absent; NULL on out of memory. */
static entry *find_or_add(entries *e, const char *name)
{
    entry *x = find(e, name);
    if (x) return x;
    if (e->len == e->cap) {
        int64_t cap = e->cap ? 2 * e->cap : 16;
        entry *d = realloc(e->data, sizeof *d * (size_t)cap);
        if (!d) return NULL;
        e->data = d;
        e->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return NULL;
    e->data[e->len] = (entry){ copy, NULL, NULL };
    return &e->data[e->len++];
}

static void entries_free(entries *e)
{
    for (int64_t i = 0; i < e->len; i++) {
        free(e->data[i].name);
        tg_release(e->data[i].tensor);
        free(e->data[i].value);
    }
    free(e->data);
}

tg_state *tg_state_new(void)
{
    tg_state *s = calloc(1, sizeof *s);
    if (s && !(s->path = strdup(""))) {
        free(s);
        s = NULL;
    }
    if (!s) tg_set_error("state", "out of memory");
    return s;
}

tg_state *tg_state_open(const char *path)
{
    if (!path) return tg_set_error("state", "open: path is NULL");
    tg_safetensors *f = tg_safetensors_open(path);
    if (!f) return NULL;
    tg_state *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) goto oom;
    s->file = f;
    for (int64_t i = 0; i < tg_safetensors_count(f); i++)
        if (!find_or_add(&s->tensors, tg_safetensors_name(f, i))) goto oom;
    for (int64_t i = 0; i < tg_safetensors_metadata_count(f); i++) {
        const char *k = tg_safetensors_metadata_key(f, i);
        entry *e = find_or_add(&s->meta, k);
        if (!e || !(e->value = strdup(tg_safetensors_metadata(f, k)))) goto oom;
    }
    return s;
oom:
    if (s) {
        s->file = NULL;
        tg_state_free(s);
    }
    tg_safetensors_close(f);
    return tg_set_error("state", "%s: out of memory", path);
}

void tg_state_free(tg_state *s)
{
    if (!s) return;
    entries_free(&s->tensors);
    entries_free(&s->meta);
    tg_safetensors_close(s->file); /* after the tensors: they keep the mapping alive anyway */
    free(s->path);
    free(s);
}

const char *tg_state_path(const tg_state *s) { return s ? s->path : ""; }

int tg_state_put_tensor(tg_state *s, const char *name, tg_tensor *t)
{
    if (!s || !name || !*name || !t) {
        if (!t && tg_last_error()) return -1; /* the call that made t failed: keep its message */
        tg_set_error("state", "put_tensor: %s is NULL or empty",
                     !s                  ? "the state"
                     : (!name || !*name) ? "the name"
                                         : "the tensor");
        return -1;
    }
    entry *e = find_or_add(&s->tensors, name);
    if (!e) {
        tg_set_error("state", "out of memory");
        return -1;
    }
    tg_release(e->tensor);
    e->tensor = tg_retain(t);
    return 0;
}

int tg_state_put_meta(tg_state *s, const char *key, const char *value)
{
    if (!s || !key || !*key || !value) {
        tg_set_error("state", "put_meta: the state, key or value is NULL or empty");
        return -1;
    }
    entry *e = find_or_add(&s->meta, key);
    char *copy = e ? strdup(value) : NULL;
    if (!copy) {
        tg_set_error("state", "out of memory");
        return -1;
    }
    free(e->value);
    e->value = copy;
    return 0;
}

int tg_state_put_int(tg_state *s, const char *key, int64_t value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, value);
    return tg_state_put_meta(s, key, buf);
}

int tg_state_put_double(tg_state *s, const char *key, double value)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", value);
    return tg_state_put_meta(s, key, buf);
}

int tg_state_save(tg_state *s, const char *path)
{
    if (!s || !path) {
        tg_set_error("state", "save: the state or path is NULL");
        return -1;
    }
    int64_t n = s->tensors.len, nm = s->meta.len;
    const char **names = malloc(sizeof *names * (size_t)(n + 1));
    tg_tensor **ts = malloc(sizeof *ts * (size_t)(n + 1));
    const char **keys = malloc(sizeof *keys * (size_t)(nm + 1));
    const char **values = malloc(sizeof *values * (size_t)(nm + 1));
    int rc = names && ts && keys && values ? 0 : -1;
    if (rc != 0) tg_set_error("state", "out of memory");
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        names[i] = s->tensors.data[i].name;
        if (!(ts[i] = tg_state_tensor(s, names[i]))) rc = -1;
    }
    for (int64_t i = 0; rc == 0 && i < nm; i++) {
        keys[i] = s->meta.data[i].name;
        values[i] = s->meta.data[i].value;
    }
    if (rc == 0)
        rc = tg_save_safetensors_metadata(path, names, (tg_tensor *const *)ts, n, keys, values, nm);
    free(names);
    free(ts);
    free(keys);
    free(values);
    return rc;
}

int64_t tg_state_num_tensors(const tg_state *s) { return s ? s->tensors.len : 0; }

const char *tg_state_tensor_name(const tg_state *s, int64_t i)
{
    if (!s || i < 0 || i >= s->tensors.len)
        return tg_set_error("state", "tensor %lld out of range", (long long)i);
    return s->tensors.data[i].name;
}

bool tg_state_has_tensor(const tg_state *s, const char *name)
{
    return s && name && find((entries *)&s->tensors, name);
}

tg_tensor *tg_state_tensor(tg_state *s, const char *name)
{
    if (!s || !name) return tg_set_error("state", "tensor: the state or name is NULL");
    entry *e = find(&s->tensors, name);
    if (!e)
        return tg_set_error("state", "%s has no tensor '%s'", *s->path ? s->path : "the state",
                            name);
    if (!e->tensor && s->file) TG__NN_OWN e->tensor = tg_safetensors_get(s->file, name);
    return e->tensor;
}

const char *tg_state_meta(const tg_state *s, const char *key)
{
    if (!s || !key) return NULL;
    entry *e = find((entries *)&s->meta, key);
    return e ? e->value : NULL;
}

int tg_state_get_int(const tg_state *s, const char *key, int64_t *out)
{
    const char *v = tg_state_meta(s, key);
    char *end = NULL;
    errno = 0;
    long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || end == v || *end || errno) {
        tg_set_error("state", "%s: %s '%s'", s && *s->path ? s->path : "state",
                     v ? "not an integer:" : "no entry", key ? key : "(null)");
        return -1;
    }
    *out = x;
    return 0;
}

int tg_state_get_double(const tg_state *s, const char *key, double *out)
{
    const char *v = tg_state_meta(s, key);
    char *end = NULL;
    double x = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end) {
        tg_set_error("state", "%s: %s '%s'", s && *s->path ? s->path : "state",
                     v ? "not a number:" : "no entry", key ? key : "(null)");
        return -1;
    }
    *out = x;
    return 0;
}
