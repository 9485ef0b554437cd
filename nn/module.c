/* Modules (tg_nn_module.h): a module's registered tensors and submodules, and the walks over
 * the tree that everything else (state dicts, optimizers, to()) is written with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_private.h"

void *tg_module_new(const tg_module_type *type)
{
    if (!type || type->size < sizeof(tg_module))
        return tg_set_error("Module", "a module type's size must hold its tg_module head");
    tg_module *m = calloc(1, type->size);
    if (!m) return tg_set_error(type->name, "out of memory");
    m->type = type;
    m->training = true;
    return m;
}

void tg_module_free(tg_module *m)
{
    if (!m) return;
    if (m->type->fini) m->type->fini(m);
    for (int i = 0; i < m->n_slots; i++) {
        tg_release(*m->slots[i].slot);
        *m->slots[i].slot = NULL;
        free(m->slots[i].name);
    }
    for (int i = 0; i < m->n_children; i++) {
        tg_module_free(m->children[i].module);
        free(m->children[i].name);
    }
    free(m->slots);
    free(m->children);
    free(m);
}

const char *tg_module_type_name(const tg_module *m) { return m ? m->type->name : "Module"; }

/* A name for a tensor or submodule: non-empty, no dot (PyTorch's KeyError cases). */
static bool valid_name(tg_module *m, const char *name)
{
    if (!name || !*name || strchr(name, '.')) {
        tg_set_error(m->type->name, "invalid name '%s': names are non-empty and have no dot",
                     name ? name : "(null)");
        return false;
    }
    for (int i = 0; i < m->n_slots; i++)
        if (strcmp(m->slots[i].name, name) == 0) {
            tg_set_error(m->type->name, "attribute '%s' already exists", name);
            return false;
        }
    for (int i = 0; i < m->n_children; i++)
        if (strcmp(m->children[i].name, name) == 0) {
            tg_set_error(m->type->name, "attribute '%s' already exists", name);
            return false;
        }
    return true;
}

static tg_module *add_slot(tg_module *m, const char *name, tg_tensor **slot, tg__slot_kind kind)
{
    if (!m) return NULL;
    if (!slot || !valid_name(m, name)) goto fail;
    /* A constructor passes what an operator just made: NULL means that call failed. */
    if (!*slot) {
        if (!tg_last_error()) tg_set_error(m->type->name, "tensor '%s' is NULL", name);
        goto fail;
    }
    if (m->n_slots == m->cap_slots) {
        int cap = m->cap_slots ? 2 * m->cap_slots : 4;
        tg__module_slot *s = realloc(m->slots, sizeof *s * (size_t)cap);
        if (!s) goto oom;
        m->slots = s;
        m->cap_slots = cap;
    }
    char *copy = strdup(name);
    if (!copy) goto oom;
    m->slots[m->n_slots++] = (tg__module_slot){ copy, slot, kind };
    if (kind == TG__SLOT_PARAMETER && !tg_tensor_requires_grad(*slot)) {
        tg_tensor_set_requires_grad(*slot, true);
        if (!tg_tensor_requires_grad(*slot)) goto fail; /* not floating: the error is set */
    }
    return m;
oom:
    tg_set_error(m->type->name, "out of memory");
fail:
    /* The slot's tensor belongs to the module's struct, which tg_module_free releases only
     * for registered slots: release it here so that nothing leaks. */
    if (slot) {
        tg_release(*slot);
        *slot = NULL;
    }
    tg_module_free(m);
    return NULL;
}

tg_module *tg_module_register_parameter(tg_module *m, const char *name, tg_tensor **slot)
{
    return add_slot(m, name, slot, TG__SLOT_PARAMETER);
}

tg_module *tg_module_register_buffer(tg_module *m, const char *name, tg_tensor **slot,
                                     bool persistent)
{
    return add_slot(m, name, slot, persistent ? TG__SLOT_BUFFER : TG__SLOT_BUFFER_TRANSIENT);
}

tg_module *tg_module_register_module(tg_module *m, const char *name, tg_module *child)
{
    if (!m) {
        tg_module_free(child);
        return NULL;
    }
    if (!child) {
        if (!tg_last_error()) tg_set_error(m->type->name, "submodule '%s' is NULL", name);
        tg_module_free(m);
        return NULL;
    }
    if (!valid_name(m, name)) goto fail;
    if (m->n_children == m->cap_children) {
        int cap = m->cap_children ? 2 * m->cap_children : 4;
        tg__module_child *c = realloc(m->children, sizeof *c * (size_t)cap);
        if (!c) goto oom;
        m->children = c;
        m->cap_children = cap;
    }
    char *copy = strdup(name);
    if (!copy) goto oom;
    m->children[m->n_children++] = (tg__module_child){ copy, child };
    return m;
oom:
    tg_set_error(m->type->name, "out of memory");
fail:
    tg_module_free(child);
    tg_module_free(m);
    return NULL;
}

tg_tensor *tg_module_forward(tg_module *m, tg_tensor *x)
{
    if (!m) return tg_set_error("Module", "module is NULL");
    if (!x) return NULL; /* an earlier call failed: keep its message */
    if (!m->type->forward)
        return tg_set_error(m->type->name, "has no forward function of one tensor");
    return m->type->forward(m, x);
}

int tg_module_num_children(const tg_module *m) { return m ? m->n_children : 0; }

tg_module *tg_module_child(const tg_module *m, int i, const char **name)
{
    if (!m || i < 0 || i >= m->n_children)
        return tg_set_error(tg_module_type_name(m), "child %d out of range [0, %d)", i,
                            m ? m->n_children : 0);
    if (name) *name = m->children[i].name;
    return m->children[i].module;
}

/* The submodule named by the first `len` characters of `path`, or NULL. */
static tg_module *find_child(tg_module *m, const char *path, size_t len)
{
    for (int i = 0; i < m->n_children; i++)
        if (strlen(m->children[i].name) == len && memcmp(m->children[i].name, path, len) == 0)
            return m->children[i].module;
    return NULL;
}

tg_module *tg_module_get(tg_module *m, const char *path)
{
    if (!m || !path) return tg_set_error("Module", "get: module or path is NULL");
    tg_module *cur = m;
    const char *p = path;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        tg_module *next = find_child(cur, p, len);
        if (!next)
            return tg_set_error(m->type->name, "has no submodule '%.*s' (in '%s')", (int)len, p,
                                path);
        cur = next;
        p = dot ? dot + 1 : p + len;
    }
    return cur;
}

tg_tensor **tg_module_get_slot(tg_module *m, const char *name)
{
    if (!m || !name) return tg_set_error("Module", "get: module or name is NULL");
    const char *dot = strrchr(name, '.');
    tg_module *owner = m;
    if (dot) {
        char *path = strndup(name, (size_t)(dot - name));
        if (!path) return tg_set_error(m->type->name, "out of memory");
        owner = tg_module_get(m, path);
        free(path);
        if (!owner) return NULL;
    }
    const char *leaf = dot ? dot + 1 : name;
    for (int i = 0; i < owner->n_slots; i++)
        if (strcmp(owner->slots[i].name, leaf) == 0) return owner->slots[i].slot;
    return tg_set_error(m->type->name, "has no parameter or buffer '%s'", name);
}

tg_tensor *tg_module_get_tensor(tg_module *m, const char *name)
{
    tg_tensor **slot = tg_module_get_slot(m, name);
    return slot ? *slot : NULL;
}

/* ---- walks ---- */

void tg_named_tensors_free(tg_named_tensors *l)
{
    if (!l) return;
    for (int64_t i = 0; i < l->len; i++) free((char *)l->data[i].name);
    free(l->data);
    l->data = NULL;
    l->len = 0;
}

typedef struct walk {
    tg_module_walk_opts opts;
    tg_named_tensors *out;
    int64_t cap;
} walk;

static bool listed(const walk *w, const tg__module_slot *s)
{
    if (!*s->slot) return false; /* None: in no list, as in PyTorch */
    if (s->kind == TG__SLOT_PARAMETER) return w->opts.parameters;
    if (!w->opts.buffers) return false;
    return s->kind == TG__SLOT_BUFFER || !w->opts.persistent_only;
}

static bool seen(const walk *w, const tg_tensor *t)
{
    for (int64_t i = 0; i < w->out->len; i++)
        if (*w->out->data[i].slot == t) return true;
    return false;
}

static int push(walk *w, const char *prefix, const tg__module_slot *s)
{
    if (w->out->len == w->cap) {
        int64_t cap = w->cap ? 2 * w->cap : 16;
        tg_named_tensor *d = realloc(w->out->data, sizeof *d * (size_t)cap);
        if (!d) return -1;
        w->out->data = d;
        w->cap = cap;
    }
    char *name = tg__nn_join(prefix, s->name);
    if (!name) return -1;
    w->out->data[w->out->len++] = (tg_named_tensor){ name, s->slot, s->kind != TG__SLOT_PARAMETER };
    return 0;
}

static int walk_module(walk *w, tg_module *m, const char *prefix)
{
    /* PyTorch's order: parameters, then buffers, then children. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < m->n_slots; i++) {
            const tg__module_slot *s = &m->slots[i];
            if ((s->kind == TG__SLOT_PARAMETER) != (pass == 0) || !listed(w, s)) continue;
            if (!w->opts.keep_duplicates && seen(w, *s->slot)) continue;
            if (push(w, prefix, s) != 0) return -1;
        }
    for (int i = 0; i < m->n_children; i++) {
        char *sub = tg__nn_join(prefix, m->children[i].name);
        if (!sub) return -1;
        int rc = walk_module(w, m->children[i].module, sub);
        free(sub);
        if (rc != 0) return -1;
    }
    return 0;
}

int tg_module_named_tensors_fn(tg_module *m, tg_named_tensors *out, tg_module_walk_opts opts)
{
    if (!out) {
        tg_set_error("named_tensors", "out is NULL");
        return -1;
    }
    *out = (tg_named_tensors){ NULL, 0 };
    if (!m) {
        tg_set_error("named_tensors", "module is NULL");
        return -1;
    }
    walk w = { opts, out, 0 };
    if (walk_module(&w, m, opts.prefix ? opts.prefix : "") != 0) {
        tg_named_tensors_free(out);
        tg_set_error(m->type->name, "out of memory");
        return -1;
    }
    /* A list that is empty still has an array, so that data == NULL only means failure. */
    if (!out->data && !(out->data = malloc(sizeof *out->data))) {
        tg_set_error(m->type->name, "out of memory");
        return -1;
    }
    return 0;
}

/* ---- state of the tree ---- */

void tg_module_train(tg_module *m, bool training)
{
    if (!m) return;
    m->training = training;
    for (int i = 0; i < m->n_children; i++) tg_module_train(m->children[i].module, training);
}

void tg_module_zero_grad(tg_module *m)
{
    if (!m) return;
    for (int i = 0; i < m->n_slots; i++)
        if (m->slots[i].kind == TG__SLOT_PARAMETER && *m->slots[i].slot)
            tg_tensor_set_grad(*m->slots[i].slot, NULL);
    for (int i = 0; i < m->n_children; i++) tg_module_zero_grad(m->children[i].module);
}

void tg_module_requires_grad_(tg_module *m, bool requires_grad)
{
    if (!m) return;
    for (int i = 0; i < m->n_slots; i++)
        if (m->slots[i].kind == TG__SLOT_PARAMETER && *m->slots[i].slot)
            tg_tensor_set_requires_grad(*m->slots[i].slot, requires_grad);
    for (int i = 0; i < m->n_children; i++)
        tg_module_requires_grad_(m->children[i].module, requires_grad);
}

int64_t tg_module_num_parameters(tg_module *m, bool trainable_only)
{
    tg_named_tensors l;
    if (tg_module_named_tensors(m, &l) != 0) return -1;
    int64_t n = 0;
    for (int64_t i = 0; i < l.len; i++)
        if (!trainable_only || tg_tensor_requires_grad(*l.data[i].slot))
            n += tg_tensor_numel(*l.data[i].slot);
    tg_named_tensors_free(&l);
    return n;
}

int tg_module_apply(tg_module *m, tg_module_fn fn, void *ctx)
{
    return tg__nn_apply(m, "", fn, ctx);
}

int tg__nn_apply(tg_module *m, const char *path, tg_module_fn fn, void *ctx)
{
    for (int i = 0; i < m->n_children; i++) {
        char *sub = tg__nn_join(path, m->children[i].name);
        if (!sub) {
            tg_set_error(m->type->name, "out of memory");
            return -1;
        }
        int rc = tg__nn_apply(m->children[i].module, sub, fn, ctx);
        free(sub);
        if (rc != 0) return rc;
    }
    return fn(m, path, ctx);
}
