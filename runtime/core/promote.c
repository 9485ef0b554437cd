/* result_type: PyTorch's type promotion over operands.
 *
 * Operands fall in three groups by priority: tensors with dims, zero-dim tensors, and wrapped
 * numbers (Scalars). Each group is promoted on its own (a wrapped float counts as the default
 * dtype, a wrapped integer as int64, a wrapped bool as bool). A lower-priority group affects
 * the result only when its category (bool < integral < floating) is higher than the group
 * above it: int32 tensor + 2.5 -> float32 (the default dtype), int64 tensor + float64 zero-dim
 * -> float64, uint8 tensor + int8 zero-dim -> uint8, float16 tensor + float32 zero-dim ->
 * float16, bool tensor + 5 -> int64. */
#include "core/rt_private.h"

static inline tg_dtype promote_skip_none(tg_dtype a, tg_dtype b)
{
    if (a == TG_DTYPE_NONE) return b;
    if (b == TG_DTYPE_NONE) return a;
    return tg_promote_types(a, b);
}

/* `higher` is the result of the higher-priority group. */
static tg_dtype combine_categories(tg_dtype higher, tg_dtype lower)
{
    if (higher != TG_DTYPE_NONE && tg__is_float(higher)) return higher;
    if (higher == TG_BOOL || (lower != TG_DTYPE_NONE && tg__is_float(lower)))
        return promote_skip_none(higher, lower);
    return higher != TG_DTYPE_NONE ? higher : lower;
}

void tg__result_type_update(tg_result_type_state *s, const tg_tensor *t)
{
    if (!t) return;
    tg_dtype cur = t->dtype;
    if (t->is_wrapped_number) {
        if (tg__is_float(cur)) cur = tg_get_default_dtype();
        s->wrapped = promote_skip_none(s->wrapped, cur);
    } else if (t->ndim > 0) {
        s->dim = promote_skip_none(s->dim, cur);
    } else {
        s->zero = promote_skip_none(s->zero, cur);
    }
}

void tg__result_type_update_scalar(tg_result_type_state *s, double v, bool is_integral)
{
    (void)v;
    s->wrapped = promote_skip_none(s->wrapped, is_integral ? TG_INT64 : tg_get_default_dtype());
}

tg_dtype tg__result_type_finish(const tg_result_type_state *s)
{
    return combine_categories(s->dim, combine_categories(s->zero, s->wrapped));
}

tg_dtype tg__result_type(tg_tensor *const *ts, int n)
{
    tg_result_type_state s = TG_RESULT_TYPE_INIT;
    for (int i = 0; i < n; i++) tg__result_type_update(&s, ts[i]);
    return tg__result_type_finish(&s);
}
