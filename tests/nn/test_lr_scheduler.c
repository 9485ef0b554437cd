/* Learning-rate schedules (nn/optim/scheduler.c, schedules.c) against
 * torch.optim.lr_scheduler 1.13 (fixtures from tests/nn/oracle_optim.py): the lr of two groups
 * (0.1 and 0.05) after creation and after each of 30 steps, OneCycleLR's momentum (SGD) and
 * beta1 (Adam) too; PyTorch's errors; and a save/load round trip. Metric: relative error
 * 1e-12 (the recursive forms keep Python's order of operations, so the values are in fact
 * bit-identical; the bound leaves room for another libm). */
#include "../runtime/rt_test.h"
#include "kt_util.h"
#include "tensorgen.h"

#include "fixtures/optim_expected.h"

TestSuite(lr_scheduler, .fini = rt_leak_check);

/* An optimizer with two groups: "w" at lr 0.1 and "b" at lr 0.05 (SGD momentum 0.9, or Adam). */
typedef struct sched_fix {
    tg_tensor *w, *b;
    tg_named_tensor nt[2];
    tg_optimizer *opt;
} sched_fix;

static void sf_init(sched_fix *f, bool adam)
{
    f->w = tg_zeros(TG_INTS(2));
    f->b = tg_zeros(TG_INTS(2));
    f->nt[0] = (tg_named_tensor){ "w", &f->w, false };
    f->nt[1] = (tg_named_tensor){ "b", &f->b, false };
    tg_named_tensors l = { f->nt, 2 };
    f->opt = adam ? tg_adam_new(TG_NAMED_PARAMS(l), .lr = 0.1)
                  : tg_sgd_new(TG_NAMED_PARAMS(l), .lr = 0.1, .momentum = 0.9);
    cr_assert(f->opt);
    cr_assert_eq(tg_optimizer_add_group(f->opt, "b", .lr = 0.05), 1);
}

static void sf_free(sched_fix *f)
{
    tg_optimizer_free(f->opt);
    tg_release(f->w);
    tg_release(f->b);
}

static void expect_rel(double got, double want, const char *what, int step, int g)
{
    cr_expect(fabs(got - want) <= 1e-12 * fabs(want), "%s step %d group %d: got %.17g, want %.17g",
              what, step, g, got, want);
}

/* The schedule's values at step `step` (0: after creation). */
static void check_at(sched_fix *f, tg_lr_scheduler *s, const double *lrs, const double *moms,
                     int step, const char *what)
{
    for (int g = 0; g < 2; g++) {
        expect_rel(tg_lr_scheduler_last_lr(s, g), lrs[2 * step + g], what, step, g);
        expect_rel(tg_optimizer_lr(f->opt, g), lrs[2 * step + g], what, step, g);
        if (moms) expect_rel(tg_optimizer_momentum(f->opt, g), moms[2 * step + g], what, step, g);
    }
}

/* Steps the schedule SCHED_STEPS times (after an optimizer step, as in training), checking. */
static void run_schedule(sched_fix *f, tg_lr_scheduler *s, const double *lrs, const double *moms,
                         const char *what)
{
    cr_assert(s, "%s: %s", what, tg_last_error());
    check_at(f, s, lrs, moms, 0, what);
    for (int i = 1; i <= SCHED_STEPS; i++) {
        cr_assert_eq(tg_optimizer_step(f->opt), 0);
        cr_assert_eq(tg_lr_scheduler_step(s), 0, "%s: %s", what, tg_last_error());
        check_at(f, s, lrs, moms, i, what);
    }
    cr_expect_eq(tg_lr_scheduler_last_epoch(s), SCHED_STEPS);
    tg_lr_scheduler_free(s);
    sf_free(f);
}

Test(lr_scheduler, step_lr)
{
    sched_fix f;
    sf_init(&f, false);
    run_schedule(&f, tg_step_lr_new(f.opt, 7, .gamma = 0.5), SCHED_LR_step_lr, NULL, "StepLR");
}

Test(lr_scheduler, multi_step_lr)
{
    sched_fix f;
    sf_init(&f, false);
    run_schedule(&f, tg_multi_step_lr_new(f.opt, TG_INTS(5, 12, 12, 20), .gamma = 0.3),
                 SCHED_LR_multi_step_lr, NULL, "MultiStepLR");
}

Test(lr_scheduler, cosine_annealing_past_t_max)
{
    sched_fix f;
    sf_init(&f, false);
    run_schedule(&f, tg_cosine_annealing_lr_new(f.opt, 10, .eta_min = 0.001), SCHED_LR_cosine, NULL,
                 "CosineAnnealingLR");
}

Test(lr_scheduler, linear_warmup)
{
    sched_fix f;
    sf_init(&f, false);
    run_schedule(&f,
                 tg_linear_lr_new(f.opt, .start_factor = 0.1, .end_factor = 1.0, .total_iters = 5),
                 SCHED_LR_linear, NULL, "LinearLR");
}

Test(lr_scheduler, linear_defaults)
{
    sched_fix f;
    sf_init(&f, false);
    run_schedule(&f, tg_linear_lr_new(f.opt), SCHED_LR_linear_default, NULL, "LinearLR default");
}

Test(lr_scheduler, sequential_warmup_then_cosine)
{
    sched_fix f;
    sf_init(&f, false);
    tg_lr_scheduler *parts[2];
    parts[0] = tg_linear_lr_new(f.opt, .start_factor = 0.1, .total_iters = 5);
    parts[1] = tg_cosine_annealing_lr_new(f.opt, 25, .eta_min = 1e-4);
    run_schedule(&f, tg_sequential_lr_new(f.opt, parts, 2, TG_INTS(5)), SCHED_LR_sequential, NULL,
                 "SequentialLR");
}

Test(lr_scheduler, one_cycle_cos_sgd_momentum)
{
    sched_fix f;
    sf_init(&f, false);
    run_schedule(&f, tg_one_cycle_lr_new(f.opt, 0.5, SCHED_STEPS), SCHED_LR_one_cycle_cos,
                 SCHED_MOMENTUM_one_cycle_cos, "OneCycleLR cos");
}

Test(lr_scheduler, one_cycle_linear_three_phase_adam_beta1)
{
    sched_fix f;
    sf_init(&f, true);
    run_schedule(&f,
                 tg_one_cycle_lr_new(f.opt, 0.01, SCHED_STEPS, .pct_start = 0.25,
                                     .anneal_strategy = TG_ANNEAL_LINEAR, .three_phase = true,
                                     .base_momentum = 0.8, .max_momentum = 0.9, .div_factor = 10.0,
                                     .final_div_factor = 100.0),
                 SCHED_LR_one_cycle_linear3_adam, SCHED_MOMENTUM_one_cycle_linear3_adam,
                 "OneCycleLR linear three-phase");
}

Test(lr_scheduler, one_cycle_past_total_steps)
{
    sched_fix f;
    sf_init(&f, false);
    tg_lr_scheduler *s = tg_one_cycle_lr_new(f.opt, 0.5, 4);
    for (int i = 0; i < 4; i++) cr_assert_eq(tg_lr_scheduler_step(s), 0);
    double lr = tg_optimizer_lr(f.opt, 0);
    KT_EXPECT_ERROR(tg_lr_scheduler_step(s) == 0,
                    "OneCycleLR: Tried to step 6 times. The specified number of total steps is 4");
    cr_expect_eq(tg_optimizer_lr(f.opt, 0), lr);
    cr_expect_eq(tg_lr_scheduler_last_epoch(s), 4);
    tg_lr_scheduler_free(s);
    sf_free(&f);
}

Test(lr_scheduler, bad_arguments)
{
    sched_fix f;
    sf_init(&f, false);
    KT_EXPECT_ERROR(tg_linear_lr_new(f.opt, .start_factor = 1.5),
                    "LinearLR: Starting multiplicative factor expected to be between 0 and 1.");
    KT_EXPECT_ERROR(tg_linear_lr_new(f.opt, .end_factor = -1),
                    "LinearLR: Ending multiplicative factor expected to be between 0 and 1.");
    KT_EXPECT_ERROR(tg_one_cycle_lr_new(f.opt, 0.1, 0),
                    "OneCycleLR: Expected positive integer total_steps, but got 0");
    KT_EXPECT_ERROR(tg_one_cycle_lr_new(f.opt, 0.1, 10, .pct_start = 1.5),
                    "OneCycleLR: Expected float between 0 and 1 pct_start, but got 1.5");
    KT_EXPECT_ERROR(tg_step_lr_new(f.opt, 0), "StepLR: step_size must be positive, but got 0");
    KT_EXPECT_ERROR(tg_cosine_annealing_lr_new(f.opt, -3),
                    "CosineAnnealingLR: T_max must be positive, but got -3");
    KT_EXPECT_ERROR(tg_step_lr_new(NULL, 3), "StepLR: the optimizer is NULL");
    /* a wrong milestone count: the schedules given are freed (the leak check sees it) */
    tg_lr_scheduler *parts[2] = { tg_linear_lr_new(f.opt), tg_step_lr_new(f.opt, 3) };
    KT_EXPECT_ERROR(
        tg_sequential_lr_new(f.opt, parts, 2, TG_INTS(3, 6)),
        "SequentialLR: Sequential Schedulers expects number of schedulers provided to be "
        "one more than the number of milestone points, but got number of schedulers 2 "
        "and the number of milestones to be equal to 2");
    tg_lr_scheduler *s = tg_step_lr_new(f.opt, 3);
    KT_EXPECT_ERROR(!isnan(tg_lr_scheduler_last_lr(s, 2)),
                    "StepLR: group 2 does not exist (the optimizer has 2)");
    tg_lr_scheduler_free(s);
    sf_free(&f);
}

/* k steps, save optimizer and schedule, fresh ones made with the same arguments, load, the
 * remaining steps: the values of the uninterrupted run (the fixture). */
static tg_lr_scheduler *make_sequential(tg_optimizer *o)
{
    tg_lr_scheduler *parts[2];
    parts[0] = tg_linear_lr_new(o, .start_factor = 0.1, .total_iters = 5);
    parts[1] = tg_cosine_annealing_lr_new(o, 25, .eta_min = 1e-4);
    return tg_sequential_lr_new(o, parts, 2, TG_INTS(5));
}

static tg_lr_scheduler *make_one_cycle(tg_optimizer *o)
{
    return tg_one_cycle_lr_new(o, 0.5, SCHED_STEPS);
}

static void round_trip(tg_lr_scheduler *(*make)(tg_optimizer *), const double *lrs,
                       const double *moms, int k)
{
    sched_fix f;
    sf_init(&f, false);
    tg_lr_scheduler *s = make(f.opt);
    for (int i = 1; i <= k; i++) cr_assert_eq(tg_lr_scheduler_step(s), 0);
    tg_state *st = tg_state_new();
    cr_assert_eq(tg_optimizer_save_state(f.opt, st, "optimizer."), 0, "%s", tg_last_error());
    cr_assert_eq(tg_lr_scheduler_save_state(s, st, "scheduler."), 0, "%s", tg_last_error());
    tg_lr_scheduler_free(s);
    sf_free(&f);

    sched_fix g;
    sf_init(&g, false);
    tg_lr_scheduler *r = make(g.opt);
    cr_assert_eq(tg_optimizer_load_state(g.opt, st, "optimizer."), 0, "%s", tg_last_error());
    cr_assert_eq(tg_lr_scheduler_load_state(r, st, "scheduler."), 0, "%s", tg_last_error());
    check_at(&g, r, lrs, moms, k, "loaded");
    for (int i = k + 1; i <= SCHED_STEPS; i++) {
        cr_assert_eq(tg_lr_scheduler_step(r), 0);
        check_at(&g, r, lrs, moms, i, "resumed");
    }
    KT_EXPECT_ERROR(tg_lr_scheduler_load_state(r, st, "optimizer.") == 0,
                    tg_lr_scheduler_last_epoch(r) >= 0 && make == make_sequential
                        ? "SequentialLR: load_state: 'optimizer.kind' is 'SGD', not 'SequentialLR'"
                        : "OneCycleLR: load_state: 'optimizer.kind' is 'SGD', not 'OneCycleLR'");
    tg_lr_scheduler_free(r);
    sf_free(&g);
    tg_state_free(st);
}

Test(lr_scheduler, save_load_resumes)
{
    round_trip(make_sequential, SCHED_LR_sequential, NULL, 3);  /* inside the warm-up */
    round_trip(make_sequential, SCHED_LR_sequential, NULL, 12); /* inside the cosine */
    round_trip(make_one_cycle, SCHED_LR_one_cycle_cos, SCHED_MOMENTUM_one_cycle_cos, 11);
}
