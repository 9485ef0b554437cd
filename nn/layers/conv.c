/* Conv1d, Conv2d and ConvTranspose2d (tg_nn_layers.h): square kernels, zero padding. */
#include <math.h>
#include <stdio.h>

#include "../nn_private.h"
#include "ops/conv1d.h"
#include "ops/conv2d.h"
#include "ops/conv_transpose2d.h"

typedef struct conv {
    tg_module base;
    tg_tensor *weight; /* (out, in/groups, k[, k]); transposed: (in, out/groups, k, k) */
    tg_tensor *bias;   /* (out) or NULL */
    int64_t in, out, k, dims;
    tg_nn_conv_opts o;
} conv;

static tg_tensor *conv1d_forward(tg_module *m, tg_tensor *x)
{
    conv *c = (conv *)m;
    return tg_conv1d(x, c->weight, .bias = c->bias, .stride = TG_INTS(c->o.stride),
                     .padding = TG_INTS(c->o.padding), .dilation = TG_INTS(c->o.dilation),
                     .groups = c->o.groups);
}

static tg_tensor *conv2d_forward(tg_module *m, tg_tensor *x)
{
    conv *c = (conv *)m;
    return tg_conv2d(x, c->weight, .bias = c->bias, .stride = TG_INTS(c->o.stride, c->o.stride),
                     .padding = TG_INTS(c->o.padding, c->o.padding),
                     .dilation = TG_INTS(c->o.dilation, c->o.dilation), .groups = c->o.groups);
}

static tg_tensor *conv_transpose2d_forward(tg_module *m, tg_tensor *x)
{
    conv *c = (conv *)m;
    return tg_conv_transpose2d(
        x, c->weight, .bias = c->bias, .stride = TG_INTS(c->o.stride, c->o.stride),
        .padding = TG_INTS(c->o.padding, c->o.padding),
        .output_padding = TG_INTS(c->o.output_padding, c->o.output_padding), .groups = c->o.groups,
        .dilation = TG_INTS(c->o.dilation, c->o.dilation));
}

/* PyTorch's repr: "3, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False". */
static void conv_describe(const tg_module *m, char *buf, size_t cap)
{
    const conv *c = (const conv *)m;
    char k[32], s[32], p[32];
    if (c->dims == 1) {
        snprintf(k, sizeof k, "(%lld,)", (long long)c->k);
        snprintf(s, sizeof s, "(%lld,)", (long long)c->o.stride);
        snprintf(p, sizeof p, "(%lld,)", (long long)c->o.padding);
    } else {
        snprintf(k, sizeof k, "(%lld, %lld)", (long long)c->k, (long long)c->k);
        snprintf(s, sizeof s, "(%lld, %lld)", (long long)c->o.stride, (long long)c->o.stride);
        snprintf(p, sizeof p, "(%lld, %lld)", (long long)c->o.padding, (long long)c->o.padding);
    }
    int n = snprintf(buf, cap, "%lld, %lld, kernel_size=%s, stride=%s", (long long)c->in,
                     (long long)c->out, k, s);
    if (c->o.padding && n > 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", padding=%s", p);
    if (c->o.groups != 1 && n > 0 && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, ", groups=%lld", (long long)c->o.groups);
    if (!c->bias && n > 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, ", bias=False");
}

static const tg_module_type conv1d_type = { "Conv1d", sizeof(conv), conv1d_forward, conv_describe,
                                            NULL };
static const tg_module_type conv2d_type = { "Conv2d", sizeof(conv), conv2d_forward, conv_describe,
                                            NULL };
static const tg_module_type conv_transpose2d_type = { "ConvTranspose2d", sizeof(conv),
                                                      conv_transpose2d_forward, conv_describe,
                                                      NULL };

static tg_module *make(const tg_module_type *type, int64_t in, int64_t out, int64_t k, int dims,
                       bool transposed, tg_nn_conv_opts o)
{
    const char *name = type->name;
    if (in <= 0 || out <= 0 || k <= 0)
        return tg_set_error(name,
                            "in_channels, out_channels and kernel_size must be positive, "
                            "got %lld, %lld, %lld",
                            (long long)in, (long long)out, (long long)k);
    if (o.groups <= 0 || in % o.groups || out % o.groups)
        return tg_set_error(name,
                            "in_channels (%lld) and out_channels (%lld) must be divisible "
                            "by groups (%lld)",
                            (long long)in, (long long)out, (long long)o.groups);
    if (o.stride <= 0 || o.dilation <= 0 || o.padding < 0 || o.output_padding < 0)
        return tg_set_error(name, "stride and dilation must be positive and padding >= 0");
    conv *c = tg_module_new(type);
    if (!c) return NULL;
    c->in = in;
    c->out = out;
    c->k = k;
    c->dims = dims;
    c->o = o;
    int64_t kk = dims == 2 ? k * k : k;
    /* kaiming_uniform_(a=sqrt(5)) gives +-1/sqrt(fan_in), fan_in = weight.size(1) * k^d. */
    int64_t rows = transposed ? in : out, cols = (transposed ? out : in) / o.groups;
    double bound = 1 / sqrt((double)(cols * kk));
    c->weight = dims == 2 ? tg__nn_uniform(TG_INTS(rows, cols, k, k), bound)
                          : tg__nn_uniform(TG_INTS(rows, cols, k), bound);
    tg_module *m = tg_module_register_parameter(&c->base, "weight", &c->weight);
    if (!m || !o.bias) return m;
    c->bias = tg__nn_uniform(TG_INTS(out), bound);
    return tg_module_register_parameter(m, "bias", &c->bias);
}

tg_module *tg_nn_conv1d_fn(int64_t in, int64_t out, int64_t k, tg_nn_conv_opts o)
{
    return make(&conv1d_type, in, out, k, 1, false, o);
}

tg_module *tg_nn_conv2d_fn(int64_t in, int64_t out, int64_t k, tg_nn_conv_opts o)
{
    return make(&conv2d_type, in, out, k, 2, false, o);
}

tg_module *tg_nn_conv_transpose2d_fn(int64_t in, int64_t out, int64_t k, tg_nn_conv_opts o)
{
    return make(&conv_transpose2d_type, in, out, k, 2, true, o);
}
