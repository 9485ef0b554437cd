/* The pooling and padding operators against PyTorch 1.13 (tests/fixtures/pool_fixtures.h, from
 * tests/fixtures/gen_pool.py): forward values (and indices), the backward operators against
 * torch.autograd's gradient for a random grad_output, PyTorch's error messages for bad input.
 *
 * Metric: float64, |got - want| <= 1e-12 + 1e-10 |want| (the same arithmetic, maybe in another
 * order); indices exactly; float32 runs 1e-5 relative. */
#include "kt_util.h"
#include "../fixtures/pool_fixtures.h"
#include "tg_cover.h"

TG_COVERS("max_pool2d_with_indices", "max_pool2d_with_indices_backward", "max_pool2d", "max_pool1d",
          "max_pool_double_backward", "avg_pool2d", "avg_pool2d_backward", "avg_pool1d",
          "adaptive_avg_pool2d", "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward",
          "adaptive_max_pool2d", "adaptive_max_pool2d_backward", "constant_pad_nd",
          "constant_pad_nd_backward", "reflection_pad2d", "reflection_pad2d_backward",
          "replication_pad2d", "replication_pad2d_backward");

#define RT 1e-10
#define AT 1e-12

/* The pooling operators run in float64, float32 and bfloat16 (inputs rounded to 8 bits of
 * mantissa, so 2e-2 relative against PyTorch's float64 values; indices are not compared in
 * bfloat16, where rounding can make ties). */
static const tg_dtype DTYPES[3] = { TG_FLOAT64, TG_FLOAT32, TG_BFLOAT16 };
static const double RTOL[3] = { RT, 1e-5, 2e-2 }, ATOL[3] = { AT, 1e-6, 2e-2 };

static tg_tensor *case_x(const fx_pool_case *c, tg_dtype dt)
{
    return kt_tensor(c->x, c->shape, c->ndim, dt);
}
static tg_tensor *case_g(const fx_pool_case *c, tg_dtype dt)
{
    return kt_tensor(c->g, c->yshape, c->ydim, dt);
}

static void check_y(tg_tensor *r, const fx_pool_case *c, const double *want, bool out_shape,
                    double rt, double at, const char *what)
{
    cr_assert(r, "%s %s: %s", what, c->name, tg_last_error());
    if (out_shape) kt_assert_shape(r, c->yshape, c->ydim);
    else kt_assert_shape(r, c->shape, c->ndim);
    char buf[160];
    snprintf(buf, sizeof buf, "%s %s", what, c->name);
    kt_assert_close(r, want, tg_tensor_numel(r), rt, at, buf);
}

static void check_ind(tg_tensor *ind, const fx_pool_case *c)
{
    cr_assert(ind, "%s: %s", c->name, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(ind), TG_INT64);
    kt_assert_shape(ind, c->yshape, c->ydim);
    int64_t n = kt_shape_numel(c->yshape, c->ydim);
    double *v = kt_values(ind);
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq((int64_t)v[i], c->ind[i], "%s: index %lld is %lld, expected %lld", c->name,
                     (long long)i, (long long)v[i], (long long)c->ind[i]);
    free(v);
}

#define LIST(c, f) ((tg_int_list){ .len = (c)->n##f, .data = (c)->f })

/* ------------------------------------------------------------------ max pooling */

Test(pool, max_pool2d_with_indices_and_backward)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_maxpool_cases); k++) {
        const fx_pool_case *c = &fx_maxpool_cases[k];
        for (int t = 0; t < 3; t++) {
            tg_dtype dt = DTYPES[t];
            double rt = RTOL[t], at = ATOL[t];
            tg_scope_begin();
            tg_tensor *x = case_x(c, dt), *g = case_g(c, dt);
            tg_tensors2 r = tg_max_pool2d_with_indices(
                x, LIST(c, k), .stride = LIST(c, s), .padding = LIST(c, p), .dilation = LIST(c, d),
                .ceil_mode = c->ceil);
            check_y(r.r0, c, c->y, true, rt, at, "max_pool2d_with_indices");
            if (dt != TG_BFLOAT16) check_ind(r.r1, c);
            check_y(tg_max_pool2d(x, LIST(c, k), .stride = LIST(c, s), .padding = LIST(c, p),
                                  .dilation = LIST(c, d), .ceil_mode = c->ceil),
                    c, c->y, true, rt, at, "max_pool2d");
            check_y(tg_max_pool2d_with_indices_backward(g, x, LIST(c, k), LIST(c, s), LIST(c, p),
                                                        LIST(c, d), c->ceil, r.r1),
                    c, c->gx, false, rt, at, "max_pool2d_with_indices_backward");
            tg_scope_end();
        }
    }
    kt_assert_no_leak(live);
}

/* A transposed (non-contiguous) input gives the values of its contiguous copy. */
Test(pool, max_pool2d_non_contiguous)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    const fx_pool_case *c = &fx_maxpool_cases[0];
    tg_tensor *x = case_x(c, TG_FLOAT64);
    tg_tensor *xt = tg_contiguous(tg_transpose(x, -1, -2)), *back = tg_transpose(xt, -1, -2);
    tg_tensors2 r =
        tg_max_pool2d_with_indices(back, TG_INTS(3), .stride = TG_INTS(2), .padding = TG_INTS(1));
    check_y(r.r0, c, c->y, true, RT, AT, "max_pool2d transposed input");
    check_ind(r.r1, c);
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(pool, max_pool_double_backward)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *gg = kt_tensor(fx_mpdb_gg, (int64_t[]){ 2, 3, 6, 5 }, 4, TG_FLOAT64);
    tg_tensor *ind = kt_tensor_i64(fx_mpdb_ind, (int64_t[]){ 2, 3, 4, 3 }, 4);
    tg_tensor *r = tg_max_pool_double_backward(gg, ind, 2);
    cr_assert(r, "%s", tg_last_error());
    kt_assert_shape(r, (int64_t[]){ 2, 3, 4, 3 }, 4);
    kt_assert_close(r, fx_mpdb_want, 72, RT, AT, "max_pool_double_backward");
    kt_expect_error(tg_max_pool_double_backward(gg, ind, 3), "dim must be 2");
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(pool, max_pool1d)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_maxpool1d_cases); k++) {
        const fx_pool_case *c = &fx_maxpool1d_cases[k];
        tg_scope_begin();
        tg_tensor *x = case_x(c, TG_FLOAT64);
        check_y(tg_max_pool1d(x, LIST(c, k), .stride = LIST(c, s), .padding = LIST(c, p),
                              .dilation = LIST(c, d), .ceil_mode = c->ceil),
                c, c->y, true, RT, AT, "max_pool1d");
        tg_scope_end();
    }
    kt_assert_no_leak(live);
}

Test(pool, max_pool_errors)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(2, 3, 5, 6));
    struct {
        tg_tensor *in;
        tg_int_list k, s, p, d;
        const char *msg;
    } bad[] = {
        { x, TG_INTS(1, 2, 3), TG_NO_INTS, TG_INTS(0), TG_INTS(1),
          "max_pool2d: kernel_size must either be a single int, or a tuple of two ints" },
        { x, TG_INTS(2), TG_INTS(1, 2, 3), TG_INTS(0), TG_INTS(1),
          "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints" },
        { x, TG_INTS(2), TG_NO_INTS, TG_INTS(1, 2, 3), TG_INTS(1),
          "max_pool2d: padding must be either be a single int, or a tuple of two ints" },
        { x, TG_INTS(2), TG_NO_INTS, TG_INTS(0), TG_INTS(1, 2, 3),
          "max_pool2d: dilation must be either a single int, or a tuple of two ints" },
        { tg_zeros(TG_INTS(5, 6)), TG_INTS(2), TG_NO_INTS, TG_INTS(0), TG_INTS(1),
          "non-empty 3D or 4D (batch mode) tensor expected for input" },
        { x, TG_INTS(0), TG_NO_INTS, TG_INTS(0), TG_INTS(1), "stride should not be zero" },
        { x, TG_INTS(2), TG_INTS(-1), TG_INTS(0), TG_INTS(1),
          "stride should be greater than zero, but got dH: -1 dW: -1" },
        { x, TG_INTS(2), TG_NO_INTS, TG_INTS(0), TG_INTS(0),
          "dilation should be greater than zero, but got dilationH: 0 dilationW: 0" },
        { x, TG_INTS(2), TG_NO_INTS, TG_INTS(-1), TG_INTS(1),
          "pad must be non-negative, but got pad: -1" },
        { x, TG_INTS(3), TG_NO_INTS, TG_INTS(2), TG_INTS(1),
          "pad should be at most half of kernel size, but got pad=2 and kernel_size=3" },
        { x, TG_INTS(6), TG_NO_INTS, TG_INTS(0), TG_INTS(1),
          "Given input size: (3x5x6). Calculated output size: (3x0x1). Output size is too small" },
        { tg_zeros(TG_INTS(2, 0, 5, 6)), TG_INTS(2), TG_NO_INTS, TG_INTS(0), TG_INTS(1),
          "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 0, 5, 6]" },
        { tg_zeros(TG_INTS(2, 3, 5, 6), .dtype = TG_INT64), TG_INTS(2), TG_NO_INTS, TG_INTS(0),
          TG_INTS(1), "\"max_pool2d\" not implemented for 'Long'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tg_tensors2 r = tg_max_pool2d_with_indices(bad[i].in, bad[i].k, .stride = bad[i].s,
                                                   .padding = bad[i].p, .dilation = bad[i].d);
        cr_assert_null(r.r0, "case %zu", i);
        cr_assert_null(r.r1);
        kt_assert_error(bad[i].msg);
        cr_assert_null(tg_max_pool2d(bad[i].in, bad[i].k, .stride = bad[i].s, .padding = bad[i].p,
                                     .dilation = bad[i].d));
        kt_assert_error(bad[i].msg);
    }
    /* an empty batch is fine */
    tg_tensors2 e = tg_max_pool2d_with_indices(tg_zeros(TG_INTS(0, 3, 5, 6)), TG_INTS(2));
    cr_assert(e.r0, "%s", tg_last_error());
    kt_assert_shape(e.r0, (int64_t[]){ 0, 3, 2, 3 }, 4);
    /* backward: grad_output of the wrong shape, indices of the wrong dtype */
    tg_tensors2 r = tg_max_pool2d_with_indices(x, TG_INTS(2));
    kt_expect_error(
        tg_max_pool2d_with_indices_backward(tg_zeros(TG_INTS(2, 3, 2, 2)), x, TG_INTS(2),
                                            TG_INTS(2), TG_INTS(0), TG_INTS(1), false, r.r1),
        "Expected a tensor of dimension 4 and tensor.size[3] == 3 but got: dimension 4 and tensor.size[3] = 2");
    kt_expect_error(
        tg_max_pool2d_with_indices_backward(tg_zeros(TG_INTS(2, 4, 2, 3)), x, TG_INTS(2),
                                            TG_INTS(2), TG_INTS(0), TG_INTS(1), false, r.r1),
        "Expected a tensor of dimension 4 and tensor.size[1] == 3 but got: dimension 4 and tensor.size[1] = 4");
    kt_expect_error(tg_max_pool2d_with_indices_backward(r.r0, x, TG_INTS(2), TG_INTS(2), TG_INTS(0),
                                                        TG_INTS(1), false,
                                                        tg_zeros(TG_INTS(2, 3, 2, 3))),
                    "expected scalar type Long but found Float");
    /* max_pool1d's own checks */
    tg_tensor *x1 = tg_zeros(TG_INTS(3, 6));
    kt_expect_error(
        tg_max_pool1d(x1, TG_INTS(1, 2)),
        "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size 2");
    kt_expect_error(
        tg_max_pool1d(x, TG_INTS(2)),
        "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:[2, 3, 5, 6]");
    kt_expect_error(tg_max_pool1d(x1, TG_INTS(2), .stride = TG_INTS(0)),
                    "max_pool1d() stride must be greater than zero, but got 0");
    kt_expect_error(
        tg_max_pool1d(x1, TG_INTS(2), .padding = TG_INTS(2)),
        "max_pool1d() padding should be at most half of kernel size, but got padding=2 and kernel_size=2");
    kt_expect_error(tg_max_pool1d(x1, TG_INTS(2), .dilation = TG_INTS(0)),
                    "max_pool1d() dilation must be greater than zero, but got 0");
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ average pooling */

Test(pool, avg_pool2d_and_backward)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_avgpool_cases); k++) {
        const fx_pool_case *c = &fx_avgpool_cases[k];
        tg_opt_int div = c->div != 0 ? c->div : TG_NONE_INT;
        for (int t = 0; t < 3; t++) {
            tg_dtype dt = DTYPES[t];
            double rt = RTOL[t], at = ATOL[t];
            tg_scope_begin();
            tg_tensor *x = case_x(c, dt), *g = case_g(c, dt);
            check_y(tg_avg_pool2d(x, LIST(c, k), .stride = LIST(c, s), .padding = LIST(c, p),
                                  .ceil_mode = c->ceil, .count_include_pad = c->cip,
                                  .divisor_override = div),
                    c, c->y, true, rt, at, "avg_pool2d");
            check_y(tg_avg_pool2d_backward(g, x, LIST(c, k), LIST(c, s), LIST(c, p), c->ceil,
                                           c->cip, div),
                    c, c->gx, false, rt, at, "avg_pool2d_backward");
            tg_scope_end();
        }
    }
    for (int64_t k = 0; k < KT_NUMEL(fx_avgpool1d_cases); k++) {
        const fx_pool_case *c = &fx_avgpool1d_cases[k];
        tg_scope_begin();
        check_y(tg_avg_pool1d(case_x(c, TG_FLOAT64), LIST(c, k), .stride = LIST(c, s),
                              .padding = LIST(c, p), .ceil_mode = c->ceil,
                              .count_include_pad = c->cip),
                c, c->y, true, RT, AT, "avg_pool1d");
        tg_scope_end();
    }
    kt_assert_no_leak(live);
}

Test(pool, avg_pool_errors)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(2, 3, 5, 6));
    kt_expect_error(tg_avg_pool2d(x, TG_INTS(1, 2, 3)),
                    "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
    kt_expect_error(tg_avg_pool2d(x, TG_INTS(2), .padding = TG_INTS(1, 2, 3)),
                    "avg_pool2d: padding must either be a single int, or a tuple of two ints");
    kt_expect_error(tg_avg_pool2d(tg_zeros(TG_INTS(5, 6)), TG_INTS(2)),
                    "Dimension out of range (expected to be in range of [-2, 1], but got -3)");
    kt_expect_error(tg_avg_pool2d(x, TG_INTS(3), .padding = TG_INTS(2)),
                    "pad should be at most half of kernel size, but got pad=2 and kernel_size=3");
    kt_expect_error(
        tg_avg_pool2d(x, TG_INTS(6)),
        "Given input size: (3x5x6). Calculated output size: (3x0x1). Output size is too small");
    kt_expect_error(tg_avg_pool2d(x, TG_INTS(2), .divisor_override = 0),
                    "divisor must be not zero");
    kt_expect_error(
        tg_avg_pool2d_backward(tg_zeros(TG_INTS(2, 3, 2, 2)), x, TG_INTS(2), TG_INTS(2), TG_INTS(0),
                               false, true, TG_NONE_INT),
        "Expected a tensor of dimension 4 and tensor.size[3] == 3 but got: dimension 4 and tensor.size[3] = 2");
    kt_expect_error(tg_avg_pool2d(tg_zeros(TG_INTS(2, 3, 5, 6), .dtype = TG_INT32), TG_INTS(2)),
                    "\"avg_pool2d\" not implemented for 'Int'");
    /* int64: integer sums, truncated quotients (PyTorch's CPU kernel) */
    double xv[9] = { 1, 2, 3, 4, 5, -7, 7, 8, 9 };
    tg_tensor *xl = kt_tensor(xv, (int64_t[]){ 1, 1, 3, 3 }, 4, TG_INT64);
    double w1[4] = { 3, 0, 6, 3 };
    tg_tensor *yl = tg_avg_pool2d(xl, TG_INTS(2), .stride = TG_INTS(1));
    cr_assert(yl, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_dtype(yl), TG_INT64);
    kt_assert_close(yl, w1, 4, 0, 0, "avg_pool2d int64");
    double w2[16] = { 1, 1, 2, 3, 2, 3, 0, -2, 5, 6, 3, 1, 7, 7, 8, 9 };
    kt_assert_close(tg_avg_pool2d(xl, TG_INTS(2), .stride = TG_INTS(1), .padding = TG_INTS(1),
                                  .count_include_pad = false),
                    w2, 16, 0, 0, "avg_pool2d int64, padding not counted");
    tg_tensor *x1 = tg_zeros(TG_INTS(3, 6));
    kt_expect_error(tg_avg_pool1d(x1, TG_INTS(2, 2)),
                    "avg_pool1d() argument 'kernel_size' should contain one int (got 2)");
    kt_expect_error(
        tg_avg_pool1d(x, TG_INTS(2)),
        "Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self' (while checking arguments for avg_pool1d)");
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ adaptive pooling */

Test(pool, adaptive_avg_pool2d)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_adavg_cases); k++) {
        const fx_pool_case *c = &fx_adavg_cases[k];
        for (int t = 0; t < 3; t++) {
            tg_dtype dt = DTYPES[t];
            double rt = RTOL[t], at = ATOL[t];
            tg_scope_begin();
            tg_tensor *x = case_x(c, dt), *g = case_g(c, dt);
            tg_int_list o = { .len = 2, .data = c->o };
            check_y(tg__adaptive_avg_pool2d(x, o), c, c->y, true, rt, at, "_adaptive_avg_pool2d");
            check_y(tg_adaptive_avg_pool2d(x, o), c, c->y, true, rt, at, "adaptive_avg_pool2d");
            check_y(tg__adaptive_avg_pool2d_backward(g, x), c, c->gx, false, rt, at,
                    "_adaptive_avg_pool2d_backward");
            tg_scope_end();
        }
    }
    for (int64_t k = 0; k < KT_NUMEL(fx_adavgc_cases); k++) {
        const fx_pool_case *c = &fx_adavgc_cases[k];
        tg_scope_begin();
        tg_int_list o = { .len = 2, .data = c->o };
        check_y(tg_adaptive_avg_pool2d(case_x(c, TG_FLOAT64), o), c, c->y, true, RT, AT,
                "adaptive_avg_pool2d");
        tg_scope_end();
    }
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(2, 3, 5, 6));
    kt_expect_error(tg_adaptive_avg_pool2d(x, TG_INTS(2)),
                    "adaptive_avg_pool2d: output_size must be 2");
    kt_expect_error(tg__adaptive_avg_pool2d(x, TG_INTS(2, 2, 2)),
                    "adaptive_avg_pool2d: output_size must be 2");
    kt_expect_error(
        tg_adaptive_avg_pool2d(x, TG_INTS(-1, 2)),
        "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {-1, 2}");
    kt_expect_error(tg_adaptive_avg_pool2d(tg_zeros(TG_INTS(5, 6)), TG_INTS(2, 2)),
                    "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [5, 6]");
    kt_expect_error(
        tg_adaptive_avg_pool2d(tg_zeros(TG_INTS(2, 3, 0, 6)), TG_INTS(2, 2)),
        "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes [2, 3, 0, 6] with dimension 2 being empty");
    kt_expect_error(
        tg__adaptive_avg_pool2d_backward(tg_zeros(TG_INTS(2, 3)), x),
        "adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got [2, 3, 5, 6]");
    kt_expect_error(
        tg__adaptive_avg_pool2d_backward(tg_zeros(TG_INTS(2, 3, 2, 2), .dtype = TG_FLOAT64), x),
        "expected dtype float for `grad_output` but got dtype double");
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(pool, adaptive_max_pool2d)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_admax_cases); k++) {
        const fx_pool_case *c = &fx_admax_cases[k];
        for (int t = 0; t < 3; t++) {
            tg_dtype dt = DTYPES[t];
            double rt = RTOL[t], at = ATOL[t];
            tg_scope_begin();
            tg_tensor *x = case_x(c, dt), *g = case_g(c, dt);
            tg_int_list o = { .len = 2, .data = c->o };
            tg_tensors2 r = tg_adaptive_max_pool2d(x, o);
            check_y(r.r0, c, c->y, true, rt, at, "adaptive_max_pool2d");
            if (dt != TG_BFLOAT16) check_ind(r.r1, c);
            check_y(tg_adaptive_max_pool2d_backward(g, x, r.r1), c, c->gx, false, rt, at,
                    "adaptive_max_pool2d_backward");
            tg_scope_end();
        }
    }
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(2, 3, 5, 6));
    tg_tensors2 r = tg_adaptive_max_pool2d(x, TG_INTS(2));
    kt_expect_error(r.r0, "adaptive_max_pool2d(): internal error: output_size.size() must be 2");
    r = tg_adaptive_max_pool2d(tg_zeros(TG_INTS(5, 6)), TG_INTS(2, 2));
    kt_expect_error(r.r0, "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: [5, 6]");
    r = tg_adaptive_max_pool2d(x, TG_INTS(-1, 2));
    kt_expect_error(r.r0, "Trying to create tensor with negative dimension -1: [2, 3, -1, 2]");
    r = tg_adaptive_max_pool2d(tg_zeros(TG_INTS(2, 3, 5, 6), .dtype = TG_INT64), TG_INTS(2, 2));
    kt_expect_error(r.r0, "\"adaptive_max_pool2d\" not implemented for 'Long'");
    r = tg_adaptive_max_pool2d(x, TG_INTS(2, 2));
    kt_expect_error(
        tg_adaptive_max_pool2d_backward(tg_zeros(TG_INTS(2, 3)), x, r.r1),
        "adaptive_max_pooling2d_backward(): Expected 3D or 4D grad_output, but got: [2, 3]");
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ padding */

static void pad_cases(const fx_pool_case *cases, int64_t n, bool reflect)
{
    for (int64_t k = 0; k < n; k++) {
        const fx_pool_case *c = &cases[k];
        tg_int_list pad = { .len = 4, .data = c->pad };
        for (int t = 0; t < 2; t++) {
            tg_dtype dt = t ? TG_FLOAT32 : TG_FLOAT64;
            double rt = t ? 1e-5 : RT, at = t ? 1e-6 : AT;
            tg_scope_begin();
            tg_tensor *x = case_x(c, dt), *g = case_g(c, dt);
            if (reflect) {
                check_y(tg_reflection_pad2d(x, pad), c, c->y, true, rt, at, "reflection_pad2d");
                check_y(tg_reflection_pad2d_backward(g, x, pad), c, c->gx, false, rt, at,
                        "reflection_pad2d_backward");
            } else {
                check_y(tg_replication_pad2d(x, pad), c, c->y, true, rt, at, "replication_pad2d");
                check_y(tg_replication_pad2d_backward(g, x, pad), c, c->gx, false, rt, at,
                        "replication_pad2d_backward");
            }
            tg_scope_end();
        }
    }
}

Test(pool, reflection_and_replication_pad2d)
{
    kt_live live = kt_live_now();
    pad_cases(fx_reflect_cases, KT_NUMEL(fx_reflect_cases), true);
    pad_cases(fx_replicate_cases, KT_NUMEL(fx_replicate_cases), false);
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(2, 3, 5, 6));
    kt_expect_error(
        tg_reflection_pad2d(x, TG_INTS(6, 1, 1, 1)),
        "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (6, 1) at dimension 3 of input 4");
    kt_expect_error(
        tg_reflection_pad2d(x, TG_INTS(1, 1, 5, 1)),
        "Argument #6: Padding size should be less than the corresponding input dimension, but got: padding (5, 1) at dimension 2 of input 4");
    kt_expect_error(tg_reflection_pad2d(tg_zeros(TG_INTS(5, 6)), TG_INTS(1, 1, 1, 1)),
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    kt_expect_error(
        tg_reflection_pad2d(tg_zeros(TG_INTS(2, 0, 5, 6)), TG_INTS(1, 1, 1, 1)),
        "3D or 4D (batch mode) tensor expected for input, but got: [ torch.FloatTensor{2,0,5,6} ]");
    kt_expect_error(tg_replication_pad2d(x, TG_INTS(1, 1, 1)), "padding size is expected to be 4");
    kt_expect_error(
        tg_replication_pad2d(tg_zeros(TG_INTS(2, 0, 5, 6)), TG_INTS(1, 1, 1, 1)),
        "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: [2, 0, 5, 6]");
    kt_expect_error(tg_replication_pad2d(x, TG_INTS(-4, -4, 1, 1)),
                    "Trying to create tensor with negative dimension -2: [2, 3, 7, -2]");
    kt_expect_error(
        tg_replication_pad2d(tg_zeros(TG_INTS(2, 3, 5, 6), .dtype = TG_INT64), TG_INTS(1, 1, 1, 1)),
        "\"replication_pad2d_cpu\" not implemented for 'Long'");
    kt_expect_error(
        tg_reflection_pad2d_backward(tg_zeros(TG_INTS(2, 3, 6, 6)), x, TG_INTS(1, 1, 1, 1)),
        "gradOutput width unexpected. Expected: 8, Got: 6");
    kt_expect_error(
        tg_replication_pad2d_backward(tg_zeros(TG_INTS(2, 3, 6, 8)), x, TG_INTS(1, 1, 1, 1)),
        "gradOutput height unexpected. Expected: 7, Got: 6");
    /* an empty batch */
    tg_tensor *e = tg_reflection_pad2d(tg_zeros(TG_INTS(0, 3, 5, 6)), TG_INTS(1, 1, 1, 1));
    cr_assert(e, "%s", tg_last_error());
    kt_assert_shape(e, (int64_t[]){ 0, 3, 7, 8 }, 4);
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(pool, constant_pad_nd)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_constpad_cases); k++) {
        const fx_pool_case *c = &fx_constpad_cases[k];
        tg_int_list pad = { .len = c->npad, .data = c->pad };
        tg_scope_begin();
        tg_tensor *x = case_x(c, TG_FLOAT64), *g = case_g(c, TG_FLOAT64);
        check_y(tg_constant_pad_nd(x, pad, .value = c->value), c, c->y, true, RT, AT,
                "constant_pad_nd");
        check_y(tg_constant_pad_nd_backward(g, pad), c, c->gx, false, RT, AT,
                "constant_pad_nd_backward");
        tg_scope_end();
    }
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(2, 3, 5, 6));
    kt_expect_error(tg_constant_pad_nd(x, TG_INTS(1, 2, 3)),
                    "Length of pad must be even but instead it equals 3");
    kt_expect_error(
        tg_constant_pad_nd(x, TG_INTS(1, 1, 1, 1, 1, 1, 1, 1, 1, 1)),
        "Length of pad should be no more than twice the number of dimensions of the input. Pad length is 10while the input has 4dimensions.");
    kt_expect_error(tg_constant_pad_nd(x, TG_INTS(-3, -4)),
                    "start (0) + length (-1) exceeds dimension size (3).");
    /* integers: the value is converted like fill_ */
    tg_tensor *xi = tg_ones(TG_INTS(2, 3), .dtype = TG_INT64);
    tg_tensor *r = tg_constant_pad_nd(xi, TG_INTS(1, 1), .value = 2);
    cr_assert(r, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_dtype(r), TG_INT64);
    double want[10] = { 2, 1, 1, 1, 2, 2, 1, 1, 1, 2 };
    kt_assert_close(r, want, 10, 0, 0, "constant_pad_nd int64");
    tg_scope_end();
    kt_assert_no_leak(live);
}
