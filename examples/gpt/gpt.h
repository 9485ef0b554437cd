/* A GPT-2-style transformer written with tensorgen's public API: the model of
 * examples/train_gpt.c and of the gpt_* benchmarks (bench/bench_lm.c).
 *
 * The model is GPT-2's: token and position embeddings, `layers` pre-LN blocks (layer norm,
 * causal self-attention with `heads` heads, residual add; layer norm, MLP C -> 4C -> C with
 * GELU (tanh approximation), residual add), a final layer norm and a language-model head tied
 * to the token embedding. Linear weights are (out, in) as torch.nn.Linear's.
 *
 * Parameters are plain tensors (leaves that require grad) in a struct; gpt_params() lists them
 * with their safetensors names (those of Hugging Face's GPT-2 where one exists, with Linear's
 * layout) for the optimizer, the checkpoint and the gradient clipping. Activations live in the
 * caller's scope: call gpt_loss()/gpt_logits() between tg_scope_begin() and tg_scope_end(). */
#ifndef TG_EXAMPLE_GPT_H
#define TG_EXAMPLE_GPT_H

#include <stdbool.h>
#include <stdint.h>

#include "tensorgen.h"

typedef struct gpt_config {
    int64_t vocab;    /* V: token ids 0..V-1 */
    int64_t context;  /* maximum sequence length T (rows of the position embedding) */
    int64_t layers;   /* L */
    int64_t heads;    /* NH; channels must be a multiple */
    int64_t channels; /* C */
} gpt_config;

typedef struct gpt_block {
    tg_tensor *ln1_w, *ln1_b;   /* (C) */
    tg_tensor *attn_w, *attn_b; /* (3C, C), (3C): q, k, v projections stacked */
    tg_tensor *proj_w, *proj_b; /* (C, C), (C) */
    tg_tensor *ln2_w, *ln2_b;   /* (C) */
    tg_tensor *fc_w, *fc_b;     /* (4C, C), (4C) */
    tg_tensor *out_w, *out_b;   /* (C, 4C), (C) */
} gpt_block;

typedef struct gpt {
    gpt_config cfg;
    tg_device device;
    tg_tensor *wte;    /* (V, C), also the LM head */
    tg_tensor *wpe;    /* (context, C) */
    gpt_block *blocks; /* [layers] */
    tg_tensor *lnf_w, *lnf_b;
} gpt;

/* One parameter: its slot in the model, its checkpoint name, and whether AdamW decays it
 * (GPT-2's convention: matrices and embeddings yes, biases and layer-norm gains no). */
typedef struct gpt_param {
    tg_tensor **slot;
    char name[48];
    bool decay;
} gpt_param;

/* Creates the parameters on `dev` with GPT-2's initialisation from the default generator
 * (seed it first with tg_manual_seed): weights N(0, 0.02), the residual projections
 * N(0, 0.02 / sqrt(2 L)), biases 0, layer-norm gains 1. 0, or -1 with tg_last_error(). */
int gpt_init(gpt *m, gpt_config cfg, tg_device dev);
void gpt_free(gpt *m);

/* The parameters in a fixed order: a malloc'd array of *n entries the caller free()s. */
gpt_param *gpt_params(gpt *m, int *n);
int64_t gpt_num_params(gpt *m);

/* Logits (B, T, V) for token ids idx (B, T) int64, T <= context. In the caller's scope. */
tg_tensor *gpt_logits(gpt *m, tg_tensor *idx);
/* Mean cross-entropy of the next-token predictions: a 0-dim tensor, in the caller's scope. */
tg_tensor *gpt_loss(gpt *m, tg_tensor *idx, tg_tensor *targets);

/* AdamW state: the two moment estimates of every parameter (lazily created) and the step. */
typedef struct gpt_adamw {
    double lr, beta1, beta2, eps, weight_decay;
    int64_t step;
    int n;
    tg_tensor **exp_avg, **exp_avg_sq;
} gpt_adamw;

/* One AdamW step (torch.optim.AdamW's arithmetic, weight decay only on `decay` parameters)
 * over the gradients the last backward left; clears them. 0, or -1 with tg_last_error(). */
int gpt_adamw_step(gpt *m, gpt_adamw *opt);
void gpt_adamw_free(gpt_adamw *opt);

/* Clears every parameter's gradient (PyTorch's zero_grad(set_to_none=True)). */
void gpt_zero_grad(gpt *m);

/* Checkpoints: the parameters in a safetensors file under gpt_params' names, the
 * configuration in its metadata. gpt_load creates the model the file describes on `dev` and
 * copies every parameter in (shapes checked). 0, or -1 with tg_last_error(). */
int gpt_save(gpt *m, const char *path);
int gpt_load(gpt *m, const char *path, tg_device dev);

#endif
