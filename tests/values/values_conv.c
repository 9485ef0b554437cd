/* Value cases of the convolutions (kt_case.h): convolution forward and all three gradients of
 * convolution_backward, plain and transposed, 1 to 3 spatial dims, stride, padding, dilation,
 * groups, 1x1, a non-contiguous input, float32 and float64; on CUDA the default path (cuDNN
 * where built) and the im2col + cuBLAS path forced with TG_CUDA_CONV=im2col (the only one on
 * the emulator). Bound: kt_tol_conv. */
#include "kt_case.h"

typedef struct conv_geo {
    int64_t x[5], w[5];
    int nd;
    bool transposed, bias;
    int64_t stride[3], pad[3], dil[3], opad[3], groups;
} conv_geo;

static const conv_geo geos[] = {
    { { 2, 3, 7, 6 }, { 4, 3, 3, 3 }, 4, false, true, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, 1 },
    { { 3, 4, 9, 8 }, { 6, 2, 3, 2 }, 4, false, false, { 2, 1 }, { 1, 2 }, { 2, 1 }, { 0, 0 }, 2 },
    { { 2, 4, 6, 6 }, { 8, 1, 3, 3 }, 4, false, true, { 1, 1 }, { 1, 1 }, { 1, 1 }, { 0, 0 }, 4 },
    { { 2, 5, 4, 4 }, { 3, 5, 1, 1 }, 4, false, true, { 1, 1 }, { 0, 0 }, { 1, 1 }, { 0, 0 }, 1 },
    { { 2, 3, 10 }, { 5, 3, 4 }, 3, false, true, { 3 }, { 2 }, { 2 }, { 0 }, 1 },
    { { 1, 2, 4, 5, 5 },
      { 3, 2, 2, 3, 3 },
      5,
      false,
      true,
      { 1, 2, 1 },
      { 1, 1, 1 },
      { 1, 1, 1 },
      { 0, 0, 0 },
      1 },
    { { 2, 4, 5, 4 }, { 4, 3, 3, 3 }, 4, true, true, { 2, 2 }, { 1, 1 }, { 1, 1 }, { 1, 1 }, 1 },
    { { 2, 4, 3, 3 }, { 4, 2, 3, 3 }, 4, true, false, { 1, 1 }, { 0, 0 }, { 2, 2 }, { 0, 0 }, 2 },
};
#define NGEOS ((int)(sizeof geos / sizeof geos[0]))

/* Geometry k (parameter NGEOS: geometry 1 with the input's last two dims' strides swapped):
 * the forward result, then grad_input, grad_weight and grad_bias. */
static int conv(const kt_arg *a, tg_tensor **y)
{
    int k = a->param < NGEOS ? a->param : 1;
    const conv_geo *c = &geos[k];
    int nsp = c->nd - 2;
    tg_int_list st = { .len = nsp, .data = c->stride }, pd = { .len = nsp, .data = c->pad },
                dl = { .len = nsp, .data = c->dil }, op = { .len = nsp, .data = c->opad };
    int64_t oc = c->transposed ? c->w[1] * c->groups : c->w[0];
    tg_tensor *x = kt_input(a, c->x, c->nd, a->dtype, 100 + (uint64_t)k, -1, 1);
    if (a->param == NGEOS) x = tg_transpose(tg_contiguous(tg_transpose(x, -1, -2)), -1, -2);
    tg_tensor *w = kt_input(a, c->w, c->nd, a->dtype, 200 + (uint64_t)k, -1, 1);
    tg_tensor *b = c->bias ? kt_input(a, &oc, 1, a->dtype, 300 + (uint64_t)k, -1, 1) : NULL;
    y[0] = tg_convolution(x, w, b, st, pd, dl, c->transposed, op, c->groups);
    if (!y[0]) return -1;
    tg_tensor *go =
        kt_input(a, tg_tensor_sizes(y[0]), tg_tensor_dim(y[0]), a->dtype, 400 + (uint64_t)k, -1, 1);
    tg_int_list bsz = c->bias ? (tg_int_list){ .len = 1, .data = &oc } : TG_NO_INTS;
    tg_tensors3 r = tg_convolution_backward(go, x, w, bsz, st, pd, dl, c->transposed, op, c->groups,
                                            TG_BOOLS(true, true, true));
    y[1] = r.r0;
    y[2] = r.r1;
    y[3] = r.r2;
    return r.r0 ? 4 : -1;
}
KT_FN(f_conv)
{
    if (a->param == NGEOS && a->dtype != TG_FLOAT32) return KT_NO_FORM;
    return conv(a, y);
}
/* The cuDNN-free path, forced on CUDA (the CPU ignores the variable). */
KT_FN(f_conv_im2col)
{
    if (a->param == NGEOS && a->dtype != TG_FLOAT32) return KT_NO_FORM;
    setenv("TG_CUDA_CONV", "im2col", 1);
    int n = conv(a, y);
    unsetenv("TG_CUDA_CONV");
    return n;
}
KT_FN(f_conv2d) { return kt_y1(y, tg_conv2d(x[0], x[1])); }

static const kt_case conv_cases[] = {
    KT_CASE("convolution", "8 geometries and a strided input", f_conv, { { 0 } }, KT_F32_F64,
            &kt_tol_conv, .count = NGEOS + 1, KT_ALSO("convolution_backward")),
    KT_CASE("convolution_backward", "the im2col path", f_conv_im2col, { { 0 } }, KT_F32_F64,
            &kt_tol_conv, .count = NGEOS + 1, KT_ALSO("convolution")),
    KT_CASE("convolution", "4 input channels, weight for 3", f_conv2d,
            { { KT_RAND(0, 0, 2, 4, 5, 5) }, { KT_RAND(0, 0, 8, 3, 3, 3) } }, KT_F32_F64,
            .error = "expected input[2, 4, 5, 5] to have 3 channels, but got 4 channels instead"),
};
KT_REGISTER(conv_cases);
