/* tensorgen nn: two model families with the module names of their reference implementations,
 * so that their state dicts load PyTorch's files as they are: torchvision's ResNet and
 * Hugging Face's GPT-2 (GPT2LMHeadModel). Include <tensorgen.h> rather than this file. */
#ifndef TG_NN_MODELS_H
#define TG_NN_MODELS_H

#include "tg_nn_module.h"

#ifdef __cplusplus
extern "C" {
#endif

/* torchvision.models.ResNet with BasicBlocks: conv1, bn1, relu, maxpool, layer1..layerN (each
 * a Sequential of blocks: conv1, bn1, relu, conv2, bn2 and a downsample Sequential(1x1 conv,
 * bn) where the shape changes), avgpool, fc; torchvision's initialisation (kaiming_normal_
 * fan_out for convolutions). Stage i has width * 2^i channels and blocks[i] blocks; stages
 * after the first halve the resolution. `.small_input` replaces the 7x7/2 stem and its max pool
 * by a 3x3/1 convolution (CIFAR-style, for 8x8 to 32x32 images). Input (N, in_channels, H, W),
 * output logits (N, num_classes). */
typedef struct tg_nn_resnet_opts {
    int64_t num_classes; /* 1000 */
    int64_t in_channels; /* 3 */
    int64_t width;       /* 64 */
    bool small_input;    /* false */
} tg_nn_resnet_opts;
#define TG__NN_RESNET_DEFAULTS \
    .num_classes = 1000, .in_channels = 3, .width = 64, .small_input = false
tg_module *tg_nn_resnet_fn(tg_int_list blocks, tg_nn_resnet_opts o);
#define tg_nn_resnet(blocks, ...) \
    tg_nn_resnet_fn((blocks), (tg_nn_resnet_opts){ TG__NN_RESNET_DEFAULTS, __VA_ARGS__ })
/* resnet18: blocks (2, 2, 2, 2). */
#define tg_nn_resnet18(...) tg_nn_resnet(TG_INTS(2, 2, 2, 2), __VA_ARGS__)

/* GPT-2 as Hugging Face's GPT2LMHeadModel: transformer.wte, transformer.wpe, transformer.h.<i>
 * (ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj: Conv1D layers whose weight is
 * (in, out), the transpose of Linear's), transformer.ln_f and lm_head, tied to
 * transformer.wte (one tensor; a state dict saves it once, as Hugging Face does). GPT-2's
 * initialisation: N(0, 0.02), residual projections N(0, 0.02 / sqrt(2 n_layer)). Forward:
 * token ids (B, T) int64 -> logits (B, T, vocab_size); the MLP's GELU is the tanh form. */
typedef struct tg_nn_gpt2_config {
    int64_t vocab_size;        /* 50257 */
    int64_t n_positions;       /* 1024 */
    int64_t n_embd;            /* 768 */
    int64_t n_layer;           /* 12 */
    int64_t n_head;            /* 12 */
    double dropout;            /* 0.0 (resid, embd and attn pdrop alike) */
    double layer_norm_epsilon; /* 1e-5 */
} tg_nn_gpt2_config;
#define TG__NN_GPT2_DEFAULTS                                                              \
    .vocab_size = 50257, .n_positions = 1024, .n_embd = 768, .n_layer = 12, .n_head = 12, \
    .dropout = 0.0, .layer_norm_epsilon = 1e-5
tg_module *tg_nn_gpt2_fn(tg_nn_gpt2_config c);
#define tg_nn_gpt2(...) tg_nn_gpt2_fn((tg_nn_gpt2_config){ TG__NN_GPT2_DEFAULTS, __VA_ARGS__ })
/* Mean cross-entropy of next-token predictions for idx (B, T) and targets (B, T): a 0-dim
 * tensor in the caller's scope. */
tg_tensor *tg_nn_gpt2_loss(tg_module *gpt2, tg_tensor *idx, tg_tensor *targets);

#ifdef __cplusplus
}
#endif
#endif
