/* tg_module_to_string: PyTorch's repr of a module tree,
 *
 *     Sequential(
 *       (0): Linear(in_features=2, out_features=64, bias=True)
 *       (1): ReLU()
 *     )
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_private.h"

typedef struct text {
    char *s;
    size_t len, cap;
    bool oom;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->oom || n < 0) return;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = 2 * (t->len + (size_t)n + 1);
        char *s = realloc(t->s, cap);
        if (!s) {
            t->oom = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static void repr(text *t, const tg_module *m, int indent)
{
    char extra[256] = "";
    if (m->type->describe) m->type->describe(m, extra, sizeof extra);
    put(t, "%s(", m->type->name);
    if (m->n_children == 0) {
        put(t, "%s)", extra);
        return;
    }
    if (*extra) put(t, "\n%*s%s", indent + 2, "", extra);
    for (int i = 0; i < m->n_children; i++) {
        put(t, "\n%*s(%s): ", indent + 2, "", m->children[i].name);
        repr(t, m->children[i].module, indent + 2);
    }
    put(t, "\n%*s)", indent, "");
}

char *tg_module_to_string(tg_module *m)
{
    if (!m) return tg_set_error("Module", "to_string: module is NULL");
    text t = { 0 };
    repr(&t, m, 0);
    if (t.oom || !t.s) {
        free(t.s);
        return tg_set_error(m->type->name, "out of memory");
    }
    return t.s;
}
