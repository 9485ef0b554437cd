/* What the files of nn/optim/ share: the optimizer's struct (parameters, groups, state) and the
 * checks of hyper-parameters. Internal to nn/optim/; users see tg_nn_optim.h. */
#ifndef TG_NN_OPTIM_INTERNAL_H
#define TG_NN_OPTIM_INTERNAL_H

#include "../nn_private.h"

/* One parameter: its name (owned copy), its slot (borrowed), its group and its state, made on
 * its first step (NULL until then; max_exp_avg_sq only with amsgrad, momentum_buffer only with
 * momentum). */
typedef struct tg__optim_param {
    char *name;
    tg_tensor **slot;
    int group;
    int64_t step; /* torch's state['step']: steps taken */
    tg_tensor *momentum_buffer, *exp_avg, *exp_avg_sq, *max_exp_avg_sq;
} tg__optim_param;

/* A group's hyper-parameters: every field set (flags 0 or 1). initial_lr is NAN until a
 * scheduler records it (torch's group['initial_lr']). */
typedef struct tg__optim_group {
    tg_optim_group_opts h;
    double initial_lr;
} tg__optim_group;

struct tg_optimizer {
    tg_optimizer_kind kind;
    tg__optim_param *params;
    int64_t n_params;
    tg__optim_group *groups;
    int n_groups;
};

/* Checks a group's hyper-parameters as torch's constructors do; 0 or -1 with the error. */
int tg__optim_check_hyper(const tg_optimizer *o, const tg_optim_group_opts *h);
/* The group, or NULL with an error naming the optimizer. */
tg__optim_group *tg__optim_get_group(const tg_optimizer *o, int group);
/* t's shape as PyTorch prints it, "[3, 4]", into buf; returns buf. */
const char *tg__optim_shape_str(char *buf, size_t cap, const tg_tensor *t);
/* Releases a parameter's state tensors and resets its step count. */
void tg__optim_param_clear_state(tg__optim_param *p);

#endif
