/* The optimizer object (torch.optim.Optimizer): its parameters (named slots), its groups of
 * hyper-parameters chosen by name pattern, the checks of those values, zero_grad and the
 * accessors the schedulers use. The step is step.c, state on disk optim_state.c. */
#include "optim_internal.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(tg_optimizer_kind k)
{
    switch (k) {
    case TG_OPTIM_SGD: return "SGD";
    case TG_OPTIM_ADAM: return "Adam";
    case TG_OPTIM_ADAMW: return "AdamW";
    }
    return "optimizer";
}

const char *tg_optimizer_name(const tg_optimizer *o)
{
    return o ? kind_name(o->kind) : "optimizer";
}
tg_optimizer_kind tg_optimizer_kind_of(const tg_optimizer *o) { return o->kind; }

/* torch's constructors' checks, in their order and words. */
int tg__optim_check_hyper(const tg_optimizer *o, const tg_optim_group_opts *h)
{
    const char *n = kind_name(o->kind);
    if (isnan(h->lr) && o->kind == TG_OPTIM_SGD)
        return tg_set_error(n, "required optimization parameter lr is missing"), -1;
    if (!(h->lr >= 0)) return tg_set_error(n, "Invalid learning rate: %g", h->lr), -1;
    if (o->kind == TG_OPTIM_SGD) {
        if (!(h->momentum >= 0))
            return tg_set_error(n, "Invalid momentum value: %g", h->momentum), -1;
        if (!(h->weight_decay >= 0))
            return tg_set_error(n, "Invalid weight_decay value: %g", h->weight_decay), -1;
        if (h->nesterov && (h->momentum <= 0 || h->dampening != 0))
            return tg_set_error(n, "Nesterov momentum requires a momentum and zero dampening"), -1;
        if (isnan(h->dampening)) return tg_set_error(n, "Invalid dampening value: nan"), -1;
        return 0;
    }
    if (!(h->eps >= 0)) return tg_set_error(n, "Invalid epsilon value: %g", h->eps), -1;
    if (!(h->beta1 >= 0 && h->beta1 < 1))
        return tg_set_error(n, "Invalid beta parameter at index 0: %g", h->beta1), -1;
    if (!(h->beta2 >= 0 && h->beta2 < 1))
        return tg_set_error(n, "Invalid beta parameter at index 1: %g", h->beta2), -1;
    if (!(h->weight_decay >= 0))
        return tg_set_error(n, "Invalid weight_decay value: %g", h->weight_decay), -1;
    return 0;
}

const char *tg__optim_shape_str(char *buf, size_t cap, const tg_tensor *t)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int64_t d = 0; d < tg_tensor_dim(t) && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "",
                              (long long)tg_tensor_size(t, d));
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

void tg__optim_param_clear_state(tg__optim_param *p)
{
    tg_release(p->momentum_buffer);
    tg_release(p->exp_avg);
    tg_release(p->exp_avg_sq);
    tg_release(p->max_exp_avg_sq);
    p->momentum_buffer = p->exp_avg = p->exp_avg_sq = p->max_exp_avg_sq = NULL;
    p->step = 0;
}

void tg_optimizer_free(tg_optimizer *o)
{
    if (!o) return;
    for (int64_t i = 0; i < o->n_params; i++) {
        tg__optim_param_clear_state(&o->params[i]);
        free(o->params[i].name);
    }
    free(o->params);
    free(o->groups);
    free(o);
}

/* The parameters of a list: names copied, duplicates refused (torch refuses a tensor in two
 * groups; a name twice would make the state ambiguous). */
static int take_params(tg_optimizer *o, const tg_named_tensor *l, int64_t n)
{
    const char *op = kind_name(o->kind);
    if (n <= 0) return tg_set_error(op, "optimizer got an empty parameter list"), -1;
    o->params = calloc((size_t)n, sizeof *o->params);
    if (!o->params) return tg_set_error(op, "out of memory"), -1;
    for (int64_t i = 0; i < n; i++) {
        if (!l[i].name || !l[i].slot)
            return tg_set_error(op, "parameter %lld has no name or no slot", (long long)i), -1;
        for (int64_t j = 0; j < i; j++) {
            if (strcmp(l[i].name, l[j].name) == 0)
                return tg_set_error(op, "parameter name '%s' appears twice", l[i].name), -1;
            if (l[i].slot == l[j].slot || (*l[i].slot && *l[i].slot == *l[j].slot))
                return tg_set_error(op, "some parameters appear more than once ('%s' and '%s')",
                                    l[j].name, l[i].name),
                       -1;
        }
        tg__optim_param *p = &o->params[o->n_params];
        p->name = strdup(l[i].name);
        if (!p->name) return tg_set_error(op, "out of memory"), -1;
        p->slot = l[i].slot;
        o->n_params++;
    }
    return 0;
}

/* The optimizer of a kind with group 0's hyper-parameters, or NULL (everything freed). */
static tg_optimizer *optimizer_new(tg_optimizer_kind kind, tg_optim_params params,
                                   tg_optim_group_opts h)
{
    tg_optimizer tmp = { .kind = kind };
    if (tg__optim_check_hyper(&tmp, &h) != 0) return NULL;
    tg_optimizer *o = calloc(1, sizeof *o);
    tg__optim_group *g = calloc(1, sizeof *g);
    if (!o || !g) {
        free(o);
        free(g);
        return tg_set_error(kind_name(kind), "out of memory");
    }
    o->kind = kind;
    o->groups = g;
    o->n_groups = 1;
    g->h = h;
    g->initial_lr = NAN;
    int rc;
    if (params.module) {
        tg_named_tensors l = { NULL, 0 };
        rc = tg_module_named_tensors(params.module, &l);
        if (rc == 0) rc = take_params(o, l.data, l.len);
        tg_named_tensors_free(&l);
    } else {
        rc = take_params(o, params.data, params.len);
    }
    if (rc != 0) {
        tg_optimizer_free(o);
        return NULL;
    }
    return o;
}

tg_optimizer *tg_sgd_new_fn(tg_optim_params params, tg_sgd_opts s)
{
    tg_optim_group_opts h = { .lr = s.lr,
                              .weight_decay = s.weight_decay,
                              .momentum = s.momentum,
                              .dampening = s.dampening,
                              .beta1 = NAN,
                              .beta2 = NAN,
                              .eps = NAN,
                              .nesterov = s.nesterov,
                              .maximize = s.maximize,
                              .amsgrad = 0 };
    return optimizer_new(TG_OPTIM_SGD, params, h);
}

static tg_optim_group_opts adam_hyper(tg_adam_opts a)
{
    return (tg_optim_group_opts){ .lr = a.lr,
                                  .weight_decay = a.weight_decay,
                                  .momentum = NAN,
                                  .dampening = NAN,
                                  .beta1 = a.beta1,
                                  .beta2 = a.beta2,
                                  .eps = a.eps,
                                  .nesterov = 0,
                                  .maximize = a.maximize,
                                  .amsgrad = a.amsgrad };
}

tg_optimizer *tg_adam_new_fn(tg_optim_params params, tg_adam_opts opts)
{
    return optimizer_new(TG_OPTIM_ADAM, params, adam_hyper(opts));
}

tg_optimizer *tg_adamw_new_fn(tg_optim_params params, tg_adam_opts opts)
{
    return optimizer_new(TG_OPTIM_ADAMW, params, adam_hyper(opts));
}

/* ---- groups ---- */

tg__optim_group *tg__optim_get_group(const tg_optimizer *o, int group)
{
    if (!o) return tg_set_error("optimizer", "the optimizer is NULL");
    if (group < 0 || group >= o->n_groups)
        return tg_set_error(kind_name(o->kind), "group %d does not exist (the optimizer has %d)",
                            group, o->n_groups);
    return &o->groups[group];
}

/* A value given in `opts` (not NAN / -1) over the default's. */
static double pick(double given, double dflt) { return isnan(given) ? dflt : given; }
static int pick_flag(int given, int dflt) { return given < 0 ? dflt : given != 0; }

int tg_optimizer_add_group_fn(tg_optimizer *o, const char *pattern, tg_optim_group_opts opts)
{
    if (!tg__optim_get_group(o, 0)) return -1;
    const char *op = kind_name(o->kind);
    if (!pattern) return tg_set_error(op, "add_group: the pattern is NULL"), -1;
    const tg_optim_group_opts *d = &o->groups[0].h; /* the constructor's values */
    tg_optim_group_opts h = { .lr = pick(opts.lr, d->lr),
                              .weight_decay = pick(opts.weight_decay, d->weight_decay),
                              .momentum = pick(opts.momentum, d->momentum),
                              .dampening = pick(opts.dampening, d->dampening),
                              .beta1 = pick(opts.beta1, d->beta1),
                              .beta2 = pick(opts.beta2, d->beta2),
                              .eps = pick(opts.eps, d->eps),
                              .nesterov = pick_flag(opts.nesterov, d->nesterov),
                              .maximize = pick_flag(opts.maximize, d->maximize),
                              .amsgrad = pick_flag(opts.amsgrad, d->amsgrad) };
    if (tg__optim_check_hyper(o, &h) != 0) return -1;
    int64_t matched = 0;
    for (int64_t i = 0; i < o->n_params; i++)
        if (fnmatch(pattern, o->params[i].name, 0) == 0) matched++;
    if (matched == 0)
        return tg_set_error(op, "add_group: pattern '%s' matches no parameter", pattern), -1;
    tg__optim_group *g = realloc(o->groups, sizeof *g * (size_t)(o->n_groups + 1));
    if (!g) return tg_set_error(op, "out of memory"), -1;
    o->groups = g;
    int idx = o->n_groups++;
    g[idx].h = h;
    g[idx].initial_lr = NAN;
    for (int64_t i = 0; i < o->n_params; i++)
        if (fnmatch(pattern, o->params[i].name, 0) == 0) o->params[i].group = idx;
    return idx;
}

int tg_optimizer_num_groups(const tg_optimizer *o) { return o ? o->n_groups : 0; }

int tg_optimizer_group(const tg_optimizer *o, int group, tg_optim_group_opts *out)
{
    tg__optim_group *g = tg__optim_get_group(o, group);
    if (!g) return -1;
    *out = g->h;
    return 0;
}

int64_t tg_optimizer_group_size(const tg_optimizer *o, int group)
{
    if (!tg__optim_get_group(o, group)) return -1;
    int64_t n = 0;
    for (int64_t i = 0; i < o->n_params; i++) n += o->params[i].group == group;
    return n;
}

const char *tg_optimizer_group_param(const tg_optimizer *o, int group, int64_t k)
{
    if (!tg__optim_get_group(o, group)) return NULL;
    for (int64_t i = 0; i < o->n_params; i++)
        if (o->params[i].group == group && k-- == 0) return o->params[i].name;
    return tg_set_error(kind_name(o->kind), "group %d has no parameter %lld", group, (long long)k);
}

double tg_optimizer_lr(const tg_optimizer *o, int group)
{
    tg__optim_group *g = tg__optim_get_group(o, group);
    return g ? g->h.lr : NAN;
}

int tg_optimizer_set_lr(tg_optimizer *o, int group, double lr)
{
    tg__optim_group *g = tg__optim_get_group(o, group);
    if (!g) return -1;
    if (!(lr >= 0)) return tg_set_error(kind_name(o->kind), "Invalid learning rate: %g", lr), -1;
    g->h.lr = lr;
    return 0;
}

double tg_optimizer_momentum(const tg_optimizer *o, int group)
{
    tg__optim_group *g = tg__optim_get_group(o, group);
    if (!g) return NAN;
    return o->kind == TG_OPTIM_SGD ? g->h.momentum : g->h.beta1;
}

int tg_optimizer_set_momentum(tg_optimizer *o, int group, double momentum)
{
    tg__optim_group *g = tg__optim_get_group(o, group);
    if (!g) return -1;
    if (o->kind == TG_OPTIM_SGD) g->h.momentum = momentum;
    else g->h.beta1 = momentum;
    return 0;
}

int64_t tg_optimizer_param_steps(const tg_optimizer *o, const char *name)
{
    if (!tg__optim_get_group(o, 0)) return -1;
    for (int64_t i = 0; i < o->n_params; i++)
        if (name && strcmp(o->params[i].name, name) == 0) return o->params[i].step;
    tg_set_error(kind_name(o->kind), "no parameter named '%s'", name ? name : "(null)");
    return -1;
}

void tg_optimizer_zero_grad(tg_optimizer *o)
{
    if (!o) return;
    for (int64_t i = 0; i < o->n_params; i++)
        if (*o->params[i].slot) tg_tensor_set_grad(*o->params[i].slot, NULL);
}
