/* tensorgen nn: datasets, samplers and the data loader (torch.utils.data's role). Include
 * <tensorgen.h> rather than this file.
 *
 * A dataset says how many samples it has, what each sample is made of (its fields: a shape and
 * a dtype each, e.g. an image (1, 8, 8) float32 and a label () int64) and fetches sample i into
 * a slot of a batch the loader has already allocated. The loader batches, shuffles, splits the
 * indices between ranks, fills batches on worker threads ahead of the caller and hands them
 * over in order:
 *
 *     tg_dataset *ds = tg_digits_dataset_new(NULL, TG_DIGITS_TRAIN, .crop_padding = 1);
 *     tg_loader *ld = tg_loader_new(ds, .batch_size = 50, .shuffle = true, .seed = 0,
 *                                   .num_workers = 2);
 *     for (int epoch = 0; epoch < 10; epoch++) {
 *         tg_batch b;
 *         int rc;
 *         while ((rc = tg_loader_next(ld, &b)) == 1) {
 *             train_step(b.fields[0], b.fields[1]);      // (B, 1, 8, 8) and (B)
 *             tg_batch_release(&b);
 *         }
 *         if (rc < 0) fail(tg_last_error());           // "DataLoader: sample 17: ..."
 *     }                                                // rc == 0: epoch done, next one armed
 *     tg_loader_free(ld);
 *     tg_dataset_free(ds);
 *
 * Determinism: the order of an epoch depends on (seed, epoch) only, and every sample's
 * randomness (augmentation, a window's start) on (seed, epoch, index) only, through the seed
 * the loader passes to the dataset: the batches are the same for any number of workers and
 * after a resume from a saved state.
 *
 * Threads: a dataset's get function runs on the loader's worker threads, several samples at
 * once, so it must not change shared state (read-only data, or its own locks). Errors follow
 * the library's rules: NULL or -1 with tg_last_error() naming the call. Pinned (page-locked)
 * host memory for faster copies to the GPU is not done: the runtime has no pinned allocator. */
#ifndef TG_NN_DATA_H
#define TG_NN_DATA_H

#include "tg_core.h"
#include "tg_nn_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ random numbers */

/* A small generator for a dataset's per-sample randomness (xoshiro256**, seeded through
 * splitmix64), cheap to seed once per sample from the seed the loader passes. */
typedef struct tg_data_rng {
    uint64_t s[4];
} tg_data_rng;
void tg_data_rng_seed(tg_data_rng *r, uint64_t seed);
uint64_t tg_data_rng_next(tg_data_rng *r);
/* Uniform in [0, 1), 53 random bits. */
double tg_data_rng_uniform(tg_data_rng *r);
/* Uniform in [0, n) without modulo bias; 0 when n <= 0. */
int64_t tg_data_rng_below(tg_data_rng *r, int64_t n);
/* The seed of sample `index` in `epoch` of a loader seeded with `seed` (a hash of the three):
 * what tg_loader passes to a dataset's get function. */
uint64_t tg_data_sample_seed(uint64_t seed, int64_t epoch, int64_t index);

/* ------------------------------------------------------------------ datasets */

#define TG_DATA_MAX_FIELDS 8

/* One field of a sample: its name (for messages), dtype and per-sample shape (ndim 0 for a
 * scalar such as a label). The loader's batch tensor of the field is (B, sizes...). */
typedef struct tg_data_field {
    const char *name;
    tg_dtype dtype;
    int64_t ndim;
    int64_t sizes[TG_MAX_DIMS - 1];
} tg_data_field;

/* Fetches sample `index` (0 <= index < length) into a batch slot: slots[f] points to the
 * sample's contiguous bytes of field f (numel(field) * dtype size each, CPU memory). `seed` is
 * the sample's seed (tg_data_sample_seed) for any randomness. Returns 0, or -1 with an error
 * set by tg_set_error on the calling thread (the loader passes its message to its caller).
 * Called from worker threads, concurrently for different samples. */
typedef int (*tg_dataset_get_fn)(void *ctx, int64_t index, void *const *slots, uint64_t seed);

typedef struct tg_dataset_desc {
    const char *name;            /* for messages, e.g. "TensorDataset" (copied) */
    int64_t length;              /* samples */
    int num_fields;              /* 1..TG_DATA_MAX_FIELDS */
    const tg_data_field *fields; /* copied, names included */
    tg_dataset_get_fn get;
    void *ctx;                   /* owned by the dataset once tg_dataset_new succeeds */
    void (*free_ctx)(void *ctx); /* optional; runs at tg_dataset_free (or on failure) */
} tg_dataset_desc;

typedef struct tg_dataset tg_dataset;

/* A dataset from its description, or NULL with an error (bad length, fields or shapes); on
 * failure free_ctx(ctx) has run. */
tg_dataset *tg_dataset_new(const tg_dataset_desc *desc);
/* Frees the dataset and its ctx. Loaders over it must be freed first. NULL is a no-op. */
void tg_dataset_free(tg_dataset *ds);
int64_t tg_dataset_length(const tg_dataset *ds);
const char *tg_dataset_name(const tg_dataset *ds);
int tg_dataset_num_fields(const tg_dataset *ds);
/* Field f (borrowed, lives with ds), or NULL with an error. */
const tg_data_field *tg_dataset_field(const tg_dataset *ds, int f);
/* Calls the get function after checking index (0 or -1 with an error). */
int tg_dataset_get(const tg_dataset *ds, int64_t index, void *const *slots, uint64_t seed);
/* Sample `index` as new tensors, one per field (out[num_fields]), for inspection and tests. */
int tg_dataset_sample(const tg_dataset *ds, int64_t index, uint64_t seed, tg_tensor **out);

/* TensorDataset: sample i is row i of each tensor (all with the same first dimension, any
 * dtype, at least 1-D). The dataset keeps a contiguous CPU copy of each (a reference when it
 * already is one). The field names are "0", "1", ... */
tg_dataset *tg_tensor_dataset_new(tg_tensor *const *tensors, int n);

/* The 1,797 handwritten 8x8 digits that Debian's python3-sklearn ships
 * (sklearn/datasets/data/digits.csv.gz), read with zlib. Fields: "image" (1, 8, 8) float32 in
 * [0, 1] (pixel / 16) and "label" () int64. The split is examples/train_cnn.c's: a fixed shuffle
 * (an LCG seeded 12345) puts 1,500 images in TRAIN and the other 297 in TEST; ALL is the 1,797
 * in the file's order. */
#define TG_DIGITS_DEFAULT_PATH "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
#define TG_DIGITS_IMAGES 1797
#define TG_DIGITS_TRAIN_SIZE 1500
typedef enum tg_digits_split { TG_DIGITS_ALL = 0, TG_DIGITS_TRAIN, TG_DIGITS_TEST } tg_digits_split;
/* Augmentation, per sample from its seed: a random crop of the image zero-padded by
 * crop_padding pixels on each side (0: none), and a horizontal flip with probability 1/2. */
typedef struct tg_digits_opts {
    int crop_padding;
    bool hflip;
} tg_digits_opts;
/* path NULL: TG_DIGITS_DEFAULT_PATH. NULL with an error naming the file when it is missing or
 * malformed. */
tg_dataset *tg_digits_dataset_new_fn(const char *path, tg_digits_split split, tg_digits_opts opts);
#define tg_digits_dataset_new(path, split, ...) \
    tg_digits_dataset_new_fn((path), (split), (tg_digits_opts){ .crop_padding = 0, __VA_ARGS__ })

/* Random windows of a token file (raw little-endian uint16 tokens, llm.c's and nanoGPT's .bin),
 * memory-mapped: sample i is a window of block_size + 1 tokens starting at a position drawn from
 * the sample's seed; fields "x" (block_size) int64, the first block_size tokens, and "y"
 * (block_size) int64, the next ones. num_samples is the dataset's length (samples per epoch).
 * NULL with an error naming the file when it is missing or shorter than block_size + 1 tokens. */
tg_dataset *tg_token_dataset_new(const char *path, int64_t block_size, int64_t num_samples);

/* ------------------------------------------------------------------ samplers */

/* The indices an epoch visits. Over `n` indices (0..n-1, or the given subset), in order or
 * shuffled by a permutation drawn from (seed, epoch), then split between world_size ranks as
 * torch's DistributedSampler does: the list is padded by repeating its head up to a multiple
 * of world_size (or cut down to one when drop_last), and rank r takes positions r, r + world,
 * r + 2 world, ... Defaults: in order, world_size 1, rank 0. */
typedef struct tg_sampler_opts {
    bool shuffle;
    uint64_t seed;
    int rank;
    int world_size; /* 0 means 1 */
    bool drop_last; /* the rank split's drop_last, not the loader's */
} tg_sampler_opts;
typedef struct tg_sampler tg_sampler;
/* subset NULL: the indices 0..n-1; otherwise subset[0..n) (copied), e.g. a train split. NULL
 * with an error for bad arguments. */
tg_sampler *tg_sampler_new_fn(int64_t n, const int64_t *subset, tg_sampler_opts opts);
#define tg_sampler_new(n, ...) \
    tg_sampler_new_fn((n), NULL, (tg_sampler_opts){ .seed = 0, __VA_ARGS__ })
#define tg_sampler_subset(idx, n, ...) \
    tg_sampler_new_fn((n), (idx), (tg_sampler_opts){ .seed = 0, __VA_ARGS__ })
void tg_sampler_free(tg_sampler *s);
/* The number of indices this rank visits per epoch. */
int64_t tg_sampler_length(const tg_sampler *s);
/* Writes epoch `epoch`'s indices for this rank into out[tg_sampler_length(s)]. 0 or -1. */
int tg_sampler_indices(const tg_sampler *s, int64_t epoch, int64_t *out);

/* ------------------------------------------------------------------ the loader */

typedef struct tg_loader_opts {
    int64_t batch_size; /* default 1 */
    bool shuffle;       /* ignored when a sampler is given (it decides) */
    bool drop_last;     /* drop the last batch when it is short */
    uint64_t seed;      /* the shuffle's and the samples' seeds */
    int num_workers;    /* threads filling batches; 0: the caller's thread, in tg_loader_next */
    int prefetch;       /* batches in flight with workers; 0: 2 per worker */
    tg_device device;   /* where batches go (default CPU); copied by the worker after fill */
    const tg_sampler *sampler; /* optional, borrowed (must outlive the loader) */
} tg_loader_opts;

/* A batch: fields[f] is (size, field f's shape...), a new reference the caller owns (not
 * recorded in any open scope); tg_batch_release drops them all. */
typedef struct tg_batch {
    int64_t size;  /* samples; the last batch of an epoch may be short */
    int64_t index; /* its number in the epoch */
    int num_fields;
    tg_tensor *fields[TG_DATA_MAX_FIELDS];
} tg_batch;
void tg_batch_release(tg_batch *b);

/* One loader is driven by one thread at a time (its workers are its own business). */
typedef struct tg_loader tg_loader;
/* A loader over ds (borrowed: it must outlive the loader), or NULL with an error ("DataLoader:
 * batch_size must be positive, got 0"). Workers start at the first tg_loader_next of an epoch. */
tg_loader *tg_loader_new_fn(tg_dataset *ds, tg_loader_opts opts);
#define tg_loader_new(ds, ...) \
    tg_loader_new_fn((ds), (tg_loader_opts){ .batch_size = 1, __VA_ARGS__ })
/* Stops the workers (batches in flight are dropped) and frees the loader. NULL is a no-op. */
void tg_loader_free(tg_loader *l);

/* The next batch of the epoch: 1 and *out filled; 0 at the end of the epoch (the loader then
 * moves to the next epoch, which the next call starts); -1 with an error ("DataLoader: sample
 * 17: <the dataset's message>"), after which the epoch is stopped and further calls fail the
 * same way until tg_loader_reset or tg_loader_set_epoch. */
int tg_loader_next(tg_loader *l, tg_batch *out);
/* Batches per epoch (for this rank). */
int64_t tg_loader_num_batches(const tg_loader *l);
int64_t tg_loader_epoch(const tg_loader *l);
/* Drops the batches in flight and restarts the current epoch from its first batch. */
void tg_loader_reset(tg_loader *l);
/* Drops the batches in flight and arms `epoch` from its first batch. */
int tg_loader_set_epoch(tg_loader *l, int64_t epoch);
/* Seconds the caller has spent inside tg_loader_next waiting for (or, without workers,
 * filling) batches, in total since the loader was made. */
double tg_loader_wait_seconds(const tg_loader *l);

/* Where a loader stands: the epoch, the batches delivered in it and the seed. Restoring it
 * (before or after batches were drawn) makes the following batches those the saved loader
 * would have delivered next. */
typedef struct tg_loader_state {
    int64_t epoch;
    int64_t batch;
    uint64_t seed;
} tg_loader_state;
tg_loader_state tg_loader_get_state(const tg_loader *l);
int tg_loader_set_state(tg_loader *l, tg_loader_state st);
/* The state as metadata "<prefix>epoch", "<prefix>batch" and "<prefix>seed" (the seed's 64
 * bits as a signed decimal), e.g. prefix "loader.". 0 or -1 with an error. */
int tg_loader_state_save(const tg_loader *l, tg_state *s, const char *prefix);
int tg_loader_state_load(tg_loader *l, const tg_state *s, const char *prefix);

#ifdef __cplusplus
}
#endif
#endif
