/* The GPT of gpt.h: parameters, forward pass, AdamW and checkpoints. */
#include "gpt.h"

#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* N(0, std) of the given shape on `dev`, a leaf that requires grad. */
static tg_tensor *normal_param(tg_int_list shape, double std, tg_device dev)
{
    tg_tensor *w = tg_randn(shape);
    tg_tensor *s = w ? tg_mul_scalar(w, std) : NULL;
    tg_tensor *d = s ? tg_to_device(s, dev) : NULL;
    tg_release(w);
    tg_release(s);
    return d ? tg_tensor_set_requires_grad(d, true) : NULL;
}

static tg_tensor *const_param(int64_t n, double value, tg_device dev)
{
    tg_tensor *t = tg_full(TG_INTS(n), value, .dtype = TG_FLOAT32, .device = dev);
    return t ? tg_tensor_set_requires_grad(t, true) : NULL;
}

int gpt_init(gpt *m, gpt_config cfg, tg_device dev)
{
    memset(m, 0, sizeof *m);
    if (cfg.heads <= 0 || cfg.channels % cfg.heads != 0) {
        tg_set_error("gpt_init", "channels (%lld) must be a multiple of heads (%lld)",
                     (long long)cfg.channels, (long long)cfg.heads);
        return -1;
    }
    m->cfg = cfg;
    m->device = dev;
    m->blocks = calloc((size_t)cfg.layers, sizeof *m->blocks);
    if (!m->blocks) {
        tg_set_error("gpt_init", "out of memory");
        return -1;
    }
    const int64_t C = cfg.channels;
    const double std = 0.02, proj_std = 0.02 / sqrt(2.0 * (double)cfg.layers);
    m->wte = normal_param(TG_INTS(cfg.vocab, C), std, dev);
    m->wpe = normal_param(TG_INTS(cfg.context, C), std, dev);
    for (int64_t l = 0; l < cfg.layers; l++) {
        gpt_block *b = &m->blocks[l];
        b->ln1_w = const_param(C, 1, dev);
        b->ln1_b = const_param(C, 0, dev);
        b->attn_w = normal_param(TG_INTS(3 * C, C), std, dev);
        b->attn_b = const_param(3 * C, 0, dev);
        b->proj_w = normal_param(TG_INTS(C, C), proj_std, dev);
        b->proj_b = const_param(C, 0, dev);
        b->ln2_w = const_param(C, 1, dev);
        b->ln2_b = const_param(C, 0, dev);
        b->fc_w = normal_param(TG_INTS(4 * C, C), std, dev);
        b->fc_b = const_param(4 * C, 0, dev);
        b->out_w = normal_param(TG_INTS(C, 4 * C), proj_std, dev);
        b->out_b = const_param(C, 0, dev);
    }
    m->lnf_w = const_param(C, 1, dev);
    m->lnf_b = const_param(C, 0, dev);

    int n;
    gpt_param *ps = gpt_params(m, &n);
    bool ok = ps != NULL;
    for (int i = 0; ok && i < n; i++) ok = *ps[i].slot != NULL;
    free(ps);
    if (!ok) {
        gpt_free(m);
        return -1;
    }
    return 0;
}

/* A block's parameters in PyTorch's order: per layer a weight and a bias (h.<l>.<name>.weight,
 * .bias); weight decay applies to the weights of the linear layers, not to biases nor layer
 * norms. */
static const struct {
    const char *name;
    size_t weight, bias; /* offsets of the tg_tensor * in gpt_block */
    bool decay;
} block_params[] = {
    { "ln_1", offsetof(gpt_block, ln1_w), offsetof(gpt_block, ln1_b), false },
    { "attn.c_attn", offsetof(gpt_block, attn_w), offsetof(gpt_block, attn_b), true },
    { "attn.c_proj", offsetof(gpt_block, proj_w), offsetof(gpt_block, proj_b), true },
    { "ln_2", offsetof(gpt_block, ln2_w), offsetof(gpt_block, ln2_b), false },
    { "mlp.c_fc", offsetof(gpt_block, fc_w), offsetof(gpt_block, fc_b), true },
    { "mlp.c_proj", offsetof(gpt_block, out_w), offsetof(gpt_block, out_b), true },
};
enum { PER_BLOCK = 2 * sizeof block_params / sizeof *block_params };

static void add_param(gpt_param *p, tg_tensor **slot, bool decay, const char *name)
{
    p->slot = slot;
    p->decay = decay;
    snprintf(p->name, sizeof p->name, "%s", name);
}

static tg_tensor **block_slot(gpt_block *b, size_t offset)
{
    return (tg_tensor **)((char *)b + offset);
}

gpt_param *gpt_params(gpt *m, int *n)
{
    int cap = 4 + PER_BLOCK * (int)m->cfg.layers, k = 0;
    gpt_param *ps = calloc((size_t)cap, sizeof *ps);
    if (!ps) {
        tg_set_error("gpt_params", "out of memory");
        *n = 0;
        return NULL;
    }
    char name[sizeof ps->name];
    add_param(&ps[k++], &m->wte, true, "wte.weight");
    add_param(&ps[k++], &m->wpe, true, "wpe.weight");
    for (int l = 0; l < (int)m->cfg.layers; l++)
        for (int j = 0; j < PER_BLOCK / 2; j++) {
            snprintf(name, sizeof name, "h.%d.%s.weight", l, block_params[j].name);
            add_param(&ps[k++], block_slot(&m->blocks[l], block_params[j].weight),
                      block_params[j].decay, name);
            snprintf(name, sizeof name, "h.%d.%s.bias", l, block_params[j].name);
            add_param(&ps[k++], block_slot(&m->blocks[l], block_params[j].bias), false, name);
        }
    add_param(&ps[k++], &m->lnf_w, false, "ln_f.weight");
    add_param(&ps[k++], &m->lnf_b, false, "ln_f.bias");
    *n = k;
    return ps;
}

int64_t gpt_num_params(gpt *m)
{
    int n;
    gpt_param *ps = gpt_params(m, &n);
    int64_t total = 0;
    for (int i = 0; ps && i < n; i++) total += tg_tensor_numel(*ps[i].slot);
    free(ps);
    return total;
}

void gpt_free(gpt *m)
{
    if (m->blocks) {
        int n;
        gpt_param *ps = gpt_params(m, &n);
        for (int i = 0; ps && i < n; i++) {
            tg_release(*ps[i].slot);
            *ps[i].slot = NULL;
        }
        free(ps);
    }
    free(m->blocks);
    memset(m, 0, sizeof *m);
}

void gpt_zero_grad(gpt *m)
{
    int n;
    gpt_param *ps = gpt_params(m, &n);
    for (int i = 0; ps && i < n; i++) tg_tensor_set_grad(*ps[i].slot, NULL);
    free(ps);
}

/* ------------------------------------------------------------------ forward */

static tg_tensor *layer_norm(tg_tensor *x, tg_tensor *w, tg_tensor *b)
{
    int64_t C = tg_tensor_size(w, 0);
    return tg_layer_norm(x, TG_INTS(C), .weight = w, .bias = b, .eps = 1e-5);
}

/* Causal self-attention of x (B, T, C): q, k, v are views of one projection, (B, NH, T, hs)
 * with the head dimension contiguous, which the fused attention kernel reads in place. */
static tg_tensor *attention(gpt *m, gpt_block *b, tg_tensor *x)
{
    const int64_t B = tg_tensor_size(x, 0), T = tg_tensor_size(x, 1);
    const int64_t C = m->cfg.channels, NH = m->cfg.heads, hs = C / NH;
    tg_tensor *qkv = tg_linear(x, b->attn_w, .bias = b->attn_b);          /* (B, T, 3C) */
    tg_tensor *heads = tg_permute(tg_view(qkv, TG_INTS(B, T, 3, NH, hs)), /* (3, B, NH, T, hs) */
                                  TG_INTS(2, 0, 3, 1, 4));
    /* unbind, not three selects: its backward stacks the three gradients into one tensor,
     * where each select's would be a zero-filled copy of the whole projection. */
    tg_tensor_list qkv3 = tg_unbind(heads);
    if (qkv3.len != 3) return NULL;
    tg_tensor *y = tg_scaled_dot_product_attention(qkv3.data[0], qkv3.data[1], qkv3.data[2],
                                                   .is_causal = true);
    tg_tensor *merged = tg_reshape(tg_transpose(y, 1, 2), TG_INTS(B, T, C));
    return tg_linear(merged, b->proj_w, .bias = b->proj_b);
}

static tg_tensor *mlp(gpt_block *b, tg_tensor *x)
{
    tg_tensor *h = tg_gelu(tg_linear(x, b->fc_w, .bias = b->fc_b), .approximate = "tanh");
    return tg_linear(h, b->out_w, .bias = b->out_b);
}

tg_tensor *gpt_logits(gpt *m, tg_tensor *idx)
{
    const int64_t T = tg_tensor_size(idx, 1);
    if (T > m->cfg.context) {
        tg_set_error("gpt_logits", "sequence length %lld exceeds the context %lld", (long long)T,
                     (long long)m->cfg.context);
        return NULL;
    }
    tg_tensor *pos = tg_arange(T, .dtype = TG_INT64, .device = m->device);
    tg_tensor *x = tg_add(tg_embedding(m->wte, idx), tg_embedding(m->wpe, pos));
    for (int64_t l = 0; l < m->cfg.layers; l++) {
        gpt_block *b = &m->blocks[l];
        x = tg_add(x, attention(m, b, layer_norm(x, b->ln1_w, b->ln1_b)));
        x = tg_add(x, mlp(b, layer_norm(x, b->ln2_w, b->ln2_b)));
    }
    return tg_linear(layer_norm(x, m->lnf_w, m->lnf_b), m->wte); /* tied head */
}

tg_tensor *gpt_loss(gpt *m, tg_tensor *idx, tg_tensor *targets)
{
    tg_tensor *logits = gpt_logits(m, idx);
    if (!logits) return NULL;
    return tg_cross_entropy(tg_view(logits, TG_INTS(-1, m->cfg.vocab)),
                            tg_view(targets, TG_INTS(-1)));
}

/* ------------------------------------------------------------------ AdamW */

int gpt_adamw_step(gpt *m, gpt_adamw *opt)
{
    int n, rc = 0;
    gpt_param *ps = gpt_params(m, &n);
    if (!ps) return -1;
    if (!opt->exp_avg) {
        opt->n = n;
        opt->exp_avg = calloc((size_t)n, sizeof *opt->exp_avg);
        opt->exp_avg_sq = calloc((size_t)n, sizeof *opt->exp_avg_sq);
        if (!opt->exp_avg || !opt->exp_avg_sq) {
            tg_set_error("gpt_adamw_step", "out of memory");
            free(ps);
            return -1;
        }
    }
    opt->step++;
    TG_NO_GRAD {
        for (int i = 0; i < n && rc == 0; i++) {
            tg_tensor *p = *ps[i].slot, *g = tg_tensor_grad(p);
            if (!g) continue; /* a parameter the loss did not reach */
            if (!opt->exp_avg[i]) opt->exp_avg[i] = tg_zeros_like(p);
            if (!opt->exp_avg_sq[i]) opt->exp_avg_sq[i] = tg_zeros_like(p);
            tg_tensor *r =
                tg_adam_step_(p, g, opt->exp_avg[i], opt->exp_avg_sq[i], NULL, opt->step,
                              .lr = opt->lr, .beta1 = opt->beta1, .beta2 = opt->beta2,
                              .eps = opt->eps, .weight_decay = ps[i].decay ? opt->weight_decay : 0,
                              .decoupled_weight_decay = true);
            if (!r) rc = -1;
            tg_release(r);
            tg_release(g);
            tg_tensor_set_grad(p, NULL);
        }
    }
    free(ps);
    return rc;
}

void gpt_adamw_free(gpt_adamw *opt)
{
    for (int i = 0; i < opt->n; i++) {
        tg_release(opt->exp_avg[i]);
        tg_release(opt->exp_avg_sq[i]);
    }
    free(opt->exp_avg);
    free(opt->exp_avg_sq);
    opt->exp_avg = opt->exp_avg_sq = NULL;
    opt->n = 0;
    opt->step = 0;
}

/* ------------------------------------------------------------------ checkpoints */

int gpt_save(gpt *m, const char *path)
{
    int n;
    gpt_param *ps = gpt_params(m, &n);
    if (!ps) return -1;
    const char **names = malloc((size_t)n * sizeof *names);
    tg_tensor **tensors = malloc((size_t)n * sizeof *tensors);
    int rc = -1;
    if (names && tensors) {
        for (int i = 0; i < n; i++) {
            names[i] = ps[i].name;
            tensors[i] = *ps[i].slot;
        }
        char v[5][24];
        const int64_t dims[5] = { m->cfg.vocab, m->cfg.context, m->cfg.layers, m->cfg.heads,
                                  m->cfg.channels };
        for (int i = 0; i < 5; i++) snprintf(v[i], sizeof v[i], "%lld", (long long)dims[i]);
        const char *keys[5] = { "vocab", "context", "layers", "heads", "channels" };
        const char *values[5] = { v[0], v[1], v[2], v[3], v[4] };
        rc = tg_save_safetensors_metadata(path, names, tensors, n, keys, values, 5);
    } else {
        tg_set_error("gpt_save", "out of memory");
    }
    free(names);
    free(tensors);
    free(ps);
    return rc;
}

/* A configuration entry of the file's metadata, or -1 with an error. */
static int64_t meta_int(tg_safetensors *f, const char *key)
{
    const char *s = tg_safetensors_metadata(f, key);
    char *end;
    long long v = s ? strtoll(s, &end, 10) : -1;
    if (!s || *end != '\0' || v <= 0) {
        tg_set_error("gpt_load", "the checkpoint's metadata has no valid \"%s\"", key);
        return -1;
    }
    return (int64_t)v;
}

int gpt_load(gpt *m, const char *path, tg_device dev)
{
    tg_safetensors *f = tg_safetensors_open(path);
    if (!f) return -1;
    gpt_config cfg = { meta_int(f, "vocab"), meta_int(f, "context"), meta_int(f, "layers"),
                       meta_int(f, "heads"), meta_int(f, "channels") };
    int rc = cfg.vocab > 0 && cfg.context > 0 && cfg.layers > 0 && cfg.heads > 0 && cfg.channels > 0
                 ? gpt_init(m, cfg, dev)
                 : -1;
    if (rc == 0) {
        int n;
        gpt_param *ps = gpt_params(m, &n);
        rc = ps ? 0 : -1;
        TG_NO_GRAD {
            for (int i = 0; ps && i < n && rc == 0; i++)
                rc = tg_safetensors_load_into(f, ps[i].name, *ps[i].slot);
        }
        free(ps);
        if (rc != 0) gpt_free(m);
    }
    tg_safetensors_close(f);
    return rc;
}
