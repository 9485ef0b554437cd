/* Linear and Embedding (tg_nn_layers.h). */
#include <math.h>
#include <stdio.h>

#include "../nn_private.h"
#include "ops/embedding.h"
#include "ops/linear.h"
#include "ops/select.h"

typedef struct linear {
    tg_module base;
    tg_tensor *weight; /* (out, in) */
    tg_tensor *bias;   /* (out), or NULL without bias */
    int64_t in, out;
} linear;

static tg_tensor *linear_forward(tg_module *m, tg_tensor *x)
{
    linear *l = (linear *)m;
    return tg_linear(x, l->weight, .bias = l->bias);
}

static void linear_describe(const tg_module *m, char *buf, size_t cap)
{
    const linear *l = (const linear *)m;
    snprintf(buf, cap, "in_features=%lld, out_features=%lld, bias=%s", (long long)l->in,
             (long long)l->out, l->bias ? "True" : "False");
}

static const tg_module_type linear_type = { "Linear", sizeof(linear), linear_forward,
                                            linear_describe, NULL };

tg_module *tg_nn_linear_fn(int64_t in, int64_t out, tg_nn_linear_opts o)
{
    if (in < 0 || out < 0)
        return tg_set_error("Linear", "in_features and out_features must be >= 0, got %lld, %lld",
                            (long long)in, (long long)out);
    linear *l = tg_module_new(&linear_type);
    if (!l) return NULL;
    l->in = in;
    l->out = out;
    /* kaiming_uniform_(a=sqrt(5)) on (out, in) is uniform in +-1/sqrt(in); the bias too. */
    double bound = in > 0 ? 1 / sqrt((double)in) : 0;
    l->weight = tg__nn_uniform(TG_INTS(out, in), bound);
    tg_module *m = tg_module_register_parameter(&l->base, "weight", &l->weight);
    if (!m || !o.bias) return m;
    l->bias = tg__nn_uniform(TG_INTS(out), bound);
    return tg_module_register_parameter(m, "bias", &l->bias);
}

typedef struct embedding {
    tg_module base;
    tg_tensor *weight; /* (num, dim) */
    int64_t num, dim, padding_idx;
} embedding;

static tg_tensor *embedding_forward(tg_module *m, tg_tensor *idx)
{
    embedding *e = (embedding *)m;
    return tg_embedding(e->weight, idx, .padding_idx = e->padding_idx);
}

static void embedding_describe(const tg_module *m, char *buf, size_t cap)
{
    const embedding *e = (const embedding *)m;
    int n = snprintf(buf, cap, "%lld, %lld", (long long)e->num, (long long)e->dim);
    if (e->padding_idx >= 0 && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, ", padding_idx=%lld", (long long)e->padding_idx);
}

static const tg_module_type embedding_type = { "Embedding", sizeof(embedding), embedding_forward,
                                               embedding_describe, NULL };

tg_module *tg_nn_embedding_fn(int64_t num, int64_t dim, tg_nn_embedding_opts o)
{
    if (num < 0 || dim < 0)
        return tg_set_error("Embedding", "sizes must be >= 0, got %lld, %lld", (long long)num,
                            (long long)dim);
    /* PyTorch accepts a negative padding_idx counted from the end, down to -num; -1 is the
     * "none" of this API, as padding_idx=None. */
    if (o.padding_idx >= num || o.padding_idx < -1)
        return tg_set_error("Embedding",
                            "padding_idx must be within num_embeddings (%lld), got %lld",
                            (long long)num, (long long)o.padding_idx);
    embedding *e = tg_module_new(&embedding_type);
    if (!e) return NULL;
    e->num = num;
    e->dim = dim;
    e->padding_idx = o.padding_idx;
    e->weight = tg__nn_normal(TG_INTS(num, dim), 1);
    if (e->weight && o.padding_idx >= 0) {
        tg_tensor *row = NULL;
        TG__NN_OWN row = tg_select(e->weight, 0, o.padding_idx);
        if (!row || tg_nn_init_zeros_(row) != 0) {
            tg_release(e->weight);
            e->weight = NULL;
        }
        tg_release(row);
    }
    return tg_module_register_parameter(&e->base, "weight", &e->weight);
}
