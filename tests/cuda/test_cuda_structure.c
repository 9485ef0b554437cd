/* CUDA cumulative and structure kernels (kernels/cuda/cumulative.cu, structure.cu) against the
 * CPU kernels on the same random inputs: cumsum / cumprod (every dim, integral promotion, in
 * place, out=, strided inputs), flip, roll (per dim and flattened), repeat and
 * repeat_interleave.Tensor, in float32, float64, int64 and bool; their errors on CUDA.
 *
 * Bounds: every comparison is exact. The gathers move elements; the scans accumulate in the
 * same type in the same order on both sides (double for the floating dtypes, int64 for the
 * integers) and round once per element. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("cumsum.out", "cumprod.out", "flip", "roll", "repeat", "repeat_interleave.Tensor");

#ifndef TG_WITH_CUDA
Test(cuda_structure, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

static const int64_t shape3[] = { 3, 5, 4 };
static const tg_dtype DTYPES[4] = { TG_FLOAT32, TG_FLOAT64, TG_INT64, TG_BOOL };

/* x, or (view) a transposed view of a contiguous copy holding x's values, and its CUDA twin
 * with the same geometry. */
static void inputs(tg_dtype dt, int view, uint64_t seed, tg_tensor **x, tg_tensor **gx)
{
    double lo = dt == TG_BOOL ? 0 : -3, hi = dt == TG_BOOL ? 2 : 3;
    tg_tensor *c = cc_rand(shape3, 3, dt, seed, lo, hi);
    if (!view) {
        *x = c;
        *gx = cc_cuda(c);
        return;
    }
    *x = tg_transpose(tg_contiguous(tg_transpose(c, 0, 2)), 0, 2);
    *gx = tg_transpose(cc_cuda(tg_contiguous(tg_transpose(c, 0, 2))), 0, 2);
}

Test(cuda_structure, cumsum_cumprod)
{
    CC_REQUIRE_DEVICE("cuda_structure::cumsum_cumprod");
    kt_live base = kt_live_now();
    for (int t = 0; t < 4; t++) {
        for (int view = 0; view < 2; view++) {
            tg_scope_begin();
            tg_tensor *x, *gx;
            inputs(DTYPES[t], view, 11 + t, &x, &gx);
            for (int64_t d = -3; d < 3; d++) {
                cc_assert_equal(tg_cumsum(gx, d), tg_cumsum(x, d), "cumsum");
                cc_assert_equal(tg_cumprod(gx, d), tg_cumprod(x, d), "cumprod");
            }
            cc_assert_equal(tg_cumsum(gx, 1, .dtype = TG_FLOAT64),
                            tg_cumsum(x, 1, .dtype = TG_FLOAT64), "cumsum dtype float64");
            cc_assert_equal(tg_cumprod(gx, 2, .dtype = TG_INT32),
                            tg_cumprod(x, 2, .dtype = TG_INT32), "cumprod dtype int32");
            /* in place and out= (a transposed out) */
            tg_tensor *xc = tg_clone(x), *gxc = tg_clone(gx);
            cr_assert(tg_cumsum_(xc, 0) && tg_cumsum_(gxc, 0));
            cc_assert_equal(gxc, xc, "cumsum_");
            tg_dtype odt = tg_tensor_dtype(tg_cumprod(x, 1));
            tg_tensor *o = tg_empty(TG_INTS(4, 5, 3), .dtype = odt);
            tg_tensor *go = tg_empty(TG_INTS(4, 5, 3), .dtype = odt, .device = TG_DEVICE_CUDA(0));
            tg_tensor *ot = tg_transpose(o, 0, 2), *got = tg_transpose(go, 0, 2);
            cr_assert(tg_cumprod_out(x, 1, ot) && tg_cumprod_out(gx, 1, got), "%s",
                      tg_last_error());
            cc_assert_equal(got, ot, "cumprod out= transposed");
            tg_scope_end();
        }
    }
    /* 0-dim and empty inputs */
    tg_scope_begin();
    tg_tensor *s = cc_rand(shape3, 0, TG_FLOAT32, 3, -1, 1);
    cc_assert_equal(tg_cumsum(cc_cuda(s), 0), tg_cumsum(s, 0), "cumsum 0-dim");
    tg_tensor *e = tg_zeros(TG_INTS(2, 0, 3));
    cc_assert_equal(tg_cumprod(cc_cuda(e), 1), tg_cumprod(e, 1), "cumprod empty");
    tg_scope_end();
    kt_assert_no_leak(base);
}

Test(cuda_structure, flip_roll_repeat)
{
    CC_REQUIRE_DEVICE("cuda_structure::flip_roll_repeat");
    kt_live base = kt_live_now();
    for (int t = 0; t < 4; t++) {
        for (int view = 0; view < 2; view++) {
            tg_scope_begin();
            tg_tensor *x, *gx;
            inputs(DTYPES[t], view, 21 + t, &x, &gx);
            cc_assert_equal(tg_flip(gx, TG_INTS(0)), tg_flip(x, TG_INTS(0)), "flip 0");
            cc_assert_equal(tg_flip(gx, TG_INTS(-1, 1)), tg_flip(x, TG_INTS(-1, 1)), "flip -1, 1");
            cc_assert_equal(tg_flip(gx, TG_INTS(0, 1, 2)), tg_flip(x, TG_INTS(0, 1, 2)),
                            "flip all");
            cc_assert_equal(tg_roll(gx, TG_INTS(7)), tg_roll(x, TG_INTS(7)), "roll flat");
            cc_assert_equal(tg_roll(gx, TG_INTS(-2, 9), .dims = TG_INTS(2, 1)),
                            tg_roll(x, TG_INTS(-2, 9), .dims = TG_INTS(2, 1)), "roll dims");
            cc_assert_equal(tg_repeat(gx, TG_INTS(2, 1, 3)), tg_repeat(x, TG_INTS(2, 1, 3)),
                            "repeat");
            cc_assert_equal(tg_repeat(gx, TG_INTS(2, 1, 2, 1)), tg_repeat(x, TG_INTS(2, 1, 2, 1)),
                            "repeat with a new dim");
            cc_assert_equal(tg_repeat(gx, TG_INTS(1, 0, 2)), tg_repeat(x, TG_INTS(1, 0, 2)),
                            "repeat 0");
            tg_scope_end();
        }
    }
    kt_assert_no_leak(base);
}

Test(cuda_structure, repeat_interleave_tensor)
{
    CC_REQUIRE_DEVICE("cuda_structure::repeat_interleave_tensor");
    kt_live base = kt_live_now();
    tg_scope_begin();
    const int64_t n[1] = { 9 };
    for (int t = 0; t < 2; t++) {
        tg_tensor *r = cc_rand(n, 1, t ? TG_INT32 : TG_INT64, 5 + t, 0, 4);
        cc_assert_equal(tg_repeat_interleave(cc_cuda(r)), tg_repeat_interleave(r),
                        "repeat_interleave");
    }
    tg_tensor *e = tg_empty(TG_INTS(0), .dtype = TG_INT64, .device = TG_DEVICE_CUDA(0));
    tg_tensor *ye = tg_repeat_interleave(e);
    cr_assert(ye && tg_tensor_numel(ye) == 0 && tg_tensor_device(ye).type == TG_CUDA);
    /* errors on CUDA: the CPU's messages */
    const int64_t two[1] = { 2 };
    tg_tensor *bad = cc_cuda(kt_tensor((double[]){ 1, -2 }, two, 1, TG_INT64));
    cr_assert_null(tg_repeat_interleave(bad));
    kt_assert_error("repeats can not be negative");
    tg_opt_int os = { true, 5 };
    tg_tensor *ok = cc_cuda(kt_tensor((double[]){ 1, 2 }, two, 1, TG_INT64));
    cr_assert_null(tg_repeat_interleave(ok, .output_size = os));
    kt_assert_error("allocated size does not match required size");
    cr_assert_null(tg_repeat_interleave(cc_cuda(tg_zeros(TG_INTS(2)))));
    kt_assert_error("\"repeat_interleave_cuda\" not implemented for 'Float'");
    tg_tensor *x = cc_cuda(tg_zeros(TG_INTS(2, 3)));
    cr_assert_null(tg_flip(x, TG_INTS(1, 1)));
    kt_assert_error("dim 1 appears multiple times in the list of dims");
    cr_assert_null(tg_cumsum(x, 2));
    kt_assert_error("Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    cr_assert_null(tg_cumsum_out(x, 0, tg_zeros(TG_INTS(2, 3))));
    kt_assert_error("Expected");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
