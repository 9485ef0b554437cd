/* The template engine of tgen, and the growable string buffer the emitters write into.
 *
 * A template is text with `${name}` holes. A hole is filled from an environment of named
 * values; a value is either one string or a list of strings.
 *   - A hole inline in a line is replaced by its (string) value.
 *   - A hole alone on its line (only whitespace around it) is replaced by its value's lines,
 *     each indented like the hole; a list puts each item there, one after the other, so a
 *     list of declarations lands one per line at the hole's indentation. An empty value or
 *     an empty list removes the line entirely (optional blocks need no blank-line cleanup).
 *   - A list used inline is an error, as is a hole with no value: both are reported as
 *     `template-file:line:col: error: ...` through tgm_error.
 *   - `$$` is a literal `$`.
 * Logic stays in the C emitters; templates hold the fixed text. */
#ifndef TGEN_TEMPLATE_H
#define TGEN_TEMPLATE_H

#include <stdarg.h>
#include <stddef.h>

#include "model.h"

/* ---- string buffer (malloc-backed; the text is always NUL-terminated) ---- */
typedef struct tgt_buf {
    char *data;
    size_t len, cap;
} tgt_buf;

void tgt_buf_init(tgt_buf *b);
void tgt_buf_free(tgt_buf *b);
void tgt_puts(tgt_buf *b, const char *s);
void tgt_putn(tgt_buf *b, const char *s, size_t n);
void tgt_printf(tgt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tgt_vprintf(tgt_buf *b, const char *fmt, va_list ap);
/* The text so far, copied into the arena; the buffer is emptied for reuse. */
char *tgt_take(tgt_buf *b, tgm_arena *a);
/* printf into a fresh arena string. */
char *tgt_fmt(tgm_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- string lists (arena-backed) ---- */
typedef struct tgt_list {
    const char **items;
    int n, cap;
} tgt_list;

void tgt_list_add(tgt_list *l, tgm_arena *a, const char *s);
void tgt_list_addf(tgt_list *l, tgm_arena *a, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "a, b, c": the items joined by `sep` (an arena string; "" for an empty list). */
char *tgt_list_join(const tgt_list *l, tgm_arena *a, const char *sep);

/* ---- environments ---- */
typedef struct tgt_env tgt_env;
tgt_env *tgt_env_new(tgm_arena *a);
/* Later settings of a name replace earlier ones, so one environment can be refilled per item. */
void tgt_set(tgt_env *e, const char *name, const char *value);
void tgt_setf(tgt_env *e, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void tgt_set_list(tgt_env *e, const char *name, const tgt_list *items);

/* ---- templates ---- */
typedef struct tgt_template {
    const char *path;        /* for error messages */
    const char *text;
} tgt_template;

/* Reads `dir/name` into the arena. Reports an error (and returns a template with NULL text)
 * when the file cannot be read. */
tgt_template tgt_load(tgm_arena *a, const char *dir, const char *name);
/* Appends the rendering of t under e to out. Returns the number of errors reported. */
int tgt_render(const tgt_template *t, const tgt_env *e, tgt_buf *out);
/* Renders into a fresh arena string (NULL when the template failed to load). */
char *tgt_render_str(const tgt_template *t, const tgt_env *e, tgm_arena *a);

#endif
