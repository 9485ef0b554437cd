/* GPT-2 with Hugging Face's module names and layouts (tg_nn_models.h): GPT2LMHeadModel,
 * GPT2Block, GPT2Attention, GPT2MLP and Conv1D. */
#include <math.h>
#include <stdio.h>

#include "../nn_private.h"
#include "ops/add.h"
#include "ops/addmm.h"
#include "ops/arange.h"
#include "ops/cross_entropy_loss.h"
#include "ops/reshape.h"
#include "ops/view.h"

/* ---- Conv1D: y = x @ weight + bias, weight (nx, nf): a Linear with its weight transposed ---- */

typedef struct conv1d {
    tg_module base;
    tg_tensor *weight, *bias; /* (nx, nf), (nf) */
    int64_t nx, nf;
} conv1d;

static tg_tensor *conv1d_forward(tg_module *m, tg_tensor *x)
{
    conv1d *c = (conv1d *)m;
    int64_t d = tg_tensor_dim(x);
    if (d < 1 || tg_tensor_size(x, -1) != c->nx)
        return tg_set_error("Conv1D", "expected input with last dimension %lld", (long long)c->nx);
    tg_scope_begin();
    int64_t sizes[TG_MAX_DIMS];
    for (int64_t i = 0; i < d; i++) sizes[i] = tg_tensor_size(x, i);
    sizes[d - 1] = c->nf;
    tg_tensor *y = tg_addmm(c->bias, tg_reshape(x, TG_INTS(-1, c->nx)), c->weight);
    tg_tensor *out = tg_scope_keep(tg_view(y, (tg_int_list){ .len = d, .data = sizes }));
    tg_scope_end();
    return out;
}

static void conv1d_describe(const tg_module *m, char *buf, size_t cap)
{
    const conv1d *c = (const conv1d *)m;
    snprintf(buf, cap, "nf=%lld, nx=%lld", (long long)c->nf, (long long)c->nx);
}

static const tg_module_type conv1d_type = { "Conv1D", sizeof(conv1d), conv1d_forward,
                                            conv1d_describe, NULL };

static tg_module *conv1d_new(int64_t nf, int64_t nx, double std)
{
    conv1d *c = tg_module_new(&conv1d_type);
    if (!c) return NULL;
    c->nx = nx;
    c->nf = nf;
    c->weight = tg__nn_normal(TG_INTS(nx, nf), std);
    tg_module *m = tg_module_register_parameter(&c->base, "weight", &c->weight);
    if (!m) return NULL;
    c->bias = tg__nn_full(TG_INTS(nf), 0);
    return tg_module_register_parameter(m, "bias", &c->bias);
}

/* ---- GPT2Attention (causal, heads on the fused kernel) and GPT2MLP ---- */

typedef struct attention {
    tg_module base;
    tg_module *c_attn, *c_proj, *resid_dropout;
    int64_t e, heads;
    double dropout;
} attention;

static tg_tensor *attention_forward(tg_module *m, tg_tensor *x)
{
    attention *a = (attention *)m;
    if (tg_tensor_dim(x) != 3 || tg_tensor_size(x, 2) != a->e)
        return tg_set_error("GPT2Attention", "expected (B, T, %lld) input", (long long)a->e);
    tg_scope_begin();
    tg_tensor *y = tg__nn_causal_heads(tg_module_forward(a->c_attn, x), a->heads,
                                       m->training ? a->dropout : 0.0);
    tg_tensor *out = tg_module_forward(a->c_proj, y);
    if (a->dropout > 0) out = tg_module_forward(a->resid_dropout, out);
    tg_scope_keep(out);
    tg_scope_end();
    return out;
}

static const tg_module_type attention_type = { "GPT2Attention", sizeof(attention),
                                               attention_forward, NULL, NULL };

typedef struct mlp {
    tg_module base;
    tg_module *c_fc, *c_proj, *act, *dropout;
    bool use_dropout;
} mlp;

static tg_tensor *mlp_forward(tg_module *m, tg_tensor *x)
{
    mlp *p = (mlp *)m;
    tg_scope_begin();
    tg_tensor *h =
        tg_module_forward(p->c_proj, tg_module_forward(p->act, tg_module_forward(p->c_fc, x)));
    if (p->use_dropout) h = tg_module_forward(p->dropout, h);
    tg_scope_keep(h);
    tg_scope_end();
    return h;
}

static const tg_module_type mlp_type = { "GPT2MLP", sizeof(mlp), mlp_forward, NULL, NULL };

/* ---- GPT2Block: x + attn(ln_1(x)), then + mlp(ln_2(.)) ---- */

typedef struct block {
    tg_module base;
    tg_module *ln_1, *attn, *ln_2, *mlp;
} block;

static tg_tensor *block_forward(tg_module *m, tg_tensor *x)
{
    block *b = (block *)m;
    tg_scope_begin();
    tg_tensor *h = tg_add(x, tg_module_forward(b->attn, tg_module_forward(b->ln_1, x)));
    h = tg_add(h, tg_module_forward(b->mlp, tg_module_forward(b->ln_2, h)));
    tg_scope_keep(h);
    tg_scope_end();
    return h;
}

static const tg_module_type block_type = { "GPT2Block", sizeof(block), block_forward, NULL, NULL };

static tg_module *block_new(const tg_nn_gpt2_config *c)
{
    const double std = 0.02, proj_std = 0.02 / sqrt(2.0 * (double)c->n_layer);
    const int64_t e = c->n_embd;
    attention *a = tg_module_new(&attention_type);
    tg_module *am = a ? &a->base : NULL;
    if (a) {
        a->e = e;
        a->heads = c->n_head;
        a->dropout = c->dropout;
    }
    am = tg_module_register_module(am, "c_attn", am ? a->c_attn = conv1d_new(3 * e, e, std) : NULL);
    am =
        tg_module_register_module(am, "c_proj", am ? a->c_proj = conv1d_new(e, e, proj_std) : NULL);
    am = tg_module_register_module(am, "resid_dropout",
                                   am ? a->resid_dropout = tg_nn_dropout(c->dropout) : NULL);

    mlp *p = tg_module_new(&mlp_type);
    tg_module *pm = p ? &p->base : NULL;
    if (p) p->use_dropout = c->dropout > 0;
    pm = tg_module_register_module(pm, "c_fc", pm ? p->c_fc = conv1d_new(4 * e, e, std) : NULL);
    pm = tg_module_register_module(pm, "c_proj",
                                   pm ? p->c_proj = conv1d_new(e, 4 * e, proj_std) : NULL);
    pm = tg_module_register_module(pm, "act", pm ? p->act = tg_nn_gelu("tanh") : NULL);
    pm = tg_module_register_module(pm, "dropout",
                                   pm ? p->dropout = tg_nn_dropout(c->dropout) : NULL);

    block *b = tg_module_new(&block_type);
    tg_module *bm = b ? &b->base : NULL;
    bm = tg_module_register_module(
        bm, "ln_1", bm ? b->ln_1 = tg_nn_layer_norm(e, .eps = c->layer_norm_epsilon) : NULL);
    bm = tg_module_register_module(bm, "attn", bm ? b->attn = am : (tg_module_free(am), NULL));
    bm = tg_module_register_module(
        bm, "ln_2", bm ? b->ln_2 = tg_nn_layer_norm(e, .eps = c->layer_norm_epsilon) : NULL);
    bm = tg_module_register_module(bm, "mlp", bm ? b->mlp = pm : (tg_module_free(pm), NULL));
    return bm;
}

/* ---- GPT2Model (transformer) and GPT2LMHeadModel ---- */

typedef struct transformer {
    tg_module base;
    tg_module *wte, *wpe, *drop, *h, *ln_f;
    bool use_dropout;
} transformer;

/* Hidden states (B, T, E) after ln_f. */
static tg_tensor *transformer_forward(tg_module *m, tg_tensor *idx)
{
    transformer *t = (transformer *)m;
    int64_t len = tg_tensor_dim(idx) == 2 ? tg_tensor_size(idx, 1) : -1;
    int64_t ctx = tg_tensor_size(tg_module_get_tensor(t->wpe, "weight"), 0);
    if (len < 0 || len > ctx)
        return tg_set_error("GPT2Model", "expected token ids (B, T) with T <= %lld",
                            (long long)ctx);
    tg_scope_begin();
    tg_tensor *pos = tg_arange(len, .dtype = TG_INT64, .device = tg_tensor_device(idx));
    tg_tensor *x = tg_add(tg_module_forward(t->wte, idx), tg_module_forward(t->wpe, pos));
    if (t->use_dropout) x = tg_module_forward(t->drop, x);
    for (int i = 0; i < tg_nn_len(t->h) && x; i++) x = tg_module_forward(tg_nn_at(t->h, i), x);
    tg_tensor *out = tg_scope_keep(tg_module_forward(t->ln_f, x));
    tg_scope_end();
    return out;
}

static const tg_module_type transformer_type = { "GPT2Model", sizeof(transformer),
                                                 transformer_forward, NULL, NULL };

typedef struct gpt2 {
    tg_module base;
    tg_module *transformer, *lm_head;
    int64_t vocab;
} gpt2;

static tg_tensor *gpt2_forward(tg_module *m, tg_tensor *idx)
{
    gpt2 *g = (gpt2 *)m;
    tg_scope_begin();
    tg_tensor *h = tg_module_forward(g->transformer, idx);
    tg_tensor *logits = tg_scope_keep(tg_module_forward(g->lm_head, h));
    tg_scope_end();
    return logits;
}

static const tg_module_type gpt2_type = { "GPT2LMHeadModel", sizeof(gpt2), gpt2_forward, NULL,
                                          NULL };

tg_module *tg_nn_gpt2_fn(tg_nn_gpt2_config c)
{
    if (c.vocab_size <= 0 || c.n_positions <= 0 || c.n_layer <= 0 || c.n_head <= 0 ||
        c.n_embd <= 0 || c.n_embd % c.n_head)
        return tg_set_error("GPT2LMHeadModel",
                            "expected positive sizes and n_embd (%lld) a "
                            "multiple of n_head (%lld)",
                            (long long)c.n_embd, (long long)c.n_head);
    transformer *t = tg_module_new(&transformer_type);
    tg_module *tm = t ? &t->base : NULL;
    if (t) t->use_dropout = c.dropout > 0;
    tm = tg_module_register_module(tm, "wte",
                                   tm ? t->wte = tg_nn_embedding(c.vocab_size, c.n_embd) : NULL);
    tm = tg_module_register_module(tm, "wpe",
                                   tm ? t->wpe = tg_nn_embedding(c.n_positions, c.n_embd) : NULL);
    tm = tg_module_register_module(tm, "drop", tm ? t->drop = tg_nn_dropout(c.dropout) : NULL);
    tg_module *h = tm ? tg_nn_module_list() : NULL;
    for (int64_t i = 0; i < c.n_layer && h; i++)
        if (tg_nn_append(h, block_new(&c)) != 0) {
            tg_module_free(h);
            h = NULL;
        }
    tm = tg_module_register_module(tm, "h", tm ? t->h = h : (tg_module_free(h), NULL));
    tm = tg_module_register_module(
        tm, "ln_f", tm ? t->ln_f = tg_nn_layer_norm(c.n_embd, .eps = c.layer_norm_epsilon) : NULL);
    /* GPT-2's embeddings are N(0, 0.02), not Embedding's N(0, 1). */
    if (tm && (tg_nn_init_normal_(tg_module_get_tensor(t->wte, "weight"), 0, 0.02) != 0 ||
               tg_nn_init_normal_(tg_module_get_tensor(t->wpe, "weight"), 0, 0.02) != 0)) {
        tg_module_free(tm);
        tm = NULL;
    }

    gpt2 *g = tg_module_new(&gpt2_type);
    tg_module *m = g ? &g->base : NULL;
    if (g) g->vocab = c.vocab_size;
    m = tg_module_register_module(m, "transformer",
                                  m ? g->transformer = tm : (tg_module_free(tm), NULL));
    /* lm_head: a Linear without bias whose weight slot holds wte's tensor (tied). */
    tg_module *head = m ? tg_nn_linear(c.n_embd, c.vocab_size, .bias = false) : NULL;
    tg_tensor **slot = head ? tg_module_get_slot(head, "weight") : NULL;
    if (slot) {
        tg_release(*slot);
        *slot = tg_retain(tg_module_get_tensor(t->wte, "weight"));
    }
    if (m) g->lm_head = head;
    return tg_module_register_module(m, "lm_head", head);
}

tg_tensor *tg_nn_gpt2_loss(tg_module *m, tg_tensor *idx, tg_tensor *targets)
{
    if (!m || m->type != &gpt2_type)
        return tg_set_error("gpt2_loss", "expected a GPT2LMHeadModel, got %s",
                            tg_module_type_name(m));
    gpt2 *g = (gpt2 *)m;
    tg_scope_begin();
    tg_tensor *logits = tg_module_forward(m, idx);
    tg_tensor *loss = tg_scope_keep(
        tg_cross_entropy(tg_view(logits, TG_INTS(-1, g->vocab)), tg_view(targets, TG_INTS(-1))));
    tg_scope_end();
    return loss;
}
