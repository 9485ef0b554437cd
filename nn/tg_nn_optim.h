/* tensorgen nn: optimizers, learning-rate schedules and gradient clipping (PyTorch 1.13's
 * torch.optim, torch.optim.lr_scheduler and torch.nn.utils.clip_grad_*), written with the fused
 * operators sgd_step_ and adam_step_. Include <tensorgen.h> rather than this file.
 *
 *     tg_optimizer *opt = tg_adamw_new(TG_MODULE_PARAMS(model), .lr = 3e-4);
 *     tg_optimizer_add_group(opt, "*.bias", .weight_decay = 0);   // biases: no decay
 *     tg_lr_scheduler *sched = tg_cosine_annealing_lr_new(opt, 1000);
 *     for (int it = 0; it < 1000; it++) {
 *         tg_optimizer_zero_grad(opt);
 *         ... forward, tg_backward(loss) ...
 *         tg_optimizer_clip_grad_norm_(opt, 1.0, 2.0);
 *         if (tg_optimizer_step(opt) != 0) fail(tg_last_error());
 *         tg_lr_scheduler_step(sched);                            // after the optimizer's step
 *     }
 *     tg_lr_scheduler_free(sched);
 *     tg_optimizer_free(opt);                                      // before the module
 *
 * Parameters are slots (tg_tensor **, borrowed): each step reads the tensor in the slot, so a
 * module that replaces its tensors (tg_module_to, loading a state dict) keeps its optimizer.
 * The optimizer must not outlive the slots. A parameter without .grad is skipped by a step, as
 * in PyTorch. Per-parameter state (momentum_buffer, exp_avg, exp_avg_sq, max_exp_avg_sq and
 * the step count) is made on a parameter's first step, zeros of its dtype on its device.
 *
 * Options follow the operators' convention: what a call leaves out has PyTorch's default
 * (SGD's lr has none: leaving it out is an error, as torch's `required`). Errors never abort:
 * NULL or -1 with tg_last_error() naming the optimizer or schedule in PyTorch's words
 * ("SGD: Invalid learning rate: -1"), and nothing changed by a failed call. */
#ifndef TG_NN_OPTIM_H
#define TG_NN_OPTIM_H

#include <math.h>

#include "tg_core.h"
#include "tg_nn_module.h"
#include "tg_nn_state.h"
#include "tg_op_types.h" /* the option macros' warning setting */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- parameters ---- */
/* Where an optimizer's parameters come from: a module (its named parameters, as
 * tg_module_named_tensors lists them: PyTorch's names, tied tensors once), or a list of named
 * slots (the slots are borrowed, the names copied; buffers in the list are taken too, so pass
 * parameters). Names must be unique and no tensor may appear twice. */
typedef struct tg_optim_params {
    tg_module *module;
    const tg_named_tensor *data;
    int64_t len;
} tg_optim_params;
#define TG_MODULE_PARAMS(m) ((tg_optim_params){ .module = (m), .data = NULL, .len = 0 })
#define TG_NAMED_PARAMS(list) \
    ((tg_optim_params){ .module = NULL, .data = (list).data, .len = (list).len })

/* ---- optimizers ---- */
typedef struct tg_optimizer tg_optimizer;
typedef enum tg_optimizer_kind { TG_OPTIM_SGD, TG_OPTIM_ADAM, TG_OPTIM_ADAMW } tg_optimizer_kind;

/* torch.optim.SGD: lr is required; momentum, dampening, weight_decay 0; nesterov and maximize
 * false. nesterov needs momentum > 0 and dampening 0. */
typedef struct tg_sgd_opts {
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize;
} tg_sgd_opts;
tg_optimizer *tg_sgd_new_fn(tg_optim_params params, tg_sgd_opts opts);
#define tg_sgd_new(params, ...)                               \
    tg_sgd_new_fn((params), (tg_sgd_opts){ .lr = NAN,         \
                                           .momentum = 0,     \
                                           .dampening = 0,    \
                                           .weight_decay = 0, \
                                           .nesterov = false, \
                                           .maximize = false, \
                                           __VA_ARGS__ })

/* torch.optim.Adam and AdamW: lr 1e-3, betas (beta1, beta2) = (0.9, 0.999), eps 1e-8,
 * weight_decay 0 for Adam (added to the gradient) and 1e-2 for AdamW (decoupled: the parameter
 * is multiplied by 1 - lr * weight_decay), amsgrad and maximize false. */
typedef struct tg_adam_opts {
    double lr, beta1, beta2, eps, weight_decay;
    bool amsgrad, maximize;
} tg_adam_opts;
tg_optimizer *tg_adam_new_fn(tg_optim_params params, tg_adam_opts opts);
tg_optimizer *tg_adamw_new_fn(tg_optim_params params, tg_adam_opts opts);
#define tg_adam_new(params, ...)                                \
    tg_adam_new_fn((params), (tg_adam_opts){ .lr = 1e-3,        \
                                             .beta1 = 0.9,      \
                                             .beta2 = 0.999,    \
                                             .eps = 1e-8,       \
                                             .weight_decay = 0, \
                                             .amsgrad = false,  \
                                             .maximize = false, \
                                             __VA_ARGS__ })
#define tg_adamw_new(params, ...)                                   \
    tg_adamw_new_fn((params), (tg_adam_opts){ .lr = 1e-3,           \
                                              .beta1 = 0.9,         \
                                              .beta2 = 0.999,       \
                                              .eps = 1e-8,          \
                                              .weight_decay = 1e-2, \
                                              .amsgrad = false,     \
                                              .maximize = false,    \
                                              __VA_ARGS__ })

/* Frees the optimizer and its state (the parameters are not its). NULL: no-op. */
void tg_optimizer_free(tg_optimizer *o);
tg_optimizer_kind tg_optimizer_kind_of(const tg_optimizer *o);
/* "SGD", "Adam" or "AdamW". */
const char *tg_optimizer_name(const tg_optimizer *o);

/* One step over every parameter that has a .grad, in grad mode off; 0 or -1 (every gradient and
 * state tensor is checked before any parameter changes). */
int tg_optimizer_step(tg_optimizer *o);
/* Every parameter's .grad set to None (PyTorch's zero_grad(set_to_none=True)). Gradients
 * accumulate in .grad between two calls (gradient accumulation needs nothing else). */
void tg_optimizer_zero_grad(tg_optimizer *o);

/* ---- parameter groups ----
 * Group 0 holds every parameter at first, with the constructor's hyper-parameters.
 * tg_optimizer_add_group moves the parameters whose dotted name matches `pattern` (fnmatch(3)
 * glob without FNM_PATHNAME, so '*' crosses dots: "*.bias", "*norm*", "fc.weight") out of
 * whatever group holds them into a new group, which takes the given hyper-parameters and the
 * constructor's for the rest (a later pattern wins over an earlier one). Returns the new group's
 * index, or -1: a pattern that matches no parameter is an error (a typo would otherwise change
 * nothing silently), as are invalid values. A group left empty stays, with no parameters.
 * Fields not given are NAN (doubles) or -1 (flags); which apply depends on the optimizer
 * (momentum, dampening, nesterov: SGD; beta1, beta2, eps, amsgrad: Adam, AdamW). */
typedef struct tg_optim_group_opts {
    double lr, weight_decay, momentum, dampening, beta1, beta2, eps;
    int nesterov, maximize, amsgrad; /* -1: not given, else false (0) or true (1) */
} tg_optim_group_opts;
int tg_optimizer_add_group_fn(tg_optimizer *o, const char *pattern, tg_optim_group_opts opts);
#define tg_optimizer_add_group(o, pattern, ...)                           \
    tg_optimizer_add_group_fn((o), (pattern),                             \
                              (tg_optim_group_opts){ .lr = NAN,           \
                                                     .weight_decay = NAN, \
                                                     .momentum = NAN,     \
                                                     .dampening = NAN,    \
                                                     .beta1 = NAN,        \
                                                     .beta2 = NAN,        \
                                                     .eps = NAN,          \
                                                     .nesterov = -1,      \
                                                     .maximize = -1,      \
                                                     .amsgrad = -1,       \
                                                     __VA_ARGS__ })

int tg_optimizer_num_groups(const tg_optimizer *o);
/* A group's hyper-parameters (every field set), 0 or -1 for a group that does not exist. */
int tg_optimizer_group(const tg_optimizer *o, int group, tg_optim_group_opts *out);
/* The number of parameters of a group and the name of its i-th (borrowed), or -1 / NULL. */
int64_t tg_optimizer_group_size(const tg_optimizer *o, int group);
const char *tg_optimizer_group_param(const tg_optimizer *o, int group, int64_t i);
/* A group's learning rate (NAN with an error for a bad group) and its setter (0, or -1 for a
 * bad group or a negative lr). Schedules assign lr unchecked, as torch assigns group['lr']. */
double tg_optimizer_lr(const tg_optimizer *o, int group);
int tg_optimizer_set_lr(tg_optimizer *o, int group, double lr);
/* The group's momentum as OneCycleLR cycles it: SGD's momentum, Adam's beta1. */
double tg_optimizer_momentum(const tg_optimizer *o, int group);
int tg_optimizer_set_momentum(tg_optimizer *o, int group, double momentum);
/* The number of steps parameter `name` has taken (torch's state['step']; SGD counts too), or
 * -1 with an error for an unknown name. */
int64_t tg_optimizer_param_steps(const tg_optimizer *o, const char *name);

/* ---- state (tg_nn_state.h) ----
 * Saves under `prefix` (e.g. "optimizer."): tensors "<prefix>state.<param>.momentum_buffer",
 * ".exp_avg", ".exp_avg_sq", ".max_exp_avg_sq" (those the parameter has), metadata
 * "<prefix>state.<param>.step", "<prefix>kind", "<prefix>num_groups" and per group
 * "<prefix>param_groups.<g>.<hyper-parameter>" (lr, initial_lr when a scheduler set it, ...)
 * and ".params" (its parameters' names, comma-separated). 0 or -1.
 * Loading checks everything first (kind, groups and their parameters, every tensor's presence,
 * shape and dtype, no unknown "<prefix>state." tensor) and changes nothing on an error, which
 * names the key (and both shapes or dtypes); then, like torch's load_state_dict, it replaces
 * the groups' hyper-parameters and the whole state (copied into existing state tensors, or
 * into new ones on the parameter's device; a parameter absent from the file loses its state). */
int tg_optimizer_save_state(tg_optimizer *o, tg_state *s, const char *prefix);
int tg_optimizer_load_state(tg_optimizer *o, tg_state *s, const char *prefix);

/* ---- gradient clipping (torch.nn.utils) ---- */
/* clip_grad_norm_ (1.13, error_if_nonfinite=False) over the .grad of params[0..n) (params
 * without a gradient are skipped): the total norm_type-norm of the gradients (the norm of their
 * norms), then every gradient scaled in place by min(max_norm / (total + 1e-6), 1), in the
 * gradients' dtype with PyTorch's arithmetic. Returns the total norm (0 when no parameter has a
 * gradient; inf or NaN gradients give a non-finite total and scale the gradients by it, as
 * PyTorch does), or -1 with an error recorded (gradients of different devices or dtypes, a NULL
 * parameter). */
double tg_clip_grad_norm_(tg_tensor *const *params, int n, double max_norm, double norm_type);
/* clip_grad_value_: every .grad of params[0..n) clamped in place to [-clip_value, clip_value]
 * (parameters without a gradient skipped). 0 or -1. */
int tg_clip_grad_value_(tg_tensor *const *params, int n, double clip_value);
/* The same over an optimizer's parameters (every group): tg_clip_grad_norm_ returns the total
 * norm (or -1 with an error). */
double tg_optimizer_clip_grad_norm_(tg_optimizer *o, double max_norm, double norm_type);
int tg_optimizer_clip_grad_value_(tg_optimizer *o, double clip_value);

/* ---- learning-rate schedules (torch.optim.lr_scheduler) ----
 * A schedule is made for an optimizer (which must outlive it) and, as in PyTorch, sets every
 * group's lr at once: to its value at epoch 0 on creation, then to the next value at each
 * tg_lr_scheduler_step, called after tg_optimizer_step. Values use PyTorch's recursive
 * (chainable) forms, which read the group's current lr, and equal torch's to the last bit. */
typedef struct tg_lr_scheduler tg_lr_scheduler;

/* StepLR: lr times gamma (default 0.1) every step_size epochs. */
typedef struct tg_step_lr_opts {
    double gamma;
} tg_step_lr_opts;
tg_lr_scheduler *tg_step_lr_new_fn(tg_optimizer *o, int64_t step_size, tg_step_lr_opts opts);
#define tg_step_lr_new(o, step_size, ...) \
    tg_step_lr_new_fn((o), (step_size), (tg_step_lr_opts){ .gamma = 0.1, __VA_ARGS__ })

/* MultiStepLR: lr times gamma (default 0.1) at each milestone (epochs, repeats count twice). */
tg_lr_scheduler *tg_multi_step_lr_new_fn(tg_optimizer *o, tg_int_list milestones,
                                         tg_step_lr_opts opts);
#define tg_multi_step_lr_new(o, milestones, ...) \
    tg_multi_step_lr_new_fn((o), (milestones), (tg_step_lr_opts){ .gamma = 0.1, __VA_ARGS__ })

/* CosineAnnealingLR: from the initial lr down to eta_min (default 0) over T_max epochs, back up
 * over the next T_max, and so on. */
typedef struct tg_cosine_annealing_lr_opts {
    double eta_min;
} tg_cosine_annealing_lr_opts;
tg_lr_scheduler *tg_cosine_annealing_lr_new_fn(tg_optimizer *o, int64_t T_max,
                                               tg_cosine_annealing_lr_opts opts);
#define tg_cosine_annealing_lr_new(o, T_max, ...) \
    tg_cosine_annealing_lr_new_fn((o), (T_max),   \
                                  (tg_cosine_annealing_lr_opts){ .eta_min = 0, __VA_ARGS__ })

/* LinearLR (warm-up): lr times a factor going linearly from start_factor (default 1/3, in
 * [0, 1]; 0 fails at epoch 1 with torch's division by zero) to end_factor (default 1, in
 * [0, 1]) over total_iters (default 5) epochs. */
typedef struct tg_linear_lr_opts {
    double start_factor, end_factor;
    int64_t total_iters;
} tg_linear_lr_opts;
tg_lr_scheduler *tg_linear_lr_new_fn(tg_optimizer *o, tg_linear_lr_opts opts);
#define tg_linear_lr_new(o, ...)  \
    tg_linear_lr_new_fn(          \
        (o), (tg_linear_lr_opts){ \
                 .start_factor = 1.0 / 3, .end_factor = 1.0, .total_iters = 5, __VA_ARGS__ })

/* SequentialLR: schedules[0] until milestones[0], then schedules[1] (restarted at its epoch 0)
 * until milestones[1], ... (n schedules, n - 1 milestones). The schedules must have been made
 * for `o`, in order, just before; the new schedule owns them (freed with it, and also on an
 * error). */
tg_lr_scheduler *tg_sequential_lr_new(tg_optimizer *o, tg_lr_scheduler *const *schedules, int n,
                                      tg_int_list milestones);

/* OneCycleLR: lr from max_lr / div_factor up to max_lr over the first pct_start of total_steps,
 * then down to max_lr / div_factor / final_div_factor (three_phase: back to the initial lr
 * first, then down); with cycle_momentum the momentum (SGD's momentum, Adam's beta1) goes the
 * other way between max_momentum and base_momentum. Stepping past total_steps is an error. */
typedef enum tg_anneal_strategy { TG_ANNEAL_COS, TG_ANNEAL_LINEAR } tg_anneal_strategy;
typedef struct tg_one_cycle_lr_opts {
    double pct_start;
    tg_anneal_strategy anneal_strategy;
    bool cycle_momentum;
    double base_momentum, max_momentum, div_factor, final_div_factor;
    bool three_phase;
} tg_one_cycle_lr_opts;
tg_lr_scheduler *tg_one_cycle_lr_new_fn(tg_optimizer *o, double max_lr, int64_t total_steps,
                                        tg_one_cycle_lr_opts opts);
#define tg_one_cycle_lr_new(o, max_lr, total_steps, ...)                             \
    tg_one_cycle_lr_new_fn((o), (max_lr), (total_steps),                             \
                           (tg_one_cycle_lr_opts){ .pct_start = 0.3,                 \
                                                   .anneal_strategy = TG_ANNEAL_COS, \
                                                   .cycle_momentum = true,           \
                                                   .base_momentum = 0.85,            \
                                                   .max_momentum = 0.95,             \
                                                   .div_factor = 25.0,               \
                                                   .final_div_factor = 1e4,          \
                                                   .three_phase = false,             \
                                                   __VA_ARGS__ })

/* Advances one epoch and sets every group's lr (and momentum, for OneCycleLR). 0 or -1. */
int tg_lr_scheduler_step(tg_lr_scheduler *s);
/* The lr the schedule last set for `group` (get_last_lr()[group]), NAN for a bad group. */
double tg_lr_scheduler_last_lr(const tg_lr_scheduler *s, int group);
/* The epoch count (torch's last_epoch: 0 after creation). */
int64_t tg_lr_scheduler_last_epoch(const tg_lr_scheduler *s);
/* Saves (loads) the position under `prefix`: "<prefix>kind", "last_epoch", "step_count",
 * "base_lrs.<g>", "last_lrs.<g>" and, for SequentialLR, each schedule's under
 * "<prefix>schedulers.<i>.". The schedule's constructor arguments are not saved: make it with
 * the same ones, then load (kind and group count are checked; nothing changes on an error).
 * Loading does not set the optimizer's lr: the optimizer's own state holds it. 0 or -1. */
int tg_lr_scheduler_save_state(const tg_lr_scheduler *s, tg_state *st, const char *prefix);
int tg_lr_scheduler_load_state(tg_lr_scheduler *s, tg_state *st, const char *prefix);
void tg_lr_scheduler_free(tg_lr_scheduler *s);

#ifdef __cplusplus
}
#endif
#endif
