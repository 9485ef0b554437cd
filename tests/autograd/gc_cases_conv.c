/* Gradcheck cases of the convolutions: convolution (plain, strided/dilated/grouped,
 * transposed) with second derivatives through _convolution_double_backward, and
 * convolution_backward itself (its three outputs differentiated with respect to grad_output,
 * input and weight). Inputs are at most 4-D (GC_MAX_DIMS), so 3-d convolutions are checked
 * against PyTorch's values only (tests/ops/test_conv.c). */
#include "gradcheck.h"

/* convolution(x[0], weight x[1], bias x[2] when bias, the rest as given): the one result. */
static int conv(tg_tensor *const *x, tg_tensor **y, bool bias, tg_int_list stride,
                tg_int_list padding, tg_int_list dilation, bool transposed,
                tg_int_list output_padding, int64_t groups)
{
    return gc_y1(y, tg_convolution(x[0], x[1], bias ? x[2] : NULL, stride, padding, dilation,
                                   transposed, output_padding, groups));
}
GC_FN(f_conv2d)
{
    return conv(x, y, true, TG_INTS(1, 1), TG_INTS(1, 1), TG_INTS(1, 1), false, TG_INTS(0, 0), 1);
}
GC_FN(f_conv2d_strided_grouped)
{
    return conv(x, y, false, TG_INTS(2, 1), TG_INTS(1, 0), TG_INTS(1, 2), false, TG_INTS(0, 0), 2);
}
GC_FN(f_conv1d)
{
    return conv(x, y, true, TG_INTS(2), TG_INTS(1), TG_INTS(1), false, TG_INTS(0), 1);
}
GC_FN(f_conv_transpose2d)
{
    return conv(x, y, true, TG_INTS(2, 2), TG_INTS(1, 0), TG_INTS(1, 1), true, TG_INTS(1, 0), 1);
}
GC_FN(f_conv_transpose_grouped)
{
    return conv(x, y, false, TG_INTS(1, 1), TG_INTS(0, 1), TG_INTS(2, 1), true, TG_INTS(0, 0), 2);
}
/* convolution_backward of a conv2d (input (1,2,4,4), weight (3,2,2,2), padding 1): x[0] is
 * grad_output (1,3,5,5). */
GC_FN(f_conv_backward)
{
    tg_tensors3 r =
        tg_convolution_backward(x[0], x[1], x[2], TG_INTS(3), TG_INTS(1, 1), TG_INTS(1, 1),
                                TG_INTS(1, 1), false, TG_INTS(0, 0), 1, TG_BOOLS(true, true, true));
    if (!r.r0) return -1;
    y[0] = r.r0;
    y[1] = r.r1;
    y[2] = r.r2;
    return 3;
}
GC_FN(f_conv_backward_transposed)
{
    tg_tensors3 r =
        tg_convolution_backward(x[0], x[1], x[2], TG_NO_INTS, TG_INTS(2), TG_INTS(0), TG_INTS(1),
                                true, TG_INTS(1), 1, TG_BOOLS(true, true, false));
    if (!r.r0) return -1;
    return gc_y2(y, r.r0, r.r1);
}
GC_FN(f_conv2d_front)
{
    return gc_y1(y, tg_conv2d_padding(x[0], x[1], .bias = x[2], .padding = "same"));
}

static const gc_case conv_cases[] = {
    GC_CASE("convolution", "conv2d (1,2,4,4) * (3,2,2,2) + bias, padding 1", f_conv2d,
            { REAL(1, 2, 4, 4), REAL(3, 2, 2, 2), REAL(3) }, .gradgrad = true),
    GC_CASE("convolution", "conv2d stride (2,1), dilation (1,2), groups 2, strided input",
            f_conv2d_strided_grouped, { REAL_S(2, 4, 5, 5), REAL(4, 2, 2, 2) }, .gradgrad = true),
    GC_CASE("convolution", "conv1d stride 2, transposed input", f_conv1d,
            { REAL_T(2, 3, 5), REAL(2, 3, 3), REAL(2) }),
    GC_CASE("convolution", "transposed, stride 2, output_padding (1,0)", f_conv_transpose2d,
            { REAL(2, 2, 3, 3), REAL(2, 3, 3, 2), REAL(3) }, .gradgrad = true),
    GC_CASE("convolution", "transposed, groups 2, dilation (2,1)", f_conv_transpose_grouped,
            { REAL(1, 4, 3, 3), REAL(4, 1, 2, 2) }, .gradgrad = true),
    GC_CASE("convolution_backward", "of conv2d padding 1, all three outputs", f_conv_backward,
            { REAL(1, 3, 5, 5), REAL(1, 2, 4, 4), REAL(3, 2, 2, 2) }, .gradgrad = true),
    GC_CASE("convolution_backward", "of conv_transpose1d stride 2", f_conv_backward_transposed,
            { REAL(2, 3, 8), REAL(2, 2, 3), REAL(2, 3, 3) }),
    GC_CASE("conv2d.padding", "\"same\", even kernel", f_conv2d_front,
            { REAL(1, 2, 4, 5), REAL(2, 2, 2, 3), REAL(2) }),
};

GC_REGISTER(conv_cases);
