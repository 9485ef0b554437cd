/* The template engine of tgen (the buffers and lists it fills are strbuf.h's).
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

#include "spec/model.h"
#include "base/strbuf.h"

/* ---- environments ---- */
typedef struct tgt_env tgt_env;
tgt_env *tgt_env_new(tgm_arena *a);
/* Later settings of a name replace earlier ones, so one environment can be refilled per item. */
void tgt_set(tgt_env *e, const char *name, const char *value);
void tgt_setf(tgt_env *e, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tgt_set_list(tgt_env *e, const char *name, const tgs_list *items);

/* ---- templates ---- */
typedef struct tgt_template {
    const char *path; /* for error messages */
    const char *text;
} tgt_template;

/* Reads `dir/name` into the arena. Reports an error (and returns a template with NULL text)
 * when the file cannot be read. */
tgt_template tgt_load(tgm_arena *a, const char *dir, const char *name);
/* Appends the rendering of t under e to out. Returns the number of errors reported. */
int tgt_render(const tgt_template *t, const tgt_env *e, tgs_buf *out);
/* Renders into a fresh arena string (NULL when the template failed to load). */
char *tgt_render_str(const tgt_template *t, const tgt_env *e, tgm_arena *a);

#endif
