/* The formula lexer: identifiers (qualified names are joined by the parser from `::`),
 * integer and floating literals (C spellings: 2, 0x1f, 1.5, 1e-5, .5, with C++ suffixes
 * f/L/u accepted and ignored), string literals in double or single quotes with C escapes, and
 * the punctuation of the language (`&`, `|` and `;` included: bitwise operators, and the
 * `return x;` of a lambda). Characters the language has no use for (`~`, `#`, `^`, ...) are
 * errors here, with a precise column. C comments are skipped. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formula/formula.h"
#include "base/strbuf.h"

static bool fail(tgf_syntax_error *err, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(tgf_syntax_error *err, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->offset = off;
    return false;
}

/* Longest first: "::" before ":", "<=" before "<". */
static const char *const puncts[] = {
    "::", "==", "!=", "<=", ">=", "&&", "||", "->", "(", ")", "[", "]", "{", "}", ",",
    ".",  "?",  ":",  "+",  "-",  "*",  "/",  "%",  "<", ">", "!", "=", "&", "|", ";",
};

static bool lex_number(tgf_lexer *l, tgf_token *t, tgf_syntax_error *err)
{
    const char *s = l->src + l->pos;
    char *end;
    bool is_float = false;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        errno = 0;
        unsigned long long u = strtoull(s, &end, 16);
        if (u > INT64_MAX) errno = ERANGE; /* formulas compute in int64_t: no wrap to negative */
        t->i = (int64_t)u;
    } else {
        size_t n = strspn(s, "0123456789");
        is_float = s[n] == '.' || s[n] == 'e' || s[n] == 'E';
        errno = 0;
        if (is_float) t->f = strtod(s, &end);
        else t->i = (int64_t)strtoll(s, &end, 10);
    }
    if (errno == ERANGE)
        return fail(err, l->pos, "number '%.*s' is out of range", (int)(end - s), s);
    /* C++ literal suffixes carry no meaning here (the checker types 1.0f as a float). */
    while (*end == 'f' || *end == 'F' || *end == 'l' || *end == 'L' || *end == 'u' || *end == 'U')
        end++;
    if (isalnum((unsigned char)*end) || *end == '_')
        return fail(err, l->pos + (size_t)(end - s), "unexpected '%c' in a number", *end);
    t->kind = is_float ? TGF_TOK_FLOAT : TGF_TOK_INT;
    t->len = (size_t)(end - s);
    return true;
}

static bool lex_string(tgf_lexer *l, tgf_token *t, tgf_syntax_error *err)
{
    const char *s = l->src + l->pos;
    char quote = s[0];
    tgs_buf b;
    tgs_buf_init(&b);
    size_t i = 1;
    for (; s[i] && s[i] != quote; i++) {
        char c = s[i];
        if (c == '\\') {
            static const char esc_in[] = "ntr0\\\"'", esc_out[] = "\n\t\r\0\\\"'";
            const char *e = s[i + 1] ? strchr(esc_in, s[i + 1]) : NULL;
            if (!e) {
                tgs_buf_free(&b);
                return fail(err, l->pos + i, "unknown escape '\\%c' in a string",
                            s[i + 1] ? s[i + 1] : ' ');
            }
            c = esc_out[e - esc_in];
            i++;
        }
        tgs_putn(&b, &c, 1);
    }
    if (!s[i]) {
        tgs_buf_free(&b);
        return fail(err, l->pos, "unterminated string");
    }
    t->kind = TGF_TOK_STR;
    t->text = tgs_finish(&b, l->arena);
    t->len = i + 1;
    return true;
}

bool tgf_lex(tgf_lexer *l, tgf_token *t, tgf_syntax_error *err)
{
    const char *src = l->src;
    memset(t, 0, sizeof *t);
    /* Whitespace and comments (PyTorch names arguments in comments: div(other, "trunc") with
     * the argument name commented out before the string). */
    for (;;) {
        while (isspace((unsigned char)src[l->pos])) l->pos++;
        if (src[l->pos] == '/' && src[l->pos + 1] == '*') {
            const char *end = strstr(src + l->pos + 2, "*/");
            if (!end) return fail(err, l->pos, "unterminated comment");
            l->pos = (size_t)(end + 2 - src);
        } else if (src[l->pos] == '/' && src[l->pos + 1] == '/') {
            while (src[l->pos] && src[l->pos] != '\n') l->pos++;
        } else {
            break;
        }
    }
    t->offset = l->pos;
    const char *s = src + l->pos;
    bool ok = true;
    if (!*s) {
        t->kind = TGF_TOK_EOF;
    } else if (isalpha((unsigned char)*s) || *s == '_') {
        size_t n = 1;
        while (isalnum((unsigned char)s[n]) || s[n] == '_') n++;
        t->kind = TGF_TOK_IDENT;
        t->len = n;
        t->text = tgm_strndup(l->arena, s, n);
    } else if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
        ok = lex_number(l, t, err);
    } else if (*s == '"' || *s == '\'') {
        ok = lex_string(l, t, err);
    } else {
        ok = false;
        for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++) {
            size_t n = strlen(puncts[i]);
            if (!strncmp(s, puncts[i], n)) {
                t->kind = TGF_TOK_PUNCT;
                t->len = n;
                t->text = puncts[i];
                ok = true;
                break;
            }
        }
        if (!ok) return fail(err, l->pos, "unexpected character '%c' in a formula", *s);
    }
    if (ok) l->pos += t->len;
    return ok;
}
