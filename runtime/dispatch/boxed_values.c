/* Boxed values: the schema name of each tag, and giving back what a stack owns. */
#include "dispatch/dispatch_private.h"

const char *tg_ivalue_tag_name(tg_ivalue_tag tag)
{
    static const char *const names[] = {
        [TG_IV_NONE] = "None",
        [TG_IV_TENSOR] = "Tensor",
        [TG_IV_INT] = "int",
        [TG_IV_DOUBLE] = "float",
        [TG_IV_BOOL] = "bool",
        [TG_IV_INT_LIST] = "int[]",
        [TG_IV_TENSOR_LIST] = "Tensor[]",
        [TG_IV_DTYPE] = "ScalarType",
        [TG_IV_DEVICE] = "Device",
        [TG_IV_STRING] = "str",
        [TG_IV_GENERATOR] = "Generator",
        [TG_IV_LAYOUT] = "Layout",
        [TG_IV_MEMORY_FORMAT] = "MemoryFormat",
        [TG_IV_FLOAT_LIST] = "float[]",
        [TG_IV_BOOL_LIST] = "bool[]",
        [TG_IV_STR_LIST] = "str[]",
        [TG_IV_STORAGE] = "Storage",
        [TG_IV_QUANTIZER] = "ConstQuantizerPtr",
        [TG_IV_QSCHEME] = "QScheme",
    };
    return (unsigned)tag < sizeof names / sizeof names[0] && names[tag] ? names[tag] : "?";
}

void tg_boxed_clear(tg_boxed_stack *s)
{
    if (!s) return;
    for (int i = 0; i < s->n; i++) {
        if (s->v[i].tag == TG_IV_TENSOR) tg_release(s->v[i].v.t);
        if (s->v[i].tag == TG_IV_TENSOR_LIST) tg_tensor_list_release(s->v[i].v.tensors);
        if (s->v[i].tag == TG_IV_INT_LIST) tg_int_list_release(s->v[i].v.ints);
    }
    s->n = 0;
}

int tg__boxed_fail(tg_boxed_stack *s)
{
    for (int i = 0; s && i < s->n; i++)
        if (s->v[i].tag == TG_IV_TENSOR) tg_release(s->v[i].v.t);
    if (s) s->n = 0;
    return -1;
}
