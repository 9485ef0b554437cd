/* tg_tensor_to_string against PyTorch's repr for small tensors. */
#include "rt_test.h"
#include "tensorgen.h"

#include <stdlib.h>

TestSuite(rt_print, .fini = rt_leak_check);

static void expect_repr(tg_tensor *t, const char *want)
{
    char *s = tg_tensor_to_string(t);
    cr_assert_not_null(s);
    cr_expect_str_eq(s, want);
    free(s);
    tg_release(t);
}

static tg_tensor *vals(const double *v, const int64_t *sizes, int64_t nd, tg_dtype dt)
{
    tg_tensor *t = tg__empty("t", sizes, nd, dt, TG_DEVICE_CPU);
    int64_t n = tg__numel(t);
    for (int64_t i = 0; i < n; i++)
        tg__store_double((char *)tg_tensor_data(t) + i * (int64_t)tg_dtype_size(dt), dt, v[i]);
    return t;
}

Test(rt_print, floats)
{
    expect_repr(vals((double[]){ 1, 2, 3 }, (int64_t[]){ 3 }, 1, TG_FLOAT32),
                "tensor([1., 2., 3.])");
    expect_repr(vals((double[]){ 1.5, 2.25 }, (int64_t[]){ 2 }, 1, TG_FLOAT32),
                "tensor([1.5000, 2.2500])");
    expect_repr(vals((double[]){ -1.5, 20.25 }, (int64_t[]){ 2 }, 1, TG_FLOAT32),
                "tensor([-1.5000, 20.2500])");
    expect_repr(vals((double[]){ 1e-5, 1 }, (int64_t[]){ 2 }, 1, TG_FLOAT32),
                "tensor([1.0000e-05, 1.0000e+00])");
    expect_repr(vals((double[]){ NAN, 1.5, INFINITY }, (int64_t[]){ 3 }, 1, TG_FLOAT32),
                "tensor([   nan, 1.5000,    inf])");
    expect_repr(vals((double[]){ 1, 2, 3, 4 }, (int64_t[]){ 2, 2 }, 2, TG_FLOAT64),
                "tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64)");
    expect_repr(
        vals((double[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, (int64_t[]){ 2, 2, 2 }, 3, TG_FLOAT32),
        "tensor([[[0., 1.],\n         [2., 3.]],\n\n        [[4., 5.],\n         [6., 7.]]])");
    expect_repr(tg__scalar_tensor(3, TG_FLOAT32, TG_DEVICE_CPU), "tensor(3.)");
    expect_repr(tg__scalar_tensor(0.5, TG_FLOAT16, TG_DEVICE_CPU),
                "tensor(0.5000, dtype=torch.float16)");
}

Test(rt_print, ints_and_bools)
{
    expect_repr(vals((double[]){ 1, 20, 300 }, (int64_t[]){ 3 }, 1, TG_INT64),
                "tensor([  1,  20, 300])");
    expect_repr(vals((double[]){ -1, 2 }, (int64_t[]){ 2 }, 1, TG_INT32),
                "tensor([-1,  2], dtype=torch.int32)");
    expect_repr(vals((double[]){ 1, 0 }, (int64_t[]){ 2 }, 1, TG_BOOL), "tensor([ True, False])");
    expect_repr(tg__scalar_tensor(3, TG_INT64, TG_DEVICE_CPU), "tensor(3)");
}

Test(rt_print, empty)
{
    expect_repr(tg__empty("t", (int64_t[]){ 0 }, 1, TG_FLOAT32, TG_DEVICE_CPU), "tensor([])");
    expect_repr(tg__empty("t", (int64_t[]){ 0, 3 }, 2, TG_FLOAT32, TG_DEVICE_CPU),
                "tensor([], size=(0, 3))");
    expect_repr(tg__empty("t", (int64_t[]){ 0 }, 1, TG_INT64, TG_DEVICE_CPU),
                "tensor([], dtype=torch.int64)");
}

Test(rt_print, wrapping_and_summary)
{
    expect_repr(rt_arange((int64_t[]){ 30 }, 1, TG_FLOAT32),
                "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
                "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
                "        28., 29.])");
    expect_repr(rt_arange((int64_t[]){ 2000 }, 1, TG_INT64),
                "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
    expect_repr(rt_arange((int64_t[]){ 100, 20 }, 2, TG_INT64),
                "tensor([[   0,    1,    2,  ...,   17,   18,   19],\n"
                "        [  20,   21,   22,  ...,   37,   38,   39],\n"
                "        [  40,   41,   42,  ...,   57,   58,   59],\n"
                "        ...,\n"
                "        [1940, 1941, 1942,  ..., 1957, 1958, 1959],\n"
                "        [1960, 1961, 1962,  ..., 1977, 1978, 1979],\n"
                "        [1980, 1981, 1982,  ..., 1997, 1998, 1999]])");
}

Test(rt_print, requires_grad_suffix)
{
    tg_tensor *t = vals((double[]){ 1, 2 }, (int64_t[]){ 2 }, 1, TG_FLOAT32);
    tg_tensor_set_requires_grad(t, true);
    /* what PyTorch 1.13 prints for t * t and (t * t).sum() */
    tg_tensor *sq = tg_mul(t, t);
    expect_repr(tg_sum(sq), "tensor(5., grad_fn=<SumBackward0>)");
    expect_repr(sq, "tensor([1., 4.], grad_fn=<MulBackward0>)");
    expect_repr(t, "tensor([1., 2.], requires_grad=True)");
}
