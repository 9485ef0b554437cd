/* MultiheadAttention and GPT's causal self-attention (tg_nn_layers.h), both on the fused
 * scaled_dot_product_attention operator. */
#include <math.h>
#include <stdio.h>

#include "../nn_private.h"
#include "ops/eq.h"
#include "ops/linear.h"
#include "ops/permute.h"
#include "ops/reshape.h"
#include "ops/scaled_dot_product_attention.h"
#include "ops/slice.h"
#include "ops/transpose.h"
#include "ops/unbind.h"
#include "ops/view.h"

typedef struct mha {
    tg_module base;
    tg_tensor *in_proj_weight; /* (3E, E): q, k, v stacked */
    tg_tensor *in_proj_bias;   /* (3E) or NULL */
    tg_module *out_proj;       /* Linear(E, E), a registered child */
    int64_t e, heads;
    tg_nn_attention_opts o;
} mha;

static void mha_describe(const tg_module *m, char *buf, size_t cap)
{
    const mha *a = (const mha *)m;
    snprintf(buf, cap, "embed_dim=%lld, num_heads=%lld", (long long)a->e, (long long)a->heads);
}

static const tg_module_type mha_type = { "MultiheadAttention", sizeof(mha), NULL, mha_describe,
                                         NULL };

/* One of the three projections: x (T, B, E) @ W[i]^T + b[i] split into heads, as
 * (B, H, T, hd). Inside the forward's scope. */
static tg_tensor *project(mha *a, tg_tensor *x, int64_t i)
{
    int64_t e = a->e, hd = e / a->heads, t = tg_tensor_size(x, 0), b = tg_tensor_size(x, 1);
    tg_tensor *w = tg_slice(a->in_proj_weight, .start = (i * e), .end = ((i + 1) * e));
    tg_tensor *bias =
        a->in_proj_bias ? tg_slice(a->in_proj_bias, .start = (i * e), .end = ((i + 1) * e)) : NULL;
    tg_tensor *y = tg_linear(x, w, .bias = bias); /* (T, B, E) */
    return tg_permute(tg_view(y, TG_INTS(t, b, a->heads, hd)), TG_INTS(1, 2, 0, 3));
}

tg_tensor *tg_nn_multihead_attention_forward_fn(tg_module *m, tg_tensor *q, tg_tensor *k,
                                                tg_tensor *v, tg_nn_mha_forward_opts o)
{
    if (!m || m->type != &mha_type)
        return tg_set_error("MultiheadAttention", "expected a MultiheadAttention module, got %s",
                            tg_module_type_name(m));
    if (!q || !k || !v) return NULL;
    mha *a = (mha *)m;
    if (tg_tensor_dim(q) != 3 || tg_tensor_dim(k) != 3 || tg_tensor_dim(v) != 3 ||
        tg_tensor_size(q, 2) != a->e)
        return tg_set_error("MultiheadAttention",
                            "expected 3-D query, key and value with embed_dim %lld last",
                            (long long)a->e);
    tg_scope_begin();
    if (a->o.batch_first) { /* (B, T, E) -> (T, B, E) */
        q = tg_transpose(q, 0, 1);
        k = tg_transpose(k, 0, 1);
        v = tg_transpose(v, 0, 1);
    }
    int64_t t = tg_tensor_size(q, 0), b = tg_tensor_size(q, 1);
    /* nn.MultiheadAttention's bool masks say where NOT to attend; the operator's say where to. */
    tg_tensor *mask = o.attn_mask;
    if (mask && tg_tensor_dtype(mask) == TG_BOOL) mask = tg_eq_scalar(mask, 0);
    tg_tensor *y = tg_scaled_dot_product_attention(
        project(a, q, 0), project(a, k, 1), project(a, v, 2), .attn_mask = mask,
        .dropout_p = m->training ? a->o.dropout : 0.0, .is_causal = o.is_causal);
    /* (B, H, T, hd) -> (T, B, H, hd) -> (T * B, E) -> out_proj -> (T, B, E) */
    tg_tensor *merged = tg_reshape(tg_permute(y, TG_INTS(2, 0, 1, 3)), TG_INTS(t * b, a->e));
    tg_tensor *out = tg_view(tg_module_forward(a->out_proj, merged), TG_INTS(t, b, a->e));
    if (a->o.batch_first) out = tg_transpose(out, 0, 1);
    tg_scope_keep(out);
    tg_scope_end();
    return out;
}

tg_module *tg_nn_multihead_attention_fn(int64_t e, int64_t heads, tg_nn_attention_opts o)
{
    if (e <= 0 || heads <= 0 || e % heads)
        return tg_set_error("MultiheadAttention",
                            "embed_dim (%lld) must be divisible by "
                            "num_heads (%lld)",
                            (long long)e, (long long)heads);
    if (!(o.dropout >= 0 && o.dropout <= 1))
        return tg_set_error("MultiheadAttention", "dropout must be in [0, 1], got %g", o.dropout);
    mha *a = tg_module_new(&mha_type);
    if (!a) return NULL;
    a->e = e;
    a->heads = heads;
    a->o = o;
    /* xavier_uniform_ (gain 1) of a (3E, E) weight: U(+-sqrt(6 / (E + 3E))) */
    a->in_proj_weight = tg__nn_uniform(TG_INTS(3 * e, e), sqrt(6.0 / (double)(4 * e)));
    tg_module *m = tg_module_register_parameter(&a->base, "in_proj_weight", &a->in_proj_weight);
    if (m && o.bias) {
        a->in_proj_bias = tg__nn_full(TG_INTS(3 * e), 0);
        m = tg_module_register_parameter(m, "in_proj_bias", &a->in_proj_bias);
    }
    tg_module *out = m ? tg_nn_linear(e, e, .bias = o.bias) : NULL;
    tg_tensor *ob = out && o.bias ? tg_module_get_tensor(out, "bias") : NULL;
    if (ob && tg_nn_init_zeros_(ob) != 0) {
        tg_module_free(out);
        out = NULL;
    }
    a->out_proj = out;
    return tg_module_register_module(m, "out_proj", out); /* m NULL: out is NULL too */
}

/* ---- GPT's causal self-attention ---- */

typedef struct causal {
    tg_module base;
    tg_module *c_attn, *c_proj; /* Linear(E, 3E), Linear(E, E): registered children */
    int64_t e, heads;
    tg_nn_attention_opts o;
} causal;

/* qkv (B, T, 3E) -> (B, T, E): the projections viewed (B, T, 3, H, hd) and permuted to
 * (3, B, H, T, hd) make q, k and v (B, H, T, hd) views with a contiguous head dimension, which
 * the fused kernel reads in place (unbind rather than three selects: its backward stacks the
 * three gradients into one tensor); the heads merged back. In the caller's scope. */
tg_tensor *tg__nn_causal_heads(tg_tensor *qkv, int64_t heads, double dropout_p)
{
    if (!qkv) return NULL;
    int64_t b = tg_tensor_size(qkv, 0), t = tg_tensor_size(qkv, 1), e = tg_tensor_size(qkv, 2) / 3;
    tg_tensor *h =
        tg_permute(tg_view(qkv, TG_INTS(b, t, 3, heads, e / heads)), TG_INTS(2, 0, 3, 1, 4));
    tg_tensor_list q_k_v = h ? tg_unbind(h) : (tg_tensor_list){ NULL, 0 };
    tg_tensor *y =
        q_k_v.data ? tg_scaled_dot_product_attention(q_k_v.data[0], q_k_v.data[1], q_k_v.data[2],
                                                     .is_causal = true, .dropout_p = dropout_p)
                   : NULL;
    return tg_reshape(tg_transpose(y, 1, 2), TG_INTS(b, t, e));
}

/* (B, T, E) -> c_proj(causal attention of c_attn(x)) (B, T, E). */
static tg_tensor *causal_forward(tg_module *m, tg_tensor *x)
{
    causal *c = (causal *)m;
    if (tg_tensor_dim(x) != 3 || tg_tensor_size(x, 2) != c->e)
        return tg_set_error("CausalSelfAttention", "expected (B, T, %lld) input", (long long)c->e);
    tg_scope_begin();
    tg_tensor *y = tg__nn_causal_heads(tg_module_forward(c->c_attn, x), c->heads,
                                       m->training ? c->o.dropout : 0.0);
    tg_tensor *out = tg_scope_keep(tg_module_forward(c->c_proj, y));
    tg_scope_end();
    return out;
}

static void causal_describe(const tg_module *m, char *buf, size_t cap)
{
    const causal *c = (const causal *)m;
    snprintf(buf, cap, "embed_dim=%lld, num_heads=%lld", (long long)c->e, (long long)c->heads);
}

static const tg_module_type causal_type = { "CausalSelfAttention", sizeof(causal), causal_forward,
                                            causal_describe, NULL };

tg_module *tg_nn_causal_self_attention_fn(int64_t e, int64_t heads, tg_nn_attention_opts o)
{
    if (e <= 0 || heads <= 0 || e % heads)
        return tg_set_error("CausalSelfAttention",
                            "embed_dim (%lld) must be divisible by "
                            "num_heads (%lld)",
                            (long long)e, (long long)heads);
    causal *c = tg_module_new(&causal_type);
    if (!c) return NULL;
    c->e = e;
    c->heads = heads;
    c->o = o;
    tg_module *m = &c->base;
    m = tg_module_register_module(m, "c_attn", c->c_attn = tg_nn_linear(e, 3 * e, .bias = o.bias));
    if (!m) return NULL;
    return tg_module_register_module(m, "c_proj", c->c_proj = tg_nn_linear(e, e, .bias = o.bias));
}
