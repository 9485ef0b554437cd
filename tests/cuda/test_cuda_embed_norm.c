/* CUDA embedding and layer-norm kernels (kernels/cuda/embedding.cu, kernels/cuda/layer_norm.cu)
 * against the CPU kernels (kernels/cpu/embedding.c, kernels/cpu/layer_norm.c) on the same
 * random inputs: native_layer_norm (one and two normalized dims, affine, weight only, plain, a
 * transposed input, many rows for several column-sum chunks) and its backward (every
 * output_mask), embedding (int64 and int32 indices, every element size) and
 * embedding_dense_backward (padding_idx, scale_grad_by_freq), the composites one_hot and
 * rms_norm on the device, and the out-of-range index error on the device; float32 and float64.
 *
 * Bounds: layer norm sums in different orders (float32 accumulation on both sides in float32):
 * 1e-5 relative + 1e-5 absolute in float32, 1e-10 in float64. The embedding forward is a copy
 * (exact); its backward adds with atomics in another order: 1e-5 / 1e-12. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("native_layer_norm", "native_layer_norm_backward", "embedding",
               "embedding_dense_backward");

#ifndef TG_WITH_CUDA
Test(cuda_embed_norm, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
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

/* n int64 indices in [0, hi) from a fixed LCG. */
static tg_tensor *rand_indices(const int64_t *shape, int64_t ndim, int64_t hi, uint64_t seed)
{
    int64_t n = 1;
    for (int64_t i = 0; i < ndim; i++) n *= shape[i];
    double *v = malloc(sizeof(double) * (size_t)n);
    kt_fill_random(v, n, seed, 0, (double)hi);
    tg_tensor *t = kt_tensor(v, shape, ndim, TG_INT64);
    free(v);
    return t;
}

Test(cuda_embed_norm, layer_norm)
{
    CC_REQUIRE_DEVICE("cuda_embed_norm::layer_norm");
    kt_live base = kt_live_now();
    static const int64_t shape[] = { 5, 6, 40 }, big[] = { 300, 33 };
    static const int64_t ns1[] = { 40 }, ns2[] = { 6, 40 }, nsb[] = { 33 };
    for (int t = 0; t < 2; t++) {
        tg_dtype dt = dts[t];
        double tol = dt == TG_FLOAT32 ? 1e-5 : 1e-10;
        tg_scope_begin();
        tg_tensor *x = cc_rand(shape, 3, dt, 1, -2, 3), *xg = cc_cuda(x);
        tg_tensor *go = cc_rand(shape, 3, dt, 2, -1, 1), *gog = cc_cuda(go);
        tg_tensor *w1 = cc_rand(ns1, 1, dt, 3, -1, 1), *w1g = cc_cuda(w1);
        tg_tensor *b1 = cc_rand(ns1, 1, dt, 4, -1, 1), *b1g = cc_cuda(b1);
        tg_tensor *w2 = cc_rand(ns2, 2, dt, 5, -1, 1), *w2g = cc_cuda(w2);
        tg_tensor *b2 = cc_rand(ns2, 2, dt, 6, -1, 1), *b2g = cc_cuda(b2);
        struct {
            tg_int_list ns;
            tg_tensor *w, *wg, *b, *bg;
        } cs[4] = {
            { { ns1, 1 }, w1, w1g, b1, b1g },
            { { ns2, 2 }, w2, w2g, b2, b2g },
            { { ns1, 1 }, w1, w1g, NULL, NULL },
            { { ns1, 1 }, NULL, NULL, NULL, NULL },
        };
        for (int c = 0; c < 4; c++) {
            char what[64];
            snprintf(what, sizeof what, "layer_norm %s case %d", tg_dtype_name(dt), c);
            tg_tensors3 rc = tg_native_layer_norm(x, cs[c].ns, cs[c].w, cs[c].b, 1e-5);
            tg_tensors3 rg = tg_native_layer_norm(xg, cs[c].ns, cs[c].wg, cs[c].bg, 1e-5);
            close3(rg, rc, tol, what);
            static const bool masks[3][3] = { { true, true, true },
                                              { false, true, true },
                                              { true, false, false } };
            for (int m = 0; m < 3; m++) {
                tg_bool_list mask = { masks[m], 3 };
                tg_tensors3 bc = tg_native_layer_norm_backward(go, x, cs[c].ns, rc.r1, rc.r2,
                                                               cs[c].w, cs[c].b, mask);
                tg_tensors3 bg = tg_native_layer_norm_backward(gog, xg, cs[c].ns, rg.r1, rg.r2,
                                                               cs[c].wg, cs[c].bg, mask);
                what[0] = 'B';
                close3(bg, bc, tol * 10, what);
            }
        }
        /* a transposed input */
        tg_tensor *xt = tg_transpose(x, 0, 1), *xtg = tg_transpose(xg, 0, 1);
        close3(tg_native_layer_norm(xtg, cs[0].ns, w1g, b1g, 1e-5),
               tg_native_layer_norm(xt, cs[0].ns, w1, b1, 1e-5), tol, "layer_norm transposed");
        /* 300 rows: several chunks of the weight/bias column sums */
        tg_tensor *xb = cc_rand(big, 2, dt, 7, -1, 1), *xbg = cc_cuda(xb);
        tg_tensor *gb = cc_rand(big, 2, dt, 8, -1, 1), *gbg = cc_cuda(gb);
        tg_tensor *wb = cc_rand(nsb, 1, dt, 9, -1, 1), *wbg = cc_cuda(wb);
        tg_int_list lb = { nsb, 1 };
        tg_tensors3 rc = tg_native_layer_norm(xb, lb, wb, wb, 1e-5);
        tg_tensors3 rg = tg_native_layer_norm(xbg, lb, wbg, wbg, 1e-5);
        close3(rg, rc, tol, "layer_norm 300 rows");
        close3(tg_native_layer_norm_backward(gbg, xbg, lb, rg.r1, rg.r2, wbg, wbg,
                                             TG_BOOLS(true, true, true)),
               tg_native_layer_norm_backward(gb, xb, lb, rc.r1, rc.r2, wb, wb,
                                             TG_BOOLS(true, true, true)),
               tol * 10, "layer_norm backward 300 rows");
        /* rms_norm (a composite) on the device */
        tg_tensor *yc = tg_rms_norm(x, cs[0].ns, .weight = w1);
        tg_tensor *yg = tg_rms_norm(xg, cs[0].ns, .weight = w1g);
        cc_assert_close(yg, yc, tol, tol, "rms_norm");
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

Test(cuda_embed_norm, embedding)
{
    CC_REQUIRE_DEVICE("cuda_embed_norm::embedding");
    kt_live base = kt_live_now();
    static const int64_t wshape[] = { 37, 19 }, ishape[] = { 4, 9 }, gshape[] = { 4, 9, 19 };
    static const tg_dtype wdts[4] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_INT8 };
    tg_scope_begin();
    tg_tensor *idx = rand_indices(ishape, 2, 37, 21), *idxg = cc_cuda(idx);
    tg_tensor *idx32 = tg_to(idx, TG_INT32), *idx32g = cc_cuda(idx32);
    for (int t = 0; t < 4; t++) {
        tg_tensor *w = cc_rand(wshape, 2, TG_FLOAT64, 22, -3, 3);
        tg_tensor *wt = tg_to(w, wdts[t]), *wg = cc_cuda(wt);
        cc_assert_equal(tg_embedding(wg, idxg), tg_embedding(wt, idx), "embedding");
        cc_assert_equal(tg_embedding(wg, idx32g), tg_embedding(wt, idx32), "embedding int32");
    }
    for (int t = 0; t < 2; t++) {
        tg_dtype dt = dts[t];
        double tol = dt == TG_FLOAT32 ? 1e-5 : 1e-12;
        tg_tensor *g = cc_rand(gshape, 3, dt, 23, -1, 1), *gg = cc_cuda(g);
        for (int pad = -1; pad < 5; pad += 4)
            for (int freq = 0; freq < 2; freq++) {
                cc_assert_close(tg_embedding_dense_backward(gg, idxg, 37, pad, freq != 0),
                                tg_embedding_dense_backward(g, idx, 37, pad, freq != 0), tol, tol,
                                "embedding_dense_backward");
                cc_assert_close(tg_embedding_dense_backward(gg, idx32g, 37, pad, freq != 0),
                                tg_embedding_dense_backward(g, idx32, 37, pad, freq != 0), tol, tol,
                                "embedding_dense_backward int32");
            }
    }
    /* out-of-range indices: the CPU's error, no result */
    tg_tensor *w = cc_rand(wshape, 2, TG_FLOAT32, 24, -1, 1), *wg = cc_cuda(w);
    tg_tensor *bad = rand_indices(ishape, 2, 38, 25), *badg = cc_cuda(bad);
    tg_tensor *bad32 = tg_to(bad, TG_INT32), *bad32g = cc_cuda(bad32);
    tg_tensor *g = cc_rand(gshape, 3, TG_FLOAT32, 26, -1, 1), *gg = cc_cuda(g);
    cr_assert_null(tg_embedding(wg, badg));
    kt_assert_error("index out of range in self");
    cr_assert_null(tg_embedding(wg, bad32g));
    kt_assert_error("index out of range in self");
    cr_assert_null(tg_embedding_dense_backward(gg, badg, 37, -1, true));
    kt_assert_error("index out of range in self");
    /* one_hot (a composite) on the device */
    cc_assert_equal(tg_one_hot(idxg), tg_one_hot(idx), "one_hot");
    cc_assert_equal(tg_one_hot(idxg, .num_classes = 40), tg_one_hot(idx, .num_classes = 40),
                    "one_hot 40");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
