/* train_mlp: a classifier trained with autograd, end to end.
 *
 *   make -j2 && build/examples/train_mlp
 *
 * The data are three interleaved spirals in the plane (300 points each, a little noise), a
 * problem no linear model solves. The model is a multilayer perceptron 2 -> 64 -> 64 -> 3 with
 * ReLU, trained with cross-entropy and Adam on shuffled minibatches of 90. Every epoch prints
 * the mean training loss and the accuracy on the whole set; the program fails (exit 1) unless
 * the final accuracy is at least 95% and every tensor was freed.
 *
 * What it shows: parameters are leaves with requires_grad; the forward pass records a graph
 * as it runs; tg_backward() fills each parameter's .grad; the optimizer step runs with grad
 * mode off (TG_NO_GRAD, like torch.no_grad()); a scope frees each step's intermediates.
 *
 *   build/examples/train_mlp --profile trace.json
 *
 * profiles the first PROFILE_STEPS steps of the second epoch (after the first has warmed the
 * allocator's caches), prints the ten operators with the most self CPU time and writes a
 * Chrome trace (docs/profiling.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorgen.h"

#define CLASSES 3
#define PER_CLASS 300
#define N (CLASSES * PER_CLASS)
#define HIDDEN 64
#define BATCH 90
#define EPOCHS 30
#define LR 0.01
#define PROFILE_STEPS 5

/* ---- the data: spiral k has points (r sin t, r cos t), r in [0, 1], t = 4k + 4r + noise ---- */
static float xs[N][2];
static int64_t ys[N];

static void make_spirals(void)
{
    tg_tensor *noise = tg_randn(TG_INTS(N), .dtype = TG_FLOAT64); /* seeded: tg_manual_seed */
    double eps[N];
    tg_tensor_to_doubles(noise, eps, N);
    tg_release(noise);
    for (int k = 0; k < CLASSES; k++)
        for (int i = 0; i < PER_CLASS; i++) {
            int j = k * PER_CLASS + i;
            double r = (double)i / (PER_CLASS - 1), t = 4.0 * k + 4.0 * r + 0.2 * eps[j];
            xs[j][0] = (float)(r * sin(t));
            xs[j][1] = (float)(r * cos(t));
            ys[j] = k;
        }
}

/* Fisher-Yates with a small fixed generator: a new order of the points every epoch. */
static void shuffle(int *order, int n, uint64_t *state)
{
    for (int i = n - 1; i > 0; i--) {
        *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((*state >> 33) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Minibatch b of the current order, as (BATCH, 2) float32 inputs and (BATCH) int64 labels. */
static void batch(const int *order, int b, tg_tensor **x, tg_tensor **y)
{
    float bx[BATCH][2];
    int64_t by[BATCH];
    for (int i = 0; i < BATCH; i++) {
        int j = order[b * BATCH + i];
        bx[i][0] = xs[j][0];
        bx[i][1] = xs[j][1];
        by[i] = ys[j];
    }
    *x = tg_tensor_from_data(bx, (int64_t[]){ BATCH, 2 }, 2, TG_FLOAT32);
    *y = tg_tensor_from_data(by, (int64_t[]){ BATCH }, 1, TG_INT64);
}

/* ---- the model: three linear layers (weight (out, in), bias (out)), like torch.nn.Linear ---- */
#define LAYERS 3
#define PARAMS (2 * LAYERS)
static const int64_t widths[LAYERS + 1] = { 2, HIDDEN, HIDDEN, CLASSES };

typedef struct model {
    tg_tensor *p[PARAMS];             /* w0, b0, w1, b1, w2, b2: leaves requiring grad */
    tg_tensor *m[PARAMS], *v[PARAMS]; /* Adam's running moments */
} model;

/* nn.Linear's initialisation: uniform in [-1/sqrt(in), 1/sqrt(in)]. */
static tg_tensor *init_uniform(tg_int_list shape, int64_t fan_in)
{
    double bound = 1.0 / sqrt((double)fan_in);
    tg_scope_begin();
    tg_tensor *p = tg_scope_keep(tg_add_scalar(tg_mul_scalar(tg_rand(shape), 2 * bound), -bound));
    tg_scope_end();
    return p;
}

static void model_init(model *mdl)
{
    for (int l = 0; l < LAYERS; l++) {
        int64_t in = widths[l], out = widths[l + 1];
        mdl->p[2 * l] = tg_tensor_set_requires_grad(init_uniform(TG_INTS(out, in), in), true);
        mdl->p[2 * l + 1] = tg_tensor_set_requires_grad(init_uniform(TG_INTS(out), in), true);
        mdl->m[2 * l] = tg_zeros(TG_INTS(out, in));
        mdl->v[2 * l] = tg_zeros(TG_INTS(out, in));
        mdl->m[2 * l + 1] = tg_zeros(TG_INTS(out));
        mdl->v[2 * l + 1] = tg_zeros(TG_INTS(out));
    }
}

static void model_free(model *mdl)
{
    for (int i = 0; i < PARAMS; i++) {
        tg_release(mdl->p[i]);
        tg_release(mdl->m[i]);
        tg_release(mdl->v[i]);
    }
}

/* logits (B, CLASSES) = L2(relu(L1(relu(L0(x))))). Intermediates belong to the caller's scope. */
static tg_tensor *forward(const model *mdl, tg_tensor *x)
{
    tg_tensor *h = x;
    for (int l = 0; l < LAYERS; l++) {
        h = tg_linear(h, mdl->p[2 * l], .bias = mdl->p[2 * l + 1]);
        if (l < LAYERS - 1) h = tg_relu(h);
    }
    return h;
}

/* One Adam step on every parameter (torch.optim.Adam's arithmetic), then .grad = None. */
static void adam_step(model *mdl, int64_t step)
{
    TG_NO_GRAD {
        for (int i = 0; i < PARAMS; i++) {
            tg_tensor *g = tg_tensor_grad(mdl->p[i]);
            tg_release(tg_adam_step_(mdl->p[i], g, mdl->m[i], mdl->v[i], NULL, step, .lr = LR));
            tg_release(g);
            tg_tensor_set_grad(mdl->p[i], NULL);
        }
    }
}

/* Fraction of all N points classified correctly. */
static double accuracy(const model *mdl)
{
    double acc = -1;
    TG_NO_GRAD {
        tg_scope_begin(); /* also owns x and y: tg_tensor_from_data is recorded */
        tg_tensor *x = tg_tensor_from_data(xs, (int64_t[]){ N, 2 }, 2, TG_FLOAT32);
        tg_tensor *y = tg_tensor_from_data(ys, (int64_t[]){ N }, 1, TG_INT64);
        tg_tensor *pred = tg_argmax(forward(mdl, x), .dim = TG_SOME(1));
        acc = tg_item(tg_sum(tg_eq(pred, y))) / N;
        tg_scope_end();
    }
    return acc;
}

/* --profile PATH: the profiled steps are steps [first, first + PROFILE_STEPS). */
static const char *profile_path;
static const int64_t profile_first = N / BATCH + 1;

static void profile_around_step(int64_t step)
{
    if (!profile_path) return;
    if (step == profile_first &&
        tg_profiler_start(.record_shapes = true, .profile_memory = true) != 0)
        fprintf(stderr, "train_mlp: %s\n", tg_last_error());
    if (step == profile_first + PROFILE_STEPS && tg_profiler_stop() == 0) {
        printf("\nprofile of steps %lld..%lld:\n", (long long)profile_first,
               (long long)(profile_first + PROFILE_STEPS - 1));
        if (tg_profiler_print_table(.sort_by = TG_PROF_SORT_SELF_CPU, .row_limit = 10) != 0 ||
            tg_profiler_export_chrome_trace(profile_path) != 0)
            fprintf(stderr, "train_mlp: %s\n", tg_last_error());
        else printf("Chrome trace written to %s (open it in ui.perfetto.dev)\n\n", profile_path);
        tg_profiler_reset();
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) profile_path = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--profile trace.json]\n", argv[0]);
            return 2;
        }
    }
    tg_manual_seed(0);
    make_spirals();
    model mdl;
    model_init(&mdl);

    int order[N];
    for (int i = 0; i < N; i++) order[i] = i;
    uint64_t shuffle_state = 42;
    int64_t step = 0;
    double acc = 0;

    for (int epoch = 1; epoch <= EPOCHS; epoch++) {
        shuffle(order, N, &shuffle_state);
        double loss_sum = 0;
        for (int b = 0; b < N / BATCH; b++) {
            tg_tensor *x, *y;
            profile_around_step(step + 1);
            batch(order, b, &x, &y);
            tg_scope_begin(); /* this step's intermediates */
            tg_tensor *loss = NULL;
            int rc = -1;
            /* named ranges: no-ops unless the profiler runs */
            TG_RECORD_FUNCTION("forward") loss = tg_cross_entropy(forward(&mdl, x), y);
            TG_RECORD_FUNCTION("backward") rc = loss ? tg_backward(loss) : -1; /* fills .grad */
            if (rc != 0) {
                fprintf(stderr, "train_mlp: %s\n", tg_last_error());
                return 1;
            }
            loss_sum += tg_item(loss);
            tg_scope_end(); /* frees the graph and activations */
            tg_release(x);
            tg_release(y);
            TG_RECORD_FUNCTION("optimizer") adam_step(&mdl, ++step);
        }
        acc = accuracy(&mdl);
        printf("epoch %2d  loss %.4f  accuracy %5.1f%%\n", epoch, loss_sum / (N / BATCH),
               100 * acc);
    }

    model_free(&mdl);
    long long live = (long long)tg_live_tensors();
    printf("final accuracy %.1f%% (required: 95%%), live tensors: %lld\n", 100 * acc, live);
    if (tg_last_error()) fprintf(stderr, "train_mlp: %s\n", tg_last_error());
    return acc >= 0.95 && live == 0 ? 0 : 1;
}
