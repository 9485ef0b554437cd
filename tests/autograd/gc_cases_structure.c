/* Gradcheck cases of the cumulative and structure operators (gradcheck.h), with gradgrad:
 * their derivatives are the forward operators again (cumsum_backward, roll_backward) or
 * composites of them (cumprod_backward, repeat_backward, repeat_interleave.self_int).
 * cumprod's input with zeros is x * mask (a fixed mask of zeros made on x's device), so the
 * gradient flows through cumprod_backward's zero branches. */
#include "gradcheck.h"
#include "kt_util.h"

GC_FN(f_cumsum1) { return gc_y1(y, tg_cumsum(x[0], 1)); }
GC_FN(f_cumsum_neg) { return gc_y1(y, tg_cumsum(x[0], -3)); }
GC_FN(f_cumprod1) { return gc_y1(y, tg_cumprod(x[0], 1)); }
GC_FN(f_cumprod0) { return gc_y1(y, tg_cumprod(x[0], 0)); }
/* x (3, 5) with zeros at (0, 1), (1, 0), (1, 3), (2, 4): one, two, and a last-place zero. */
GC_FN(f_cumprod_zeros)
{
    tg_tensor *m = NULL, *z = NULL;
    TG_NO_GRAD {
        tg_tensor *ones = tg_ones_like(x[0]);
        tg_tensor *f = ones ? tg_flatten(ones) : NULL;
        static const int64_t zpos[4] = { 1, 5, 8, 14 };
        for (int i = 0; f && i < 4; i++) {
            tg_tensor *e = tg_select(f, 0, zpos[i]);
            if (e) tg_release(tg_fill_(e, 0.0)); /* fill_ returns a new reference to e */
            tg_release(e);
        }
        m = f ? tg_reshape(f, TG_INTS(3, 5)) : NULL;
        kt_release_all(f, ones);
    }
    z = m ? tg_mul(x[0], m) : NULL;
    y[0] = z ? tg_cumprod(z, 1) : NULL;
    kt_release_all(z, m);
    return y[0] ? 1 : -1;
}
/* cumprod_backward as a function of grad (x[0]) and input (x[1]). */
GC_FN(f_cumprod_backward)
{
    tg_tensor *out = tg_cumprod(x[1], 1);
    y[0] = out ? tg_cumprod_backward(x[0], x[1], 1, out) : NULL;
    tg_release(out);
    return y[0] ? 1 : -1;
}
/* In place on a copy of x (the copy is part of the differentiated function). */
GC_FN(f_cumsum_)
{
    tg_tensor *c = tg_clone(x[0]);
    y[0] = c ? tg_cumsum_(c, 0) : NULL;
    tg_release(c);
    return y[0] ? 1 : -1;
}
GC_FN(f_cumprod_)
{
    tg_tensor *c = tg_clone(x[0]);
    y[0] = c ? tg_cumprod_(c, -1) : NULL;
    tg_release(c);
    return y[0] ? 1 : -1;
}
GC_FN(f_cumsum_backward) { return gc_y1(y, tg_cumsum_backward(x[0], 0)); }
GC_FN(f_flip) { return gc_y1(y, tg_flip(x[0], TG_INTS(0, 2))); }
GC_FN(f_roll) { return gc_y1(y, tg_roll(x[0], TG_INTS(1, -2), .dims = TG_INTS(0, 1))); }
GC_FN(f_roll_flat) { return gc_y1(y, tg_roll(x[0], TG_INTS(5))); }
GC_FN(f_roll_backward) { return gc_y1(y, tg_roll_backward(x[0], TG_INTS(2), .dims = TG_INTS(-1))); }
GC_FN(f_repeat) { return gc_y1(y, tg_repeat(x[0], TG_INTS(2, 1, 3))); }
GC_FN(f_repeat_backward)
{
    return gc_y1(y, tg_repeat_backward(x[0], TG_INTS(2, 1, 3), TG_INTS(2, 3)));
}
GC_FN(f_ri_dim)
{
    tg_opt_int d = 1;
    y[0] = tg_repeat_interleave_self_int(x[0], 2, .dim = d);
    return 1;
}
GC_FN(f_ri_flat) { return gc_y1(y, tg_repeat_interleave_self_int(x[0], 3)); }
/* counts [2, 1, 0] (flip of arange(3), made on x's device) for the 3 columns of x. */
GC_FN(f_ri_tensor)
{
    tg_tensor *cnt = NULL;
    TG_NO_GRAD {
        tg_tensor *a = tg_arange(3, .dtype = TG_INT64, .device = tg_tensor_device(x[0]));
        cnt = a ? tg_flip(a, TG_INTS(0)) : NULL;
        tg_release(a);
    }
    tg_opt_int d = 1;
    y[0] = cnt ? tg_repeat_interleave_self(x[0], cnt, .dim = d) : NULL;
    tg_release(cnt);
    return y[0] ? 1 : -1;
}

static const gc_case structure_cases[] = {
    GC_CASE("cumsum", "dim 1", f_cumsum1, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("cumsum", "dim -3, transposed", f_cumsum_neg, { REAL_T(2, 3, 4) }, .gradgrad = true),
    GC_CASE("cumsum_", "dim 0, on a copy", f_cumsum_, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("cumprod_", "dim -1, on a copy", f_cumprod_, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("cumsum_backward", "dim 0", f_cumsum_backward, { REAL(4, 3) }, .gradgrad = true),
    GC_CASE("cumprod", "dim 1", f_cumprod1, { REAL(3, 5) }, .gradgrad = true),
    GC_CASE("cumprod", "dim 0, strided", f_cumprod0, { REAL_S(4, 3) }, .gradgrad = true),
    GC_CASE("cumprod", "zeros in the input", f_cumprod_zeros, { REAL(3, 5) }, .gradgrad = true),
    GC_CASE("cumprod_backward", "grad and input", f_cumprod_backward, { REAL(3, 4), REAL(3, 4) },
            .gradgrad = true),
    GC_CASE("flip", "dims 0, 2, transposed", f_flip, { REAL_T(2, 3, 4) }, .gradgrad = true),
    GC_CASE("roll", "two dims, strided", f_roll, { REAL_S(3, 4) }, .gradgrad = true),
    GC_CASE("roll", "flattened", f_roll_flat, { REAL_T(3, 4) }, .gradgrad = true),
    GC_CASE("roll_backward", "last dim", f_roll_backward, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("repeat", "(2, 1, 3) of (2, 3)", f_repeat, { REAL_T(2, 3) }, .gradgrad = true),
    GC_CASE("repeat_backward", "grad (2, 2, 9)", f_repeat_backward, { REAL(2, 2, 9) },
            .gradgrad = true),
    GC_CASE("repeat_interleave.self_int", "dim 1", f_ri_dim, { REAL(2, 3) }, .gradgrad = true),
    GC_CASE("repeat_interleave.self_int", "flattened", f_ri_flat, { REAL_T(2, 3) },
            .gradgrad = true),
    GC_CASE("repeat_interleave.self_Tensor", "counts 2, 1, 0", f_ri_tensor, { REAL_T(2, 3) },
            .gradgrad = true),
};
GC_REGISTER(structure_cases);
