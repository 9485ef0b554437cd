/* The template engine (see template.h for the template rules). */
#include "emit/template.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ environments */

typedef struct env_var {
    const char *name;
    bool is_list;
    const char *value;
    tgs_list items;
} env_var;

struct tgt_env {
    tgm_arena *arena;
    env_var *vars;
    int n, cap;
};

tgt_env *tgt_env_new(tgm_arena *a)
{
    tgt_env *e = tgm_alloc(a, sizeof *e);
    e->arena = a;
    return e;
}

static env_var *env_slot(tgt_env *e, const char *name)
{
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->vars[i].name, name) == 0) return &e->vars[i];
    env_var *v = TGS_PUSH(e->arena, e->vars, e->n, e->cap);
    v->name = tgm_strdup(e->arena, name);
    return v;
}

void tgt_set(tgt_env *e, const char *name, const char *value)
{
    env_var *v = env_slot(e, name);
    v->is_list = false;
    v->value = value ? value : "";
}

void tgt_setf(tgt_env *e, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tgt_set(e, name, tgs_vfmt(e->arena, fmt, ap));
    va_end(ap);
}

void tgt_set_list(tgt_env *e, const char *name, const tgs_list *items)
{
    env_var *v = env_slot(e, name);
    v->is_list = true;
    v->items = *items;
}

static const env_var *env_find(const tgt_env *e, const char *name, size_t n)
{
    for (int i = 0; i < e->n; i++)
        if (strlen(e->vars[i].name) == n && memcmp(e->vars[i].name, name, n) == 0)
            return &e->vars[i];
    return NULL;
}

/* ------------------------------------------------------------------ rendering */

tgt_template tgt_load(tgm_arena *a, const char *dir, const char *name)
{
    tgt_template t = { tgs_fmt(a, "%s/%s", dir, name), NULL };
    FILE *f = fopen(t.path, "rb");
    if (!f) {
        tgm_error((tgm_loc){ t.path, 0, 0 }, "cannot read template: %s", strerror(errno));
        return t;
    }
    tgs_buf b;
    tgs_buf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) tgs_putn(&b, chunk, n);
    fclose(f);
    t.text = tgs_finish(&b, a);
    return t;
}

/* Appends `text` with every line after a newline prefixed by `indent`; empty lines get no
 * indentation so the output has no trailing whitespace. */
static void put_indented(tgs_buf *out, const char *indent, size_t nindent, const char *text)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len) {
            tgs_putn(out, indent, nindent);
            tgs_putn(out, p, len);
        }
        tgs_puts(out, "\n");
        if (!nl) break;
        p = nl + 1;
    }
}

/* If the line [line, end) is whitespace + one `${name}` + whitespace, returns the start of
 * the hole and sets its name span; else NULL. */
static const char *lone_hole(const char *line, const char *end, const char **name, size_t *nlen)
{
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

static int render_lone(const tgt_template *t, const env_var *v, const char *line, const char *hole,
                       tgs_buf *out)
{
    (void)t;
    size_t nindent = (size_t)(hole - line);
    if (!v->is_list) {
        if (*v->value) put_indented(out, line, nindent, v->value);
        return 0;
    }
    for (int i = 0; i < v->items.n; i++) put_indented(out, line, nindent, v->items.items[i]);
    return 0;
}

static int render_inline(const tgt_template *t, const tgt_env *e, const char *line, const char *end,
                         int lineno, tgs_buf *out)
{
    int errors = 0;
    const char *p = line;
    while (p < end) {
        const char *dollar = memchr(p, '$', (size_t)(end - p));
        if (!dollar) {
            tgs_putn(out, p, (size_t)(end - p));
            break;
        }
        tgs_putn(out, p, (size_t)(dollar - p));
        tgm_loc loc = { t->path, lineno, (int)(dollar - line) + 1 };
        if (dollar + 1 < end && dollar[1] == '$') {
            tgs_puts(out, "$");
            p = dollar + 2;
            continue;
        }
        const char *close = dollar + 1 < end && dollar[1] == '{'
                                ? memchr(dollar, '}', (size_t)(end - dollar))
                                : NULL;
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
            tgs_puts(out, v->value);
        }
        p = close + 1;
    }
    tgs_puts(out, "\n");
    return errors;
}

int tgt_render(const tgt_template *t, const tgt_env *e, tgs_buf *out)
{
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
        if (v) errors += render_lone(t, v, line, hole, out);
        else errors += render_inline(t, e, line, end, lineno, out);
        if (!nl) break;
        line = nl + 1;
    }
    return errors;
}

char *tgt_render_str(const tgt_template *t, const tgt_env *e, tgm_arena *a)
{
    if (!t->text) return NULL;
    tgs_buf b;
    tgs_buf_init(&b);
    tgt_render(t, e, &b);
    return tgs_finish(&b, a);
}
