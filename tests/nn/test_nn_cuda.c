/* nn/ on a CUDA device (run on the CPU emulator by `make test-cuda-emu`, on a GPU where there
 * is one): a module moved with tg_module_to gives the CPU's outputs, trains with an optimizer
 * whose state lives on the device, saves a state dict a CPU model loads, and a loader with
 * .device delivers batches there. */
#include "../runtime/rt_test.h"
#include "kt_cuda.h"
#include "tensorgen.h"

#include <unistd.h>

TestSuite(nn_cuda, .fini = rt_leak_check);

static double max_abs_diff(tg_tensor *a, tg_tensor *b)
{
    int64_t n = tg_tensor_numel(a);
    double *x = malloc(sizeof *x * (size_t)(2 * n + 1)), d = 0;
    cr_assert(x && !tg_tensor_to_doubles(a, x, n) && !tg_tensor_to_doubles(b, x + n, n));
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(x[i] - x[n + i]));
    free(x);
    return d;
}

static tg_module *small_resnet(void)
{
    tg_manual_seed(11);
    return tg_nn_resnet(TG_INTS(1, 1), .num_classes = 3, .in_channels = 2, .width = 4,
                        .small_input = true);
}

Test(nn_cuda, module_to_device_trains_and_saves)
{
    KT_REQUIRE_DEVICE("nn_cuda");
    const tg_device dev = TG_DEVICE_CUDA(0);
    tg_module *cpu = small_resnet(), *gpu = small_resnet();
    cr_assert_eq(tg_module_to(gpu, .device = dev), 0, "%s", tg_last_error());
    cr_expect_eq(
        tg_tensor_device(tg_module_get_tensor(gpu, "layer2.0.downsample.1.running_var")).type,
        TG_CUDA);
    tg_scope_begin();
    tg_tensor *x = tg_randn(TG_INTS(2, 2, 6, 6)), *y = tg_randint(3, TG_INTS(2));
    tg_tensor *yc = tg_module_forward(cpu, x);
    tg_tensor *yg = tg_to_device(tg_module_forward(gpu, tg_to_device(x, dev)), TG_DEVICE_CPU);
    cr_assert(yc && yg, "%s", tg_last_error());
    cr_expect(max_abs_diff(yc, yg) < 1e-4, "CPU and CUDA outputs differ by %g",
              max_abs_diff(yc, yg));
    /* one SGD step with momentum on each: the parameters stay equal */
    tg_optimizer *oc = tg_sgd_new(TG_MODULE_PARAMS(cpu), .lr = 0.1, .momentum = 0.9);
    tg_optimizer *og = tg_sgd_new(TG_MODULE_PARAMS(gpu), .lr = 0.1, .momentum = 0.9);
    cr_assert_eq(tg_backward(tg_cross_entropy(yc, y)), 0, "%s", tg_last_error());
    cr_assert_eq(tg_backward(tg_cross_entropy(tg_module_forward(gpu, tg_to_device(x, dev)),
                                              tg_to_device(y, dev))),
                 0, "%s", tg_last_error());
    tg_scope_end();
    cr_assert_eq(tg_optimizer_step(oc), 0, "%s", tg_last_error());
    cr_assert_eq(tg_optimizer_step(og), 0, "%s", tg_last_error());
    tg_tensor *wg = tg_to_device(tg_module_get_tensor(gpu, "fc.weight"), TG_DEVICE_CPU);
    cr_expect(max_abs_diff(tg_module_get_tensor(cpu, "fc.weight"), wg) < 1e-5);
    tg_release(wg);
    /* the device model's state dict loads into a CPU model */
    char dir[] = "/tmp/tg_nn_cuda_XXXXXX", path[64];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    cr_assert_eq(tg_module_save(gpu, path), 0, "%s", tg_last_error());
    cr_assert_eq(tg_module_load(cpu, path), 0, "%s", tg_last_error());
    wg = tg_to_device(tg_module_get_tensor(gpu, "layer1.0.bn2.running_mean"), TG_DEVICE_CPU);
    cr_expect_eq(max_abs_diff(tg_module_get_tensor(cpu, "layer1.0.bn2.running_mean"), wg), 0);
    tg_release(wg);
    unlink(path);
    rmdir(dir);
    tg_optimizer_free(oc);
    tg_optimizer_free(og);
    tg_module_free(cpu);
    tg_module_free(gpu);
}

Test(nn_cuda, loader_delivers_batches_on_the_device)
{
    KT_REQUIRE_DEVICE("nn_cuda");
    tg_tensor *x = tg_randn(TG_INTS(10, 3));
    tg_dataset *ds = tg_tensor_dataset_new((tg_tensor *const[]){ x }, 1);
    tg_loader *l =
        tg_loader_new(ds, .batch_size = 4, .num_workers = 2, .device = TG_DEVICE_CUDA(0));
    cr_assert(l, "%s", tg_last_error());
    tg_batch b;
    int64_t seen = 0;
    while (tg_loader_next(l, &b) == 1) {
        cr_expect_eq(tg_tensor_device(b.fields[0]).type, TG_CUDA);
        tg_tensor *back = tg_to_device(b.fields[0], TG_DEVICE_CPU);
        tg_tensor *rows = tg_slice(x, .start = seen, .end = (seen + b.size));
        cr_expect_eq(max_abs_diff(back, rows), 0);
        tg_release(back);
        tg_release(rows);
        seen += b.size;
        tg_batch_release(&b);
    }
    cr_expect_eq(seen, 10);
    tg_loader_free(l);
    tg_dataset_free(ds);
    tg_release(x);
}
