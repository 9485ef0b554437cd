/* Layers without parameters (tg_nn_layers.h): activations, Dropout, Flatten and pooling. One
 * struct serves them all: the few numbers they keep. */
#include <stdio.h>
#include <string.h>

#include "../nn_private.h"
#include "ops/adaptive_avg_pool2d.h"
#include "ops/dropout.h"
#include "ops/flatten.h"
#include "ops/gelu.h"
#include "ops/max_pool2d.h"
#include "ops/relu.h"
#include "ops/silu.h"
#include "ops/tanh.h"

typedef struct simple {
    tg_module base;
    double p;            /* Dropout */
    int64_t a, b, c;     /* Flatten: start, end; MaxPool2d: kernel, stride, padding; pool: h, w */
    char approximate[8]; /* GELU */
} simple;

static tg_tensor *relu_forward(tg_module *m, tg_tensor *x) { return tg_relu(x); }
static tg_tensor *tanh_forward(tg_module *m, tg_tensor *x) { return tg_tanh(x); }
static tg_tensor *silu_forward(tg_module *m, tg_tensor *x) { return tg_silu(x); }

static tg_tensor *identity_forward(tg_module *m, tg_tensor *x)
{
    return tg_scope_track(tg_retain(x)); /* a new reference, like every forward's result */
}

static tg_tensor *gelu_forward(tg_module *m, tg_tensor *x)
{
    return tg_gelu(x, .approximate = ((simple *)m)->approximate);
}

static tg_tensor *dropout_forward(tg_module *m, tg_tensor *x)
{
    return tg_dropout(x, ((simple *)m)->p, m->training);
}

static tg_tensor *flatten_forward(tg_module *m, tg_tensor *x)
{
    simple *s = (simple *)m;
    return tg_flatten(x, .start_dim = s->a, .end_dim = s->b);
}

static tg_tensor *max_pool2d_forward(tg_module *m, tg_tensor *x)
{
    simple *s = (simple *)m;
    return tg_max_pool2d(x, TG_INTS(s->a, s->a), .stride = TG_INTS(s->b, s->b),
                         .padding = TG_INTS(s->c, s->c));
}

static tg_tensor *adaptive_avg_pool2d_forward(tg_module *m, tg_tensor *x)
{
    simple *s = (simple *)m;
    return tg_adaptive_avg_pool2d(x, TG_INTS(s->a, s->b));
}

static void gelu_describe(const tg_module *m, char *buf, size_t cap)
{
    snprintf(buf, cap, "approximate='%s'", ((const simple *)m)->approximate);
}
static void dropout_describe(const tg_module *m, char *buf, size_t cap)
{
    snprintf(buf, cap, "p=%g, inplace=False", ((const simple *)m)->p);
}
static void flatten_describe(const tg_module *m, char *buf, size_t cap)
{
    const simple *s = (const simple *)m;
    snprintf(buf, cap, "start_dim=%lld, end_dim=%lld", (long long)s->a, (long long)s->b);
}
static void max_pool2d_describe(const tg_module *m, char *buf, size_t cap)
{
    const simple *s = (const simple *)m;
    snprintf(buf, cap, "kernel_size=%lld, stride=%lld, padding=%lld, dilation=1, ceil_mode=False",
             (long long)s->a, (long long)s->b, (long long)s->c);
}
static void adaptive_avg_pool2d_describe(const tg_module *m, char *buf, size_t cap)
{
    const simple *s = (const simple *)m;
    snprintf(buf, cap, "output_size=(%lld, %lld)", (long long)s->a, (long long)s->b);
}

#define SIMPLE_TYPE(var, name, fwd, describe) \
    static const tg_module_type var = { name, sizeof(simple), fwd, describe, NULL }
SIMPLE_TYPE(relu_type, "ReLU", relu_forward, NULL);
SIMPLE_TYPE(tanh_type, "Tanh", tanh_forward, NULL);
SIMPLE_TYPE(silu_type, "SiLU", silu_forward, NULL);
SIMPLE_TYPE(identity_type, "Identity", identity_forward, NULL);
SIMPLE_TYPE(gelu_type, "GELU", gelu_forward, gelu_describe);
SIMPLE_TYPE(dropout_type, "Dropout", dropout_forward, dropout_describe);
SIMPLE_TYPE(flatten_type, "Flatten", flatten_forward, flatten_describe);
SIMPLE_TYPE(max_pool2d_type, "MaxPool2d", max_pool2d_forward, max_pool2d_describe);
SIMPLE_TYPE(adaptive_avg_pool2d_type, "AdaptiveAvgPool2d", adaptive_avg_pool2d_forward,
            adaptive_avg_pool2d_describe);

tg_module *tg_nn_relu(void) { return tg_module_new(&relu_type); }
tg_module *tg_nn_tanh(void) { return tg_module_new(&tanh_type); }
tg_module *tg_nn_silu(void) { return tg_module_new(&silu_type); }
tg_module *tg_nn_identity(void) { return tg_module_new(&identity_type); }

tg_module *tg_nn_gelu(const char *approximate)
{
    if (!approximate) approximate = "none";
    if (strcmp(approximate, "none") != 0 && strcmp(approximate, "tanh") != 0)
        return tg_set_error("GELU", "approximate must be 'none' or 'tanh', got '%s'", approximate);
    simple *s = tg_module_new(&gelu_type);
    if (s) snprintf(s->approximate, sizeof s->approximate, "%s", approximate);
    return s ? &s->base : NULL;
}

tg_module *tg_nn_dropout(double p)
{
    if (!(p >= 0 && p <= 1))
        return tg_set_error("Dropout", "dropout probability has to be between 0 and 1, but got %g",
                            p);
    simple *s = tg_module_new(&dropout_type);
    if (s) s->p = p;
    return s ? &s->base : NULL;
}

tg_module *tg_nn_flatten(int64_t start_dim, int64_t end_dim)
{
    simple *s = tg_module_new(&flatten_type);
    if (s) {
        s->a = start_dim;
        s->b = end_dim;
    }
    return s ? &s->base : NULL;
}

tg_module *tg_nn_max_pool2d(int64_t kernel_size, int64_t stride, int64_t padding)
{
    if (kernel_size <= 0 || stride < 0 || padding < 0 || 2 * padding > kernel_size)
        return tg_set_error("MaxPool2d",
                            "kernel_size must be positive, stride >= 0 and padding at "
                            "most half the kernel, got %lld, %lld, %lld",
                            (long long)kernel_size, (long long)stride, (long long)padding);
    simple *s = tg_module_new(&max_pool2d_type);
    if (s) {
        s->a = kernel_size;
        s->b = stride ? stride : kernel_size;
        s->c = padding;
    }
    return s ? &s->base : NULL;
}

tg_module *tg_nn_adaptive_avg_pool2d(int64_t h, int64_t w)
{
    if (h <= 0 || w <= 0)
        return tg_set_error("AdaptiveAvgPool2d", "output size must be positive, got (%lld, %lld)",
                            (long long)h, (long long)w);
    simple *s = tg_module_new(&adaptive_avg_pool2d_type);
    if (s) {
        s->a = h;
        s->b = w;
    }
    return s ? &s->base : NULL;
}
