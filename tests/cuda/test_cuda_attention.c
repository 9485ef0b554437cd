/* CUDA masked_fill_, tril/triu, baddbmm and the fused attention kernels (kernels/cuda/mask.cu,
 * linalg.cu, attention.cu) against the CPU kernels on the same random inputs: float32 and
 * float64, contiguous and transposed / strided inputs, every mask kind of the fused operator,
 * L != S and sizes that are not multiples of the tiles.
 *
 * Bounds: masked_fill and tril/triu copy values: exact. baddbmm and attention add the same
 * terms in another order (cuBLAS vs OpenBLAS; the CUDA attention's per-row loops vs the CPU's
 * tiles): float32 1e-5 relative + 1e-5, float64 1e-12. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("masked_fill_.Scalar", "masked_fill_.Tensor", "masked_fill.Scalar",
               "masked_fill.Tensor", "tril.out", "triu.out", "tril", "triu", "tril_", "triu_",
               "baddbmm.out", "baddbmm", "baddbmm_", "_scaled_dot_product_fused_attention",
               "_scaled_dot_product_fused_attention_backward", "scaled_dot_product_attention");

#ifndef TG_WITH_CUDA
Test(cuda_attention, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

static const tg_dtype DTYPES[2] = { TG_FLOAT32, TG_FLOAT64 };
static const double TOL[2] = { 1e-5, 1e-12 };

/* x transposed in its last two dims and back: same values, non-contiguous, on CUDA or not. */
static tg_tensor *transposed(tg_tensor *x)
{
    return tg_transpose(tg_contiguous(tg_transpose(x, -1, -2)), -1, -2);
}

Test(cuda_attention, masked_fill)
{
    CC_REQUIRE_DEVICE("cuda_attention::masked_fill");
    kt_live base = kt_live_now();
    for (int t = 0; t < 2; t++) {
        tg_scope_begin();
        const int64_t xs[3] = { 2, 5, 7 }, ms[2] = { 5, 1 };
        tg_tensor *x = cc_rand(xs, 3, DTYPES[t], 3, -2, 2);
        tg_tensor *m = cc_rand(ms, 2, TG_BOOL, 4, 0, 2), *gm = cc_cuda(m);
        tg_tensor *gx = cc_cuda(x);
        cc_assert_equal(tg_masked_fill_scalar(gx, gm, -3.5), tg_masked_fill_scalar(x, m, -3.5),
                        "masked_fill.Scalar");
        tg_tensor *v = tg_full(TG_INTS_EMPTY, 1.25, .dtype = DTYPES[t]);
        cc_assert_equal(tg_masked_fill(gx, gm, cc_cuda(v)), tg_masked_fill(x, m, v),
                        "masked_fill.Tensor (CUDA value)");
        cc_assert_equal(tg_masked_fill(gx, gm, v), tg_masked_fill(x, m, v),
                        "masked_fill.Tensor (CPU value)");
        tg_tensor *xt = transposed(x), *gxt = transposed(cc_cuda(x));
        tg_tensor *mt = cc_rand((int64_t[]){ 7, 5 }, 2, TG_BOOL, 5, 0, 2);
        tg_tensor *mtt = tg_transpose(mt, 0, 1), *gmtt = tg_transpose(cc_cuda(mt), 0, 1);
        (void)mtt;
        cr_assert(tg_masked_fill_scalar_(xt, tg_transpose(mt, 0, 1), 9));
        cr_assert(tg_masked_fill_scalar_(gxt, gmtt, 9));
        cc_assert_equal(gxt, xt, "masked_fill_ strided self and mask");
        tg_tensor *fm = cc_cuda(tg_ones(TG_INTS(5, 1)));
        cr_assert_null(tg_masked_fill_scalar_(gx, fm, 1));
        kt_assert_error("masked_fill_ only supports boolean masks");
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

Test(cuda_attention, tril_triu)
{
    CC_REQUIRE_DEVICE("cuda_attention::tril_triu");
    kt_live base = kt_live_now();
    const int64_t xs[4] = { 2, 3, 6, 5 };
    for (int t = 0; t < 2; t++)
        for (int d = -3; d <= 3; d += 2) {
            tg_scope_begin();
            tg_tensor *x = cc_rand(xs, 4, DTYPES[t], 10 + (uint64_t)d + 3, -1, 1);
            tg_tensor *gx = cc_cuda(x), *gxt = transposed(gx), *xt = transposed(x);
            cc_assert_equal(tg_tril(gx, .diagonal = d), tg_tril(x, .diagonal = d), "tril");
            cc_assert_equal(tg_triu(gxt, .diagonal = d), tg_triu(xt, .diagonal = d),
                            "triu strided");
            tg_tensor *out = tg_empty(TG_INTS(0), .dtype = DTYPES[t], .device = TG_DEVICE_CUDA(0));
            cr_assert(tg_triu_out(gx, out, .diagonal = d));
            cc_assert_equal(out, tg_triu(x, .diagonal = d), "triu.out");
            tg_tensor *a = tg_clone(gxt);
            cr_assert(tg_tril_(a, .diagonal = d));
            cc_assert_equal(a, tg_tril(x, .diagonal = d), "tril_ strided");
            tg_tensor *b = tg_clone(gx);
            cr_assert(tg_triu_(b, .diagonal = d));
            cc_assert_equal(b, tg_triu(x, .diagonal = d), "triu_");
            tg_tensor *c = tg_clone(gx);
            cr_assert(tg_tril_out(gx, c, .diagonal = d));
            cc_assert_equal(c, tg_tril(x, .diagonal = d), "tril.out");
            tg_scope_end();
        }
    kt_assert_no_leak(base);
}

Test(cuda_attention, baddbmm)
{
    CC_REQUIRE_DEVICE("cuda_attention::baddbmm");
    kt_live base = kt_live_now();
    for (int t = 0; t < 2; t++) {
        tg_scope_begin();
        tg_dtype dt = DTYPES[t];
        tg_tensor *s = cc_rand((int64_t[]){ 3, 4, 6 }, 3, dt, 1, -1, 1);
        tg_tensor *s1 = cc_rand((int64_t[]){ 4, 1 }, 2, dt, 2, -1, 1);
        tg_tensor *a = cc_rand((int64_t[]){ 3, 4, 5 }, 3, dt, 3, -1, 1);
        tg_tensor *b = cc_rand((int64_t[]){ 3, 5, 6 }, 3, dt, 4, -1, 1);
        tg_tensor *gs = cc_cuda(s), *gs1 = cc_cuda(s1), *ga = cc_cuda(a),
                  *gb = transposed(cc_cuda(b));
        cc_assert_close(tg_baddbmm(gs, ga, gb, .beta = 0.5, .alpha = -2),
                        tg_baddbmm(s, a, b, .beta = 0.5, .alpha = -2), TOL[t], TOL[t], "baddbmm");
        cc_assert_close(tg_baddbmm(gs1, ga, gb), tg_baddbmm(s1, a, b), TOL[t], TOL[t],
                        "baddbmm broadcast self");
        tg_tensor *c = tg_clone(gs);
        cr_assert(tg_baddbmm_(c, ga, gb, .beta = 2));
        cc_assert_close(c, tg_baddbmm(s, a, b, .beta = 2), TOL[t], TOL[t], "baddbmm_");
        tg_tensor *o = tg_empty(TG_INTS(0), .dtype = dt, .device = TG_DEVICE_CUDA(0));
        cr_assert(tg_baddbmm_out(gs, ga, gb, o, .beta = 0));
        cc_assert_close(o, tg_baddbmm(s, a, b, .beta = 0), TOL[t], TOL[t], "baddbmm.out");
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

/* kind: 0 none, 1 causal, 2 bool mask (B, 1, L, S), 3 float mask (L, S) of the other dtype. */
static void fused_case(tg_dtype dt, double tol, int kind, int64_t L, int64_t S, bool strided)
{
    const int64_t B = 2, H = 3, E = 16, Ev = 9;
    tg_scope_begin();
    int64_t qs[4] = { B, H, L, E }, ks[4] = { B, H, S, E }, vs[4] = { B, H, S, Ev };
    tg_tensor *q = cc_rand(qs, 4, dt, 31, -1.5, 1.5), *k = cc_rand(ks, 4, dt, 32, -1.5, 1.5);
    tg_tensor *v = cc_rand(vs, 4, dt, 33, -1, 1);
    tg_tensor *gq = cc_cuda(q), *gk = cc_cuda(k), *gv = cc_cuda(v);
    if (strided) { /* (B, L, H, E) storage seen as (B, H, L, E), as the GPT's views are */
        int64_t qp[4] = { B, L, H, E };
        tg_tensor *qq = cc_rand(qp, 4, dt, 41, -1.5, 1.5);
        q = tg_transpose(qq, 1, 2);
        gq = tg_transpose(cc_cuda(qq), 1, 2);
        gk = transposed(gk);
    }
    tg_tensor *m = NULL, *gm = NULL;
    if (kind == 2) {
        m = cc_rand((int64_t[]){ B, 1, L, S }, 4, TG_BOOL, 34, 0, 2);
        gm = cc_cuda(m);
    } else if (kind == 3) {
        m = cc_rand((int64_t[]){ L, S }, 2, dt == TG_FLOAT32 ? TG_FLOAT64 : TG_FLOAT32, 35, -1, 1);
        gm = cc_cuda(m);
    }
    bool causal = kind == 1;
    tg_output_logsumexp c =
        tg__scaled_dot_product_fused_attention(q, k, v, .is_causal = causal, .attn_mask = m);
    tg_output_logsumexp g =
        tg__scaled_dot_product_fused_attention(gq, gk, gv, .is_causal = causal, .attn_mask = gm);
    char what[96];
    snprintf(what, sizeof what, "fused kind %d L %lld S %lld%s", kind, (long long)L, (long long)S,
             strided ? " strided" : "");
    cc_assert_close(g.output, c.output, tol, tol, what);
    cc_assert_close(g.logsumexp, c.logsumexp, tol, tol, what);
    int64_t os[4] = { B, H, L, Ev };
    tg_tensor *go = cc_rand(os, 4, dt, 36, -1, 1);
    tg_grad_query_grad_key_grad_value rc = tg__scaled_dot_product_fused_attention_backward(
        go, q, k, v, c.output, c.logsumexp, 0.0, causal, .attn_mask = m);
    tg_grad_query_grad_key_grad_value rg = tg__scaled_dot_product_fused_attention_backward(
        transposed(cc_cuda(go)), gq, gk, gv, g.output, g.logsumexp, 0.0, causal, .attn_mask = gm);
    cc_assert_close(rg.grad_query, rc.grad_query, tol, tol, what);
    cc_assert_close(rg.grad_key, rc.grad_key, tol, tol, what);
    cc_assert_close(rg.grad_value, rc.grad_value, tol, tol, what);
    tg_scope_end();
}

Test(cuda_attention, fused_forward_backward)
{
    CC_REQUIRE_DEVICE("cuda_attention::fused_forward_backward");
    kt_live base = kt_live_now();
    for (int t = 0; t < 2; t++)
        for (int kind = 0; kind < 4; kind++) {
            fused_case(DTYPES[t], TOL[t], kind, 37, 37, kind == 1);
            fused_case(DTYPES[t], TOL[t], kind, 21, 50, kind != 1);
        }
    fused_case(TG_FLOAT32, 1e-5, 1, 50, 19, false);
    kt_assert_no_leak(base);
}

/* The composite on CUDA tensors takes the fused path; gradients through autograd. */
Test(cuda_attention, sdpa_autograd)
{
    CC_REQUIRE_DEVICE("cuda_attention::sdpa_autograd");
    kt_live base = kt_live_now();
    tg_scope_begin();
    int64_t s[4] = { 1, 2, 33, 8 };
    tg_tensor *x[3], *gx[3];
    for (int i = 0; i < 3; i++) {
        x[i] = cc_rand(s, 4, TG_FLOAT64, 50 + (uint64_t)i, -1, 1); /* leaves on both devices */
        gx[i] = tg_tensor_set_requires_grad(cc_cuda(x[i]), true);
        tg_tensor_set_requires_grad(x[i], true);
    }
    tg_tensor *y = tg_scaled_dot_product_attention(x[0], x[1], x[2], .is_causal = true);
    tg_tensor *gy = tg_scaled_dot_product_attention(gx[0], gx[1], gx[2], .is_causal = true);
    cc_assert_close(gy, y, 1e-12, 1e-12, "sdpa");
    cr_assert_eq(tg_backward(tg_sum(y)), 0, "%s", tg_last_error());
    cr_assert_eq(tg_backward(tg_sum(gy)), 0, "%s", tg_last_error());
    for (int i = 0; i < 3; i++)
        cc_assert_close(tg_tensor_grad(gx[i]), tg_tensor_grad(x[i]), 1e-12, 1e-12, "sdpa grad");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
