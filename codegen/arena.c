/* The arena that owns every record of the model, a string hash map over it, and tgen's
 * diagnostics. One arena per run: nothing in the model is freed on its own, so parsers can
 * share strings and sub-arrays freely and a failed parse leaks nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

/* ---- arena ---- */

/* Blocks are chained; big requests get a block of their own so that the common block size can
 * stay small. 64 KiB blocks make the PyTorch file (~2,500 entries) need a few hundred blocks. */
enum { TGM_BLOCK = 64 * 1024 };

typedef struct tgm_block {
    struct tgm_block *next;
    size_t used, size;
    _Alignas(max_align_t) unsigned char data[];
} tgm_block;

struct tgm_arena {
    tgm_block *head;
};

static void *xcalloc(size_t n)
{
    void *p = calloc(1, n);
    if (!p) {
        fputs("tgen: out of memory\n", stderr);
        abort();
    }
    return p;
}

tgm_arena *tgm_arena_new(void)
{
    return xcalloc(sizeof(tgm_arena));
}

void tgm_arena_free(tgm_arena *a)
{
    if (!a)
        return;
    for (tgm_block *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}

void *tgm_alloc(tgm_arena *a, size_t n)
{
    const size_t align = _Alignof(max_align_t);
    n = (n + align - 1) & ~(align - 1);
    if (n == 0)
        n = align;
    tgm_block *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t size = n > TGM_BLOCK / 4 ? n : TGM_BLOCK;
        tgm_block *nb = xcalloc(sizeof(tgm_block) + size);
        nb->size = size;
        if (size == n && b) {
            /* A big one-off block goes behind the current one so the current one keeps
             * serving small requests. */
            nb->next = b->next;
            b->next = nb;
            nb->used = n;
            return nb->data;
        }
        nb->next = b;
        a->head = b = nb;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;   /* blocks come from calloc and are never reused, so p is zeroed */
}

char *tgm_strndup(tgm_arena *a, const char *s, size_t n)
{
    char *p = tgm_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *tgm_strdup(tgm_arena *a, const char *s)
{
    return tgm_strndup(a, s, strlen(s));
}

char *tgm__printf(tgm_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = tgm_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void *tgm__grow(tgm_arena *a, void *old, int count, int need, int *cap, size_t elsize)
{
    if (need <= *cap)
        return old;
    int ncap = *cap ? *cap * 2 : 4;
    while (ncap < need)
        ncap *= 2;
    void *p = tgm_alloc(a, (size_t)ncap * elsize);
    if (count)
        memcpy(p, old, (size_t)count * elsize);
    *cap = ncap;
    return p;
}

/* ---- string map ---- */

struct tgm_name_map {
    tgm_arena *arena;
    const char **keys;
    void **vals;
    size_t cap, count;        /* cap is a power of two; load kept under 1/2 */
};

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ull;   /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

tgm_name_map *tgm__map_new(tgm_arena *a)
{
    tgm_name_map *m = tgm_alloc(a, sizeof *m);
    m->arena = a;
    m->cap = 64;
    m->keys = tgm_alloc(a, m->cap * sizeof *m->keys);
    m->vals = tgm_alloc(a, m->cap * sizeof *m->vals);
    return m;
}

static size_t slot_of(const tgm_name_map *m, const char *key)
{
    size_t i = hash_str(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

void *tgm__map_get(const tgm_name_map *m, const char *key)
{
    if (!m)
        return NULL;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->vals[i] : NULL;
}

void *tgm__map_put(tgm_name_map *m, const char *key, void *val)
{
    size_t i = slot_of(m, key);
    if (m->keys[i])
        return m->vals[i];
    if ((m->count + 1) * 2 > m->cap) {
        tgm_name_map big = { m->arena, NULL, NULL, m->cap * 2, 0 };
        big.keys = tgm_alloc(m->arena, big.cap * sizeof *big.keys);
        big.vals = tgm_alloc(m->arena, big.cap * sizeof *big.vals);
        for (size_t j = 0; j < m->cap; j++)
            if (m->keys[j]) {
                size_t k = slot_of(&big, m->keys[j]);
                big.keys[k] = m->keys[j];
                big.vals[k] = m->vals[j];
                big.count++;
            }
        *m = big;
        i = slot_of(m, key);
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return NULL;
}

/* ---- diagnostics ---- */

static int g_errors;

static void vdiag(tgm_loc loc, const char *what, const char *fmt, va_list ap)
{
    if (loc.file && loc.line > 0)
        fprintf(stderr, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, what);
    else if (loc.file)
        fprintf(stderr, "%s: %s: ", loc.file, what);
    else
        fprintf(stderr, "tgen: %s: ", what);
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

void tgm_note(tgm_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(loc, "note", fmt, ap);
    va_end(ap);
}

int tgm_error_count(void)
{
    return g_errors;
}

/* ---- helpers ---- */

bool tgm__is_ident(const char *s)
{
    if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return false;
    for (s++; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

char *tgm__trim_dup(tgm_arena *a, const char *s, size_t n, size_t *lead)
{
    size_t b = 0;
    while (b < n && (s[b] == ' ' || s[b] == '\t'))
        b++;
    while (n > b && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (lead)
        *lead = b;
    return tgm_strndup(a, s + b, n - b);
}

/* Capacity of a pointer array grown by doubling from 4: the count rounded up to a power of
 * two. Deriving it from the count keeps the model's arrays free of capacity fields. */
static void push_ptr(tgm_arena *a, void ***arr, int *n, void *p)
{
    int cap = 4;
    while (cap < *n)
        cap *= 2;
    if (*n == 0 || *n == cap) {
        int ncap = *n == 0 ? 4 : cap * 2;
        void **np = tgm_alloc(a, (size_t)ncap * sizeof *np);
        if (*n)
            memcpy(np, *arr, (size_t)*n * sizeof *np);
        *arr = np;
    }
    (*arr)[(*n)++] = p;
}

void tgm__add_func(tgm_model *m, tgm_func *f)
{
    push_ptr(m->arena, (void ***)&m->funcs, &m->nfuncs, f);
}

void tgm__add_deriv(tgm_model *m, tgm_derivative *d)
{
    push_ptr(m->arena, (void ***)&m->derivs, &m->nderivs, d);
}
