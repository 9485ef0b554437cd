/* What only a device has, which the value table (tests/values/, every case on the CPU and on
 * CUDA) cannot express: copies between devices, operands on two devices, and the errors that
 * name the CUDA kernel or tensor type (PyTorch's words for its CUDA kernels). */
#include "kt_cuda.h"

#ifndef TG_WITH_CUDA
Test(cuda_devices, skipped) { KT_SKIP_NO_CUDA_BUILD(); }
#else

/* CPU float16 -> a strided (transposed) float32 CUDA tensor -> CPU float16: every value back. */
Test(cuda_devices, copies_between_devices)
{
    KT_REQUIRE_DEVICE("cuda_devices::copies_between_devices");
    kt_live base = kt_live_now();
    tg_scope_begin();
    const int64_t shape[2] = { 19, 23 };
    tg_tensor *x = kt_rand(shape, 2, TG_FLOAT16, 77, -4, 4);
    tg_tensor *big = tg_empty(TG_INTS(23, 19), .dtype = TG_FLOAT32, .device = TG_DEVICE_CUDA(0));
    tg_tensor *bigt = tg_transpose(big, 0, 1);
    tg_tensor *back = tg_empty(TG_INTS(19, 23), .dtype = TG_FLOAT16);
    cr_assert(tg_copy_(bigt, x), "copy_ CPU -> CUDA: %s", tg_last_error());
    tg_tensor *b2 = tg_copy_(back, bigt);
    cr_assert(b2, "copy_ CUDA -> CPU: %s", tg_last_error());
    double *xv = kt_values(x);
    kt_assert_close(b2, xv, 19 * 23, 0, 0,
                    "CPU -> CUDA (strided float32) -> CPU float16 round trip");
    free(xv);
    tg_scope_end();
    kt_assert_no_leak(base);
}

/* A one-dim CPU tensor is not a Scalar: operands on two devices are refused. */
Test(cuda_devices, operands_on_two_devices)
{
    KT_REQUIRE_DEVICE("cuda_devices::operands_on_two_devices");
    kt_live base = kt_live_now();
    tg_scope_begin();
    tg_tensor *a = kt_rand((int64_t[]){ 8 }, 1, TG_FLOAT32, 81, -1, 1), *ad = kt_cuda(a);
    kt_expect_error(
        tg_add(ad, a),
        "Expected all tensors to be on the same device, but found at least two devices");
    tg_tensor *x = kt_cuda(kt_rand((int64_t[]){ 5, 4 }, 2, TG_FLOAT32, 1, -1, 1));
    int64_t v[2] = { 1, 7 };
    kt_expect_error(tg_gather(x, 0, kt_tensor_i64(v, (int64_t[]){ 2, 1 }, 2)),
                    "Expected all tensors to be on the same device");
    tg_tensor *s = kt_cuda(tg_zeros(TG_INTS(2, 3)));
    kt_expect_error(tg_cumsum_out(s, 0, tg_zeros(TG_INTS(2, 3))), "Expected");
    tg_scope_end();
    kt_assert_no_leak(base);
}

/* Integral matrix products are refused as PyTorch's CUDA kernels refuse them; convolution's
 * dtype mismatch names CUDA tensor types; repeat_interleave's CUDA kernel takes integers only. */
Test(cuda_devices, errors_in_cuda_words)
{
    KT_REQUIRE_DEVICE("cuda_devices::errors_in_cuda_words");
    kt_live base = kt_live_now();
    tg_scope_begin();
    tg_tensor *a = kt_cuda(kt_rand((int64_t[]){ 3, 4 }, 2, TG_INT64, 1, -3, 3));
    tg_tensor *b = kt_cuda(kt_rand((int64_t[]){ 4, 2 }, 2, TG_INT64, 2, -3, 3));
    kt_expect_error(tg_mm(a, b), "\"addmm_cuda\" not implemented for 'Long'");
    kt_expect_error(tg_bmm(tg_unsqueeze(a, 0), tg_unsqueeze(b, 0)),
                    "\"bmm_cuda\" not implemented for 'Long'");
    tg_tensor *x = kt_cuda(tg_zeros(TG_INTS(2, 4, 5, 5)));
    tg_tensor *wd = kt_cuda(tg_zeros(TG_INTS(8, 4, 3, 3), .dtype = TG_FLOAT64));
    kt_expect_error(tg_conv2d(x, wd), "Input type (torch.cuda.FloatTensor) and weight type "
                                      "(torch.cuda.DoubleTensor) should be the same");
    kt_expect_error(tg_repeat_interleave(kt_cuda(tg_zeros(TG_INTS(2)))),
                    "\"repeat_interleave_cuda\" not implemented for 'Float'");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
