/* The template engine and string buffers (see template.h for the template rules). */
#include "template.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ buffers */

void tgt_buf_init(tgt_buf *b) {
    b->data = NULL;
    b->len = b->cap = 0;
}

void tgt_buf_free(tgt_buf *b) {
    free(b->data);
    tgt_buf_init(b);
}

static void buf_reserve(tgt_buf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        fprintf(stderr, "tgen: out of memory\n");
        exit(2);
    }
    b->data = p;
    b->cap = cap;
}

void tgt_putn(tgt_buf *b, const char *s, size_t n) {
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void tgt_puts(tgt_buf *b, const char *s) { tgt_putn(b, s, strlen(s)); }

void tgt_vprintf(tgt_buf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void tgt_printf(tgt_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tgt_vprintf(b, fmt, ap);
    va_end(ap);
}

char *tgt_take(tgt_buf *b, tgm_arena *a) {
    char *s = tgm_strndup(a, b->data ? b->data : "", b->len);
    b->len = 0;
    if (b->data) b->data[0] = '\0';
    return s;
}

char *tgt_fmt(tgm_arena *a, const char *fmt, ...) {
    tgt_buf b;
    tgt_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    tgt_vprintf(&b, fmt, ap);
    va_end(ap);
    char *s = tgt_take(&b, a);
    tgt_buf_free(&b);
    return s;
}

/* ------------------------------------------------------------------ lists */

void tgt_list_add(tgt_list *l, tgm_arena *a, const char *s) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        const char **items = tgm_alloc(a, sizeof *items * (size_t)cap);
        if (l->n) memcpy(items, l->items, sizeof *items * (size_t)l->n);
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = s;
}

void tgt_list_addf(tgt_list *l, tgm_arena *a, const char *fmt, ...) {
    tgt_buf b;
    tgt_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    tgt_vprintf(&b, fmt, ap);
    va_end(ap);
    tgt_list_add(l, a, tgt_take(&b, a));
    tgt_buf_free(&b);
}

char *tgt_list_join(const tgt_list *l, tgm_arena *a, const char *sep) {
    tgt_buf b;
    tgt_buf_init(&b);
    for (int i = 0; i < l->n; i++) {
        if (i) tgt_puts(&b, sep);
        tgt_puts(&b, l->items[i]);
    }
    char *s = tgt_take(&b, a);
    tgt_buf_free(&b);
    return s;
}

/* ------------------------------------------------------------------ environments */

typedef struct env_var {
    const char *name;
    bool is_list;
    const char *value;
    tgt_list items;
} env_var;

struct tgt_env {
    tgm_arena *arena;
    env_var *vars;
    int n, cap;
};

tgt_env *tgt_env_new(tgm_arena *a) {
    tgt_env *e = tgm_alloc(a, sizeof *e);
    e->arena = a;
    return e;
}

static env_var *env_slot(tgt_env *e, const char *name) {
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->vars[i].name, name) == 0) return &e->vars[i];
    if (e->n == e->cap) {
        int cap = e->cap ? e->cap * 2 : 16;
        env_var *vars = tgm_alloc(e->arena, sizeof *vars * (size_t)cap);
        if (e->n) memcpy(vars, e->vars, sizeof *vars * (size_t)e->n);
        e->vars = vars;
        e->cap = cap;
    }
    env_var *v = &e->vars[e->n++];
    v->name = tgm_strdup(e->arena, name);
    return v;
}

void tgt_set(tgt_env *e, const char *name, const char *value) {
    env_var *v = env_slot(e, name);
    v->is_list = false;
    v->value = value ? value : "";
}

void tgt_setf(tgt_env *e, const char *name, const char *fmt, ...) {
    tgt_buf b;
    tgt_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    tgt_vprintf(&b, fmt, ap);
    va_end(ap);
    tgt_set(e, name, tgt_take(&b, e->arena));
    tgt_buf_free(&b);
}

void tgt_set_list(tgt_env *e, const char *name, const tgt_list *items) {
    env_var *v = env_slot(e, name);
    v->is_list = true;
    v->items = *items;
}

static const env_var *env_find(const tgt_env *e, const char *name, size_t n) {
    for (int i = 0; i < e->n; i++)
        if (strlen(e->vars[i].name) == n && memcmp(e->vars[i].name, name, n) == 0) return &e->vars[i];
    return NULL;
}

/* ------------------------------------------------------------------ rendering */

tgt_template tgt_load(tgm_arena *a, const char *dir, const char *name) {
    tgt_template t = { tgt_fmt(a, "%s/%s", dir, name), NULL };
    FILE *f = fopen(t.path, "rb");
    if (!f) {
        tgm_error((tgm_loc){ t.path, 0, 0 }, "cannot read template: %s", strerror(errno));
        return t;
    }
    tgt_buf b;
    tgt_buf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) tgt_putn(&b, chunk, n);
    fclose(f);
    t.text = tgt_take(&b, a);
    tgt_buf_free(&b);
    return t;
}

/* Appends `text` with every line after a newline prefixed by `indent`; empty lines get no
 * indentation so the output has no trailing whitespace. */
static void put_indented(tgt_buf *out, const char *indent, size_t nindent, const char *text) {
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len) {
            tgt_putn(out, indent, nindent);
            tgt_putn(out, p, len);
        }
        tgt_puts(out, "\n");
        if (!nl) break;
        p = nl + 1;
    }
}

/* If the line [line, end) is whitespace + one `${name}` + whitespace, returns the start of
 * the hole and sets its name span; else NULL. */
static const char *lone_hole(const char *line, const char *end, const char **name, size_t *nlen) {
    const char *p = line;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (end - p < 3 || p[0] != '$' || p[1] != '{') return NULL;
    const char *close = memchr(p, '}', (size_t)(end - p));
    if (!close) return NULL;
    const char *q = close + 1;
    while (q < end && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q != end) return NULL;
    *name = p + 2;
    *nlen = (size_t)(close - p - 2);
    return p;
}

static int render_lone(const tgt_template *t, const env_var *v, const char *line,
                       const char *hole, tgt_buf *out) {
    (void)t;
    size_t nindent = (size_t)(hole - line);
    if (!v->is_list) {
        if (*v->value) put_indented(out, line, nindent, v->value);
        return 0;
    }
    for (int i = 0; i < v->items.n; i++) put_indented(out, line, nindent, v->items.items[i]);
    return 0;
}

static int render_inline(const tgt_template *t, const tgt_env *e, const char *line,
                         const char *end, int lineno, tgt_buf *out) {
    int errors = 0;
    const char *p = line;
    while (p < end) {
        const char *dollar = memchr(p, '$', (size_t)(end - p));
        if (!dollar) {
            tgt_putn(out, p, (size_t)(end - p));
            break;
        }
        tgt_putn(out, p, (size_t)(dollar - p));
        tgm_loc loc = { t->path, lineno, (int)(dollar - line) + 1 };
        if (dollar + 1 < end && dollar[1] == '$') {
            tgt_puts(out, "$");
            p = dollar + 2;
            continue;
        }
        const char *close = dollar + 1 < end && dollar[1] == '{'
            ? memchr(dollar, '}', (size_t)(end - dollar)) : NULL;
        if (!close) {
            tgm_error(loc, "'$' must start a ${name} hole (write $$ for a literal '$')");
            errors++;
            p = dollar + 1;
            continue;
        }
        const env_var *v = env_find(e, dollar + 2, (size_t)(close - dollar - 2));
        if (!v) {
            tgm_error(loc, "no value for hole ${%.*s}", (int)(close - dollar - 2), dollar + 2);
            errors++;
        } else if (v->is_list) {
            tgm_error(loc, "list ${%s} must stand alone on its line", v->name);
            errors++;
        } else {
            tgt_puts(out, v->value);
        }
        p = close + 1;
    }
    tgt_puts(out, "\n");
    return errors;
}

int tgt_render(const tgt_template *t, const tgt_env *e, tgt_buf *out) {
    if (!t->text) return 1;
    int errors = 0, lineno = 0;
    const char *line = t->text;
    while (*line) {
        lineno++;
        const char *nl = strchr(line, '\n');
        const char *end = nl ? nl : line + strlen(line);
        const char *name;
        size_t nlen;
        const char *hole = lone_hole(line, end, &name, &nlen);
        const env_var *v = hole ? env_find(e, name, nlen) : NULL;
        if (v)
            errors += render_lone(t, v, line, hole, out);
        else
            errors += render_inline(t, e, line, end, lineno, out);
        if (!nl) break;
        line = nl + 1;
    }
    return errors;
}

char *tgt_render_str(const tgt_template *t, const tgt_env *e, tgm_arena *a) {
    if (!t->text) return NULL;
    tgt_buf b;
    tgt_buf_init(&b);
    tgt_render(t, e, &b);
    char *s = tgt_take(&b, a);
    tgt_buf_free(&b);
    return s;
}
