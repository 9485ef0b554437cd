/* Default values of PyTorch's schema language (parse_schema.c has the grammar): numbers,
 * inf/nan, bools, None, strings, lists of numbers or bools and named constants, each checked
 * against its argument's type. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spec/schema_parser.h"

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
    if (tgm__sp_is_punct(p, '-')) {
        neg = true;
        tgm__sp_next(p);
    }
    if (tgm__sp_tok_is(p, "inf") || tgm__sp_tok_is(p, "nan")) {
        *is_float = true;
        *f = tgm__sp_tok_is(p, "inf") ? (neg ? -INFINITY : INFINITY) : NAN;
        return tgm__sp_next(p);
    }
    if (p->t.kind != T_INT && p->t.kind != T_FLOAT)
        return tgm__sp_fail(p, neg ? p->t.off : off, "expected a number, found %s",
                            tgm__sp_found(p));
    char *text = tgm__sp_tok_text(p);
    errno = 0;
    *is_float = p->t.kind == T_FLOAT;
    if (*is_float) {
        *f = strtod(text, NULL);
        if (neg) *f = -*f;
    } else {
        unsigned long long u = strtoull(text, NULL, 10);
        if (errno || u > (unsigned long long)INT64_MAX + neg)
            return tgm__sp_fail(p, p->t.off, "integer '%s' does not fit in 64 bits", text);
        *i = neg ? (int64_t)(0 - u) : (int64_t)u;
        *f = (double)*i;
    }
    return tgm__sp_next(p);
}

static bool parse_list_default(parser *p, tgm_default *d)
{
    int64_t *ints = NULL;
    double *floats = NULL;
    int n = 0, icap = 0, fcap = 0, nf = 0;
    bool any_float = false, any_bool = false, any_num = false;
    tgm__sp_next(p); /* '[' */
    while (!tgm__sp_is_punct(p, ']')) {
        if (n > 0 && !tgm__sp_expect(p, ',', "between list elements")) return false;
        int64_t iv = 0;
        double fv = 0;
        bool isf = false;
        if (tgm__sp_tok_is(p, "True") || tgm__sp_tok_is(p, "False")) {
            any_bool = true;
            iv = tgm__sp_tok_is(p, "True");
            fv = (double)iv;
            tgm__sp_next(p);
        } else if (p->t.kind == T_INT || p->t.kind == T_FLOAT || tgm__sp_is_punct(p, '-') ||
                   tgm__sp_tok_is(p, "inf")) {
            any_num = true;
            if (!parse_number(p, &iv, &fv, &isf)) return false;
            any_float |= isf;
        } else if (tgm__sp_tok_is(p, "true") || tgm__sp_tok_is(p, "false")) {
            return tgm__sp_fail(p, p->t.off, "bools in a list default are True or False, not '%s'",
                                tgm__sp_tok_text(p));
        } else {
            return tgm__sp_fail(p, p->t.off,
                                "expected a number or a bool in the list default, found %s",
                                tgm__sp_found(p));
        }
        *TGS_PUSH(p->a, ints, n, icap) = iv;
        *TGS_PUSH(p->a, floats, nf, fcap) = fv;
    }
    if (any_bool && any_num)
        return tgm__sp_fail(p, p->t.off, "list default mixes bools and numbers");
    d->kind = any_bool ? TGM_DEF_BOOL_LIST : any_float ? TGM_DEF_FLOAT_LIST : TGM_DEF_INT_LIST;
    d->ints = ints;
    d->floats = floats;
    d->n = n;
    return tgm__sp_next(p); /* ']' */
}

bool tgm__sp_parse_default(parser *p, tgm_default *d)
{
    size_t start = p->t.off;
    if (tgm__sp_tok_is(p, "None")) {
        d->kind = TGM_DEF_NONE;
        tgm__sp_next(p);
    } else if (tgm__sp_tok_is(p, "True") || tgm__sp_tok_is(p, "False")) {
        d->kind = TGM_DEF_BOOL;
        d->i = tgm__sp_tok_is(p, "True");
        tgm__sp_next(p);
    } else if (p->t.kind == T_STR) {
        d->kind = TGM_DEF_STR;
        d->str = decode_string(p->a, p->s + p->t.off, p->t.len);
        tgm__sp_next(p);
    } else if (tgm__sp_is_punct(p, '[')) {
        if (!parse_list_default(p, d)) return false;
    } else if (p->t.kind == T_INT || p->t.kind == T_FLOAT || tgm__sp_is_punct(p, '-') ||
               tgm__sp_tok_is(p, "inf") || tgm__sp_tok_is(p, "nan")) {
        bool isf;
        if (!parse_number(p, &d->i, &d->f, &isf)) return false;
        d->kind = isf ? TGM_DEF_FLOAT : TGM_DEF_INT;
    } else if (p->t.kind == T_IDENT) {
        d->kind = TGM_DEF_IDENT;
        d->str = tgm__sp_tok_text(p);
        tgm__sp_next(p);
    } else {
        return tgm__sp_fail(p, p->t.off, "expected a default value, found %s", tgm__sp_found(p));
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
bool tgm__sp_check_default(parser *p, size_t off, const tgm_type *ty, tgm_default *d)
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
            return tgm__sp_fail(p, off, "default value %s of type '%s[%d]' needs %d values, not %d",
                                d->text, tgm_base_name(b), ty->list_size, ty->list_size, d->n);
        break;
    case TGM_DEF_IDENT:
        /* `bool x=true` (C's, or YAML's, spelling): say which spelling the schema wants. */
        if (!ty->is_list && is_boollike(b))
            return tgm__sp_fail(p, off, "%s defaults are True or False, not '%s'", tgm_base_name(b),
                                d->text);
        ok = !ty->is_list && b != TGM_TENSOR && b != TGM_STR && !is_floatlike(b);
        break;
    default: ok = false;
    }
    if (!ok) {
        char *tn = tgs_fmt(p->a, "%s%s%s", tgm_base_name(b), ty->elem_optional ? "?" : "",
                           ty->is_list ? (ty->list_optional ? "[]?" : "[]") : "");
        return tgm__sp_fail(p, off, "default value %s does not fit type '%s'", d->text, tn);
    }
    return true;
}
