/* Gradient clipping: torch.nn.utils.clip_grad_value_ (each .grad clamped in place) and the
 * optimizer-level conveniences over its parameters (the norm version: clip_grad_norm.c). */
#include "optim_internal.h"
#include "ops/clamp.h"

#include <stdlib.h>

int tg_clip_grad_value_(tg_tensor *const *params, int n, double clip_value)
{
    const char *op = "clip_grad_value_";
    if (n < 0 || (n > 0 && !params)) return tg_set_error(op, "expected n >= 0 parameters"), -1;
    for (int i = 0; i < n; i++)
        if (!params[i]) return tg_set_error(op, "parameter %d is NULL", i), -1;
    int token = tg_scope_suspend();
    int rc = 0;
    TG_NO_GRAD {
        for (int i = 0; i < n && rc == 0; i++) {
            tg_tensor *g = tg_tensor_grad(params[i]);
            if (!g) continue;
            /* torch: p.grad.data.clamp_(min=-clip_value, max=clip_value) */
            rc = tg_drop(tg_clamp_(g, .min = -clip_value, .max = clip_value));
            tg_release(g);
        }
    }
    tg_scope_resume(token);
    return rc;
}

/* The tensors in the optimizer's slots (borrowed; NULL slots left out) into a malloc'd array. */
static tg_tensor **param_tensors(tg_optimizer *o, int *n)
{
    tg_tensor **ts = malloc(sizeof *ts * (size_t)(o->n_params + 1));
    if (!ts) return tg_set_error(tg_optimizer_name(o), "out of memory");
    *n = 0;
    for (int64_t i = 0; i < o->n_params; i++)
        if (*o->params[i].slot) ts[(*n)++] = *o->params[i].slot;
    return ts;
}

double tg_optimizer_clip_grad_norm_(tg_optimizer *o, double max_norm, double norm_type)
{
    if (!tg__optim_get_group(o, 0)) return -1;
    int n = 0;
    tg_tensor **ts = param_tensors(o, &n);
    if (!ts) return -1;
    double total = tg_clip_grad_norm_(ts, n, max_norm, norm_type);
    free(ts);
    return total;
}

int tg_optimizer_clip_grad_value_(tg_optimizer *o, double clip_value)
{
    if (!tg__optim_get_group(o, 0)) return -1;
    int n = 0;
    tg_tensor **ts = param_tensors(o, &n);
    if (!ts) return -1;
    int rc = tg_clip_grad_value_(ts, n, clip_value);
    free(ts);
    return rc;
}
