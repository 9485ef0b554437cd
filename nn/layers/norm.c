/* BatchNorm1d/2d, LayerNorm and GroupNorm (tg_nn_layers.h). */
#include <stdio.h>

#include "../nn_private.h"
#include "ops/add.h"
#include "ops/batch_norm.h"
#include "ops/group_norm.h"
#include "ops/layer_norm.h"
#include "ops/zeros.h"

typedef struct norm {
    tg_module base;
    tg_tensor *weight, *bias;                                    /* (C), or NULL without affine */
    tg_tensor *running_mean, *running_var, *num_batches_tracked; /* BatchNorm's buffers */
    int64_t c, groups;
    int64_t min_dim, max_dim; /* BatchNorm's accepted input dims */
    tg_nn_norm_opts o;
} norm;

static tg_tensor *batch_norm_forward(tg_module *m, tg_tensor *x)
{
    norm *n = (norm *)m;
    int64_t d = tg_tensor_dim(x);
    if (d < n->min_dim || d > n->max_dim)
        return tg_set_error(m->type->name, "expected %s input (got %lldD input)",
                            n->min_dim == 4 ? "4D" : "2D or 3D", (long long)d);
    if (m->training && n->num_batches_tracked) {
        tg_tensor *r = NULL;
        TG__NN_OWN r = tg_add_scalar_(n->num_batches_tracked, 1);
        if (!r) return NULL;
        tg_release(r);
    }
    /* Batch statistics in training mode, or in eval mode without running statistics. */
    bool use_batch = m->training || !n->running_mean;
    return tg_batch_norm(x, n->weight, n->bias, n->running_mean, n->running_var, use_batch,
                         n->o.momentum, n->o.eps, true);
}

static tg_tensor *layer_norm_forward(tg_module *m, tg_tensor *x)
{
    norm *n = (norm *)m;
    return tg_layer_norm(x, TG_INTS(n->c), .weight = n->weight, .bias = n->bias, .eps = n->o.eps);
}

static tg_tensor *group_norm_forward(tg_module *m, tg_tensor *x)
{
    norm *n = (norm *)m;
    return tg_group_norm(x, n->groups, .weight = n->weight, .bias = n->bias, .eps = n->o.eps);
}

static const char *py_bool(bool b) { return b ? "True" : "False"; }

static void batch_norm_describe(const tg_module *m, char *buf, size_t cap)
{
    const norm *n = (const norm *)m;
    snprintf(buf, cap, "%lld, eps=%g, momentum=%g, affine=%s, track_running_stats=%s",
             (long long)n->c, n->o.eps, n->o.momentum, py_bool(n->o.affine),
             py_bool(n->o.track_running_stats));
}

static void layer_norm_describe(const tg_module *m, char *buf, size_t cap)
{
    const norm *n = (const norm *)m;
    snprintf(buf, cap, "(%lld,), eps=%g, elementwise_affine=%s", (long long)n->c, n->o.eps,
             py_bool(n->o.affine));
}

static void group_norm_describe(const tg_module *m, char *buf, size_t cap)
{
    const norm *n = (const norm *)m;
    snprintf(buf, cap, "%lld, %lld, eps=%g, affine=%s", (long long)n->groups, (long long)n->c,
             n->o.eps, py_bool(n->o.affine));
}

static const tg_module_type batch_norm1d_type = { "BatchNorm1d", sizeof(norm), batch_norm_forward,
                                                  batch_norm_describe, NULL };
static const tg_module_type batch_norm2d_type = { "BatchNorm2d", sizeof(norm), batch_norm_forward,
                                                  batch_norm_describe, NULL };
static const tg_module_type layer_norm_type = { "LayerNorm", sizeof(norm), layer_norm_forward,
                                                layer_norm_describe, NULL };
static const tg_module_type group_norm_type = { "GroupNorm", sizeof(norm), group_norm_forward,
                                                group_norm_describe, NULL };

/* The affine parameters, weight 1 and bias 0 (LayerNorm's bias only when o.bias). */
static tg_module *affine(norm *n, bool with_bias)
{
    tg_module *m = &n->base;
    if (!n->o.affine) return m;
    n->weight = tg__nn_full(TG_INTS(n->c), 1);
    m = tg_module_register_parameter(m, "weight", &n->weight);
    if (!m || !with_bias) return m;
    n->bias = tg__nn_full(TG_INTS(n->c), 0);
    return tg_module_register_parameter(m, "bias", &n->bias);
}

static tg_module *batch_norm(const tg_module_type *type, int64_t c, int64_t min_dim,
                             int64_t max_dim, tg_nn_norm_opts o)
{
    if (c <= 0)
        return tg_set_error(type->name, "num_features must be positive, got %lld", (long long)c);
    norm *n = tg_module_new(type);
    if (!n) return NULL;
    n->c = c;
    n->min_dim = min_dim;
    n->max_dim = max_dim;
    n->o = o;
    tg_module *m = affine(n, true);
    if (!m || !o.track_running_stats) return m;
    n->running_mean = tg__nn_full(TG_INTS(c), 0);
    m = tg_module_register_buffer(m, "running_mean", &n->running_mean, true);
    if (!m) return NULL;
    n->running_var = tg__nn_full(TG_INTS(c), 1);
    m = tg_module_register_buffer(m, "running_var", &n->running_var, true);
    if (!m) return NULL;
    TG__NN_OWN n->num_batches_tracked = tg_zeros(TG_INTS_EMPTY, .dtype = TG_INT64);
    return tg_module_register_buffer(m, "num_batches_tracked", &n->num_batches_tracked, true);
}

tg_module *tg_nn_batch_norm1d_fn(int64_t c, tg_nn_norm_opts o)
{
    return batch_norm(&batch_norm1d_type, c, 2, 3, o);
}

tg_module *tg_nn_batch_norm2d_fn(int64_t c, tg_nn_norm_opts o)
{
    return batch_norm(&batch_norm2d_type, c, 4, 4, o);
}

tg_module *tg_nn_layer_norm_fn(int64_t dim, tg_nn_norm_opts o)
{
    if (dim <= 0)
        return tg_set_error("LayerNorm", "normalized_shape must be positive, got %lld",
                            (long long)dim);
    norm *n = tg_module_new(&layer_norm_type);
    if (!n) return NULL;
    n->c = dim;
    n->o = o;
    return affine(n, o.bias);
}

tg_module *tg_nn_group_norm_fn(int64_t groups, int64_t c, tg_nn_norm_opts o)
{
    if (groups <= 0 || c <= 0 || c % groups)
        return tg_set_error("GroupNorm",
                            "num_channels (%lld) must be divisible by num_groups (%lld)",
                            (long long)c, (long long)groups);
    norm *n = tg_module_new(&group_norm_type);
    if (!n) return NULL;
    n->c = c;
    n->groups = groups;
    n->o = o;
    return affine(n, true);
}
