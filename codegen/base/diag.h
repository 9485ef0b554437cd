/* tgen's diagnostics: every stage reports problems in the spec files (or templates) as
 * `file:line:col: error: message` on stderr and goes on where it can, so that one run shows
 * every error; the count decides the exit status. */
#ifndef TGEN_DIAG_H
#define TGEN_DIAG_H

#include <stdarg.h>
#include <stddef.h>

/* A position in a spec file: 1-based line and column. `file` points at an interned string.
 * Line 0 means the whole file (`file: error: ...`); no file means tgen itself. */
typedef struct tgm_loc {
    const char *file;
    int line, col;
} tgm_loc;

/* Prints `file:line:col: error: <msg>` to stderr and counts the error. */
void tgm_error(tgm_loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* tgm_error with the arguments in a va_list and the message cut to its first `max` bytes (a
 * message quoting the spec's text, which may be of any length). */
void tgm_verror(tgm_loc loc, size_t max, const char *fmt, va_list ap);
/* The number of errors reported so far in this run. */
int tgm_error_count(void);
/* `file:line:col: note: <msg>`, not counted: the second location of a two-place error
 * (the first definition of a duplicate overload, the function a derivative almost matches). */
void tgm_note(tgm_loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
