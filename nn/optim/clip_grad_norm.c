/* tg_clip_grad_norm_ (tg_nn_optim.h): torch.nn.utils.clip_grad_norm_ of PyTorch 1.13
 * (error_if_nonfinite=False) in terms of operators: _foreach_norm of the gradients, the norm
 * of those norms (stacked), clip_coef = reciprocal(total + 1e-6) * max_norm (Python's
 * `max_norm / tensor` is reciprocal times max_norm), clamped to at most 1, and every gradient
 * multiplied in place by it, always (a coefficient of 1 leaves it unchanged). Every step runs in
 * the gradients' dtype, as in PyTorch, with grad mode off and the caller's scope suspended
 * (it releases what it makes). A training utility, written with the operators' public
 * functions, beside torch.optim's in nn/. */
#include <math.h>
#include <stdlib.h>

#include "optim_internal.h"
#include "ops/_foreach_norm.h"
#include "ops/add.h"
#include "ops/clamp.h"
#include "ops/div.h"
#include "ops/mul.h"
#include "ops/ones_like.h"
#include "ops/stack.h"

/* The total norm as a zero-dim tensor, then the gradients scaled; 0 or -1. */
static int clip(tg_tensor **grads, int m, double max_norm, double norm_type, double *total_out)
{
    tg_tensor_list gl = { grads, m };
    tg_tensor_list norms = tg__foreach_norm(gl, .ord = norm_type);
    if (!norms.data) return -1;
    tg_tensor *st = tg_stack(norms);
    tg_tensor_list_release(norms);
    if (!st) return -1;
    tg_tensor *one_list[1] = { st };
    tg_tensor_list sl = { one_list, 1 };
    tg_tensor_list tl = tg__foreach_norm(sl, .ord = norm_type);
    tg_release(st);
    if (!tl.data) return -1;
    tg_tensor *total = tl.data[0];
    tg_tensor *den = tg_add_scalar(total, 1e-6);
    tg_tensor *one = den ? tg_ones_like(den) : NULL;
    tg_tensor *rec = one ? tg_div(one, den) : NULL;
    tg_tensor *coef = rec ? tg_mul_scalar(rec, max_norm) : NULL;
    tg_tensor *clamped = coef ? tg_clamp(coef, .max = 1.0) : NULL;
    int rc = clamped && tg_tensor_to_doubles(total, total_out, 1) == 0 ? 0 : -1;
    for (int i = 0; rc == 0 && i < m; i++) rc = tg_drop(tg_mul_(grads[i], clamped));
    tg_release(den);
    tg_release(one);
    tg_release(rec);
    tg_release(coef);
    tg_release(clamped);
    tg_tensor_list_release(tl);
    return rc;
}

double tg_clip_grad_norm_(tg_tensor *const *params, int n, double max_norm, double norm_type)
{
    const char *op = "clip_grad_norm_";
    if (n < 0 || (n > 0 && !params)) {
        tg_set_error(op, "expected n >= 0 parameters");
        return -1;
    }
    tg_tensor **grads = malloc(sizeof(tg_tensor *) * (size_t)(n > 0 ? n : 1));
    if (!grads) {
        tg_set_error(op, "out of memory");
        return -1;
    }
    /* the tensors made here are this function's own, not the caller's scope's */
    int token = tg_scope_suspend();
    int m = 0, rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (!params[i]) {
            tg_set_error(op, "parameter %d is NULL", i);
            rc = -1;
            break;
        }
        tg_tensor *g = tg_tensor_grad(params[i]);
        if (g) grads[m++] = g;
    }
    double total = 0;
    if (rc == 0 && m > 0) {
        TG_NO_GRAD {
            rc = clip(grads, m, max_norm, norm_type, &total);
        }
    }
    for (int i = 0; i < m; i++) tg_release(grads[i]);
    free(grads);
    tg_scope_resume(token);
    return rc == 0 ? total : -1;
}
