/* Pure functions over parsed schemas: canonical text, kind, type equality. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

/* A growable string in the arena, enough for schema text. */
typedef struct sbuf {
    tgm_arena *a;
    char *p;
    size_t len, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 128;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *np = tgm_alloc(b->a, cap);
        if (b->len)
            memcpy(np, b->p, b->len);
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

static void put_type(sbuf *b, const tgm_type *t)
{
    sb_put(b, tgm_base_name(t->base));
    if (t->alias.set) {
        sb_put(b, "(");
        sb_put(b, t->alias.set);
        if (t->alias.is_write)
            sb_put(b, "!");
        if (t->alias.after) {
            sb_put(b, " -> ");
            sb_put(b, t->alias.after);
        }
        sb_put(b, ")");
    }
    if (t->elem_optional)
        sb_put(b, "?");
    if (t->is_list) {
        char n[16] = "";
        if (t->list_size)
            snprintf(n, sizeof n, "%d", t->list_size);
        sb_put(b, "[");
        sb_put(b, n);
        sb_put(b, "]");
        if (t->list_optional)
            sb_put(b, "?");
    }
}

char *tgm__type_str(tgm_arena *a, const tgm_type *t)
{
    sbuf b = { .a = a };
    put_type(&b, t);
    return b.p;
}

char *tgm_schema_format(tgm_arena *a, const tgm_schema *s)
{
    sbuf b = { .a = a };
    sb_put(&b, s->full_name);
    sb_put(&b, "(");
    bool kw = false;
    for (int i = 0; i < s->nargs; i++) {
        const tgm_arg *arg = &s->args[i];
        if (i)
            sb_put(&b, ", ");
        if (arg->kwarg_only && !kw) {
            sb_put(&b, "*, ");
            kw = true;
        }
        put_type(&b, &arg->type);
        sb_put(&b, " ");
        sb_put(&b, arg->name);
        if (arg->def.kind != TGM_DEF_NONE_GIVEN) {
            sb_put(&b, "=");
            sb_put(&b, arg->def.text);
        }
    }
    sb_put(&b, ") -> ");
    bool paren = s->nrets != 1;
    if (paren)
        sb_put(&b, "(");
    for (int i = 0; i < s->nrets; i++) {
        if (i)
            sb_put(&b, ", ");
        put_type(&b, &s->rets[i].type);
        if (s->rets[i].name) {
            sb_put(&b, " ");
            sb_put(&b, s->rets[i].name);
        }
    }
    if (paren)
        sb_put(&b, ")");
    return b.p;
}

/* PyTorch's rule (an entry is exactly one of these): in-place by name; scratch when an out
 * argument is a `_scratch_` buffer; out when it has out= arguments; mutable when some other
 * argument is written; functional otherwise. Dunder names such as __iand__ keep their full
 * name as base (so schema.inplace is false) but are in-place when they write `self`. */
tgm_kind tgm__schema_kind(const tgm_schema *s)
{
    bool out = false, scratch = false, write = false;
    for (int i = 0; i < s->nargs; i++) {
        const tgm_arg *a = &s->args[i];
        out |= a->is_out;
        scratch |= a->is_out && !strncmp(a->name, "_scratch_", 9);
        write |= a->type.alias.is_write;
    }
    bool dunder_inplace = s->dunder && !strncmp(s->base, "__i", 3) && s->nargs > 0 &&
                          s->args[0].type.alias.is_write;
    if (s->inplace || dunder_inplace)
        return TGM_KIND_INPLACE;
    if (scratch)
        return TGM_KIND_SCRATCH;
    if (out)
        return TGM_KIND_OUT;
    if (write)
        return TGM_KIND_MUTABLE;
    return TGM_KIND_FUNCTIONAL;
}

static bool str_eq(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

bool tgm__type_eq(const tgm_type *a, const tgm_type *b)
{
    return a->base == b->base && a->elem_optional == b->elem_optional &&
           a->is_list == b->is_list && a->list_size == b->list_size &&
           a->list_optional == b->list_optional && str_eq(a->alias.set, b->alias.set) &&
           a->alias.is_write == b->alias.is_write && str_eq(a->alias.after, b->alias.after);
}
