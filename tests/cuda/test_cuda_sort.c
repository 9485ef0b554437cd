/* CUDA sort, topk and sort_backward (kernels/cuda/sort.cu) against the CPU kernels
 * (kernels/cpu/sort.c) on the same inputs: rows short enough for the shared-memory bitonic
 * kernel and longer ones for the one-thread-per-row fallback (sort, topk's heap selection and
 * its full sort), ties (both backends order them stably, so indices agree exactly), NaN, the
 * middle dim, a transposed input, float32, float64 and int64; and the errors.
 *
 * Also multinomial on CUDA (its samples are not the CPU's: another stream of the same
 * generator; checked statistically, chi-square at the 0.1% level with a fixed seed, for
 * distinctness without replacement and for reproducibility from a seed), _foreach_norm and
 * tg_clip_grad_norm_ against the CPU.
 *
 * Bounds: sort/topk exact (both backends move values without arithmetic, with the same keys);
 * norms sum in double in another order: float64 1e-12, float32 1e-6 relative. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("sort.values_stable", "topk.values", "sort_backward", "multinomial.out",
               "_foreach_norm.Scalar");

#ifndef TG_WITH_CUDA
Test(cuda_sort, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

static void same2(tg_values_indices g, tg_values_indices c, const char *what)
{
    cr_assert(g.values && g.indices, "%s (CUDA): %s", what, tg_last_error());
    cc_assert_equal(g.values, c.values, what);
    cc_assert_equal(g.indices, c.indices, what);
}

/* Values with ties: integers in [-32, 32), as floating types divided by 4 (exact in every
 * dtype). Call inside a scope: it owns the intermediates. */
static tg_tensor *quarters(const int64_t *shape, int64_t ndim, tg_dtype dt, uint64_t seed)
{
    tg_tensor *r = cc_rand(shape, ndim, TG_INT64, seed, -32, 32);
    if (dt == TG_INT64) return r;
    tg_tensor *q = tg_to(r, TG_FLOAT64);
    tg_tensor *s = tg_div_scalar(q, 4);
    return tg_to(s, dt);
}

Test(cuda_sort, sort_short_and_long_rows)
{
    CC_REQUIRE_DEVICE("cuda_sort::sort_short_and_long_rows");
    kt_live base = kt_live_now();
    static const tg_dtype dts[3] = { TG_FLOAT32, TG_FLOAT64, TG_INT64 };
    static const int64_t shapes[3][3] = { { 6, 37, 1 }, { 3, 1500, 1 }, { 2, 5, 7 } };
    for (int t = 0; t < 3; t++) {
        for (int s = 0; s < 3; s++) {
            tg_scope_begin();
            int64_t ndim = s == 2 ? 3 : 2;
            tg_tensor *x = quarters(shapes[s], ndim, dts[t], 10 + s), *xg = cc_cuda(x);
            for (int64_t dim = -1; dim < ndim; dim++) {
                for (int desc = 0; desc < 2; desc++) {
                    char what[96];
                    snprintf(what, sizeof what, "sort %s shape %d dim %lld%s",
                             tg_dtype_name(dts[t]), s, (long long)dim, desc ? " desc" : "");
                    same2(tg_sort_stable(xg, TG_OPT_BOOL(true), .dim = dim, .descending = desc),
                          tg_sort_stable(x, TG_OPT_BOOL(true), .dim = dim, .descending = desc),
                          what);
                }
            }
            /* transposed input */
            tg_tensor *xt = tg_transpose(x, 0, 1), *xtg = tg_transpose(xg, 0, 1);
            same2(tg_sort(xtg, .dim = 0), tg_sort(xt, .dim = 0), "sort transposed");
            tg_scope_end();
        }
    }
    /* NaN and infinities */
    tg_scope_begin();
    const double v[] = { 1, NAN, -INFINITY, 0.5, NAN, INFINITY, -0.0, 0.0, 2 };
    tg_tensor *x = kt_tensor(v, (int64_t[]){ 9 }, 1, TG_FLOAT32), *xg = cc_cuda(x);
    same2(tg_sort(xg), tg_sort(x), "sort nan");
    same2(tg_sort(xg, .descending = true), tg_sort(x, .descending = true), "sort nan desc");
    same2(tg_topk(xg, 3), tg_topk(x, 3), "topk nan");
    tg_scope_end();
    kt_assert_no_leak(base);
}

Test(cuda_sort, topk_paths_and_backward)
{
    CC_REQUIRE_DEVICE("cuda_sort::topk_paths_and_backward");
    kt_live base = kt_live_now();
    static const tg_dtype dts[2] = { TG_FLOAT32, TG_FLOAT64 };
    /* (4, 100): bitonic; (2, 3000): k 7 heap selection, k 500 full sort */
    static const int64_t shapes[2][2] = { { 4, 100 }, { 2, 3000 } };
    static const int64_t ks[2][2] = { { 5, 60 }, { 7, 500 } };
    for (int t = 0; t < 2; t++) {
        for (int s = 0; s < 2; s++) {
            for (int j = 0; j < 2; j++) {
                tg_scope_begin();
                tg_tensor *x = cc_rand(shapes[s], 2, dts[t], 20 + s, -3, 3), *xg = cc_cuda(x);
                for (int largest = 0; largest < 2; largest++) {
                    char what[96];
                    snprintf(what, sizeof what, "topk %s shape %d k %lld%s", tg_dtype_name(dts[t]),
                             s, (long long)ks[s][j], largest ? "" : " smallest");
                    tg_values_indices c = tg_topk(x, ks[s][j], .largest = largest);
                    tg_values_indices g = tg_topk(xg, ks[s][j], .largest = largest);
                    same2(g, c, what);
                    /* the gradient: grad scattered back to the indices */
                    tg_tensor *gr = cc_rand(tg_tensor_sizes(c.values), 2, dts[t], 30, -1, 1);
                    tg_tensor *grg = cc_cuda(gr);
                    cc_assert_equal(
                        tg_sort_backward(grg, -1, g.indices, TG_INTS(shapes[s][0], shapes[s][1])),
                        tg_sort_backward(gr, -1, c.indices, TG_INTS(shapes[s][0], shapes[s][1])),
                        what);
                }
                /* along dim 0 */
                same2(tg_topk(xg, 2, .dim = 0), tg_topk(x, 2, .dim = 0), "topk dim 0");
                tg_scope_end();
            }
        }
    }
    kt_assert_no_leak(base);
}

Test(cuda_sort, errors)
{
    CC_REQUIRE_DEVICE("cuda_sort::errors");
    kt_live base = kt_live_now();
    tg_scope_begin();
    tg_tensor *x = cc_cuda(tg_zeros(TG_INTS(2, 3)));
    tg_values_indices r = tg_topk(x, 4);
    cr_expect_null(r.values);
    kt_assert_error("topk: selected index k out of range");
    tg_tensor *g = cc_cuda(tg_ones(TG_INTS(2, 1)));
    tg_tensor *bad = cc_cuda(tg_full(TG_INTS(2, 1), 3, .dtype = TG_INT64));
    cr_expect_null(tg_sort_backward(g, 1, bad, TG_INTS(2, 3)));
    kt_assert_error("index 3 is out of bounds for dimension 1 with size 3");
    tg_scope_end();
    kt_assert_no_leak(base);
}

Test(cuda_sort, multinomial_statistics_and_seed)
{
    CC_REQUIRE_DEVICE("cuda_sort::multinomial_statistics_and_seed");
    kt_live base = kt_live_now();
    tg_scope_begin();
    /* chi-square critical values at p = 0.001 for 3 degrees of freedom */
    const double crit3 = 16.266;
    const double w[6] = { 1, 0, 2, 3, 0, 4 };
    tg_tensor *p = cc_cuda(kt_tensor(w, (int64_t[]){ 6 }, 1, TG_FLOAT32));
    tg_generator *g = tg_generator_new(5);
    enum { M = 20000 };
    tg_tensor *s = tg_multinomial(p, M, .replacement = true, .generator = g);
    cr_assert(s, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_device(s).type, TG_CUDA);
    double *v = kt_values(s), counts[6] = { 0 };
    for (int i = 0; i < M; i++) counts[(int)v[i]]++;
    free(v);
    double x = 0;
    for (int j = 0; j < 6; j++) {
        if (w[j] == 0) {
            cr_expect_eq(counts[j], 0, "zero-weight category %d drawn", j);
            continue;
        }
        double e = M * w[j] / 10;
        x += (counts[j] - e) * (counts[j] - e) / e;
    }
    cr_expect_lt(x, crit3, "chi-square %g", x);
    /* the same seed, the same samples (with and without replacement) */
    for (int repl = 0; repl < 2; repl++) {
        tg_generator_manual_seed(g, 11);
        tg_tensor *a = tg_multinomial(p, 4, .replacement = repl, .generator = g);
        tg_generator_manual_seed(g, 11);
        tg_tensor *b = tg_multinomial(p, 4, .replacement = repl, .generator = g);
        cc_assert_equal(a, b, "same seed");
    }
    /* without replacement: 2-D, each row a permutation of its positive categories */
    double rows[3 * 8];
    kt_fill_random(rows, 24, 3, 0.1, 1);
    tg_tensor *p2 = cc_cuda(kt_tensor(rows, (int64_t[]){ 3, 8 }, 2, TG_FLOAT64));
    tg_tensor *perm = tg_multinomial(p2, 8, .generator = g);
    cr_assert(perm, "%s", tg_last_error());
    v = kt_values(perm);
    for (int r = 0; r < 3; r++) {
        bool seen[8] = { false };
        for (int t = 0; t < 8; t++) {
            int c = (int)v[r * 8 + t];
            cr_assert(c >= 0 && c < 8 && !seen[c], "row %d: %d repeated or bad", r, c);
            seen[c] = true;
        }
    }
    free(v);
    /* the value checks */
    const double bad[3] = { 1, -1, 1 };
    tg_tensor *pb = cc_cuda(kt_tensor(bad, (int64_t[]){ 3 }, 1, TG_FLOAT32));
    cr_expect_null(tg_multinomial(pb, 1));
    kt_assert_error("probability tensor contains either `inf`, `nan` or element < 0");
    tg_tensor *pz = cc_cuda(tg_zeros(TG_INTS(2, 3)));
    cr_expect_null(tg_multinomial(pz, 1, .replacement = true));
    kt_assert_error("invalid multinomial distribution (sum of probabilities <= 0)");
    tg_generator_free(g);
    tg_scope_end();
    kt_assert_no_leak(base);
}

Test(cuda_sort, foreach_norm_and_clip_grad_norm)
{
    CC_REQUIRE_DEVICE("cuda_sort::foreach_norm_and_clip_grad_norm");
    kt_live base = kt_live_now();
    static const tg_dtype dts[2] = { TG_FLOAT32, TG_FLOAT64 };
    static const double ords[6] = { 2, 1, INFINITY, -INFINITY, 0, 3 };
    static const int64_t s0[2] = { 30, 17 }, s1[1] = { 70000 }, s2[3] = { 2, 3, 4 };
    for (int t = 0; t < 2; t++) {
        double tol = dts[t] == TG_FLOAT32 ? 1e-6 : 1e-12;
        tg_scope_begin();
        tg_tensor *c[3] = { cc_rand(s0, 2, dts[t], 1, -2, 2), cc_rand(s1, 1, dts[t], 2, -1, 1),
                            cc_rand(s2, 3, dts[t], 3, -3, 3) };
        tg_tensor *g[3] = { cc_cuda(c[0]), cc_cuda(c[1]), tg_transpose(cc_cuda(c[2]), 0, 2) };
        c[2] = tg_transpose(c[2], 0, 2);
        tg_tensor_list cl = { c, 3 }, gl = { g, 3 };
        for (int o = 0; o < 6; o++) {
            tg_tensor_list rc = tg__foreach_norm(cl, .ord = ords[o]);
            tg_tensor_list rg = tg__foreach_norm(gl, .ord = ords[o]);
            cr_assert(rg.data, "%s", tg_last_error());
            for (int i = 0; i < 3; i++) {
                char what[64];
                snprintf(what, sizeof what, "_foreach_norm %s ord %g tensor %d",
                         tg_dtype_name(dts[t]), ords[o], i);
                cc_assert_close(rg.data[i], rc.data[i], tol, 0, what);
            }
        }
        /* clipping: parameters whose grads are c (CPU) and g (CUDA) */
        for (int k = 0; k < 2; k++) {
            tg_tensor *pc[3], *pg[3];
            for (int i = 0; i < 3; i++) {
                pc[i] = tg_tensor_set_requires_grad(tg_zeros_like(c[i]), true);
                pg[i] = tg_tensor_set_requires_grad(tg_zeros_like(g[i]), true);
                tg_tensor_set_grad(pc[i], tg_clone(c[i]));
                tg_tensor_set_grad(pg[i], tg_clone(g[i]));
            }
            double nt = k == 0 ? 2 : INFINITY;
            double tc = tg_clip_grad_norm_(pc, 3, 0.5, nt),
                   tgn = tg_clip_grad_norm_(pg, 3, 0.5, nt);
            cr_assert(tgn >= 0, "%s", tg_last_error());
            cr_expect(fabs(tgn - tc) <= tol * tc, "total %.17g on CUDA, %.17g on CPU", tgn, tc);
            for (int i = 0; i < 3; i++)
                cc_assert_close(tg_tensor_grad(pg[i]), tg_tensor_grad(pc[i]), tol, 1e-15,
                                "clipped grad");
        }
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

#endif
