/* What parse_schema.c calls of parse_defaults.c: a default value as written, and whether it fits
 * the argument's type (a bare int broadcast to an int[N] is expanded here). Both read tokens
 * through the lexer (schema_lexer.h). */
#ifndef TGEN_SCHEMA_PARSER_H
#define TGEN_SCHEMA_PARSER_H

#include "spec/schema_lexer.h"

bool tgm__sp_parse_default(parser *p, tgm_default *d);
bool tgm__sp_check_default(parser *p, size_t off, const tgm_type *ty, tgm_default *d);

#endif
