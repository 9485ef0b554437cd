/* masked_fill, tril/triu and baddbmm against PyTorch 1.13 (tests/fixtures/attention_fixtures.h,
 * from tests/fixtures/gen_attention.py): values of every variant (functional, in place, out=),
 * gradients through autograd against torch.autograd's for a random grad_output, and PyTorch's
 * error messages.
 *
 * Metric: float64 |got - want| <= 1e-12 + 1e-12 |want| (masked_fill and tril/triu copy values
 * exactly; baddbmm sums the same products in BLAS's order), float32 1e-5 relative. */
#include "kt_util.h"
#include "../fixtures/attention_fixtures.h"
#include "tg_cover.h"

TG_COVERS("masked_fill.Scalar", "masked_fill.Tensor", "masked_fill_.Scalar", "masked_fill_.Tensor",
          "tril", "tril_", "tril.out", "triu", "triu_", "triu.out", "baddbmm", "baddbmm_",
          "baddbmm.out");

static tg_tensor *mask_of(const fx_mf_case *c)
{
    int64_t n = kt_shape_numel(c->mshape, c->mdim);
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = (double)c->mask[i];
    tg_tensor *m = kt_tensor(v, c->mshape, c->mdim, TG_BOOL);
    free(v);
    return m;
}

/* ------------------------------------------------------------------ masked_fill */

Test(mask, masked_fill_values_and_gradients)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_mf_cases); k++) {
        const fx_mf_case *c = &fx_mf_cases[k];
        for (int t = 0; t < 2; t++) {
            tg_dtype dt = t ? TG_FLOAT32 : TG_FLOAT64;
            double rt = t ? 1e-6 : 1e-12;
            tg_scope_begin();
            tg_tensor *x = kt_tensor(c->x, c->xshape, c->xdim, dt), *m = mask_of(c);
            tg_tensor *y = tg_masked_fill_scalar(x, m, c->value);
            cr_assert(y, "masked_fill.Scalar case %lld: %s", (long long)k, tg_last_error());
            kt_assert_shape(y, c->yshape, c->ydim);
            kt_assert_close(y, c->y, kt_shape_numel(c->yshape, c->ydim), rt, rt,
                            "masked_fill.Scalar");
            /* the Tensor overload, differentiable in self and value */
            tg_tensor *v = tg_full(TG_INTS_EMPTY, c->value, .dtype = dt);
            tg_tensor_set_requires_grad(x, true);
            tg_tensor_set_requires_grad(v, true);
            tg_tensor *y2 = tg_masked_fill(x, m, v);
            cr_assert(y2, "%s", tg_last_error());
            kt_assert_close(y2, c->y, kt_shape_numel(c->yshape, c->ydim), rt, rt,
                            "masked_fill.Tensor");
            tg_tensor *g = kt_tensor(c->g, c->yshape, c->ydim, dt);
            cr_assert_eq(tg_backward(y2, .grad = g), 0, "%s", tg_last_error());
            kt_assert_grad(x, c->gx, kt_shape_numel(c->xshape, c->xdim), rt, rt,
                           "masked_fill grad self");
            kt_assert_grad(v, &c->gv, 1, rt * 10, rt, "masked_fill grad value");
            /* in place, where self already has the broadcast shape */
            if (c->xdim == c->ydim &&
                kt_shape_numel(c->xshape, c->xdim) == kt_shape_numel(c->yshape, c->ydim)) {
                tg_tensor *a = kt_tensor(c->x, c->xshape, c->xdim, dt);
                tg_tensor *r = tg_masked_fill_scalar_(a, m, c->value);
                cr_assert_eq(r, a);
                kt_assert_close(a, c->y, kt_shape_numel(c->yshape, c->ydim), rt, rt,
                                "masked_fill_.Scalar");
                tg_tensor *b = kt_tensor(c->x, c->xshape, c->xdim, dt);
                tg_tensor *vv = tg_full(TG_INTS_EMPTY, c->value, .dtype = TG_FLOAT64);
                cr_assert(tg_masked_fill_(b, m, vv));
                kt_assert_close(b, c->y, kt_shape_numel(c->yshape, c->ydim), rt, rt,
                                "masked_fill_.Tensor");
            }
            tg_scope_end();
        }
    }
    kt_assert_no_leak(live);
}

/* A transposed self is written through its strides; integer dtypes take the value truncated. */
Test(mask, masked_fill_strided_and_integer)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    const double xv[6] = { 1, 2, 3, 4, 5, 6 }, mv[6] = { 1, 0, 0, 1, 1, 0 };
    tg_tensor *x = kt_tensor(xv, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *xt = tg_transpose(x, 0, 1); /* (3, 2) */
    tg_tensor *m = kt_tensor(mv, (int64_t[]){ 3, 2 }, 2, TG_BOOL);
    cr_assert(tg_masked_fill_scalar_(xt, m, -1));
    /* xt[i][j] = x[j][i]; mask (3, 2) row-major 1 0 / 0 1 / 1 0 */
    const double want[6] = { -1, 2, -1, 4, -1, 6 };
    kt_assert_close(x, want, 6, 0, 0, "masked_fill_ through a transpose");
    tg_tensor *xi = kt_tensor(xv, (int64_t[]){ 6 }, 1, TG_INT64);
    tg_tensor *mi = kt_tensor(mv, (int64_t[]){ 6 }, 1, TG_BOOL);
    tg_tensor *yi = tg_masked_fill_scalar(xi, mi, 7.9);
    cr_assert_eq(tg_tensor_dtype(yi), TG_INT64);
    const double wi[6] = { 7, 2, 3, 7, 7, 6 };
    kt_assert_close(yi, wi, 6, 0, 0, "masked_fill int64");
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(mask, masked_fill_errors)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(3)), *fm = tg_ones(TG_INTS(3));
    kt_expect_error(tg_masked_fill_scalar(x, fm, 1),
                    "masked_fill_ only supports boolean masks, but got mask with dtype float");
    kt_expect_error(tg_masked_fill_scalar_(x, fm, 1),
                    "masked_fill_ only supports boolean masks, but got mask with dtype float");
    tg_tensor *m = tg_ones(TG_INTS(3), .dtype = TG_BOOL), *v1 = tg_ones(TG_INTS(1));
    kt_expect_error(tg_masked_fill(x, m, v1),
                    "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                    "1 dimension(s).");
    tg_tensor *m23 = tg_ones(TG_INTS(2, 3), .dtype = TG_BOOL);
    kt_expect_error(tg_masked_fill_scalar_(x, m23, 1),
                    "output with shape [3] doesn't match the broadcast shape [2, 3]");
    tg_tensor *m4 = tg_ones(TG_INTS(4), .dtype = TG_BOOL);
    kt_expect_error(tg_masked_fill_scalar(x, m4, 1),
                    "The size of tensor a (3) must match the size of tensor b (4) at "
                    "non-singleton dimension 0");
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ tril / triu */

Test(mask, tril_triu_values)
{
    kt_live live = kt_live_now();
    const int64_t shape[4] = { 2, 3, 4, 5 };
    for (int64_t k = 0; k < KT_NUMEL(fx_tri_cases); k++) {
        const fx_tri_case *c = &fx_tri_cases[k];
        for (int t = 0; t < 2; t++) {
            tg_dtype dt = t ? TG_FLOAT32 : TG_FLOAT64;
            tg_scope_begin();
            tg_tensor *x = kt_tensor(fx_tri_x, shape, 4, dt);
            kt_assert_close(tg_tril(x, .diagonal = c->diagonal), c->lower, 120, 1e-7, 0, "tril");
            kt_assert_close(tg_triu(x, .diagonal = c->diagonal), c->upper, 120, 1e-7, 0, "triu");
            /* out= and in place; a transposed input read through its strides */
            tg_tensor *out = tg_empty(TG_INTS(0), .dtype = dt);
            cr_assert(tg_tril_out(x, out, .diagonal = c->diagonal), "%s", tg_last_error());
            kt_assert_close(out, c->lower, 120, 1e-7, 0, "tril.out");
            tg_tensor *out2 = tg_empty(TG_INTS(0), .dtype = dt);
            cr_assert(tg_triu_out(x, out2, .diagonal = c->diagonal), "%s", tg_last_error());
            kt_assert_close(out2, c->upper, 120, 1e-7, 0, "triu.out");
            tg_tensor *a = tg_clone(x), *b = tg_clone(x);
            cr_assert(tg_tril_(a, .diagonal = c->diagonal));
            kt_assert_close(a, c->lower, 120, 1e-7, 0, "tril_");
            cr_assert(tg_triu_(b, .diagonal = c->diagonal));
            kt_assert_close(b, c->upper, 120, 1e-7, 0, "triu_");
            tg_tensor *xt = tg_transpose(tg_contiguous(tg_transpose(x, -1, -2)), -1, -2);
            kt_assert_close(tg_tril(xt, .diagonal = c->diagonal), c->lower, 120, 1e-7, 0,
                            "tril strided");
            tg_tensor *bt = tg_transpose(tg_contiguous(tg_transpose(x, -1, -2)), -1, -2);
            cr_assert(tg_triu_(bt, .diagonal = c->diagonal));
            kt_assert_close(bt, c->upper, 120, 1e-7, 0, "triu_ strided");
            tg_scope_end();
        }
    }
    kt_assert_no_leak(live);
}

/* d tril(x) / dx = grad.tril(diagonal): the gradient of sum(tril(x) * w) is tril(w). */
Test(mask, tril_triu_gradient)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    const int64_t shape[4] = { 2, 3, 4, 5 };
    const fx_tri_case *c = &fx_tri_cases[0];
    tg_tensor *x =
        tg_tensor_set_requires_grad(tg_zeros(TG_INTS(2, 3, 4, 5), .dtype = TG_FLOAT64), true);
    tg_tensor *w = kt_tensor(fx_tri_x, shape, 4, TG_FLOAT64);
    cr_assert_eq(tg_backward(tg_tril(x, .diagonal = c->diagonal), .grad = w), 0);
    kt_assert_grad(x, c->lower, 120, 0, 0, "tril grad");
    tg_tensor *y =
        tg_tensor_set_requires_grad(tg_zeros(TG_INTS(2, 3, 4, 5), .dtype = TG_FLOAT64), true);
    cr_assert_eq(tg_backward(tg_triu(y, .diagonal = c->diagonal), .grad = w), 0);
    kt_assert_grad(y, c->upper, 120, 0, 0, "triu grad");
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(mask, tril_triu_errors)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(3));
    kt_expect_error(
        tg_tril(x),
        "tril: Dimension out of range (expected to be in range of [-1, 0], but got -2)");
    kt_expect_error(tg_triu(x), "triu: Dimension out of range");
    tg_tensor *m = tg_zeros(TG_INTS(3, 3)), *o = tg_zeros(TG_INTS(3, 3), .dtype = TG_FLOAT64);
    kt_expect_error(tg_tril_out(m, o),
                    "Expected out tensor to have dtype float, but got double instead");
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ baddbmm */

Test(mask, baddbmm_values_and_gradients)
{
    kt_live live = kt_live_now();
    const int64_t s1[3] = { 2, 3, 5 }, s2[3] = { 2, 5, 4 }, so[3] = { 2, 3, 4 };
    for (int64_t k = 0; k < KT_NUMEL(fx_bd_cases); k++) {
        const fx_bd_case *c = &fx_bd_cases[k];
        for (int t = 0; t < 2; t++) {
            tg_dtype dt = t ? TG_FLOAT32 : TG_FLOAT64;
            double rt = t ? 1e-5 : 1e-12;
            tg_scope_begin();
            tg_tensor *s = kt_tensor(c->self, c->sshape, c->sdim, dt);
            tg_tensor *b1 = kt_tensor(c->b1, s1, 3, dt), *b2 = kt_tensor(c->b2, s2, 3, dt);
            tg_tensor_set_requires_grad(s, true);
            tg_tensor_set_requires_grad(b1, true);
            tg_tensor_set_requires_grad(b2, true);
            tg_tensor *y = tg_baddbmm(s, b1, b2, .beta = c->beta, .alpha = c->alpha);
            cr_assert(y, "baddbmm case %lld: %s", (long long)k, tg_last_error());
            kt_assert_shape(y, so, 3);
            kt_assert_close(y, c->y, 24, rt, rt, "baddbmm");
            tg_tensor *g = kt_tensor(c->g, so, 3, dt);
            cr_assert_eq(tg_backward(y, .grad = g), 0, "%s", tg_last_error());
            kt_assert_grad(s, c->gs, kt_shape_numel(c->sshape, c->sdim), rt, rt,
                           "baddbmm grad self");
            kt_assert_grad(b1, c->g1, 30, rt, rt, "baddbmm grad batch1");
            kt_assert_grad(b2, c->g2, 40, rt, rt, "baddbmm grad batch2");
            /* out= and in place (self of the full shape), batch2 transposed */
            tg_tensor *sc = kt_tensor(c->self, c->sshape, c->sdim, dt);
            tg_tensor *b1c = kt_tensor(c->b1, s1, 3, dt), *b2c = kt_tensor(c->b2, s2, 3, dt);
            tg_tensor *b2t = tg_transpose(tg_contiguous(tg_transpose(b2c, 1, 2)), 1, 2);
            tg_tensor *out = tg_empty(TG_INTS(0), .dtype = dt);
            cr_assert(tg_baddbmm_out(sc, b1c, b2t, out, .beta = c->beta, .alpha = c->alpha), "%s",
                      tg_last_error());
            kt_assert_close(out, c->y, 24, rt, rt, "baddbmm.out");
            if (c->sdim == 3) {
                tg_tensor *a = tg_clone(sc);
                cr_assert(tg_baddbmm_(a, b1c, b2t, .beta = c->beta, .alpha = c->alpha));
                kt_assert_close(a, c->y, 24, rt, rt, "baddbmm_");
            }
            tg_scope_end();
        }
    }
    kt_assert_no_leak(live);
}

/* beta = 0 ignores self: NaN in it does not reach the result (PyTorch's rule). */
Test(mask, baddbmm_beta_zero_ignores_nan)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *s = tg_full(TG_INTS(1, 2, 2), NAN);
    tg_tensor *a = tg_ones(TG_INTS(1, 2, 3)), *b = tg_ones(TG_INTS(1, 3, 2));
    const double want[4] = { 6, 6, 6, 6 };
    kt_assert_close(tg_baddbmm(s, a, b, .beta = 0, .alpha = 2), want, 4, 0, 0, "beta 0");
    tg_scope_end();
    kt_assert_no_leak(live);
}

Test(mask, baddbmm_errors)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *s = tg_zeros(TG_INTS(2, 3, 4));
    tg_tensor *a = tg_zeros(TG_INTS(2, 3, 5)), *b = tg_zeros(TG_INTS(2, 4, 4));
    kt_expect_error(tg_baddbmm(s, a, b),
                    "Expected size for first two dimensions of batch2 tensor to be: [2, 5] but "
                    "got: [2, 4].");
    tg_tensor *a2 = tg_zeros(TG_INTS(2, 3));
    kt_expect_error(tg_baddbmm(s, a2, b), "batch1 must be a 3D tensor");
    tg_tensor *s5 = tg_zeros(TG_INTS(2, 3, 5)), *b5 = tg_zeros(TG_INTS(2, 5, 4));
    kt_expect_error(
        tg_baddbmm(s5, a, b5),
        "The expanded size of the tensor (4) must match the existing size (5) at "
        "non-singleton dimension 2.  Target sizes: [2, 3, 4].  Tensor sizes: [2, 3, 5]");
    tg_tensor *b3 = tg_zeros(TG_INTS(3, 5, 4));
    kt_expect_error(tg_baddbmm(s, a, b3),
                    "Expected size for first two dimensions of batch2 tensor to be: [2, 5] but "
                    "got: [3, 5].");
    tg_tensor *bd = tg_zeros(TG_INTS(2, 5, 4), .dtype = TG_FLOAT64);
    kt_expect_error(tg_baddbmm(s, a, bd), "expected scalar type Float but found Double");
    tg_scope_end();
    kt_assert_no_leak(live);
}
