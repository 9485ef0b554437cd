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
 * What it shows: a model of nn/'s modules (nn.Sequential of Linear and ReLU); a dataset of
 * tensors and a loader that shuffles it; the forward pass records a graph as it runs;
 * tg_backward() fills each parameter's .grad; torch.optim.Adam's step; a scope frees each
 * step's intermediates.
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

/* ---- the model: nn.Sequential(Linear(2, 64), ReLU(), Linear(64, 64), ReLU(), Linear(64, 3)) ---- */
static tg_module *make_model(void)
{
    return tg_nn_sequential(tg_nn_linear(2, HIDDEN), tg_nn_relu(), tg_nn_linear(HIDDEN, HIDDEN),
                            tg_nn_relu(), tg_nn_linear(HIDDEN, CLASSES));
}

/* Fraction of all N points classified correctly. */
static double accuracy(tg_module *m)
{
    double acc = -1;
    TG_NO_GRAD {
        tg_scope_begin(); /* also owns x and y: tg_tensor_from_data is recorded */
        tg_tensor *x = tg_tensor_from_data(xs, (int64_t[]){ N, 2 }, 2, TG_FLOAT32);
        tg_tensor *y = tg_tensor_from_data(ys, (int64_t[]){ N }, 1, TG_INT64);
        tg_tensor *pred = tg_argmax(tg_module_forward(m, x), .dim = 1);
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
    /* the points as a dataset, served in shuffled batches of 90 (a new order every epoch) */
    tg_tensor *x_all = tg_tensor_from_data(xs, (int64_t[]){ N, 2 }, 2, TG_FLOAT32);
    tg_tensor *y_all = tg_tensor_from_data(ys, (int64_t[]){ N }, 1, TG_INT64);
    tg_dataset *data = tg_tensor_dataset_new((tg_tensor *const[]){ x_all, y_all }, 2);
    tg_release(x_all);
    tg_release(y_all);
    tg_loader *loader = tg_loader_new(data, .batch_size = BATCH, .shuffle = true, .seed = 42);
    tg_module *model = make_model();
    tg_optimizer *adam = tg_adam_new(TG_MODULE_PARAMS(model), .lr = LR);
    if (!loader || !model || !adam) {
        fprintf(stderr, "train_mlp: %s\n", tg_last_error());
        return 1;
    }

    int64_t step = 0;
    double acc = 0;
    for (int epoch = 1; epoch <= EPOCHS; epoch++) {
        double loss_sum = 0;
        tg_batch b;
        while (tg_loader_next(loader, &b) == 1) {
            profile_around_step(++step);
            tg_scope_begin(); /* this step's intermediates */
            tg_tensor *loss = NULL;
            int rc = -1;
            /* named ranges: no-ops unless the profiler runs */
            TG_RECORD_FUNCTION("forward")
            loss = tg_cross_entropy(tg_module_forward(model, b.fields[0]), b.fields[1]);
            TG_RECORD_FUNCTION("backward") rc = loss ? tg_backward(loss) : -1; /* fills .grad */
            if (rc != 0) {
                fprintf(stderr, "train_mlp: %s\n", tg_last_error());
                return 1;
            }
            loss_sum += tg_item(loss);
            tg_scope_end(); /* frees the graph and activations */
            tg_batch_release(&b);
            TG_RECORD_FUNCTION("optimizer")
            {
                rc = tg_optimizer_step(adam); /* torch.optim.Adam's arithmetic */
                tg_optimizer_zero_grad(adam);
            }
            if (rc != 0) {
                fprintf(stderr, "train_mlp: %s\n", tg_last_error());
                return 1;
            }
        }
        acc = accuracy(model);
        printf("epoch %2d  loss %.4f  accuracy %5.1f%%\n", epoch, loss_sum / (N / BATCH),
               100 * acc);
    }

    tg_optimizer_free(adam);
    tg_module_free(model);
    tg_loader_free(loader);
    tg_dataset_free(data);
    long long live = (long long)tg_live_tensors();
    printf("final accuracy %.1f%% (required: 95%%), live tensors: %lld\n", 100 * acc, live);
    if (tg_last_error()) fprintf(stderr, "train_mlp: %s\n", tg_last_error());
    return acc >= 0.95 && live == 0 ? 0 : 1;
}
