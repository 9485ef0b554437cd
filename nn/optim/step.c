/* tg_optimizer_step: torch.optim's SGD, Adam and AdamW steps (1.13, single-tensor
 * implementations) as one fused operator call per parameter (sgd_step_, adam_step_), with grad
 * mode off and the caller's scope suspended (the tensors made here are the optimizer's own).
 * Every parameter's gradient and state is checked before any parameter changes. */
#include "optim_internal.h"
#include "ops/adam_step.h"
#include "ops/sgd_step.h"
#include "ops/zeros_like.h"

#include <stdlib.h>
#include <string.h>

static bool same_device(tg_device a, tg_device b) { return a.type == b.type && a.index == b.index; }

/* t (a gradient or a state tensor) fits parameter p: same shape, dtype and device. */
static int check_like(const char *op, const char *pname, const char *what, tg_tensor *p,
                      tg_tensor *t)
{
    int64_t nd = tg_tensor_dim(p);
    bool same = tg_tensor_dim(t) == nd &&
                memcmp(tg_tensor_sizes(t), tg_tensor_sizes(p), sizeof(int64_t) * (size_t)nd) == 0;
    if (!same) {
        char a[128], b[128];
        return tg_set_error(op, "%s of parameter '%s' has shape %s but the parameter has shape %s",
                            what, pname, tg__optim_shape_str(a, sizeof a, t),
                            tg__optim_shape_str(b, sizeof b, p)),
               -1;
    }
    if (tg_tensor_dtype(t) != tg_tensor_dtype(p))
        return tg_set_error(op, "%s of parameter '%s' has dtype %s but the parameter has dtype %s",
                            what, pname, tg_dtype_name(tg_tensor_dtype(t)),
                            tg_dtype_name(tg_tensor_dtype(p))),
               -1;
    if (!same_device(tg_tensor_device(t), tg_tensor_device(p)))
        return tg_set_error(op, "%s of parameter '%s' is on another device than the parameter",
                            what, pname),
               -1;
    return 0;
}

/* Checks parameter i before the step; *grad is set (a new reference) when it takes one. */
static int check_param(const tg_optimizer *o, const tg__optim_param *p, tg_tensor **grad)
{
    const char *op = tg_optimizer_name(o);
    *grad = NULL;
    tg_tensor *t = *p->slot;
    if (!t) return 0;
    tg_tensor *g = tg_tensor_grad(t);
    if (!g) return 0;
    *grad = g;
    if (!tg_dtype_is_floating(tg_tensor_dtype(t)))
        return tg_set_error(op, "parameter '%s' has dtype %s: a parameter must be floating",
                            p->name, tg_dtype_name(tg_tensor_dtype(t))),
               -1;
    if (check_like(op, p->name, "the gradient", t, g) != 0) return -1;
    const char *names[4] = { "momentum_buffer", "exp_avg", "exp_avg_sq", "max_exp_avg_sq" };
    tg_tensor *st[4] = { p->momentum_buffer, p->exp_avg, p->exp_avg_sq, p->max_exp_avg_sq };
    for (int k = 0; k < 4; k++)
        if (st[k] && check_like(op, p->name, names[k], t, st[k]) != 0) return -1;
    return 0;
}

/* *slot made zeros like t when empty; 0 or -1. */
static int lazy_zeros(tg_tensor **slot, tg_tensor *t)
{
    if (!*slot) *slot = tg_zeros_like(t);
    return *slot ? 0 : -1;
}

static int sgd_one(tg__optim_param *p, const tg_optim_group_opts *h, tg_tensor *t, tg_tensor *g)
{
    bool first = false;
    if (h->momentum != 0 && !p->momentum_buffer) {
        if (lazy_zeros(&p->momentum_buffer, t) != 0) return -1;
        first = true; /* torch: buf = clone(d_p) on a parameter's first step with momentum */
    }
    tg_tensor *r = tg_sgd_step_(t, g, h->momentum != 0 ? p->momentum_buffer : NULL, h->lr,
                                .momentum = h->momentum, .dampening = h->dampening,
                                .weight_decay = h->weight_decay, .nesterov = h->nesterov,
                                .maximize = h->maximize, .first_step = first);
    if (!r) return -1;
    tg_release(r);
    p->step++;
    return 0;
}

static int adam_one(tg__optim_param *p, const tg_optim_group_opts *h, bool decoupled, tg_tensor *t,
                    tg_tensor *g)
{
    if (lazy_zeros(&p->exp_avg, t) != 0 || lazy_zeros(&p->exp_avg_sq, t) != 0) return -1;
    if (h->amsgrad && lazy_zeros(&p->max_exp_avg_sq, t) != 0) return -1;
    tg_tensor *r =
        tg_adam_step_(t, g, p->exp_avg, p->exp_avg_sq, h->amsgrad ? p->max_exp_avg_sq : NULL,
                      p->step + 1, .lr = h->lr, .beta1 = h->beta1, .beta2 = h->beta2, .eps = h->eps,
                      .weight_decay = h->weight_decay, .amsgrad = h->amsgrad,
                      .maximize = h->maximize, .decoupled_weight_decay = decoupled);
    if (!r) return -1;
    tg_release(r);
    p->step++;
    return 0;
}

int tg_optimizer_step(tg_optimizer *o)
{
    if (!tg__optim_get_group(o, 0)) return -1;
    tg_tensor **grads = calloc((size_t)o->n_params, sizeof *grads);
    if (!grads) return tg_set_error(tg_optimizer_name(o), "out of memory"), -1;
    int token = tg_scope_suspend();
    int rc = 0;
    for (int64_t i = 0; i < o->n_params && rc == 0; i++)
        rc = check_param(o, &o->params[i], &grads[i]);
    TG_NO_GRAD {
        for (int64_t i = 0; i < o->n_params && rc == 0; i++) {
            tg__optim_param *p = &o->params[i];
            if (!grads[i]) continue;
            const tg_optim_group_opts *h = &o->groups[p->group].h;
            if (o->kind == TG_OPTIM_SGD) rc = sgd_one(p, h, *p->slot, grads[i]);
            else rc = adam_one(p, h, o->kind == TG_OPTIM_ADAMW, *p->slot, grads[i]);
        }
    }
    for (int64_t i = 0; i < o->n_params; i++) tg_release(grads[i]);
    free(grads);
    tg_scope_resume(token);
    return rc;
}
