/* nn/data/ (tg_nn_data.h): samplers against torch's formulas, the loader's batches the same for
 * 0, 1, 2 and 4 workers, shuffling by seed and epoch, drop_last, resuming mid-epoch (as a
 * struct and through a tg_state and its file), a dataset's error reaching the caller, freeing
 * with batches in flight, bad arguments, and the shipped datasets (tensors, a token file, the
 * digits when python3-sklearn is installed). */
#include "../runtime/rt_test.h"
#include "tensorgen.h"

#include <stdlib.h>
#include <unistd.h>

TestSuite(data, .fini = rt_leak_check);

/* ------------------------------------------------------------------ a dataset for the tests */

/* Sample i: "i" () int64 = i, "r" () int64 = the first draw of the sample's seed, "x" (3)
 * float32 = 10 i + k. Fails at fail_at with a message; sleeps delay_us per sample. */
typedef struct probe {
    int64_t fail_at;
    int delay_us;
} probe;

static int probe_get(void *ctx, int64_t index, void *const *slots, uint64_t seed)
{
    const probe *p = ctx;
    if (p->delay_us) usleep((useconds_t)p->delay_us);
    if (index == p->fail_at)
        return tg_set_error("probe", "cannot read sample %lld", (long long)index), -1;
    tg_data_rng r;
    tg_data_rng_seed(&r, seed);
    *(int64_t *)slots[0] = index;
    *(int64_t *)slots[1] = (int64_t)(tg_data_rng_next(&r) >> 1);
    for (int k = 0; k < 3; k++) ((float *)slots[2])[k] = (float)(10 * index + k);
    return 0;
}

static probe probes[4];
static int nprobes;

static tg_dataset *probe_new(int64_t n, int64_t fail_at, int delay_us)
{
    probe *p = &probes[nprobes++ % 4];
    p->fail_at = fail_at;
    p->delay_us = delay_us;
    tg_data_field f[3] = {
        { .name = "i", .dtype = TG_INT64, .ndim = 0 },
        { .name = "r", .dtype = TG_INT64, .ndim = 0 },
        { .name = "x", .dtype = TG_FLOAT32, .ndim = 1, .sizes = { 3 } },
    };
    tg_dataset_desc d = {
        .name = "probe", .length = n, .num_fields = 3, .fields = f, .get = probe_get, .ctx = p
    };
    tg_dataset *ds = tg_dataset_new(&d);
    cr_assert(ds, "%s", tg_last_error());
    return ds;
}

/* One epoch's samples as delivered: indices, random draws, and the batch sizes. */
typedef struct epoch_log {
    int64_t n, idx[256], r[256];
    int64_t nb, sizes[256];
    int64_t first; /* the first batch's index */
} epoch_log;

/* Draws up to max_batches batches (-1: to the end of the epoch, whose 0 it consumes). */
static void drain(tg_loader *l, epoch_log *log, int64_t max_batches)
{
    memset(log, 0, sizeof *log);
    tg_batch b;
    int rc = 0;
    while (max_batches-- != 0 && (rc = tg_loader_next(l, &b)) == 1) {
        cr_assert_eq(b.num_fields, 3);
        cr_assert_eq(tg_tensor_dim(b.fields[0]), 1);
        cr_assert_eq(tg_tensor_size(b.fields[2], 1), 3);
        cr_assert_eq(tg_tensor_dtype(b.fields[2]), TG_FLOAT32);
        if (log->nb == 0) log->first = b.index;
        cr_assert_eq(b.index, log->first + log->nb);
        const int64_t *i = tg_tensor_data(b.fields[0]), *r = tg_tensor_data(b.fields[1]);
        const float *x = tg_tensor_data(b.fields[2]);
        for (int64_t j = 0; j < b.size; j++) {
            log->idx[log->n] = i[j];
            log->r[log->n++] = r[j];
            cr_assert_eq(x[3 * j + 1], (float)(10 * i[j] + 1));
        }
        log->sizes[log->nb++] = b.size;
        tg_batch_release(&b);
    }
    if (max_batches < -1) cr_assert_eq(rc, 0, "%s", tg_last_error() ? tg_last_error() : "");
}

static void expect_same(const epoch_log *a, const epoch_log *b)
{
    cr_assert_eq(a->n, b->n);
    cr_assert_eq(a->nb, b->nb);
    for (int64_t k = 0; k < a->n; k++) {
        cr_expect_eq(a->idx[k], b->idx[k], "sample %lld", (long long)k);
        cr_expect_eq(a->r[k], b->r[k], "sample %lld", (long long)k);
    }
}

static bool is_permutation(const epoch_log *a, int64_t n)
{
    if (a->n != n) return false;
    bool seen[256] = { 0 };
    for (int64_t k = 0; k < n; k++) {
        if (a->idx[k] < 0 || a->idx[k] >= n || seen[a->idx[k]]) return false;
        seen[a->idx[k]] = true;
    }
    return true;
}

/* ------------------------------------------------------------------ random numbers */

Test(data, rng_ranges_and_seeds)
{
    tg_data_rng a, b;
    tg_data_rng_seed(&a, 42);
    tg_data_rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++) {
        double u = tg_data_rng_uniform(&a);
        cr_assert(u >= 0 && u < 1);
        int64_t k = tg_data_rng_below(&a, 7);
        cr_assert(k >= 0 && k < 7);
        tg_data_rng_uniform(&b);
        cr_assert_eq(tg_data_rng_below(&b, 7), k);
    }
    cr_expect_eq(tg_data_rng_below(&a, 0), 0);
    cr_expect_neq(tg_data_sample_seed(1, 0, 5), tg_data_sample_seed(1, 1, 5));
    cr_expect_neq(tg_data_sample_seed(1, 0, 5), tg_data_sample_seed(1, 0, 6));
    cr_expect_neq(tg_data_sample_seed(1, 0, 5), tg_data_sample_seed(2, 0, 5));
    cr_expect_eq(tg_data_sample_seed(3, 4, 5), tg_data_sample_seed(3, 4, 5));
}

/* ------------------------------------------------------------------ samplers */

static void expect_indices(const tg_sampler *s, int64_t epoch, const int64_t *want, int64_t n)
{
    cr_assert_eq(tg_sampler_length(s), n);
    int64_t got[64];
    cr_assert_eq(tg_sampler_indices(s, epoch, got), 0);
    for (int64_t j = 0; j < n; j++) cr_expect_eq(got[j], want[j], "position %lld", (long long)j);
}

/* torch: indices = list(range(10)); padded += indices[:2] to 12; rank r takes [r:12:4]. */
Test(data, distributed_split_as_torch)
{
    const int64_t want_pad[4][3] = { { 0, 4, 8 }, { 1, 5, 9 }, { 2, 6, 0 }, { 3, 7, 1 } };
    const int64_t want_drop[4][2] = { { 0, 4 }, { 1, 5 }, { 2, 6 }, { 3, 7 } };
    for (int r = 0; r < 4; r++) {
        tg_sampler *s = tg_sampler_new(10, .rank = r, .world_size = 4);
        expect_indices(s, 0, want_pad[r], 3);
        tg_sampler_free(s);
        s = tg_sampler_new(10, .rank = r, .world_size = 4, .drop_last = true);
        expect_indices(s, 0, want_drop[r], 2);
        tg_sampler_free(s);
    }
    /* Padding longer than the list repeats it: n = 2, world 5 -> [0 1 0 1 0], rank 3 gets 1. */
    tg_sampler *s = tg_sampler_new(2, .rank = 3, .world_size = 5);
    expect_indices(s, 0, (int64_t[]){ 1 }, 1);
    tg_sampler_free(s);
}

/* Two ranks over a shuffled 11: they interleave the one-rank permutation of the same seed and
 * epoch (padded by its first element) and between them cover every index. */
Test(data, distributed_shuffled_covers)
{
    for (int64_t epoch = 0; epoch < 3; epoch++) {
        tg_sampler *all = tg_sampler_new(11, .shuffle = true, .seed = 9);
        tg_sampler *r0 = tg_sampler_new(11, .shuffle = true, .seed = 9, .rank = 0, .world_size = 2);
        tg_sampler *r1 = tg_sampler_new(11, .shuffle = true, .seed = 9, .rank = 1, .world_size = 2);
        int64_t p[11], a[6], b[6];
        cr_assert_eq(tg_sampler_indices(all, epoch, p), 0);
        cr_assert_eq(tg_sampler_length(r0), 6);
        cr_assert_eq(tg_sampler_indices(r0, epoch, a), 0);
        cr_assert_eq(tg_sampler_indices(r1, epoch, b), 0);
        int seen[11] = { 0 };
        for (int j = 0; j < 6; j++) {
            cr_expect_eq(a[j], p[(2 * j) % 11]);
            cr_expect_eq(b[j], p[(2 * j + 1) % 11]);
            seen[a[j]]++;
            seen[b[j]]++;
        }
        for (int i = 0; i < 11; i++) cr_expect_eq(seen[i], i == p[0] ? 2 : 1, "index %d", i);
        tg_sampler_free(all);
        tg_sampler_free(r0);
        tg_sampler_free(r1);
    }
}

Test(data, sampler_subset_and_bad_args)
{
    const int64_t sub[4] = { 7, 3, 9, 1 };
    tg_sampler *s = tg_sampler_subset(sub, 4);
    expect_indices(s, 0, sub, 4);
    tg_sampler_free(s);
    cr_expect_null(tg_sampler_new(5, .rank = 2, .world_size = 2));
    cr_expect(strstr(tg_last_error(), "rank"), "%s", tg_last_error());
    tg_clear_error();
    cr_expect_null(tg_sampler_new(-1));
    tg_clear_error();
}

/* ------------------------------------------------------------------ the loader */

Test(data, same_batches_for_any_worker_count)
{
    tg_dataset *ds = probe_new(37, -1, 0);
    epoch_log ref[2], got;
    for (int w = 0; w <= 4; w++) {
        if (w == 3) continue;
        tg_loader *l =
            tg_loader_new(ds, .batch_size = 5, .shuffle = true, .seed = 3, .num_workers = w);
        cr_assert(l, "%s", tg_last_error());
        for (int e = 0; e < 2; e++) {
            drain(l, w == 0 ? &ref[e] : &got, -1);
            if (w) expect_same(&ref[e], &got);
            cr_assert(is_permutation(w == 0 ? &ref[e] : &got, 37));
        }
        cr_expect_eq(tg_loader_epoch(l), 2);
        tg_loader_free(l);
    }
    /* And with a prefetch of 1 (each worker waits for the caller). */
    tg_loader *l = tg_loader_new(ds, .batch_size = 5, .shuffle = true, .seed = 3, .num_workers = 2,
                                 .prefetch = 1);
    drain(l, &got, -1);
    expect_same(&ref[0], &got);
    tg_loader_free(l);
    tg_dataset_free(ds);
}

Test(data, shuffle_by_seed_and_epoch)
{
    tg_dataset *ds = probe_new(50, -1, 0);
    tg_loader *a =
        tg_loader_new(ds, .batch_size = 8, .shuffle = true, .seed = 11, .num_workers = 2);
    tg_loader *b = tg_loader_new(ds, .batch_size = 8, .shuffle = true, .seed = 11);
    tg_loader *c = tg_loader_new(ds, .batch_size = 8, .shuffle = true, .seed = 12);
    tg_loader *seq = tg_loader_new(ds, .batch_size = 8);
    epoch_log a0, a1, b0, c0, s0;
    drain(a, &a0, -1);
    drain(a, &a1, -1);
    drain(b, &b0, -1);
    drain(c, &c0, -1);
    drain(seq, &s0, -1);
    expect_same(&a0, &b0);
    cr_expect(memcmp(a0.idx, a1.idx, sizeof a0.idx), "epochs 0 and 1 have the same order");
    cr_expect(memcmp(a0.idx, c0.idx, sizeof a0.idx), "seeds 11 and 12 give the same order");
    cr_expect(is_permutation(&a1, 50) && is_permutation(&c0, 50));
    for (int64_t k = 0; k < 50; k++) cr_expect_eq(s0.idx[k], k);
    /* The same sample gets other random numbers in another epoch. */
    tg_loader_set_epoch(seq, 1);
    epoch_log s1;
    drain(seq, &s1, -1);
    cr_expect_neq(s0.r[0], s1.r[0]);
    tg_loader_free(a);
    tg_loader_free(b);
    tg_loader_free(c);
    tg_loader_free(seq);
    tg_dataset_free(ds);
}

Test(data, drop_last_counts)
{
    tg_dataset *ds = probe_new(37, -1, 0);
    for (int w = 0; w <= 2; w += 2) {
        tg_loader *keep = tg_loader_new(ds, .batch_size = 5, .num_workers = w);
        tg_loader *drop = tg_loader_new(ds, .batch_size = 5, .drop_last = true, .num_workers = w);
        cr_expect_eq(tg_loader_num_batches(keep), 8);
        cr_expect_eq(tg_loader_num_batches(drop), 7);
        epoch_log k, d;
        drain(keep, &k, -1);
        drain(drop, &d, -1);
        cr_expect_eq(k.nb, 8);
        cr_expect_eq(k.sizes[7], 2);
        cr_expect_eq(k.n, 37);
        cr_expect_eq(d.nb, 7);
        cr_expect_eq(d.n, 35);
        cr_expect_eq(d.sizes[6], 5);
        tg_loader_free(keep);
        tg_loader_free(drop);
    }
    /* A batch larger than the dataset: one short batch, or none. */
    tg_loader *big = tg_loader_new(ds, .batch_size = 100, .drop_last = true);
    tg_batch b;
    cr_expect_eq(tg_loader_num_batches(big), 0);
    cr_expect_eq(tg_loader_next(big, &b), 0);
    tg_loader_free(big);
    tg_dataset_free(ds);
}

Test(data, loader_over_rank_sampler)
{
    tg_dataset *ds = probe_new(10, -1, 0);
    tg_sampler *s = tg_sampler_new(10, .rank = 2, .world_size = 4);
    tg_loader *l = tg_loader_new(ds, .batch_size = 2, .sampler = s, .num_workers = 2);
    epoch_log e;
    drain(l, &e, -1);
    cr_expect_eq(e.n, 3);
    cr_expect_eq(e.nb, 2);
    cr_expect(e.idx[0] == 2 && e.idx[1] == 6 && e.idx[2] == 0);
    tg_loader_free(l);
    tg_sampler_free(s);
    tg_dataset_free(ds);
}

/* Draws 3 batches of epoch 1, saves, then the rest; a new loader (other worker count) restored
 * from the saved state delivers the rest again. */
static void resume_case(int mode)
{
    tg_dataset *ds = probe_new(45, -1, 0);
    tg_loader *a = tg_loader_new(ds, .batch_size = 4, .shuffle = true, .seed = 5, .num_workers = 2);
    epoch_log head, tail, again;
    drain(a, &head, -1); /* epoch 0 */
    drain(a, &head, 3);
    tg_loader_state st = tg_loader_get_state(a);
    cr_expect(st.epoch == 1 && st.batch == 3 && st.seed == 5);
    tg_state *s = tg_state_new();
    cr_assert_eq(tg_loader_state_save(a, s, "loader."), 0, "%s", tg_last_error());
    char dir[] = "/tmp/tg_data_XXXXXX", path[64];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/ckpt.safetensors", dir);
    if (mode == 2) {
        cr_assert_eq(tg_state_save(s, path), 0, "%s", tg_last_error());
        tg_state_free(s);
        s = tg_state_open(path);
        cr_assert(s, "%s", tg_last_error());
    }
    drain(a, &tail, -1);

    tg_loader *b = tg_loader_new(ds, .batch_size = 4, .shuffle = true, .seed = 99);
    if (mode == 0) cr_assert_eq(tg_loader_set_state(b, st), 0);
    else cr_assert_eq(tg_loader_state_load(b, s, "loader."), 0, "%s", tg_last_error());
    drain(b, &again, -1);
    expect_same(&tail, &again);
    cr_expect_eq(again.sizes[0], 4);
    cr_expect_eq(again.first, 3);
    /* Both continue with the same epoch 2. */
    drain(a, &tail, -1);
    drain(b, &again, -1);
    expect_same(&tail, &again);

    /* A state past the end of an epoch is refused. */
    cr_expect_neq(tg_loader_set_state(b, (tg_loader_state){ 0, 13, 5 }), 0);
    tg_clear_error();
    tg_state_free(s);
    unlink(path);
    rmdir(dir);
    tg_loader_free(a);
    tg_loader_free(b);
    tg_dataset_free(ds);
}
Test(data, resume_mid_epoch_struct) { resume_case(0); }
Test(data, resume_mid_epoch_state) { resume_case(1); }
Test(data, resume_mid_epoch_file) { resume_case(2); }

static void error_case(int workers)
{
    tg_dataset *ds = probe_new(40, 17, 0);
    tg_loader *l = tg_loader_new(ds, .batch_size = 4, .num_workers = workers);
    tg_batch b;
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(tg_loader_next(l, &b), 1, "%s", tg_last_error());
        tg_batch_release(&b);
    }
    cr_assert_eq(tg_loader_next(l, &b), -1);
    cr_expect_null(b.fields[0]);
    cr_assert(tg_last_error());
    cr_expect_str_eq(tg_last_error(), "DataLoader: sample 17: probe: cannot read sample 17");
    tg_clear_error();
    cr_expect_eq(tg_loader_next(l, &b), -1);
    cr_expect(tg_last_error() && strstr(tg_last_error(), "sample 17"));
    tg_clear_error();
    /* A reset starts the epoch again, and it fails at the same place. */
    tg_loader_reset(l);
    cr_expect_eq(tg_loader_next(l, &b), 1);
    tg_batch_release(&b);
    tg_loader_free(l);
    tg_dataset_free(ds);
}
Test(data, callback_error_reaches_caller_inline) { error_case(0); }
Test(data, callback_error_reaches_caller_workers) { error_case(3); }

Test(data, early_free_with_batches_in_flight)
{
    tg_dataset *ds = probe_new(200, -1, 200);
    for (int rep = 0; rep < 20; rep++) {
        tg_loader *l =
            tg_loader_new(ds, .batch_size = 3, .shuffle = true, .num_workers = 4, .prefetch = 8);
        tg_batch b;
        for (int k = 0; k < rep % 4; k++) {
            cr_assert_eq(tg_loader_next(l, &b), 1);
            tg_batch_release(&b);
        }
        if (rep % 5 == 4) tg_loader_set_epoch(l, 3); /* drops the run in flight */
        tg_loader_free(l);
    }
    tg_dataset_free(ds);
}

Test(data, bad_arguments)
{
    tg_dataset *ds = probe_new(10, -1, 0);
    cr_expect_null(tg_loader_new(ds, .batch_size = 0));
    cr_expect(tg_last_error() &&
                  strstr(tg_last_error(), "DataLoader: batch_size must be positive, got 0"),
              "%s", tg_last_error());
    tg_clear_error();
    cr_expect_null(tg_loader_new(NULL, .batch_size = 4));
    cr_expect(tg_last_error() && strstr(tg_last_error(), "NULL"));
    tg_clear_error();
    cr_expect_null(tg_loader_new(ds, .num_workers = -1));
    tg_clear_error();
    if (tg_cuda_device_count() == 0) {
        cr_expect_null(tg_loader_new(ds, .device = TG_DEVICE_CUDA(0)));
        cr_expect(tg_last_error() && strstr(tg_last_error(), "cuda:0"));
        tg_clear_error();
    }
    cr_expect_eq(tg_loader_next(NULL, &(tg_batch){ 0 }), -1);
    tg_clear_error();

    /* A sampler over indices the dataset does not have. */
    tg_sampler *s = tg_sampler_subset(((int64_t[]){ 0, 5, 12, 1 }), 4);
    for (int w = 0; w <= 2; w += 2) {
        tg_loader *l = tg_loader_new(ds, .batch_size = 2, .sampler = s, .num_workers = w);
        tg_batch b;
        cr_expect_eq(tg_loader_next(l, &b), 1);
        tg_batch_release(&b);
        cr_expect_eq(tg_loader_next(l, &b), -1);
        cr_expect(tg_last_error() && strstr(tg_last_error(), "DataLoader: sample 12: probe: sample "
                                                             "index 12 out of range"),
                  "%s", tg_last_error());
        tg_clear_error();
        tg_loader_free(l);
    }
    tg_sampler_free(s);

    /* A description the dataset refuses. */
    tg_data_field f = { .name = "x", .dtype = TG_FLOAT32, .ndim = 1, .sizes = { -2 } };
    tg_dataset_desc d = { .length = 3, .num_fields = 1, .fields = &f, .get = probe_get };
    cr_expect_null(tg_dataset_new(&d));
    cr_expect(tg_last_error() && strstr(tg_last_error(), "negative"));
    tg_clear_error();
    tg_loader_free(NULL);
    tg_dataset_free(ds);
}

Test(data, wait_time_counted)
{
    tg_dataset *ds = probe_new(20, -1, 1000);
    tg_loader *l = tg_loader_new(ds, .batch_size = 4, .num_workers = 1);
    cr_expect_eq(tg_loader_wait_seconds(l), 0);
    epoch_log e;
    drain(l, &e, -1);
    /* 20 samples of 1 ms on one worker: the caller waited for most of them. */
    cr_expect(tg_loader_wait_seconds(l) > 0.005, "%g", tg_loader_wait_seconds(l));
    tg_loader_free(l);
    tg_dataset_free(ds);
}

/* ------------------------------------------------------------------ shipped datasets */

Test(data, tensor_dataset_rows)
{
    float xv[24];
    for (int i = 0; i < 24; i++) xv[i] = (float)i;
    int64_t yv[4] = { 7, 8, 9, 10 };
    tg_tensor *x = tg_tensor_from_data(xv, (int64_t[]){ 4, 2, 3 }, 3, TG_FLOAT32);
    tg_tensor *y = tg_tensor_from_data(yv, (int64_t[]){ 4 }, 1, TG_INT64);
    tg_tensor *m = tg_tensor_from_data(xv, (int64_t[]){ 6, 4 }, 2, TG_FLOAT32);
    tg_tensor *mt = tg_t(m); /* (4, 6), not contiguous: row i is column i of m */
    tg_dataset *ds = tg_tensor_dataset_new((tg_tensor *[]){ x, y, mt }, 3);
    cr_assert(ds, "%s", tg_last_error());
    cr_expect_eq(tg_dataset_length(ds), 4);
    cr_expect_eq(tg_dataset_field(ds, 0)->ndim, 2);
    cr_expect_eq(tg_dataset_field(ds, 1)->dtype, TG_INT64);
    tg_loader *l = tg_loader_new(ds, .batch_size = 3, .num_workers = 2);
    tg_batch b;
    cr_assert_eq(tg_loader_next(l, &b), 1);
    cr_expect_eq(tg_tensor_size(b.fields[0], 0), 3);
    const float *bx = tg_tensor_data(b.fields[0]), *bm = tg_tensor_data(b.fields[2]);
    const int64_t *by = tg_tensor_data(b.fields[1]);
    for (int i = 0; i < 18; i++) cr_expect_eq(bx[i], (float)i);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(by[i], 7 + i);
        for (int k = 0; k < 6; k++) cr_expect_eq(bm[6 * i + k], xv[4 * k + i]);
    }
    tg_batch_release(&b);
    cr_assert_eq(tg_loader_next(l, &b), 1);
    cr_expect_eq(b.size, 1);
    cr_expect_eq(((int64_t *)tg_tensor_data(b.fields[1]))[0], 10);
    tg_batch_release(&b);
    tg_loader_free(l);

    tg_tensor *one[3];
    cr_assert_eq(tg_dataset_sample(ds, 2, 0, one), 0);
    cr_expect_eq(tg_tensor_dim(one[0]), 2);
    cr_expect_eq(tg_item(one[1]), 9);
    tg_release(one[0]);
    tg_release(one[1]);
    tg_release(one[2]);
    tg_dataset_free(ds);

    tg_tensor *short_y = tg_tensor_from_data(yv, (int64_t[]){ 3 }, 1, TG_INT64);
    cr_expect_null(tg_tensor_dataset_new((tg_tensor *[]){ x, short_y }, 2));
    cr_expect(tg_last_error() && strstr(tg_last_error(), "Size mismatch"));
    tg_clear_error();
    tg_release(short_y);
    tg_release(x);
    tg_release(y);
    tg_release(m);
    tg_release(mt);
}

static void write_tokens(const char *path, int n)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    for (int i = 0; i < n; i++) {
        unsigned v = (unsigned)(i * 7919) % 65536u;
        fputc((int)(v & 0xff), f);
        fputc((int)(v >> 8), f);
    }
    fclose(f);
}

Test(data, token_file_windows)
{
    char dir[] = "/tmp/tg_data_XXXXXX", path[64], small[64];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/tokens.bin", dir);
    snprintf(small, sizeof small, "%s/small.bin", dir);
    write_tokens(path, 1000);
    write_tokens(small, 8);
    tg_dataset *ds = tg_token_dataset_new(path, 16, 20);
    cr_assert(ds, "%s", tg_last_error());
    cr_expect_eq(tg_dataset_length(ds), 20);
    tg_loader *l = tg_loader_new(ds, .batch_size = 4, .shuffle = true, .num_workers = 2);
    tg_batch b;
    int64_t starts = 0, batches = 0;
    while (tg_loader_next(l, &b) == 1) {
        cr_assert_eq(tg_tensor_dtype(b.fields[0]), TG_INT64);
        cr_assert_eq(tg_tensor_size(b.fields[0], 1), 16);
        const int64_t *x = tg_tensor_data(b.fields[0]), *y = tg_tensor_data(b.fields[1]);
        for (int64_t j = 0; j < b.size; j++) {
            /* The window's start: the position whose token is x[0] and whose followers match. */
            int64_t s = -1;
            for (int64_t p = 0; p + 16 < 1000 && s < 0; p++) {
                bool ok = true;
                for (int k = 0; k <= 16 && ok; k++) {
                    int64_t tok = (int64_t)(((unsigned)(p + k) * 7919u) % 65536u);
                    ok = tok == (k < 16 ? x[16 * j + k] : y[16 * j + 15]);
                    if (ok && k > 0) ok = y[16 * j + k - 1] == tok;
                }
                if (ok) s = p;
            }
            cr_expect_geq(s, 0, "window %lld is not a run of the file", (long long)j);
            starts += s;
        }
        batches++;
        tg_batch_release(&b);
    }
    cr_expect_eq(batches, 5);
    cr_expect_gt(starts, 0);
    tg_loader_free(l);
    tg_dataset_free(ds);

    cr_expect_null(tg_token_dataset_new(small, 16, 10));
    cr_expect(tg_last_error() && strstr(tg_last_error(), small) &&
                  strstr(tg_last_error(), "8 tokens"),
              "%s", tg_last_error());
    tg_clear_error();
    unlink(path);
    unlink(small);
    cr_expect_null(tg_token_dataset_new(path, 16, 10));
    cr_expect(tg_last_error() && strstr(tg_last_error(), path), "%s", tg_last_error());
    tg_clear_error();
    rmdir(dir);
}

static bool have_digits(void) { return access(TG_DIGITS_DEFAULT_PATH, R_OK) == 0; }

Test(data, digits_split_as_train_cnn)
{
    if (!have_digits()) cr_skip("no %s (python3-sklearn)", TG_DIGITS_DEFAULT_PATH);
    tg_dataset *all = tg_digits_dataset_new(NULL, TG_DIGITS_ALL);
    tg_dataset *train = tg_digits_dataset_new(NULL, TG_DIGITS_TRAIN);
    tg_dataset *test = tg_digits_dataset_new(NULL, TG_DIGITS_TEST);
    cr_assert(all && train && test, "%s", tg_last_error());
    cr_expect_eq(tg_dataset_length(all), 1797);
    cr_expect_eq(tg_dataset_length(train), 1500);
    cr_expect_eq(tg_dataset_length(test), 297);
    /* train_cnn's order: Fisher-Yates with its LCG seeded 12345. */
    int order[1797];
    uint64_t st = 12345;
    for (int i = 0; i < 1797; i++) order[i] = i;
    for (int i = 1796; i > 0; i--) {
        st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((st >> 33) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    const int probes_at[3] = { 0, 777, 1796 };
    for (int k = 0; k < 3; k++) {
        int p = probes_at[k];
        tg_tensor *a[2], *s[2];
        cr_assert_eq(tg_dataset_sample(all, order[p], 0, a), 0);
        cr_assert_eq(tg_dataset_sample(p < 1500 ? train : test, p < 1500 ? p : p - 1500, 0, s), 0);
        cr_expect_eq(memcmp(tg_tensor_data(a[0]), tg_tensor_data(s[0]), 64 * sizeof(float)), 0);
        cr_expect_eq(tg_item(a[1]), tg_item(s[1]));
        for (int i = 0; i < 2; i++) {
            tg_release(a[i]);
            tg_release(s[i]);
        }
    }
    tg_loader *l = tg_loader_new(train, .batch_size = 128, .num_workers = 2);
    tg_batch b;
    cr_assert_eq(tg_loader_next(l, &b), 1);
    cr_expect_eq(tg_tensor_dim(b.fields[0]), 4);
    cr_expect_eq(tg_tensor_size(b.fields[0], 1), 1);
    cr_expect_eq(tg_tensor_size(b.fields[0], 3), 8);
    const float *px = tg_tensor_data(b.fields[0]);
    for (int i = 0; i < 128 * 64; i++) cr_assert(px[i] >= 0 && px[i] <= 1);
    tg_batch_release(&b);
    tg_loader_free(l);
    tg_dataset_free(all);
    tg_dataset_free(train);
    tg_dataset_free(test);

    cr_expect_null(tg_digits_dataset_new("/nonexistent/digits.csv.gz", TG_DIGITS_ALL));
    cr_expect(tg_last_error() && strstr(tg_last_error(), "/nonexistent/digits.csv.gz"));
    tg_clear_error();
}

/* An augmented image is the original shifted by at most the padding, maybe mirrored, and the
 * same for the same seed. */
Test(data, digits_augmentation)
{
    if (!have_digits()) cr_skip("no %s (python3-sklearn)", TG_DIGITS_DEFAULT_PATH);
    tg_dataset *plain = tg_digits_dataset_new(NULL, TG_DIGITS_TRAIN);
    tg_dataset *aug =
        tg_digits_dataset_new(NULL, TG_DIGITS_TRAIN, .crop_padding = 2, .hflip = true);
    cr_assert(plain && aug, "%s", tg_last_error());
    int changed = 0, flipped = 0;
    for (int i = 0; i < 40; i++) {
        tg_tensor *p[2], *a[2], *a2[2];
        uint64_t seed = tg_data_sample_seed(1, 0, i);
        cr_assert_eq(tg_dataset_sample(plain, i, seed, p), 0);
        cr_assert_eq(tg_dataset_sample(aug, i, seed, a), 0);
        cr_assert_eq(tg_dataset_sample(aug, i, seed, a2), 0);
        const float *pi = tg_tensor_data(p[0]), *ai = tg_tensor_data(a[0]);
        cr_expect_eq(memcmp(ai, tg_tensor_data(a2[0]), 64 * sizeof(float)), 0);
        cr_expect_eq(tg_item(a[1]), tg_item(p[1]));
        bool found = false;
        for (int dy = -2; dy <= 2 && !found; dy++)
            for (int dx = -2; dx <= 2 && !found; dx++)
                for (int f = 0; f < 2 && !found; f++) {
                    bool ok = true;
                    for (int y = 0; y < 8 && ok; y++)
                        for (int x = 0; x < 8 && ok; x++) {
                            int sy = y + dy, sx = (f ? 7 - x : x) + dx;
                            float want =
                                sy >= 0 && sy < 8 && sx >= 0 && sx < 8 ? pi[8 * sy + sx] : 0;
                            ok = ai[8 * y + x] == want;
                        }
                    if (ok) {
                        found = true;
                        changed += dy != 0 || dx != 0 || f;
                        flipped += f;
                    }
                }
        cr_expect(found, "image %d is not a crop/flip of the original", i);
        for (int k = 0; k < 2; k++) {
            tg_release(p[k]);
            tg_release(a[k]);
            tg_release(a2[k]);
        }
    }
    cr_expect_gt(changed, 20);
    cr_expect_gt(flipped, 5);
    tg_dataset_free(plain);
    tg_dataset_free(aug);
}
