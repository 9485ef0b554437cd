/* The cumulative and structure operators against PyTorch 1.13
 * (tests/fixtures/structure_fixtures.h, from tests/fixtures/gen_structure.py): forward values
 * in float64 and float32 (and int64 / bool for the gathers), the gradient through autograd
 * (so the backward helpers cumsum_backward, cumprod_backward, roll_backward, repeat_backward
 * and the parts of repeat_interleave.self_int) against torch.autograd's for a random
 * grad_output, integral and bool scans with PyTorch's promotion, repeat_interleave.Tensor's
 * indices, and PyTorch's error messages.
 *
 * Metric: float64 |got - want| <= 1e-12 + 1e-10 |want|; float32 scans equal PyTorch's float32
 * results exactly (both accumulate in double and round once per element); flip / roll /
 * repeat move elements, so every dtype equals the converted expected values exactly. */
#include "kt_util.h"
#include "../fixtures/structure_fixtures.h"
#include "tg_cover.h"

TG_COVERS("cumsum", "cumsum_", "cumsum.out", "cumprod", "cumprod_", "cumprod.out",
          "cumsum_backward", "cumprod_backward", "flip", "roll", "roll_backward", "repeat",
          "repeat_backward", "repeat_interleave.Tensor", "repeat_interleave.self_int",
          "repeat_interleave.self_Tensor");

#define RT 1e-10
#define AT 1e-12

/* The case's operator on x. */
static tg_tensor *run_op(const fx_struct_case *c, tg_tensor *x)
{
    tg_int_list a = { .len = c->na, .data = c->a }, b = { .len = c->nb, .data = c->b };
    switch (c->op) {
    case FX_CUMSUM: return tg_cumsum(x, c->dim);
    case FX_CUMPROD: return tg_cumprod(x, c->dim);
    case FX_FLIP: return tg_flip(x, a);
    case FX_ROLL: return tg_roll(x, b, .dims = a);
    case FX_REPEAT: return tg_repeat(x, a);
    case FX_REPEAT_INTERLEAVE_T: {
        tg_opt_int dim = c->dim != FX_DIM_NONE ? c->dim : TG_NONE_INT;
        int64_t nb = c->nb;
        tg_tensor *r = c->nb ? kt_tensor_i64(c->b, &nb, 1) : kt_tensor_i64(&c->rep, NULL, 0);
        return tg_repeat_interleave_self(x, r, .dim = dim);
    }
    default: {
        tg_opt_int dim = c->dim != FX_DIM_NONE ? c->dim : TG_NONE_INT;
        return tg_repeat_interleave_self_int(x, c->rep, .dim = dim);
    }
    }
}

static void check(tg_tensor *r, const fx_struct_case *c, const double *want, double rt, double at,
                  const char *what)
{
    cr_assert(r, "%s %s: %s", what, c->name, tg_last_error());
    kt_assert_shape(r, c->yshape, c->ydim);
    char buf[200];
    snprintf(buf, sizeof buf, "%s %s", what, c->name);
    kt_assert_close(r, want, tg_tensor_numel(r), rt, at, buf);
}

/* float64 values and gradients, float32 values (exactly PyTorch's float32 results). */
Test(structure, values_and_gradients)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_struct_cases); k++) {
        const fx_struct_case *c = &fx_struct_cases[k];
        tg_scope_begin();
        tg_tensor *x = kt_tensor(c->x, c->shape, c->ndim, TG_FLOAT64);
        check(run_op(c, x), c, c->y, RT, AT, "float64");
        tg_tensor *x32 = kt_tensor(c->x, c->shape, c->ndim, TG_FLOAT32);
        tg_tensor *y32 = run_op(c, x32);
        cr_assert(y32 && tg_tensor_dtype(y32) == TG_FLOAT32, "%s: float32", c->name);
        check(y32, c, c->y32, 0, 0, "float32");
        /* the gradient through autograd */
        tg_tensor *xl =
            tg_tensor_set_requires_grad(kt_tensor(c->x, c->shape, c->ndim, TG_FLOAT64), true);
        tg_tensor *y = run_op(c, xl), *g = kt_tensor(c->g, c->yshape, c->ydim, TG_FLOAT64);
        cr_assert(y, "%s: %s", c->name, tg_last_error());
        cr_assert_eq(tg_backward(y, .grad = g), 0, "%s backward: %s", c->name, tg_last_error());
        tg_tensor *gx = tg_tensor_grad(xl);
        if (kt_shape_numel(c->shape, c->ndim) > 0) {
            cr_assert(gx, "%s: no gradient", c->name);
            char buf[200];
            snprintf(buf, sizeof buf, "gradient %s", c->name);
            kt_assert_close(gx, c->gx, kt_shape_numel(c->shape, c->ndim), RT, AT, buf);
        }
        tg_scope_end();
    }
    kt_assert_no_leak(live);
}

/* flip / roll / repeat / repeat_interleave move elements: int64 and bool inputs give the
 * converted float64 results exactly; non-contiguous (transposed) inputs too. */
Test(structure, gathers_every_dtype_and_strides)
{
    kt_live live = kt_live_now();
    const tg_dtype dts[3] = { TG_INT64, TG_BOOL, TG_FLOAT32 };
    for (int64_t k = 0; k < KT_NUMEL(fx_struct_cases); k++) {
        const fx_struct_case *c = &fx_struct_cases[k];
        if (c->op == FX_CUMSUM || c->op == FX_CUMPROD) continue;
        int64_t n = kt_shape_numel(c->shape, c->ndim), ny = kt_shape_numel(c->yshape, c->ydim);
        double *xs = malloc(sizeof(double) * (size_t)(n ? n : 1));
        double *ys = malloc(sizeof(double) * (size_t)(ny ? ny : 1));
        for (int t = 0; t < 3; t++) {
            /* scaled so that int64 truncation keeps distinct values */
            for (int64_t i = 0; i < n; i++)
                xs[i] = dts[t] == TG_BOOL ? c->x[i] > 0 : trunc(4 * c->x[i]);
            /* the expected values: the float64 results, transformed the same way */
            for (int64_t i = 0; i < ny; i++)
                ys[i] = dts[t] == TG_BOOL ? c->y[i] > 0 : trunc(4 * c->y[i]);
            tg_scope_begin();
            tg_tensor *x = kt_tensor(xs, c->shape, c->ndim, dts[t]);
            tg_tensor *y = run_op(c, x);
            cr_assert(y && tg_tensor_dtype(y) == dts[t], "%s dtype %d", c->name, (int)dts[t]);
            check(y, c, ys, 0, 0, "dtype");
            tg_scope_end();
        }
        free(xs);
        free(ys);
        if (c->ndim >= 2) {
            /* a transposed view holding the same values */
            tg_scope_begin();
            tg_tensor *x = kt_tensor(c->x, c->shape, c->ndim, TG_FLOAT64);
            tg_tensor *xt = tg_contiguous(tg_transpose(x, 0, 1)), *back = tg_transpose(xt, 0, 1);
            check(run_op(c, back), c, c->y, 0, 0, "transposed");
            tg_scope_end();
        }
    }
    kt_assert_no_leak(live);
}

/* The scans over non-contiguous inputs, in place and into out=. */
Test(structure, cum_inplace_out_and_strides)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_struct_cases); k++) {
        const fx_struct_case *c = &fx_struct_cases[k];
        if (c->op != FX_CUMSUM && c->op != FX_CUMPROD) continue;
        bool sum = c->op == FX_CUMSUM;
        tg_scope_begin();
        tg_tensor *x = kt_tensor(c->x, c->shape, c->ndim, TG_FLOAT64);
        tg_tensor *xi = tg_clone(x);
        tg_tensor *r = sum ? tg_cumsum_(xi, c->dim) : tg_cumprod_(xi, c->dim);
        check(r, c, c->y, RT, AT, "in place");
        check(xi, c, c->y, RT, AT, "in place (self)");
        tg_tensor *o = tg_empty(TG_INTS(0), .dtype = TG_FLOAT64);
        r = sum ? tg_cumsum_out(x, c->dim, o) : tg_cumprod_out(x, c->dim, o);
        check(o, c, c->y, RT, AT, "out=");
        if (c->ndim >= 2) {
            tg_tensor *xt = tg_contiguous(tg_transpose(x, 0, 1)), *back = tg_transpose(xt, 0, 1);
            check(run_op(c, back), c, c->y, RT, AT, "transposed");
            /* out= a transposed view */
            tg_tensor *ot = tg_transpose(tg_empty_like(xt), 0, 1);
            cr_assert(sum ? tg_cumsum_out(x, c->dim, ot) : tg_cumprod_out(x, c->dim, ot));
            check(ot, c, c->y, RT, AT, "out= transposed");
        }
        tg_scope_end();
    }
    kt_assert_no_leak(live);
}

/* Integral and bool inputs scan in int64 (or dtype); float -> int64 truncates first. */
Test(structure, cum_integral_promotion)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_cum_int_cases); k++) {
        const fx_cum_int_case *c = &fx_cum_int_cases[k];
        tg_scope_begin();
        tg_tensor *x = kt_tensor(c->x, c->shape, c->ndim, c->xdt);
        tg_tensor *y = c->op == FX_CUMSUM ? tg_cumsum(x, c->dim, .dtype = c->dt)
                                          : tg_cumprod(x, c->dim, .dtype = c->dt);
        cr_assert(y, "%s: %s", c->name, tg_last_error());
        cr_assert_eq(tg_tensor_dtype(y), c->ydt, "%s: dtype", c->name);
        kt_assert_close(y, c->y, kt_shape_numel(c->shape, c->ndim), 0,
                        c->ydt == TG_FLOAT64 ? 1e-12 : 0, c->name);
        tg_scope_end();
    }
    /* in place keeps self's dtype; out= gives out's dtype */
    tg_scope_begin();
    int64_t sh[1] = { 4 };
    tg_tensor *xi = kt_tensor((double[]){ 1, 2, 3, 4 }, sh, 1, TG_INT32);
    cr_assert(tg_cumsum_(xi, 0));
    cr_assert_eq(tg_tensor_dtype(xi), TG_INT32);
    kt_assert_close(xi, (double[]){ 1, 3, 6, 10 }, 4, 0, 0, "cumsum_ int32");
    tg_tensor *of = tg_empty(TG_INTS(4), .dtype = TG_FLOAT32);
    cr_assert(tg_cumprod_out(xi, 0, of));
    kt_assert_close(of, (double[]){ 1, 3, 18, 180 }, 4, 0, 0, "cumprod out float32");
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(structure, repeat_interleave_tensor)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_ri_cases); k++) {
        const fx_ri_case *c = &fx_ri_cases[k];
        double rv[16], yv[64];
        for (int64_t i = 0; i < c->n; i++) rv[i] = (double)c->r[i];
        for (int64_t i = 0; i < c->ny; i++) yv[i] = (double)c->y[i];
        tg_scope_begin();
        tg_tensor *r = kt_tensor(rv, &c->n, 1, c->dt);
        tg_tensor *y = tg_repeat_interleave(r);
        cr_assert(y, "%s: %s", c->name, tg_last_error());
        cr_assert_eq(tg_tensor_dtype(y), c->dt);
        kt_assert_shape(y, &c->ny, 1);
        kt_assert_close(y, yv, c->ny, 0, 0, c->name);
        tg_opt_int os = c->ny;
        cr_assert(tg_repeat_interleave(r, .output_size = os), "%s: %s", c->name, tg_last_error());
        tg_scope_end();
    }
    tg_scope_begin();
    tg_tensor *e = tg_empty(TG_INTS(0), .dtype = TG_INT32);
    tg_tensor *ye = tg_repeat_interleave(e);
    cr_assert(ye && tg_tensor_numel(ye) == 0 && tg_tensor_dtype(ye) == TG_INT32);
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(structure, errors)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(2, 3));
    tg_tensor *s = tg_zeros(TG_INTS_EMPTY);
    kt_expect_error(
        tg_cumsum(x, 2),
        "cumsum: Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    kt_expect_error(tg_cumprod(x, -3),
                    "Dimension out of range (expected to be in range of [-2, 1], but got -3)");
    tg_tensor *o64 = tg_empty(TG_INTS(2, 3), .dtype = TG_FLOAT32);
    kt_expect_error(tg_cumsum_out(x, 0, o64, .dtype = TG_FLOAT64),
                    "Expected out tensor to have dtype double, but got float instead");
    kt_expect_error(
        tg_cumsum_(tg_clone(x), 0, .dtype = TG_FLOAT64),
        "Bad in-place call: input tensor dtype float and output tensor dtype double should match");
    kt_expect_error(tg_flip(x, TG_INTS(0, -2)),
                    "flip: dim 0 appears multiple times in the list of dims");
    kt_expect_error(tg_flip(x, TG_INTS(2)),
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    int64_t none[1] = { 0 };
    tg_int_list empty = { .len = 0, .data = none };
    kt_expect_error(tg_roll(x, empty), "roll: `shifts` required");
    kt_expect_error(tg_roll(x, TG_INTS(1, 2)),
                    "shifts and dimensions must align. shifts: 2, dims:0");
    kt_expect_error(tg_roll(x, TG_INTS(1, 2), .dims = TG_INTS(0)),
                    "shifts and dimensions must align. shifts: 2, dims:1");
    kt_expect_error(tg_roll(x, TG_INTS(1), .dims = TG_INTS(3)),
                    "Dimension out of range (expected to be in range of [-2, 1], but got 3)");
    kt_expect_error(tg_roll(s, TG_INTS(1), .dims = TG_INTS(0)),
                    "Dimension specified as 0 but tensor has no dimensions");
    kt_expect_error(
        tg_repeat(x, TG_INTS(2)),
        "repeat: Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
    kt_expect_error(tg_repeat(x, TG_INTS(2, -1)),
                    "Trying to create tensor with negative dimension -3: [4, -3]");
    int64_t two[1] = { 2 };
    tg_tensor *r2 = kt_tensor_i64((int64_t[]){ 1, 2 }, two, 1);
    kt_expect_error(tg_repeat_interleave(tg_unsqueeze(r2, 0)),
                    "repeat_interleave: repeat_interleave only accept 1D vector as repeat");
    kt_expect_error(tg_repeat_interleave(tg_zeros(TG_INTS(2))),
                    "\"repeat_interleave_cpu\" not implemented for 'Float'");
    kt_expect_error(tg_repeat_interleave(kt_tensor_i64((int64_t[]){ 1, -2 }, two, 1)),
                    "repeats can not be negative");
    tg_opt_int os4 = 4;
    kt_expect_error(tg_repeat_interleave(r2, .output_size = os4),
                    "allocated size does not match required size");
    kt_expect_error(tg_repeat_interleave_self_int(x, -1), "repeats can not be negative");
    tg_opt_int d2 = 2, d0 = 0, d1 = 1, os5 = 5;
    kt_expect_error(tg_repeat_interleave_self_int(x, 2, .dim = d2),
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    kt_expect_error(tg_repeat_interleave_self_int(x, 2, .dim = d1, .output_size = os5),
                    "allocated size does not match required size");
    kt_expect_error(tg_repeat_interleave_self_int(s, 2, .dim = d0),
                    "Dimension specified as 0 but tensor has no dimensions");
    kt_expect_error(tg_repeat_interleave_self(x, r2, .dim = d1),
                    "repeats must have the same size as input along dim");
    kt_expect_error(tg_repeat_interleave_self(x, tg_unsqueeze(r2, 0), .dim = d1),
                    "repeats must be 0-dim or 1-dim tensor");
    kt_expect_error(tg_repeat_interleave_self(x, tg_zeros(TG_INTS(3)), .dim = d1),
                    "\"repeat_interleave_cpu\" not implemented for 'Float'");
    tg_tensor *r3 = kt_tensor_i64((int64_t[]){ 1, -1, 2 }, (int64_t[]){ 3 }, 1);
    kt_expect_error(tg_repeat_interleave_self(x, r3, .dim = d1), "repeats can not be negative");
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* cumprod_backward with zeros, directly: a slice [2, 0, 3, 0, 5] and grad of ones. The
 * gradient of prefix products: d/dx_k sum_j prod_{i<=j} x_i, by hand:
 * k=0: 1 (j=0 only, the rest hold x_1 = 0); k=1: x_0 + x_0 x_2 + 0 + 0 = 2 + 6 = 8;
 * k>1: every term holds x_1 = 0, so 0. */
Test(structure, cumprod_backward_zeros)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    int64_t sh[1] = { 5 };
    tg_tensor *x = kt_tensor((double[]){ 2, 0, 3, 0, 5 }, sh, 1, TG_FLOAT64);
    tg_tensor *g = tg_ones(TG_INTS(5), .dtype = TG_FLOAT64);
    tg_tensor *gx = tg_cumprod_backward(g, x, 0, tg_cumprod(x, 0));
    cr_assert(gx, "%s", tg_last_error());
    kt_assert_close(gx, (double[]){ 1, 8, 0, 0, 0 }, 5, 0, 1e-15, "cumprod_backward zeros");
    tg_scope_end();
    kt_assert_no_leak(live);
}
