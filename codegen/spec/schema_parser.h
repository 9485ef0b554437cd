/* The schema parser's shared parts (parse_schema.c: the lexer, types, arguments and returns;
 * parse_defaults.c: default values): its token and parser state, and the lexer's calls. Only
 * those two files include it. */
#ifndef TGEN_SCHEMA_PARSER_H
#define TGEN_SCHEMA_PARSER_H

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

/* Reports `msg` at byte `off` of the schema (the first error of a schema stops its parsing) and
 * returns false. */
bool tgm__sp_fail(parser *p, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool tgm__sp_next(parser *p); /* advances to the next token; false after an error */
bool tgm__sp_is_punct(const parser *p, char c);
char *tgm__sp_tok_text(const parser *p);                /* the current token, in the arena */
bool tgm__sp_tok_is(const parser *p, const char *word); /* an identifier equal to word */
const char *tgm__sp_found(const parser *p);             /* "'x'", "end of schema": for messages */
bool tgm__sp_expect(parser *p, char c, const char *what);

/* parse_defaults.c: a default value as written, and whether it fits the argument's type (a
 * bare int broadcast to an int[N] is expanded here). */
bool tgm__sp_parse_default(parser *p, tgm_default *d);
bool tgm__sp_check_default(parser *p, size_t off, const tgm_type *ty, tgm_default *d);

#endif
