/* Tensor[] results: operators that return a list (split, unbind, chunk) hand the caller a
 * heap array plus one reference per element (tg_core.h). The array is plain malloc memory so
 * that whoever ends up owning the list (the caller, a scope, a boxed stack) frees it the same
 * way, with tg_tensor_list_release or tg_scope_end. */
#include "core/rt_private.h"

#include <stdlib.h>

void tg_tensor_list_release(tg_tensor_list l)
{
    for (int64_t i = 0; l.data && i < l.len; i++) tg_release(l.data[i]);
    free((void *)l.data);
}

tg_tensor **tg_tensor_list_alloc(const char *op, int64_t n)
{
    if (n < 0) return tg__error(op, "negative list length %lld", (long long)n);
    tg_tensor **items = calloc((size_t)(n ? n : 1), sizeof *items);
    if (!items) return tg__error(op, "out of memory");
    return items;
}

tg_tensor_list tg_tensor_list_fail(tg_tensor **items, int64_t n)
{
    tg_tensor_list_release((tg_tensor_list){ items, n });
    return (tg_tensor_list){ NULL, 0 };
}

/* int[] results: a plain malloc'd array, like a Tensor[] result's. */
void tg_int_list_release(tg_int_list l) { free((void *)l.data); }
