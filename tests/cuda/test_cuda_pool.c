/* CUDA pooling and padding kernels (kernels/cuda/pool.cu) against the CPU kernels on the same
 * random inputs, forward and backward, float32 and float64, contiguous and transposed inputs;
 * constant_pad_nd (a composite: fill_, slice, copy_) on CUDA tensors too.
 *
 * Bounds: max pooling, gathers and indices are exact; the averages and the gradient sums add
 * the same terms in another order: float32 1e-5 relative + 1e-6 absolute, float64 1e-12,
 * bfloat16 1e-2 (the pooling operators; CPU padding has no bfloat16, as PyTorch's). */
#include "cuda_cmp.h"

TG_CUDA_COVERS("max_pool2d_with_indices", "max_pool2d_with_indices_backward",
               "max_pool_double_backward", "avg_pool2d", "avg_pool2d_backward",
               "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d",
               "adaptive_max_pool2d_backward", "reflection_pad2d", "reflection_pad2d_backward",
               "replication_pad2d", "replication_pad2d_backward");

#ifndef TG_WITH_CUDA
Test(cuda_pool, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

static const int64_t shape4[] = { 2, 3, 9, 11 };

/* float32, float64, and bfloat16 (both sides compute in float and round once; the gradient
 * sums may round differently: 1e-2) for the pooling operators. */
static const tg_dtype DTYPES[3] = { TG_FLOAT32, TG_FLOAT64, TG_BFLOAT16 };
static const double TOL[3] = { 1e-5, 1e-12, 1e-2 }, ATOL[3] = { 1e-6, 1e-12, 1e-2 };

/* The CPU input x (float32 or float64), optionally transposed in its last two dims. */
static tg_tensor *input(tg_dtype dt, int view, uint64_t seed)
{
    tg_tensor *x = cc_rand(shape4, 4, dt, seed, -2, 2);
    return view ? tg_transpose(tg_contiguous(tg_transpose(x, -1, -2)), -1, -2) : x;
}

static tg_tensor *on_cuda(tg_tensor *x)
{
    if (tg_tensor_is_contiguous(x)) return cc_cuda(x);
    return tg_transpose(cc_cuda(tg_contiguous(tg_transpose(x, -1, -2))), -1, -2);
}

Test(cuda_pool, max_pooling)
{
    CC_REQUIRE_DEVICE("cuda_pool::max_pooling");
    kt_live base = kt_live_now();
    for (int t = 0; t < 3; t++) {
        tg_dtype dt = DTYPES[t];
        double tol = TOL[t], atol = ATOL[t];
        for (int view = 0; view < 2; view++) {
            tg_scope_begin();
            tg_tensor *x = input(dt, view, 7 + view), *gx = on_cuda(x);
            struct {
                tg_int_list k, s, p, d;
                bool ceil;
            } cfg[] = {
                { TG_INTS(3), TG_INTS(2), TG_INTS(1), TG_INTS(1), false },
                { TG_INTS(3, 2), TG_INTS(2, 1), TG_INTS(1, 0), TG_INTS(2, 1), true },
                { TG_INTS(2), TG_NO_INTS, TG_INTS(0), TG_INTS(1), true },
            };
            for (int c = 0; c < 3; c++) {
                tg_tensors2 rc =
                    tg_max_pool2d_with_indices(x, cfg[c].k, .stride = cfg[c].s, .padding = cfg[c].p,
                                               .dilation = cfg[c].d, .ceil_mode = cfg[c].ceil);
                tg_tensors2 rg = tg_max_pool2d_with_indices(
                    gx, cfg[c].k, .stride = cfg[c].s, .padding = cfg[c].p, .dilation = cfg[c].d,
                    .ceil_mode = cfg[c].ceil);
                cc_assert_equal(rg.r0, rc.r0, "max_pool2d_with_indices values");
                cc_assert_equal(rg.r1, rc.r1, "max_pool2d_with_indices indices");
                tg_tensor *go = cc_rand(tg_tensor_sizes(rc.r0), 4, dt, 30 + c, -1, 1);
                cc_assert_close(
                    tg_max_pool2d_with_indices_backward(cc_cuda(go), gx, cfg[c].k, cfg[c].s,
                                                        cfg[c].p, cfg[c].d, cfg[c].ceil, rg.r1),
                    tg_max_pool2d_with_indices_backward(go, x, cfg[c].k, cfg[c].s, cfg[c].p,
                                                        cfg[c].d, cfg[c].ceil, rc.r1),
                    tol, atol, "max_pool2d_with_indices_backward");
                if (dt != TG_BFLOAT16)
                    cc_assert_equal(tg_max_pool_double_backward(gx, rg.r1, 2),
                                    tg_max_pool_double_backward(x, rc.r1, 2),
                                    "max_pool_double_backward");
            }
            /* adaptive max pooling */
            tg_tensors2 ac = tg_adaptive_max_pool2d(x, TG_INTS(4, 5)),
                        ag = tg_adaptive_max_pool2d(gx, TG_INTS(4, 5));
            cc_assert_equal(ag.r0, ac.r0, "adaptive_max_pool2d values");
            cc_assert_equal(ag.r1, ac.r1, "adaptive_max_pool2d indices");
            tg_tensor *go = cc_rand((int64_t[]){ 2, 3, 4, 5 }, 4, dt, 41, -1, 1);
            cc_assert_close(tg_adaptive_max_pool2d_backward(cc_cuda(go), gx, ag.r1),
                            tg_adaptive_max_pool2d_backward(go, x, ac.r1), tol, atol,
                            "adaptive_max_pool2d_backward");
            tg_scope_end();
        }
    }
    /* NaN wins on both */
    tg_scope_begin();
    double v[16] = { 1, 2, NAN, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, NAN };
    tg_tensor *x = kt_tensor(v, (int64_t[]){ 1, 4, 4 }, 3, TG_FLOAT32), *g = cc_cuda(x);
    tg_tensors2 rc = tg_max_pool2d_with_indices(x, TG_INTS(2)),
                rg = tg_max_pool2d_with_indices(g, TG_INTS(2));
    cc_assert_equal(rg.r0, rc.r0, "NaN values");
    cc_assert_equal(rg.r1, rc.r1, "NaN indices");
    tg_scope_end();
    kt_assert_no_leak(base);
}

Test(cuda_pool, avg_pooling)
{
    CC_REQUIRE_DEVICE("cuda_pool::avg_pooling");
    kt_live base = kt_live_now();
    for (int t = 0; t < 3; t++) {
        tg_dtype dt = DTYPES[t];
        double tol = TOL[t], atol = ATOL[t];
        for (int view = 0; view < 2; view++) {
            tg_scope_begin();
            tg_tensor *x = input(dt, view, 9 + view), *gx = on_cuda(x);
            for (int c = 0; c < 4; c++) {
                tg_int_list k = c == 1 ? TG_INTS(3, 2) : TG_INTS(3);
                tg_int_list s = c == 1 ? TG_INTS(2, 3) : TG_INTS(2);
                tg_int_list p = c == 1 ? TG_INTS(1, 1) : TG_INTS(1);
                bool ceil = c >= 1, cip = c != 2;
                tg_opt_int div = c == 3 ? (tg_opt_int){ true, 5 } : TG_NONE_INT;
                tg_tensor *yc = tg_avg_pool2d(x, k, .stride = s, .padding = p, .ceil_mode = ceil,
                                              .count_include_pad = cip, .divisor_override = div);
                tg_tensor *yg = tg_avg_pool2d(gx, k, .stride = s, .padding = p, .ceil_mode = ceil,
                                              .count_include_pad = cip, .divisor_override = div);
                cc_assert_close(yg, yc, tol, atol, "avg_pool2d");
                tg_tensor *go = cc_rand(tg_tensor_sizes(yc), 4, dt, 50 + c, -1, 1);
                cc_assert_close(tg_avg_pool2d_backward(cc_cuda(go), gx, k, s, p, ceil, cip, div),
                                tg_avg_pool2d_backward(go, x, k, s, p, ceil, cip, div), tol, atol,
                                "avg_pool2d_backward");
            }
            static const int64_t outs[][2] = { { 4, 5 }, { 9, 11 }, { 13, 3 } };
            for (int c = 0; c < 3; c++) {
                tg_int_list o = { outs[c], 2 };
                cc_assert_close(tg__adaptive_avg_pool2d(gx, o), tg__adaptive_avg_pool2d(x, o), tol,
                                atol, "_adaptive_avg_pool2d");
                tg_tensor *go =
                    cc_rand((int64_t[]){ 2, 3, outs[c][0], outs[c][1] }, 4, dt, 60 + c, -1, 1);
                cc_assert_close(tg__adaptive_avg_pool2d_backward(cc_cuda(go), gx),
                                tg__adaptive_avg_pool2d_backward(go, x), tol, atol,
                                "_adaptive_avg_pool2d_backward");
            }
            tg_scope_end();
        }
    }
    kt_assert_no_leak(base);
}

Test(cuda_pool, padding)
{
    CC_REQUIRE_DEVICE("cuda_pool::padding");
    kt_live base = kt_live_now();
    for (int t = 0; t < 2; t++) {
        tg_dtype dt = t ? TG_FLOAT64 : TG_FLOAT32;
        double tol = t ? 1e-12 : 1e-5, atol = t ? 1e-12 : 1e-6;
        for (int view = 0; view < 2; view++) {
            tg_scope_begin();
            tg_tensor *x = input(dt, view, 11 + view), *gx = on_cuda(x);
            static const int64_t pads[][4] = { { 1, 2, 3, 4 }, { 8, 0, -2, 5 }, { -3, 10, 0, 0 } };
            for (int c = 0; c < 3; c++) {
                tg_int_list pad = { pads[c], 4 };
                for (int r = 0; r < 2; r++) {
                    if (r && c == 2) continue; /* 10 > W: reflection refuses */
                    tg_tensor *yc = r ? tg_reflection_pad2d(x, pad) : tg_replication_pad2d(x, pad);
                    tg_tensor *yg =
                        r ? tg_reflection_pad2d(gx, pad) : tg_replication_pad2d(gx, pad);
                    cc_assert_equal(yg, yc, r ? "reflection_pad2d" : "replication_pad2d");
                    tg_tensor *go = cc_rand(tg_tensor_sizes(yc), 4, dt, 70 + c, -1, 1),
                              *ggo = cc_cuda(go);
                    cc_assert_close(r ? tg_reflection_pad2d_backward(ggo, gx, pad)
                                      : tg_replication_pad2d_backward(ggo, gx, pad),
                                    r ? tg_reflection_pad2d_backward(go, x, pad)
                                      : tg_replication_pad2d_backward(go, x, pad),
                                    tol, atol,
                                    r ? "reflection_pad2d_backward" : "replication_pad2d_backward");
                }
            }
            /* constant_pad_nd (a composite: fill_, slice and copy_ on the device) */
            cc_assert_equal(tg_constant_pad_nd(gx, TG_INTS(2, -1, 0, 3, 1, 1), .value = 1.5),
                            tg_constant_pad_nd(x, TG_INTS(2, -1, 0, 3, 1, 1), .value = 1.5),
                            "constant_pad_nd");
            tg_scope_end();
        }
    }
    tg_scope_begin();
    tg_tensor *g = cc_cuda(tg_zeros(TG_INTS(2, 3, 5, 6)));
    cr_assert_null(tg_reflection_pad2d(g, TG_INTS(6, 1, 1, 1)));
    kt_assert_error(
        "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (6, 1) at dimension 3 of input 4");
    tg_tensors2 r = tg_max_pool2d_with_indices(g, TG_INTS(6));
    cr_assert_null(r.r0);
    kt_assert_error(
        "Given input size: (3x5x6). Calculated output size: (3x0x1). Output size is too small");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
