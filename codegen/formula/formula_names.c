/* What the formula checker looks up: operators by base name, which argument types a
 * parameter accepts, optionals and their values, and the names of backward nodes. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "formula/formula_check.h"
#include "base/strbuf.h"

const char *tgf_node_base_name(tgm_arena *a, const char *base)
{
    /* PyTorch's rule: `_softmax` -> Softmax, `log_softmax` -> LogSoftmax, `mse_loss` -> MseLoss. */
    tgs_buf b;
    tgs_buf_init(&b);
    bool up = true;
    for (const char *p = base; *p; p++) {
        if (*p == '_') {
            up = true;
            continue;
        }
        char c = up ? (char)toupper((unsigned char)*p) : *p;
        tgs_putn(&b, &c, 1);
        up = false;
    }
    tgs_puts(&b, "Backward");
    return tgs_finish(&b, a);
}

int tgf_find_ops(const tga_ops *ops, const char *name, const tga_op **found, int max)
{
    if (!strncmp(name, "at::", 4)) name = name + 4;
    size_t n = strlen(name);
    bool inplace = n > 1 && name[n - 1] == '_' && !(n > 4 && !strncmp(name, "__", 2));
    /* The candidates share the base name: look the group up (a scan of every op per call made
     * checking quadratic in the spec's size). The key drops the in-place `_`, as bases do. */
    char small[128], *key = n < sizeof small ? small : malloc(n + 1);
    if (!key) return 0;
    memcpy(key, name, n - inplace);
    key[n - inplace] = '\0';
    const tga_op_group *g = ops->by_base ? tgm__map_get(ops->by_base, key) : NULL, *more = NULL;
    /* An operator library's formulas call its own operators, else tensorgen's: a base name of
     * its own hides tensorgen's overloads of it. A file checked against a base (--base) calls
     * both its own and the base's: those it restates once. */
    const tga_ops *imp = ops->imports;
    if (imp && imp->by_base && (!g || imp->is_base)) more = tgm__map_get(imp->by_base, key);
    if (!g) g = more, more = NULL;
    if (key != small) free(key);
    int count = 0;
    for (int i = 0; g && i < g->n + (more ? more->n : 0) && count < max; i++) {
        const tga_op *op = i < g->n ? g->ops[i] : more->ops[i - g->n];
        const tgm_schema *s = &op->f->schema;
        if (i >= g->n && ops->by_name && tgm__map_get(ops->by_name, s->full_name)) continue;
        /* The in-place ones only when asked for by name (`mul_`); out= ones never: a formula
         * has nowhere to put their outputs. */
        if (op->f->kind == TGM_KIND_OUT || op->f->kind == TGM_KIND_SCRATCH ||
            op->f->kind == TGM_KIND_MUTABLE)
            continue;
        if (s->inplace != inplace || (op->f->kind == TGM_KIND_INPLACE) != inplace) continue;
        if (strlen(s->base) != n - inplace || strncmp(s->base, name, n - inplace)) continue;
        found[count++] = op;
    }
    return count;
}

bool tgf_accepts(tga_kind want, tga_kind have)
{
    if (want == have) return true;
    switch (want) {
    /* A Tensor? value (an optional input) where a Tensor is wanted: the call fails at run time
     * with "argument ... is NULL" when it is None, like PyTorch's undefined tensors. */
    case TGA_TENSOR: return have == TGA_OPT_TENSOR;
    case TGA_OPT_TENSOR: return have == TGA_TENSOR;
    case TGA_OPT_INT: return have == TGA_INT;
    case TGA_DOUBLE: return have == TGA_INT;
    case TGA_OPT_DOUBLE: return have == TGA_INT || have == TGA_DOUBLE;
    case TGA_OPT_BOOL: return have == TGA_BOOL;
    case TGA_OPT_INT_LIST: return have == TGA_INT_LIST;
    case TGA_OPT_DTYPE: return have == TGA_DTYPE;
    case TGA_OPT_DEVICE: return have == TGA_DEVICE; /* one C type: tg_device */
    case TGA_OPT_STR: return have == TGA_STR;
    default: return false;
    }
}

/* Optional kinds and the kinds of their values. */
static const struct {
    tga_kind opt, value;
} optionals[] = {
    { TGA_OPT_TENSOR, TGA_TENSOR },     { TGA_OPT_INT, TGA_INT },
    { TGA_OPT_INT_LIST, TGA_INT_LIST }, { TGA_OPT_DOUBLE, TGA_DOUBLE },
    { TGA_OPT_BOOL, TGA_BOOL },         { TGA_OPT_DTYPE, TGA_DTYPE },
    { TGA_OPT_LAYOUT, TGA_LAYOUT },     { TGA_OPT_DEVICE, TGA_DEVICE },
    { TGA_OPT_STR, TGA_STR },           { TGA_OPT_MEMORY_FORMAT, TGA_MEMORY_FORMAT },
};

tga_kind tgf_optional_value(tga_kind k)
{
    for (size_t i = 0; i < sizeof optionals / sizeof optionals[0]; i++)
        if (optionals[i].opt == k) return optionals[i].value;
    return TGA_UNSUPPORTED;
}

tga_kind tgf_optional_of(tga_kind k)
{
    for (size_t i = 0; i < sizeof optionals / sizeof optionals[0]; i++)
        if (optionals[i].value == k) return optionals[i].opt;
    return TGA_UNSUPPORTED;
}

bool tgf_options_part(const tga_arg *p)
{
    return p->kind == TGA_OPT_LAYOUT || p->kind == TGA_OPT_DEVICE ||
           (p->kind == TGA_OPT_BOOL && p->arg && !strcmp(p->arg->name, "pin_memory"));
}

bool tgf_empty_braces(const tgf_node *n) { return n->kind == TGF_LIST && n->nargs == 0; }

int tgf_memory_format_options(const tga_op *op, int pi, const tgf_node *arg)
{
    if (arg->type != TGA_MEMORY_FORMAT || arg->ntuple || pi >= op->nargs ||
        op->args[pi].kind != TGA_OPT_DTYPE)
        return -1;
    while (pi + 1 < op->nargs && tgf_options_part(&op->args[pi + 1])) pi++;
    return pi + 1 < op->nargs && op->args[pi + 1].kind == TGA_OPT_MEMORY_FORMAT ? pi + 1 : -1;
}

const char *tgf_kind_text(tga_kind k)
{
    static const char *const text[TGA_KIND_COUNT] = {
        [TGA_UNSUPPORTED] = "?",
        [TGA_TENSOR] = "Tensor",
        [TGA_OPT_TENSOR] = "Tensor?",
        [TGA_TENSOR_LIST] = "Tensor[]",
        [TGA_INT] = "int",
        [TGA_OPT_INT] = "int?",
        [TGA_INT_LIST] = "int[]",
        [TGA_OPT_INT_LIST] = "int[]?",
        [TGA_DOUBLE] = "Scalar",
        [TGA_OPT_DOUBLE] = "Scalar?",
        [TGA_BOOL] = "bool",
        [TGA_OPT_BOOL] = "bool?",
        [TGA_DTYPE] = "ScalarType",
        [TGA_OPT_DTYPE] = "ScalarType?",
        [TGA_LAYOUT] = "Layout",
        [TGA_OPT_LAYOUT] = "Layout?",
        [TGA_DEVICE] = "Device",
        [TGA_OPT_DEVICE] = "Device?",
        [TGA_MEMORY_FORMAT] = "MemoryFormat",
        [TGA_OPT_MEMORY_FORMAT] = "MemoryFormat?",
        [TGA_OPT_GENERATOR] = "Generator?",
        [TGA_STR] = "str",
        [TGA_OPT_STR] = "str?",
        [TGA_OPT_TENSOR_LIST] = "Tensor?[]",
        [TGA_TENSOR_LIST_OR_NONE] = "Tensor[]?",
        [TGA_FLOAT_LIST] = "float[]",
        [TGA_OPT_FLOAT_LIST] = "float[]?",
        [TGA_BOOL_LIST] = "bool[]",
        [TGA_OPT_BOOL_LIST] = "bool[]?",
        [TGA_STR_LIST] = "str[]",
        [TGA_OPT_STR_LIST] = "str[]?",
        [TGA_STORAGE] = "Storage",
        [TGA_OPT_STORAGE] = "Storage?",
        [TGA_STREAM] = "Stream",
        [TGA_QSCHEME] = "QScheme",
        [TGA_OPT_QSCHEME] = "QScheme?",
        [TGA_QUANTIZER] = "ConstQuantizerPtr",
    };
    switch ((int)k) {
    case TGA_UNSUPPORTED: return "a value of a type without a C mapping";
    case TGF_KIND_OPTIONS: return "TensorOptions";
    case TGF_KIND_NONE: return "std::nullopt";
    case TGF_KIND_LAMBDA: return "a lambda";
    default: break;
    }
    return k < TGA_KIND_COUNT && text[k] ? text[k] : "?";
}
