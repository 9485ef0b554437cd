/* A fake CUDA device for tests of the runtime's device paths (the CUDA -> CPU fallback, the
 * iterator's device checks) in any build: its "device memory" is host memory, so a test can
 * register it with tg__register_device_hooks(TG_CUDA, &tg_test_fake_cuda) and read what
 * landed there. Only contiguous byte copies: a test must not ask it for a strided copy. */
#ifndef TG_TESTS_FAKE_DEVICE_H
#define TG_TESTS_FAKE_DEVICE_H

#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static inline void *tg_test_fake_alloc(const char *op, size_t n, tg_device d)
{
    (void)op;
    (void)d;
    return malloc(n ? n : 1);
}

static inline void tg_test_fake_free(void *p, size_t n, tg_device d)
{
    (void)n;
    (void)d;
    free(p);
}

static inline int tg_test_fake_copy(void *dst, tg_device dd, const void *src, tg_device sd,
                                    size_t n)
{
    (void)dd;
    (void)sd;
    memcpy(dst, src, n);
    return 0;
}

static const tg_device_hooks tg_test_fake_cuda = { tg_test_fake_alloc, tg_test_fake_free,
                                                   tg_test_fake_copy };

#endif
