/* tensorgen nn: checkpoints that resume. One safetensors file holds the model's state dict
 * ("model."), the optimizer's state ("optimizer."), the schedule's ("scheduler."), the
 * loader's position ("loader."), the default generator's state ("rng") and the step: stopping
 * after step k and resuming from the file gives the same losses, bit for bit, as a run that
 * never stopped. Include <tensorgen.h> rather than this file.
 *
 *     tg_checkpoint ck = { .model = m, .optimizer = opt, .scheduler = sched, .loader = loader,
 *                          .step = step };
 *     tg_checkpoint_save("ckpt.safetensors", &ck);
 *     ...
 *     tg_checkpoint_load("ckpt.safetensors", &ck);   // ck.step is the saved step
 *
 * Parts left NULL are neither saved nor loaded. */
#ifndef TG_NN_CHECKPOINT_H
#define TG_NN_CHECKPOINT_H

#include "tg_nn_data.h"
#include "tg_nn_optim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_checkpoint {
    tg_module *model;
    tg_optimizer *optimizer;
    tg_lr_scheduler *scheduler;
    tg_loader *loader;
    int64_t step;
} tg_checkpoint;

/* Writes every part given, atomically (a failed save leaves an older file). 0 or -1. */
int tg_checkpoint_save(const char *path, const tg_checkpoint *c);
/* Reads the parts given back and sets c->step. The file must hold every part asked for (checked
 * before anything is loaded); each part loads all or nothing (a model whose shapes differ is
 * left unchanged). 0, or -1 with an error naming the file and the part. */
int tg_checkpoint_load(const char *path, tg_checkpoint *c);

#ifdef __cplusplus
}
#endif
#endif
