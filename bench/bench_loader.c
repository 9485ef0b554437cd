/* Data-loader workload: one epoch of the handwritten digits' training split (1,500 8x8 images,
 * nn/data/digits.c) with a random crop (padding 1) and a horizontal flip per sample, shuffled
 * batches of 128, filled by 2 worker threads and taken in order by the caller, the batches
 * released at once (no training: the loader's throughput alone). bench/torch_loader.py times
 * torch.utils.data.DataLoader(num_workers=2) over the same images with the same augmentation.
 * Reported in samples/s (1,500 per call). */
#include "bench.h"
#include "tensorgen.h"

#include <stdio.h>

static bool body_epoch(void *p)
{
    tg_loader *l = p;
    tg_batch b;
    int rc;
    while ((rc = tg_loader_next(l, &b)) == 1) tg_batch_release(&b);
    return rc == 0;
}

void bench_loader(void)
{
    const char *name = "loader_digits_crop_flip_b128_w2";
    if (!bench_wanted(name)) return;
    double secs[BENCH_MAX_REPEATS];
    tg_dataset *ds = tg_digits_dataset_new(NULL, TG_DIGITS_TRAIN, .crop_padding = 1, .hflip = true);
    tg_loader *l =
        ds ? tg_loader_new(ds, .batch_size = 128, .shuffle = true, .num_workers = 2) : NULL;
    bool ok = l && bench_time(body_epoch, l, bench_cfg.smoke ? 1 : 4, 1, secs);
    if (ok) {
        /* bench_emit counts work in units of 1e9 (GB/s, GFLOP/s): samples x 1e9 is samples/s. */
        bench_emit(name, "samples/s", "tensorgen", secs, 1e9 * (double)tg_dataset_length(ds), 0);
    } else {
        fprintf(stderr, "tg_bench: %s skipped: %s\n", name,
                tg_last_error() ? tg_last_error() : "?");
        tg_clear_error();
    }
    tg_loader_free(l);
    tg_dataset_free(ds);
}
