/* CUDA normalization and resizing kernels (kernels/cuda/norm.cu) against the CPU kernels
 * (kernels/cpu/norm.c) on the same random inputs: native_batch_norm (training with running
 * statistics, eval, no affine) and its backward, native_group_norm and its backward,
 * upsample_nearest2d / upsample_bilinear2d (align_corners both ways, scales) and their
 * backward operators; float32 and float64.
 *
 * Bounds: statistics are sums in double on both sides in different orders, then rounded to
 * the storage type: float32 1e-5 relative + 1e-5 absolute, float64 1e-10. Upsampling computes
 * in the storage type with the same formulas (the backward sums in a different order,
 * atomics): float32 1e-5, float64 1e-12. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("native_batch_norm", "native_batch_norm_backward", "native_group_norm",
               "native_group_norm_backward", "upsample_nearest2d", "upsample_nearest2d_backward",
               "upsample_bilinear2d", "upsample_bilinear2d_backward");

#ifndef TG_WITH_CUDA
Test(cuda_norm, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

static const tg_dtype dts[2] = { TG_FLOAT32, TG_FLOAT64 };

static void close3(tg_tensors3 g, tg_tensors3 c, double tol, const char *what)
{
    char w[128];
    const tg_tensor *gs[3] = { g.r0, g.r1, g.r2 }, *cs[3] = { c.r0, c.r1, c.r2 };
    for (int i = 0; i < 3; i++) {
        cr_assert((gs[i] == NULL) == (cs[i] == NULL), "%s: output %d defined on one side only: %s",
                  what, i, tg_last_error() ? tg_last_error() : "");
        if (!gs[i]) continue;
        snprintf(w, sizeof w, "%s output %d", what, i);
        cc_assert_close(gs[i], cs[i], tol, tol, w);
    }
}

Test(cuda_norm, batch_norm)
{
    CC_REQUIRE_DEVICE("cuda_norm::batch_norm");
    kt_live base = kt_live_now();
    static const int64_t shape[] = { 5, 3, 7, 9 }, cshape[] = { 3 };
    for (int t = 0; t < 2; t++) {
        tg_dtype dt = dts[t];
        double tol = dt == TG_FLOAT32 ? 1e-5 : 1e-10;
        tg_scope_begin();
        tg_tensor *x = cc_rand(shape, 4, dt, 1, -2, 3), *xg = cc_cuda(x);
        tg_tensor *go = cc_rand(shape, 4, dt, 2, -1, 1), *gog = cc_cuda(go);
        tg_tensor *w = cc_rand(cshape, 1, dt, 3, -1, 1), *wg = cc_cuda(w);
        tg_tensor *b = cc_rand(cshape, 1, dt, 4, -1, 1), *bg = cc_cuda(b);
        tg_tensor *rm = cc_rand(cshape, 1, dt, 5, -1, 1), *rmg = cc_cuda(rm);
        tg_tensor *rv = cc_rand(cshape, 1, dt, 6, 0.5, 2), *rvg = cc_cuda(rv);
        for (int mode = 0; mode < 3; mode++) {
            /* 0: training with running statistics, 1: eval, 2: training, no affine */
            bool train = mode != 1;
            tg_tensor *wc = mode == 2 ? NULL : w, *wgc = mode == 2 ? NULL : wg;
            tg_tensor *bc = mode == 2 ? NULL : b, *bgc = mode == 2 ? NULL : bg;
            tg_tensor *rc = mode == 2 ? NULL : rm, *rcg = mode == 2 ? NULL : rmg;
            tg_tensor *vc = mode == 2 ? NULL : rv, *vcg = mode == 2 ? NULL : rvg;
            char what[64];
            snprintf(what, sizeof what, "batch_norm %s mode %d", tg_dtype_name(dt), mode);
            tg_tensors3 c = tg_native_batch_norm(x, wc, bc, rc, vc, train, 0.1, 1e-5);
            tg_tensors3 g = tg_native_batch_norm(xg, wgc, bgc, rcg, vcg, train, 0.1, 1e-5);
            close3(g, c, tol, what);
            if (rc) {
                cc_assert_close(rmg, rm, tol, tol, "running_mean");
                cc_assert_close(rvg, rv, tol, tol, "running_var");
            }
            tg_tensors3 bc3 = tg_native_batch_norm_backward(go, x, wc, rc, vc, c.r1, c.r2, train,
                                                            1e-5, TG_BOOLS(true, true, true));
            tg_tensors3 bg3 = tg_native_batch_norm_backward(
                gog, xg, wgc, rcg, vcg, g.r1, g.r2, train, 1e-5, TG_BOOLS(true, true, true));
            what[0] = 'B';
            close3(bg3, bc3, tol * 10, what);
        }
        /* a non-contiguous input (the transpose of the last two dims) */
        tg_tensor *xt = tg_transpose(x, 2, 3), *xtg = tg_transpose(xg, 2, 3);
        close3(tg_native_batch_norm(xtg, wg, bg, NULL, NULL, true, 0.1, 1e-5),
               tg_native_batch_norm(xt, w, b, NULL, NULL, true, 0.1, 1e-5), tol,
               "batch_norm transposed");
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

Test(cuda_norm, group_norm)
{
    CC_REQUIRE_DEVICE("cuda_norm::group_norm");
    kt_live base = kt_live_now();
    static const int64_t shape[] = { 3, 6, 5, 7 }, cshape[] = { 6 };
    for (int t = 0; t < 2; t++) {
        tg_dtype dt = dts[t];
        double tol = dt == TG_FLOAT32 ? 1e-5 : 1e-10;
        tg_scope_begin();
        tg_tensor *x = cc_rand(shape, 4, dt, 11, -2, 3), *xg = cc_cuda(x);
        tg_tensor *go = cc_rand(shape, 4, dt, 12, -1, 1), *gog = cc_cuda(go);
        tg_tensor *w = cc_rand(cshape, 1, dt, 13, -1, 1), *wg = cc_cuda(w);
        tg_tensor *b = cc_rand(cshape, 1, dt, 14, -1, 1), *bg = cc_cuda(b);
        for (int affine = 0; affine < 2; affine++) {
            tg_tensor *wc = affine ? w : NULL, *wgc = affine ? wg : NULL;
            tg_tensor *bc = affine ? b : NULL, *bgc = affine ? bg : NULL;
            tg_tensors3 c = tg_native_group_norm(x, wc, bc, 3, 6, 35, 3, 1e-5);
            tg_tensors3 g = tg_native_group_norm(xg, wgc, bgc, 3, 6, 35, 3, 1e-5);
            close3(g, c, tol, "group_norm");
            close3(tg_native_group_norm_backward(gog, xg, g.r1, g.r2, wgc, 3, 6, 35, 3,
                                                 TG_BOOLS(true, true, true)),
                   tg_native_group_norm_backward(go, x, c.r1, c.r2, wc, 3, 6, 35, 3,
                                                 TG_BOOLS(true, true, true)),
                   tol * 10, "group_norm backward");
        }
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

Test(cuda_norm, upsample)
{
    CC_REQUIRE_DEVICE("cuda_norm::upsample");
    kt_live base = kt_live_now();
    static const int64_t shape[] = { 2, 3, 5, 6 };
    static const int64_t osz[][2] = { { 11, 13 }, { 3, 4 }, { 10, 12 }, { 5, 6 } };
    for (int t = 0; t < 2; t++) {
        tg_dtype dt = dts[t];
        double tol = dt == TG_FLOAT32 ? 1e-5 : 1e-12;
        tg_scope_begin();
        tg_tensor *x = cc_rand(shape, 4, dt, 21, -2, 3), *xg = cc_cuda(x);
        tg_tensor *xt = tg_transpose(x, 2, 3), *xtg = tg_transpose(xg, 2, 3);
        for (int s = 0; s < 4; s++) {
            for (int sc = 0; sc < 2; sc++) {
                tg_opt_float sh = sc ? TG_OPT_FLOAT(2.3) : TG_NONE_FLOAT;
                tg_opt_float sw = sc ? TG_OPT_FLOAT(1.7) : TG_NONE_FLOAT;
                tg_int_list o = TG_INTS(osz[s][0], osz[s][1]);
                int64_t gshape[4] = { 2, 3, osz[s][0], osz[s][1] };
                tg_tensor *go = cc_rand(gshape, 4, dt, 30 + s, -1, 1), *gog = cc_cuda(go);
                cc_assert_close(tg_upsample_nearest2d(xg, o, .scales_h = sh, .scales_w = sw),
                                tg_upsample_nearest2d(x, o, .scales_h = sh, .scales_w = sw), 0, 0,
                                "nearest");
                cc_assert_close(tg_upsample_nearest2d_backward(gog, o, TG_INTS(2, 3, 5, 6),
                                                               .scales_h = sh, .scales_w = sw),
                                tg_upsample_nearest2d_backward(go, o, TG_INTS(2, 3, 5, 6),
                                                               .scales_h = sh, .scales_w = sw),
                                tol, tol, "nearest backward");
                for (int ac = 0; ac < 2; ac++) {
                    cc_assert_close(
                        tg_upsample_bilinear2d(xg, o, ac, .scales_h = sh, .scales_w = sw),
                        tg_upsample_bilinear2d(x, o, ac, .scales_h = sh, .scales_w = sw), tol, tol,
                        "bilinear");
                    cc_assert_close(
                        tg_upsample_bilinear2d(xtg, o, ac, .scales_h = sh, .scales_w = sw),
                        tg_upsample_bilinear2d(xt, o, ac, .scales_h = sh, .scales_w = sw), tol, tol,
                        "bilinear transposed");
                    cc_assert_close(tg_upsample_bilinear2d_backward(gog, o, TG_INTS(2, 3, 5, 6), ac,
                                                                    .scales_h = sh, .scales_w = sw),
                                    tg_upsample_bilinear2d_backward(go, o, TG_INTS(2, 3, 5, 6), ac,
                                                                    .scales_h = sh, .scales_w = sw),
                                    tol, tol, "bilinear backward");
                }
            }
        }
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

#endif
