/* Boxed values: the schema name of each tag (dispatch/schema_types.h), and giving back what a
 * stack owns. */
#include "dispatch/dispatch_private.h"

const char *tg_ivalue_tag_name(tg_ivalue_tag tag)
{
    static const char *const names[] = {
#define TAG_NAME(tag, name, member) [TG_IV_##tag] = name,
        TG_IVALUE_TAGS(TAG_NAME)
#undef TAG_NAME
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
