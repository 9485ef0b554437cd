/* Embedding and layer-norm operators against PyTorch 1.13 (tests/fixtures/embed_norm_fixtures.h,
 * from tests/fixtures/gen_embed_norm.py): native_layer_norm (one and two normalized dims,
 * affine, weight only, plain) and its backward (every output_mask), layer_norm through
 * autograd, embedding (int64 and int32 indices) and embedding_dense_backward (padding_idx,
 * scale_grad_by_freq), embedding through autograd, one_hot, and rms_norm (PyTorch 2.x's
 * formula, values computed by the generator in float64 with torch 1.13); float64 and float32;
 * and PyTorch's messages for bad input. */
#include "kt_case.h"
#include "../fixtures/embed_norm_fixtures.h"
#include "tg_cover.h"

TG_COVERS("layer_norm", "native_layer_norm", "native_layer_norm_backward", "rms_norm", "embedding",
          "embedding_backward", "embedding_dense_backward", "embedding_dense_double_backward",
          "one_hot");

static const tg_dtype DTS[2] = { TG_FLOAT64, TG_FLOAT32 };

#define T(v, dt, ...)                          \
    kt_tensor((v), (int64_t[]){ __VA_ARGS__ }, \
              sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), (dt))

static void close_t(const tg_tensor *t, const double *want, int64_t n, tg_dtype dt,
                    const char *what)
{
    cr_assert(t, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(t), dt, "%s: dtype", what);
    double rtol, atol;
    kt_tol_of(&kt_tol_norm, dt, &rtol, &atol);
    kt_assert_close(t, want, n, rtol, atol, what);
}

/* t.grad (a new reference, released here) against want */
static void close_grad(const tg_tensor *t, const double *want, int64_t n, tg_dtype dt,
                       const char *what)
{
    tg_tensor *g = tg_tensor_grad(t);
    close_t(g, want, n, dt, what);
    tg_release(g);
}

/* ---------------------------------------------------------------- layer norm */

Test(embed_norm, native_layer_norm_forward_backward)
{
    static const int64_t ns1[] = { 5 }, ns2[] = { 4, 5 };
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_ln_x, dt, 3, 4, 5), *g = T(fx_ln_g, dt, 3, 4, 5);
        tg_tensor *w5 = T(fx_ln_w5, dt, 5), *b5 = T(fx_ln_b5, dt, 5);
        tg_tensor *w45 = T(fx_ln_w45, dt, 4, 5), *b45 = T(fx_ln_b45, dt, 4, 5);
        struct {
            tg_int_list ns;
            tg_tensor *w, *b;
            const double *y, *mean, *rstd, *gx, *gw, *gb;
            int64_t nstat;
        } cs[3] = {
            { { .len = 1, .data = ns1 },
              w5,
              b5,
              fx_ln_last_y,
              fx_ln_last_mean,
              fx_ln_last_rstd,
              fx_ln_last_gx,
              fx_ln_last_gw,
              fx_ln_last_gb,
              12 },
            { { .len = 2, .data = ns2 },
              w45,
              b45,
              fx_ln_two_y,
              fx_ln_two_mean,
              fx_ln_two_rstd,
              fx_ln_two_gx,
              fx_ln_two_gw,
              fx_ln_two_gb,
              3 },
            { { .len = 1, .data = ns1 },
              NULL,
              NULL,
              fx_ln_plain_y,
              fx_ln_plain_mean,
              fx_ln_plain_rstd,
              fx_ln_plain_gx,
              NULL,
              NULL,
              12 },
        };
        for (int c = 0; c < 3; c++) {
            tg_tensors3 r = tg_native_layer_norm(x, cs[c].ns, cs[c].w, cs[c].b, 1e-5);
            close_t(r.r0, cs[c].y, 60, dt, "y");
            close_t(r.r1, cs[c].mean, cs[c].nstat, dt, "mean");
            close_t(r.r2, cs[c].rstd, cs[c].nstat, dt, "rstd");
            /* mean/rstd: input.shape[:axis] + [1] * len(normalized_shape) */
            cr_assert_eq(tg_tensor_dim(r.r1), 3);
            cr_assert_eq(tg_tensor_size(r.r1, 2), 1);
            cr_assert_eq(tg_tensor_size(r.r1, 1), c == 1 ? 1 : 4);
            bool full = cs[c].w != NULL;
            tg_tensors3 gr = tg_native_layer_norm_backward(g, x, cs[c].ns, r.r1, r.r2, cs[c].w,
                                                           cs[c].b, TG_BOOLS(true, full, full));
            close_t(gr.r0, cs[c].gx, 60, dt, "grad_input");
            if (full) {
                close_t(gr.r1, cs[c].gw, 60 / 3 / (c == 1 ? 1 : 4), dt, "grad_weight");
                close_t(gr.r2, cs[c].gb, 60 / 3 / (c == 1 ? 1 : 4), dt, "grad_bias");
            }
            kt_release_tensors3(gr);
            if (full) {
                /* weight and bias only; then bias only */
                gr = tg_native_layer_norm_backward(g, x, cs[c].ns, r.r1, r.r2, cs[c].w, cs[c].b,
                                                   TG_BOOLS(false, true, true));
                cr_expect_null(gr.r0);
                close_t(gr.r1, cs[c].gw, 60 / 3 / (c == 1 ? 1 : 4), dt, "grad_weight only");
                close_t(gr.r2, cs[c].gb, 60 / 3 / (c == 1 ? 1 : 4), dt, "grad_bias only");
                kt_release_tensors3(gr);
                gr = tg_native_layer_norm_backward(g, x, cs[c].ns, r.r1, r.r2, cs[c].w, cs[c].b,
                                                   TG_BOOLS(false, false, true));
                cr_expect_null(gr.r0);
                cr_expect_null(gr.r1);
                close_t(gr.r2, cs[c].gb, 60 / 3 / (c == 1 ? 1 : 4), dt, "grad_bias alone");
                kt_release_tensors3(gr);
            }
            kt_release_tensors3(r);
        }
        tg_tensor *ts[] = { x, g, w5, b5, w45, b45 };
        for (int i = 0; i < 6; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

Test(embed_norm, layer_norm_through_autograd)
{
    static const int64_t ns1[] = { 5 };
    tg_int_list ns = { .len = 1, .data = ns1 };
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_ln_x, dt, 3, 4, 5), *g = T(fx_ln_g, dt, 3, 4, 5);
        tg_tensor *w = T(fx_ln_w5, dt, 5), *b = T(fx_ln_b5, dt, 5);
        tg_tensor_set_requires_grad(x, true);
        tg_tensor_set_requires_grad(w, true);
        tg_tensor_set_requires_grad(b, true);
        tg_tensor *y = tg_layer_norm(x, ns, .weight = w, .bias = b);
        close_t(y, fx_ln_last_y, 60, dt, "y");
        cr_assert_eq(tg_backward(y, .grad = g), 0, "%s", tg_last_error());
        close_grad(x, fx_ln_last_gx, 60, dt, "x.grad");
        close_grad(w, fx_ln_last_gw, 5, dt, "w.grad");
        close_grad(b, fx_ln_last_gb, 5, dt, "b.grad");
        tg_release(y);
        /* weight only, eps 1e-3 */
        y = tg_layer_norm(x, ns, .weight = w, .eps = 1e-3);
        close_t(y, fx_ln_wonly_y, 60, dt, "weight only");
        tg_release(y);
        tg_tensor *ts[] = { x, g, w, b };
        for (int i = 0; i < 4; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

Test(embed_norm, layer_norm_non_contiguous_and_empty)
{
    kt_live base = kt_live_now();
    static const int64_t ns1[] = { 3 }, ns4[] = { 4 }, ns0[] = { 0 };
    /* a transposed input equals the same values made contiguous */
    tg_tensor *x = T(fx_ln_x, TG_FLOAT64, 4, 3);
    tg_tensor *xt = tg_transpose(x, 0, 1), *xc = tg_contiguous(xt);
    tg_tensors3 a =
        tg_native_layer_norm(xt, (tg_int_list){ .len = 1, .data = ns4 }, NULL, NULL, 1e-5);
    tg_tensors3 b =
        tg_native_layer_norm(xc, (tg_int_list){ .len = 1, .data = ns4 }, NULL, NULL, 1e-5);
    cr_assert(a.r0 && b.r0, "%s", tg_last_error());
    double *bv = kt_values(b.r0);
    kt_assert_close(a.r0, bv, 12, 0, 1e-15, "transposed");
    free(bv);
    kt_release_tensors3(a);
    kt_release_tensors3(b);
    /* no rows: empty outputs; empty rows: mean 0, rstd nan (PyTorch's) */
    tg_tensor *e = T(NULL, TG_FLOAT32, 0, 3);
    a = tg_native_layer_norm(e, (tg_int_list){ .len = 1, .data = ns1 }, NULL, NULL, 1e-5);
    cr_assert(a.r0, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_numel(a.r0), 0);
    cr_assert_eq(tg_tensor_numel(a.r1), 0);
    kt_release_tensors3(a);
    tg_tensor *e2 = T(NULL, TG_FLOAT32, 2, 0);
    a = tg_native_layer_norm(e2, (tg_int_list){ .len = 1, .data = ns0 }, NULL, NULL, 1e-5);
    cr_assert(a.r0, "%s", tg_last_error());
    static const double want_m[2] = { 0, 0 }, want_r[2] = { NAN, NAN };
    kt_assert_close(a.r1, want_m, 2, 0, 0, "empty rows mean");
    kt_assert_close(a.r2, want_r, 2, 0, 0, "empty rows rstd");
    kt_release_tensors3(a);
    tg_tensor *ts[] = { x, xt, xc, e, e2 };
    for (int i = 0; i < 5; i++) tg_release(ts[i]);
    kt_assert_no_leak(base);
}

Test(embed_norm, layer_norm_errors)
{
    kt_live base = kt_live_now();
    static const int64_t ns3[] = { 3 }, ns244[] = { 2, 4, 4 }, ns4[] = { 4 };
    tg_tensor *x = T(fx_ln_x, TG_FLOAT32, 2, 4);
    tg_tensor *w3 = T(fx_ln_w5, TG_FLOAT32, 3), *b22 = T(fx_ln_x, TG_FLOAT32, 2, 2);
    tg_tensor *w4d = T(fx_ln_w5, TG_FLOAT64, 4);
    tg_tensor *xi = T(fx_ln_x, TG_INT64, 2, 4);
    tg_tensors3 r =
        tg_native_layer_norm(x, (tg_int_list){ .len = 1, .data = ns3 }, NULL, NULL, 1e-5);
    kt_expect_error(r.r0,
                    "Given normalized_shape=[3], expected input with shape [*, 3], but got input "
                    "of size[2, 4]");
    r = tg_native_layer_norm(x, (tg_int_list){ .len = 3, .data = ns244 }, NULL, NULL, 1e-5);
    kt_assert_error("Given normalized_shape=[2, 4, 4], expected input with shape [*, 2, 4, 4], "
                    "but got input of size[2, 4]");
    r = tg_native_layer_norm(x, (tg_int_list){ .len = 1, .data = ns4 }, w3, NULL, 1e-5);
    kt_assert_error("Expected weight to be of same shape as normalized_shape, but got weight of "
                    "shape [3] and normalized_shape = [4]");
    r = tg_native_layer_norm(x, (tg_int_list){ .len = 1, .data = ns4 }, NULL, b22, 1e-5);
    kt_assert_error("Expected bias to be of same shape as normalized_shape, but got bias of shape "
                    "[2, 2] and normalized_shape = [4]");
    r = tg_native_layer_norm(x, (tg_int_list){ .len = 0, .data = ns4 }, NULL, NULL, 1e-5);
    kt_assert_error("Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                    "least one element, but got normalized_shape = []");
    r = tg_native_layer_norm(xi, (tg_int_list){ .len = 1, .data = ns4 }, NULL, NULL, 1e-5);
    kt_assert_error("\"LayerNormKernelImpl\" not implemented for 'Long'");
    r = tg_native_layer_norm(x, (tg_int_list){ .len = 1, .data = ns4 }, w4d, NULL, 1e-5);
    kt_assert_error("expected scalar type Float but found Double");
    tg_int_list l3 = { .len = 1, .data = ns3 };
    tg_tensor *y = tg_layer_norm(x, l3);
    kt_expect_error(y, "Given normalized_shape=[3]");
    y = tg_rms_norm(x, l3);
    kt_expect_error(y,
                    "Given normalized_shape=[3], expected input with shape [*, 3], but got input "
                    "of size[2, 4]");
    /* backward: grad_out of another shape, statistics of the wrong size */
    r = tg_native_layer_norm(x, (tg_int_list){ .len = 1, .data = ns4 }, NULL, NULL, 1e-5);
    cr_assert(r.r0, "%s", tg_last_error());
    tg_tensors3 gr =
        tg_native_layer_norm_backward(b22, x, (tg_int_list){ .len = 1, .data = ns4 }, r.r1, r.r2,
                                      NULL, NULL, TG_BOOLS(true, false, false));
    kt_expect_error(gr.r0, "Expected grad_out of shape [2, 2] to match input of shape [2, 4]");
    gr = tg_native_layer_norm_backward(x, x, (tg_int_list){ .len = 1, .data = ns4 }, w3, r.r2, NULL,
                                       NULL, TG_BOOLS(true, false, false));
    kt_expect_error(gr.r0, "Expected mean to have 2 elements, but got 3");
    kt_release_tensors3(r);
    tg_tensor *ts[] = { x, w3, b22, w4d, xi };
    for (int i = 0; i < 5; i++) tg_release(ts[i]);
    kt_assert_no_leak(base);
}

/* ---------------------------------------------------------------- rms norm */

Test(embed_norm, rms_norm_values_and_gradients)
{
    static const int64_t ns1[] = { 5 }, ns2[] = { 4, 5 };
    tg_int_list l1 = { .len = 1, .data = ns1 }, l2 = { .len = 2, .data = ns2 };
    tg_opt_float e1 = 0.1, e6 = 1e-6;
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *x = T(fx_rms_x, dt, 3, 4, 5), *g = T(fx_ln_g, dt, 3, 4, 5);
        tg_tensor *w = T(fx_ln_w5, dt, 5);
        tg_tensor_set_requires_grad(x, true);
        tg_tensor_set_requires_grad(w, true);
        /* eps None: the machine epsilon of the dtype */
        const double *wy = dt == TG_FLOAT64 ? fx_rms_e64_y : fx_rms_e32_y;
        const double *wgx = dt == TG_FLOAT64 ? fx_rms_e64_gx : fx_rms_e32_gx;
        const double *wgw = dt == TG_FLOAT64 ? fx_rms_e64_gw : fx_rms_e32_gw;
        tg_tensor *y = tg_rms_norm(x, l1, .weight = w);
        close_t(y, wy, 60, dt, "rms y");
        cr_assert_eq(tg_backward(y, .grad = g), 0, "%s", tg_last_error());
        close_grad(x, wgx, 60, dt, "rms x.grad");
        close_grad(w, wgw, 5, dt, "rms w.grad");
        tg_release(y);
        tg_tensor_set_grad(x, NULL);
        tg_tensor_set_grad(w, NULL);
        /* eps 0.1 */
        y = tg_rms_norm(x, l1, .weight = w, .eps = e1);
        close_t(y, fx_rms_e1_y, 60, dt, "rms y eps");
        cr_assert_eq(tg_backward(y, .grad = g), 0, "%s", tg_last_error());
        close_grad(x, fx_rms_e1_gx, 60, dt, "rms x.grad eps");
        close_grad(w, fx_rms_e1_gw, 5, dt, "rms w.grad eps");
        tg_release(y);
        /* two normalized dims, no weight */
        y = tg_rms_norm(x, l2, .eps = e6);
        close_t(y, fx_rms_two_y, 60, dt, "rms two dims");
        tg_release(y);
        tg_tensor *ts[] = { x, g, w };
        for (int i = 0; i < 3; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

/* ---------------------------------------------------------------- embedding */

Test(embed_norm, embedding_forward_int64_int32)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        tg_tensor *w = T(fx_emb_w, dt, 10, 4);
        static const int64_t ishape[2] = { 2, 3 };
        tg_tensor *idx = kt_tensor_i64(fx_emb_idx, ishape, 2);
        tg_tensor *idx32 = tg_to(idx, TG_INT32);
        tg_tensor *y = tg_embedding(w, idx);
        close_t(y, fx_emb_y, 24, dt, "embedding");
        static const int64_t yshape[3] = { 2, 3, 4 };
        kt_assert_shape(y, yshape, 3);
        tg_release(y);
        y = tg_embedding(w, idx32);
        close_t(y, fx_emb_y, 24, dt, "embedding int32");
        tg_release(y);
        /* non-contiguous indices: the transpose picks the same rows, transposed */
        tg_tensor *it = tg_transpose(idx, 0, 1), *yt = tg_embedding(w, it);
        tg_tensor *yb = tg_transpose(yt, 0, 1);
        close_t(yb, fx_emb_y, 24, dt, "embedding transposed indices");
        tg_tensor *ts[] = { w, idx, idx32, it, yt, yb };
        for (int i = 0; i < 6; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

Test(embed_norm, embedding_dense_backward_values)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        static const int64_t ishape[2] = { 2, 3 };
        tg_tensor *idx = kt_tensor_i64(fx_emb_idx, ishape, 2);
        tg_tensor *idx32 = tg_to(idx, TG_INT32);
        tg_tensor *g = T(fx_emb_g, dt, 2, 3, 4);
        const double *want[2][2] = { { fx_emb_gw_p0_f0, fx_emb_gw_p0_f1 },
                                     { fx_emb_gw_p3_f0, fx_emb_gw_p3_f1 } };
        for (int p = 0; p < 2; p++)
            for (int f = 0; f < 2; f++)
                for (int i32 = 0; i32 < 2; i32++) {
                    tg_tensor *gw =
                        tg_embedding_dense_backward(g, i32 ? idx32 : idx, 10, p ? 2 : -1, f != 0);
                    close_t(gw, want[p][f], 40, dt, "embedding_dense_backward");
                    tg_release(gw);
                }
        tg_tensor *gw = tg_embedding_backward(g, idx, 10, 2, true, false);
        close_t(gw, fx_emb_gw_p3_f1, 40, dt, "embedding_backward");
        tg_release(gw);
        tg_tensor *ts[] = { idx, idx32, g };
        for (int i = 0; i < 3; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

Test(embed_norm, embedding_through_autograd)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_dtype dt = DTS[k];
        static const int64_t ishape[2] = { 2, 3 };
        tg_tensor *idx = kt_tensor_i64(fx_emb_idx, ishape, 2);
        tg_tensor *w = T(fx_emb_w, dt, 10, 4), *g = T(fx_emb_g, dt, 2, 3, 4);
        tg_tensor_set_requires_grad(w, true);
        tg_tensor *y = tg_embedding(w, idx, .padding_idx = 1, .scale_grad_by_freq = true);
        cr_assert_eq(tg_backward(y, .grad = g), 0, "%s", tg_last_error());
        close_grad(w, fx_emb_autograd_gw, 40, dt, "w.grad");
        tg_tensor *ts[] = { idx, w, g, y };
        for (int i = 0; i < 4; i++) tg_release(ts[i]);
        kt_assert_no_leak(base);
    }
}

Test(embed_norm, embedding_errors)
{
    kt_live base = kt_live_now();
    tg_tensor *w = T(fx_emb_w, TG_FLOAT32, 10, 4), *w1 = T(fx_emb_w, TG_FLOAT32, 10);
    static const int64_t bad_hi[2] = { 1, 10 }, bad_lo[2] = { 1, -1 }, two[1] = { 2 };
    tg_tensor *ihi = kt_tensor_i64(bad_hi, two, 1), *ilo = kt_tensor_i64(bad_lo, two, 1);
    tg_tensor *ihi32 = tg_to(ihi, TG_INT32);
    tg_tensor *ifl = T(fx_emb_w, TG_FLOAT32, 2);
    tg_tensor *g = T(fx_emb_g, TG_FLOAT32, 2, 4);
    kt_expect_error(tg_embedding(w, ihi), "index out of range in self");
    kt_expect_error(tg_embedding(w, ilo), "index out of range in self");
    kt_expect_error(tg_embedding(w, ihi32), "index out of range in self");
    kt_expect_error(tg_embedding(w, ifl),
                    "Expected tensor for argument #1 'indices' to have one of the following scalar "
                    "types: Long, Int; but got torch.FloatTensor instead (while checking "
                    "arguments for embedding)");
    kt_expect_error(tg_embedding(w1, ihi), "'weight' must be 2-D");
    kt_expect_error(tg_embedding(w, ihi, .sparse = true), "sparse=True is not supported");
    kt_expect_error(tg_embedding_dense_backward(g, ifl, 10, -1, false),
                    "Expected tensor for argument #2 'indices' to have one of the following scalar "
                    "types: Long, Int; but got torch.FloatTensor instead (while checking "
                    "arguments for embedding_backward)");
    kt_expect_error(tg_embedding_dense_backward(g, ihi, 10, -1, false),
                    "index out of range in self");
    kt_expect_error(tg_embedding_backward(g, ilo, 10, -1, false, true),
                    "sparse=True is not supported");
    tg_tensor *ts[] = { w, w1, ihi, ilo, ihi32, ifl, g };
    for (int i = 0; i < 7; i++) tg_release(ts[i]);
    kt_assert_no_leak(base);
}

/* ---------------------------------------------------------------- one_hot */

Test(embed_norm, one_hot_values_and_errors)
{
    kt_live base = kt_live_now();
    static const int64_t shape[2] = { 3, 2 };
    tg_tensor *x = kt_tensor_i64(fx_oh_in, shape, 2);
    tg_tensor *y = tg_one_hot(x);
    cr_assert(y, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_dtype(y), TG_INT64);
    static const int64_t s4[3] = { 3, 2, 4 }, s6[3] = { 3, 2, 6 };
    kt_assert_shape(y, s4, 3);
    double want[36];
    for (int i = 0; i < 24; i++) want[i] = (double)fx_oh_infer[i];
    kt_assert_close(y, want, 24, 0, 0, "one_hot inferred");
    tg_release(y);
    y = tg_one_hot(x, .num_classes = 6);
    kt_assert_shape(y, s6, 3);
    for (int i = 0; i < 36; i++) want[i] = (double)fx_oh_six[i];
    kt_assert_close(y, want, 36, 0, 0, "one_hot 6");
    tg_release(y);
    /* empty input with a class count: shape [0, C] */
    tg_tensor *e = T(NULL, TG_INT64, 0);
    y = tg_one_hot(e, .num_classes = 3);
    cr_assert(y, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_size(y, 1), 3);
    tg_release(y);
    kt_expect_error(tg_one_hot(e), "Can not infer total number of classes from empty tensor.");
    kt_expect_error(tg_one_hot(x, .num_classes = 3),
                    "Class values must be smaller than num_classes.");
    static const int64_t neg[2] = { 1, -1 }, two[1] = { 2 };
    tg_tensor *xn = kt_tensor_i64(neg, two, 1);
    kt_expect_error(tg_one_hot(xn), "Class values must be non-negative.");
    tg_tensor *xf = T(fx_ln_x, TG_FLOAT32, 2);
    kt_expect_error(tg_one_hot(xf), "one_hot is only applicable to index tensor.");
    tg_tensor *ts[] = { x, e, xn, xf };
    for (int i = 0; i < 4; i++) tg_release(ts[i]);
    kt_assert_no_leak(base);
}
