/* train_cnn: a small ResNet trained on real handwritten digits, end to end.
 *
 *   make -j2 && build/examples/train_cnn [--device cuda] [--epochs N] [--data PATH]
 *
 * The data are the 1,797 8x8 digits of the UCI optical recognition set that Debian's
 * python3-sklearn ships (sklearn/datasets/data/digits.csv.gz: 64 pixel values 0..16 and the
 * label per line), read with zlib. A fixed shuffle puts 1,500 images in the training set and
 * holds out the other 297.
 *
 * The model is a ResNet in miniature: a 3x3 stem convolution to 32 channels, three residual
 * blocks (conv-batchnorm-relu-conv-batchnorm plus the shortcut, then relu; the second and third
 * halve the resolution and double the channels, with a 1x1 strided convolution and batchnorm
 * on the shortcut), global average pooling and a linear classifier: 8x8x1 -> 8x8x32 -> 4x4x64
 * -> 2x2x128 -> 10. It trains with cross-entropy and SGD (momentum 0.9, Nesterov, weight decay
 * 5e-4, cosine learning rate from 0.1) on shuffled minibatches of 50. Every epoch prints the
 * mean training loss, the training and test accuracy (batch norm in eval mode, with its running
 * statistics) and the training speed in images/s. The program fails (exit 1) unless the final
 * test accuracy is at least 97% and every tensor was freed.
 *
 * What it shows: modules as plain C structs of parameter tensors; batch norm's running
 * statistics updated in place during training and used in evaluation; a scope per step that
 * frees the intermediates; the same code on the GPU with --device cuda. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "tensorgen.h"

#define DEFAULT_DATA "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
#define IMAGES 1797
#define TRAIN 1500
#define PIXELS 64
#define CLASSES 10
#define BATCH 50
#define DEFAULT_EPOCHS 12
#define LR 0.1
#define MOMENTUM 0.9
#define WEIGHT_DECAY 5e-4
#define BN_MOMENTUM 0.1
#define BN_EPS 1e-5

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ data */

static float images[IMAGES][PIXELS];
static int64_t labels[IMAGES];

/* Reads the CSV; 0, or -1 with a message. */
static int load_digits(const char *path)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        fprintf(stderr,
                "train_cnn: cannot open %s: the digits come with Debian's python3-sklearn "
                "(apt-get install python3-sklearn), or pass --data PATH\n",
                path);
        return -1;
    }
    char line[1024];
    int n = 0;
    while (n < IMAGES && gzgets(f, line, sizeof line)) {
        char *p = line, *end;
        int k = 0;
        for (; k <= PIXELS; k++) {
            double v = strtod(p, &end);
            if (end == p) break;
            if (k < PIXELS) images[n][k] = (float)(v / 16.0);
            else labels[n] = (int64_t)v;
            p = *end == ',' ? end + 1 : end;
        }
        if (k != PIXELS + 1 || labels[n] < 0 || labels[n] >= CLASSES) {
            fprintf(stderr, "train_cnn: %s: line %d is not 64 pixels and a label\n", path, n + 1);
            gzclose(f);
            return -1;
        }
        n++;
    }
    gzclose(f);
    if (n != IMAGES) {
        fprintf(stderr, "train_cnn: %s: %d images, expected %d\n", path, n, IMAGES);
        return -1;
    }
    return 0;
}

static uint64_t rng_state = 12345;
static uint64_t rng_next(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng_state >> 33;
}

static void shuffle(int *order, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rng_next() % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* A batch (n, 1, 8, 8) float32 and its labels (n) on `dev`, from the images idx[0..n): new
 * references, made outside any scope (a scope would also free them). */
static void make_batch(const int *idx, int n, tg_device dev, tg_tensor **x, tg_tensor **y)
{
    static float xb[IMAGES * PIXELS];
    static int64_t yb[IMAGES];
    for (int i = 0; i < n; i++) {
        memcpy(xb + i * PIXELS, images[idx[i]], sizeof images[0]);
        yb[i] = labels[idx[i]];
    }
    tg_tensor *xc = tg_tensor_from_data(xb, (int64_t[]){ n, 1, 8, 8 }, 4, TG_FLOAT32);
    tg_tensor *yc = tg_tensor_from_data(yb, (int64_t[]){ n }, 1, TG_INT64);
    *x = tg_to_device(xc, dev);
    *y = tg_to_device(yc, dev);
    tg_release(xc);
    tg_release(yc);
}

/* ------------------------------------------------------------------ the model */

/* Parameters are leaves requiring grad; running statistics are plain tensors. */
typedef struct batchnorm {
    tg_tensor *weight, *bias, *running_mean, *running_var;
} batchnorm;

typedef struct block {
    tg_tensor *conv1, *conv2, *shortcut; /* shortcut NULL: identity */
    batchnorm bn1, bn2, bn_sc;
    int64_t stride;
} block;

#define BLOCKS 3
typedef struct resnet {
    tg_tensor *stem;
    batchnorm bn;
    block blocks[BLOCKS];
    tg_tensor *fc_weight, *fc_bias;
} resnet;

/* The parameters in a fixed order, for the optimizer (NULL entries skipped). */
#define MAX_PARAMS 64
typedef struct param_list {
    tg_tensor **p[MAX_PARAMS];
    int n;
} param_list;

static tg_tensor *leaf(tg_tensor *t, tg_device dev)
{
    tg_tensor *d = tg_to_device(t, dev);
    tg_release(t);
    tg_tensor_set_requires_grad(d, true);
    return d;
}

/* Kaiming-normal (fan_out, relu) as torchvision's ResNet initialises its convolutions. */
static tg_tensor *conv_weight(int64_t out, int64_t in, int64_t k, tg_device dev)
{
    tg_tensor *w = tg_randn(TG_INTS(out, in, k, k));
    tg_tensor *s = tg_mul_scalar(w, sqrt(2.0 / (double)(out * k * k)));
    tg_release(w);
    return leaf(s, dev);
}

static batchnorm bn_new(int64_t c, tg_device dev)
{
    batchnorm b = { leaf(tg_ones(TG_INTS(c)), dev), leaf(tg_zeros(TG_INTS(c)), dev),
                    tg_zeros(TG_INTS(c), .device = dev), tg_ones(TG_INTS(c), .device = dev) };
    return b;
}

static void bn_free(batchnorm *b)
{
    tg_release(b->weight);
    tg_release(b->bias);
    tg_release(b->running_mean);
    tg_release(b->running_var);
}

static void model_init(resnet *m, tg_device dev, param_list *pl)
{
    static const int64_t widths[BLOCKS + 1] = { 32, 32, 64, 128 };
    m->stem = conv_weight(widths[0], 1, 3, dev);
    m->bn = bn_new(widths[0], dev);
    for (int i = 0; i < BLOCKS; i++) {
        block *b = &m->blocks[i];
        int64_t in = widths[i], out = widths[i + 1];
        b->stride = in == out ? 1 : 2;
        b->conv1 = conv_weight(out, in, 3, dev);
        b->conv2 = conv_weight(out, out, 3, dev);
        b->bn1 = bn_new(out, dev);
        b->bn2 = bn_new(out, dev);
        b->shortcut = b->stride != 1 ? conv_weight(out, in, 1, dev) : NULL;
        b->bn_sc = b->shortcut ? bn_new(out, dev) : (batchnorm){ 0 };
    }
    /* nn.Linear's init: U(-1/sqrt(in), 1/sqrt(in)) */
    double bound = 1.0 / sqrt((double)widths[BLOCKS]);
    tg_scope_begin();
    tg_tensor *w = tg_scope_keep(
        tg_add_scalar(tg_mul_scalar(tg_rand(TG_INTS(CLASSES, widths[BLOCKS])), 2 * bound), -bound));
    tg_tensor *bb =
        tg_scope_keep(tg_add_scalar(tg_mul_scalar(tg_rand(TG_INTS(CLASSES)), 2 * bound), -bound));
    tg_scope_end();
    m->fc_weight = leaf(w, dev);
    m->fc_bias = leaf(bb, dev);

    pl->n = 0;
#define ADD(t) pl->p[pl->n++] = &(t)
    ADD(m->stem);
    ADD(m->bn.weight);
    ADD(m->bn.bias);
    for (int i = 0; i < BLOCKS; i++) {
        block *b = &m->blocks[i];
        ADD(b->conv1);
        ADD(b->bn1.weight);
        ADD(b->bn1.bias);
        ADD(b->conv2);
        ADD(b->bn2.weight);
        ADD(b->bn2.bias);
        if (b->shortcut) {
            ADD(b->shortcut);
            ADD(b->bn_sc.weight);
            ADD(b->bn_sc.bias);
        }
    }
    ADD(m->fc_weight);
    ADD(m->fc_bias);
#undef ADD
}

static void model_free(resnet *m)
{
    tg_release(m->stem);
    bn_free(&m->bn);
    for (int i = 0; i < BLOCKS; i++) {
        block *b = &m->blocks[i];
        tg_release(b->conv1);
        tg_release(b->conv2);
        tg_release(b->shortcut);
        bn_free(&b->bn1);
        bn_free(&b->bn2);
        if (b->shortcut) bn_free(&b->bn_sc);
    }
    tg_release(m->fc_weight);
    tg_release(m->fc_bias);
}

/* Inside the caller's scope: every intermediate is freed at its end. */
static tg_tensor *bn(tg_tensor *x, batchnorm *b, bool training)
{
    return tg_batch_norm(x, b->weight, b->bias, b->running_mean, b->running_var, training,
                         BN_MOMENTUM, BN_EPS, false);
}

static tg_tensor *conv(tg_tensor *x, tg_tensor *w, int64_t stride)
{
    int64_t pad = tg_tensor_size(w, 2) / 2;
    return tg_conv2d(x, w, .stride = TG_INTS(stride, stride), .padding = TG_INTS(pad, pad));
}

static tg_tensor *forward(resnet *m, tg_tensor *x, bool training)
{
    tg_tensor *h = tg_relu(bn(conv(x, m->stem, 1), &m->bn, training));
    for (int i = 0; i < BLOCKS; i++) {
        block *b = &m->blocks[i];
        tg_tensor *o = tg_relu(bn(conv(h, b->conv1, b->stride), &b->bn1, training));
        o = bn(conv(o, b->conv2, 1), &b->bn2, training);
        tg_tensor *sc = b->shortcut ? bn(conv(h, b->shortcut, b->stride), &b->bn_sc, training) : h;
        h = tg_relu(tg_add(o, sc));
    }
    tg_tensor *pooled = tg_flatten(tg_adaptive_avg_pool2d(h, TG_INTS(1, 1)), .start_dim = 1);
    return tg_linear(pooled, m->fc_weight, .bias = m->fc_bias);
}

/* ------------------------------------------------------------------ training */

/* Correct predictions of the model (eval mode) over images idx[0..n). */
static int64_t count_correct(resnet *m, const int *idx, int n, tg_device dev)
{
    int64_t correct = 0;
    TG_NO_GRAD {
        for (int s = 0; s < n; s += 500) {
            int k = n - s < 500 ? n - s : 500;
            tg_tensor *x, *y;
            make_batch(idx + s, k, dev, &x, &y);
            tg_scope_begin();
            tg_tensor *pred = tg_argmax(forward(m, x, false), .dim = TG_OPT_INT(1));
            tg_tensor *hits = tg_sum(tg_eq(pred, y));
            double v = 0;
            if (hits) tg_tensor_to_doubles(hits, &v, 1);
            correct += (int64_t)v;
            tg_scope_end();
            tg_release(x);
            tg_release(y);
        }
    }
    return correct;
}

static int sgd_step(param_list *pl, tg_tensor **bufs, double lr, bool first)
{
    int rc = 0;
    TG_NO_GRAD {
        for (int i = 0; i < pl->n && rc == 0; i++) {
            tg_tensor *p = *pl->p[i], *g = tg_tensor_grad(p);
            if (!bufs[i]) bufs[i] = tg_zeros_like(p);
            tg_tensor *r =
                tg_sgd_step_(p, g, bufs[i], lr, .momentum = MOMENTUM, .weight_decay = WEIGHT_DECAY,
                             .nesterov = true, .first_step = first);
            if (!r) rc = -1;
            tg_release(r);
            tg_release(g);
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    const char *data = DEFAULT_DATA;
    tg_device dev = TG_DEVICE_CPU;
    int epochs = DEFAULT_EPOCHS;
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
        } else {
            fprintf(stderr, "usage: %s [--device cpu|cuda] [--epochs N] [--data digits.csv.gz]\n",
                    argv[0]);
            return 2;
        }
    }
    if (dev.type == TG_CUDA && tg_cuda_device_count() < 1) {
        fprintf(stderr, "train_cnn: --device cuda, but no CUDA device is available (%s)\n",
                tg_last_error() ? tg_last_error() : "none found");
        return 2;
    }
    if (load_digits(data) != 0) return 2;
    tg_manual_seed(0);

    int order[IMAGES];
    for (int i = 0; i < IMAGES; i++) order[i] = i;
    shuffle(order, IMAGES);
    int *train = order, *test = order + TRAIN;
    const int ntest = IMAGES - TRAIN;

    resnet m;
    param_list pl;
    model_init(&m, dev, &pl);
    tg_tensor *bufs[MAX_PARAMS] = { 0 };
    printf("train_cnn: ResNet (3 blocks, 32-64-128 channels) on %d digits, %d held out, %s\n",
           TRAIN, ntest, dev.type == TG_CUDA ? "cuda" : "cpu");

    const int steps_per_epoch = TRAIN / BATCH;
    int step = 0, rc = 0;
    double test_acc = 0;
    for (int e = 0; e < epochs && rc == 0; e++) {
        shuffle(train, TRAIN);
        double loss_sum = 0, t0 = now_seconds();
        for (int s = 0; s < steps_per_epoch && rc == 0; s++, step++) {
            double lr = 0.5 * LR * (1 + cos(M_PI * step / (double)(epochs * steps_per_epoch)));
            for (int i = 0; i < pl.n; i++) tg_tensor_set_grad(*pl.p[i], NULL);
            tg_tensor *x, *y;
            make_batch(train + s * BATCH, BATCH, dev, &x, &y);
            tg_scope_begin();
            tg_tensor *loss = tg_cross_entropy(forward(&m, x, true), y);
            double lv = NAN;
            if (!loss || tg_backward(loss) != 0 || tg_tensor_to_doubles(loss, &lv, 1) != 0) rc = -1;
            tg_scope_end();
            tg_release(x);
            tg_release(y);
            if (rc == 0) rc = sgd_step(&pl, bufs, lr, step == 0);
            loss_sum += lv;
        }
        if (rc != 0) break;
        if (dev.type == TG_CUDA) tg_cuda_synchronize();
        double secs = now_seconds() - t0;
        double train_acc = (double)count_correct(&m, train, TRAIN, dev) / TRAIN;
        test_acc = (double)count_correct(&m, test, ntest, dev) / ntest;
        printf("epoch %2d  loss %.4f  train acc %.2f%%  test acc %.2f%%  %.0f images/s\n", e + 1,
               loss_sum / steps_per_epoch, 100 * train_acc, 100 * test_acc,
               steps_per_epoch * BATCH / secs);
        fflush(stdout);
    }
    if (rc != 0) fprintf(stderr, "train_cnn: %s\n", tg_last_error());
    for (int i = 0; i < pl.n; i++) {
        tg_tensor_set_grad(*pl.p[i], NULL);
        tg_release(bufs[i]);
    }
    model_free(&m);
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
