/* Gradcheck cases of fills (fill_, zero_, the random fills) and the *_like factories: the old
 * values get no gradient, the factories' results do not require grad (gradcheck.h).
 *
 * Each case is a small function of its inputs x[] that calls the operator and returns its
 * outputs in y[] (GC_FN, gradcheck.h). In-place operators run on a clone of x[0] (a leaf requiring
 * grad cannot be modified in place); operators that draw random numbers reseed a generator
 * inside the function, so that the finite differences see the same draw on every call. Inputs
 * are chosen away from the points where an operator is not differentiable (GC_AWAY0 for relu
 * and abs, GC_POS for log and sqrt, GC_DISTINCT for max and min, which would otherwise tie). */
#include "gradcheck.h"

/* ------------------------------------------------------------------ fills */

GC_FN(f_fill_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_fill_(s, 2.5), y);
}
GC_FN(f_zero_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_zero_(s), y);
}
/* The filled tensor times x[1]: the gradient reaches x[1] only. */
GC_FN(f_fill_mul)
{
    tg_tensor *s = tg_clone(x[0]);
    tg_release(tg_fill_(s, 1.5));
    y[0] = tg_mul(s, x[1]);
    tg_release(s);
    return 1;
}
GC_FN(f_uniform_)
{
    tg_generator *g = tg_generator_new(7);
    tg_tensor *s = tg_clone(x[0]);
    int n = gc_inplace_result(s, tg_uniform_(s, .from = -2, .to = 2, .generator = g), y);
    tg_generator_free(g);
    return n;
}
GC_FN(f_normal_)
{
    tg_generator *g = tg_generator_new(7);
    tg_tensor *s = tg_clone(x[0]);
    int n = gc_inplace_result(s, tg_normal_(s, .mean = 1, .std = 2, .generator = g), y);
    tg_generator_free(g);
    return n;
}
GC_FN(f_random_)
{
    tg_generator *g = tg_generator_new(7);
    tg_tensor *s = tg_clone(x[0]);
    int n = gc_inplace_result(s, tg_random_(s, 0, 10, .generator = g), y);
    tg_generator_free(g);
    return n;
}
/* *_like factories read only metadata: their result does not require grad. */
GC_FN(f_zeros_like)
{
    y[0] = tg_zeros_like(x[0]);
    y[1] = tg_add(x[0], y[0]);
    return 2;
}
GC_FN(f_ones_like)
{
    y[0] = tg_ones_like(x[0]);
    return 1;
}
GC_FN(f_empty_like)
{
    tg_tensor *e = tg_empty_like(x[0]);
    y[0] = tg_mul_scalar(x[0], 2);
    y[1] = tg_fill_(e, 1);
    tg_release(e);
    return 2;
}
GC_FN(f_full_like) { return gc_y1(y, tg_full_like(x[0], 3)); }
/* x[0] times 1 (the differentiable result) and r, a random factory's result, filled with zeros
 * (its values are random; what is checked is that it does not require grad); r released. */
static int with_zeroed(tg_tensor *const *x, tg_tensor **y, tg_tensor *r)
{
    y[0] = tg_mul_scalar(x[0], 1);
    y[1] = tg_fill_(r, 0);
    tg_release(r);
    return 2;
}
GC_FN(f_rand_like) { return with_zeroed(x, y, tg_rand_like(x[0])); }
GC_FN(f_randn_like) { return with_zeroed(x, y, tg_randn_like(x[0])); }
GC_FN(f_randint_like) { return with_zeroed(x, y, tg_randint_like(x[0], 5)); }
GC_FN(f_randint_like_low) { return with_zeroed(x, y, tg_randint_like_low(x[0], 1, 5)); }

static const gc_case factory_cases[] = {
    /* fills: the old values get no gradient */
    GC_CASE("fill_.Scalar", "fill a clone", f_fill_, { REAL(3, 4) }),
    GC_CASE("fill_.Scalar", "filled clone times x1", f_fill_mul, { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("zero_", "zero a clone", f_zero_, { REAL(2, 3) }),
    GC_CASE("uniform_", "seeded generator", f_uniform_, { REAL(3, 4) }),
    GC_CASE("normal_", "seeded generator", f_normal_, { REAL(3, 4) }),
    GC_CASE("random_.from", "seeded generator", f_random_, { REAL(3, 4) }),
    GC_CASE("empty_like", "result does not require grad", f_empty_like, { REAL(2, 3) }),
    GC_CASE("zeros_like", "result does not require grad", f_zeros_like, { REAL(2, 3) }),
    GC_CASE("ones_like", "result does not require grad", f_ones_like, { REAL(2, 3) }),
    GC_CASE("full_like", "result does not require grad", f_full_like, { REAL(2, 3) }),
    GC_CASE("rand_like", "result does not require grad", f_rand_like, { REAL(2, 3) }),
    GC_CASE("randn_like", "result does not require grad", f_randn_like, { REAL(2, 3) }),
    GC_CASE("randint_like", "result does not require grad", f_randint_like, { REAL(2, 3) }),
    GC_CASE("randint_like.low_dtype", "result does not require grad", f_randint_like_low,
            { REAL(2, 3) }),
};
GC_REGISTER(factory_cases);
