/* Sequential and ModuleList (tg_nn_layers.h): submodules named "0", "1", ... */
#include <stdio.h>
#include <stdlib.h>

#include "../nn_private.h"

/* Runs the children in order. The intermediate outputs die in a scope of the call's own, so
 * the result is the only new reference, recorded in the caller's scope (or owned by the
 * caller when none is open), like an operator's. */
static tg_tensor *sequential_forward(tg_module *m, tg_tensor *x)
{
    if (m->n_children == 0) return tg_scope_track(tg_retain(x)); /* the identity */
    tg_scope_begin();
    tg_tensor *h = x;
    for (int i = 0; i < m->n_children && h; i++) h = tg_module_forward(m->children[i].module, h);
    tg_scope_keep(h);
    tg_scope_end();
    return h;
}

static const tg_module_type sequential_type = { "Sequential", sizeof(tg_module), sequential_forward,
                                                NULL, NULL };
static const tg_module_type module_list_type = { "ModuleList", sizeof(tg_module), NULL, NULL,
                                                 NULL };

static bool is_list(const tg_module *m)
{
    return m && (m->type == &sequential_type || m->type == &module_list_type);
}

int tg_nn_append(tg_module *list, tg_module *m)
{
    if (!is_list(list)) {
        tg_module_free(m);
        tg_set_error("append", "expected a Sequential or ModuleList, got %s",
                     list ? list->type->name : "NULL");
        return -1;
    }
    if (!m) {
        if (!tg_last_error()) tg_set_error(list->type->name, "append: module is NULL");
        return -1;
    }
    char name[24];
    snprintf(name, sizeof name, "%d", list->n_children);
    /* register_module frees the list on failure; a list must survive a failed append, so
     * check the only failure it can have here (memory) by growing first. */
    if (list->n_children == list->cap_children) {
        int cap = list->cap_children ? 2 * list->cap_children : 4;
        tg__module_child *c = realloc(list->children, sizeof *c * (size_t)cap);
        if (!c) {
            tg_module_free(m);
            tg_set_error(list->type->name, "out of memory");
            return -1;
        }
        list->children = c;
        list->cap_children = cap;
    }
    return tg_module_register_module(list, name, m) ? 0 : -1;
}

tg_module *tg_nn_sequential_fn(tg_module *const *modules, int n)
{
    tg_module *s = tg_module_new(&sequential_type);
    bool failed = !s;
    for (int i = 0; i < n; i++) {
        if (failed || !modules[i]) {
            failed = true;
            tg_module_free(modules[i]);
        } else if (tg_nn_append(s, modules[i]) != 0) failed = true;
    }
    if (failed) {
        if (!tg_last_error()) tg_set_error("Sequential", "a module is NULL");
        tg_module_free(s);
        return NULL;
    }
    return s;
}

tg_module *tg_nn_module_list(void) { return tg_module_new(&module_list_type); }

tg_module *tg_nn_at(tg_module *list, int i)
{
    if (!is_list(list))
        return tg_set_error("at", "expected a Sequential or ModuleList, got %s",
                            list ? list->type->name : "NULL");
    return tg_module_child(list, i, NULL);
}

int tg_nn_len(const tg_module *list) { return is_list(list) ? list->n_children : -1; }
