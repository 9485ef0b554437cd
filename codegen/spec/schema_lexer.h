/* The schema language's lexer (schema_lexer.c): its tokens, the parser state it advances, and
 * the calls the parser's files (parse_schema.c: names, types, arguments and returns;
 * parse_defaults.c: default values) read tokens with. Only those files include it. */
#ifndef TGEN_SCHEMA_LEXER_H
#define TGEN_SCHEMA_LEXER_H

#include <string.h>

#include "spec/frontend.h"

typedef enum { T_EOF, T_IDENT, T_INT, T_FLOAT, T_STR, T_ARROW, T_PUNCT } tok_kind;

typedef struct tok {
    tok_kind kind;
    size_t off, len; /* where the token is in the schema text */
    char ch;         /* T_PUNCT: the character */
} tok;

typedef struct parser {
    tgm_arena *a;
    const char *s;
    tgm_loc loc;
    const tgm_span *span;
    size_t pos;
    tok t; /* the current token */
    bool failed;
} parser;

/* The file position of byte `off` of the schema. */
tgm_loc tgm__sp_loc(const parser *p, size_t off);
/* Reports `msg` at byte `off` of the schema (the first error of a schema stops its parsing) and
 * returns false. */
bool tgm__sp_fail(parser *p, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool tgm__sp_next(parser *p);               /* advances to the next token; false after an error */
char *tgm__sp_tok_text(const parser *p);    /* the current token, in the arena */
const char *tgm__sp_found(const parser *p); /* "'x'", "end of schema": for messages */
bool tgm__sp_expect(parser *p, char c, const char *what);

/* Whether the current token is the punctuation c; an identifier equal to word (the parser asks
 * at every token: inline). */
static inline bool tgm__sp_is_punct(const parser *p, char c)
{
    return p->t.kind == T_PUNCT && p->t.ch == c;
}
static inline bool tgm__sp_tok_is(const parser *p, const char *word)
{
    return p->t.kind == T_IDENT && strlen(word) == p->t.len &&
           !strncmp(p->s + p->t.off, word, p->t.len);
}

#endif
