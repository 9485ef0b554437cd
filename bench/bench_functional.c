/* Functional-transform workloads (tg_functional.h) on an MLP 784-512-10 (tanh) with a float32
 * batch of 128, as bench/torch_functional.py writes them in PyTorch:
 *   fwd_mlp_784_512_10_b128  the plain forward, grad mode off (the reference for the ratios);
 *   jvp_mlp_784_512_10_b128  tg_jvp of the logits w.r.t. the input batch x, one tangent (128,
 *                            784): forward mode, outputs and products released;
 *   hvp_mlp_784_512_10_b128  tg_hvp of the cross-entropy loss w.r.t. the four PARAMETERS
 *                            (W1, b1, W2, b2), one vector of their shapes: forward-over-reverse.
 * The jvp and hvp lines carry "ratio_to_fwd", their median over the forward's (the goal for
 * the jvp: at most 1.5). */
#include "bench.h"
#include "tensorgen.h"

#include <math.h>
#include <stdio.h>

typedef struct fn_ctx {
    tg_tensor *x, *y; /* (128, 784) inputs, (128) int64 classes */
    tg_tensor *p[4];  /* W1 (512, 784), b1 (512), W2 (10, 512), b2 (10) */
    tg_tensor *tx;    /* the jvp's tangent, x's shape */
    tg_tensor *vp[4]; /* the hvp's vector, the parameters' shapes */
} fn_ctx;

static tg_tensor *mlp(tg_tensor *x, tg_tensor *const *p)
{
    return tg_linear(tg_tanh(tg_linear(x, p[0], .bias = p[1])), p[2], .bias = p[3]);
}

/* f(x) = mlp(x) with the parameters of ctx. */
static int f_logits(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)max;
    fn_ctx *c = ctx;
    out[0] = mlp(in.data[0], c->p);
    return out[0] ? 1 : -1;
}

/* f(W1, b1, W2, b2) = cross_entropy(mlp(x), y) with x and y of ctx. */
static int f_loss(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)max;
    fn_ctx *c = ctx;
    out[0] = tg_cross_entropy(mlp(c->x, in.data), c->y);
    return out[0] ? 1 : -1;
}

static bool body_fwd(void *p)
{
    fn_ctx *c = p;
    bool ok;
    TG_NO_GRAD {
        tg_scope_begin();
        ok = mlp(c->x, c->p) != NULL;
        tg_scope_end();
    }
    return ok;
}

static bool body_jvp(void *p)
{
    fn_ctx *c = p;
    tg_scope_begin();
    tg_tensor_list outs, jvp;
    bool ok = tg_jvp(f_logits, c, TG_TENSORS(c->x), TG_TENSORS(c->tx), &outs, &jvp) == 0;
    tg_scope_end();
    return ok;
}

static bool body_hvp(void *p)
{
    fn_ctx *c = p;
    tg_scope_begin();
    tg_tensor *value;
    tg_tensor_list hvp;
    bool ok = tg_hvp(f_loss, c, ((tg_tensor_list){ c->p, 4 }), ((tg_tensor_list){ c->vp, 4 }),
                     &value, &hvp) == 0;
    tg_scope_end();
    return ok;
}

static double median(const double *v, int n)
{
    double s[BENCH_MAX_REPEATS];
    for (int i = 0; i < n; i++) s[i] = v[i];
    for (int i = 1; i < n; i++) /* insertion sort: n is small */
        for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
            double t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void skip(const char *name)
{
    fprintf(stderr, "tg_bench: %s skipped: %s\n", name, tg_last_error() ? tg_last_error() : "?");
    tg_clear_error();
}

/* Times one workload; emits its line with the ratio to fwd_med when fwd_med > 0. Returns its
 * median in seconds, or 0 when skipped. */
static double time_one(const char *name, bench_body body, fn_ctx *c, int64_t inner, double fwd_med)
{
    double secs[BENCH_MAX_REPEATS];
    if (!bench_time(body, c, inner, 1, secs)) {
        skip(name);
        return 0;
    }
    double med = median(secs, bench_cfg.repeats);
    char extra[64];
    snprintf(extra, sizeof extra, "\"ratio_to_fwd\": %.3f", fwd_med > 0 ? med / fwd_med : 0);
    bench_emit_extra(name, "ms", "tensorgen", secs, 0, 1e3, fwd_med > 0 ? extra : NULL);
    return med;
}

void bench_functional(void)
{
    const char *fwd = "fwd_mlp_784_512_10_b128", *jvp = "jvp_mlp_784_512_10_b128",
               *hvp = "hvp_mlp_784_512_10_b128";
    if (!bench_wanted(fwd) && !bench_wanted(jvp) && !bench_wanted(hvp)) return;
    static const int64_t shapes[4][2] = { { 512, 784 }, { 512, 1 }, { 10, 512 }, { 10, 1 } };
    fn_ctx c = { .x = tg_rand(TG_INTS(128, 784)),
                 .y = tg_randint(10, TG_INTS(128)),
                 .tx = tg_randn(TG_INTS(128, 784)) };
    bool ok = c.x && c.y && c.tx;
    for (int i = 0; i < 4; i++) { /* nn.Linear's init: U(-1/sqrt(in), 1/sqrt(in)) */
        tg_int_list shape = { .len = i % 2 ? 1 : 2, .data = shapes[i] };
        double bound = 1.0 / sqrt((double)shapes[i & 2][1]);
        tg_scope_begin();
        c.p[i] = tg_scope_keep(tg_add_scalar(tg_mul_scalar(tg_rand(shape), 2 * bound), -bound));
        c.vp[i] = tg_scope_keep(tg_randn(shape));
        tg_scope_end();
        ok = ok && c.p[i] && c.vp[i];
    }
    if (!ok) {
        skip(fwd);
    } else {
        /* the forward is always timed when a ratio is wanted */
        double fwd_med = time_one(fwd, body_fwd, &c, 20, 0);
        if (bench_wanted(jvp)) time_one(jvp, body_jvp, &c, 20, fwd_med);
        if (bench_wanted(hvp)) time_one(hvp, body_hvp, &c, 10, fwd_med);
    }
    for (int i = 0; i < 4; i++) {
        tg_release(c.p[i]);
        tg_release(c.vp[i]);
    }
    tg_release(c.x);
    tg_release(c.y);
    tg_release(c.tx);
}
