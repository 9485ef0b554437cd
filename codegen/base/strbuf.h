/* tgen's helpers for building text, shared by every stage: a growable string buffer, printf
 * into the arena, growable arrays and string lists in the arena, and C string literals.
 * They know nothing of the model; all memory they hand out is the arena's, except a buffer's
 * own (malloc-backed) storage, which tgs_take copies out and tgs_buf_free releases. */
#ifndef TGEN_STRBUF_H
#define TGEN_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

/* ---- string buffer (malloc-backed; the text is always NUL-terminated) ---- */
typedef struct tgs_buf {
    char *data; /* NULL until the first write */
    size_t len, cap;
} tgs_buf;

void tgs_buf_init(tgs_buf *b);
void tgs_buf_free(tgs_buf *b);
void tgs_puts(tgs_buf *b, const char *s);
void tgs_putn(tgs_buf *b, const char *s, size_t n);
void tgs_printf(tgs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tgs_vprintf(tgs_buf *b, const char *fmt, va_list ap);
/* The text so far, copied into the arena; the buffer is emptied for reuse. */
char *tgs_take(tgs_buf *b, tgm_arena *a);
/* tgs_take, then tgs_buf_free: the usual end of a function that built a string. */
char *tgs_finish(tgs_buf *b, tgm_arena *a);

/* text with every occurrence of `from` replaced by `to`. */
char *tgs_replace(tgm_arena *a, const char *text, const char *from, const char *to);
/* printf into a fresh arena string. */
char *tgs_fmt(tgm_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *tgs_vfmt(tgm_arena *a, const char *fmt, va_list ap);

/* ---- growable arrays in the arena ----
 * Returns `old` or a larger copy of it with room for at least `need` elements. The old block
 * stays in the arena (freed with it); doubling keeps the waste below the live size. */
void *tgs_grow(tgm_arena *a, void *old, int count, int need, int *cap, size_t elsize);
/* Appends a zeroed element to the array `arr` of `n` elements and capacity `cap` (all three
 * lvalues) and yields its address: `*TGS_PUSH(a, names, n, cap) = name;`. */
#define TGS_PUSH(a, arr, n, cap) \
    ((arr) = tgs_grow((a), (arr), (n), (n) + 1, &(cap), sizeof *(arr)), &(arr)[(n)++])

/* ---- string lists (arena-backed; a zeroed tgs_list is empty) ---- */
typedef struct tgs_list {
    const char **items;
    int n, cap;
} tgs_list;

void tgs_list_add(tgs_list *l, tgm_arena *a, const char *s);
void tgs_list_addf(tgs_list *l, tgm_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "a, b, c": the items joined by `sep` (an arena string; "" for an empty list). */
char *tgs_list_join(const tgs_list *l, tgm_arena *a, const char *sep);

/* ---- C source text ---- */
/* The text as a C string literal, quotes included: `"` and `\` escaped, a newline as \n,
 * other control characters in octal, `??` as `?\?` (C11 reads `??/` as a trigraph for `\`). */
const char *tgs_c_string(tgm_arena *a, const char *text);
/* Spec text (a schema, a formula, a default, a path) made safe inside a C block comment, on one
 * line: line breaks and tabs become spaces, and `*` `/` pairs are split with a backslash
 * (`*\/`, `/\*`) so that the text can neither close the comment nor open a nested one. Every
 * emitter that writes spec text into a comment goes through this. */
const char *tgs_c_comment(tgm_arena *a, const char *text);
/* v as a C integer expression of type long long: "-3", and INT64_MIN as
 * "(-9223372036854775807LL - 1)" (C has no literal for it: -9223372036854775808 negates a
 * constant too large for long long). */
const char *tgs_c_int(tgm_arena *a, int64_t v);

#endif
