/* cat and stack: PyTorch's rules, checked by hand-computed expectations (small inputs, exact
 * comparisons: |got - want| == 0). */
#include "kt_util.h"
#include "tg_cover.h"

TG_COVERS("cat", "cat.out", "stack", "stack.out");

static tg_tensor *seq(int64_t r, int64_t c, double start, tg_dtype dt)
{
    double v[64];
    for (int64_t i = 0; i < r * c; i++) v[i] = start + (double)i;
    return kt_tensor(v, (int64_t[]){ r, c }, 2, dt);
}

Test(shape, cat_dims)
{
    kt_live live = kt_live_now();
    tg_tensor *a = seq(2, 3, 0, TG_FLOAT32), *b = seq(1, 3, 10, TG_FLOAT32),
              *c = seq(2, 2, 20, TG_FLOAT32);
    tg_tensor *r0 = tg_cat(TG_TENSORS(a, b));
    kt_assert_shape(r0, (int64_t[]){ 3, 3 }, 2);
    kt_assert_close(r0, (double[]){ 0, 1, 2, 3, 4, 5, 10, 11, 12 }, 9, 0, 0, "cat dim 0");
    tg_tensor *r1 = tg_cat(TG_TENSORS(a, c), .dim = -1);
    kt_assert_shape(r1, (int64_t[]){ 2, 5 }, 2);
    kt_assert_close(r1, (double[]){ 0, 1, 2, 20, 21, 3, 4, 5, 22, 23 }, 10, 0, 0, "cat dim 1");
    /* non-contiguous input: a^T (3, 2) with c (2, 2)^T... along dim 1 of (3, x) */
    tg_tensor *at = tg_t(a);
    tg_tensor *bt = tg_t(b);
    tg_tensor *r2 = tg_cat(TG_TENSORS(at, bt), .dim = 1);
    kt_assert_shape(r2, (int64_t[]){ 3, 3 }, 2);
    kt_assert_close(r2, (double[]){ 0, 3, 10, 1, 4, 11, 2, 5, 12 }, 9, 0, 0, "cat of transposes");
    kt_release_all(a, b, c, r0, r1, at, bt, r2);
    kt_assert_no_leak(live);
}

Test(shape, cat_promotion_and_legacy_empty)
{
    kt_live live = kt_live_now();
    tg_tensor *a = seq(1, 2, 1, TG_INT64), *b = seq(1, 2, 0.5, TG_FLOAT32),
              *e = kt_tensor(NULL, (int64_t[]){ 0 }, 1, TG_FLOAT64);
    tg_tensor *r = tg_cat(TG_TENSORS(a, e, b));
    cr_assert(r, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_dtype(r), TG_FLOAT64, "promotion includes the skipped empty tensor");
    kt_assert_shape(r, (int64_t[]){ 2, 2 }, 2);
    kt_assert_close(r, (double[]){ 1, 2, 0.5, 1.5 }, 4, 0, 0, "cat int64 + float32");
    tg_tensor *r2 = tg_cat(TG_TENSORS(e, e));
    kt_assert_shape(r2, (int64_t[]){ 0 }, 1);
    kt_release_all(a, b, e, r, r2);
    kt_assert_no_leak(live);
}

Test(shape, cat_out_and_errors)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *a = seq(2, 2, 0, TG_FLOAT32), *b = seq(2, 3, 0, TG_FLOAT32),
              *i = seq(2, 2, 0, TG_INT64);
    tg_tensor *out = kt_tensor(NULL, (int64_t[]){ 0 }, 1, TG_FLOAT64);
    tg_tensor *r = tg_cat_out(TG_TENSORS(a, b), out, .dim = 1);
    cr_assert_eq(r, out);
    kt_assert_shape(out, (int64_t[]){ 2, 5 }, 2);
    kt_assert_close(out, (double[]){ 0, 1, 0, 1, 2, 2, 3, 3, 4, 5 }, 10, 0, 0, "cat out= float64");
    tg_release(r);
    tg_tensor *oi = kt_tensor(NULL, (int64_t[]){ 4, 2 }, 2, TG_INT64);
    kt_expect_error(tg_cat_out(TG_TENSORS(a, i), oi),
                    "result type Float can't be cast to the desired output type Long");
    kt_expect_error(
        tg_cat_out(TG_TENSORS(a, a), a),
        "unsupported operation: the input tensors cannot refer to any of the output memory locations");
    kt_expect_error(
        tg_cat(TG_TENSORS(a, b)),
        "Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for tensor number 1 in the list.");
    kt_expect_error(tg_cat(((tg_tensor_list){ NULL, 0 })),
                    "torch.cat(): expected a non-empty list of Tensors");
    tg_tensor *z = kt_tensor((double[]){ 1 }, NULL, 0, TG_FLOAT32);
    kt_expect_error(tg_cat(TG_TENSORS(a, z)),
                    "zero-dimensional tensor (at position 1) cannot be concatenated");
    tg_tensor *v = kt_tensor((double[]){ 1, 2 }, (int64_t[]){ 2 }, 1, TG_FLOAT32);
    kt_expect_error(tg_cat(TG_TENSORS(a, v)),
                    "Tensors must have same number of dimensions: got 2 and 1");
    kt_expect_error(tg_cat(TG_TENSORS(a, a), .dim = 2), "Dimension out of range");
    kt_release_all(a, b, i, out, oi, z, v);
    kt_assert_no_leak(live);
}

Test(shape, cat_large_parallel)
{
    kt_live live = kt_live_now();
    const int64_t R = 3000, C1 = 40, C2 = 25;
    double *x = malloc(sizeof(double) * R * C1), *y = malloc(sizeof(double) * R * C2),
           *w = malloc(sizeof(double) * R * (C1 + C2));
    kt_fill_random(x, R * C1, 1, -1, 1);
    kt_fill_random(y, R * C2, 2, -1, 1);
    for (int64_t i = 0; i < R; i++) {
        for (int64_t j = 0; j < C1; j++) w[i * (C1 + C2) + j] = x[i * C1 + j];
        for (int64_t j = 0; j < C2; j++) w[i * (C1 + C2) + C1 + j] = y[i * C2 + j];
    }
    tg_tensor *a = kt_tensor(x, (int64_t[]){ R, C1 }, 2, TG_FLOAT64),
              *b = kt_tensor(y, (int64_t[]){ R, C2 }, 2, TG_FLOAT64);
    tg_tensor *r = tg_cat(TG_TENSORS(a, b), .dim = 1);
    kt_assert_close(r, w, R * (C1 + C2), 0, 0, "large cat dim 1");
    kt_release_all(a, b, r);
    free(x);
    free(y);
    free(w);
    kt_assert_no_leak(live);
}

Test(shape, stack)
{
    kt_live live = kt_live_now();
    tg_clear_error();
    tg_tensor *a = seq(1, 3, 0, TG_FLOAT32), *b = seq(1, 3, 10, TG_FLOAT32);
    tg_tensor *a1 = tg_view(a, TG_INTS(3)), *b1 = tg_view(b, TG_INTS(3));
    tg_tensor *s0 = tg_stack(TG_TENSORS(a1, b1));
    kt_assert_shape(s0, (int64_t[]){ 2, 3 }, 2);
    kt_assert_close(s0, (double[]){ 0, 1, 2, 10, 11, 12 }, 6, 0, 0, "stack dim 0");
    tg_tensor *s1 = tg_stack(TG_TENSORS(a1, b1), .dim = -1);
    kt_assert_shape(s1, (int64_t[]){ 3, 2 }, 2);
    kt_assert_close(s1, (double[]){ 0, 10, 1, 11, 2, 12 }, 6, 0, 0, "stack dim -1");
    tg_tensor *out = kt_tensor(NULL, (int64_t[]){ 3, 2 }, 2, TG_FLOAT32);
    tg_tensor *so = tg_stack_out(TG_TENSORS(a1, b1), out, .dim = 1);
    cr_assert_eq(so, out);
    kt_assert_close(out, (double[]){ 0, 10, 1, 11, 2, 12 }, 6, 0, 0, "stack out=");
    kt_expect_error(
        tg_stack(TG_TENSORS(a1, a)),
        "stack expects each tensor to be equal size, but got [3] at entry 0 and [1, 3] at entry 1");
    kt_expect_error(tg_stack(((tg_tensor_list){ NULL, 0 })),
                    "stack expects a non-empty TensorList");
    kt_release_all(a, b, a1, b1, s0, s1, out, so);
    kt_assert_no_leak(live);
}
