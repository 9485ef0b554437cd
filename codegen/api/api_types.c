/* Schema types as C types, defaults as C expressions, and the boxed-value helper each type
 * uses (docs/generated-code.md, "Type mapping"), from the type table tgen shares with the
 * runtime (runtime/dispatch/schema_types.h, compiled in). Pure functions of the model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/strbuf.h"

/* The type table's tags and kinds (runtime/dispatch/schema_types.h), as text. */
typedef struct tag_info {
    const char *tag, *member;
} tag_info;
static const tag_info tags[] = {
#define TAG(tag, name, member) { "TG_IV_" #tag, member },
    TG_IVALUE_TAGS(TAG)
#undef TAG
};

static const tga_kind_info kinds[TGA_KIND_COUNT] = {
#define KIND(kind, spellings, ctype, suffix, form, tag, none, some, error) \
    [TGA_##kind] = { spellings, ctype, suffix, form, "TG_IV_" #tag, none, some, error },
    TG_SCHEMA_KINDS(KIND)
#undef KIND
};

const tga_kind_info *tga_kind_row(tga_kind k)
{
    return k > TGA_UNSUPPORTED && k < TGA_KIND_COUNT ? &kinds[k] : NULL;
}

const char *tga_kind_member(tga_kind k)
{
    const tga_kind_info *r = tga_kind_row(k);
    for (size_t i = 0; r && i < sizeof tags / sizeof *tags; i++)
        if (!strcmp(tags[i].tag, r->tag)) return tags[i].member;
    return NULL;
}

/* Whether `word` is one of the space-separated words of `list`. */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
    return false;
}

/* The kind of a type: the row whose spellings hold it as written without alias annotations
 * and list sizes ("int[]?" for `int[2]? x`); TGA_UNSUPPORTED when none does. */
static tga_kind kind_of_spelling(const tgm_type *t)
{
    char spelling[64];
    snprintf(spelling, sizeof spelling, "%s%s%s%s", tgm_base_name(t->base),
             t->elem_optional ? "?" : "", t->is_list ? "[]" : "",
             t->is_list && t->list_optional ? "?" : "");
    for (int k = TGA_UNSUPPORTED + 1; k < TGA_KIND_COUNT; k++)
        if (has_word(kinds[k].spellings, spelling)) return (tga_kind)k;
    return TGA_UNSUPPORTED;
}

tga_kind tga_type_kind(const tgm_type *t)
{
    /* The kind depends on the base and three flags only: each of those few spellings is looked
     * up once per process (formatting and searching it on every call was a tenth of the C
     * view's time on PyTorch's full spec). The table is constant, so a race only repeats
     * the same store. */
    static signed char memo[TGM_BASE_COUNT + 1][8];
    unsigned b = (unsigned)t->base <= TGM_BASE_COUNT ? (unsigned)t->base : TGM_BASE_COUNT;
    int flags = (t->elem_optional ? 1 : 0) | (t->is_list ? 2 : 0) |
                (t->is_list && t->list_optional ? 4 : 0);
    if (!memo[b][flags]) memo[b][flags] = (signed char)(kind_of_spelling(t) + 1);
    return (tga_kind)(memo[b][flags] - 1);
}

const char *tga_ctype(tga_kind k)
{
    const tga_kind_info *r = tga_kind_row(k);
    return r ? r->ctype : NULL;
}

const char *tga_box_suffix(tga_kind k)
{
    const tga_kind_info *r = tga_kind_row(k);
    return r ? r->suffix : NULL;
}

const char *tga_kind_text(tgm_arena *a, tga_kind k)
{
    const tga_kind_info *r = tga_kind_row(k);
    const char *s = r ? r->spellings : "";
    return tgm_strndup(a, s, strcspn(s, " "));
}

bool tga_kind_is_optional(tga_kind k)
{
    const tga_kind_info *r = tga_kind_row(k);
    return r && !strncmp(r->form, "opt_", 4);
}

bool tga_kind_is_result(tga_kind k)
{
    const tga_kind_info *r = tga_kind_row(k);
    return r && r->error[0];
}

bool tga_kind_is_tensor(tga_kind k)
{
    return k == TGA_TENSOR || k == TGA_OPT_TENSOR || k == TGA_TENSOR_LIST ||
           k == TGA_OPT_TENSOR_LIST || k == TGA_TENSOR_LIST_OR_NONE;
}

const char *tga_list_elem_ctype(tga_kind k)
{
    switch (k) {
    case TGA_INT_LIST:
    case TGA_OPT_INT_LIST: return "int64_t";
    case TGA_FLOAT_LIST:
    case TGA_OPT_FLOAT_LIST: return "double";
    case TGA_BOOL_LIST:
    case TGA_OPT_BOOL_LIST: return "bool";
    default: return NULL;
    }
}

const char *tga_cdecl(tgm_arena *a, tga_kind k, const char *name)
{
    const char *c = tga_ctype(k);
    size_t n = strlen(c);
    if (n && c[n - 1] == '*') return tgs_fmt(a, "%s%s", c, name);
    return tgs_fmt(a, "%s %s", c, name);
}

const char *tga_type_text(tgm_arena *a, const tgm_type *t)
{
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_puts(&b, tgm_base_name(t->base));
    if (t->elem_optional) tgs_puts(&b, "?");
    if (t->is_list) {
        if (t->list_size) tgs_printf(&b, "[%d]", t->list_size);
        else tgs_puts(&b, "[]");
        if (t->list_optional) tgs_puts(&b, "?");
    }
    return tgs_finish(&b, a);
}

/* ------------------------------------------------------------------ defaults */

typedef struct ident_map {
    const char *schema;
    const char *c;
} ident_map;

static const ident_map dtype_idents[] = {
    { "bool", "TG_BOOL" },
    { "uint8", "TG_UINT8" },
    { "int8", "TG_INT8" },
    { "short", "TG_INT16" },
    { "int16", "TG_INT16" },
    { "int", "TG_INT32" },
    { "int32", "TG_INT32" },
    { "long", "TG_INT64" },
    { "int64", "TG_INT64" },
    { "half", "TG_FLOAT16" },
    { "float16", "TG_FLOAT16" },
    { "bfloat16", "TG_BFLOAT16" },
    { "float", "TG_FLOAT32" },
    { "float32", "TG_FLOAT32" },
    { "double", "TG_FLOAT64" },
    { "float64", "TG_FLOAT64" },
    { NULL, NULL },
};
static const ident_map layout_idents[] = { { "strided", "TG_STRIDED" }, { NULL, NULL } };
static const ident_map memory_format_idents[] = {
    { "contiguous_format", "TG_CONTIGUOUS_FORMAT" },
    { "preserve_format", "TG_PRESERVE_FORMAT" },
    { "channels_last", "TG_CHANNELS_LAST" },
    { "channels_last_3d", "TG_CHANNELS_LAST_3D" },
    { NULL, NULL },
};
/* `int reduction=Mean`: PyTorch's at::Reduction values, as constants every operator header
 * defines (tga_int_constants). */
static const struct int_constant {
    const char *schema, *c;
    int value;
} int_constants[] = { { "None", "TG_REDUCTION_NONE", 0 },
                      { "Mean", "TG_REDUCTION_MEAN", 1 },
                      { "Sum", "TG_REDUCTION_SUM", 2 } };

const char *tga_int_constants(tgm_arena *a)
{
    tgs_buf b;
    tgs_buf_init(&b);
    for (size_t i = 0; i < sizeof int_constants / sizeof *int_constants; i++)
        tgs_printf(&b, "#define %s %d /* %s */\n", int_constants[i].c, int_constants[i].value,
                   int_constants[i].schema);
    return tgs_finish(&b, a);
}

/* torch.per_tensor_affine, ... */
static const ident_map qscheme_idents[] = {
    { "per_tensor_affine", "TG_PER_TENSOR_AFFINE" },
    { "per_channel_affine", "TG_PER_CHANNEL_AFFINE" },
    { "per_tensor_symmetric", "TG_PER_TENSOR_SYMMETRIC" },
    { "per_channel_symmetric", "TG_PER_CHANNEL_SYMMETRIC" },
    { "per_channel_affine_float_qparams", "TG_PER_CHANNEL_AFFINE_FLOAT_QPARAMS" },
    { NULL, NULL },
};

static const ident_map bool_idents[] = { { "True", "true" }, { "False", "false" }, { NULL, NULL } };

static const char *map_ident(const ident_map *m, const char *text)
{
    for (; m->schema; m++)
        if (strcmp(m->schema, text) == 0) return m->c;
    return NULL;
}

/* An optional kind's None, from its row (struct-valued ones are brace lists, not the TG_NO_*
 * compound literals: gcc warns, -Woverride-init-side-effects, on by default, when a caller's
 * designated initializer overrides a compound literal, because creating one counts as a side
 * effect); NULL for a kind that is not optional. */
static const char *none_expr(tga_kind k) { return tga_kind_is_optional(k) ? kinds[k].none : NULL; }

/* A floating literal as C reads it: the schema's text when it is a plain number. */
static const char *double_expr(tgm_arena *a, const tgm_default *d)
{
    if (d->kind == TGM_DEF_INT) return tgs_c_int(a, d->i);
    if (isnan(d->f)) return "NAN";
    if (isinf(d->f)) return d->f < 0 ? "-INFINITY" : "INFINITY";
    if (d->text && *d->text && strspn(d->text, "0123456789.eE+-") == strlen(d->text))
        return d->text;
    return tgs_fmt(a, "%.17g", d->f);
}

/* The values of an int list default, "0, 1" (n of them): `[0, 1]`, `[]`, or a bare int that
 * `int[N]` repeats N times. */
static const char *int_list_values(tgm_arena *a, const tgm_type *t, const tgm_default *d,
                                   int *count)
{
    const int64_t *vals = d->ints;
    int n = d->n;
    int64_t single = d->i;
    bool bare = d->kind == TGM_DEF_INT || (d->text && d->text[0] != '[');
    if (bare) {
        if (d->kind == TGM_DEF_INT_LIST && n >= 1) single = vals[0];
        n = t->list_size > 0 ? t->list_size : 1;
        vals = NULL;
    }
    tgs_buf b;
    tgs_buf_init(&b);
    for (int i = 0; i < n; i++)
        tgs_printf(&b, "%s%s", i ? ", " : "", tgs_c_int(a, vals ? vals[i] : single));
    *count = n;
    return tgs_finish(&b, a);
}

/* 'none' or "none" as a C string literal (from the decoded string when the parser gave one). */
static const char *str_expr(tgm_arena *a, const tgm_default *d)
{
    const char *text = d->str ? d->str : d->text;
    size_t n = strlen(text);
    if (!d->str && n >= 2 && (text[0] == '\'' || text[0] == '"') && text[n - 1] == text[0]) {
        text++;
        n -= 2;
    }
    return tgs_c_string(a, tgm_strndup(a, text, n));
}

static const char *ident_expr(tga_kind k, const char *text)
{
    switch (k) {
    case TGA_DTYPE:
    case TGA_OPT_DTYPE: return map_ident(dtype_idents, text);
    case TGA_LAYOUT:
    case TGA_OPT_LAYOUT: return map_ident(layout_idents, text);
    case TGA_MEMORY_FORMAT:
    case TGA_OPT_MEMORY_FORMAT: return map_ident(memory_format_idents, text);
    case TGA_QSCHEME:
    case TGA_OPT_QSCHEME: return map_ident(qscheme_idents, text);
    case TGA_INT:
        for (size_t i = 0; i < sizeof int_constants / sizeof *int_constants; i++)
            if (!strcmp(int_constants[i].schema, text)) return int_constants[i].c;
        return NULL;
    case TGA_BOOL: return map_ident(bool_idents, text);
    default: return NULL;
    }
}

/* The optional kinds wrap the plain value as their row's `some` says (all of tensorgen's take
 * it as it is: `int? x=2` -> 2). */
static const char *wrap_some(tgm_arena *a, tga_kind k, const char *v)
{
    const char *some = tga_kind_is_optional(k) ? kinds[k].some : "";
    const char *at = strstr(some, "%s");
    if (!at) return v;
    return tgs_fmt(a, "%.*s%s%s", (int)(at - some), some, v, at + 2);
}

/* The values of a float list default, "0.5, 2" (d->n of them). */
static const char *float_list_values(tgm_arena *a, const tgm_default *d)
{
    tgs_buf b;
    tgs_buf_init(&b);
    for (int i = 0; i < d->n; i++) {
        double f = d->floats[i];
        const char *v = isnan(f)   ? "NAN"
                        : isinf(f) ? (f < 0 ? "-INFINITY" : "INFINITY")
                                   : tgs_fmt(a, "%.17g", f);
        tgs_printf(&b, "%s%s", i ? ", " : "", v);
    }
    return tgs_finish(&b, a);
}

static const char *bool_list_values(tgm_arena *a, const tgm_default *d)
{
    tgs_buf b;
    tgs_buf_init(&b);
    for (int i = 0; i < d->n; i++)
        tgs_printf(&b, "%s%s", i ? ", " : "", d->ints[i] ? "true" : "false");
    return tgs_finish(&b, a);
}

/* A present list: the empty one (its kind's empty storage), or `storage` (static, so that
 * overriding it is no side effect either) holding the values. NULL with *why when the
 * default's elements do not fit. */
static const char *list_expr(tgm_arena *a, tga_kind k, const tgm_type *t, const tgm_default *d,
                             const char *storage, const char **values, const char **why)
{
    int n = d->n;
    const char *empty = NULL;
    switch (k) {
    case TGA_INT_LIST:
    case TGA_OPT_INT_LIST:
        *values = int_list_values(a, t, d, &n);
        empty = "tg__empty_int_list_storage";
        break;
    case TGA_FLOAT_LIST:
    case TGA_OPT_FLOAT_LIST:
        if (d->kind != TGM_DEF_FLOAT_LIST) break;
        *values = float_list_values(a, d);
        empty = "tg__empty_float_list_storage";
        break;
    case TGA_BOOL_LIST:
    case TGA_OPT_BOOL_LIST:
        if (d->kind != TGM_DEF_BOOL_LIST) break; /* its length was checked by the parser */
        *values = bool_list_values(a, d);
        empty = "tg__empty_bool_list_storage";
        break;
    case TGA_STR_LIST:
    case TGA_OPT_STR_LIST:
        if (n == 0) empty = "tg__empty_str_list_storage"; /* only [] parses for these */
        break;
    default: break;
    }
    if (!empty) {
        *values = NULL;
        *why = "a default of this kind cannot be given to this type";
        return NULL;
    }
    if (n == 0) {
        *values = NULL;
        return tgs_fmt(a, "{ .len = 0, .data = %s }", empty);
    }
    return tgs_fmt(a, "{ .len = %d, .data = %s }", n, storage);
}

static bool is_list_kind(tga_kind k)
{
    return tga_list_elem_ctype(k) || k == TGA_STR_LIST || k == TGA_OPT_STR_LIST;
}

const char *tga_default_expr(tgm_arena *a, tga_kind k, const tgm_type *t, const tgm_default *d,
                             const char *list_storage, const char **list_values, const char **why)
{
    *why = NULL;
    *list_values = NULL;
    const char *v = NULL;
    switch (d->kind) {
    case TGM_DEF_NONE_GIVEN: return NULL;
    case TGM_DEF_NONE:
        v = none_expr(k);
        if (!v) *why = "None is not a value of this non-optional type";
        return v;
    case TGM_DEF_INT_LIST:
    case TGM_DEF_FLOAT_LIST:
    case TGM_DEF_BOOL_LIST:
        if (is_list_kind(k)) return list_expr(a, k, t, d, list_storage, list_values, why);
        break;
    case TGM_DEF_INT:
        if (k == TGA_INT_LIST || k == TGA_OPT_INT_LIST)
            return list_expr(a, k, t, d, list_storage, list_values, why);
        if (d->kind == TGM_DEF_INT && (k == TGA_INT || k == TGA_OPT_INT))
            return wrap_some(a, k, tgs_c_int(a, d->i));
        if (d->kind == TGM_DEF_INT && (k == TGA_DOUBLE || k == TGA_OPT_DOUBLE))
            return wrap_some(a, k, double_expr(a, d));
        break;
    case TGM_DEF_FLOAT:
        if (k == TGA_DOUBLE || k == TGA_OPT_DOUBLE) return wrap_some(a, k, double_expr(a, d));
        break;
    case TGM_DEF_BOOL:
        if (k == TGA_BOOL || k == TGA_OPT_BOOL) return wrap_some(a, k, d->i ? "true" : "false");
        break;
    case TGM_DEF_STR:
        if (k == TGA_STR || k == TGA_OPT_STR) return str_expr(a, d);
        break;
    case TGM_DEF_IDENT:
        v = ident_expr(k, d->text);
        if (v) return v;
        *why = "unknown constant for this type";
        return NULL;
    default: break;
    }
    *why = "a default of this kind cannot be given to this type";
    return NULL;
}

bool tga_is_out_arg(const tgm_arg *a)
{
    if (a->is_out) return true;
    return a->kwarg_only && a->type.base == TGM_TENSOR && !a->type.is_list &&
           a->type.alias.is_write;
}
