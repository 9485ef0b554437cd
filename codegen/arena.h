/* The arena that owns every record of tgen's model and every string it emits: one per run (or
 * per emission), freed as a whole, so that parsers and emitters can share strings and
 * sub-arrays freely and a failed parse leaks nothing. */
#ifndef TGEN_ARENA_H
#define TGEN_ARENA_H

#include <stddef.h>

typedef struct tgm_arena tgm_arena;
tgm_arena *tgm_arena_new(void);
void tgm_arena_free(tgm_arena *a);
void *tgm_alloc(tgm_arena *a, size_t n); /* zeroed, never NULL (aborts on OOM) */
char *tgm_strndup(tgm_arena *a, const char *s, size_t n);
char *tgm_strdup(tgm_arena *a, const char *s);

#endif
