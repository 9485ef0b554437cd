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

/* ---- string -> pointer hash map (open addressing), memory in the arena ----
 * Every lookup by name that can run once per entry uses one, so that tgen stays linear in the
 * number of entries. */
typedef struct tgm_name_map tgm_name_map;
tgm_name_map *tgm__map_new(tgm_arena *a);
void *tgm__map_get(const tgm_name_map *m, const char *key);
/* Inserts key -> val unless key is present; returns the value already there, else NULL.
 * The key is not copied: it must live as long as the map (arena strings do). */
void *tgm__map_put(tgm_name_map *m, const char *key, void *val);

#endif
