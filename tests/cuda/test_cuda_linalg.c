/* CUDA matrix products (cuBLAS) against the CPU kernels (OpenBLAS) on the same random inputs:
 * mm, bmm, addmm (kernels/cuda/linalg.cu).
 *
 * Layouts: row-major operands, transposed views (t() / transpose(1, 2): passed to cuBLAS as
 * CUBLAS_OP_T), operands with two non-unit strides (copied), a column-major out= (computed as
 * C^T = B^T A^T), broadcast bias for addmm, K = 0. Values in [-1, 1).
 *
 * Bounds: float64 1e-12 (relative to the row's magnitude: atol = rtol). float32 2e-5 with
 * TF32 off (the default): both sides accumulate in float32 in different orders, error
 * ~ sqrt(K) * 6e-8 * sum|a||b| for K <= 300. float16/bfloat16: cuBLAS accumulates in float32
 * and rounds once, the CPU converts to float32, uses sgemm and rounds once; the results
 * differ by about one unit of the output's rounding: 1e-2 relative and absolute. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("mm.out", "bmm.out", "addmm.out");

#ifndef TG_WITH_CUDA
Test(cuda_linalg, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

static const tg_dtype float_dtypes[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16 };

static double tol(tg_dtype dt) { return dt == TG_FLOAT64 ? 1e-12 : dt == TG_FLOAT32 ? 2e-5 : 1e-2; }

/* a (M, K) and b (K, N) with layout bits: 1 = a given as t() of a (K, M) tensor, 2 = b as
 * t() of (N, K), 4 = a sliced with step 2 along both dims of a (2M, 2K) tensor (copied). */
static void mm_case(tg_dtype dt, int64_t M, int64_t K, int64_t N, int layout, uint64_t seed)
{
    int64_t sa[2] = { layout & 1 ? K : M, layout & 1 ? M : K },
            sb[2] = { layout & 2 ? N : K, layout & 2 ? K : N };
    if (layout & 4) {
        sa[0] = 2 * M;
        sa[1] = 2 * K;
    }
    tg_tensor *a0 = cc_rand(sa, 2, dt, seed, -1, 1), *b0 = cc_rand(sb, 2, dt, seed + 1, -1, 1);
    tg_tensor *ga0 = cc_cuda(a0), *gb0 = cc_cuda(b0);
    tg_tensor *a = layout & 1   ? tg_t(a0)
                   : layout & 4 ? tg_slice(tg_slice(a0, .dim = 0, .step = 2), .dim = 1, .step = 2)
                                : a0;
    tg_tensor *ga = layout & 1   ? tg_t(ga0)
                    : layout & 4 ? tg_slice(tg_slice(ga0, .dim = 0, .step = 2), .dim = 1, .step = 2)
                                 : ga0;
    tg_tensor *b = layout & 2 ? tg_t(b0) : b0, *gb = layout & 2 ? tg_t(gb0) : gb0;
    char what[96];
    snprintf(what, sizeof what, "mm %s %lldx%lldx%lld layout %d", tg_dtype_name(dt), (long long)M,
             (long long)K, (long long)N, layout);
    cc_assert_close(tg_mm(ga, gb), tg_mm(a, b), tol(dt), tol(dt), what);
    /* a column-major out=: the transpose of a contiguous (N, M) tensor */
    tg_tensor *outc = tg_t(tg_empty(TG_INTS(N, M), .dtype = dt)),
              *outg = tg_t(cc_cuda(tg_zeros(TG_INTS(N, M), .dtype = dt)));
    cr_assert(tg_mm_out(ga, gb, outg), "%s out=: %s", what, tg_last_error());
    cr_assert(tg_mm_out(a, b, outc), "%s out= (CPU): %s", what, tg_last_error());
    cc_assert_close(outg, outc, tol(dt), tol(dt), what);
}

Test(cuda_linalg, mm)
{
    CC_REQUIRE_DEVICE("cuda_linalg::mm");
    kt_live base = kt_live_now();
    static const int64_t sizes[][3] = {
        { 33, 64, 17 }, { 1, 300, 5 }, { 128, 1, 96 }, { 7, 0, 9 }, { 256, 256, 256 }
    };
    for (size_t t = 0; t < 4; t++)
        for (int s = 0; s < 5; s++)
            for (int layout = 0; layout < 8; layout++) {
                if ((layout & 4) && (layout & 1)) continue;
                tg_scope_begin();
                mm_case(float_dtypes[t], sizes[s][0], sizes[s][1], sizes[s][2], layout, 11 + s);
                tg_scope_end();
            }
    kt_assert_no_leak(base);
}

Test(cuda_linalg, bmm)
{
    CC_REQUIRE_DEVICE("cuda_linalg::bmm");
    kt_live base = kt_live_now();
    for (size_t t = 0; t < 4; t++) {
        tg_dtype dt = float_dtypes[t];
        tg_scope_begin();
        tg_tensor *a = cc_rand((int64_t[]){ 5, 33, 20 }, 3, dt, 1, -1, 1),
                  *b = cc_rand((int64_t[]){ 5, 20, 17 }, 3, dt, 2, -1, 1);
        tg_tensor *ga = cc_cuda(a), *gb = cc_cuda(b);
        cc_assert_close(tg_bmm(ga, gb), tg_bmm(a, b), tol(dt), tol(dt), "bmm row-major");
        /* transposed batches: (5, 20, 33)^T and (5, 17, 20)^T */
        tg_tensor *at = cc_rand((int64_t[]){ 5, 20, 33 }, 3, dt, 3, -1, 1),
                  *bt = cc_rand((int64_t[]){ 5, 17, 20 }, 3, dt, 4, -1, 1);
        tg_tensor *gat = cc_cuda(at), *gbt = cc_cuda(bt);
        cc_assert_close(tg_bmm(tg_transpose(gat, 1, 2), tg_transpose(gbt, 1, 2)),
                        tg_bmm(tg_transpose(at, 1, 2), tg_transpose(bt, 1, 2)), tol(dt), tol(dt),
                        "bmm transposed");
        /* a batch-strided (permuted) operand: (20, 5, 33) permuted to (5, 20, 33), then T */
        tg_tensor *ap = cc_rand((int64_t[]){ 33, 5, 20 }, 3, dt, 5, -1, 1), *gap = cc_cuda(ap);
        cc_assert_close(tg_bmm(tg_permute(gap, TG_INTS(1, 0, 2)), gb),
                        tg_bmm(tg_permute(ap, TG_INTS(1, 0, 2)), b), tol(dt), tol(dt),
                        "bmm permuted batch");
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

Test(cuda_linalg, addmm)
{
    CC_REQUIRE_DEVICE("cuda_linalg::addmm");
    kt_live base = kt_live_now();
    for (size_t t = 0; t < 4; t++) {
        tg_dtype dt = float_dtypes[t];
        tg_scope_begin();
        tg_tensor *a = cc_rand((int64_t[]){ 40, 30 }, 2, dt, 1, -1, 1),
                  *b = cc_rand((int64_t[]){ 30, 24 }, 2, dt, 2, -1, 1);
        tg_tensor *bias = cc_rand((int64_t[]){ 24 }, 1, dt, 3, -1, 1),
                  *full = cc_rand((int64_t[]){ 40, 24 }, 2, dt, 4, -1, 1);
        tg_tensor *ga = cc_cuda(a), *gb = cc_cuda(b), *gbias = cc_cuda(bias),
                  *gfull = cc_cuda(full);
        cc_assert_close(tg_addmm(gbias, ga, gb), tg_addmm(bias, a, b), tol(dt), tol(dt),
                        "addmm 1-D bias");
        cc_assert_close(tg_addmm(gfull, ga, gb, .beta = 0.5, .alpha = 2),
                        tg_addmm(full, a, b, .beta = 0.5, .alpha = 2), tol(dt), tol(dt),
                        "addmm beta 0.5 alpha 2");
        cc_assert_close(tg_addmm(tg_t(gfull), tg_t(gb), tg_t(ga), .beta = 0),
                        tg_addmm(tg_t(full), tg_t(b), tg_t(a), .beta = 0), tol(dt), tol(dt),
                        "addmm transposed, beta 0");
        tg_tensor *k0a = cc_rand((int64_t[]){ 40, 0 }, 2, dt, 5, -1, 1),
                  *k0b = cc_rand((int64_t[]){ 0, 24 }, 2, dt, 6, -1, 1);
        cc_assert_close(tg_addmm(gfull, cc_cuda(k0a), cc_cuda(k0b), .beta = 3),
                        tg_addmm(full, k0a, k0b, .beta = 3), tol(dt), tol(dt), "addmm K = 0");
        tg_tensor *acc_c = tg_clone(full), *acc_g = cc_cuda(full);
        cr_assert(tg_addmm_(acc_g, ga, gb, .beta = 1, .alpha = -1), "addmm_: %s", tg_last_error());
        cr_assert(tg_addmm_(acc_c, a, b, .beta = 1, .alpha = -1));
        cc_assert_close(acc_g, acc_c, tol(dt), tol(dt), "addmm_ in place");
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

/* Integral dtypes are rejected as PyTorch's CUDA kernels do; mixed dtypes as on the CPU. */
Test(cuda_linalg, errors)
{
    CC_REQUIRE_DEVICE("cuda_linalg::errors");
    kt_live base = kt_live_now();
    tg_scope_begin();
    tg_tensor *a = cc_cuda(cc_rand((int64_t[]){ 3, 4 }, 2, TG_INT64, 1, -3, 3));
    tg_tensor *b = cc_cuda(cc_rand((int64_t[]){ 4, 2 }, 2, TG_INT64, 2, -3, 3));
    cr_assert_null(tg_mm(a, b));
    kt_assert_error("\"addmm_cuda\" not implemented for 'Long'");
    cr_assert_null(tg_bmm(tg_unsqueeze(a, 0), tg_unsqueeze(b, 0)));
    kt_assert_error("\"bmm_cuda\" not implemented for 'Long'");
    tg_tensor *f = cc_cuda(cc_rand((int64_t[]){ 4, 2 }, 2, TG_FLOAT32, 3, -1, 1));
    tg_tensor *d = cc_cuda(cc_rand((int64_t[]){ 3, 4 }, 2, TG_FLOAT64, 4, -1, 1));
    cr_assert_null(tg_mm(d, f));
    kt_assert_error("expected scalar type Double but found Float");
    cr_assert_null(tg_mm(f, f));
    kt_assert_error("mat1 and mat2 shapes cannot be multiplied (4x2 and 4x2)");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
