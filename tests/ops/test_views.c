/* View operators and shape composites: geometry (sizes, strides, offsets checked exactly
 * against PyTorch's rules), storage sharing (a write through a view is seen by the base), the
 * shared version counter, error messages, and copies where PyTorch copies (reshape of an
 * incompatible layout, contiguous of a non-contiguous tensor, clone, to). */
#include "kt_util.h"
#include "core/core.h"
#include "tg_cover.h"

TG_COVERS("as_strided", "view", "reshape", "transpose.int", "t", "permute", "squeeze",
          "squeeze.dim", "unsqueeze", "expand", "slice.Tensor", "select.int", "flatten.using_ints",
          "contiguous", "clone", "to.dtype", "_to_copy");

static tg_tensor *arange(int64_t n, tg_dtype dt)
{
    double v[256];
    for (int64_t i = 0; i < n; i++) v[i] = (double)i;
    return kt_tensor(v, (int64_t[]){ n }, 1, dt);
}

static void assert_geom(const tg_tensor *t, const int64_t *sizes, const int64_t *strides,
                        int64_t nd, int64_t off)
{
    kt_assert_shape(t, sizes, nd);
    for (int64_t i = 0; i < nd; i++)
        cr_assert_eq(tg_tensor_stride(t, i), strides[i], "stride(%lld) = %lld, expected %lld",
                     (long long)i, (long long)tg_tensor_stride(t, i), (long long)strides[i]);
    cr_assert_eq(tg_tensor_storage_offset(t), off, "offset %lld, expected %lld",
                 (long long)tg_tensor_storage_offset(t), (long long)off);
}

Test(views, view_and_reshape)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *x = arange(24, TG_FLOAT32);
    tg_tensor *v = tg_view(x, TG_INTS(2, -1, 4));
    assert_geom(v, (int64_t[]){ 2, 3, 4 }, (int64_t[]){ 12, 4, 1 }, 3, 0);
    cr_assert_eq(tg_tensor_data(v), tg_tensor_data(x), "view shares storage");
    /* a transpose cannot be flattened by view, but splitting a dim of it can */
    tg_tensor *t = tg_transpose(v, 1, 2); /* (2, 4, 3), strides (12, 1, 4) */
    tg_tensor *t2 = tg_view(t, TG_INTS(2, 2, 2, 3));
    assert_geom(t2, (int64_t[]){ 2, 2, 2, 3 }, (int64_t[]){ 12, 2, 1, 4 }, 4, 0);
    kt_expect_error(
        tg_view(t, TG_INTS(24)),
        "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
    kt_expect_error(tg_view(x, TG_INTS(5, 5)), "shape '[5, 5]' is invalid for input of size 24");
    kt_expect_error(tg_view(x, TG_INTS(-1, -1)), "only one dimension can be inferred");
    /* reshape: a view when possible, else a copy */
    tg_tensor *r1 = tg_reshape(v, TG_INTS(6, 4));
    cr_assert_eq(tg_tensor_data(r1), tg_tensor_data(x), "reshape of contiguous is a view");
    tg_tensor *r2 = tg_reshape(t, TG_INTS(-1));
    cr_assert(r2, "%s", tg_last_error());
    cr_assert_neq(tg_tensor_data(r2), tg_tensor_data(x), "reshape of a transpose copies");
    double want[24];
    for (int b = 0, k = 0; b < 2; b++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++) want[k++] = b * 12 + j * 4 + i;
    kt_assert_close(r2, want, 24, 0, 0, "reshape copy");
    /* 0-dim and empty */
    tg_tensor *s = kt_tensor((double[]){ 7 }, NULL, 0, TG_FLOAT32);
    tg_tensor *s1 = tg_view(s, TG_INTS(1, 1));
    assert_geom(s1, (int64_t[]){ 1, 1 }, (int64_t[]){ 1, 1 }, 2, 0);
    tg_tensor *s0 = tg_reshape(s1, TG_INTS_EMPTY);
    kt_assert_shape(s0, NULL, 0);
    tg_tensor *e = kt_tensor(NULL, (int64_t[]){ 0, 3 }, 2, TG_FLOAT32);
    tg_tensor *e2 = tg_view(e, TG_INTS(3, 0, -1));
    kt_expect_error(
        e2,
        "cannot reshape tensor of 0 elements into shape [3, 0, -1] because the unspecified dimension size -1 can be any value and is ambiguous");
    tg_tensor *e3 = tg_view(e, TG_INTS(3, 0));
    kt_assert_shape(e3, (int64_t[]){ 3, 0 }, 2);
    kt_release_all(x, v, t, t2, r1, r2, s, s1, s0, e, e3);
    kt_assert_no_leak(live);
}

Test(views, transpose_permute_t)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *x = arange(24, TG_FLOAT64);
    tg_tensor *v = tg_view(x, TG_INTS(2, 3, 4));
    tg_tensor *p = tg_permute(v, TG_INTS(2, 0, 1));
    assert_geom(p, (int64_t[]){ 4, 2, 3 }, (int64_t[]){ 1, 12, 4 }, 3, 0);
    tg_tensor *tr = tg_transpose(v, -1, 0);
    assert_geom(tr, (int64_t[]){ 4, 3, 2 }, (int64_t[]){ 1, 4, 12 }, 3, 0);
    kt_expect_error(tg_permute(v, TG_INTS(0, 0, 1)), "permute(): duplicate dims are not allowed.");
    kt_expect_error(
        tg_permute(v, TG_INTS(0, 1)),
        "number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 2");
    kt_expect_error(tg_t(v), "t() expects a tensor with <= 2 dimensions, but self is 3D");
    tg_tensor *m = tg_view(x, TG_INTS(4, 6));
    tg_tensor *mt = tg_t(m);
    assert_geom(mt, (int64_t[]){ 6, 4 }, (int64_t[]){ 1, 6 }, 2, 0);
    tg_tensor *vt = tg_t(x);
    assert_geom(vt, (int64_t[]){ 24 }, (int64_t[]){ 1 }, 1, 0);
    kt_release_all(x, v, p, tr, m, mt, vt);
    kt_assert_no_leak(live);
}

Test(views, squeeze_unsqueeze_flatten)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(6, TG_FLOAT32);
    tg_tensor *v = tg_view(x, TG_INTS(1, 2, 1, 3));
    tg_tensor *s = tg_squeeze(v);
    assert_geom(s, (int64_t[]){ 2, 3 }, (int64_t[]){ 3, 1 }, 2, 0);
    tg_tensor *s2 = tg_squeeze_dim(v, 2), *s1 = tg_squeeze_dim(v, 1);
    assert_geom(s2, (int64_t[]){ 1, 2, 3 }, (int64_t[]){ 6, 3, 1 }, 3, 0);
    kt_assert_shape(s1, (int64_t[]){ 1, 2, 1, 3 }, 4);
    tg_tensor *u0 = tg_unsqueeze(s, 0), *u2 = tg_unsqueeze(s, 2), *um = tg_unsqueeze(s, -2);
    assert_geom(u0, (int64_t[]){ 1, 2, 3 }, (int64_t[]){ 6, 3, 1 }, 3, 0);
    assert_geom(u2, (int64_t[]){ 2, 3, 1 }, (int64_t[]){ 3, 1, 1 }, 3, 0);
    assert_geom(um, (int64_t[]){ 2, 1, 3 }, (int64_t[]){ 3, 3, 1 }, 3, 0);
    tg_tensor *f = tg_flatten(v, .start_dim = 1, .end_dim = 2);
    assert_geom(f, (int64_t[]){ 1, 2, 3 }, (int64_t[]){ 6, 3, 1 }, 3, 0);
    tg_tensor *fa = tg_flatten(v);
    assert_geom(fa, (int64_t[]){ 6 }, (int64_t[]){ 1 }, 1, 0);
    tg_tensor *z = kt_tensor((double[]){ 1 }, NULL, 0, TG_FLOAT32);
    tg_tensor *fz = tg_flatten(z);
    kt_assert_shape(fz, (int64_t[]){ 1 }, 1);
    kt_expect_error(tg_flatten(v, .start_dim = 2, .end_dim = 1),
                    "flatten() has invalid args: start_dim cannot come after end_dim");
    kt_release_all(x, v, s, s2, s1, u0, u2, um, f, fa, z, fz);
    kt_assert_no_leak(live);
}

Test(views, expand)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *x = arange(3, TG_FLOAT32);
    tg_tensor *e = tg_expand(x, TG_INTS(2, -1));
    assert_geom(e, (int64_t[]){ 2, 3 }, (int64_t[]){ 0, 1 }, 2, 0);
    kt_assert_close(e, (double[]){ 0, 1, 2, 0, 1, 2 }, 6, 0, 0, "expand values");
    tg_tensor *c = tg_view(x, TG_INTS(3, 1));
    tg_tensor *e2 = tg_expand(c, TG_INTS(3, 4));
    assert_geom(e2, (int64_t[]){ 3, 4 }, (int64_t[]){ 1, 0 }, 2, 0);
    kt_expect_error(
        tg_expand(x, TG_INTS(2, 4)),
        "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]");
    kt_expect_error(
        tg_expand(x, TG_INTS(-1, 3)),
        "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0");
    kt_release_all(x, e, c, e2);
    kt_assert_no_leak(live);
}

Test(views, slice_select_as_strided)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *x = arange(20, TG_FLOAT32);
    tg_tensor *v = tg_view(x, TG_INTS(4, 5));
    tg_tensor *s = tg_slice(v, .dim = 1, .start = 1, .end = -1, .step = 2);
    assert_geom(s, (int64_t[]){ 4, 2 }, (int64_t[]){ 5, 2 }, 2, 1);
    kt_assert_close(s, (double[]){ 1, 3, 6, 8, 11, 13, 16, 18 }, 8, 0, 0, "slice values");
    tg_tensor *sc = tg_slice(v, .start = -100, .end = 100);
    assert_geom(sc, (int64_t[]){ 4, 5 }, (int64_t[]){ 5, 1 }, 2, 0);
    tg_tensor *se = tg_slice(v, .start = 3, .end = 1);
    kt_assert_shape(se, (int64_t[]){ 0, 5 }, 2);
    kt_expect_error(tg_slice(v, .step = 0), "slice step must be positive");
    tg_tensor *r = tg_select(v, 0, -1);
    assert_geom(r, (int64_t[]){ 5 }, (int64_t[]){ 1 }, 1, 15);
    tg_tensor *c = tg_select(v, 1, 2);
    assert_geom(c, (int64_t[]){ 4 }, (int64_t[]){ 5 }, 1, 2);
    tg_tensor *x3 = arange(3, TG_FLOAT32);
    kt_expect_error(tg_select(x3, 0, 5),
                    "select(): index 5 out of range for tensor of size [3] at dimension 0");
    tg_tensor *a = tg_as_strided(x, TG_INTS(3, 3), TG_INTS(1, 1), .storage_offset = 2);
    assert_geom(a, (int64_t[]){ 3, 3 }, (int64_t[]){ 1, 1 }, 2, 2);
    kt_assert_close(a, (double[]){ 2, 3, 4, 3, 4, 5, 4, 5, 6 }, 9, 0, 0, "as_strided values");
    kt_expect_error(tg_as_strided(x, TG_INTS(5, 5), TG_INTS(5, 1)),
                    "out of bounds for storage of size 80");
    kt_release_all(x, v, s, sc, se, r, c, x3, a);
    kt_assert_no_leak(live);
}

Test(views, shared_storage_and_version)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(6, TG_FLOAT32);
    tg_tensor *v = tg_view(x, TG_INTS(2, 3));
    tg_tensor *col = tg_select(v, 1, 1);
    tg_tensor *r = tg_fill_(col, 9);
    cr_assert(r, "%s", tg_last_error());
    kt_assert_close(x, (double[]){ 0, 9, 2, 3, 9, 5 }, 6, 0, 0,
                    "write through a view reaches the base");
    cr_assert_eq(x->version, col->version, "views share the version counter");
    kt_release_all(r, x, v, col);
    kt_assert_no_leak(live);
}

Test(views, contiguous_clone_to)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(6, TG_FLOAT32);
    tg_tensor *v = tg_view(x, TG_INTS(2, 3));
    tg_tensor *c = tg_contiguous(v);
    cr_assert_eq(c, v, "contiguous of a contiguous tensor is the same tensor");
    tg_tensor *t = tg_t(v);
    tg_tensor *ct = tg_contiguous(t);
    assert_geom(ct, (int64_t[]){ 3, 2 }, (int64_t[]){ 2, 1 }, 2, 0);
    kt_assert_close(ct, (double[]){ 0, 3, 1, 4, 2, 5 }, 6, 0, 0, "contiguous copy");
    tg_tensor *cl = tg_clone(v);
    cr_assert_neq(tg_tensor_data(cl), tg_tensor_data(v));
    kt_assert_close(cl, (double[]){ 0, 1, 2, 3, 4, 5 }, 6, 0, 0, "clone");
    tg_tensor *same = tg_to(v, TG_FLOAT32);
    cr_assert_eq(same, v, "to(same dtype) returns self");
    tg_tensor *cp = tg_to(v, TG_FLOAT32, .copy = true);
    cr_assert_neq(cp, v);
    tg_tensor *d = tg_to(t, TG_INT64);
    cr_assert_eq(tg_tensor_dtype(d), TG_INT64);
    kt_assert_close(d, (double[]){ 0, 3, 1, 4, 2, 5 }, 6, 0, 0, "to int64 of a transpose");
    tg_tensor *tc = tg__to_copy(v);
    cr_assert_eq(tg_tensor_dtype(tc), TG_FLOAT32);
    kt_release_all(x, v, c, t, ct, cl, same, cp, d, tc);
    kt_assert_no_leak(live);
}
