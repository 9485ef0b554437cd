/* Autograd workloads of BENCH.md: the fixed cost of recording and running a tiny graph, and a
 * whole MLP training step (forward, cross-entropy, backward, SGD), both written as
 * ../shared/bench-anchors/torch_bench.py writes them in PyTorch. */
#include "bench.h"
#include "tensorgen.h"

#include <math.h>
#include <stdio.h>

/* ---- overhead_autograd_mul_sum_backward_1elem: (a * b).sum().backward(), grads cleared ---- */

typedef struct tiny_ctx {
    tg_tensor *a, *b;
} tiny_ctx;

static bool body_mul_sum_backward(void *p)
{
    tiny_ctx *c = p;
    tg_tensor_set_grad(c->a, NULL); /* a.grad = None; b.grad = None */
    tg_tensor_set_grad(c->b, NULL);
    tg_tensor *m = tg_mul(c->a, c->b);
    tg_tensor *s = tg_sum(m);
    bool ok = s && tg_backward(s) == 0;
    tg_release(s);
    tg_release(m);
    return ok;
}

/* ---- mlp_784_512_512_10_b128_sgd_step ---- */

static const int64_t mlp_widths[BENCH_MLP_LAYERS + 1] = { 784, 512, 512, 10 };

/* Shared with the GPU workload (bench/bench_cuda.c), which runs it on device 0. */
bool bench_mlp_step(void *p)
{
    bench_mlp *c = p;
    for (int i = 0; i < 2 * BENCH_MLP_LAYERS; i++) tg_tensor_set_grad(c->p[i], NULL);
    tg_scope_begin();
    tg_tensor *h = c->x;
    for (int l = 0; l < BENCH_MLP_LAYERS; l++) {
        h = tg_linear(h, c->p[2 * l], .bias = c->p[2 * l + 1]);
        if (l < BENCH_MLP_LAYERS - 1) h = tg_relu(h);
    }
    tg_tensor *loss = tg_cross_entropy(h, c->y);
    bool ok = loss && tg_backward(loss) == 0;
    tg_scope_end();
    TG_NO_GRAD {
        for (int i = 0; ok && i < 2 * BENCH_MLP_LAYERS; i++) {
            tg_tensor *g = tg_tensor_grad(c->p[i]);
            tg_tensor *r = tg_sgd_step_(c->p[i], g, NULL, 0.01);
            ok = r != NULL;
            tg_release(r);
            tg_release(g);
        }
    }
    return ok;
}

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
        /* x (128, 784) in [0, 1), y (128) classes */
        bench_mlp c = { .x = tg_rand(TG_INTS(128, 784)), .y = tg_randint(10, TG_INTS(128)) };
        bool ok = c.x && c.y;
        for (int l = 0; l < BENCH_MLP_LAYERS;
             l++) { /* nn.Linear's init: U(-1/sqrt(in), 1/sqrt(in)) */
            int64_t in = mlp_widths[l], out = mlp_widths[l + 1];
            double bound = 1.0 / sqrt((double)in);
            tg_scope_begin();
            c.p[2 * l] = tg_scope_keep(
                tg_add_scalar(tg_mul_scalar(tg_rand(TG_INTS(out, in)), 2 * bound), -bound));
            c.p[2 * l + 1] = tg_scope_keep(
                tg_add_scalar(tg_mul_scalar(tg_rand(TG_INTS(out)), 2 * bound), -bound));
            tg_scope_end();
            ok = ok && c.p[2 * l] && c.p[2 * l + 1];
            tg_tensor_set_requires_grad(c.p[2 * l], true);
            tg_tensor_set_requires_grad(c.p[2 * l + 1], true);
        }
        ok = ok && bench_time(bench_mlp_step, &c, 50, 1, secs);
        emit_or_skip(mlp, "ms/step", ok, secs, 1e3);
        for (int i = 0; i < 2 * BENCH_MLP_LAYERS; i++) {
            tg_tensor_set_grad(c.p[i], NULL);
            tg_release(c.p[i]);
        }
        tg_release(c.x);
        tg_release(c.y);
    }
}
