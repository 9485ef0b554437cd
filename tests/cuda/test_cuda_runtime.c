/* The CUDA runtime: devices, the caching allocator and its statistics, copies between host and
 * device, error messages (no device, bad ordinal, out of memory, operands on two devices),
 * reading device tensors on the host, and to_device with its gradient.
 *
 * Built in every build. Skip rules (docs/cuda.md): without TG_WITH_CUDA the CUDA-only tests
 * skip with "built without CUDA (nvcc not found or CUDA=0)"; with CUDA but no device each
 * device test skips with "no CUDA device: <test> not run", and the no-device tests run
 * instead (they check the error paths a GPU machine never takes). The to_device cases that
 * need no device run everywhere. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_cuda.h"
#include "tensorgen.h"
#include "core/core.h"

TG_COVERS("to.device");
TG_CUDA_COVERS((const char *)0);

static tg_tensor *vec_f32(const float *v, int64_t n)
{
    tg_tensor *t = tg_tensor_from_data(v, (int64_t[]){ n }, 1, TG_FLOAT32);
    cr_assert(t, "%s", tg_last_error());
    return t;
}

static void expect_values(const tg_tensor *t, const double *want, int64_t n)
{
    cr_assert(t, "%s", tg_last_error());
    double *got = malloc(sizeof(double) * (size_t)n);
    cr_assert_eq(tg_tensor_to_doubles(t, got, n), 0, "%s", tg_last_error());
    for (int64_t i = 0; i < n; i++)
        cr_expect_eq(got[i], want[i], "element %lld: %g, want %g", (long long)i, got[i], want[i]);
    free(got);
}

static void expect_no_leaks(void)
{
    cr_expect_eq(tg_live_tensors(), 0, "leaked %lld tensors", (long long)tg_live_tensors());
    cr_expect_eq(tg_live_storages(), 0, "leaked %lld storages", (long long)tg_live_storages());
}

/* ------------------------------------------------------------------ every build */

Test(cuda_runtime, to_device_on_the_cpu)
{
    tg_tensor *a = vec_f32((float[]){ 1.5f, -2.0f, 3.25f }, 3);
    tg_tensor *same = tg_to_device(a, TG_DEVICE_CPU);
    cr_expect_eq(same, a, "to_device to self's device and dtype returns self");
    tg_tensor *copy = tg_to_device(a, TG_DEVICE_CPU, .copy = true);
    cr_assert(copy && copy != a, "%s", tg_last_error());
    expect_values(copy, (double[]){ 1.5, -2.0, 3.25 }, 3);
    tg_tensor *d = tg_to_device(a, TG_DEVICE_CPU, .dtype = TG_FLOAT64);
    cr_assert(d, "%s", tg_last_error());
    cr_expect_eq(tg_tensor_dtype(d), TG_FLOAT64);
    expect_values(d, (double[]){ 1.5, -2.0, 3.25 }, 3);
    tg_release(same);
    tg_release(copy);
    tg_release(d);
    tg_release(a);
    expect_no_leaks();
}

Test(cuda_runtime, to_device_gradient_returns_in_the_input_dtype)
{
    tg_tensor *a = vec_f32((float[]){ 1.0f, 2.0f }, 2);
    tg_tensor_set_requires_grad(a, true);
    tg_tensor *d = tg_to_device(a, TG_DEVICE_CPU, .dtype = TG_FLOAT64);
    tg_tensor *s = tg_sum(d);
    cr_assert(s, "%s", tg_last_error());
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    tg_tensor *g = tg_tensor_grad(a);
    cr_assert(g, "no gradient");
    cr_expect_eq(tg_tensor_dtype(g), TG_FLOAT32);
    cr_expect_eq(tg_tensor_device(g).type, TG_CPU);
    expect_values(g, (double[]){ 1, 1 }, 2);
    tg_release(g);
    tg_release(s);
    tg_release(d);
    tg_release(a);
    expect_no_leaks();
}

#ifndef TG_WITH_CUDA

Test(cuda_runtime, built_without_cuda)
{
    /* The public API answers "no CUDA" and a CUDA tensor is a clear error. */
    cr_expect(!tg_cuda_is_built());
    cr_expect(!tg_cuda_is_available());
    cr_expect_eq(tg_cuda_device_count(), 0);
    cr_expect_eq(tg_cuda_synchronize(), 0);
    cr_expect_eq(tg_cuda_memory_allocated(0), 0);
    tg_tensor *a = vec_f32((float[]){ 1.0f }, 1);
    cr_expect_null(tg_to_device(a, TG_DEVICE_CUDA(0)));
    /* "_to_copy: CUDA is not available: <why the backend could not be loaded>" */
    cr_expect(tg_last_error() && strstr(tg_last_error(), "CUDA is not available: "), "%s",
              tg_last_error());
    tg_clear_error();
    tg_release(a);
    KT_SKIP_NO_CUDA_BUILD();
}

#else

#include "cuda/cuda_rt.h"

/* ------------------------------------------------------------------ without a device */

Test(cuda_runtime, no_device_is_a_clear_error)
{
#ifdef TG_CUDA_EMU
    setenv("TG_CUDA_EMU_DEVICES", "0", 1); /* this test's process: an emulator without devices */
#endif
    if (tg_cuda_is_available())
        cr_skip_test("a CUDA device is present: the no-device error path is not run");
    cr_expect(tg_cuda_is_built());
    cr_expect_eq(tg_cuda_device_count(), 0);
    cr_expect_eq(tg_cuda_synchronize(), 0, "nothing to wait for: %s", tg_last_error());
    cr_expect_eq(tg_cuda_memory_allocated(0), 0);
    cr_expect_eq(tg_cuda_memory_reserved(0), 0);
    tg_cuda_empty_cache();

    tg_tensor *z = tg_zeros(TG_INTS(2, 3), .device = TG_DEVICE_CUDA(0));
    cr_expect_null(z);
    cr_expect_str_eq(tg_last_error(), "empty: CUDA error: no CUDA-capable device is detected");
    tg_clear_error();

    tg_tensor *a = vec_f32((float[]){ 1.0f, 2.0f }, 2);
    cr_expect_null(tg_to_device(a, TG_DEVICE_CUDA(0)));
    cr_expect_str_eq(tg_last_error(), "_to_copy: CUDA error: no CUDA-capable device is detected");
    tg_clear_error();

    /* the runtime's own entry points fail the same way, naming their caller */
    cr_expect_null(tg__cuda_alloc("workspace", 64, 0));
    cr_expect_str_eq(tg_last_error(), "workspace: CUDA error: no CUDA-capable device is detected");
    tg_clear_error();
    cr_expect_eq(tg__cuda_stream_sync("sync", 0), -1);
    cr_expect_str_eq(tg_last_error(), "sync: CUDA error: no CUDA-capable device is detected");
    tg_clear_error();
    cr_expect_null(tg__cublas_handle("mm", 0));
    tg_clear_error();
    tg_release(a);
    expect_no_leaks();
}

Test(cuda_runtime, error_mapping)
{
    cr_expect_eq(tg__cuda_check("op", cudaSuccess), 0);
    cr_expect_null(tg_last_error());
    cr_expect_eq(tg__cuda_check("op", cudaErrorInvalidValue), -1);
    cr_expect_str_eq(tg_last_error(), "op: CUDA error: invalid argument");
    tg_clear_error();
    cr_expect_eq(tg__cuda_check("op", cudaErrorMemoryAllocation), -1);
    cr_expect(strncmp(tg_last_error(), "op: CUDA out of memory.", 23) == 0, "%s", tg_last_error());
    tg_clear_error();
    cr_expect_eq(tg__cublas_check("mm", CUBLAS_STATUS_SUCCESS), 0);
    cr_expect_eq(tg__cublas_check("mm", CUBLAS_STATUS_INVALID_VALUE), -1);
    cr_expect_str_eq(tg_last_error(),
                     "mm: CUBLAS error: CUBLAS_STATUS_INVALID_VALUE (an unsupported "
                     "value or parameter was passed)");
    tg_clear_error();
}

/* ------------------------------------------------------------------ with a device */

Test(cuda_runtime, round_trip_every_dtype)
{
    KT_REQUIRE_DEVICE("cuda_runtime::round_trip_every_dtype");
    double v[5] = { 0, 1, 2, 3, 100 };
    for (int d = 0; d < TG_NUM_DTYPES; d++) {
        tg_tensor *f = tg_tensor_from_data(v, (int64_t[]){ 5 }, 1, TG_FLOAT64);
        tg_tensor *h = tg_to_device(f, TG_DEVICE_CPU, .dtype = (tg_dtype)d);
        tg_tensor *g = tg_to_device(h, TG_DEVICE_CUDA(0));
        cr_assert(g, "%s: %s", tg_dtype_name((tg_dtype)d), tg_last_error());
        cr_expect_eq(tg_tensor_device(g).type, TG_CUDA);
        cr_expect_eq(tg_tensor_dtype(g), (tg_dtype)d);
        tg_tensor *back = tg_to_device(g, TG_DEVICE_CPU);
        cr_assert(back, "%s", tg_last_error());
        double want[5], got[5];
        tg_tensor_to_doubles(h, want, 5);
        tg_tensor_to_doubles(back, got, 5);
        for (int i = 0; i < 5; i++) cr_expect_eq(got[i], want[i], "%s", tg_dtype_name((tg_dtype)d));
        /* host reads of the device tensor itself */
        tg_tensor_to_doubles(g, got, 5);
        for (int i = 0; i < 5; i++) cr_expect_eq(got[i], want[i], "%s", tg_dtype_name((tg_dtype)d));
        tg_release(f);
        tg_release(h);
        tg_release(g);
        tg_release(back);
    }
    expect_no_leaks();
}

Test(cuda_runtime, non_contiguous_and_converting_copies)
{
    KT_REQUIRE_DEVICE("cuda_runtime::non_contiguous_and_converting_copies");
    float v[6] = { 1, 2, 3, 4, 5, 6 };
    tg_tensor *m = tg_tensor_from_data(v, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *mt = tg_t(m); /* (3, 2), transposed strides */
    tg_tensor *g = tg_to_device(mt, TG_DEVICE_CUDA(0));
    cr_assert(g, "%s", tg_last_error());
    expect_values(g, (double[]){ 1, 4, 2, 5, 3, 6 }, 6);
    tg_tensor *gt = tg_t(g); /* a strided CUDA view read on the host */
    expect_values(gt, (double[]){ 1, 2, 3, 4, 5, 6 }, 6);
    tg_tensor *back = tg_to_device(gt, TG_DEVICE_CPU, .dtype = TG_INT64);
    cr_assert(back, "%s", tg_last_error());
    cr_expect(tg_tensor_is_contiguous(back));
    expect_values(back, (double[]){ 1, 2, 3, 4, 5, 6 }, 6);
    /* copy_ from the CPU into a strided CUDA view */
    tg_tensor *h =
        tg_tensor_from_data((float[]){ 9, 8, 7, 6, 5, 4 }, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *r = tg_copy_(gt, h); /* a new reference to gt */
    cr_assert(r == gt, "%s", tg_last_error());
    expect_values(g, (double[]){ 9, 6, 8, 5, 7, 4 }, 6);
    tg_release(m);
    tg_release(mt);
    tg_release(g);
    tg_release(gt);
    tg_release(back);
    tg_release(h);
    tg_release(r);
    expect_no_leaks();
}

Test(cuda_runtime, item_and_print)
{
    KT_REQUIRE_DEVICE("cuda_runtime::item_and_print");
    tg_tensor *a = vec_f32((float[]){ 2.5f }, 1);
    tg_tensor *g = tg_to_device(a, TG_DEVICE_CUDA(0));
    cr_assert(g, "%s", tg_last_error());
    cr_expect_eq(tg_item(g), 2.5);
    char *s = tg_tensor_to_string(g);
    cr_assert(s, "%s", tg_last_error());
    cr_expect_str_eq(s, "tensor([2.5000], device='cuda:0')");
    free(s);
    tg_release(a);
    tg_release(g);
    expect_no_leaks();
}

Test(cuda_runtime, caching_allocator_reuses_and_counts)
{
    KT_REQUIRE_DEVICE("cuda_runtime::caching_allocator_reuses_and_counts");
    tg_cuda_empty_cache();
    int64_t base = tg_cuda_memory_allocated(0);
    tg_tensor *a = tg_empty(TG_INTS(1000), .device = TG_DEVICE_CUDA(0)); /* 4000 -> 4096 */
    cr_assert(a, "%s", tg_last_error());
    cr_expect_eq(tg_cuda_memory_allocated(0) - base, 4096);
    cr_expect_geq(tg_cuda_memory_reserved(0), tg_cuda_memory_allocated(0));
    void *p = a->storage->data;
    tg_release(a);
    cr_expect_eq(tg_cuda_memory_allocated(0), base);
    int64_t reserved = tg_cuda_memory_reserved(0);
    tg_tensor *b = tg_empty(TG_INTS(1000), .device = TG_DEVICE_CUDA(0));
    cr_assert(b, "%s", tg_last_error());
    cr_expect_eq(b->storage->data, p, "a freed block of the same size class is reused");
    cr_expect_eq(tg_cuda_memory_reserved(0), reserved, "reuse does not reserve more");
    tg_release(b);
    cr_expect_geq(tg_cuda_max_memory_allocated(0), base + 4096);
    tg_cuda_empty_cache();
    cr_expect_eq(tg_cuda_memory_reserved(0), tg_cuda_memory_allocated(0),
                 "empty_cache returns every cached block");
    cr_expect_eq(tg_cuda_synchronize(), 0, "%s", tg_last_error());
    expect_no_leaks();
}

Test(cuda_runtime, out_of_memory_and_bad_ordinal)
{
    KT_REQUIRE_DEVICE("cuda_runtime::out_of_memory_and_bad_ordinal");
    int64_t huge = (int64_t)1 << 50; /* 4 PiB of float32 */
    tg_tensor *t = tg_empty(TG_INTS(huge), .device = TG_DEVICE_CUDA(0));
    cr_expect_null(t);
    const char *prefix = "empty: CUDA out of memory. Tried to allocate 4096.00 TiB (GPU 0; ";
    cr_expect(tg_last_error() && strncmp(tg_last_error(), prefix, strlen(prefix)) == 0, "%s",
              tg_last_error());
    tg_clear_error();
    /* the device still works after the failed allocation */
    tg_tensor *ok = tg_zeros(TG_INTS(4), .device = TG_DEVICE_CUDA(0));
    cr_assert(ok, "%s", tg_last_error());
    expect_values(ok, (double[]){ 0, 0, 0, 0 }, 4);
    tg_release(ok);
    int n = tg_cuda_device_count();
    cr_expect_null(tg_empty(TG_INTS(4), .device = TG_DEVICE_CUDA(n)));
    cr_expect_str_eq(tg_last_error(), "empty: CUDA error: invalid device ordinal");
    tg_clear_error();
    expect_no_leaks();
}

Test(cuda_runtime, operands_on_two_devices)
{
    KT_REQUIRE_DEVICE("cuda_runtime::operands_on_two_devices");
    tg_tensor *c = vec_f32((float[]){ 1, 2 }, 2);
    tg_tensor *g = tg_to_device(c, TG_DEVICE_CUDA(0));
    cr_assert(g, "%s", tg_last_error());
    cr_expect_null(tg_add(g, c));
    cr_expect_str_eq(tg_last_error(),
                     "add: Expected all tensors to be on the same device, but found "
                     "at least two devices, cuda:0 and cpu!");
    tg_clear_error();
    /* a CPU zero-dim tensor is a scalar: allowed, the result is on the device */
    tg_tensor *s = tg_full(TG_INTS_EMPTY, 10.0, .dtype = TG_FLOAT32);
    cr_assert(s, "%s", tg_last_error());
    tg_tensor *r = tg_add(g, s);
    cr_assert(r, "%s", tg_last_error());
    cr_expect_eq(tg_tensor_device(r).type, TG_CUDA);
    expect_values(r, (double[]){ 11, 12 }, 2);
    tg_release(c);
    tg_release(g);
    tg_release(s);
    tg_release(r);
    expect_no_leaks();
}

Test(cuda_runtime, gradient_returns_to_the_input_device)
{
    KT_REQUIRE_DEVICE("cuda_runtime::gradient_returns_to_the_input_device");
    tg_tensor *x = vec_f32((float[]){ 1, 2, 3 }, 3);
    tg_tensor_set_requires_grad(x, true);
    tg_tensor *g = tg_to_device(x, TG_DEVICE_CUDA(0));
    tg_tensor *y = tg_mul(g, g);
    tg_tensor *s = tg_sum(y);
    cr_assert(s, "%s", tg_last_error());
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    tg_tensor *gx = tg_tensor_grad(x);
    cr_assert(gx, "no gradient");
    cr_expect_eq(tg_tensor_device(gx).type, TG_CPU, "x.grad lives where x does");
    expect_values(gx, (double[]){ 2, 4, 6 }, 3);
    tg_release(gx);
    tg_release(s);
    tg_release(y);
    tg_release(g);
    tg_release(x);
    expect_no_leaks();
}

#endif
