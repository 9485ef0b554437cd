/* tensorgen nn: the floor above the operators, as torch.nn, torch.optim and torch.utils.data
 * stand on ATen: modules (tg_nn_module.h), layers and initialisers (tg_nn_layers.h), state
 * dicts and checkpoints (tg_nn_state.h), optimizers and learning-rate schedules
 * (tg_nn_optim.h), datasets and the loader (tg_nn_data.h). Written with the public API of
 * tensorgen.h only; docs/nn.md is the tutorial. Include <tensorgen.h> rather than this file. */
#ifndef TG_NN_H
#define TG_NN_H

#include "tg_nn_module.h"
#include "tg_nn_layers.h"
#include "tg_nn_models.h"
#include "tg_nn_state.h"
#include "tg_nn_optim.h"
#include "tg_nn_data.h"
#include "tg_nn_checkpoint.h"

#endif
