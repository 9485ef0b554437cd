/* Vision workloads of BENCH.md, written as PyTorch writes them in ../shared/bench-anchors/
 * torch_cnn.py (conv2d, the ResNet-8 step) and bench/torch_vision.py (pooling, batch norm):
 * conv2d forward (no grad) and forward + backward of .sum() for input and weight (8x64x56x56
 * input, 64 3x3 filters, padding 1), max_pool2d and batch_norm forward + backward, and one
 * ResNet-8 SGD step; float32. */
#include "bench.h"
#include "tensorgen.h"

#include <math.h>
#include <stdio.h>

static void emit_or_skip(const char *name, const char *unit, bool ok, const double *secs,
                         double scale)
{
    if (ok) {
        bench_emit(name, unit, "tensorgen", secs, 0, scale);
    } else {
        fprintf(stderr, "tg_bench: %s skipped: %s\n", name,
                tg_last_error() ? tg_last_error() : "?");
        tg_clear_error();
    }
}

/* ---- conv2d_fwd, conv2d_fwdbwd ---- */

typedef struct conv_ctx {
    tg_tensor *x, *w;
} conv_ctx;

static bool body_conv_fwd(void *p)
{
    conv_ctx *c = p;
    bool ok = false;
    TG_NO_GRAD {
        tg_tensor *y = tg_conv2d(c->x, c->w, .padding = TG_INTS(1, 1));
        ok = y != NULL;
        tg_release(y);
    }
    return ok;
}

static bool body_conv_fwdbwd(void *p)
{
    conv_ctx *c = p;
    tg_tensor_set_grad(c->x, NULL);
    tg_tensor_set_grad(c->w, NULL);
    tg_tensor *y = tg_conv2d(c->x, c->w, .padding = TG_INTS(1, 1));
    tg_tensor *s = tg_sum(y);
    bool ok = s && tg_backward(s) == 0;
    tg_release(s);
    tg_release(y);
    return ok;
}

static void bench_conv(void)
{
    double secs[BENCH_MAX_REPEATS];
    if (!bench_wanted("conv2d_fwd") && !bench_wanted("conv2d_fwdbwd")) return;
    int64_t n = bench_cfg.smoke ? 1 : 8, hw = bench_cfg.smoke ? 8 : 56;
    tg_scope_begin();
    conv_ctx c = { tg_scope_keep(tg_rand(TG_INTS(n, 64, hw, hw))),
                   tg_scope_keep(tg_mul_scalar(tg_rand(TG_INTS(64, 64, 3, 3)), 0.01)) };
    tg_scope_end();
    if (bench_wanted("conv2d_fwd")) {
        bool ok = c.x && c.w && bench_time(body_conv_fwd, &c, 4, 1, secs);
        emit_or_skip("conv2d_fwd", "ms", ok, secs, 1e3);
    }
    if (bench_wanted("conv2d_fwdbwd")) {
        tg_tensor_set_requires_grad(c.x, true);
        tg_tensor_set_requires_grad(c.w, true);
        bool ok = c.x && c.w && bench_time(body_conv_fwdbwd, &c, 2, 1, secs);
        emit_or_skip("conv2d_fwdbwd", "ms", ok, secs, 1e3);
        tg_tensor_set_grad(c.x, NULL);
        tg_tensor_set_grad(c.w, NULL);
    }
    tg_release(c.x);
    tg_release(c.w);
}

/* ---- maxpool2d_fwdbwd: max_pool2d 3x3 stride 2 padding 1 on 8x64x112x112, + backward ---- */

typedef struct one_ctx {
    tg_tensor *x, *w, *b, *rm, *rv;
} one_ctx;

static bool body_maxpool(void *p)
{
    one_ctx *c = p;
    tg_tensor_set_grad(c->x, NULL);
    tg_scope_begin();
    tg_tensor *y =
        tg_max_pool2d(c->x, TG_INTS(3, 3), .stride = TG_INTS(2, 2), .padding = TG_INTS(1, 1));
    bool ok = y && tg_backward(tg_sum(y)) == 0;
    tg_scope_end();
    return ok;
}

/* ---- batchnorm2d_train_fwdbwd: batch_norm (training) on 32x64x56x56, + backward ---- */

static bool body_batchnorm(void *p)
{
    one_ctx *c = p;
    tg_tensor_set_grad(c->x, NULL);
    tg_tensor_set_grad(c->w, NULL);
    tg_tensor_set_grad(c->b, NULL);
    tg_scope_begin();
    tg_tensor *y = tg_batch_norm(c->x, c->w, c->b, c->rm, c->rv, true, 0.1, 1e-5, false);
    bool ok = y && tg_backward(tg_sum(y)) == 0;
    tg_scope_end();
    return ok;
}

static void one_free(one_ctx *c)
{
    tg_tensor *all[] = { c->x, c->w, c->b, c->rm, c->rv };
    for (int i = 0; i < 5; i++) {
        if (all[i]) tg_tensor_set_grad(all[i], NULL);
        tg_release(all[i]);
    }
}

static void bench_pool_norm(void)
{
    double secs[BENCH_MAX_REPEATS];
    bool s = bench_cfg.smoke;
    if (bench_wanted("maxpool2d_fwdbwd")) {
        one_ctx c = { .x = tg_rand(TG_INTS(s ? 1 : 8, s ? 4 : 64, s ? 8 : 112, s ? 8 : 112)) };
        tg_tensor_set_requires_grad(c.x, true);
        bool ok = c.x && bench_time(body_maxpool, &c, 2, 1, secs);
        emit_or_skip("maxpool2d_fwdbwd", "ms", ok, secs, 1e3);
        one_free(&c);
    }
    if (bench_wanted("batchnorm2d_train_fwdbwd")) {
        int64_t ch = s ? 4 : 64;
        one_ctx c = { tg_rand(TG_INTS(s ? 2 : 32, ch, s ? 8 : 56, s ? 8 : 56)),
                      tg_ones(TG_INTS(ch)), tg_zeros(TG_INTS(ch)), tg_zeros(TG_INTS(ch)),
                      tg_ones(TG_INTS(ch)) };
        tg_tensor_set_requires_grad(c.x, true);
        tg_tensor_set_requires_grad(c.w, true);
        tg_tensor_set_requires_grad(c.b, true);
        bool ok = c.x && c.w && bench_time(body_batchnorm, &c, 2, 1, secs);
        emit_or_skip("batchnorm2d_train_fwdbwd", "ms", ok, secs, 1e3);
        one_free(&c);
    }
}

/* ---- resnet8_b32_32x32_sgd_step: torch_cnn.py's ResNet-8 training step ----
 * conv3x3 3->16 + BN + ReLU; basic blocks 16->16 (stride 1), 16->32 (2), 32->64 (2), each
 * conv3x3-BN-ReLU-conv3x3-BN plus the shortcut (identity, or conv1x1 with the stride + BN),
 * then ReLU; global average pooling; linear 64->10. Batch 32 of 3x32x32 random images, random
 * labels, cross-entropy, SGD lr 0.01 momentum 0.9, batch norm in training mode. Timed: grads
 * cleared, forward, backward, step. */

typedef struct resnet8 {
    tg_module *model; /* tg_nn_resnet((1, 1, 1), width 16, small input): the network above */
    tg_optimizer *opt;
    tg_tensor *x, *y;
} resnet8;

static bool body_resnet8(void *p)
{
    resnet8 *m = p;
    tg_optimizer_zero_grad(m->opt);
    tg_scope_begin();
    tg_tensor *logits = tg_module_forward(m->model, m->x);
    bool ok = logits && tg_backward(tg_cross_entropy(logits, m->y)) == 0;
    tg_scope_end();
    return ok && tg_optimizer_step(m->opt) == 0;
}

static void bench_resnet8(void)
{
    double secs[BENCH_MAX_REPEATS];
    const char *name = "resnet8_b32_32x32_sgd_step";
    if (!bench_wanted(name)) return;
    int64_t batch = bench_cfg.smoke ? 2 : 32;
    resnet8 m = { .model = tg_nn_resnet(TG_INTS(1, 1, 1), .num_classes = 10, .in_channels = 3,
                                        .width = 16, .small_input = true) };
    m.opt = m.model ? tg_sgd_new(TG_MODULE_PARAMS(m.model), .lr = 0.01, .momentum = 0.9) : NULL;
    m.x = tg_randn(TG_INTS(batch, 3, 32, 32));
    m.y = tg_randint(10, TG_INTS(batch));
    bool ok =
        m.opt && m.x && m.y && bench_time(body_resnet8, &m, bench_cfg.smoke ? 1 : 10, 1, secs);
    emit_or_skip(name, "ms/step", ok, secs, 1e3);
    tg_optimizer_free(m.opt);
    tg_module_free(m.model);
    tg_release(m.x);
    tg_release(m.y);
}

void bench_vision(void)
{
    bench_conv();
    bench_pool_norm();
    bench_resnet8();
}
