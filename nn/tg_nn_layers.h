/* tensorgen nn: the layers of torch.nn and the initialisers of torch.nn.init. Include
 * <tensorgen.h> rather than this file.
 *
 * Each constructor returns a new module (tg_nn_module.h) owned by the caller (or by the
 * container it is registered in), with PyTorch's parameter names and default initialisation,
 * drawn from the default generator on the CPU (tg_manual_seed first for reproducible weights;
 * tg_module_to moves the module afterwards). Options are keywords with PyTorch's defaults:
 *
 *     tg_module *fc = tg_nn_linear(512, 10);                       // Linear(512, 10)
 *     tg_module *c1 = tg_nn_conv2d(3, 64, 7, .stride = 2, .padding = 3, .bias = false);
 *     tg_tensor *y = tg_module_forward(fc, x);                    // in the caller's scope
 *
 * NULL with an error naming the layer ("Linear: in_features must be positive, got 0") for a
 * bad argument. */
#ifndef TG_NN_LAYERS_H
#define TG_NN_LAYERS_H

#include "tg_nn_module.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Linear, Embedding ---- */
typedef struct tg_nn_linear_opts {
    bool bias; /* default true */
} tg_nn_linear_opts;
/* y = x W^T + b, W (out_features, in_features), b (out_features); both uniform in
 * [-1/sqrt(in), 1/sqrt(in)] (kaiming_uniform_ with a = sqrt(5), as nn.Linear). */
tg_module *tg_nn_linear_fn(int64_t in_features, int64_t out_features, tg_nn_linear_opts o);
#define tg_nn_linear(in, out, ...) \
    tg_nn_linear_fn((in), (out), (tg_nn_linear_opts){ .bias = true, __VA_ARGS__ })

typedef struct tg_nn_embedding_opts {
    int64_t padding_idx; /* -1 (the default): none; else that row starts at zero, gets no grad */
} tg_nn_embedding_opts;
/* A lookup table `weight` (num_embeddings, embedding_dim) ~ N(0, 1); input: int64 indices. */
tg_module *tg_nn_embedding_fn(int64_t num_embeddings, int64_t embedding_dim,
                              tg_nn_embedding_opts o);
#define tg_nn_embedding(n, dim, ...) \
    tg_nn_embedding_fn((n), (dim), (tg_nn_embedding_opts){ .padding_idx = -1, __VA_ARGS__ })

/* ---- convolutions (square kernels; zero padding) ---- */
typedef struct tg_nn_conv_opts {
    int64_t stride, padding, dilation, groups; /* 1, 0, 1, 1 */
    int64_t output_padding;                    /* ConvTranspose2d only: 0 */
    bool bias;                                 /* true */
} tg_nn_conv_opts;
#define TG__NN_CONV_DEFAULTS \
    .stride = 1, .padding = 0, .dilation = 1, .groups = 1, .output_padding = 0, .bias = true
/* weight (out, in / groups, k[, k]), bias (out): uniform in +-1/sqrt(fan_in), fan_in =
 * in / groups * k^d, as nn.Conv1d/2d. Input (N, C, L) or (N, C, H, W). */
tg_module *tg_nn_conv1d_fn(int64_t in, int64_t out, int64_t kernel_size, tg_nn_conv_opts o);
#define tg_nn_conv1d(in, out, k, ...) \
    tg_nn_conv1d_fn((in), (out), (k), (tg_nn_conv_opts){ TG__NN_CONV_DEFAULTS, __VA_ARGS__ })
tg_module *tg_nn_conv2d_fn(int64_t in, int64_t out, int64_t kernel_size, tg_nn_conv_opts o);
#define tg_nn_conv2d(in, out, k, ...) \
    tg_nn_conv2d_fn((in), (out), (k), (tg_nn_conv_opts){ TG__NN_CONV_DEFAULTS, __VA_ARGS__ })
/* weight (in, out / groups, k, k): nn.ConvTranspose2d (fan_in from weight.size(1) * k * k). */
tg_module *tg_nn_conv_transpose2d_fn(int64_t in, int64_t out, int64_t kernel_size,
                                     tg_nn_conv_opts o);
#define tg_nn_conv_transpose2d(in, out, k, ...) \
    tg_nn_conv_transpose2d_fn((in), (out), (k), \
                              (tg_nn_conv_opts){ TG__NN_CONV_DEFAULTS, __VA_ARGS__ })

/* ---- normalisation ---- */
typedef struct tg_nn_norm_opts {
    double eps;               /* 1e-5 */
    double momentum;          /* BatchNorm: 0.1 (running = (1 - m) running + m batch) */
    bool affine;              /* weight and bias (LayerNorm's elementwise_affine): true */
    bool track_running_stats; /* BatchNorm: true */
    bool bias;                /* LayerNorm: false leaves the bias out: true */
} tg_nn_norm_opts;
#define TG__NN_NORM_DEFAULTS \
    .eps = 1e-5, .momentum = 0.1, .affine = true, .track_running_stats = true, .bias = true
/* BatchNorm1d (N, C) or (N, C, L) and BatchNorm2d (N, C, H, W): weight 1, bias 0, buffers
 * running_mean 0, running_var 1 and num_batches_tracked (int64) as PyTorch's state dict has
 * them. Training mode normalises by the batch and updates the running statistics; eval mode
 * uses them. */
tg_module *tg_nn_batch_norm1d_fn(int64_t num_features, tg_nn_norm_opts o);
#define tg_nn_batch_norm1d(c, ...) \
    tg_nn_batch_norm1d_fn((c), (tg_nn_norm_opts){ TG__NN_NORM_DEFAULTS, __VA_ARGS__ })
tg_module *tg_nn_batch_norm2d_fn(int64_t num_features, tg_nn_norm_opts o);
#define tg_nn_batch_norm2d(c, ...) \
    tg_nn_batch_norm2d_fn((c), (tg_nn_norm_opts){ TG__NN_NORM_DEFAULTS, __VA_ARGS__ })
/* LayerNorm over the last dimension (normalized_shape = (dim,)): weight 1, bias 0. */
tg_module *tg_nn_layer_norm_fn(int64_t dim, tg_nn_norm_opts o);
#define tg_nn_layer_norm(dim, ...) \
    tg_nn_layer_norm_fn((dim), (tg_nn_norm_opts){ TG__NN_NORM_DEFAULTS, __VA_ARGS__ })
tg_module *tg_nn_group_norm_fn(int64_t num_groups, int64_t num_channels, tg_nn_norm_opts o);
#define tg_nn_group_norm(g, c, ...) \
    tg_nn_group_norm_fn((g), (c), (tg_nn_norm_opts){ TG__NN_NORM_DEFAULTS, __VA_ARGS__ })

/* ---- activations, dropout, pooling, reshaping (no parameters) ---- */
tg_module *tg_nn_relu(void);
tg_module *tg_nn_tanh(void);
tg_module *tg_nn_silu(void);
tg_module *tg_nn_identity(void);
/* approximate: "none" or "tanh". */
tg_module *tg_nn_gelu(const char *approximate);
/* Zeroes elements with probability p in training mode (scaling the rest by 1/(1-p)); the
 * identity in eval mode. */
tg_module *tg_nn_dropout(double p);
/* Flatten(start_dim=1, end_dim=-1). */
tg_module *tg_nn_flatten(int64_t start_dim, int64_t end_dim);
/* MaxPool2d(kernel_size, stride, padding): stride 0 means kernel_size, as PyTorch's None. */
tg_module *tg_nn_max_pool2d(int64_t kernel_size, int64_t stride, int64_t padding);
/* AdaptiveAvgPool2d((h, w)). */
tg_module *tg_nn_adaptive_avg_pool2d(int64_t h, int64_t w);

/* ---- attention ---- */
typedef struct tg_nn_attention_opts {
    bool bias;        /* true */
    bool batch_first; /* MultiheadAttention: false, as PyTorch ((T, B, E) inputs) */
    double dropout;   /* on the attention weights in training mode: 0 */
} tg_nn_attention_opts;
#define TG__NN_ATTENTION_DEFAULTS .bias = true, .batch_first = false, .dropout = 0.0
/* nn.MultiheadAttention(embed_dim, num_heads): in_proj_weight (3E, E), in_proj_bias (3E),
 * out_proj.weight (E, E), out_proj.bias (E), initialised as PyTorch (xavier_uniform_ in_proj,
 * zero biases). */
tg_module *tg_nn_multihead_attention_fn(int64_t embed_dim, int64_t num_heads,
                                        tg_nn_attention_opts o);
#define tg_nn_multihead_attention(e, h, ...) \
    tg_nn_multihead_attention_fn((e), (h),   \
                                 (tg_nn_attention_opts){ TG__NN_ATTENTION_DEFAULTS, __VA_ARGS__ })
/* attn_output of mha(query, key, value, attn_mask=attn_mask, is_causal=is_causal,
 * need_weights=False): (T, B, E), or (B, T, E) with batch_first. attn_mask: NULL, a bool mask
 * (true = masked out, PyTorch's convention for nn.MultiheadAttention) or a float mask added to
 * the scores, (T, S). */
typedef struct tg_nn_mha_forward_opts {
    tg_tensor *attn_mask;
    bool is_causal;
} tg_nn_mha_forward_opts;
tg_tensor *tg_nn_multihead_attention_forward_fn(tg_module *m, tg_tensor *query, tg_tensor *key,
                                                tg_tensor *value, tg_nn_mha_forward_opts o);
#define tg_nn_multihead_attention_forward(m, q, k, v, ...) \
    tg_nn_multihead_attention_forward_fn(                  \
        (m), (q), (k), (v), (tg_nn_mha_forward_opts){ .attn_mask = NULL, __VA_ARGS__ })
/* Causal self-attention as in GPT-2 / nanoGPT: c_attn = Linear(E, 3E) (q, k, v stacked),
 * c_proj = Linear(E, E); forward (B, T, E) -> (B, T, E) with the fused causal kernel. */
tg_module *tg_nn_causal_self_attention_fn(int64_t embed_dim, int64_t num_heads,
                                          tg_nn_attention_opts o);
#define tg_nn_causal_self_attention(e, h, ...) \
    tg_nn_causal_self_attention_fn(            \
        (e), (h), (tg_nn_attention_opts){ TG__NN_ATTENTION_DEFAULTS, __VA_ARGS__ })

/* ---- containers ---- */
/* Sequential: the modules (owned from now on) registered as "0", "1", ...; forward runs them in
 * order. A NULL among them (a constructor that failed) fails the whole, freeing the others. */
tg_module *tg_nn_sequential_fn(tg_module *const *modules, int n);
#define tg_nn_sequential(...)                                \
    tg_nn_sequential_fn((tg_module *const[]){ __VA_ARGS__ }, \
                        (int)(sizeof((tg_module *const[]){ __VA_ARGS__ }) / sizeof(tg_module *)))
/* ModuleList: an empty list (no forward); append registers "0", "1", ... (owned from now on).
 * Append returns 0, or -1 with the list unchanged and the module freed. Sequential takes
 * appends too. */
tg_module *tg_nn_module_list(void);
int tg_nn_append(tg_module *list, tg_module *m);
/* The i-th module of a Sequential or ModuleList, and their count. */
tg_module *tg_nn_at(tg_module *list, int i);
int tg_nn_len(const tg_module *list);

/* ---- torch.nn.init: in place, without recording a graph, from the default generator ---- */
typedef enum tg_nn_fan_mode { TG_FAN_IN, TG_FAN_OUT } tg_nn_fan_mode;
/* calculate_gain: "linear", "conv1d", "conv2d", "sigmoid" (1), "tanh" (5/3), "relu" (sqrt 2),
 * "leaky_relu" (sqrt(2 / (1 + param^2))), "selu" (3/4); -1 with an error otherwise. */
double tg_nn_init_calculate_gain(const char *nonlinearity, double param);
int tg_nn_init_uniform_(tg_tensor *t, double a, double b);
int tg_nn_init_normal_(tg_tensor *t, double mean, double std);
int tg_nn_init_constant_(tg_tensor *t, double value);
int tg_nn_init_zeros_(tg_tensor *t);
int tg_nn_init_ones_(tg_tensor *t);
int tg_nn_init_xavier_uniform_(tg_tensor *t, double gain);
int tg_nn_init_xavier_normal_(tg_tensor *t, double gain);
/* kaiming_uniform_(t, a, mode, nonlinearity) / kaiming_normal_: PyTorch's defaults are a = 0,
 * TG_FAN_IN, "leaky_relu". */
int tg_nn_init_kaiming_uniform_(tg_tensor *t, double a, tg_nn_fan_mode mode,
                                const char *nonlinearity);
int tg_nn_init_kaiming_normal_(tg_tensor *t, double a, tg_nn_fan_mode mode,
                               const char *nonlinearity);
/* N(mean, std) truncated to [a, b] (PyTorch's defaults: 0, 1, -2, 2), by the inverse CDF. */
int tg_nn_init_trunc_normal_(tg_tensor *t, double mean, double std, double a, double b);
/* fan_in and fan_out of a weight of dim >= 2 (PyTorch's _calculate_fan_in_and_fan_out). */
int tg_nn_init_fans(const tg_tensor *t, int64_t *fan_in, int64_t *fan_out);

#ifdef __cplusplus
}
#endif
#endif
