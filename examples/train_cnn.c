/* train_cnn: a small ResNet trained on real handwritten digits, end to end.
 *
 *   make -j2 && build/examples/train_cnn [--device cuda] [--epochs N] [--data PATH] [--workers N]
 *
 * The data are the 1,797 8x8 digits of the UCI optical recognition set that Debian's
 * python3-sklearn ships (sklearn/datasets/data/digits.csv.gz), read by nn/'s digits dataset: a
 * fixed shuffle puts 1,500 images in the training set and holds out the other 297.
 *
 * The model is torchvision's ResNet in miniature (tg_nn_resnet): a 3x3 stem convolution to 32
 * channels, three residual blocks (the second and third halve the resolution and double the
 * channels, with a 1x1 strided convolution and batch norm on the shortcut), global average
 * pooling and a linear classifier: 8x8x1 -> 8x8x32 -> 4x4x64 -> 2x2x128 -> 10. It trains with
 * cross-entropy and SGD (momentum 0.9, Nesterov, weight decay 5e-4) under a cosine schedule
 * from 0.1, on shuffled batches of 50 that a loader with two worker threads prepares ahead. Every
 * epoch prints the mean training loss, the training and test accuracy (batch norm in eval
 * mode), the speed in images/s and the share of the time spent waiting for a batch. The program
 * fails (exit 1) unless the final test accuracy is at least 97% and every tensor was freed.
 *
 * What it shows: a model from nn/'s modules; an optimizer and a schedule over its parameters;
 * a data loader; a scope per step that frees the intermediates; the same code on the GPU with
 * --device cuda (the loader copies batches there). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensorgen.h"

#define BATCH 50
#define DEFAULT_EPOCHS 12

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Correct predictions over one pass of `loader`, the model in eval mode. */
static int64_t count_correct(tg_module *m, tg_loader *loader)
{
    int64_t correct = 0;
    tg_batch b;
    tg_module_eval(m);
    TG_NO_GRAD {
        while (tg_loader_next(loader, &b) == 1) {
            tg_scope_begin();
            tg_tensor *pred = tg_argmax(tg_module_forward(m, b.fields[0]), .dim = 1);
            correct += (int64_t)tg_item(tg_sum(tg_eq(pred, b.fields[1])));
            tg_scope_end();
            tg_batch_release(&b);
        }
    }
    tg_module_train(m, true);
    return correct;
}

int main(int argc, char **argv)
{
    const char *data = NULL; /* the digits' default path */
    tg_device dev = TG_DEVICE_CPU;
    int epochs = DEFAULT_EPOCHS, workers = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            if (tg_device_parse(argv[++i], &dev) != 0) {
                fprintf(stderr, "train_cnn: %s\n", tg_last_error());
                return 2;
            }
        } else if (!strcmp(argv[i], "--data") && i + 1 < argc) {
            data = argv[++i];
        } else if (!strcmp(argv[i], "--epochs") && i + 1 < argc) {
            epochs = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--workers") && i + 1 < argc) {
            workers = atoi(argv[++i]);
        } else {
            fprintf(stderr,
                    "usage: %s [--device cpu|cuda] [--epochs N] [--data digits.csv.gz] "
                    "[--workers N]\n",
                    argv[0]);
            return 2;
        }
    }
    tg_manual_seed(0);
    tg_dataset *train = tg_digits_dataset_new(data, TG_DIGITS_TRAIN);
    tg_dataset *test = train ? tg_digits_dataset_new(data, TG_DIGITS_TEST) : NULL;
    tg_module *m = tg_nn_resnet(TG_INTS(1, 1, 1), .num_classes = 10, .in_channels = 1, .width = 32,
                                .small_input = true);
    if (!train || !test || !m || tg_module_to(m, .device = dev) != 0) {
        fprintf(stderr, "train_cnn: %s\n", tg_last_error());
        tg_module_free(m);
        tg_dataset_free(train);
        tg_dataset_free(test);
        return 2;
    }
    tg_loader *loader = tg_loader_new(train, .batch_size = BATCH, .shuffle = true,
                                      .num_workers = workers, .device = dev);
    tg_loader *train_eval = tg_loader_new(train, .batch_size = 500, .device = dev);
    tg_loader *test_eval = tg_loader_new(test, .batch_size = 500, .device = dev);
    const int64_t steps_per_epoch = tg_loader_num_batches(loader);
    tg_optimizer *opt = tg_sgd_new(TG_MODULE_PARAMS(m), .lr = 0.1, .momentum = 0.9,
                                   .nesterov = true, .weight_decay = 5e-4);
    tg_lr_scheduler *sched = opt ? tg_cosine_annealing_lr_new(opt, epochs * steps_per_epoch) : NULL;
    int rc = loader && train_eval && test_eval && sched ? 0 : -1;
    printf("train_cnn: ResNet (3 blocks, 32-64-128 channels, %lld parameters) on %lld digits, "
           "%lld held out, %s, %d loader workers\n",
           (long long)tg_module_num_parameters(m, false), (long long)tg_dataset_length(train),
           (long long)tg_dataset_length(test), dev.type == TG_CUDA ? "cuda" : "cpu", workers);

    double test_acc = 0;
    for (int e = 0; e < epochs && rc == 0; e++) {
        double loss_sum = 0, t0 = now_seconds(), wait0 = tg_loader_wait_seconds(loader);
        tg_batch b;
        int got;
        while (rc == 0 && (got = tg_loader_next(loader, &b)) == 1) {
            tg_scope_begin();
            tg_tensor *loss = tg_cross_entropy(tg_module_forward(m, b.fields[0]), b.fields[1]);
            if (!loss || tg_backward(loss) != 0) rc = -1;
            else loss_sum += tg_item(loss);
            tg_scope_end();
            tg_batch_release(&b);
            if (rc == 0 && (tg_optimizer_step(opt) != 0 || tg_lr_scheduler_step(sched) != 0))
                rc = -1;
            tg_optimizer_zero_grad(opt);
        }
        if (rc != 0 || got < 0) break;
        if (dev.type == TG_CUDA) tg_cuda_synchronize();
        double secs = now_seconds() - t0, waited = tg_loader_wait_seconds(loader) - wait0;
        double train_acc = (double)count_correct(m, train_eval) / (double)tg_dataset_length(train);
        test_acc = (double)count_correct(m, test_eval) / (double)tg_dataset_length(test);
        printf("epoch %2d  loss %.4f  train acc %.2f%%  test acc %.2f%%  %.0f images/s  "
               "waiting for data %.1f%%\n",
               e + 1, loss_sum / (double)steps_per_epoch, 100 * train_acc, 100 * test_acc,
               (double)(steps_per_epoch * BATCH) / secs, 100 * waited / secs);
        fflush(stdout);
    }
    if (rc != 0 || tg_last_error()) {
        fprintf(stderr, "train_cnn: %s\n", tg_last_error());
        rc = -1;
    }
    tg_lr_scheduler_free(sched);
    tg_optimizer_free(opt);
    tg_loader_free(loader);
    tg_loader_free(train_eval);
    tg_loader_free(test_eval);
    tg_dataset_free(train);
    tg_dataset_free(test);
    tg_module_free(m);
    int64_t live = tg_live_tensors();
    if (live != 0) {
        fprintf(stderr, "train_cnn: %lld tensors still alive\n", (long long)live);
        rc = -1;
    }
    if (rc == 0 && test_acc < 0.97) {
        fprintf(stderr, "train_cnn: test accuracy %.2f%% is below 97%%\n", 100 * test_acc);
        rc = -1;
    }
    return rc == 0 ? 0 : 1;
}
