/* C names of operators, enum constants, kernels and result structs (docs/generated-code.md,
 * "C names of operators"). Pure functions of the model. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/strbuf.h"

/* Appends `word` lower-cased. */
static void put_lower(tgs_buf *b, const char *word, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = (char)tolower((unsigned char)word[i]);
        tgs_putn(b, &c, 1);
    }
}

/* The overload lower-cased after a `_`: `_tensor_scalar` for Tensor_Scalar (`full`), or only
 * its words that are not `Tensor` (`_scalar`; `` for add.Tensor). */
static void put_overload(tgs_buf *b, const char *overload, bool full)
{
    if (full && overload && *overload) {
        tgs_puts(b, "_");
        put_lower(b, overload, strlen(overload));
        return;
    }
    for (const char *p = overload ? overload : ""; *p;) {
        const char *us = strchr(p, '_');
        size_t n = us ? (size_t)(us - p) : strlen(p);
        if (n && !(n == 6 && memcmp(p, "Tensor", 6) == 0)) {
            tgs_puts(b, "_");
            put_lower(b, p, n);
        }
        p += n;
        if (*p == '_') p++;
    }
}

/* The name at one level of the rule (docs/c-api.md, "Names"): 0 short, 1 the whole overload,
 * 2 the whole overload and `_op`, 3 the schema's `.` written `__` (relu_per_tensor.out and
 * relu.per_tensor_out, equal at every other level). */
static const char *rule_name(tgm_arena *a, const tgm_func *f, int level)
{
    const tgm_schema *s = &f->schema;
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_puts(&b, s->base);
    if (level == 3 && s->overload && *s->overload) tgs_puts(&b, "_");
    put_overload(&b, s->overload, level > 0);
    if (s->inplace && !s->dunder) tgs_puts(&b, "_");
    if (level == 2) tgs_puts(&b, "_op");
    return tgs_finish(&b, a);
}

const char *tga_prefix(const tgm_model *m) { return m->ns ? m->ns : "tg"; }

const char *tga_cname(tgm_arena *a, const tgm_func *f)
{
    return f->c_name ? f->c_name : rule_name(a, f, 0);
}

/* Whether `name` or the names derived from it (`_fn`, `_opts`) are the runtime's. */
static bool runtime_has(tgm_arena *a, const tgm_model *m, const char *name)
{
    if (!m->runtime_names) return false;
    return tgm__map_get(m->runtime_names, name) ||
           tgm__map_get(m->runtime_names, tgs_fmt(a, "%s_fn", name)) ||
           tgm__map_get(m->runtime_names, tgs_fmt(a, "%s_opts", name));
}

/* Rounds: every rule-named entry whose name another entry also has, or the runtime declares,
 * moves one level up, skipping a level that gives the same name. In a clash between entries,
 * one whose next level is `_op` (it has no overload to spell out) waits a round, so that the
 * others move and it keeps its name: clamp stays `clamp` when clamp.Tensor becomes
 * `clamp_tensor`. Level 3 is taken only by entries that still clash at `_op`, as two schemas
 * that differ only in where the `.` is do (a name without that clash never gets there); an
 * entry without an overload stops at `_op`. A `c_name:` never moves. What still clashes
 * after the rounds is check_public_names' error. */
void tga_assign_cnames(tgm_arena *a, const tgm_model *m, const char **names)
{
    int n = m->nfuncs;
    int *level = tgm_alloc(a, sizeof *level * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) names[i] = tga_cname(a, m->funcs[i]);
    for (int round = 0; round < 4; round++) {
        tgm_name_map *seen = tgm__map_new(a), *dup = tgm__map_new(a);
        for (int i = 0; i < n; i++)
            if (tgm__map_put(seen, names[i], (void *)names[i]))
                tgm__map_put(dup, names[i], (void *)names[i]);
        bool moved = false;
        for (int i = 0; i < n; i++) {
            const tgm_func *f = m->funcs[i];
            bool runtime = runtime_has(a, m, names[i]);
            bool last =
                level[i] == 3 || (level[i] == 2 && !(f->schema.overload && *f->schema.overload));
            if (f->c_name || last || !(runtime || tgm__map_get(dup, names[i]))) continue;
            int next = level[i] + 1;
            const char *name = rule_name(a, f, next);
            if (next == 1 && !strcmp(name, names[i])) name = rule_name(a, f, ++next);
            if (next == 2 && !runtime && round == 0) continue;
            names[i] = name;
            level[i] = next;
            moved = true;
        }
        if (!moved && round > 0) break;
    }
}

const char *tga_opname(tgm_arena *a, const tgm_func *f)
{
    const tgm_schema *s = &f->schema;
    const char *name = s->inplace && !s->dunder ? tgs_fmt(a, "%s_", s->base) : s->base;
    return s->ns ? tgs_fmt(a, "%s::%s", s->ns, name) : name;
}

const char *tga_enum_name(tgm_arena *a, const char *prefix, const char *cname)
{
    char *e = tgs_fmt(a, "%s_OP_%s", prefix, cname);
    for (char *p = e; *p; p++) *p = (char)toupper((unsigned char)*p);
    return e;
}

/* Names that cannot be C identifiers in our code: keywords, the macros of <stdbool.h>, and
 * `opts` (the options parameter). Generated locals start with `tg_`, which no schema uses.
 * Sorted in strcmp order, for bsearch: every argument of every operator is looked up. */
static const char *const reserved[] = {
    "NULL",     "auto",    "bool",   "break",    "case",   "char",     "const",  "continue",
    "default",  "do",      "double", "else",     "enum",   "extern",   "false",  "float",
    "for",      "goto",    "if",     "inline",   "int",    "long",     "opts",   "register",
    "restrict", "return",  "short",  "signed",   "sizeof", "static",   "struct", "switch",
    "true",     "typedef", "union",  "unsigned", "void",   "volatile", "while",
};

static int by_name(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

const char *tga_ident(tgm_arena *a, const char *name)
{
    bool taken = bsearch(name, reserved, sizeof reserved / sizeof *reserved, sizeof *reserved,
                         by_name) != NULL;
    return taken ? tgs_fmt(a, "%s_", name) : name;
}

const char *tga_key_prefix(tgm_key key)
{
    switch (key) {
    case TGM_KEY_CPU: return "cpu";
    case TGM_KEY_CUDA: return "cuda";
    case TGM_KEY_COMPOSITE_IMPLICIT:
    case TGM_KEY_COMPOSITE_EXPLICIT:
    case TGM_KEY_COMPOSITE_EXPLICIT_NONFUNCTIONAL: return "composite";
    default: return NULL;
    }
}

/* A kernel name as C spells it (docs/spec.md, "Dispatch keys"): PyTorch's default namespace
 * `at::native::` is dropped (`at::native::foo` is `foo`, as in PyTorch), every other `::`
 * becomes `_` (`legacy::cpu::_th_addmv` is `legacy_cpu__th_addmv`). Two names this makes
 * equal are check_kernel_names' error (api_kernels.c). */
const char *tga_kernel_c_name(tgm_arena *a, const char *kernel)
{
    static const char native[] = "at::native::";
    if (!strncmp(kernel, native, sizeof native - 1)) kernel += sizeof native - 1;
    return strstr(kernel, "::") ? tgs_replace(a, kernel, "::", "_") : kernel;
}

const char *tga_kernel_symbol(tgm_arena *a, const char *prefix, tgm_key key, const char *kernel)
{
    const char *key_prefix = tga_key_prefix(key);
    return key_prefix ? tgs_fmt(a, "%s__%s_%s", prefix, key_prefix, tga_kernel_c_name(a, kernel))
                      : NULL;
}

/* The word a result of kind k adds to a result struct's name; NULL for Tensor, which adds
 * none (today's all-Tensor names stay). */
static const char *result_word(tga_kind k)
{
    switch (k) {
    case TGA_TENSOR: return NULL;
    case TGA_TENSOR_LIST: return "tensorlist";
    case TGA_OPT_TENSOR: return "opttensor";
    case TGA_INT: return "int";
    case TGA_DOUBLE: return "float";
    case TGA_BOOL: return "bool";
    case TGA_DTYPE: return "dtype";
    case TGA_QSCHEME: return "qscheme";
    default: return "other";
    }
}

/* All Tensor: tg_<name>_<name>... ("tg_values_indices"), or tg_tensorsN when a return has no
 * name. Otherwise the types are part of the name, so that structs of equal return names and
 * other types differ: each named non-Tensor result adds its type's word after its name
 * ("tg_hist_bin_edges_tensorlist"), and unnamed results make "tg_tuple_" plus every result's
 * word, a run of k equal words written once with "x<k>" ("tg_tuple_tensorx4_int"). */
const char *tga_result_struct_name(tgm_arena *a, const char *prefix, const tgm_schema *s)
{
    bool named = true, all_tensors = true;
    for (int i = 0; i < s->nrets; i++) {
        if (!s->rets[i].name) named = false;
        if (tga_type_kind(&s->rets[i].type) != TGA_TENSOR) all_tensors = false;
    }
    if (!named && all_tensors) return tgs_fmt(a, "%s_tensors%d", prefix, s->nrets);
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_puts(&b, prefix);
    if (!named) tgs_puts(&b, "_tuple");
    for (int i = 0; i < s->nrets; i++) {
        const char *w = result_word(tga_type_kind(&s->rets[i].type));
        if (named) {
            tgs_printf(&b, "_%s", s->rets[i].name);
            if (w) tgs_printf(&b, "_%s", w);
            continue;
        }
        int run = 1;
        while (i + run < s->nrets &&
               tga_type_kind(&s->rets[i + run].type) == tga_type_kind(&s->rets[i].type))
            run++;
        tgs_printf(&b, "_%s", w ? w : "tensor");
        if (run > 1) tgs_printf(&b, "x%d", run);
        i += run - 1;
    }
    return tgs_finish(&b, a);
}
