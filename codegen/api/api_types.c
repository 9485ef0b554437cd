/* Schema types as C types, defaults as C expressions, and the boxed-value helper each type
 * uses (docs/generated-code.md, "Type mapping"). Pure functions of the model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/strbuf.h"

typedef struct kind_info {
    const char *ctype; /* C type of parameters, fields and kernel arguments */
    const char *box;   /* suffix of the generated unbox_/box_ helpers */
} kind_info;

static const kind_info kinds[TGA_KIND_COUNT] = {
    [TGA_UNSUPPORTED] = { NULL, NULL },
    [TGA_TENSOR] = { "tg_tensor *", "tensor" },
    [TGA_OPT_TENSOR] = { "tg_tensor *", "opt_tensor" },
    [TGA_TENSOR_LIST] = { "tg_tensor_list", "tensor_list" },
    [TGA_INT] = { "int64_t", "int" },
    [TGA_OPT_INT] = { "tg_opt_int", "opt_int" },
    [TGA_INT_LIST] = { "tg_int_list", "int_list" },
    [TGA_OPT_INT_LIST] = { "tg_int_list", "opt_int_list" },
    [TGA_DOUBLE] = { "double", "double" },
    [TGA_OPT_DOUBLE] = { "tg_opt_float", "opt_double" },
    [TGA_BOOL] = { "bool", "bool" },
    [TGA_OPT_BOOL] = { "tg_opt_bool", "opt_bool" },
    [TGA_DTYPE] = { "tg_dtype", "dtype" },
    [TGA_OPT_DTYPE] = { "tg_dtype", "opt_dtype" },
    [TGA_LAYOUT] = { "tg_layout", "layout" },
    [TGA_OPT_LAYOUT] = { "tg_layout", "opt_layout" },
    [TGA_DEVICE] = { "tg_device", "device" },
    [TGA_OPT_DEVICE] = { "tg_device", "opt_device" },
    [TGA_MEMORY_FORMAT] = { "tg_memory_format", "memory_format" },
    [TGA_OPT_MEMORY_FORMAT] = { "tg_memory_format", "opt_memory_format" },
    [TGA_OPT_GENERATOR] = { "tg_generator *", "opt_generator" },
    [TGA_STR] = { "const char *", "str" },
    [TGA_OPT_STR] = { "const char *", "opt_str" },
    [TGA_OPT_TENSOR_LIST] = { "tg_tensor_list", "opt_tensor_list" },
    [TGA_FLOAT_LIST] = { "tg_float_list", "float_list" },
    [TGA_OPT_FLOAT_LIST] = { "tg_float_list", "opt_float_list" },
    [TGA_BOOL_LIST] = { "tg_bool_list", "bool_list" },
    [TGA_OPT_BOOL_LIST] = { "tg_bool_list", "opt_bool_list" },
    [TGA_STR_LIST] = { "tg_str_list", "str_list" },
    [TGA_OPT_STR_LIST] = { "tg_str_list", "opt_str_list" },
    [TGA_STORAGE] = { "tg_storage *", "storage" },
    [TGA_OPT_STORAGE] = { "tg_storage *", "opt_storage" },
    [TGA_STREAM] = { "tg_stream", "int" }, /* a stream id: boxed as an int */
    [TGA_QSCHEME] = { "tg_quant_scheme", "qscheme" },
    [TGA_OPT_QSCHEME] = { "tg_quant_scheme", "opt_qscheme" },
    [TGA_QUANTIZER] = { "const tg_quantizer *", "quantizer" },
};

/* The kind of a type written plainly, with `?`, as a list, and as an optional list; a
 * combination a type does not have is TGA_UNSUPPORTED, and so is any list of optional
 * elements but Tensor?[]. */
static tga_kind pick(const tgm_type *t, tga_kind plain, tga_kind opt, tga_kind list,
                     tga_kind opt_list)
{
    if (!t->is_list) return t->elem_optional ? opt : plain;
    if (t->elem_optional) return TGA_UNSUPPORTED;
    return t->list_optional ? opt_list : list;
}

tga_kind tga_type_kind(const tgm_type *t)
{
    const tga_kind none = TGA_UNSUPPORTED;
    switch (t->base) {
    case TGM_TENSOR:
        if (t->is_list && t->elem_optional)
            return t->list_optional ? TGA_UNSUPPORTED : TGA_OPT_TENSOR_LIST;
        return pick(t, TGA_TENSOR, TGA_OPT_TENSOR, TGA_TENSOR_LIST, none);
    case TGM_INT:
    case TGM_SYMINT:
    case TGM_DEVICE_INDEX: /* int64_t, wider than PyTorch's int8: any index fits */
        return pick(t, TGA_INT, TGA_OPT_INT, TGA_INT_LIST, TGA_OPT_INT_LIST);
    case TGM_FLOAT:
    case TGM_SYMFLOAT:
    case TGM_SCALAR: /* a Scalar is a double, Scalar[] a list of them */
        return pick(t, TGA_DOUBLE, TGA_OPT_DOUBLE, TGA_FLOAT_LIST, TGA_OPT_FLOAT_LIST);
    case TGM_BOOL:
    case TGM_SYMBOOL: return pick(t, TGA_BOOL, TGA_OPT_BOOL, TGA_BOOL_LIST, TGA_OPT_BOOL_LIST);
    case TGM_SCALAR_TYPE: return pick(t, TGA_DTYPE, TGA_OPT_DTYPE, none, none);
    case TGM_LAYOUT: return pick(t, TGA_LAYOUT, TGA_OPT_LAYOUT, none, none);
    case TGM_DEVICE: return pick(t, TGA_DEVICE, TGA_OPT_DEVICE, none, none);
    case TGM_MEMORY_FORMAT: return pick(t, TGA_MEMORY_FORMAT, TGA_OPT_MEMORY_FORMAT, none, none);
    /* A Generator is a pointer either way; NULL means the default generator. */
    case TGM_GENERATOR: return pick(t, TGA_OPT_GENERATOR, TGA_OPT_GENERATOR, none, none);
    /* A Dimname is the dimension's name: tensorgen has no named tensors. */
    case TGM_STR:
    case TGM_DIMNAME: return pick(t, TGA_STR, TGA_OPT_STR, TGA_STR_LIST, TGA_OPT_STR_LIST);
    case TGM_STORAGE: return pick(t, TGA_STORAGE, TGA_OPT_STORAGE, none, none);
    case TGM_STREAM: return pick(t, TGA_STREAM, none, none, none);
    case TGM_QSCHEME: return pick(t, TGA_QSCHEME, TGA_OPT_QSCHEME, none, none);
    case TGM_CONST_QUANTIZER_PTR: return pick(t, TGA_QUANTIZER, none, none, none);
    default: return TGA_UNSUPPORTED;
    }
}

const char *tga_ctype(tga_kind k) { return kinds[k].ctype; }
const char *tga_box_suffix(tga_kind k) { return kinds[k].box; }

bool tga_kind_is_tensor(tga_kind k)
{
    return k == TGA_TENSOR || k == TGA_OPT_TENSOR || k == TGA_TENSOR_LIST ||
           k == TGA_OPT_TENSOR_LIST;
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
    const char *c = kinds[k].ctype;
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
/* `int reduction=Mean`: PyTorch's at::Reduction values. */
static const ident_map int_idents[] = {
    { "None", "0" }, { "Mean", "1" }, { "Sum", "2" }, { NULL, NULL }
};

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

/* Struct-valued defaults are brace lists, not the TG_NONE_* compound literals: gcc warns
 * (-Woverride-init-side-effects, on by default) when a caller's designated initializer
 * overrides a compound literal, because creating one counts as a side effect. */
static const char *none_expr(tga_kind k)
{
    switch (k) {
    case TGA_OPT_TENSOR:
    case TGA_OPT_GENERATOR:
    case TGA_OPT_STORAGE:
    case TGA_OPT_STR: return "NULL";
    case TGA_OPT_INT: return "{ false, 0 }";
    case TGA_OPT_INT_LIST:
    case TGA_OPT_FLOAT_LIST:
    case TGA_OPT_BOOL_LIST:
    case TGA_OPT_STR_LIST: return "{ NULL, 0 }";
    case TGA_OPT_DOUBLE: return "{ false, 0 }";
    case TGA_OPT_BOOL: return "{ false, false }";
    case TGA_OPT_DTYPE: return "TG_DTYPE_NONE";
    case TGA_OPT_LAYOUT: return "TG_LAYOUT_NONE";
    case TGA_OPT_DEVICE: return "{ TG_DEVICE_NONE, -1 }";
    case TGA_OPT_MEMORY_FORMAT: return "TG_MEMORY_FORMAT_NONE";
    case TGA_OPT_QSCHEME: return "TG_QSCHEME_NONE";
    default: return NULL;
    }
}

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
    case TGA_INT: return map_ident(int_idents, text);
    case TGA_BOOL: return map_ident(bool_idents, text);
    default: return NULL;
    }
}

/* The optional kinds wrap the plain value: `int? x=2` -> { true, 2 } (a brace list, see
 * none_expr). */
static const char *wrap_some(tgm_arena *a, tga_kind k, const char *v)
{
    if (k == TGA_OPT_INT || k == TGA_OPT_DOUBLE || k == TGA_OPT_BOOL)
        return tgs_fmt(a, "{ true, %s }", v);
    return v;
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
        return tgs_fmt(a, "{ %s, 0 }", empty);
    }
    return tgs_fmt(a, "{ %s, %d }", storage, n);
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
