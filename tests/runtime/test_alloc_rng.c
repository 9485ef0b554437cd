/* The CPU allocator (alignment, reuse of freed blocks, threads) and the random generators
 * (determinism for a seed, ranges, moments). */
#include "rt_test.h"

#include <pthread.h>

TestSuite(rt_alloc, .fini = rt_leak_check);

Test(rt_alloc, aligned_and_reused)
{
    size_t sizes[] = { 1, 63, 64, 65, 1000, 4096, 100000, 5u << 20 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *p = tg__cpu_alloc(sizes[i]);
        cr_assert_not_null(p);
        cr_expect_eq((uintptr_t)p % 64, 0);
        memset(p, 1, sizes[i]);
        tg__cpu_free(p, sizes[i]);
        void *q = tg__cpu_alloc(sizes[i]);
        cr_expect_eq(q, p, "a freed block of the same size class is reused (%zu bytes)", sizes[i]);
        tg__cpu_free(q, sizes[i]);
    }
    tg__cpu_allocator_empty_cache();
    cr_expect_eq(tg__cpu_allocator_cached_bytes(), 0);
}

Test(rt_alloc, tensor_data_reused)
{
    tg_tensor *a = tg__empty("t", (int64_t[]){ 1000 }, 1, TG_FLOAT32, TG_DEVICE_CPU);
    void *p = tg_tensor_data(a);
    tg_release(a);
    a = tg__empty("t", (int64_t[]){ 990 }, 1, TG_FLOAT32, TG_DEVICE_CPU);
    cr_expect_eq(tg_tensor_data(a), p);
    tg_release(a);
}

Test(rt_alloc, out_of_memory_is_null) { cr_expect_null(tg__cpu_alloc((size_t)1 << 62)); }

static void *alloc_thread(void *arg)
{
    (void)arg;
    void *ps[64];
    for (int r = 0; r < 200; r++) {
        for (int i = 0; i < 64; i++) ps[i] = tg__cpu_alloc((size_t)(i * 977 % 70000) + 1);
        for (int i = 0; i < 64; i++) tg__cpu_free(ps[i], (size_t)(i * 977 % 70000) + 1);
    }
    return NULL;
}

Test(rt_alloc, threads)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, alloc_thread, NULL);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
}

TestSuite(rt_random, .fini = rt_leak_check);

Test(rt_random, seeded_is_deterministic)
{
    tg_generator *a = tg_generator_new(42), *b = tg_generator_new(42), *c = tg_generator_new(43);
    bool differs = false;
    for (int i = 0; i < 100; i++) {
        uint64_t x = tg__random_u64(a), y = tg__random_u64(b), z = tg__random_u64(c);
        cr_assert_eq(x, y);
        differs |= x != z;
    }
    cr_expect(differs);
    tg_generator_manual_seed(a, 7);
    tg_generator_manual_seed(b, 7);
    uint64_t n[5];
    tg__random_u64_n(a, n, 5);
    for (int i = 0; i < 5; i++) cr_expect_eq(n[i], tg__random_u64(b), "batched = single draws");
    tg_generator_free(a);
    tg_generator_free(b);
    tg_generator_free(c);
}

Test(rt_random, default_generator_manual_seed)
{
    tg_manual_seed(123);
    double x = tg__random_uniform(NULL), xn = tg__random_normal(NULL);
    tg_manual_seed(123);
    cr_expect_eq(tg__random_uniform(tg__default_generator()), x);
    cr_expect_eq(tg__random_normal(NULL), xn);
}

Test(rt_random, distributions)
{
    tg_generator *g = tg_generator_new(1);
    double s = 0, s2 = 0, u = 0;
    int n = 200000;
    for (int i = 0; i < n; i++) {
        double v = tg__random_uniform(g);
        cr_assert(v >= 0 && v < 1);
        u += v;
        double z = tg__random_normal(g);
        s += z;
        s2 += z * z;
    }
    cr_expect(fabs(u / n - 0.5) < 0.005, "uniform mean %g", u / n);
    cr_expect(fabs(s / n) < 0.01, "normal mean %g", s / n);
    cr_expect(fabs(s2 / n - 1) < 0.02, "normal variance %g", s2 / n);
    tg_generator_free(g);
}
