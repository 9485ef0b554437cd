/* CUDA convolutions (kernels/cuda/conv.cu: cuDNN where built, and the im2col + cuBLAS path
 * forced with TG_CUDA_CONV=im2col) against the CPU kernels
 * on the same random inputs: forward and all three gradients of convolution_backward, plain
 * and transposed, 1 to 3 spatial dims, stride, padding, dilation, groups, 1x1, a
 * non-contiguous input, float32 and float64.
 *
 * Bounds: both sides sum the same products in different orders (BLAS blocking, cuBLAS
 * blocking; grad_bias in double on both): float32 1e-4 relative + 1e-4 absolute for sums of up
 * to a few hundred O(1) products, float64 1e-11. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("convolution", "convolution_backward");

#ifndef TG_WITH_CUDA
Test(cuda_conv, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

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

static void check_geo(const conv_geo *c, tg_dtype dt, bool strided, int k)
{
    double tol = dt == TG_FLOAT64 ? 1e-11 : 1e-4;
    int nsp = c->nd - 2;
    tg_int_list st = { c->stride, nsp }, pd = { c->pad, nsp }, dl = { c->dil, nsp },
                op = { c->opad, nsp };
    int64_t oc = c->transposed ? c->w[1] * c->groups : c->w[0];
    tg_tensor *x = cc_rand(c->x, c->nd, dt, 100 + k, -1, 1);
    if (strided) { /* the same values, last two dims' strides swapped */
        tg_tensor *t = tg_transpose(x, -1, -2), *cont = tg_contiguous(t);
        x = tg_transpose(cont, -1, -2);
    }
    tg_tensor *w = cc_rand(c->w, c->nd, dt, 200 + k, -1, 1);
    tg_tensor *b = c->bias ? cc_rand(&oc, 1, dt, 300 + k, -1, 1) : NULL;
    tg_tensor *xg = cc_cuda(x), *wg = cc_cuda(w), *bg = b ? cc_cuda(b) : NULL;
    if (strided) xg = tg_transpose(cc_cuda(tg_contiguous(tg_transpose(x, -1, -2))), -1, -2);
    char what[96];
    snprintf(what, sizeof what, "geometry %d %s%s forward", k, tg_dtype_name(dt),
             strided ? " strided" : "");
    tg_tensor *y = tg_convolution(x, w, b, st, pd, dl, c->transposed, op, c->groups);
    tg_tensor *yg = tg_convolution(xg, wg, bg, st, pd, dl, c->transposed, op, c->groups);
    cr_assert(y && yg, "%s: %s", what, tg_last_error());
    cc_assert_close(yg, y, tol, tol, what);
    tg_tensor *go = cc_rand(tg_tensor_sizes(y), tg_tensor_dim(y), dt, 400 + k, -1, 1),
              *gog = cc_cuda(go);
    tg_int_list bsz = c->bias ? (tg_int_list){ &oc, 1 } : TG_NO_INTS;
    tg_tensors3 r = tg_convolution_backward(go, x, w, bsz, st, pd, dl, c->transposed, op, c->groups,
                                            TG_BOOLS(true, true, true));
    tg_tensors3 rg = tg_convolution_backward(gog, xg, wg, bsz, st, pd, dl, c->transposed, op,
                                             c->groups, TG_BOOLS(true, true, true));
    cr_assert(r.r0 && rg.r0, "%s backward: %s", what, tg_last_error());
    snprintf(what, sizeof what, "geometry %d %s grad input", k, tg_dtype_name(dt));
    cc_assert_close(rg.r0, r.r0, tol, tol, what);
    snprintf(what, sizeof what, "geometry %d %s grad weight", k, tg_dtype_name(dt));
    cc_assert_close(rg.r1, r.r1, tol, tol, what);
    snprintf(what, sizeof what, "geometry %d %s grad bias", k, tg_dtype_name(dt));
    cc_assert_close(rg.r2, r.r2, tol, tol, what);
}

static void against_cpu(void)
{
    kt_live base = kt_live_now();
    for (size_t k = 0; k < sizeof geos / sizeof geos[0]; k++)
        for (int d = 0; d < 2; d++) {
            tg_scope_begin();
            check_geo(&geos[k], d ? TG_FLOAT64 : TG_FLOAT32, false, (int)k);
            tg_scope_end();
        }
    tg_scope_begin();
    check_geo(&geos[1], TG_FLOAT32, true, 1);
    tg_scope_end();
    kt_assert_no_leak(base);
}

/* The default path: cuDNN where the build has it, else im2col + cuBLAS. */
Test(cuda_conv, against_cpu)
{
    CC_REQUIRE_DEVICE("cuda_conv::against_cpu");
    against_cpu();
}

/* The cuDNN-free path, forced (the only one on the emulator). */
Test(cuda_conv, im2col_path_against_cpu)
{
    CC_REQUIRE_DEVICE("cuda_conv::im2col_path_against_cpu");
    setenv("TG_CUDA_CONV", "im2col", 1);
    against_cpu();
    unsetenv("TG_CUDA_CONV");
}

/* PyTorch's messages on the CUDA path too (the checks are shared). */
Test(cuda_conv, errors)
{
    CC_REQUIRE_DEVICE("cuda_conv::errors");
    kt_live base = kt_live_now();
    tg_scope_begin();
    tg_tensor *x = cc_cuda(tg_zeros(TG_INTS(2, 4, 5, 5)));
    tg_tensor *w = cc_cuda(tg_zeros(TG_INTS(8, 3, 3, 3)));
    cr_assert_null(tg_conv2d(x, w));
    kt_assert_error("expected input[2, 4, 5, 5] to have 3 channels, but got 4 channels instead");
    tg_tensor *wd = cc_cuda(tg_zeros(TG_INTS(8, 4, 3, 3), .dtype = TG_FLOAT64));
    cr_assert_null(tg_conv2d(x, wd));
    kt_assert_error("Input type (torch.cuda.FloatTensor) and weight type "
                    "(torch.cuda.DoubleTensor) should be the same");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
