/* A lexer and recursive-descent parser for PyTorch's schema language:
 *
 *   schema  := name ['.' overload] '(' [param {',' param}] ')' '->' returns
 *   param   := '*' | type NAME ['=' default]
 *   type    := BASE ['(' alias ')'] ['?'] ['[' [INT] ']' ['?']]
 *   alias   := SET ['!'] ['->' ('*' | SET)]          SET := NAME {'|' NAME}
 *   returns := '(' [ret {',' ret}] ')' | ret          ret := type [NAME]
 *   default := None | True | False | ['-'] number | ['-'] inf | string | NAME
 *            | '[' [elem {',' elem}] ']'
 *
 * Every error names the offending character: its column is the schema's column plus the
 * offset inside the string (mapped through the YAML scalar's span when it was quoted), and
 * parsing of that schema stops at its first error. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

/* Names as the schema language writes them, indexed by tgm_base. */
static const char *const base_names[TGM_BASE_COUNT] = {
    [TGM_TENSOR] = "Tensor",
    [TGM_INT] = "int",
    [TGM_SYMINT] = "SymInt",
    [TGM_FLOAT] = "float",
    [TGM_BOOL] = "bool",
    [TGM_STR] = "str",
    [TGM_SCALAR] = "Scalar",
    [TGM_SCALAR_TYPE] = "ScalarType",
    [TGM_LAYOUT] = "Layout",
    [TGM_DEVICE] = "Device",
    [TGM_MEMORY_FORMAT] = "MemoryFormat",
    [TGM_GENERATOR] = "Generator",
    [TGM_DIMNAME] = "Dimname",
    [TGM_STORAGE] = "Storage",
    [TGM_STREAM] = "Stream",
    [TGM_QSCHEME] = "QScheme",
    [TGM_CONST_QUANTIZER_PTR] = "ConstQuantizerPtr",
    [TGM_SYMFLOAT] = "SymFloat",
    [TGM_DEVICE_INDEX] = "DeviceIndex",
    [TGM_SYMBOOL] = "SymBool",
};

const char *tgm_base_name(tgm_base b) { return (unsigned)b < TGM_BASE_COUNT ? base_names[b] : "?"; }

/* ---- lexer ---- */

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

static tgm_loc loc_at(const parser *p, size_t off)
{
    return tgm_text_loc(p->loc, p->span, p->s, off);
}

/* Reports the first error of a schema; later ones are consequences of it and are dropped. */
static bool fail(parser *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(parser *p, size_t off, const char *fmt, ...)
{
    if (p->failed) return false;
    p->failed = true;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tgm_error(loc_at(p, off), "%s", msg);
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
        return fail(p, p->t.off,
                    "complex literal '%.*s' (tensorgen has no complex dtypes: Scalar and float "
                    "values are real)",
                    (int)(i + 1 - p->t.off), s + p->t.off);
    if (is_alpha(s[i])) return fail(p, i, "unexpected character '%c' in number", s[i]);
    p->t.kind = is_float ? T_FLOAT : T_INT;
    p->t.len = i - p->t.off;
    return true;
}

static bool lex_string(parser *p, size_t i)
{
    char q = p->s[i];
    for (i++; p->s[i] && p->s[i] != q; i++)
        if (p->s[i] == '\\' && p->s[i + 1]) i++;
    if (!p->s[i]) return fail(p, p->t.off, "unterminated string");
    p->t.kind = T_STR;
    p->t.len = i + 1 - p->t.off;
    return true;
}

/* Advances to the next token. */
static bool next(parser *p)
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
        return fail(p, i, "unexpected character '%c'", c);
    }
    p->pos = p->t.off + p->t.len;
    return ok;
}

static bool is_punct(const parser *p, char c) { return p->t.kind == T_PUNCT && p->t.ch == c; }

static char *tok_text(const parser *p) { return tgm_strndup(p->a, p->s + p->t.off, p->t.len); }

static bool tok_is(const parser *p, const char *word)
{
    return p->t.kind == T_IDENT && strlen(word) == p->t.len &&
           !strncmp(p->s + p->t.off, word, p->t.len);
}

/* What the current token is, for "expected X, found Y" messages. */
static const char *found(const parser *p)
{
    switch (p->t.kind) {
    case T_EOF: return "end of schema";
    case T_STR: return tgs_fmt(p->a, "the string %.*s", (int)p->t.len, p->s + p->t.off);
    default: return tgs_fmt(p->a, "'%.*s'", (int)p->t.len, p->s + p->t.off);
    }
}

static bool expect(parser *p, char c, const char *what)
{
    if (!is_punct(p, c)) return fail(p, p->t.off, "expected '%c' %s, found %s", c, what, found(p));
    return next(p);
}

/* ---- types ---- */

static bool parse_alias(parser *p, tgm_alias *al)
{
    /* At the token after '('. */
    if (p->t.kind != T_IDENT)
        return fail(p, p->t.off, "expected an alias set name such as 'a', found %s", found(p));
    size_t start = p->t.off, end = p->t.off + p->t.len;
    next(p);
    while (is_punct(p, '|')) {
        next(p);
        if (p->t.kind != T_IDENT)
            return fail(p, p->t.off, "expected an alias set name after '|', found %s", found(p));
        end = p->t.off + p->t.len;
        next(p);
    }
    al->set = tgm_strndup(p->a, p->s + start, end - start);
    if (is_punct(p, '!')) {
        al->is_write = true;
        next(p);
    }
    if (p->t.kind == T_ARROW) {
        next(p);
        if (!is_punct(p, '*') && p->t.kind != T_IDENT)
            return fail(p, p->t.off, "expected '*' or an alias set after '->', found %s", found(p));
        al->after = tok_text(p);
        next(p);
    }
    return expect(p, ')', "to close the alias annotation");
}

static bool parse_type(parser *p, tgm_type *ty)
{
    memset(ty, 0, sizeof *ty);
    if (p->t.kind != T_IDENT) return fail(p, p->t.off, "expected a type, found %s", found(p));
    int b = 0;
    while (b < TGM_BASE_COUNT && !tok_is(p, base_names[b])) b++;
    if (b == TGM_BASE_COUNT)
        return fail(p, p->t.off, "unknown type '%.*s'", (int)p->t.len, p->s + p->t.off);
    ty->base = (tgm_base)b;
    size_t type_off = p->t.off;
    next(p);
    if (is_punct(p, '(')) {
        if (ty->base != TGM_TENSOR)
            return fail(p, p->t.off, "alias annotations are only allowed on Tensor, not '%s'",
                        base_names[b]);
        next(p);
        if (!parse_alias(p, &ty->alias)) return false;
    }
    if (is_punct(p, '?')) {
        ty->elem_optional = true;
        next(p);
    }
    if (is_punct(p, '[')) {
        ty->is_list = true;
        next(p);
        if (p->t.kind == T_INT) {
            long n = strtol(p->s + p->t.off, NULL, 10);
            if (n <= 0 || n > 64) return fail(p, p->t.off, "list size must be between 1 and 64");
            ty->list_size = (int)n;
            next(p);
        }
        if (!expect(p, ']', "to close the list type")) return false;
        if (is_punct(p, '?')) {
            ty->list_optional = true;
            next(p);
        }
    }
    if (is_punct(p, '[') || is_punct(p, '?'))
        return fail(p, p->t.off, "unsupported type: '%c' after '%.*s'", p->t.ch,
                    (int)(p->t.off - type_off), p->s + type_off);
    return !p->failed;
}

/* ---- defaults ---- */

static char *decode_string(tgm_arena *a, const char *s, size_t len)
{
    char *out = tgm_alloc(a, len + 1), *o = out;
    for (size_t i = 1; i + 1 < len; i++) {
        char c = s[i];
        if (c == '\\' && i + 2 < len) {
            c = s[++i];
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
        }
        *o++ = c;
    }
    *o = '\0';
    return out;
}

/* One number, optionally negative, or inf/nan. Sets *is_float. */
static bool parse_number(parser *p, int64_t *i, double *f, bool *is_float)
{
    bool neg = false;
    size_t off = p->t.off;
    if (is_punct(p, '-')) {
        neg = true;
        next(p);
    }
    if (tok_is(p, "inf") || tok_is(p, "nan")) {
        *is_float = true;
        *f = tok_is(p, "inf") ? (neg ? -INFINITY : INFINITY) : NAN;
        return next(p);
    }
    if (p->t.kind != T_INT && p->t.kind != T_FLOAT)
        return fail(p, neg ? p->t.off : off, "expected a number, found %s", found(p));
    char *text = tok_text(p);
    errno = 0;
    *is_float = p->t.kind == T_FLOAT;
    if (*is_float) {
        *f = strtod(text, NULL);
        if (neg) *f = -*f;
    } else {
        unsigned long long u = strtoull(text, NULL, 10);
        if (errno || u > (unsigned long long)INT64_MAX + neg)
            return fail(p, p->t.off, "integer '%s' does not fit in 64 bits", text);
        *i = neg ? (int64_t)(0 - u) : (int64_t)u;
        *f = (double)*i;
    }
    return next(p);
}

static bool parse_list_default(parser *p, tgm_default *d)
{
    int64_t *ints = NULL;
    double *floats = NULL;
    int n = 0, icap = 0, fcap = 0, nf = 0;
    bool any_float = false, any_bool = false, any_num = false;
    next(p); /* '[' */
    while (!is_punct(p, ']')) {
        if (n > 0 && !expect(p, ',', "between list elements")) return false;
        int64_t iv = 0;
        double fv = 0;
        bool isf = false;
        if (tok_is(p, "True") || tok_is(p, "False")) {
            any_bool = true;
            iv = tok_is(p, "True");
            fv = (double)iv;
            next(p);
        } else if (p->t.kind == T_INT || p->t.kind == T_FLOAT || is_punct(p, '-') ||
                   tok_is(p, "inf")) {
            any_num = true;
            if (!parse_number(p, &iv, &fv, &isf)) return false;
            any_float |= isf;
        } else {
            return fail(p, p->t.off, "expected a number or a bool in the list default, found %s",
                        found(p));
        }
        *TGS_PUSH(p->a, ints, n, icap) = iv;
        *TGS_PUSH(p->a, floats, nf, fcap) = fv;
    }
    if (any_bool && any_num) return fail(p, p->t.off, "list default mixes bools and numbers");
    d->kind = any_bool ? TGM_DEF_BOOL_LIST : any_float ? TGM_DEF_FLOAT_LIST : TGM_DEF_INT_LIST;
    d->ints = ints;
    d->floats = floats;
    d->n = n;
    return next(p); /* ']' */
}

static bool parse_default(parser *p, tgm_default *d)
{
    size_t start = p->t.off;
    if (tok_is(p, "None")) {
        d->kind = TGM_DEF_NONE;
        next(p);
    } else if (tok_is(p, "True") || tok_is(p, "False")) {
        d->kind = TGM_DEF_BOOL;
        d->i = tok_is(p, "True");
        next(p);
    } else if (p->t.kind == T_STR) {
        d->kind = TGM_DEF_STR;
        d->str = decode_string(p->a, p->s + p->t.off, p->t.len);
        next(p);
    } else if (is_punct(p, '[')) {
        if (!parse_list_default(p, d)) return false;
    } else if (p->t.kind == T_INT || p->t.kind == T_FLOAT || is_punct(p, '-') || tok_is(p, "inf") ||
               tok_is(p, "nan")) {
        bool isf;
        if (!parse_number(p, &d->i, &d->f, &isf)) return false;
        d->kind = isf ? TGM_DEF_FLOAT : TGM_DEF_INT;
    } else if (p->t.kind == T_IDENT) {
        d->kind = TGM_DEF_IDENT;
        d->str = tok_text(p);
        next(p);
    } else {
        return fail(p, p->t.off, "expected a default value, found %s", found(p));
    }
    size_t end = p->t.off;
    while (end > start && (p->s[end - 1] == ' ' || p->s[end - 1] == '\t')) end--;
    d->text = tgm_strndup(p->a, p->s + start, end - start);
    return !p->failed;
}

static bool is_intlike(tgm_base b)
{
    return b == TGM_INT || b == TGM_SYMINT || b == TGM_DEVICE_INDEX;
}
static bool is_boollike(tgm_base b) { return b == TGM_BOOL || b == TGM_SYMBOOL; }
static bool is_floatlike(tgm_base b)
{
    return b == TGM_FLOAT || b == TGM_SYMFLOAT || b == TGM_SCALAR;
}

/* Does the default fit the type? Broadcasts a bare int to an int[N] (PyTorch's `int[2]
 * stride=1` means [1, 1]). */
static bool check_default(parser *p, size_t off, const tgm_type *ty, tgm_default *d)
{
    tgm_base b = ty->base;
    bool ok;
    switch (d->kind) {
    case TGM_DEF_NONE: ok = ty->is_list ? ty->list_optional : ty->elem_optional; break;
    case TGM_DEF_BOOL: ok = !ty->is_list && is_boollike(b); break;
    case TGM_DEF_INT:
        if (ty->is_list && ty->list_size > 0 && (is_intlike(b) || b == TGM_BOOL)) {
            int64_t *v = tgm_alloc(p->a, (size_t)ty->list_size * sizeof *v);
            for (int k = 0; k < ty->list_size; k++) v[k] = d->i;
            d->kind = TGM_DEF_INT_LIST;
            d->ints = v;
            d->n = ty->list_size;
            ok = is_intlike(b);
        } else {
            ok = !ty->is_list && (is_intlike(b) || is_floatlike(b));
        }
        break;
    case TGM_DEF_FLOAT: ok = !ty->is_list && is_floatlike(b); break;
    case TGM_DEF_STR: ok = !ty->is_list && b == TGM_STR; break;
    case TGM_DEF_INT_LIST:
    case TGM_DEF_FLOAT_LIST:
    case TGM_DEF_BOOL_LIST:
        if (!ty->is_list) {
            ok = false;
        } else if (d->n == 0) {
            ok = b != TGM_TENSOR;
            d->kind = is_floatlike(b)  ? TGM_DEF_FLOAT_LIST
                      : is_boollike(b) ? TGM_DEF_BOOL_LIST
                                       : TGM_DEF_INT_LIST;
        } else if (d->kind == TGM_DEF_INT_LIST) {
            ok = is_intlike(b) || is_floatlike(b);
            if (ok && is_floatlike(b)) d->kind = TGM_DEF_FLOAT_LIST;
        } else {
            ok = d->kind == TGM_DEF_FLOAT_LIST ? is_floatlike(b) : is_boollike(b);
        }
        /* bool[N] is PyTorch's std::array<bool, N>: exactly N values (an int[N] default may
         * be shorter, PyTorch expands it). */
        if (ok && is_boollike(b) && ty->list_size && d->n != ty->list_size)
            return fail(p, off, "default value %s of type '%s[%d]' needs %d values, not %d",
                        d->text, base_names[b], ty->list_size, ty->list_size, d->n);
        break;
    case TGM_DEF_IDENT:
        ok = !ty->is_list && b != TGM_TENSOR && b != TGM_STR && !is_boollike(b) && !is_floatlike(b);
        break;
    default: ok = false;
    }
    if (!ok) {
        char *tn = tgs_fmt(p->a, "%s%s%s", base_names[b], ty->elem_optional ? "?" : "",
                           ty->is_list ? (ty->list_optional ? "[]?" : "[]") : "");
        return fail(p, off, "default value %s does not fit type '%s'", d->text, tn);
    }
    return true;
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
    if (is_punct(p, ')')) return true;
    for (;;) {
        if (is_punct(p, '*')) {
            if (kwarg) return fail(p, p->t.off, "'*' appears twice");
            kwarg = true;
            star_off = p->t.off;
            next(p);
        } else {
            tgm_arg *arg = TGS_PUSH(p->a, out->args, out->nargs, cap);
            memset(arg, 0, sizeof *arg);
            arg->loc = loc_at(p, p->t.off);
            if (!parse_type(p, &arg->type)) return false;
            if (p->t.kind != T_IDENT)
                return fail(p, p->t.off, "expected an argument name, found %s", found(p));
            arg->name = tok_text(p);
            size_t name_off = p->t.off;
            if (!name_set_add(p->a, &names, arg->name))
                return fail(p, name_off, "duplicate argument name '%s'", arg->name);
            next(p);
            arg->kwarg_only = kwarg;
            if (is_punct(p, '=')) {
                next(p);
                size_t def_off = p->t.off;
                if (!parse_default(p, &arg->def) ||
                    !check_default(p, def_off, &arg->type, &arg->def))
                    return false;
                seen_default |= !kwarg;
            } else if (seen_default && !kwarg) {
                return fail(p, name_off,
                            "argument '%s' without a default follows one with a default",
                            arg->name);
            }
            arg->is_out = kwarg && arg->type.base == TGM_TENSOR && arg->type.alias.is_write;
        }
        if (is_punct(p, ')')) break;
        if (!expect(p, ',', "or ')' after an argument")) return false;
    }
    if (kwarg && (out->nargs == 0 || !out->args[out->nargs - 1].kwarg_only))
        return fail(p, star_off, "'*' must be followed by keyword-only arguments");
    return true;
}

static bool parse_return(parser *p, tgm_return *r, size_t *name_off)
{
    memset(r, 0, sizeof *r);
    r->loc = loc_at(p, p->t.off);
    if (!parse_type(p, &r->type)) return false;
    if (p->t.kind == T_IDENT) {
        *name_off = p->t.off;
        r->name = tok_text(p);
        next(p);
    }
    return true;
}

static bool parse_returns(parser *p, tgm_schema *out)
{
    int cap = 0;
    if (!is_punct(p, '(')) {
        tgm_return *r = TGS_PUSH(p->a, out->rets, out->nrets, cap);
        size_t name_off;
        return parse_return(p, r, &name_off);
    }
    next(p);
    name_set names = { 0 };
    while (!is_punct(p, ')')) {
        if (out->nrets > 0 && !expect(p, ',', "or ')' between returns")) return false;
        tgm_return *r = TGS_PUSH(p->a, out->rets, out->nrets, cap);
        size_t name_off = 0;
        if (!parse_return(p, r, &name_off)) return false;
        if (r->name && !name_set_add(p->a, &names, r->name))
            return fail(p, name_off, "duplicate return name '%s'", r->name);
    }
    return next(p);
}

/* ---- names ---- */

static bool parse_name(parser *p, tgm_schema *out)
{
    if (p->t.kind != T_IDENT)
        return fail(p, p->t.off, "expected an operator name, found %s", found(p));
    char *name = tok_text(p);
    size_t len = p->t.len;
    next(p);
    out->overload = "";
    if (is_punct(p, '.')) {
        next(p);
        if (p->t.kind != T_IDENT)
            return fail(p, p->t.off, "expected an overload name after '.', found %s", found(p));
        out->overload = tok_text(p);
        next(p);
    }
    out->dunder = len > 4 && !strncmp(name, "__", 2) && !strcmp(name + len - 2, "__");
    out->inplace = !out->dunder && name[len - 1] == '_';
    out->base = out->inplace ? tgm_strndup(p->a, name, len - 1) : name;
    if (out->inplace && !*out->base) return fail(p, 0, "operator name '_' has no base name");
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
    if (!next(&p) || !parse_name(&p, out)) return 1;
    if (!expect(&p, '(', "after the operator name") || !parse_params(&p, out) ||
        !expect(&p, ')', "after the arguments"))
        return 1;
    if (p.t.kind != T_ARROW)
        return fail(&p, p.t.off, "expected '->' after the arguments, found %s", found(&p)), 1;
    next(&p);
    if (!parse_returns(&p, out)) return 1;
    if (p.t.kind != T_EOF)
        return fail(&p, p.t.off, "unexpected %s after the returns", found(&p)), 1;
    return p.failed ? 1 : 0;
}

int tgm_parse_schema(tgm_arena *a, const char *text, tgm_loc loc, tgm_schema *out)
{
    return tgm__parse_schema_span(a, text, loc, NULL, out);
}
