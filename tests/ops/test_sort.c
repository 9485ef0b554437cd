/* sort, sort.stable, sort.values_stable, argsort, topk, topk.values and sort_backward against
 * PyTorch 1.13 (tests/fixtures/sort_fixtures.h, from tests/fixtures/gen_sort.py): NaN and
 * infinities, ties in stable order (ascending and descending), the middle dim of a 3-D tensor,
 * strided input, int64, topk on both its paths (heap selection and full sort) and on a
 * 50257-element row, gradients through autograd; and PyTorch's messages for bad input.
 *
 * Metric: exact. Sorting moves values without arithmetic, the inputs are exact in float32,
 * and indices are integers; gradients are scattered copies of the fixture's grad. */
#include "kt_util.h"
#include "../fixtures/sort_fixtures.h"
#include "tg_cover.h"

TG_COVERS("sort", "sort.stable", "sort.values_stable", "argsort", "topk", "topk.values",
          "sort_backward");

static const tg_dtype DTS[2] = { TG_FLOAT64, TG_FLOAT32 };

#define T(v, dt, ...)                          \
    kt_tensor((v), (int64_t[]){ __VA_ARGS__ }, \
              sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t), (dt))

/* Values equal to the fixture exactly (NaN matching NaN). */
static void same_values(const tg_tensor *t, const double *want, int64_t n, const char *what)
{
    cr_assert(t, "%s: %s", what, tg_last_error());
    kt_assert_close(t, want, n, 0, 0, what);
}

/* int64 indices equal to the fixture's. */
static void same_indices(const tg_tensor *t, const int64_t *want, int64_t n, const char *what)
{
    cr_assert(t, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(t), TG_INT64, "%s: indices are not int64", what);
    cr_assert_eq(tg_tensor_numel(t), n, "%s: numel", what);
    double *got = kt_values(t);
    for (int64_t i = 0; i < n; i++)
        cr_assert_eq((int64_t)got[i], want[i], "%s[%lld]: got %lld, expected %lld", what,
                     (long long)i, (long long)got[i], (long long)want[i]);
    free(got);
}

static void release2(tg_values_indices r) { kt_release_all(r.values, r.indices); }

Test(sort, nan_inf_ties_both_directions_both_dims)
{
    const struct {
        const char *name;
        int64_t dim;
        bool desc;
        const double *v;
        const int64_t *i;
    } cs[] = {
        { "last", -1, false, fx_sort_last_v, fx_sort_last_i },
        { "last_desc", -1, true, fx_sort_last_desc_v, fx_sort_last_desc_i },
        { "dim0", 0, false, fx_sort_dim0_v, fx_sort_dim0_i },
        { "dim0_desc", 0, true, fx_sort_dim0_desc_v, fx_sort_dim0_desc_i },
    };
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_tensor *x = T(fx_sort_x, DTS[k], 3, 8);
        for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
            tg_values_indices r =
                tg_sort_stable(x, true, .dim = cs[c].dim, .descending = cs[c].desc);
            same_values(r.values, cs[c].v, 24, cs[c].name);
            same_indices(r.indices, cs[c].i, 24, cs[c].name);
            cr_expect_eq(tg_tensor_dtype(r.values), DTS[k]);
            release2(r);
            /* sort (stable=False) is stable here too; argsort is its indices */
            r = tg_sort(x, .dim = cs[c].dim, .descending = cs[c].desc);
            same_values(r.values, cs[c].v, 24, cs[c].name);
            same_indices(r.indices, cs[c].i, 24, cs[c].name);
            release2(r);
            tg_tensor *a = tg_argsort(x, .dim = cs[c].dim, .descending = cs[c].desc);
            same_indices(a, cs[c].i, 24, cs[c].name);
            tg_release(a);
        }
        tg_release(x);
        kt_assert_no_leak(base);
    }
}

Test(sort, strided_input_and_out_tensors)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_tensor *x = T(fx_sort_x, DTS[k], 3, 8);
        /* sorting x^T (8, 3) along dim 0 is sorting x along dim 1, transposed */
        tg_tensor *xt = tg_transpose(x, 0, 1);
        tg_values_indices r = tg_sort_stable(xt, true, .dim = 0);
        cr_assert(r.values, "%s", tg_last_error());
        tg_tensor *vt = tg_transpose(r.values, 0, 1), *it = tg_transpose(r.indices, 0, 1);
        same_values(vt, fx_sort_last_v, 24, "transposed");
        same_indices(it, fx_sort_last_i, 24, "transposed");
        kt_release_all(vt, it);
        release2(r);
        /* out= into a transposed (non-contiguous) pair of tensors */
        tg_tensor *vs = tg_empty(TG_INTS(8, 3), .dtype = DTS[k]);
        tg_tensor *is = tg_empty(TG_INTS(8, 3), .dtype = TG_INT64);
        tg_tensor *vo = tg_transpose(vs, 0, 1), *io = tg_transpose(is, 0, 1);
        r = tg_sort_stable_out(x, true, vo, io, .descending = true);
        cr_assert_eq(r.values, vo, "%s", tg_last_error());
        cr_assert_eq(r.indices, io);
        same_values(vo, fx_sort_last_desc_v, 24, "out=");
        same_indices(io, fx_sort_last_desc_i, 24, "out=");
        release2(r);
        kt_release_all(vo, io, vs, is, xt, x);
        kt_assert_no_leak(base);
    }
}

Test(sort, middle_dim_with_gradient)
{
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_tensor *x = T(fx_sort3_x, DTS[k], 2, 5, 4), *g = T(fx_sort3_g, DTS[k], 2, 5, 4);
        tg_tensor_set_requires_grad(x, true);
        tg_values_indices r = tg_sort(x, .dim = 1, .descending = true);
        same_values(r.values, fx_sort3_v, 40, "values");
        same_indices(r.indices, fx_sort3_i, 40, "indices");
        cr_assert_eq(tg_backward(r.values, .grad = g), 0, "%s", tg_last_error());
        tg_tensor *gx = tg_tensor_grad(x);
        /* float32: the grad fixture is float64, rounded once */
        kt_assert_close(gx, fx_sort3_gx, 40, DTS[k] == TG_FLOAT32 ? 1e-7 : 0, 0, "grad");
        tg_release(gx);
        release2(r);
        kt_release_all(g, x);
        kt_assert_no_leak(base);
    }
}

Test(sort, int64_stable)
{
    kt_live base = kt_live_now();
    tg_tensor *x = kt_tensor_i64(fx_sorti_x, (int64_t[]){ 2, 9 }, 2);
    tg_values_indices r = tg_sort_stable(x, true, .dim = 1);
    same_indices(r.values, fx_sorti_v, 18, "values");
    same_indices(r.indices, fx_sorti_i, 18, "indices");
    release2(r);
    r = tg_sort_stable(x, true, .dim = 1, .descending = true);
    same_indices(r.values, fx_sorti_vd, 18, "values desc");
    same_indices(r.indices, fx_sorti_id, 18, "indices desc");
    release2(r);
    tg_release(x);
    kt_assert_no_leak(base);
}

Test(sort, zero_dim_and_empty)
{
    kt_live base = kt_live_now();
    tg_tensor *s = tg_full(TG_NO_INTS, 3.5);
    tg_values_indices r = tg_sort(s);
    cr_assert(r.values, "%s", tg_last_error());
    cr_expect_eq(tg_tensor_dim(r.values), 0);
    cr_expect_eq(tg_tensor_dim(r.indices), 0);
    same_values(r.values, (const double[]){ 3.5 }, 1, "0-dim");
    same_indices(r.indices, (const int64_t[]){ 0 }, 1, "0-dim");
    release2(r);
    r = tg_topk(s, 1);
    same_values(r.values, (const double[]){ 3.5 }, 1, "0-dim topk");
    release2(r);
    tg_tensor *e = tg_empty(TG_INTS(2, 0));
    r = tg_sort(e);
    cr_assert(r.values, "%s", tg_last_error());
    cr_expect_eq(tg_tensor_numel(r.values), 0);
    release2(r);
    r = tg_topk(e, 0);
    cr_assert(r.values, "%s", tg_last_error());
    cr_expect_eq(tg_tensor_numel(r.indices), 0);
    release2(r);
    kt_release_all(e, s);
    kt_assert_no_leak(base);
}

Test(topk, select_and_sort_paths_with_gradients)
{
    const struct {
        const char *name;
        int64_t k, dim;
        bool largest;
        int64_t shape[2];
        const double *v, *g, *gx;
        const int64_t *i;
    } cs[] = {
        { "k5", 5, -1, true, { 4, 5 }, fx_topk_k5_v, fx_topk_k5_g, fx_topk_k5_gx, fx_topk_k5_i },
        { "k5s",
          5,
          -1,
          false,
          { 4, 5 },
          fx_topk_k5s_v,
          fx_topk_k5s_g,
          fx_topk_k5s_gx,
          fx_topk_k5s_i },
        { "k30",
          30,
          1,
          true,
          { 4, 30 },
          fx_topk_k30_v,
          fx_topk_k30_g,
          fx_topk_k30_gx,
          fx_topk_k30_i },
        { "k30s",
          30,
          1,
          false,
          { 4, 30 },
          fx_topk_k30s_v,
          fx_topk_k30s_g,
          fx_topk_k30s_gx,
          fx_topk_k30s_i },
        { "d0", 3, 0, true, { 3, 100 }, fx_topk_d0_v, fx_topk_d0_g, fx_topk_d0_gx, fx_topk_d0_i },
    };
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
            int64_t n = cs[c].shape[0] * cs[c].shape[1];
            tg_tensor *x = T(fx_topk_x, DTS[k], 4, 100);
            tg_tensor *g = kt_tensor(cs[c].g, cs[c].shape, 2, DTS[k]);
            tg_tensor_set_requires_grad(x, true);
            tg_values_indices r = tg_topk(x, cs[c].k, .dim = cs[c].dim, .largest = cs[c].largest);
            same_values(r.values, cs[c].v, n, cs[c].name);
            same_indices(r.indices, cs[c].i, n, cs[c].name);
            kt_assert_shape(r.values, cs[c].shape, 2);
            cr_assert_eq(tg_backward(r.values, .grad = g), 0, "%s", tg_last_error());
            tg_tensor *gx = tg_tensor_grad(x);
            kt_assert_close(gx, cs[c].gx, 400, DTS[k] == TG_FLOAT32 ? 1e-7 : 0, 0, cs[c].name);
            tg_release(gx);
            release2(r);
            kt_release_all(g, x);
        }
        kt_assert_no_leak(base);
    }
}

Test(topk, gpt2_vocabulary_row_and_nan)
{
    enum { V = 50257 };
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        double *row = malloc(sizeof(double) * V);
        for (int64_t i = 0; i < V; i++) row[i] = (double)((i * 7919) % V) / V;
        tg_tensor *x = kt_tensor(row, (int64_t[]){ 1, V }, 2, DTS[k]);
        free(row);
        tg_values_indices r = tg_topk(x, 40);
        /* float32 rounds the inputs, once */
        kt_assert_close(r.values, fx_topk_big_v, 40, DTS[k] == TG_FLOAT32 ? 1e-7 : 0, 0, "big");
        same_indices(r.indices, fx_topk_big_i, 40, "big");
        release2(r);
        /* into out= tensors (topk.values) */
        tg_tensor *vo = tg_empty(TG_INTS(0), .dtype = DTS[k]),
                  *io = tg_empty(TG_INTS(0), .dtype = TG_INT64);
        r = tg_topk_out(x, 40, vo, io, .sorted = false);
        cr_assert_eq(r.values, vo, "%s", tg_last_error());
        same_indices(io, fx_topk_big_i, 40, "big out=");
        release2(r);
        kt_release_all(vo, io, x);

        tg_tensor *w = T(fx_topk_nan_x, DTS[k], 6);
        r = tg_topk(w, 3);
        same_values(r.values, fx_topk_nan_v, 3, "nan largest");
        same_indices(r.indices, fx_topk_nan_i, 3, "nan largest");
        release2(r);
        r = tg_topk(w, 2, .largest = false);
        same_values(r.values, fx_topk_nans_v, 2, "nan smallest");
        same_indices(r.indices, fx_topk_nans_i, 2, "nan smallest");
        release2(r);
        tg_release(w);
        kt_assert_no_leak(base);
    }
}

Test(sort, errors)
{
    kt_live base = kt_live_now();
    tg_tensor *x = tg_zeros(TG_INTS(2, 3));
    tg_values_indices r = tg_topk(x, 4);
    cr_expect_null(r.values);
    kt_assert_error("topk: selected index k out of range");
    r = tg_topk(x, -1);
    cr_expect_null(r.values);
    kt_assert_error("selected index k out of range");
    r = tg_topk(x, 1, .dim = 2);
    cr_expect_null(r.values);
    kt_assert_error("Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    r = tg_sort(x, .dim = -3);
    cr_expect_null(r.values);
    kt_assert_error("Dimension out of range (expected to be in range of [-2, 1], but got -3)");
    tg_tensor *b = tg_zeros(TG_INTS(3), .dtype = TG_BOOL);
    r = tg_topk(b, 1);
    cr_expect_null(r.values);
    kt_assert_error("\"topk_cpu\" not implemented for 'Bool'");
    tg_release(b);
    /* out= dtypes must be exact */
    tg_tensor *vo = tg_empty(TG_INTS(2, 3)), *io = tg_empty(TG_INTS(2, 3));
    r = tg_sort_stable_out(x, false, vo, io);
    cr_expect_null(r.values);
    kt_assert_error("Expected out tensor to have dtype long int, but got float instead");
    kt_release_all(vo, io);
    /* sort_backward checks its indices */
    tg_tensor *g = tg_ones(TG_INTS(2, 1));
    tg_tensor *bad = tg_full(TG_INTS(2, 1), 3, .dtype = TG_INT64);
    cr_expect_null(tg_sort_backward(g, 1, bad, TG_INTS(2, 3)));
    kt_assert_error("index 3 is out of bounds for dimension 1 with size 3");
    kt_release_all(bad, g, x);
    kt_assert_no_leak(base);
}
