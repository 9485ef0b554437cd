/* tg_device_parse: PyTorch's device strings (torch.device("cuda:1")). */
#include "rt_test.h"

#include <string.h>

TestSuite(rt_device_parse, .fini = rt_leak_check);

static tg_device parsed(const char *text)
{
    tg_device d = TG_DEVICE_UNSET;
    cr_assert_eq(tg_device_parse(text, &d), 0, "'%s': %s", text, tg_last_error());
    return d;
}

Test(rt_device_parse, cpu_and_cuda)
{
    tg_device d = parsed("cpu");
    cr_expect(d.type == TG_CPU && d.index == 0);
    d = parsed("cuda");
    cr_expect(d.type == TG_CUDA && d.index == 0);
    d = parsed("cuda:3");
    cr_expect(d.type == TG_CUDA && d.index == 3);
    d = parsed("cpu:0");
    cr_expect(d.type == TG_CPU && d.index == 0);
}

Test(rt_device_parse, bad_names_are_errors)
{
    const char *const bad[] = { "tpu",       "",      "cuda:", "cuda:x",  "cuda:-1",
                                "cuda:1000", "cpu:1", "CUDA",  "cuda:1:2" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tg_device d = TG_DEVICE_CPU;
        tg_clear_error();
        cr_expect_eq(tg_device_parse(bad[i], &d), -1, "'%s' parsed", bad[i]);
        cr_expect(tg_last_error() && strstr(tg_last_error(), "unknown device '"), "'%s': %s",
                  bad[i], tg_last_error() ? tg_last_error() : "(no error)");
        cr_expect(d.type == TG_CPU, "'%s' changed the device", bad[i]);
    }
    tg_clear_error();
    cr_expect_eq(tg_device_parse(NULL, &(tg_device){ 0 }), -1);
    tg_clear_error();
}
