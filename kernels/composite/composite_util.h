/* Small ownership helpers for composite kernels, which chain public calls and must release
 * every intermediate on both the success and the error path. */
#ifndef TG_COMPOSITE_UTIL_H
#define TG_COMPOSITE_UTIL_H

#include "tg_core.h"

/* Releases `old` and passes `r` through (r may be NULL after an error):
 * `return tg__then(tmp, tg_mul(tmp, x));`. */
static inline tg_tensor *tg__then(tg_tensor *old, tg_tensor *r)
{
    tg_release(old);
    return r;
}

static inline tg_tensor *tg__then2(tg_tensor *a, tg_tensor *b, tg_tensor *r)
{
    tg_release(a);
    tg_release(b);
    return r;
}

#endif
