/* Autograd workloads of BENCH.md: the fixed cost of recording and running a tiny graph, and a
 * whole MLP training step (forward, cross-entropy, backward, SGD), both written as
 * ../shared/bench-anchors/torch_bench.py writes them in PyTorch. */
#include "bench.h"
#include "tensorgen.h"

#include <math.h>
#include <stdio.h>

/* ---- overhead_autograd_mul_sum_backward_1elem: (a * b).sum().backward(), grads cleared ---- */

typedef struct tiny_ctx { tg_tensor *a, *b; } tiny_ctx;

static bool body_mul_sum_backward(void *p)
{
    tiny_ctx *c = p;
    tg_tensor_set_grad(c->a, NULL);              /* a.grad = None; b.grad = None */
    tg_tensor_set_grad(c->b, NULL);
    tg_tensor *m = tg_mul(c->a, c->b);
    tg_tensor *s = tg_sum(m);
    bool ok = s && tg_backward(s) == 0;
    tg_release(s);
    tg_release(m);
    return ok;
}

/* ---- mlp_784_512_512_10_b128_sgd_step ---- */

#define MLP_LAYERS 3
static const int64_t mlp_widths[MLP_LAYERS + 1] = { 784, 512, 512, 10 };

typedef struct mlp_ctx {
    tg_tensor *p[2 * MLP_LAYERS];    /* weight (out, in), bias (out) per layer */
    tg_tensor *x, *y;                /* (128, 784) in [0, 1), (128) classes */
} mlp_ctx;

/* opt.zero_grad(set_to_none=True); cross_entropy(model(x), y).backward(); opt.step(). */
static bool body_mlp_step(void *p)
{
    mlp_ctx *c = p;
    for (int i = 0; i < 2 * MLP_LAYERS; i++) tg_tensor_set_grad(c->p[i], NULL);
    tg_scope_begin();
    tg_tensor *h = c->x;
    for (int l = 0; l < MLP_LAYERS; l++) {
        h = tg_linear(h, c->p[2 * l], .bias = c->p[2 * l + 1]);
        if (l < MLP_LAYERS - 1) h = tg_relu(h);
    }
    tg_tensor *loss = tg_cross_entropy(h, c->y);
    bool ok = loss && tg_backward(loss) == 0;
    tg_scope_end();
    TG_NO_GRAD {
        for (int i = 0; ok && i < 2 * MLP_LAYERS; i++) {
            tg_tensor *g = tg_tensor_grad(c->p[i]);
            tg_tensor *r = tg_sgd_step_(c->p[i], g, NULL, 0.01);
            ok = r != NULL;
            tg_release(r);
            tg_release(g);
        }
    }
    return ok;
}

static void emit_or_skip(const char *name, const char *unit, bool ok, const double *secs, double scale)
{
    if (ok) {
        bench_emit(name, unit, "tensorgen", secs, 0, scale);
    } else {
        fprintf(stderr, "tg_bench: %s skipped: %s\n", name, tg_last_error() ? tg_last_error() : "?");
        tg_clear_error();
    }
}

void bench_autograd(void)
{
    double secs[BENCH_MAX_REPEATS];
    const char *tiny = "overhead_autograd_mul_sum_backward_1elem";
    if (bench_wanted(tiny)) {
        tiny_ctx c = { tg_randn(TG_INTS(1)), tg_randn(TG_INTS(1)) };
        tg_tensor_set_requires_grad(c.a, true);
        tg_tensor_set_requires_grad(c.b, true);
        bool ok = c.a && c.b && bench_time(body_mul_sum_backward, &c, 20000, 1, secs);
        emit_or_skip(tiny, "us/iter", ok, secs, 1e6);
        tg_tensor_set_grad(c.a, NULL);
        tg_tensor_set_grad(c.b, NULL);
        tg_release(c.a);
        tg_release(c.b);
    }

    const char *mlp = "mlp_784_512_512_10_b128_sgd_step";
    if (bench_wanted(mlp)) {
        mlp_ctx c = { .x = tg_rand(TG_INTS(128, 784)), .y = tg_randint(10, TG_INTS(128)) };
        bool ok = c.x && c.y;
        for (int l = 0; l < MLP_LAYERS; l++) {      /* nn.Linear's init: U(-1/sqrt(in), 1/sqrt(in)) */
            int64_t in = mlp_widths[l], out = mlp_widths[l + 1];
            double bound = 1.0 / sqrt((double)in);
            tg_scope_begin();
            c.p[2 * l] = tg_scope_keep(tg_add_scalar(tg_mul_scalar(tg_rand(TG_INTS(out, in)), 2 * bound), -bound));
            c.p[2 * l + 1] = tg_scope_keep(tg_add_scalar(tg_mul_scalar(tg_rand(TG_INTS(out)), 2 * bound), -bound));
            tg_scope_end();
            ok = ok && c.p[2 * l] && c.p[2 * l + 1];
            tg_tensor_set_requires_grad(c.p[2 * l], true);
            tg_tensor_set_requires_grad(c.p[2 * l + 1], true);
        }
        ok = ok && bench_time(body_mlp_step, &c, 50, 1, secs);
        emit_or_skip(mlp, "ms/step", ok, secs, 1e3);
        for (int i = 0; i < 2 * MLP_LAYERS; i++) {
            tg_tensor_set_grad(c.p[i], NULL);
            tg_release(c.p[i]);
        }
        tg_release(c.x);
        tg_release(c.y);
    }
}
