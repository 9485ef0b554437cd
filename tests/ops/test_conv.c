/* Convolutions against PyTorch (tests/fixtures/conv_fixtures.h, from tests/fixtures/gen_conv.py):
 * every front end (conv1d/2d/3d, int and "same"/"valid" padding, conv_transpose1d/2d/3d) on
 * stride, padding, dilation, groups, depthwise, 1x1 and unbatched cases, the output and the
 * gradients of (y * g).sum() for input, weight and bias, in float64 and float32 and with a
 * non-contiguous input; then PyTorch's error messages for bad arguments. */
#include "kt_util.h"
#include "tg_cover.h"
#include "../fixtures/conv_fixtures.h"

TG_COVERS("convolution", "convolution_backward", "_convolution_double_backward", "conv1d", "conv2d",
          "conv3d", "conv1d.padding", "conv2d.padding", "conv3d.padding", "conv_transpose1d",
          "conv_transpose2d.input", "conv_transpose3d.input");

static int64_t numel_of(const int64_t *s, int n)
{
    int64_t k = 1;
    for (int i = 0; i < n; i++) k *= s[i];
    return k;
}

/* The case's front end on x, w, b (b may be NULL). */
static tg_tensor *call_case(const fx_conv_case *c, tg_tensor *x, tg_tensor *w, tg_tensor *b)
{
    tg_int_list st = { .len = c->n_stride, .data = c->stride },
                pd = { .len = c->n_padding, .data = c->padding },
                dl = { .len = c->n_dilation, .data = c->dilation },
                op = { .len = c->n_output_padding, .data = c->output_padding };
    if (c->transposed) {
        switch (c->nsp) {
        case 1:
            return tg_conv_transpose1d(x, w, .bias = b, .stride = st, .padding = pd,
                                       .output_padding = op, .groups = c->groups, .dilation = dl);
        case 2:
            return tg_conv_transpose2d(x, w, .bias = b, .stride = st, .padding = pd,
                                       .output_padding = op, .groups = c->groups, .dilation = dl);
        default:
            return tg_conv_transpose3d(x, w, .bias = b, .stride = st, .padding = pd,
                                       .output_padding = op, .groups = c->groups, .dilation = dl);
        }
    }
    if (c->pad_mode) {
        switch (c->nsp) {
        case 1:
            return tg_conv1d_padding(x, w, .bias = b, .stride = st, .padding = c->pad_mode,
                                     .dilation = dl, .groups = c->groups);
        case 2:
            return tg_conv2d_padding(x, w, .bias = b, .stride = st, .padding = c->pad_mode,
                                     .dilation = dl, .groups = c->groups);
        default:
            return tg_conv3d_padding(x, w, .bias = b, .stride = st, .padding = c->pad_mode,
                                     .dilation = dl, .groups = c->groups);
        }
    }
    switch (c->nsp) {
    case 1:
        return tg_conv1d(x, w, .bias = b, .stride = st, .padding = pd, .dilation = dl,
                         .groups = c->groups);
    case 2:
        return tg_conv2d(x, w, .bias = b, .stride = st, .padding = pd, .dilation = dl,
                         .groups = c->groups);
    default:
        return tg_conv3d(x, w, .bias = b, .stride = st, .padding = pd, .dilation = dl,
                         .groups = c->groups);
    }
}

/* x with the same values but the last two dims' strides swapped (a transposed copy, viewed
 * back): a non-contiguous input. */
static tg_tensor *noncontiguous(tg_tensor *x)
{
    int64_t d = tg_tensor_dim(x);
    tg_tensor *t = tg_transpose(x, d - 2, d - 1);
    tg_tensor *c = tg_contiguous(t);
    tg_tensor *r = tg_transpose(c, d - 2, d - 1);
    kt_release_all(t, c);
    return r;
}

static void run_case(const fx_conv_case *c, tg_dtype dt, bool strided)
{
    double rtol = dt == TG_FLOAT64 ? 1e-10 : 1e-4, atol = dt == TG_FLOAT64 ? 1e-10 : 1e-4;
    kt_live live = kt_live_now();
    int64_t bshape = c->y_shape[c->y_ndim - c->nsp - 1]; /* output channels */
    tg_tensor *x0 = kt_tensor(c->x, c->x_shape, c->x_ndim, dt);
    tg_tensor *x = strided ? noncontiguous(x0) : tg_retain(x0);
    tg_tensor *w = kt_tensor(c->w, c->w_shape, c->w_ndim, dt);
    tg_tensor *b = c->bias ? kt_tensor(c->b, &bshape, 1, dt) : NULL;
    tg_tensor_set_requires_grad(x, true);
    tg_tensor_set_requires_grad(w, true);
    if (b) tg_tensor_set_requires_grad(b, true);
    tg_tensor *y = call_case(c, x, w, b);
    cr_assert(y, "%s: %s", c->name, tg_last_error());
    kt_assert_shape(y, c->y_shape, c->y_ndim);
    char what[96];
    snprintf(what, sizeof what, "%s %s%s: output", c->name, dt == TG_FLOAT64 ? "f64" : "f32",
             strided ? " strided" : "");
    kt_assert_close(y, c->y, numel_of(c->y_shape, c->y_ndim), rtol, atol, what);
    tg_tensor *g = kt_tensor(c->g, c->y_shape, c->y_ndim, dt);
    cr_assert_eq(tg_backward(y, .grad = g), 0, "%s backward: %s", c->name, tg_last_error());
    tg_tensor *gx = tg_tensor_grad(x), *gw = tg_tensor_grad(w), *gb = b ? tg_tensor_grad(b) : NULL;
    snprintf(what, sizeof what, "%s: grad input", c->name);
    kt_assert_close(gx, c->gx, numel_of(c->x_shape, c->x_ndim), rtol, atol, what);
    snprintf(what, sizeof what, "%s: grad weight", c->name);
    kt_assert_close(gw, c->gw, numel_of(c->w_shape, c->w_ndim), rtol, atol, what);
    if (b) {
        snprintf(what, sizeof what, "%s: grad bias", c->name);
        kt_assert_close(gb, c->gb, bshape, rtol, atol, what);
    }
    tg_tensor *all[] = { x0, x, w, b, y, g, gx, gw, gb };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tg_release(all[i]);
    kt_assert_no_leak(live);
}

#define NCASES (sizeof fx_conv_cases / sizeof fx_conv_cases[0])

Test(conv, pytorch_values_float64)
{
    for (size_t i = 0; i < NCASES; i++) run_case(&fx_conv_cases[i], TG_FLOAT64, false);
}

Test(conv, pytorch_values_float32)
{
    for (size_t i = 0; i < NCASES; i++) run_case(&fx_conv_cases[i], TG_FLOAT32, false);
}

Test(conv, pytorch_values_noncontiguous_input)
{
    for (size_t i = 0; i < NCASES; i++) run_case(&fx_conv_cases[i], TG_FLOAT64, true);
}

/* convolution_backward computes only what output_mask asks for. */
Test(conv, backward_output_mask)
{
    const fx_conv_case *c = &fx_conv_cases[0];
    kt_live live = kt_live_now();
    tg_tensor *x = kt_tensor(c->x, c->x_shape, c->x_ndim, TG_FLOAT64);
    tg_tensor *w = kt_tensor(c->w, c->w_shape, c->w_ndim, TG_FLOAT64);
    tg_tensor *g = kt_tensor(c->g, c->y_shape, c->y_ndim, TG_FLOAT64);
    int64_t bs = c->w_shape[0];
    tg_tensors3 r =
        tg_convolution_backward(g, x, w, TG_INTS(bs), TG_INTS(1, 1), TG_INTS(1, 1), TG_INTS(1, 1),
                                false, TG_INTS(0, 0), 1, TG_BOOLS(false, true, true));
    cr_assert(!r.r0 && r.r1 && r.r2, "%s", tg_last_error() ? tg_last_error() : "");
    kt_assert_close(r.r1, c->gw, numel_of(c->w_shape, c->w_ndim), 1e-10, 1e-10, "grad weight");
    kt_assert_close(r.r2, c->gb, bs, 1e-10, 1e-10, "grad bias");
    kt_release_all(r.r1, r.r2, x, w, g);
    kt_assert_no_leak(live);
}

/* convolution_backward's derivative against torch.ops.aten._convolution_double_backward. */
Test(conv, double_backward_values)
{
    kt_live live = kt_live_now();
    tg_tensor *x = kt_tensor(fx_convdd_x, (int64_t[]){ 2, 3, 5, 4 }, 4, TG_FLOAT64);
    tg_tensor *w = kt_tensor(fx_convdd_w, (int64_t[]){ 4, 3, 3, 2 }, 4, TG_FLOAT64);
    tg_tensor *gO = kt_tensor(fx_convdd_gO, (int64_t[]){ 2, 4, 3, 5 }, 4, TG_FLOAT64);
    tg_tensor *ggI = kt_tensor(fx_convdd_ggI, (int64_t[]){ 2, 3, 5, 4 }, 4, TG_FLOAT64);
    tg_tensor *ggW = kt_tensor(fx_convdd_ggW, (int64_t[]){ 4, 3, 3, 2 }, 4, TG_FLOAT64);
    tg_tensor *ggb = kt_tensor(fx_convdd_ggb, (int64_t[]){ 4 }, 1, TG_FLOAT64);
    tg_tensors3 r = tg__convolution_double_backward(ggI, ggW, ggb, gO, w, x, TG_INTS(2, 1),
                                                    TG_INTS(1, 1), TG_INTS(1, 1), false,
                                                    TG_INTS(0, 0), 1, TG_BOOLS(true, true, true));
    cr_assert(r.r0 && r.r1 && r.r2, "%s", tg_last_error());
    kt_assert_close(r.r0, fx_convdd_dgO, 2 * 4 * 3 * 5, 1e-10, 1e-10, "d grad_output");
    kt_assert_close(r.r1, fx_convdd_dx, 2 * 3 * 5 * 4, 1e-10, 1e-10, "d input");
    kt_assert_close(r.r2, fx_convdd_dw, 4 * 3 * 3 * 2, 1e-10, 1e-10, "d weight");
    tg_tensor *all[] = { x, w, gO, ggI, ggW, ggb, r.r0, r.r1, r.r2 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tg_release(all[i]);
    kt_assert_no_leak(live);
}

/* A batch of zero samples gives an empty output of the right shape. */
Test(conv, empty_batch)
{
    kt_live live = kt_live_now();
    tg_tensor *x = tg_zeros(TG_INTS(0, 3, 5, 5));
    tg_tensor *w = tg_ones(TG_INTS(8, 3, 3, 3));
    tg_tensor *y = tg_conv2d(x, w);
    cr_assert(y, "%s", tg_last_error());
    kt_assert_shape(y, (int64_t[]){ 0, 8, 3, 3 }, 4);
    kt_release_all(y, x, w);
    kt_assert_no_leak(live);
}

/* PyTorch 1.13's messages (checked with torch.nn.functional). */
static void expect_conv2d_error(const int64_t *xs, int xn, const int64_t *ws, int wn,
                                const char *needle, int64_t stride, int64_t pad, int64_t dil,
                                int64_t groups, int64_t bias_len)
{
    kt_live live = kt_live_now();
    tg_int_list xl = { .len = xn, .data = xs }, wl = { .len = wn, .data = ws };
    tg_tensor *x = tg_zeros(xl);
    tg_tensor *w = tg_zeros(wl);
    tg_tensor *b = bias_len >= 0 ? tg_zeros(TG_INTS(bias_len)) : NULL;
    tg_tensor *y =
        tg_conv2d(x, w, .bias = b, .stride = TG_INTS(stride, stride), .padding = TG_INTS(pad, pad),
                  .dilation = TG_INTS(dil, dil), .groups = groups);
    cr_assert_null(y, "expected an error containing \"%s\"", needle);
    kt_assert_error(needle);
    kt_release_all(x, w, b);
    kt_assert_no_leak(live);
}

Test(conv, errors)
{
    static const int64_t x4[] = { 2, 4, 5, 5 }, w8[] = { 8, 3, 3, 3 }, x3c[] = { 2, 3, 5, 5 };
    expect_conv2d_error(
        x4, 4, w8, 4,
        "Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 4, 5, 5] to "
        "have 3 channels, but got 4 channels instead",
        1, 0, 1, 1, -1);
    expect_conv2d_error((int64_t[]){ 3, 4 }, 2, w8, 4,
                        "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
                        "size: [3, 4]",
                        1, 0, 1, 1, -1);
    expect_conv2d_error((int64_t[]){ 2, 3, 2, 2 }, 4, w8, 4,
                        "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). "
                        "Kernel size can't be greater than actual input size",
                        1, 0, 1, 1, -1);
    expect_conv2d_error(x4, 4, (int64_t[]){ 3, 2, 3, 3 }, 4,
                        "Given groups=2, expected weight to be divisible by 2 at dimension 0, but "
                        "got weight of size [[3, 2, 3, 3]] instead",
                        1, 0, 1, 2, -1);
    expect_conv2d_error(x3c, 4, w8, 4, "negative padding is not supported", 1, -1, 1, 1, -1);
    expect_conv2d_error(x3c, 4, w8, 4, "non-positive stride is not supported", 0, 0, 1, 1, -1);
    expect_conv2d_error(x3c, 4, w8, 4, "non-positive dilation is not supported", 1, 0, 0, 1, -1);
    expect_conv2d_error(x3c, 4, w8, 4, "non-positive groups is not supported", 1, 0, 1, 0, -1);
    expect_conv2d_error(
        x3c, 4, w8, 4,
        "Given weight of size [8, 3, 3, 3], expected bias to be 1-dimensional with 8 "
        "elements, but got bias of size [7] instead",
        1, 0, 1, 1, 7);
}

Test(conv, errors_of_the_other_front_ends)
{
    kt_live live = kt_live_now();
    tg_tensor *x = tg_zeros(TG_INTS(2, 3, 5, 5)), *w = tg_zeros(TG_INTS(8, 3, 3, 3));
    kt_expect_error(tg_conv2d_padding(x, w, .padding = "same", .stride = TG_INTS(2, 2)),
                    "padding='same' is not supported for strided convolutions");
    kt_expect_error(tg_conv2d_padding(x, w, .padding = "foo"), "Invalid padding string: 'foo'");
    tg_tensor *wd = tg_zeros(TG_INTS(8, 3, 3, 3), .dtype = TG_FLOAT64);
    kt_expect_error(tg_conv2d(x, wd),
                    "Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be "
                    "the same");
    tg_tensor *bd = tg_zeros(TG_INTS(8), .dtype = TG_FLOAT64);
    kt_expect_error(tg_conv2d(x, w, .bias = bd),
                    "Input type (float) and bias type (double) should be the same");
    tg_tensor *x1 = tg_zeros(TG_INTS(2, 3, 5, 5)), *w1 = tg_zeros(TG_INTS(8, 3, 3));
    kt_expect_error(tg_conv1d(x1, w1),
                    "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of "
                    "size: [2, 3, 5, 5]");
    tg_tensor *xt = tg_zeros(TG_INTS(2, 4, 5, 5)), *wt = tg_zeros(TG_INTS(3, 8, 3, 3));
    kt_expect_error(tg_conv_transpose2d(xt, wt),
                    "Given transposed=1, weight of size [3, 8, 3, 3], expected input[2, 4, 5, 5] "
                    "to have 3 channels, but got 4 channels instead");
    tg_tensor *xo = tg_zeros(TG_INTS(2, 3, 5, 5));
    kt_expect_error(
        tg_conv_transpose2d(xo, wt, .stride = TG_INTS(2, 2), .output_padding = TG_INTS(2, 2)),
        "output padding must be smaller than either stride or dilation, but got "
        "output_padding_height: 2 output_padding_width: 2 stride_height: 2 "
        "stride_width: 2 dilation_height: 1 dilation_width: 1");
    kt_expect_error(tg_convolution(x, w, NULL, TG_INTS(1, 1, 1), TG_INTS(0, 0), TG_INTS(1, 1),
                                   false, TG_INTS(0, 0), 1),
                    "expected stride to be a single integer value or a list of 2 values to match "
                    "the convolution dimensions, but got stride=[1, 1, 1]");
    tg_tensor *all[] = { x, w, wd, bd, x1, w1, xt, wt, xo };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tg_release(all[i]);
    kt_assert_no_leak(live);
}
