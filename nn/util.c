/* Small helpers the files of nn/ share (nn_private.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn_private.h"
#include "ops/empty.h"
#include "ops/full.h"

char *tg__nn_join(const char *prefix, const char *name)
{
    size_t n = strlen(prefix) + strlen(name) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s%s%s", prefix, *prefix ? "." : "", name);
    return s;
}

const char *tg__nn_shape_str(const tg_tensor *t, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "[");
    for (int64_t d = 0; d < tg_tensor_dim(t) && used < cap; d++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%lld", d ? ", " : "",
                                 (long long)tg_tensor_size(t, d));
    if (used < cap) snprintf(buf + used, cap - used, "]");
    return buf;
}

/* t when its initialisation rc is 0; else t released and NULL. */
static tg_tensor *initialised(tg_tensor *t, int rc)
{
    if (t && rc == 0) return t;
    tg_release(t);
    return NULL;
}

tg_tensor *tg__nn_uniform(tg_int_list shape, double bound)
{
    tg_tensor *t = NULL;
    TG__NN_OWN t = tg_empty(shape);
    return initialised(t, t ? tg_nn_init_uniform_(t, -bound, bound) : -1);
}

tg_tensor *tg__nn_normal(tg_int_list shape, double std)
{
    tg_tensor *t = NULL;
    TG__NN_OWN t = tg_empty(shape);
    return initialised(t, t ? tg_nn_init_normal_(t, 0, std) : -1);
}

tg_tensor *tg__nn_full(tg_int_list shape, double value)
{
    tg_tensor *t = NULL;
    TG__NN_OWN t = tg_full(shape, value, .dtype = tg_get_default_dtype());
    return t;
}
