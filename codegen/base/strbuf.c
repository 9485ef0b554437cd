/* String buffers, arena printf, growable arrays, string lists and C string literals (see
 * strbuf.h). */
#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ buffers */

void tgs_buf_init(tgs_buf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void tgs_buf_free(tgs_buf *b)
{
    free(b->data);
    tgs_buf_init(b);
}

static void buf_reserve(tgs_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        fprintf(stderr, "tgen: out of memory\n");
        exit(2);
    }
    b->data = p;
    b->cap = cap;
}

void tgs_putn(tgs_buf *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void tgs_puts(tgs_buf *b, const char *s) { tgs_putn(b, s, strlen(s)); }

void tgs_vprintf(tgs_buf *b, const char *fmt, va_list ap)
{
    /* Format once into the room the buffer has, a second time only when the text is longer
     * (measuring first, then printing, formatted every piece twice). */
    buf_reserve(b, 128);
    size_t room = b->cap - b->len;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(b->data + b->len, room, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        b->data[b->len] = '\0';
        return;
    }
    if ((size_t)n >= room) {
        buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    }
    b->len += (size_t)n;
}

void tgs_printf(tgs_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tgs_vprintf(b, fmt, ap);
    va_end(ap);
}

char *tgs_take(tgs_buf *b, tgm_arena *a)
{
    char *s = tgm_strndup(a, b->data ? b->data : "", b->len);
    b->len = 0;
    if (b->data) b->data[0] = '\0';
    return s;
}

char *tgs_finish(tgs_buf *b, tgm_arena *a)
{
    char *s = tgs_take(b, a);
    tgs_buf_free(b);
    return s;
}

char *tgs_vfmt(tgm_arena *a, const char *fmt, va_list ap)
{
    /* Most strings are short: format once into a stack buffer, and a second time only when
     * the text is longer (formatting twice, to measure and then to print, was a quarter of
     * `tgen --gen`'s time on PyTorch's full spec). */
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    char *p = tgm_alloc(a, n > 0 ? (size_t)n + 1 : 1);
    if (n > 0 && (size_t)n < sizeof small) memcpy(p, small, (size_t)n + 1);
    else if (n > 0) vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *tgs_fmt(tgm_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = tgs_vfmt(a, fmt, ap);
    va_end(ap);
    return p;
}

/* ------------------------------------------------------------------ arrays and lists */

void *tgs_grow(tgm_arena *a, void *old, int count, int need, int *cap, size_t elsize)
{
    if (need <= *cap) return old;
    int ncap = *cap ? *cap * 2 : 4;
    while (ncap < need) ncap *= 2;
    void *p = tgm_alloc(a, (size_t)ncap * elsize);
    if (count) memcpy(p, old, (size_t)count * elsize);
    *cap = ncap;
    return p;
}

void tgs_list_add(tgs_list *l, tgm_arena *a, const char *s)
{
    *TGS_PUSH(a, l->items, l->n, l->cap) = s;
}

void tgs_list_addf(tgs_list *l, tgm_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tgs_list_add(l, a, tgs_vfmt(a, fmt, ap));
    va_end(ap);
}

char *tgs_list_join(const tgs_list *l, tgm_arena *a, const char *sep)
{
    tgs_buf b;
    tgs_buf_init(&b);
    for (int i = 0; i < l->n; i++) {
        if (i) tgs_puts(&b, sep);
        tgs_puts(&b, l->items[i]);
    }
    return tgs_finish(&b, a);
}

/* ------------------------------------------------------------------ C text */

const char *tgs_c_string(tgm_arena *a, const char *text)
{
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_puts(&b, "\"");
    for (const char *p = text; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"' || ch == '\\') tgs_printf(&b, "\\%c", ch);
        else if (ch == '\n') tgs_puts(&b, "\\n");
        else if (ch == '?' && p[1] == '?') tgs_puts(&b, "?\\");
        else if (ch < 0x20 || ch == 0x7f) tgs_printf(&b, "\\%03o", ch);
        else tgs_putn(&b, p, 1);
    }
    tgs_puts(&b, "\"");
    return tgs_finish(&b, a);
}

const char *tgs_c_comment(tgm_arena *a, const char *text)
{
    tgs_buf b;
    tgs_buf_init(&b);
    for (const char *p = text; *p; p++) {
        char ch = *p == '\n' || *p == '\t' || *p == '\r' ? ' ' : *p;
        tgs_putn(&b, &ch, 1);
        if ((p[0] == '*' && p[1] == '/') || (p[0] == '/' && p[1] == '*')) tgs_puts(&b, "\\");
    }
    return tgs_finish(&b, a);
}

const char *tgs_c_int(tgm_arena *a, int64_t v)
{
    if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
    return tgs_fmt(a, "%lld", (long long)v);
}

char *tgs_replace(tgm_arena *a, const char *text, const char *from, const char *to)
{
    tgs_buf b;
    tgs_buf_init(&b);
    size_t n = strlen(from);
    for (const char *p = text, *q; *p; p = q + n) {
        if (!n || !(q = strstr(p, from))) {
            tgs_puts(&b, p);
            break;
        }
        tgs_putn(&b, p, (size_t)(q - p));
        tgs_puts(&b, to);
    }
    return tgs_finish(&b, a);
}
