/* CUDA nn kernels against the CPU kernels on the same random inputs: _softmax, _log_softmax
 * and their backward data ops, nll_loss forward/backward, native_dropout, sgd_step_,
 * adam_step_ and cat (kernels/cuda/softmax.cu, nn.cu, optim.cu, shape.cu).
 *
 * Bounds: softmax / log_softmax compute in float (float64: double) on both sides with
 * different exp implementations (CUDA expf, <= 2 ulp; the CPU's Cephes polynomial, a few ulp)
 * and sums in different orders: float32 1e-5 relative + 1e-7 absolute (log_softmax values are
 * O(10), so 1e-5 relative covers the log of the sum), float64 1e-12, float16 2e-3, bfloat16
 * 1e-2. nll_loss sums in double on both sides: float32 1e-6, float64 1e-12. Optimizer steps:
 * float32 1e-5 (same formulas in float; FMA contraction may differ by an ulp per operation,
 * over 3 steps), float64 1e-12. cat and dropout's mask arithmetic are exact. */
#include "cuda_cmp.h"

TG_CUDA_COVERS("_softmax.out", "_log_softmax.out", "_softmax_backward_data",
               "_log_softmax_backward_data", "nll_loss_forward", "nll_loss_backward",
               "native_dropout", "sgd_step_", "adam_step_", "cat.out");

#ifndef TG_WITH_CUDA
Test(cuda_nn, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

static const tg_dtype float_dtypes[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16 };

Test(cuda_nn, softmax_and_log_softmax)
{
    CC_REQUIRE_DEVICE("cuda_nn::softmax_and_log_softmax");
    kt_live base = kt_live_now();
    static const int64_t shapes[][3] = {
        { 37, 129, 1 }, { 8, 16, 33 }, { 4, 3000, 1 }, { 1000, 10, 1 }
    };
    static const int nd[] = { 2, 3, 2, 2 };
    for (size_t t = 0; t < 4; t++) {
        tg_dtype dt = float_dtypes[t];
        double tol = cc_round_tol(dt, 1e-5, 1e-12);
        for (int s = 0; s < 4; s++) {
            tg_scope_begin();
            tg_tensor *x = cc_rand(shapes[s], nd[s], dt, 20 + s, -8, 8), *g = cc_cuda(x);
            for (int64_t dim = -1; dim < nd[s]; dim++) {
                for (int view = 0; view < 2; view++) {
                    /* view 1: the transpose of the last two dims (non-contiguous rows) */
                    tg_tensor *xc = view ? tg_transpose(x, -1, -2) : x,
                              *xg = view ? tg_transpose(g, -1, -2) : g;
                    char what[96];
                    snprintf(what, sizeof what, "softmax %s shape %d dim %lld view %d",
                             tg_dtype_name(dt), s, (long long)dim, view);
                    tg_tensor *yc = tg__softmax(xc, dim, false), *yg = tg__softmax(xg, dim, false);
                    cc_assert_close(yg, yc, tol, tol * 1e-2, what);
                    tg_tensor *lc = tg__log_softmax(xc, dim, false),
                              *lg = tg__log_softmax(xg, dim, false);
                    what[0] = 'L';
                    cc_assert_close(lg, lc, tol, tol, what);
                    /* backward data ops with a random grad_output */
                    tg_tensor *go = cc_rand(tg_tensor_sizes(xc), tg_tensor_dim(xc), dt, 40 + s, -1,
                                            1),
                              *ggo = cc_cuda(go);
                    cc_assert_close(tg__softmax_backward_data(ggo, yg, dim, dt),
                                    tg__softmax_backward_data(go, yc, dim, dt), tol, tol,
                                    "softmax backward data");
                    cc_assert_close(tg__log_softmax_backward_data(ggo, lg, dim, dt),
                                    tg__log_softmax_backward_data(go, lc, dim, dt), tol, tol,
                                    "log_softmax backward data");
                }
            }
            tg_scope_end();
        }
    }
    kt_assert_no_leak(base);
}

/* NaN and -inf rows: NaN anywhere makes the row NaN; -inf entries get probability 0. */
Test(cuda_nn, softmax_special_values)
{
    CC_REQUIRE_DEVICE("cuda_nn::softmax_special_values");
    kt_live base = kt_live_now();
    tg_scope_begin();
    double v[12] = { 1, 2, NAN, 3, -INFINITY, 0, 1, -INFINITY, 5, 5, 5, 5 };
    tg_tensor *x = kt_tensor(v, (int64_t[]){ 3, 4 }, 2, TG_FLOAT32), *g = cc_cuda(x);
    cc_assert_close(tg__softmax(g, 1, false), tg__softmax(x, 1, false), 1e-6, 1e-7,
                    "softmax special");
    cc_assert_close(tg__log_softmax(g, 1, false), tg__log_softmax(x, 1, false), 1e-6, 1e-7,
                    "log_softmax special");
    tg_scope_end();
    kt_assert_no_leak(base);
}

Test(cuda_nn, nll_loss)
{
    CC_REQUIRE_DEVICE("cuda_nn::nll_loss");
    kt_live base = kt_live_now();
    for (int t = 0; t < 2; t++) {
        tg_dtype dt = t ? TG_FLOAT64 : TG_FLOAT32;
        double tol = t ? 1e-12 : 1e-6;
        tg_scope_begin();
        tg_tensor *x = cc_rand((int64_t[]){ 300, 11 }, 2, dt, 3, -5, 0), *gx = cc_cuda(x);
        tg_tensor *tgt = cc_rand((int64_t[]){ 300 }, 1, TG_INT64, 4, 0, 11), *gt = cc_cuda(tgt);
        tg_tensor *w = cc_rand((int64_t[]){ 11 }, 1, dt, 5, 0.5, 2), *gw = cc_cuda(w);
        for (int red = 0; red < 3; red++)
            for (int wi = 0; wi < 2; wi++) {
                int64_t ignore = wi ? 3 : -100;
                tg_output_total_weight c = tg_nll_loss_forward(x, tgt, wi ? w : NULL, red, ignore);
                tg_output_total_weight g = tg_nll_loss_forward(gx, gt, wi ? gw : NULL, red, ignore);
                char what[64];
                snprintf(what, sizeof what, "nll_loss_forward %s reduction %d weight %d",
                         tg_dtype_name(dt), red, wi);
                cc_assert_close(g.output, c.output, tol, tol, what);
                cc_assert_close(g.total_weight, c.total_weight, tol, tol, what);
                tg_tensor *go = red ? cc_rand(NULL, 0, dt, 6, 0.5, 1.5)
                                    : cc_rand((int64_t[]){ 300 }, 1, dt, 6, -1, 1);
                tg_tensor *gic =
                    tg_nll_loss_backward(go, x, tgt, wi ? w : NULL, red, ignore, c.total_weight);
                tg_tensor *gig = tg_nll_loss_backward(cc_cuda(go), gx, gt, wi ? gw : NULL, red,
                                                      ignore, g.total_weight);
                what[8] = 'B';
                cc_assert_close(gig, gic, tol, tol, what);
            }
        tg_scope_end();
    }
    tg_scope_begin();
    tg_tensor *x = cc_cuda(cc_rand((int64_t[]){ 4, 3 }, 2, TG_FLOAT32, 1, -1, 0));
    double tv[4] = { 0, 2, 7, 1 };
    tg_tensor *bad = cc_cuda(kt_tensor(tv, (int64_t[]){ 4 }, 1, TG_INT64));
    tg_output_total_weight r = tg_nll_loss_forward(x, bad, NULL, 1, -100);
    cr_assert_null(r.output);
    kt_assert_error("Target 7 is out of bounds.");
    tg_scope_end();
    kt_assert_no_leak(base);
}

/* The CUDA stream of draws differs from the CPU's, so dropout is checked by its definition:
 * output == input * mask / (1 - p) exactly (computed on the CPU from the CUDA mask), the kept
 * fraction within 5 sigma of 1 - p, and train = false as identity. */
Test(cuda_nn, native_dropout)
{
    CC_REQUIRE_DEVICE("cuda_nn::native_dropout");
    kt_live base = kt_live_now();
    for (size_t t = 0; t < 4; t++) {
        tg_dtype dt = float_dtypes[t];
        tg_scope_begin();
        int64_t n = 1 << 16;
        tg_tensor *x = cc_rand(&n, 1, dt, 8, -2, 2), *g = cc_cuda(x);
        double p = 0.3;
        tg_tensors2 r = tg_native_dropout(g, p, TG_OPT_BOOL(true));
        cr_assert(r.r0 && r.r1, "native_dropout: %s", tg_last_error());
        cr_assert_eq(tg_tensor_dtype(r.r1), TG_BOOL);
        double *m = kt_values(r.r1), *y = kt_values(r.r0), *xv = kt_values(x);
        int64_t kept = 0;
        for (int64_t i = 0; i < n; i++) kept += m[i] != 0;
        double q = 1 - p, sigma = sqrt(n * p * q);
        cr_assert(fabs((double)kept - n * q) < 5 * sigma, "kept %lld of %lld for p = %g",
                  (long long)kept, (long long)n, p);
        tg_tensor *mask_cpu = cc_copy_to(r.r1, TG_DEVICE_CPU);
        double scale = 1 / q;
        tg_tensor *want = tg_mul(tg_mul(x, mask_cpu), kt_tensor(&scale, NULL, 0, dt));
        cc_assert_close(r.r0, want, cc_round_tol(dt, 1e-7, 1e-15), 0,
                        "dropout output = x * mask * scale");
        free(m);
        free(y);
        free(xv);
        tg_tensors2 e = tg_native_dropout(g, p, TG_OPT_BOOL(false));
        cc_assert_equal(e.r0, x, "dropout eval is the identity");
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

static void optim_case(tg_dtype dt, bool adam, int variant)
{
    double tol = dt == TG_FLOAT64 ? 1e-12 : cc_round_tol(dt, 1e-5, 0);
    int64_t shape[2] = { 63, 17 };
    tg_tensor *p = cc_rand(shape, 2, dt, 1, -1, 1), *gp = cc_cuda(p);
    tg_tensor *s1 = tg_zeros(TG_INTS(63, 17), .dtype = dt),
              *s2 = tg_zeros(TG_INTS(63, 17), .dtype = dt);
    tg_tensor *s3 = tg_zeros(TG_INTS(63, 17), .dtype = dt);
    tg_tensor *g1 = cc_cuda(s1), *g2 = cc_cuda(s2), *g3 = cc_cuda(s3);
    for (int step = 1; step <= 3; step++) {
        tg_tensor *grad = cc_rand(shape, 2, dt, 10 + step, -1, 1), *ggrad = cc_cuda(grad);
        if (variant == 1) { /* non-contiguous grad: a transposed copy, transposed back */
            grad = tg_t(tg_contiguous(tg_t(grad)));
            ggrad = tg_t(tg_contiguous(tg_t(ggrad)));
        }
        bool ok;
        if (adam) {
            ok = tg_adam_step_(p, grad, s1, s2, s3, step, .lr = 0.01,
                               .weight_decay = variant ? 0.1 : 0, .amsgrad = variant == 1,
                               .decoupled_weight_decay = variant == 2) &&
                 tg_adam_step_(gp, ggrad, g1, g2, g3, step, .lr = 0.01,
                               .weight_decay = variant ? 0.1 : 0, .amsgrad = variant == 1,
                               .decoupled_weight_decay = variant == 2);
        } else {
            ok = tg_sgd_step_(p, grad, s1, 0.1, .momentum = 0.9, .nesterov = variant == 1,
                              .weight_decay = 0.01, .maximize = variant == 2,
                              .first_step = step == 1) &&
                 tg_sgd_step_(gp, ggrad, g1, 0.1, .momentum = 0.9, .nesterov = variant == 1,
                              .weight_decay = 0.01, .maximize = variant == 2,
                              .first_step = step == 1);
        }
        cr_assert(ok, "%s step: %s", adam ? "adam" : "sgd", tg_last_error());
    }
    char what[64];
    snprintf(what, sizeof what, "%s %s variant %d", adam ? "adam_step_" : "sgd_step_",
             tg_dtype_name(dt), variant);
    cc_assert_close(gp, p, tol, tol, what);
    cc_assert_close(g1, s1, tol, tol, what);
    if (adam) cc_assert_close(g2, s2, tol, tol, what);
}

Test(cuda_nn, optimizers)
{
    CC_REQUIRE_DEVICE("cuda_nn::optimizers");
    kt_live base = kt_live_now();
    for (size_t t = 0; t < 4; t++)
        for (int adam = 0; adam < 2; adam++)
            for (int variant = 0; variant < 3; variant++) {
                tg_scope_begin();
                optim_case(float_dtypes[t], adam, variant);
                tg_scope_end();
            }
    kt_assert_no_leak(base);
}

Test(cuda_nn, cat)
{
    CC_REQUIRE_DEVICE("cuda_nn::cat");
    kt_live base = kt_live_now();
    tg_scope_begin();
    tg_tensor *a = cc_rand((int64_t[]){ 4, 5, 6 }, 3, TG_FLOAT32, 1, -1, 1);
    tg_tensor *b = cc_rand((int64_t[]){ 4, 2, 6 }, 3, TG_FLOAT32, 2, -1, 1);
    tg_tensor *c =
        cc_rand((int64_t[]){ 6, 3, 4 }, 3, TG_INT32, 3, -9, 9); /* permuted below: (4, 3, 6) */
    tg_tensor *e = tg_zeros(TG_INTS(0));                        /* legacy empty: skipped */
    tg_tensor *ga = cc_cuda(a), *gb = cc_cuda(b), *gc = cc_cuda(c), *ge = cc_cuda(e);
    tg_tensor *cp = tg_permute(c, TG_INTS(2, 1, 0)), *gcp = tg_permute(gc, TG_INTS(2, 1, 0));
    cc_assert_equal(tg_cat(TG_TENSORS(ga, gb, gcp, ge), .dim = 1),
                    tg_cat(TG_TENSORS(a, b, cp, e), .dim = 1),
                    "cat dim 1 with promotion and a permuted input");
    cc_assert_equal(tg_cat(TG_TENSORS(ga, ga), .dim = -1), tg_cat(TG_TENSORS(a, a), .dim = -1),
                    "cat last dim");
    cc_assert_equal(
        tg_cat(TG_TENSORS(tg_t(tg_select(ga, 0, 1)), tg_t(tg_select(gb, 0, 2))), .dim = 1),
        tg_cat(TG_TENSORS(tg_t(tg_select(a, 0, 1)), tg_t(tg_select(b, 0, 2))), .dim = 1),
        "cat of t() views");
    for (size_t t = 0; t < 4; t++) {
        tg_tensor *x = cc_rand((int64_t[]){ 3, 7 }, 2, float_dtypes[t], 9, -1, 1), *gx = cc_cuda(x);
        cc_assert_equal(tg_cat(TG_TENSORS(gx, gx, gx), .dim = 0),
                        tg_cat(TG_TENSORS(x, x, x), .dim = 0), "cat dtype");
    }
    tg_tensor *gout = cc_cuda(tg_zeros(TG_INTS(4, 14, 6), .dtype = TG_FLOAT64));
    cr_assert(tg_cat_out(TG_TENSORS(ga, gb, ga, gb), gout, .dim = 1), "cat.out: %s",
              tg_last_error());
    cc_assert_equal(gout, tg_cat(TG_TENSORS(tg_to(a, TG_FLOAT64), b, a, b), .dim = 1),
                    "cat.out float64");
    cr_assert_null(tg_cat(TG_TENSORS(ga, tg_zeros(TG_INTS(4, 5)))));
    kt_assert_error("Tensors must have same number of dimensions: got 3 and 2");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
