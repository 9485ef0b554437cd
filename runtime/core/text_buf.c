/* A growable text buffer for the runtime's printers (tensor printing, the profiler's table):
 * append bytes or formatted text; an allocation failure sets `oom` and later appends do
 * nothing, so a printer checks once at the end. */
#include "core/rt_private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for `more` bytes plus the terminating NUL; false (and oom) when it cannot grow. */
static bool reserve(tg__text_buf *b, size_t more)
{
    if (b->oom) return false;
    if (b->n + more + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void tg__text_put(tg__text_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n)) return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void tg__text_printf(tg__text_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int w = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    if ((size_t)w < sizeof small) {
        tg__text_put(b, small, (size_t)w);
        return;
    }
    if (!reserve(b, (size_t)w)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)w + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)w;
}

bool tg__array_reserve(void **arr, int64_t *cap, int64_t need, size_t elem, int64_t first)
{
    if (need <= *cap) return true;
    int64_t c = *cap ? *cap : first;
    while (c < need) c *= 2;
    void *p = realloc(*arr, (size_t)c * elem);
    if (!p) return false;
    *arr = p;
    *cap = c;
    return true;
}
