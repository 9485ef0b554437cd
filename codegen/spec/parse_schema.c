/* A recursive-descent parser for PyTorch's schema language:
 *
 *   schema  := [namespace '::'] name ['.' overload] '(' [param {',' param}] ')' '->' returns
 *   param   := '*' | type NAME ['=' default]
 *   type    := BASE ['(' alias ')'] ['?'] ['[' [INT] ']' ['?']]
 *   alias   := SET ['!'] ['->' ('*' | SET)]          SET := NAME {'|' NAME}
 *   returns := '(' [ret {',' ret}] ')' | ret          ret := type [NAME]
 *   default := None | True | False | ['-'] number | ['-'] inf | string | NAME
 *            | '[' [elem {',' elem}] ']'
 *
 * The tokens come from schema_lexer.c, default values from parse_defaults.c. Every error names
 * the offending character: its column is the schema's column plus the offset inside the string
 * (mapped through the YAML scalar's span when it was quoted), and parsing of that schema stops
 * at its first error. */
#include <stdlib.h>
#include <string.h>

#include "spec/schema_parser.h"

/* ---- types ---- */

static bool parse_alias(parser *p, tgm_alias *al)
{
    /* At the token after '('. */
    if (p->t.kind != T_IDENT)
        return tgm__sp_fail(p, p->t.off, "expected an alias set name such as 'a', found %s",
                            tgm__sp_found(p));
    size_t start = p->t.off, end = p->t.off + p->t.len;
    tgm__sp_next(p);
    while (tgm__sp_is_punct(p, '|')) {
        tgm__sp_next(p);
        if (p->t.kind != T_IDENT)
            return tgm__sp_fail(p, p->t.off, "expected an alias set name after '|', found %s",
                                tgm__sp_found(p));
        end = p->t.off + p->t.len;
        tgm__sp_next(p);
    }
    al->set = tgm_strndup(p->a, p->s + start, end - start);
    if (tgm__sp_is_punct(p, '!')) {
        al->is_write = true;
        tgm__sp_next(p);
    }
    if (p->t.kind == T_ARROW) {
        tgm__sp_next(p);
        if (!tgm__sp_is_punct(p, '*') && p->t.kind != T_IDENT)
            return tgm__sp_fail(p, p->t.off, "expected '*' or an alias set after '->', found %s",
                                tgm__sp_found(p));
        al->after = tgm__sp_tok_text(p);
        tgm__sp_next(p);
    }
    return tgm__sp_expect(p, ')', "to close the alias annotation");
}

/* The schema language's spelling of a C++ type a schema wrote instead (TensorPlay's
 * `int64_t`), for the error; NULL when there is none. */
static const char *schema_spelling(const char *text, size_t len)
{
    static const char *const cpp[][2] = {
        { "int64_t", "int" },  { "int32_t", "int" },       { "long", "int" },
        { "double", "float" }, { "DType", "ScalarType" },  { "Dtype", "ScalarType" },
        { "string", "str" },   { "IntArrayRef", "int[]" }, { "TensorList", "Tensor[]" },
        { "Boolean", "bool" },
    };
    for (size_t i = 0; i < sizeof cpp / sizeof cpp[0]; i++)
        if (strlen(cpp[i][0]) == len && !strncmp(cpp[i][0], text, len)) return cpp[i][1];
    return NULL;
}

static bool parse_type(parser *p, tgm_type *ty)
{
    memset(ty, 0, sizeof *ty);
    if (p->t.kind != T_IDENT)
        return tgm__sp_fail(p, p->t.off, "expected a type, found %s", tgm__sp_found(p));
    tgm_base b = tgm__base_named(p->s + p->t.off, p->t.len); /* an identifier (above) */
    const char *instead = schema_spelling(p->s + p->t.off, p->t.len);
    if (b == TGM_BASE_COUNT && instead)
        return tgm__sp_fail(p, p->t.off, "unknown type '%.*s' (the schema language writes '%s')",
                            (int)p->t.len, p->s + p->t.off, instead);
    if (b == TGM_BASE_COUNT)
        return tgm__sp_fail(p, p->t.off, "unknown type '%.*s'", (int)p->t.len, p->s + p->t.off);
    ty->base = b;
    size_t type_off = p->t.off;
    tgm__sp_next(p);
    if (tgm__sp_is_punct(p, '(')) {
        if (ty->base != TGM_TENSOR)
            return tgm__sp_fail(p, p->t.off,
                                "alias annotations are only allowed on Tensor, not '%s'",
                                tgm_base_name(ty->base));
        tgm__sp_next(p);
        if (!parse_alias(p, &ty->alias)) return false;
    }
    if (tgm__sp_is_punct(p, '?')) {
        ty->elem_optional = true;
        tgm__sp_next(p);
    }
    if (tgm__sp_is_punct(p, '[')) {
        ty->is_list = true;
        tgm__sp_next(p);
        if (p->t.kind == T_INT) {
            long n = strtol(p->s + p->t.off, NULL, 10);
            if (n <= 0 || n > 64)
                return tgm__sp_fail(p, p->t.off, "list size must be between 1 and 64");
            ty->list_size = (int)n;
            tgm__sp_next(p);
        }
        if (!tgm__sp_expect(p, ']', "to close the list type")) return false;
        if (tgm__sp_is_punct(p, '?')) {
            ty->list_optional = true;
            tgm__sp_next(p);
        }
    }
    if (tgm__sp_is_punct(p, '[') || tgm__sp_is_punct(p, '?'))
        return tgm__sp_fail(p, p->t.off, "unsupported type: '%c' after '%.*s'", p->t.ch,
                            (int)(p->t.off - type_off), p->s + type_off);
    return !p->failed;
}

/* ---- arguments and returns ---- */

/* The names seen so far in one argument or return list: a scan while there are few, a hash map
 * once there are more, so that a schema with thousands of arguments is not checked pairwise. */
enum { NAME_SET_SMALL = 16 };
typedef struct name_set {
    const char *small[NAME_SET_SMALL];
    int n;
    tgm_name_map *map;
} name_set;

/* Adds name; false when it was already there. */
static bool name_set_add(tgm_arena *a, name_set *s, const char *name)
{
    if (!s->map) {
        for (int i = 0; i < s->n; i++)
            if (!strcmp(s->small[i], name)) return false;
        if (s->n < NAME_SET_SMALL) {
            s->small[s->n++] = name;
            return true;
        }
        s->map = tgm__map_new(a);
        for (int i = 0; i < s->n; i++) tgm__map_put(s->map, s->small[i], (void *)s->small[i]);
    }
    return !tgm__map_put(s->map, name, (void *)name);
}

static bool parse_params(parser *p, tgm_schema *out)
{
    int cap = 0;
    name_set names = { 0 };
    bool kwarg = false, seen_default = false;
    size_t star_off = 0;
    if (tgm__sp_is_punct(p, ')')) return true;
    for (;;) {
        if (tgm__sp_is_punct(p, '*')) {
            if (kwarg) return tgm__sp_fail(p, p->t.off, "'*' appears twice");
            kwarg = true;
            star_off = p->t.off;
            tgm__sp_next(p);
        } else {
            tgm_arg *arg = TGS_PUSH(p->a, out->args, out->nargs, cap);
            memset(arg, 0, sizeof *arg);
            arg->loc = tgm__sp_loc(p, p->t.off);
            if (!parse_type(p, &arg->type)) return false;
            if (p->t.kind != T_IDENT)
                return tgm__sp_fail(p, p->t.off, "expected an argument name, found %s",
                                    tgm__sp_found(p));
            arg->name = tgm__sp_tok_text(p);
            size_t name_off = p->t.off;
            if (!name_set_add(p->a, &names, arg->name))
                return tgm__sp_fail(p, name_off, "duplicate argument name '%s'", arg->name);
            tgm__sp_next(p);
            arg->kwarg_only = kwarg;
            if (tgm__sp_is_punct(p, '=')) {
                tgm__sp_next(p);
                size_t def_off = p->t.off;
                if (!tgm__sp_parse_default(p, &arg->def) ||
                    !tgm__sp_check_default(p, def_off, &arg->type, &arg->def))
                    return false;
                seen_default |= !kwarg;
            } else if (seen_default && !kwarg) {
                return tgm__sp_fail(p, name_off,
                                    "argument '%s' without a default follows one with a default",
                                    arg->name);
            }
            arg->is_out = kwarg && arg->type.base == TGM_TENSOR && arg->type.alias.is_write;
        }
        if (tgm__sp_is_punct(p, ')')) break;
        if (!tgm__sp_expect(p, ',', "or ')' after an argument")) return false;
    }
    if (kwarg && (out->nargs == 0 || !out->args[out->nargs - 1].kwarg_only))
        return tgm__sp_fail(p, star_off, "'*' must be followed by keyword-only arguments");
    return true;
}

static bool parse_return(parser *p, tgm_return *r, size_t *name_off)
{
    memset(r, 0, sizeof *r);
    r->loc = tgm__sp_loc(p, p->t.off);
    if (!parse_type(p, &r->type)) return false;
    if (p->t.kind == T_IDENT) {
        *name_off = p->t.off;
        r->name = tgm__sp_tok_text(p);
        tgm__sp_next(p);
    }
    return true;
}

static bool parse_returns(parser *p, tgm_schema *out)
{
    int cap = 0;
    if (!tgm__sp_is_punct(p, '(')) {
        tgm_return *r = TGS_PUSH(p->a, out->rets, out->nrets, cap);
        size_t name_off;
        return parse_return(p, r, &name_off);
    }
    tgm__sp_next(p);
    name_set names = { 0 };
    while (!tgm__sp_is_punct(p, ')')) {
        if (out->nrets > 0 && !tgm__sp_expect(p, ',', "or ')' between returns")) return false;
        tgm_return *r = TGS_PUSH(p->a, out->rets, out->nrets, cap);
        size_t name_off = 0;
        if (!parse_return(p, r, &name_off)) return false;
        if (r->name && !name_set_add(p->a, &names, r->name))
            return tgm__sp_fail(p, name_off, "duplicate return name '%s'", r->name);
    }
    return tgm__sp_next(p);
}

/* ---- names ---- */

/* `ns::` before the name (`myops::nms(...)`, as torchvision's m.def strings write it): the
 * namespace of the operator library it belongs to. */
static bool parse_namespace(parser *p, tgm_schema *out)
{
    if (p->t.kind != T_IDENT || p->s[p->pos] != ':') return true;
    if (p->s[p->pos + 1] != ':')
        return tgm__sp_fail(p, p->pos, "expected '::' after the namespace '%s'",
                            tgm__sp_tok_text(p));
    out->ns = tgm__sp_tok_text(p);
    p->pos += 2;
    tgm__sp_next(p);
    if (p->t.kind != T_IDENT)
        return tgm__sp_fail(p, p->t.off, "expected an operator name after '%s::', found %s",
                            out->ns, tgm__sp_found(p));
    return true;
}

static bool parse_name(parser *p, tgm_schema *out)
{
    if (!parse_namespace(p, out)) return false;
    if (p->t.kind != T_IDENT)
        return tgm__sp_fail(p, p->t.off, "expected an operator name, found %s", tgm__sp_found(p));
    char *name = tgm__sp_tok_text(p);
    size_t len = p->t.len;
    tgm__sp_next(p);
    out->overload = "";
    if (tgm__sp_is_punct(p, '.')) {
        tgm__sp_next(p);
        if (p->t.kind != T_IDENT)
            return tgm__sp_fail(p, p->t.off, "expected an overload name after '.', found %s",
                                tgm__sp_found(p));
        out->overload = tgm__sp_tok_text(p);
        tgm__sp_next(p);
    }
    out->dunder = len > 4 && !strncmp(name, "__", 2) && !strcmp(name + len - 2, "__");
    out->inplace = !out->dunder && name[len - 1] == '_';
    out->base = out->inplace ? tgm_strndup(p->a, name, len - 1) : name;
    if (out->inplace && !*out->base)
        return tgm__sp_fail(p, 0, "operator name '_' has no base name");
    out->full_name = *out->overload ? tgs_fmt(p->a, "%s.%s", name, out->overload) : name;
    return true;
}

int tgm__parse_schema_span(tgm_arena *a, const char *text, tgm_loc loc, const tgm_span *span,
                           tgm_schema *out)
{
    parser p = { .a = a, .s = text, .loc = loc, .span = span };
    memset(out, 0, sizeof *out);
    out->loc = loc;
    out->span = span;
    out->text = tgm_strdup(a, text);
    if (!tgm__sp_next(&p) || !parse_name(&p, out)) return 1;
    if (!tgm__sp_expect(&p, '(', "after the operator name") || !parse_params(&p, out) ||
        !tgm__sp_expect(&p, ')', "after the arguments"))
        return 1;
    if (p.t.kind != T_ARROW)
        return tgm__sp_fail(&p, p.t.off, "expected '->' after the arguments, found %s",
                            tgm__sp_found(&p)),
               1;
    tgm__sp_next(&p);
    if (!parse_returns(&p, out)) return 1;
    if (p.t.kind != T_EOF)
        return tgm__sp_fail(&p, p.t.off, "unexpected %s after the returns", tgm__sp_found(&p)), 1;
    return p.failed ? 1 : 0;
}

int tgm_parse_schema(tgm_arena *a, const char *text, tgm_loc loc, tgm_schema *out)
{
    return tgm__parse_schema_span(a, text, loc, NULL, out);
}
