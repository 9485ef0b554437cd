/* What the schedule files share (nn/optim/scheduler.c: the base class, SequentialLR and state;
 * nn/optim/schedules.c: the kinds): the struct, which mirrors torch's _LRScheduler fields, and
 * the hooks of a kind. Internal to nn/optim/. */
#ifndef TG_NN_SCHED_INTERNAL_H
#define TG_NN_SCHED_INTERNAL_H

#include "optim_internal.h"

typedef struct tg__sched_kind {
    const char *name; /* "StepLR" */
    /* get_lr(): the chainable form, one value per group into out; 0 or -1. */
    int (*get_lr)(tg_lr_scheduler *s, double *out);
    /* _get_closed_form_lr(), used by step(epoch); NULL when the kind has none. */
    int (*closed_form)(tg_lr_scheduler *s, double *out);
    void (*fini)(tg_lr_scheduler *s); /* frees what the kind holds; may be NULL */
} tg__sched_kind;

/* One OneCycleLR phase: the step it ends at and which values it goes between (0: initial_lr,
 * 1: max_lr, 2: min_lr; momenta 0: max, 1: base). */
typedef struct tg__one_cycle_phase {
    double end_step;
    int start_lr, end_lr, start_m, end_m;
} tg__one_cycle_phase;

struct tg_lr_scheduler {
    const tg__sched_kind *kind;
    tg_optimizer *opt;
    int n_groups;
    int64_t last_epoch, step_count;
    double *base_lrs, *last_lrs; /* [n_groups] */
    /* StepLR, MultiStepLR (milestones sorted), CosineAnnealingLR, LinearLR */
    int64_t step_size, T_max, total_iters;
    double gamma, eta_min, start_factor, end_factor;
    int64_t *milestones; /* also SequentialLR's */
    int n_milestones;
    /* SequentialLR */
    tg_lr_scheduler **children;
    int n_children;
    /* OneCycleLR: per group max_lr, min_lr, max_momentum, base_momentum ([n_groups] each) */
    int64_t total_steps;
    tg_one_cycle_lr_opts oc;
    tg__one_cycle_phase phases[3];
    int n_phases;
    double *max_lrs, *min_lrs, *max_m, *base_m;
};

/* torch's _LRScheduler.__init__ for a struct whose kind fields are set: initial_lr recorded in
 * the optimizer's groups (where absent), base_lrs, then the initial step to epoch 0. Frees s
 * and returns NULL on an error. */
tg_lr_scheduler *tg__sched_init(tg_lr_scheduler *s);
/* A zeroed scheduler of `kind` for o (arrays allocated), or NULL with an error. */
tg_lr_scheduler *tg__sched_alloc(const tg__sched_kind *kind, tg_optimizer *o);

#endif
