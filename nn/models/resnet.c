/* torchvision's ResNet with BasicBlocks (tg_nn_models.h), module by module with its names. */
#include <stdio.h>
#include <string.h>

#include "../nn_private.h"
#include "ops/add.h"
#include "ops/flatten.h"
#include "ops/relu.h"

/* ---- BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)) ---- */

typedef struct basic_block {
    tg_module base;
    tg_module *conv1, *bn1, *relu, *conv2, *bn2, *downsample; /* downsample may be NULL */
} basic_block;

static tg_tensor *basic_block_forward(tg_module *m, tg_tensor *x)
{
    basic_block *b = (basic_block *)m;
    tg_scope_begin();
    tg_tensor *h =
        tg_module_forward(b->relu, tg_module_forward(b->bn1, tg_module_forward(b->conv1, x)));
    h = tg_module_forward(b->bn2, tg_module_forward(b->conv2, h));
    tg_tensor *shortcut = b->downsample ? tg_module_forward(b->downsample, x) : x;
    tg_tensor *y = tg_scope_keep(tg_relu(tg_add(h, shortcut)));
    tg_scope_end();
    return y;
}

static const tg_module_type basic_block_type = { "BasicBlock", sizeof(basic_block),
                                                 basic_block_forward, NULL, NULL };

static tg_module *basic_block_new(int64_t in, int64_t out, int64_t stride)
{
    basic_block *b = tg_module_new(&basic_block_type);
    tg_module *m = b ? &b->base : NULL;
    if (!m) return NULL;
    m = tg_module_register_module(
        m, "conv1",
        b->conv1 = tg_nn_conv2d(in, out, 3, .stride = stride, .padding = 1, .bias = false));
    m = tg_module_register_module(m, "bn1", m ? b->bn1 = tg_nn_batch_norm2d(out) : NULL);
    m = tg_module_register_module(m, "relu", m ? b->relu = tg_nn_relu() : NULL);
    m = tg_module_register_module(
        m, "conv2", m ? b->conv2 = tg_nn_conv2d(out, out, 3, .padding = 1, .bias = false) : NULL);
    m = tg_module_register_module(m, "bn2", m ? b->bn2 = tg_nn_batch_norm2d(out) : NULL);
    if (!m || (stride == 1 && in == out)) return m;
    b->downsample = tg_nn_sequential(tg_nn_conv2d(in, out, 1, .stride = stride, .bias = false),
                                     tg_nn_batch_norm2d(out));
    return tg_module_register_module(m, "downsample", b->downsample);
}

/* ---- ResNet ---- */

typedef struct resnet {
    tg_module base;
    tg_module *children_in_order[16]; /* conv1, bn1, relu, [maxpool], layer1.., avgpool, fc */
    int n;
} resnet;

/* The children in registration order: conv1, bn1, relu, [maxpool], layer1.., avgpool, then a
 * flatten that is not a module in torchvision (torch.flatten(x, 1)), then fc. */
static tg_tensor *resnet_forward(tg_module *m, tg_tensor *x)
{
    resnet *r = (resnet *)m;
    tg_scope_begin();
    tg_tensor *h = x;
    for (int i = 0; i < r->n - 1; i++) h = tg_module_forward(r->children_in_order[i], h);
    h = tg_module_forward(r->children_in_order[r->n - 1], tg_flatten(h, .start_dim = 1));
    tg_scope_keep(h);
    tg_scope_end();
    return h;
}

static const tg_module_type resnet_type = { "ResNet", sizeof(resnet), resnet_forward, NULL, NULL };

/* Registers child under name and remembers it for the forward pass. */
static tg_module *add(resnet *r, tg_module *m, const char *name, tg_module *child)
{
    if (m && child) r->children_in_order[r->n++] = child;
    return tg_module_register_module(m, name, child);
}

/* torchvision's initialisation: kaiming_normal_(fan_out, relu) for every convolution (batch
 * norms start at 1 and 0 already; fc keeps Linear's). */
static int init_conv(tg_module *m, const char *path, void *ctx)
{
    if (strcmp(tg_module_type_name(m), "Conv2d") != 0) return 0;
    return tg_nn_init_kaiming_normal_(tg_module_get_tensor(m, "weight"), 0, TG_FAN_OUT, "relu");
}

tg_module *tg_nn_resnet_fn(tg_int_list blocks, tg_nn_resnet_opts o)
{
    if (blocks.len < 1 || blocks.len > 8 || o.num_classes <= 0 || o.in_channels <= 0 ||
        o.width <= 0)
        return tg_set_error("ResNet", "expected 1 to 8 stages and positive num_classes, "
                                      "in_channels and width");
    resnet *r = tg_module_new(&resnet_type);
    tg_module *m = r ? &r->base : NULL;
    if (!m) return NULL;
    int64_t w = o.width;
    if (o.small_input)
        m = add(r, m, "conv1", tg_nn_conv2d(o.in_channels, w, 3, .padding = 1, .bias = false));
    else
        m = add(r, m, "conv1",
                tg_nn_conv2d(o.in_channels, w, 7, .stride = 2, .padding = 3, .bias = false));
    m = add(r, m, "bn1", m ? tg_nn_batch_norm2d(w) : NULL);
    m = add(r, m, "relu", m ? tg_nn_relu() : NULL);
    if (!o.small_input) m = add(r, m, "maxpool", m ? tg_nn_max_pool2d(3, 2, 1) : NULL);
    int64_t in = w;
    for (int64_t s = 0; s < blocks.len && m; s++) {
        int64_t out = w << s;
        tg_module *stage = tg_nn_sequential_fn(NULL, 0);
        for (int64_t i = 0; i < blocks.data[s] && stage; i++) {
            if (tg_nn_append(stage, basic_block_new(in, out, i == 0 && s > 0 ? 2 : 1)) != 0) {
                tg_module_free(stage);
                stage = NULL;
            }
            in = out;
        }
        char name[16];
        snprintf(name, sizeof name, "layer%lld", (long long)s + 1);
        m = add(r, m, name, stage);
    }
    m = add(r, m, "avgpool", m ? tg_nn_adaptive_avg_pool2d(1, 1) : NULL);
    m = add(r, m, "fc", m ? tg_nn_linear(in, o.num_classes) : NULL);
    if (m && tg_module_apply(m, init_conv, NULL) != 0) {
        tg_module_free(m);
        return NULL;
    }
    return m;
}
