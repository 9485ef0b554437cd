/* The schedules' formulas, as torch.optim.lr_scheduler (1.13) writes them: StepLR, MultiStepLR,
 * CosineAnnealingLR, LinearLR and OneCycleLR. get_lr is the recursive (chainable) form, which
 * reads the group's current lr; closed_form is what step(epoch) uses (SequentialLR restarts a
 * schedule with it). Every expression keeps Python's order of operations so that the values
 * are torch's to the last bit (glibc's cos and pow are Python's math.cos and **). */
#include "sched_internal.h"

#include <stdlib.h>
#include <string.h>

static double group_lr(tg_lr_scheduler *s, int g) { return s->opt->groups[g].h.lr; }

/* ---- StepLR ---- */

static int step_get_lr(tg_lr_scheduler *s, double *out)
{
    bool same = s->last_epoch == 0 || s->last_epoch % s->step_size != 0;
    for (int g = 0; g < s->n_groups; g++)
        out[g] = same ? group_lr(s, g) : group_lr(s, g) * s->gamma;
    return 0;
}

static int step_closed(tg_lr_scheduler *s, double *out)
{
    for (int g = 0; g < s->n_groups; g++)
        out[g] = s->base_lrs[g] * pow(s->gamma, (double)(s->last_epoch / s->step_size));
    return 0;
}

static const tg__sched_kind step_kind = { "StepLR", step_get_lr, step_closed, NULL };

tg_lr_scheduler *tg_step_lr_new_fn(tg_optimizer *o, int64_t step_size, tg_step_lr_opts opts)
{
    if (step_size <= 0)
        return tg_set_error(step_kind.name, "step_size must be positive, but got %lld",
                            (long long)step_size);
    tg_lr_scheduler *s = tg__sched_alloc(&step_kind, o);
    if (!s) return NULL;
    s->step_size = step_size;
    s->gamma = opts.gamma;
    return tg__sched_init(s);
}

/* ---- MultiStepLR ---- */

static int64_t count_of(const tg_lr_scheduler *s, int64_t e)
{
    int64_t c = 0;
    for (int i = 0; i < s->n_milestones; i++) c += s->milestones[i] == e;
    return c;
}

static int multistep_get_lr(tg_lr_scheduler *s, double *out)
{
    int64_t c = count_of(s, s->last_epoch);
    for (int g = 0; g < s->n_groups; g++)
        out[g] = c == 0 ? group_lr(s, g) : group_lr(s, g) * pow(s->gamma, (double)c);
    return 0;
}

static int multistep_closed(tg_lr_scheduler *s, double *out)
{
    int64_t passed = 0; /* bisect_right(sorted milestones, last_epoch) */
    for (int i = 0; i < s->n_milestones; i++) passed += s->milestones[i] <= s->last_epoch;
    for (int g = 0; g < s->n_groups; g++) out[g] = s->base_lrs[g] * pow(s->gamma, (double)passed);
    return 0;
}

static const tg__sched_kind multistep_kind = { "MultiStepLR", multistep_get_lr, multistep_closed,
                                               NULL };

tg_lr_scheduler *tg_multi_step_lr_new_fn(tg_optimizer *o, tg_int_list milestones,
                                         tg_step_lr_opts opts)
{
    if (milestones.len < 0 || (milestones.len > 0 && !milestones.data))
        return tg_set_error(multistep_kind.name, "milestones is not a list");
    tg_lr_scheduler *s = tg__sched_alloc(&multistep_kind, o);
    if (!s) return NULL;
    s->milestones = malloc(sizeof(int64_t) * (size_t)(milestones.len + 1));
    if (!s->milestones) {
        tg_lr_scheduler_free(s);
        return tg_set_error(multistep_kind.name, "out of memory");
    }
    if (milestones.len)
        memcpy(s->milestones, milestones.data, sizeof(int64_t) * (size_t)milestones.len);
    s->n_milestones = (int)milestones.len;
    s->gamma = opts.gamma;
    return tg__sched_init(s);
}

/* ---- CosineAnnealingLR ---- */

static int cosine_get_lr(tg_lr_scheduler *s, double *out)
{
    double T = (double)s->T_max, le = (double)s->last_epoch, eta = s->eta_min;
    for (int g = 0; g < s->n_groups; g++) {
        double lr = group_lr(s, g), base = s->base_lrs[g];
        if (s->last_epoch == 0) out[g] = lr;
        else if (s->step_count == 1 && s->last_epoch > 0)
            out[g] = eta + (base - eta) * (1 + cos(le * M_PI / T)) / 2;
        else if ((s->last_epoch - 1 - s->T_max) % (2 * s->T_max) == 0)
            out[g] = lr + (base - eta) * (1 - cos(M_PI / T)) / 2;
        else out[g] = (1 + cos(M_PI * le / T)) / (1 + cos(M_PI * (le - 1) / T)) * (lr - eta) + eta;
    }
    return 0;
}

static int cosine_closed(tg_lr_scheduler *s, double *out)
{
    double T = (double)s->T_max, le = (double)s->last_epoch, eta = s->eta_min;
    for (int g = 0; g < s->n_groups; g++)
        out[g] = eta + (s->base_lrs[g] - eta) * (1 + cos(M_PI * le / T)) / 2;
    return 0;
}

static const tg__sched_kind cosine_kind = { "CosineAnnealingLR", cosine_get_lr, cosine_closed,
                                            NULL };

tg_lr_scheduler *tg_cosine_annealing_lr_new_fn(tg_optimizer *o, int64_t T_max,
                                               tg_cosine_annealing_lr_opts opts)
{
    if (T_max <= 0)
        return tg_set_error(cosine_kind.name, "T_max must be positive, but got %lld",
                            (long long)T_max);
    tg_lr_scheduler *s = tg__sched_alloc(&cosine_kind, o);
    if (!s) return NULL;
    s->T_max = T_max;
    s->eta_min = opts.eta_min;
    return tg__sched_init(s);
}

/* ---- LinearLR ---- */

static int linear_get_lr(tg_lr_scheduler *s, double *out)
{
    double sf = s->start_factor, ef = s->end_factor;
    double den = (double)s->total_iters * sf + (double)(s->last_epoch - 1) * (ef - sf);
    bool mid = s->last_epoch != 0 && s->last_epoch <= s->total_iters;
    if (mid && den == 0) return tg_set_error("LinearLR", "float division by zero"), -1;
    for (int g = 0; g < s->n_groups; g++) {
        double lr = group_lr(s, g);
        if (s->last_epoch == 0) out[g] = lr * sf;
        else if (s->last_epoch > s->total_iters) out[g] = lr;
        else out[g] = lr * (1. + (ef - sf) / den);
    }
    return 0;
}

static int linear_closed(tg_lr_scheduler *s, double *out)
{
    if (s->total_iters == 0) return tg_set_error("LinearLR", "float division by zero"), -1;
    int64_t m = s->total_iters < s->last_epoch ? s->total_iters : s->last_epoch;
    for (int g = 0; g < s->n_groups; g++)
        out[g] = s->base_lrs[g] * (s->start_factor + (s->end_factor - s->start_factor) * (double)m /
                                                         (double)s->total_iters);
    return 0;
}

static const tg__sched_kind linear_kind = { "LinearLR", linear_get_lr, linear_closed, NULL };

tg_lr_scheduler *tg_linear_lr_new_fn(tg_optimizer *o, tg_linear_lr_opts opts)
{
    const char *op = linear_kind.name;
    if (opts.start_factor > 1.0 || opts.start_factor < 0 || isnan(opts.start_factor))
        return tg_set_error(op, "Starting multiplicative factor expected to be between 0 and 1.");
    if (opts.end_factor > 1.0 || opts.end_factor < 0 || isnan(opts.end_factor))
        return tg_set_error(op, "Ending multiplicative factor expected to be between 0 and 1.");
    if (opts.total_iters < 0)
        return tg_set_error(op, "total_iters must be >= 0, but got %lld",
                            (long long)opts.total_iters);
    tg_lr_scheduler *s = tg__sched_alloc(&linear_kind, o);
    if (!s) return NULL;
    s->start_factor = opts.start_factor;
    s->end_factor = opts.end_factor;
    s->total_iters = opts.total_iters;
    return tg__sched_init(s);
}

/* ---- OneCycleLR ---- */

static double anneal(const tg_lr_scheduler *s, double start, double end, double pct)
{
    if (s->oc.anneal_strategy == TG_ANNEAL_LINEAR) return (end - start) * pct + start;
    double cos_out = cos(M_PI * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
}

static int one_cycle_get_lr(tg_lr_scheduler *s, double *out)
{
    int64_t step_num = s->last_epoch;
    if (step_num > s->total_steps)
        return tg_set_error("OneCycleLR",
                            "Tried to step %lld times. The specified number of total steps is %lld",
                            (long long)(step_num + 1), (long long)s->total_steps),
               -1;
    for (int g = 0; g < s->n_groups; g++) {
        double lrs[3] = { s->opt->groups[g].initial_lr, s->max_lrs[g], s->min_lrs[g] };
        double ms[2] = { s->max_m[g], s->base_m[g] };
        double start_step = 0;
        for (int i = 0; i < s->n_phases; i++) {
            const tg__one_cycle_phase *ph = &s->phases[i];
            if ((double)step_num <= ph->end_step || i == s->n_phases - 1) {
                double pct = ((double)step_num - start_step) / (ph->end_step - start_step);
                out[g] = anneal(s, lrs[ph->start_lr], lrs[ph->end_lr], pct);
                if (s->oc.cycle_momentum)
                    tg_optimizer_set_momentum(s->opt, g,
                                              anneal(s, ms[ph->start_m], ms[ph->end_m], pct));
                break;
            }
            start_step = ph->end_step;
        }
    }
    return 0;
}

static const tg__sched_kind one_cycle_kind = { "OneCycleLR", one_cycle_get_lr, NULL, NULL };

static int one_cycle_check(int64_t total_steps, const tg_one_cycle_lr_opts *c)
{
    const char *op = one_cycle_kind.name;
    if (total_steps <= 0)
        return tg_set_error(op, "Expected positive integer total_steps, but got %lld",
                            (long long)total_steps),
               -1;
    if (!(c->pct_start >= 0 && c->pct_start <= 1))
        return tg_set_error(op, "Expected float between 0 and 1 pct_start, but got %g",
                            c->pct_start),
               -1;
    if (c->anneal_strategy != TG_ANNEAL_COS && c->anneal_strategy != TG_ANNEAL_LINEAR)
        return tg_set_error(op, "anneal_strategy must by one of 'cos' or 'linear', instead got %d",
                            (int)c->anneal_strategy),
               -1;
    return 0;
}

tg_lr_scheduler *tg_one_cycle_lr_new_fn(tg_optimizer *o, double max_lr, int64_t total_steps,
                                        tg_one_cycle_lr_opts opts)
{
    if (one_cycle_check(total_steps, &opts) != 0) return NULL;
    tg_lr_scheduler *s = tg__sched_alloc(&one_cycle_kind, o);
    if (!s) return NULL;
    size_t n = (size_t)s->n_groups;
    s->max_lrs = calloc(n, sizeof(double));
    s->min_lrs = calloc(n, sizeof(double));
    s->max_m = calloc(n, sizeof(double));
    s->base_m = calloc(n, sizeof(double));
    if (!s->max_lrs || !s->min_lrs || !s->max_m || !s->base_m) {
        tg_lr_scheduler_free(s);
        return tg_set_error(one_cycle_kind.name, "out of memory");
    }
    s->total_steps = total_steps;
    s->oc = opts;
    double total = (double)total_steps, pct = opts.pct_start;
    if (opts.three_phase) {
        s->phases[0] = (tg__one_cycle_phase){ pct * total - 1, 0, 1, 0, 1 };
        s->phases[1] = (tg__one_cycle_phase){ 2 * pct * total - 2, 1, 0, 1, 0 };
        s->phases[2] = (tg__one_cycle_phase){ total - 1, 0, 2, 0, 0 };
        s->n_phases = 3;
    } else {
        s->phases[0] = (tg__one_cycle_phase){ pct * total - 1, 0, 1, 0, 1 };
        s->phases[1] = (tg__one_cycle_phase){ total - 1, 1, 2, 1, 0 };
        s->n_phases = 2;
    }
    for (int g = 0; g < s->n_groups; g++) {
        tg__optim_group *gr = &o->groups[g];
        gr->initial_lr = max_lr / opts.div_factor; /* set, not setdefault, as torch does */
        s->max_lrs[g] = max_lr;
        s->min_lrs[g] = gr->initial_lr / opts.final_div_factor;
        if (opts.cycle_momentum) {
            tg_optimizer_set_momentum(o, g, opts.max_momentum);
            s->max_m[g] = opts.max_momentum;
            s->base_m[g] = opts.base_momentum;
        }
    }
    return tg__sched_init(s);
}
