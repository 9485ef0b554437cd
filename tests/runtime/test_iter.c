/* The iterator: broadcasting, promotion, strided/transposed/expanded inputs, out= and in-place
 * checks, coalescing, parallel ranges. Kernels here are hand-written loops (rt_test.h). */
#include "rt_test.h"
#include "fake_device.h"
#include "kt_util.h"

#include <stdlib.h>

TestSuite(rt_iter, .fini = rt_leak_check);

Test(rt_iter, broadcast_values)
{
    tg_tensor *a = rt_arange((int64_t[]){ 3, 1 }, 2, TG_FLOAT32);
    tg_tensor *b = rt_arange((int64_t[]){ 4 }, 1, TG_FLOAT32);
    tg_tensor *c = rt_add(a, b, NULL, TG_ITER_PROMOTE_INPUTS);
    cr_assert_not_null(c);
    cr_expect_eq(tg_tensor_dim(c), 2);
    cr_expect_eq(tg_tensor_size(c, 0), 3);
    cr_expect_eq(tg_tensor_size(c, 1), 4);
    rt_expect_values(c, (double[]){ 0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5 }, 12);
    kt_release_all(a, b, c);
}

Test(rt_iter, broadcast_error_message)
{
    tg_tensor *a = rt_arange((int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *b = rt_arange((int64_t[]){ 2, 4 }, 2, TG_FLOAT32);
    cr_expect_null(rt_add(a, b, NULL, TG_ITER_PROMOTE_INPUTS));
    cr_expect_str_eq(tg_last_error(), "add: The size of tensor a (3) must match the size of "
                                      "tensor b (4) at non-singleton dimension 1");
    tg_clear_error();
    tg_tensor *c = rt_arange((int64_t[]){ 5, 1, 3 }, 3, TG_FLOAT32);
    tg_tensor *d = rt_arange((int64_t[]){ 4, 2 }, 2, TG_FLOAT32);
    cr_expect_null(rt_add(c, d, NULL, TG_ITER_PROMOTE_INPUTS));
    cr_expect_str_eq(tg_last_error(), "add: The size of tensor a (3) must match the size of "
                                      "tensor b (2) at non-singleton dimension 2");
    tg_clear_error();
    kt_release_all(a, b, c, d);
}

Test(rt_iter, transposed_and_expanded_inputs)
{
    tg_tensor *t = rt_arange((int64_t[]){ 3, 4 }, 2, TG_FLOAT32);
    tg_tensor *tt = tg__make_view(t, (int64_t[]){ 4, 3 }, (int64_t[]){ 1, 4 }, 2, 0); /* t.T */
    tg_tensor *row = rt_arange((int64_t[]){ 3 }, 1, TG_FLOAT32);
    tg_tensor *ex = tg__make_view(row, (int64_t[]){ 4, 3 }, (int64_t[]){ 0, 1 }, 2, 0); /* expand */
    tg_tensor *c = rt_add(tt, ex, NULL, TG_ITER_PROMOTE_INPUTS);
    double want[12];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) want[i * 3 + j] = (j * 4 + i) + j;
    rt_expect_values(c, want, 12);
    cr_expect(tg_tensor_is_contiguous(c));
    kt_release_all(t, tt, row, ex, c);
}

Test(rt_iter, strided_output_and_reordering)
{
    /* Writing into a transposed out: the iteration follows the output's memory order. */
    tg_tensor *base = tg__empty("t", (int64_t[]){ 4, 3 }, 2, TG_FLOAT32, TG_DEVICE_CPU);
    tg_tensor *out = tg__make_view(base, (int64_t[]){ 3, 4 }, (int64_t[]){ 1, 3 }, 2, 0);
    tg_tensor *a = rt_arange((int64_t[]){ 3, 4 }, 2, TG_FLOAT32);
    tg_tensor *z = tg__scalar_tensor(0, TG_FLOAT32, TG_DEVICE_CPU);
    tg_iter it;
    cr_assert_eq(tg__iter_build(&it, "add", TG_ITER_PROMOTE_INPUTS, (tg_tensor *[]){ out }, 1,
                                (tg_tensor *[]){ a, z }, 2),
                 0);
    cr_expect_eq(it.ndim, 2);
    cr_expect_eq(it.strides[0][0], 4, "output's unit stride dim is the fastest");
    cr_expect_eq(it.strides[2][0], 0, "zero-dim input: stride 0");
    tg__iter_for_each(&it, rt_add_loop, &it);
    tg_tensor *r = tg__iter_finish(&it, 0);
    cr_expect_eq(r, out);
    double want[12];
    for (int i = 0; i < 12; i++) want[i] = i;
    rt_expect_values(out, want, 12);
    kt_release_all(r, out, base, a, z);
}

Test(rt_iter, coalescing)
{
    tg_tensor *a = rt_arange((int64_t[]){ 2, 3, 4 }, 3, TG_FLOAT32);
    tg_iter it;
    cr_assert_eq(tg__iter_build(&it, "neg", 0, (tg_tensor *[]){ NULL }, 1, (tg_tensor *[]){ a }, 1),
                 0);
    cr_expect_eq(it.ndim, 1);
    cr_expect_eq(it.sizes[0], 24);
    cr_expect(it.is_contiguous);
    tg__iter_abort(&it);
    /* a [4, 6] slice of a [4, 8] tensor: rows are not adjacent, two dims remain */
    tg_tensor *w = rt_arange((int64_t[]){ 4, 8 }, 2, TG_FLOAT32);
    tg_tensor *s = tg__make_view(w, (int64_t[]){ 4, 6 }, (int64_t[]){ 8, 1 }, 2, 1);
    cr_assert_eq(tg__iter_build(&it, "neg", 0, (tg_tensor *[]){ NULL }, 1, (tg_tensor *[]){ s }, 1),
                 0);
    cr_expect_eq(it.ndim, 2);
    cr_expect_eq(it.sizes[0], 6);
    cr_expect(!it.is_contiguous);
    tg__iter_abort(&it);
    /* size-1 dims vanish: [2, 1, 3] contiguous is one dim */
    tg_tensor *u = rt_arange((int64_t[]){ 2, 1, 3 }, 3, TG_FLOAT32);
    cr_assert_eq(tg__iter_build(&it, "neg", 0, (tg_tensor *[]){ NULL }, 1, (tg_tensor *[]){ u }, 1),
                 0);
    cr_expect_eq(it.ndim, 1);
    tg__iter_abort(&it);
    kt_release_all(a, w, s, u);
}

Test(rt_iter, promotion_and_conversion)
{
    /* int64 tensor + wrapped 2.5 -> float32, the scalar converted without a temporary */
    tg_tensor *i = rt_arange((int64_t[]){ 3 }, 1, TG_INT64);
    tg_tensor *s = tg__wrapped_scalar(2.5, false);
    int64_t live = tg_live_tensors();
    tg_iter it;
    cr_assert_eq(tg__iter_build(&it, "add", TG_ITER_PROMOTE_INPUTS, (tg_tensor *[]){ NULL }, 1,
                                (tg_tensor *[]){ i, s }, 2),
                 0);
    cr_expect_eq(it.dtype, TG_FLOAT32);
    cr_expect_eq(it.dtypes[1], TG_FLOAT32);
    cr_expect_eq(it.dtypes[2], TG_FLOAT32);
    cr_expect_eq(tg_live_tensors(), live + 2, "output + one converted input, no scalar temporary");
    tg__iter_for_each(&it, rt_add_loop, &it);
    tg_tensor *c = tg__iter_finish(&it, 0);
    cr_expect_eq(c->dtype, TG_FLOAT32);
    rt_expect_values(c, (double[]){ 2.5, 3.5, 4.5 }, 3);
    tg_release(c);
    /* a transposed int32 + float64 tensor: the int input goes through a temporary */
    tg_tensor *m = rt_arange((int64_t[]){ 2, 2 }, 2, TG_INT32);
    tg_tensor *mt = tg__make_view(m, (int64_t[]){ 2, 2 }, (int64_t[]){ 1, 2 }, 2, 0);
    tg_tensor *d = rt_arange((int64_t[]){ 2, 2 }, 2, TG_FLOAT64);
    c = rt_add(mt, d, NULL, TG_ITER_PROMOTE_INPUTS);
    cr_expect_eq(c->dtype, TG_FLOAT64);
    rt_expect_values(c, (double[]){ 0, 3, 3, 6 }, 4);
    tg_release(c);
    /* INT_TO_FLOAT: int inputs compute in the default float */
    c = rt_add(i, i, NULL, TG_ITER_PROMOTE_INPUTS | TG_ITER_INT_TO_FLOAT);
    cr_expect_eq(c->dtype, TG_FLOAT32);
    tg_release(c);
    /* NO_INPUT_CAST: the kernel sees each input's own dtype */
    cr_assert_eq(tg__iter_build(&it, "add", TG_ITER_PROMOTE_INPUTS | TG_ITER_NO_INPUT_CAST,
                                (tg_tensor *[]){ NULL }, 1, (tg_tensor *[]){ i, d }, 2),
                 -1);
    tg_clear_error(); /* [3] vs [2, 2] */
    cr_assert_eq(tg__iter_build(&it, "add", TG_ITER_PROMOTE_INPUTS | TG_ITER_NO_INPUT_CAST,
                                (tg_tensor *[]){ NULL }, 1, (tg_tensor *[]){ i, s }, 2),
                 0);
    cr_expect_eq(it.dtypes[1], TG_INT64);
    cr_expect_eq(it.dtypes[2], TG_FLOAT64);
    cr_expect_eq(it.dtypes[0], TG_FLOAT32);
    tg__iter_abort(&it);
    kt_release_all(i, s, m, mt, d);
}

static void cmp_lt(char **d, const int64_t *s, int64_t n, void *ctx)
{
    const tg_iter *it = ctx;
    for (int64_t i = 0; i < n; i++)
        *(bool *)(d[0] + i * s[0]) = tg__load_double(d[1] + i * s[1], it->dtypes[1]) <
                                     tg__load_double(d[2] + i * s[2], it->dtypes[2]);
}

Test(rt_iter, bool_output)
{
    tg_tensor *a = rt_arange((int64_t[]){ 4 }, 1, TG_INT32);
    tg_tensor *b = tg__wrapped_scalar(1.5, false);
    tg_iter it;
    cr_assert_eq(tg__iter_build(&it, "lt", TG_ITER_PROMOTE_INPUTS | TG_ITER_BOOL_OUTPUT,
                                (tg_tensor *[]){ NULL }, 1, (tg_tensor *[]){ a, b }, 2),
                 0);
    cr_expect_eq(it.dtype, TG_FLOAT32);
    cr_expect_eq(it.dtypes[0], TG_BOOL);
    tg__iter_for_each(&it, cmp_lt, &it);
    tg_tensor *c = tg__iter_finish(&it, 0);
    cr_expect_eq(c->dtype, TG_BOOL);
    rt_expect_values(c, (double[]){ 1, 1, 0, 0 }, 4);
    /* a float out= for a comparison: computed as bool, converted on the way back */
    tg_tensor *o = tg__empty("t", (int64_t[]){ 4 }, 1, TG_FLOAT64, TG_DEVICE_CPU);
    cr_assert_eq(tg__iter_build(&it, "lt", TG_ITER_PROMOTE_INPUTS | TG_ITER_BOOL_OUTPUT,
                                (tg_tensor *[]){ o }, 1, (tg_tensor *[]){ a, b }, 2),
                 0);
    tg__iter_for_each(&it, cmp_lt, &it);
    tg_tensor *r = tg__iter_finish(&it, 0);
    cr_expect_eq(r, o);
    rt_expect_values(o, (double[]){ 1, 1, 0, 0 }, 4);
    kt_release_all(a, b, c, o, r);
}

Test(rt_iter, out_checks)
{
    tg_tensor *a = rt_arange((int64_t[]){ 3, 2 }, 2, TG_FLOAT32);
    tg_tensor *b = rt_arange((int64_t[]){ 2 }, 1, TG_FLOAT32);
    /* a zero-element out is resized */
    tg_tensor *e = tg__empty("t", (int64_t[]){ 0 }, 1, TG_FLOAT32, TG_DEVICE_CPU);
    tg_tensor *r = rt_add(a, b, e, TG_ITER_PROMOTE_INPUTS);
    cr_expect_eq(r, e);
    cr_expect_eq(tg_tensor_numel(e), 6);
    rt_expect_values(e, (double[]){ 0, 2, 2, 4, 4, 6 }, 6);
    tg_release(r);
    /* an out with elements must have the exact shape */
    tg_tensor *o = tg__empty("t", (int64_t[]){ 2 }, 1, TG_FLOAT32, TG_DEVICE_CPU);
    cr_expect_null(rt_add(a, b, o, TG_ITER_PROMOTE_INPUTS));
    cr_expect_str_eq(tg_last_error(),
                     "add: output with shape [2] doesn't match the broadcast shape [3, 2]");
    tg_clear_error();
    /* in place (out is an input) may not grow */
    cr_expect_null(rt_add(b, a, b, TG_ITER_PROMOTE_INPUTS));
    cr_expect_str_eq(tg_last_error(),
                     "add: output with shape [2] doesn't match the broadcast shape [3, 2]");
    tg_clear_error();
    /* a float result cannot go into an int64 out */
    tg_tensor *l = tg__empty("t", (int64_t[]){ 3, 2 }, 2, TG_INT64, TG_DEVICE_CPU);
    cr_expect_null(rt_add(a, b, l, TG_ITER_PROMOTE_INPUTS));
    cr_expect_str_eq(tg_last_error(),
                     "add: result type Float can't be cast to the desired output type Long");
    tg_clear_error();
    /* a float64 out for a float32 result: temporary, copied back, version bumped */
    tg_tensor *d = tg__empty("t", (int64_t[]){ 3, 2 }, 2, TG_FLOAT64, TG_DEVICE_CPU);
    int64_t v = tg__version(d);
    r = rt_add(a, b, d, TG_ITER_PROMOTE_INPUTS);
    cr_expect_eq(r, d);
    cr_expect_eq(tg__version(d), v + 1);
    rt_expect_values(d, (double[]){ 0, 2, 2, 4, 4, 6 }, 6);
    tg_release(r);
    /* in place with broadcasting of the other operand is fine */
    r = rt_add(a, b, a, TG_ITER_PROMOTE_INPUTS);
    cr_expect_eq(r, a);
    rt_expect_values(a, (double[]){ 0, 2, 2, 4, 4, 6 }, 6);
    tg_release(r);
    /* writing through a broadcast view is refused */
    tg_tensor *ex = tg__make_view(b, (int64_t[]){ 3, 2 }, (int64_t[]){ 0, 1 }, 2, 0);
    cr_expect_null(rt_add(a, a, ex, TG_ITER_PROMOTE_INPUTS));
    cr_expect(strstr(tg_last_error(), "unsupported operation: more than one element") != NULL);
    tg_clear_error();
    kt_release_all(a, b, e, o, l, d, ex);
}

Test(rt_iter, zero_dim_and_empty)
{
    tg_tensor *a = tg__scalar_tensor(2, TG_FLOAT32, TG_DEVICE_CPU);
    tg_tensor *b = tg__scalar_tensor(3, TG_FLOAT32, TG_DEVICE_CPU);
    tg_tensor *c = rt_add(a, b, NULL, TG_ITER_PROMOTE_INPUTS);
    cr_expect_eq(tg_tensor_dim(c), 0);
    cr_expect_eq(tg_item(c), 5);
    tg_release(c);
    tg_tensor *e = tg__empty("t", (int64_t[]){ 0, 3 }, 2, TG_FLOAT32, TG_DEVICE_CPU);
    tg_tensor *r = rt_arange((int64_t[]){ 3 }, 1, TG_FLOAT32);
    c = rt_add(e, r, NULL, TG_ITER_PROMOTE_INPUTS);
    cr_assert_not_null(c);
    cr_expect_eq(tg_tensor_size(c, 0), 0);
    cr_expect_eq(tg_tensor_size(c, 1), 3);
    kt_release_all(a, b, c, e, r);
}

static int64_t calls, elems;
static void count_loop(char **d, const int64_t *s, int64_t n, void *ctx)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) *(float *)(d[0] + i * s[0]) = *(float *)(d[1] + i * s[1]) * 2;
    __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&elems, n, __ATOMIC_RELAXED);
}

Test(rt_iter, parallel_contiguous_is_one_call_per_thread)
{
    tg_set_num_threads(2);
    int64_t n = 1 << 20;
    tg_tensor *a = rt_arange(&n, 1, TG_FLOAT32);
    tg_iter it;
    cr_assert_eq(tg__iter_build(&it, "mul", 0, (tg_tensor *[]){ NULL }, 1, (tg_tensor *[]){ a }, 1),
                 0);
    calls = elems = 0;
    tg__iter_for_each(&it, count_loop, NULL);
    tg_tensor *c = tg__iter_finish(&it, 0);
    cr_expect_leq(calls, 2);
    cr_expect_eq(elems, n);
    float *p = tg_tensor_data(c);
    for (int64_t i = 0; i < n; i += 4099) cr_assert_eq(p[i], 2.0f * i);
    kt_release_all(a, c);
}

Test(rt_iter, parallel_strided_ranges_start_mid_row)
{
    tg_set_num_threads(2);
    /* [301, 257] transposed: 77357 elements, two threads, rows of 301 split mid-row */
    tg_tensor *a = rt_arange((int64_t[]){ 257, 301 }, 2, TG_FLOAT32);
    tg_tensor *t = tg__make_view(a, (int64_t[]){ 301, 257 }, (int64_t[]){ 1, 301 }, 2, 0);
    tg_tensor *o = tg__empty("t", (int64_t[]){ 301, 257 }, 2, TG_FLOAT32, TG_DEVICE_CPU);
    tg_iter it;
    cr_assert_eq(tg__iter_build(&it, "mul", 0, (tg_tensor *[]){ o }, 1, (tg_tensor *[]){ t }, 1),
                 0);
    cr_expect_eq(it.ndim, 2);
    calls = elems = 0;
    tg__iter_for_each(&it, count_loop, NULL);
    tg_release(tg__iter_finish(&it, 0));
    cr_expect_eq(elems, 301 * 257);
    const float *p = tg_tensor_data(o);
    for (int64_t i = 0; i < 301; i++)
        for (int64_t j = 0; j < 257; j++)
            cr_assert_eq(p[i * 257 + j], 2.0f * (j * 301 + i), "at %lld,%lld", (long long)i,
                         (long long)j);
    kt_release_all(a, t, o);
}

static void split_loop(char **d, const int64_t *s, int64_t n, void *ctx)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) {
        double x = *(float *)(d[2] + i * s[2]);
        *(float *)(d[0] + i * s[0]) = (float)floor(x);
        *(float *)(d[1] + i * s[1]) = (float)(x - floor(x));
    }
}

Test(rt_iter, two_outputs)
{
    float v[3] = { 1.5f, 2.25f, -0.5f };
    tg_tensor *a = rt_f32(v, (int64_t[]){ 3 }, 1);
    tg_iter it;
    cr_assert_eq(
        tg__iter_build(&it, "modf", 0, (tg_tensor *[]){ NULL, NULL }, 2, (tg_tensor *[]){ a }, 1),
        0);
    tg__iter_for_each(&it, split_loop, NULL);
    tg_tensor *outs[2];
    cr_assert_eq(tg__iter_finish_all(&it, outs), 0);
    rt_expect_values(outs[0], (double[]){ 1, 2, -1 }, 3);
    rt_expect_values(outs[1], (double[]){ 0.5, 0.25, 0.5 }, 3);
    kt_release_all(a, outs[0], outs[1]);
}

Test(rt_iter, device_mismatch)
{
    tg__register_device_hooks(TG_CUDA, &tg_test_fake_cuda);
    tg_device cuda = { TG_CUDA, 0 };
    tg_tensor *g = tg__empty("t", (int64_t[]){ 2 }, 1, TG_FLOAT32, cuda);
    tg_tensor *c = rt_arange((int64_t[]){ 2 }, 1, TG_FLOAT32);
    cr_expect_null(rt_add(c, g, NULL, TG_ITER_PROMOTE_INPUTS));
    cr_expect_str_eq(tg_last_error(), "add: Expected all tensors to be on the same device, but "
                                      "found at least two devices, cpu and cuda:0!");
    tg_clear_error();
    /* a CPU zero-dim tensor may join a CUDA iteration; the result lives on CUDA */
    tg_tensor *s = tg__scalar_tensor(1, TG_FLOAT32, TG_DEVICE_CPU);
    tg_iter it;
    cr_assert_eq(tg__iter_build(&it, "add", TG_ITER_PROMOTE_INPUTS, (tg_tensor *[]){ NULL }, 1,
                                (tg_tensor *[]){ g, s }, 2),
                 0);
    cr_expect_eq(it.operands[0]->device.type, TG_CUDA);
    tg__iter_abort(&it);
    /* device tensors can be read back through the allocator's copy hook */
    tg_tensor *h = rt_arange((int64_t[]){ 2 }, 1, TG_FLOAT32);
    cr_assert_eq(tg__copy_into("copy_", g, h), 0);
    rt_expect_values(g, (double[]){ 0, 1 }, 2);
    kt_release_all(g, c, s, h);
}
