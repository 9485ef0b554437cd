/* The handwritten digits (tg_nn_data.h): 1,797 8x8 images from the gzip'ed CSV that Debian's
 * python3-sklearn ships (64 pixel values 0..16 and the label per line), read with zlib, split
 * into train and test exactly as examples/train_cnn.c does, with an optional augmentation (a
 * random crop of the zero-padded image, a horizontal flip) drawn from each sample's seed. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../nn_private.h"

#define OP "DigitsDataset"
#define SIDE 8
#define PIXELS (SIDE * SIDE)
#define CLASSES 10

typedef struct digits_ctx {
    int64_t n;
    float (*images)[PIXELS]; /* [n][64], in [0, 1] */
    int64_t *labels;         /* [n] */
    tg_digits_opts aug;
} digits_ctx;

static void digits_ctx_free(void *p)
{
    digits_ctx *c = p;
    free(c->images);
    free(c->labels);
    free(c);
}

/* Reads every line of the CSV into images/labels[TG_DIGITS_IMAGES]. 0 or -1 with an error. */
static int read_csv(const char *path, float (*images)[PIXELS], int64_t *labels)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return tg_set_error(OP,
                            "cannot open %s: the digits come with Debian's python3-sklearn "
                            "(apt-get install python3-sklearn)",
                            path),
               -1;
    char line[1024];
    int n = 0;
    while (n < TG_DIGITS_IMAGES && gzgets(f, line, sizeof line)) {
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
            gzclose(f);
            return tg_set_error(OP, "%s: line %d is not 64 pixels and a label", path, n + 1), -1;
        }
        n++;
    }
    gzclose(f);
    if (n != TG_DIGITS_IMAGES)
        return tg_set_error(OP, "%s: %d images, expected %d", path, n, TG_DIGITS_IMAGES), -1;
    return 0;
}

/* train_cnn's split: 0..1796 shuffled by Fisher-Yates with its LCG seeded 12345; the first
 * 1,500 are the training set. */
static void split_order(int *order)
{
    uint64_t state = 12345;
    for (int i = 0; i < TG_DIGITS_IMAGES; i++) order[i] = i;
    for (int i = TG_DIGITS_IMAGES - 1; i > 0; i--) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((state >> 33) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* out (8x8) = the image shifted by (dy, dx) inside its zero padding, mirrored when flip: pixel
 * (y, x) of the crop is pixel (y + dy, x' + dx) of the original, x' = 7 - x when flipped. */
static void augment(const float *in, float *out, int dy, int dx, bool flip)
{
    for (int y = 0; y < SIDE; y++)
        for (int x = 0; x < SIDE; x++) {
            int sy = y + dy, sx = (flip ? SIDE - 1 - x : x) + dx;
            bool inside = sy >= 0 && sy < SIDE && sx >= 0 && sx < SIDE;
            out[y * SIDE + x] = inside ? in[sy * SIDE + sx] : 0.0f;
        }
}

static int digits_get(void *p, int64_t index, void *const *slots, uint64_t seed)
{
    const digits_ctx *c = p;
    float *img = slots[0];
    *(int64_t *)slots[1] = c->labels[index];
    int pad = c->aug.crop_padding;
    if (pad == 0 && !c->aug.hflip) {
        memcpy(img, c->images[index], sizeof c->images[0]);
        return 0;
    }
    tg_data_rng r;
    tg_data_rng_seed(&r, seed);
    /* The crop's corner in the padded (8 + 2 pad) image is (oy, ox) in [0, 2 pad]: a shift of
     * oy - pad relative to the original. */
    int dy = (int)tg_data_rng_below(&r, 2 * pad + 1) - pad;
    int dx = (int)tg_data_rng_below(&r, 2 * pad + 1) - pad;
    bool flip = c->aug.hflip && tg_data_rng_uniform(&r) < 0.5;
    augment(c->images[index], img, dy, dx, flip);
    return 0;
}

tg_dataset *tg_digits_dataset_new_fn(const char *path, tg_digits_split split, tg_digits_opts opts)
{
    if (!path) path = TG_DIGITS_DEFAULT_PATH;
    if (split != TG_DIGITS_ALL && split != TG_DIGITS_TRAIN && split != TG_DIGITS_TEST)
        return tg_set_error(OP, "unknown split %d", (int)split);
    if (opts.crop_padding < 0 || opts.crop_padding > SIDE)
        return tg_set_error(OP, "crop_padding must be in [0, %d], got %d", SIDE, opts.crop_padding);
    float(*all)[PIXELS] = malloc(TG_DIGITS_IMAGES * sizeof *all);
    int64_t *all_labels = malloc(TG_DIGITS_IMAGES * sizeof *all_labels);
    digits_ctx *c = calloc(1, sizeof *c);
    if (c) {
        c->n = split == TG_DIGITS_ALL     ? TG_DIGITS_IMAGES
               : split == TG_DIGITS_TRAIN ? TG_DIGITS_TRAIN_SIZE
                                          : TG_DIGITS_IMAGES - TG_DIGITS_TRAIN_SIZE;
        c->images = malloc((size_t)c->n * sizeof *c->images);
        c->labels = malloc((size_t)c->n * sizeof *c->labels);
        c->aug = opts;
    }
    if (!all || !all_labels || !c || !c->images || !c->labels) {
        tg_set_error(OP, "out of memory");
        goto fail;
    }
    if (read_csv(path, all, all_labels) != 0) goto fail;
    int order[TG_DIGITS_IMAGES];
    split_order(order);
    int first = split == TG_DIGITS_TEST ? TG_DIGITS_TRAIN_SIZE : 0;
    for (int64_t i = 0; i < c->n; i++) {
        int src = split == TG_DIGITS_ALL ? (int)i : order[first + i];
        memcpy(c->images[i], all[src], sizeof all[0]);
        c->labels[i] = all_labels[src];
    }
    free(all);
    free(all_labels);
    tg_data_field fields[2] = {
        { .name = "image", .dtype = TG_FLOAT32, .ndim = 3, .sizes = { 1, SIDE, SIDE } },
        { .name = "label", .dtype = TG_INT64, .ndim = 0 },
    };
    tg_dataset_desc d = { .name = OP,
                          .length = c->n,
                          .num_fields = 2,
                          .fields = fields,
                          .get = digits_get,
                          .ctx = c,
                          .free_ctx = digits_ctx_free };
    return tg_dataset_new(&d);
fail:
    free(all);
    free(all_labels);
    if (c) digits_ctx_free(c);
    return NULL;
}
