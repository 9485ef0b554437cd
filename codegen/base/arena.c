/* The arena that owns every record of the model (arena.h), and a string hash map over it
 * (frontend.h). One arena per run: nothing in the model is freed on its own, so parsers can
 * share strings and sub-arrays freely and a failed parse leaks nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"

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

tgm_arena *tgm_arena_new(void) { return xcalloc(sizeof(tgm_arena)); }

void tgm_arena_free(tgm_arena *a)
{
    if (!a) return;
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
    if (n == 0) n = align;
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
    return p; /* blocks come from calloc and are never reused, so p is zeroed */
}

char *tgm_strndup(tgm_arena *a, const char *s, size_t n)
{
    char *p = tgm_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *tgm_strdup(tgm_arena *a, const char *s) { return tgm_strndup(a, s, strlen(s)); }

/* ---- string map ---- */

struct tgm_name_map {
    tgm_arena *arena;
    const char **keys;
    void **vals;
    size_t cap, count; /* cap is a power of two; load kept under 1/2 */
};

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
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
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
    return i;
}

void *tgm__map_get(const tgm_name_map *m, const char *key)
{
    if (!m) return NULL;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->vals[i] : NULL;
}

void *tgm__map_put(tgm_name_map *m, const char *key, void *val)
{
    size_t i = slot_of(m, key);
    if (m->keys[i]) return m->vals[i];
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
