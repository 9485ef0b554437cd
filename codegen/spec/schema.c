/* Pure functions over parsed schemas: the names of base types, canonical text, kind, type
 * equality, argument and output lookup by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/frontend.h"

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

tgm_base tgm__base_named(const char *text, size_t len)
{
    int b = 0;
    while (b < TGM_BASE_COUNT &&
           (strlen(base_names[b]) != len || strncmp(base_names[b], text, len)))
        b++;
    return (tgm_base)b;
}

static void put_type(tgs_buf *b, const tgm_type *t)
{
    tgs_puts(b, tgm_base_name(t->base));
    if (t->alias.set) {
        tgs_puts(b, "(");
        tgs_puts(b, t->alias.set);
        if (t->alias.is_write) tgs_puts(b, "!");
        if (t->alias.after) {
            tgs_puts(b, " -> ");
            tgs_puts(b, t->alias.after);
        }
        tgs_puts(b, ")");
    }
    if (t->elem_optional) tgs_puts(b, "?");
    if (t->is_list) {
        char n[16] = "";
        if (t->list_size) snprintf(n, sizeof n, "%d", t->list_size);
        tgs_puts(b, "[");
        tgs_puts(b, n);
        tgs_puts(b, "]");
        if (t->list_optional) tgs_puts(b, "?");
    }
}

char *tgm__type_str(tgm_arena *a, const tgm_type *t)
{
    tgs_buf b;
    tgs_buf_init(&b);
    put_type(&b, t);
    return tgs_finish(&b, a);
}

char *tgm_schema_format(tgm_arena *a, const tgm_schema *s)
{
    tgs_buf b;
    tgs_buf_init(&b);
    if (s->ns) tgs_printf(&b, "%s::", s->ns);
    tgs_puts(&b, s->full_name);
    tgs_puts(&b, "(");
    bool kw = false;
    for (int i = 0; i < s->nargs; i++) {
        const tgm_arg *arg = &s->args[i];
        if (i) tgs_puts(&b, ", ");
        if (arg->kwarg_only && !kw) {
            tgs_puts(&b, "*, ");
            kw = true;
        }
        put_type(&b, &arg->type);
        tgs_puts(&b, " ");
        tgs_puts(&b, arg->name);
        if (arg->def.kind != TGM_DEF_NONE_GIVEN) {
            tgs_puts(&b, "=");
            tgs_puts(&b, arg->def.text);
        }
    }
    tgs_puts(&b, ") -> ");
    bool paren = s->nrets != 1;
    if (paren) tgs_puts(&b, "(");
    for (int i = 0; i < s->nrets; i++) {
        if (i) tgs_puts(&b, ", ");
        put_type(&b, &s->rets[i].type);
        if (s->rets[i].name) {
            tgs_puts(&b, " ");
            tgs_puts(&b, s->rets[i].name);
        }
    }
    if (paren) tgs_puts(&b, ")");
    return tgs_finish(&b, a);
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
    bool dunder_inplace =
        s->dunder && !strncmp(s->base, "__i", 3) && s->nargs > 0 && s->args[0].type.alias.is_write;
    if (s->inplace || dunder_inplace) return TGM_KIND_INPLACE;
    if (scratch) return TGM_KIND_SCRATCH;
    if (out) return TGM_KIND_OUT;
    if (write) return TGM_KIND_MUTABLE;
    return TGM_KIND_FUNCTIONAL;
}

static bool str_eq(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

bool tgm__type_eq(const tgm_type *a, const tgm_type *b)
{
    return a->base == b->base && a->elem_optional == b->elem_optional && a->is_list == b->is_list &&
           a->list_size == b->list_size && a->list_optional == b->list_optional &&
           str_eq(a->alias.set, b->alias.set) && a->alias.is_write == b->alias.is_write &&
           str_eq(a->alias.after, b->alias.after);
}

int tgm_schema_arg_index(const tgm_schema *s, const char *name)
{
    for (int i = 0; i < s->nargs; i++)
        if (!strcmp(s->args[i].name, name)) return i;
    return -1;
}

int tgm_schema_self_index(const tgm_schema *s)
{
    for (int i = 0; i < s->nargs; i++)
        if (!s->args[i].kwarg_only && !strcmp(s->args[i].name, "self")) return i;
    return -1;
}

bool tgm_schema_returns_alias(const tgm_schema *s, const char *set)
{
    for (int i = 0; set && i < s->nrets; i++)
        if (s->rets[i].type.alias.set && !strcmp(s->rets[i].type.alias.set, set)) return true;
    return false;
}

int tgm_schema_output_index(const tgm_schema *s, const char *name)
{
    for (int i = 0; i < s->nrets; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, s->nrets == 1 ? "result" : "result%d", i);
        if (!strcmp(name, buf) || (s->rets[i].name && !strcmp(name, s->rets[i].name))) return i;
    }
    return -1;
}
