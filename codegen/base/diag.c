/* Diagnostics (see diag.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/diag.h"

static int g_errors;

static void vdiag(tgm_loc loc, const char *what, const char *fmt, va_list ap)
{
    if (loc.file && loc.line > 0)
        fprintf(stderr, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, what);
    else if (loc.file) fprintf(stderr, "%s: %s: ", loc.file, what);
    else fprintf(stderr, "tgen: %s: ", what);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void tgm_error(tgm_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(loc, "error", fmt, ap);
    va_end(ap);
    g_errors++;
}

void tgm_verror(tgm_loc loc, size_t max, const char *fmt, va_list ap)
{
    char *msg = malloc(max + 1);
    if (!msg) {
        fputs("tgen: out of memory\n", stderr);
        abort();
    }
    vsnprintf(msg, max + 1, fmt, ap);
    tgm_error(loc, "%s", msg);
    free(msg);
}

void tgm_note(tgm_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(loc, "note", fmt, ap);
    va_end(ap);
}

int tgm_error_count(void) { return g_errors; }
