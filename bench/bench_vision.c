/* Vision workloads of BENCH.md, written as ../shared/bench-anchors/torch_cnn.py writes them in
 * PyTorch: conv2d forward (no grad) and forward + backward of .sum() for input and weight
 * (8x64x56x56 input, 64 3x3 filters, padding 1, float32). */
#include "bench.h"
#include "tensorgen.h"

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

void bench_vision(void) { bench_conv(); }
