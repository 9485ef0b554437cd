/* Reading an exported Chrome trace back with a real JSON parser (cJSON) for the profiler
 * tests: the complete events ("ph": "X") as a flat array, and the nesting checks. */
#ifndef TG_TESTS_TRACE_JSON_H
#define TG_TESTS_TRACE_JSON_H

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tev {
    const char *name, *cat, *ph;
    double ts, dur;
    long long tid, id;
    const cJSON *args;
} tev;

typedef struct trace {
    cJSON *root;
    tev *ev;
    int n;
} trace;

/* Parses the file at path (fails the test when it is not JSON of the expected shape). */
static inline trace trace_load(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    cr_assert(text && fread(text, 1, (size_t)len, f) == (size_t)len);
    text[len] = '\0';
    fclose(f);
    trace t = { cJSON_Parse(text), NULL, 0 };
    free(text);
    cr_assert(t.root, "the trace is not valid JSON (near: %.40s)", cJSON_GetErrorPtr());
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(t.root, "traceEvents");
    cr_assert(cJSON_IsArray(evs), "no traceEvents array");
    t.ev = calloc((size_t)cJSON_GetArraySize(evs) + 1, sizeof *t.ev);
    const cJSON *e;
    cJSON_ArrayForEach(e, evs)
    {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        cr_assert(cJSON_IsString(ph), "an event without ph");
        tev *v = &t.ev[t.n++];
        v->ph = ph->valuestring;
        const cJSON *x;
        if ((x = cJSON_GetObjectItemCaseSensitive(e, "name")) && cJSON_IsString(x))
            v->name = x->valuestring;
        if ((x = cJSON_GetObjectItemCaseSensitive(e, "cat")) && cJSON_IsString(x))
            v->cat = x->valuestring;
        if ((x = cJSON_GetObjectItemCaseSensitive(e, "ts"))) v->ts = x->valuedouble;
        if ((x = cJSON_GetObjectItemCaseSensitive(e, "dur"))) v->dur = x->valuedouble;
        if ((x = cJSON_GetObjectItemCaseSensitive(e, "tid"))) v->tid = (long long)x->valuedouble;
        if ((x = cJSON_GetObjectItemCaseSensitive(e, "id"))) v->id = (long long)x->valuedouble;
        v->args = cJSON_GetObjectItemCaseSensitive(e, "args");
        if (strcmp(v->ph, "X") == 0) cr_assert(v->name && v->dur >= 0, "a bad complete event");
    }
    return t;
}

static inline void trace_free(trace *t)
{
    cJSON_Delete(t->root);
    free(t->ev);
}

static inline bool tev_is(const tev *e, const char *ph, const char *name)
{
    return strcmp(e->ph, ph) == 0 && (!name || (e->name && strcmp(e->name, name) == 0));
}

/* b lies within a's [ts, ts + dur] on the same track (times are printed to the ns). */
static inline bool tev_inside(const tev *b, const tev *a)
{
    return a->tid == b->tid && b->ts >= a->ts - 1e-3 && b->ts + b->dur <= a->ts + a->dur + 1e-3;
}

/* Every two complete events on one CPU track are nested or disjoint. */
static inline void trace_check_nesting(const trace *t)
{
    for (int i = 0; i < t->n; i++)
        for (int j = 0; j < t->n; j++) {
            const tev *a = &t->ev[i], *b = &t->ev[j];
            if (i == j || !tev_is(a, "X", NULL) || !tev_is(b, "X", NULL) || a->tid != b->tid)
                continue;
            if (strcmp(a->cat, "kernel") == 0 || strcmp(b->cat, "kernel") == 0) continue;
            bool disjoint = b->ts >= a->ts + a->dur - 1e-3 || a->ts >= b->ts + b->dur - 1e-3;
            cr_assert(disjoint || tev_inside(a, b) || tev_inside(b, a),
                      "%s [%.3f, +%.3f] and %s [%.3f, +%.3f] overlap without nesting", a->name,
                      a->ts, a->dur, b->name, b->ts, b->dur);
        }
}

/* The complete event on track tid that starts at ts (a flow's end points at one); the
 * longest when several do. */
static inline const tev *trace_at(const trace *t, long long tid, double ts)
{
    const tev *best = NULL;
    for (int i = 0; i < t->n; i++) {
        const tev *e = &t->ev[i];
        if (!tev_is(e, "X", NULL) || e->tid != tid || strcmp(e->cat, "kernel") == 0) continue;
        if (e->ts < ts - 1e-3 || e->ts > ts + 1e-3) continue;
        if (!best || e->dur > best->dur) best = e;
    }
    return best;
}

#endif
