/* Scopes around real operator calls, composites included: a composite kernel's inner public
 * calls (tg_add_scalar calls tg_add, tg_matmul calls tg_mm/tg_reshape, ...) must not be
 * recorded in the caller's scope, or tg_scope_end would release them a second time. */
#include <criterion/criterion.h>

#include "tensorgen.h"

static double values(tg_tensor *t, int64_t i)
{
    double buf[64];
    cr_assert(tg_tensor_numel(t) <= 64);
    cr_assert_eq(tg_tensor_to_doubles(t, buf, tg_tensor_numel(t)), 0);
    return buf[i];
}

Test(scope_ops, composites_inside_a_scope_are_released_once)
{
    int64_t live0 = tg_live_tensors(), storages0 = tg_live_storages();
    tg_tensor *kept;
    tg_scope_begin();
    {
        tg_tensor *a = tg_arange(6.0, .dtype = TG_FLOAT64); /* composite factory */
        tg_tensor *m = tg_reshape(a, TG_INTS(2, 3));        /* composite: view */
        tg_tensor *b = tg_add_scalar(m, 1.0);               /* composite: wraps, calls tg_add */
        tg_tensor *c = tg_matmul(b, tg_t(m));               /* composite: calls tg_mm */
        tg_tensor *s = tg_softmax(c, 1);                    /* composite: calls _softmax */
        tg_tensor *total = tg_sum(s);
        cr_assert_not_null(total, "%s", tg_last_error());
        kept = tg_scope_keep(tg_max(c));
    }
    tg_scope_end();
    /* c = (m + 1) @ m^T with m = [[0,1,2],[3,4,5]]: c[1][1] = 4*3 + 5*4 + 6*5 = 62. */
    cr_expect_float_eq(values(kept, 0), 62.0, 1e-12);
    tg_release(kept);
    cr_expect_eq(tg_live_tensors(), live0, "leaked %lld tensors",
                 (long long)(tg_live_tensors() - live0));
    cr_expect_eq(tg_live_storages(), storages0);
}

Test(scope_ops, nested_scopes_move_kept_tensors_outwards)
{
    int64_t live0 = tg_live_tensors();
    tg_scope_begin();
    tg_tensor *outer = tg_ones(TG_INTS(3));
    tg_scope_begin();
    tg_tensor *inner = tg_scope_keep(tg_mul_scalar(outer, 4.0));
    tg_tensor *dropped = tg_sub_scalar(inner, 1.0);
    (void)dropped;
    tg_scope_end();
    cr_expect_float_eq(values(inner, 2), 4.0, 0); /* still alive: now in the outer scope */
    tg_scope_end();
    cr_expect_eq(tg_live_tensors(), live0);
}
