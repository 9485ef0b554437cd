/* The lexer of PyTorch's schema language (the grammar is in parse_schema.c): identifiers,
 * numbers (a complex literal is an error: tensorgen has no complex dtypes), quoted strings,
 * `->` and the punctuation `()[],.*?!=|-`. Its errors, like the parser's, name the offending
 * character at its column in the file (tgm__sp_loc) and stop the schema's parsing. */
#include <stdarg.h>
#include <string.h>

#include "spec/schema_lexer.h"

tgm_loc tgm__sp_loc(const parser *p, size_t off)
{
    return tgm_text_loc(p->loc, p->span, p->s, off);
}

/* Reports the first error of a schema; later ones are consequences of it and are dropped. */
bool tgm__sp_fail(parser *p, size_t off, const char *fmt, ...)
{
    if (p->failed) return false;
    p->failed = true;
    va_list ap;
    va_start(ap, fmt);
    tgm_verror(tgm__sp_loc(p, off), 511, fmt, ap);
    va_end(ap);
    return false;
}

static bool is_alpha(char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool lex_number(parser *p, size_t i)
{
    const char *s = p->s;
    bool is_float = false;
    while (is_digit(s[i])) i++;
    if (s[i] == '.' && is_digit(s[i + 1])) {
        is_float = true;
        for (i++; is_digit(s[i]); i++) {}
    } else if (s[i] == '.' && !is_alpha(s[i + 1])) {
        is_float = true; /* `1.` */
        i++;
    }
    if ((s[i] == 'e' || s[i] == 'E') &&
        (is_digit(s[i + 1]) || ((s[i + 1] == '-' || s[i + 1] == '+') && is_digit(s[i + 2])))) {
        is_float = true;
        for (i += 2; is_digit(s[i]); i++) {}
    }
    /* A complex literal (`2j`, `1.5e3j`): PyTorch's schema language has them, tensorgen has
     * no complex dtypes (a Scalar is a double), so none can be a default. */
    if (s[i] == 'j' && !is_alpha(s[i + 1]) && !is_digit(s[i + 1]))
        return tgm__sp_fail(
            p, p->t.off,
            "complex literal '%.*s' (tensorgen has no complex dtypes: Scalar and float "
            "values are real)",
            (int)(i + 1 - p->t.off), s + p->t.off);
    if (is_alpha(s[i])) return tgm__sp_fail(p, i, "unexpected character '%c' in number", s[i]);
    p->t.kind = is_float ? T_FLOAT : T_INT;
    p->t.len = i - p->t.off;
    return true;
}

static bool lex_string(parser *p, size_t i)
{
    char q = p->s[i];
    for (i++; p->s[i] && p->s[i] != q; i++)
        if (p->s[i] == '\\' && p->s[i + 1]) i++;
    if (!p->s[i]) return tgm__sp_fail(p, p->t.off, "unterminated string");
    p->t.kind = T_STR;
    p->t.len = i + 1 - p->t.off;
    return true;
}

/* Advances to the next token. */
bool tgm__sp_next(parser *p)
{
    if (p->failed) return false;
    const char *s = p->s;
    size_t i = p->pos;
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') i++;
    p->t = (tok){ .off = i };
    char c = s[i];
    bool ok = true;
    if (!c) {
        p->t.kind = T_EOF;
    } else if (is_alpha(c)) {
        size_t j = i + 1;
        while (is_alpha(s[j]) || is_digit(s[j])) j++;
        p->t.kind = T_IDENT;
        p->t.len = j - i;
    } else if (is_digit(c)) {
        ok = lex_number(p, i);
    } else if (c == '\'' || c == '"') {
        ok = lex_string(p, i);
    } else if (c == '-' && s[i + 1] == '>') {
        p->t.kind = T_ARROW;
        p->t.len = 2;
    } else if (strchr("()[],.*?!=|-", c)) {
        p->t.kind = T_PUNCT;
        p->t.ch = c;
        p->t.len = 1;
    } else {
        if (c == '{')
            return tgm__sp_fail(p, i,
                                "unexpected character '{' (C++ braces: a list default is "
                                "written [1, 2], an absent Tensor? None)");
        return tgm__sp_fail(p, i, "unexpected character '%c'", c);
    }
    p->pos = p->t.off + p->t.len;
    return ok;
}

char *tgm__sp_tok_text(const parser *p) { return tgm_strndup(p->a, p->s + p->t.off, p->t.len); }

/* What the current token is, for "expected X, found Y" messages. */
const char *tgm__sp_found(const parser *p)
{
    switch (p->t.kind) {
    case T_EOF: return "end of schema";
    case T_STR: return tgs_fmt(p->a, "the string %.*s", (int)p->t.len, p->s + p->t.off);
    default: return tgs_fmt(p->a, "'%.*s'", (int)p->t.len, p->s + p->t.off);
    }
}

bool tgm__sp_expect(parser *p, char c, const char *what)
{
    if (!tgm__sp_is_punct(p, c))
        return tgm__sp_fail(p, p->t.off, "expected '%c' %s, found %s", c, what, tgm__sp_found(p));
    return tgm__sp_next(p);
}
