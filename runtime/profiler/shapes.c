/* Input shapes of a recorded call, as text ("[[90, 2], [64, 2]]"), for the table's grouping
 * and the trace's args. Recording keeps them raw (formatting costs more than the
 * rest of a recorded call); they are formatted only here. */
#include "profiler/profiler_private.h"

#include <stdio.h>

/* Appends to buf[*n..cap), keeping *n at most cap - 1. */
static void advance(size_t cap, size_t *n, int w)
{
    if (w > 0) *n = *n + (size_t)w < cap ? *n + (size_t)w : cap - 1;
}
static void put_s(char *buf, size_t cap, size_t *n, const char *s)
{
    if (*n + 1 < cap) advance(cap, n, snprintf(buf + *n, cap - *n, "%s", s));
}
static void put_i(char *buf, size_t cap, size_t *n, const char *fmt, long long v)
{
    if (*n + 1 < cap) advance(cap, n, snprintf(buf + *n, cap - *n, fmt, v));
}

int tg__prof_shapes_str(const prof_thread *t, const prof_event *e, char *buf, size_t cap)
{
    size_t n = 0;
    if (cap) buf[0] = '\0';
    if (e->shapes < 0) return 0;
    put_s(buf, cap, &n, "[");
    for (int k = 0; k < e->ninputs; k++) {
        const prof_shape *s = &t->shapes[e->shapes + k];
        put_s(buf, cap, &n, k ? ", [" : "[");
        for (int d = 0; d < s->ndim; d++) put_i(buf, cap, &n, d ? ", %lld" : "%lld", s->sizes[d]);
        put_s(buf, cap, &n, "]");
    }
    put_s(buf, cap, &n, "]");
    return (int)n;
}

int64_t tg__prof_count_events(void)
{
    int64_t n = 0;
    for (const prof_thread *t = tg__prof_session.threads; t; t = t->next) n += t->nev;
    return n;
}
