/* Tensors: creation, reference counts, views and shared version counters, metadata, element
 * access, out= resizing, dim wrapping. */
#include "rt_test.h"
#include "kt_util.h"

#include <pthread.h>
#include <stdlib.h>

TestSuite(rt_tensor, .fini = rt_leak_check);

Test(rt_tensor, create_and_metadata)
{
    float v[6] = { 1, 2, 3, 4, 5, 6 };
    tg_tensor *t = rt_f32(v, (int64_t[]){ 2, 3 }, 2);
    cr_assert_not_null(t);
    cr_expect_eq(tg_tensor_dim(t), 2);
    cr_expect_eq(tg_tensor_size(t, -1), 3);
    cr_expect_eq(tg_tensor_stride(t, 0), 3);
    cr_expect_eq(tg_tensor_numel(t), 6);
    cr_expect(tg_tensor_is_contiguous(t));
    cr_expect_eq((uintptr_t)tg_tensor_data(t) % 64, 0, "64-byte aligned");
    cr_expect_eq(tg_tensor_dtype(t), TG_FLOAT32);
    cr_expect_eq(tg_tensor_device(t).type, TG_CPU);
    rt_expect_values(t, (double[]){ 1, 2, 3, 4, 5, 6 }, 6);
    cr_expect_eq(tg_live_tensors(), 1);
    cr_expect_eq(tg_live_storages(), 1);
    cr_expect_eq(tg_retain(t), t);
    tg_release(t);
    cr_expect_eq(tg_live_tensors(), 1);
    kt_release_all(t, NULL);
}

Test(rt_tensor, large_tensor_is_aligned_and_zero_dim_works)
{
    tg_tensor *big = tg__empty("t", (int64_t[]){ 1000, 3 }, 2, TG_FLOAT64, TG_DEVICE_CPU);
    cr_expect_eq((uintptr_t)tg_tensor_data(big) % 64, 0);
    tg_tensor *s = tg__scalar_tensor(3.5, TG_FLOAT32, TG_DEVICE_CPU);
    cr_expect_eq(tg_tensor_dim(s), 0);
    cr_expect_eq(tg_tensor_numel(s), 1);
    cr_expect_eq(tg_item(s), 3.5);
    cr_expect_eq(tg_tensor_size(s, -1), 1); /* a 0-dim tensor accepts dim -1 and 0 */
    tg_tensor *e = tg__empty("t", (int64_t[]){ 0, 4 }, 2, TG_INT32, TG_DEVICE_CPU);
    cr_expect_eq(tg_tensor_numel(e), 0);
    cr_expect(tg_tensor_is_contiguous(e));
    cr_expect_not_null(tg_tensor_data(e));
    kt_release_all(big, s, e);
}

Test(rt_tensor, bad_shapes_are_errors)
{
    cr_expect_null(tg__empty("empty", (int64_t[]){ -1, 2 }, 2, TG_FLOAT32, TG_DEVICE_CPU));
    cr_expect_str_eq(tg_last_error(),
                     "empty: Trying to create tensor with negative dimension -1: [-1, 2]");
    tg_clear_error();
    cr_expect_null(tg__empty("empty", (int64_t[]){ INT64_MAX, 4 }, 2, TG_FLOAT32, TG_DEVICE_CPU));
    cr_expect_not_null(tg_last_error());
    tg_clear_error();
    cr_expect_null(
        tg__empty("empty", (int64_t[]){ (int64_t)1 << 60 }, 1, TG_FLOAT32, TG_DEVICE_CPU));
    cr_assert_not_null(tg_last_error());
    cr_expect(strstr(tg_last_error(), "not enough memory") != NULL, "%s", tg_last_error());
    tg_clear_error();
    /* no CUDA allocator registered, or (with CUDA) no device 99 */
    cr_expect_null(tg__empty("empty", NULL, 0, TG_FLOAT32, ((tg_device){ TG_CUDA, 99 })));
    tg_clear_error();
}

Test(rt_tensor, views_share_storage_and_version)
{
    tg_tensor *t = rt_arange((int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    /* transpose: sizes [3, 2], strides [1, 3] */
    tg_tensor *tt = tg__make_view(t, (int64_t[]){ 3, 2 }, (int64_t[]){ 1, 3 }, 2, 0);
    cr_expect(!tg_tensor_is_contiguous(tt));
    rt_expect_values(tt, (double[]){ 0, 3, 1, 4, 2, 5 }, 6);
    cr_expect_eq(tg_live_storages(), 1);
    /* a view of a view: row 1 of the transpose = column 1 of t */
    tg_tensor *col = tg__make_view(tt, (int64_t[]){ 2 }, (int64_t[]){ 3 }, 1, 1);
    rt_expect_values(col, (double[]){ 1, 4 }, 2);
    cr_expect_eq(col->view_base, t, "view_base is the root");
    int64_t v0 = tg__version(t);
    tg__bump_version(col);
    cr_expect_eq(tg__version(t), v0 + 1);
    cr_expect_eq(tg__version(tt), v0 + 1);
    /* the base dies first: the views keep storage and version cell alive */
    kt_release_all(t, tt);
    cr_expect_eq(tg_live_tensors(), 2, "col keeps its base alive");
    rt_expect_values(col, (double[]){ 1, 4 }, 2);
    tg__bump_version(col);
    tg_release(col);
}

Test(rt_tensor, storage_outlives_base_header)
{
    tg_tensor *t = rt_arange((int64_t[]){ 4 }, 1, TG_INT64);
    tg_storage *s = t->storage;
    tg__storage_retain(s);
    tg_release(t);
    cr_expect_eq(tg_live_tensors(), 0);
    cr_expect_eq(tg_live_storages(), 1);
    cr_expect_eq(((int64_t *)s->data)[3], 3);
    tg__storage_release(s);
}

Test(rt_tensor, to_doubles_item)
{
    tg_tensor *t = rt_arange((int64_t[]){ 3 }, 1, TG_INT32);
    double d[2];
    cr_expect_eq(tg_tensor_to_doubles(t, d, 2), -1);
    cr_expect_not_null(tg_last_error());
    tg_clear_error();
    cr_expect(isnan(tg_item(t)));
    cr_expect_str_eq(tg_last_error(),
                     "item: a Tensor with 3 elements cannot be converted to Scalar");
    tg_clear_error();
    cr_expect(isnan(tg_item(NULL)));
    cr_expect_null(tg_last_error(), "NULL in: no new error");
    tg_release(t);
}

Test(rt_tensor, wrap_dim)
{
    cr_expect_eq(tg__wrap_dim("sum", -1, 2), 1);
    cr_expect_eq(tg__wrap_dim("sum", 0, 0), 0);
    cr_expect_eq(tg__wrap_dim("sum", 3, 2), -1);
    cr_expect_str_eq(tg_last_error(),
                     "sum: Dimension out of range (expected to be in range of [-2, 1], but got 3)");
    tg_clear_error();
}

Test(rt_tensor, resize_out)
{
    tg_tensor *e = tg__empty("t", (int64_t[]){ 0 }, 1, TG_FLOAT32, TG_DEVICE_CPU);
    cr_expect_eq(tg__resize_out("add", e, (int64_t[]){ 3, 2 }, 2), 0);
    cr_expect_eq(tg_tensor_numel(e), 6);
    cr_expect(tg_tensor_is_contiguous(e));
    cr_expect_eq(tg__resize_out("add", e, (int64_t[]){ 3, 2 }, 2), 0);
    cr_expect_eq(tg__resize_out("add", e, (int64_t[]){ 2 }, 1), -1);
    cr_expect(strstr(tg_last_error(),
                     "add: output with shape [3, 2] doesn't match the required output shape [2]") ==
              tg_last_error());
    tg_clear_error();
    tg_release(e);
}

Test(rt_tensor, requires_grad_flag)
{
    tg_tensor *f = rt_arange((int64_t[]){ 2 }, 1, TG_FLOAT32);
    tg_tensor *i = rt_arange((int64_t[]){ 2 }, 1, TG_INT64);
    cr_expect_eq(tg_tensor_set_requires_grad(f, true), f);
    cr_expect(tg_tensor_requires_grad(f));
    cr_expect_null(tg_tensor_grad(f));
    tg_tensor_set_requires_grad(i, true);
    cr_expect(!tg_tensor_requires_grad(i));
    cr_expect_str_eq(
        tg_last_error(),
        "requires_grad_: only Tensors of floating point and complex dtype can require gradients");
    tg_clear_error();
    kt_release_all(f, i);
}

static int deleted;
static void deleter(void *data, void *ctx)
{
    (void)data;
    deleted += *(int *)ctx;
}

Test(rt_tensor, from_blob)
{
    double buf[6] = { 0, 1, 2, 3, 4, 5 };
    int one = 1;
    deleted = 0;
    /* a transposed view of a 2x3 row-major buffer */
    tg_tensor *t = tg_tensor_from_blob(buf, (int64_t[]){ 3, 2 }, (int64_t[]){ 1, 3 }, 2, TG_FLOAT64,
                                       deleter, &one);
    rt_expect_values(t, (double[]){ 0, 3, 1, 4, 2, 5 }, 6);
    tg_tensor *v = tg__make_view(t, (int64_t[]){ 2 }, (int64_t[]){ 3 }, 1, 0);
    tg_release(t);
    cr_expect_eq(deleted, 0);
    tg_release(v);
    cr_expect_eq(deleted, 1);
}

Test(rt_tensor, wrapped_scalar)
{
    tg_tensor *a = tg__wrapped_scalar(3, true), *b = tg__wrapped_scalar(2.5, false);
    cr_expect_eq(a->dtype, TG_INT64);
    cr_expect(a->is_wrapped_number);
    cr_expect_eq(b->dtype, TG_FLOAT64);
    cr_expect_eq(tg_item(b), 2.5);
    kt_release_all(a, b);
}

static void *churn(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        tg_tensor *t = tg__empty("t", (int64_t[]){ 1 + i % 40 }, 1, TG_FLOAT32, TG_DEVICE_CPU);
        tg_tensor *v = tg__make_view(t, (int64_t[]){ 1 }, (int64_t[]){ 1 }, 1, 0);
        kt_release_all(t, v);
    }
    return NULL;
}

Test(rt_tensor, threads_create_and_free)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, churn, NULL);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
}
