/* Tensor[] results: operators that return a list (split, unbind, chunk) hand the caller a
 * heap array plus one reference per element (tg_core.h). The array is plain malloc memory so
 * that whoever ends up owning the list (the caller, a scope, a boxed stack) frees it the same
 * way, with tg_tensor_list_release or tg_scope_end. */
#include "core/rt_private.h"

#include <stdio.h>
#include <stdlib.h>

/* Whether an open scope owns l. A recorded list has every element counted in scope_refs, so
 * the scan of the scope's entries is needed only when its first element is counted (or it has
 * none). */
static bool scope_owned(tg_tensor_list l)
{
    if (l.len > 0 && (!l.data[0] || __atomic_load_n(&l.data[0]->scope_refs, __ATOMIC_RELAXED) == 0))
        return false;
    return tg__scope_holds_array(l.data);
}

void tg_tensor_list_release(tg_tensor_list l)
{
    if (!l.data) return;
    if (TG__UNLIKELY(scope_owned(l))) { /* releasing it would free the array twice */
        char what[384], first[400] = "";
        if (l.len > 0)
            snprintf(first, sizeof first, " (the first is %s)",
                     tg__describe(what, sizeof what, l.data[0]));
        tg__misuse("tensor_list_release",
                   "the list of %lld tensors%s belongs to an open scope, not to the caller; "
                   "ignored (tg_scope_end releases it; tg_scope_keep_list keeps it)",
                   (long long)l.len, first);
        return;
    }
    for (int64_t i = 0; i < l.len; i++) tg_release(l.data[i]);
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
