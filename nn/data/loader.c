/* The data loader (tg_nn_data.h): batches of a dataset in a sampler's order, filled ahead of
 * the caller by worker threads and delivered in order.
 *
 * An epoch's run: the sampler's indices for the epoch are computed once (the plan); batch k is
 * plan[k*B .. k*B+B). Workers claim batch numbers in increasing order from next_claim, at most
 * `prefetch` ahead of the next batch the caller takes (next_deliver), and put a filled batch in
 * ring slot k % prefetch; the caller waits for its slot. A slot is free again once taken, so a
 * worker claiming k (< next_deliver + prefetch) never finds batch k - prefetch still there.
 * A failed batch stops the claims after it; the batches before it are still delivered, then
 * the caller gets the failure's message. Stopping a run (free, reset, a new epoch or state)
 * sets `stop`, joins the workers (each finishes the batch it fills) and drops what the ring
 * holds. Threads live for one run, as torch's workers do without persistent_workers.
 *
 * Every sample's seed is tg_data_sample_seed(seed, epoch, index), so which thread fills it does
 * not matter: batches are the same for any worker count. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../nn_private.h"
#include "data_internal.h"
#include "ops/to.h"

#define OP "DataLoader"
#define MSG_CAP 1024

enum { SLOT_EMPTY, SLOT_READY, SLOT_FAILED };

typedef struct slot {
    int state;
    int64_t batch; /* the batch number it holds */
    tg_batch b;
    char msg[MSG_CAP]; /* SLOT_FAILED: "sample 17: <message>" */
} slot;

struct tg_loader {
    tg_dataset *ds;
    tg_loader_opts o;
    const tg_sampler *sampler; /* o.sampler, or own */
    tg_sampler *own_sampler;

    int64_t epoch, pos; /* pos: batches delivered in this epoch */
    int64_t *plan;      /* the epoch's indices; plan_epoch says which epoch (-1: none) */
    int64_t plan_len, plan_epoch;
    bool failed;
    char fail_msg[MSG_CAP];
    double wait_s;

    /* The run of the workers; everything below is guarded by mu while it runs. */
    bool running, stop;
    int nthreads;
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, ready_cv;
    int64_t next_claim, next_deliver, fail_batch;
    slot *ring;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int64_t num_batches(const tg_loader *l)
{
    int64_t m = tg_sampler_length(l->sampler), b = l->o.batch_size;
    return l->o.drop_last ? m / b : (m + b - 1) / b;
}

void tg_batch_release(tg_batch *b)
{
    if (!b) return;
    for (int f = 0; f < TG_DATA_MAX_FIELDS; f++) {
        tg_release(b->fields[f]);
        b->fields[f] = NULL;
    }
    b->size = 0;
}

/* ------------------------------------------------------------------ filling one batch */

/* Copies this thread's error into msg (prefixed) and clears it: a worker's error is its own
 * thread's, and the caller re-raises the text on its thread. */
static void take_error(char *msg, const char *what, int64_t n, const char *fallback)
{
    const char *e = tg_last_error();
    snprintf(msg, MSG_CAP, "%s %lld: %s", what, (long long)n, e ? e : fallback);
    tg_clear_error();
}

/* Fills batch k of the current plan into *out (new references, in no scope). 0, or -1 with
 * msg set and this thread's error cleared. Runs on workers and, without them, on the caller. */
static int fill_batch(tg_loader *l, int64_t k, tg_batch *out, char *msg)
{
    const tg_dataset *ds = l->ds;
    int nf = tg_dataset_num_fields(ds);
    int64_t first = k * l->o.batch_size, count = l->plan_len - first;
    if (count > l->o.batch_size) count = l->o.batch_size;
    memset(out, 0, sizeof *out);
    out->size = count;
    out->index = k;
    out->num_fields = nf;

    int token = tg_scope_suspend();
    int64_t bytes[TG_DATA_MAX_FIELDS];
    char *base[TG_DATA_MAX_FIELDS];
    int rc = 0;
    for (int f = 0; f < nf && rc == 0; f++) {
        const tg_data_field *fd = tg_dataset_field(ds, f);
        bytes[f] = tg__data_field_bytes(fd);
        out->fields[f] = tg__data_field_tensor(fd, count);
        if (!out->fields[f]) {
            take_error(msg, "batch", k, "allocation failed");
            rc = -1;
        } else {
            base[f] = tg_tensor_data(out->fields[f]);
        }
    }
    for (int64_t j = 0; j < count && rc == 0; j++) {
        int64_t index = l->plan[first + j];
        void *slots[TG_DATA_MAX_FIELDS];
        for (int f = 0; f < nf; f++) slots[f] = base[f] + j * bytes[f];
        uint64_t seed = tg_data_sample_seed(l->o.seed, l->epoch, index);
        if (tg_dataset_get(ds, index, slots, seed) != 0) {
            take_error(msg, "sample", index, "the dataset's get function failed without a message");
            rc = -1;
        }
    }
    if (rc == 0 && l->o.device.type != TG_CPU) {
        for (int f = 0; f < nf && rc == 0; f++) {
            tg_tensor *d = tg_to_device(out->fields[f], l->o.device);
            if (!d) {
                take_error(msg, "batch", k, "the copy to the device failed");
                rc = -1;
            } else {
                tg_release(out->fields[f]);
                out->fields[f] = d;
            }
        }
    }
    tg_scope_resume(token);
    if (rc != 0) tg_batch_release(out);
    return rc;
}

/* The sampler's indices for the current epoch, once per epoch. */
static int make_plan(tg_loader *l)
{
    if (l->plan_epoch == l->epoch) return 0;
    l->plan_len = tg_sampler_length(l->sampler);
    free(l->plan);
    l->plan = malloc((size_t)(l->plan_len > 0 ? l->plan_len : 1) * sizeof *l->plan);
    if (!l->plan) return tg_set_error(OP, "out of memory"), -1;
    if (tg_sampler_indices(l->sampler, l->epoch, l->plan) != 0) {
        free(l->plan);
        l->plan = NULL;
        l->plan_epoch = -1;
        return -1;
    }
    l->plan_epoch = l->epoch;
    return 0;
}

/* ------------------------------------------------------------------ workers */

static void *worker_main(void *arg)
{
    tg_loader *l = arg;
    int64_t nb = num_batches(l);
    pthread_mutex_lock(&l->mu);
    for (;;) {
        if (l->stop || l->next_claim >= nb || l->next_claim > l->fail_batch) break;
        if (l->next_claim >= l->next_deliver + l->o.prefetch) {
            pthread_cond_wait(&l->work_cv, &l->mu);
            continue;
        }
        int64_t k = l->next_claim++;
        pthread_mutex_unlock(&l->mu);

        tg_batch b;
        char msg[MSG_CAP];
        int rc = fill_batch(l, k, &b, msg);

        pthread_mutex_lock(&l->mu);
        slot *s = &l->ring[k % l->o.prefetch];
        s->batch = k;
        if (rc == 0) {
            s->b = b;
            s->state = SLOT_READY;
        } else {
            memcpy(s->msg, msg, MSG_CAP);
            s->state = SLOT_FAILED;
            if (k < l->fail_batch) l->fail_batch = k;
            pthread_cond_broadcast(&l->work_cv); /* the others stop claiming */
        }
        pthread_cond_broadcast(&l->ready_cv);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

static int start_run(tg_loader *l)
{
    l->stop = false;
    l->next_claim = l->next_deliver = l->pos;
    l->fail_batch = INT64_MAX;
    for (int i = 0; i < l->o.prefetch; i++) l->ring[i].state = SLOT_EMPTY;
    l->nthreads = 0;
    for (int i = 0; i < l->o.num_workers; i++) {
        if (pthread_create(&l->threads[i], NULL, worker_main, l) != 0) break;
        l->nthreads++;
    }
    if (l->nthreads == 0) return tg_set_error(OP, "cannot start a worker thread"), -1;
    l->running = true;
    return 0;
}

/* Stops the workers and drops the batches in flight; nothing happens without a run. */
static void stop_run(tg_loader *l)
{
    if (!l->running) return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->work_cv);
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < l->nthreads; i++) pthread_join(l->threads[i], NULL);
    for (int i = 0; i < l->o.prefetch; i++) {
        if (l->ring[i].state == SLOT_READY) tg_batch_release(&l->ring[i].b);
        l->ring[i].state = SLOT_EMPTY;
    }
    l->nthreads = 0;
    l->running = false;
}

/* Waits for batch pos from the workers. 1 with *out, or -1 with msg. */
static int take_batch(tg_loader *l, tg_batch *out, char *msg)
{
    pthread_mutex_lock(&l->mu);
    slot *s = &l->ring[l->pos % l->o.prefetch];
    while (s->state == SLOT_EMPTY || s->batch != l->pos) pthread_cond_wait(&l->ready_cv, &l->mu);
    int rc = 1;
    if (s->state == SLOT_READY) {
        *out = s->b;
        memset(&s->b, 0, sizeof s->b);
        l->next_deliver++;
        pthread_cond_broadcast(&l->work_cv);
    } else {
        memcpy(msg, s->msg, MSG_CAP);
        rc = -1;
    }
    s->state = SLOT_EMPTY;
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* ------------------------------------------------------------------ the public calls */

static int make_own_sampler(tg_loader *l)
{
    tg_sampler_free(l->own_sampler);
    l->own_sampler =
        tg_sampler_new(tg_dataset_length(l->ds), .shuffle = l->o.shuffle, .seed = l->o.seed);
    l->sampler = l->own_sampler;
    return l->own_sampler ? 0 : -1;
}

static int check_opts(const tg_dataset *ds, tg_loader_opts *o)
{
    if (!ds) return tg_set_error(OP, "the dataset is NULL"), -1;
    if (o->batch_size <= 0)
        return tg_set_error(OP, "batch_size must be positive, got %lld", (long long)o->batch_size),
               -1;
    if (o->num_workers < 0)
        return tg_set_error(OP, "num_workers must be >= 0, got %d", o->num_workers), -1;
    if (o->prefetch < 0) return tg_set_error(OP, "prefetch must be >= 0, got %d", o->prefetch), -1;
    if (o->prefetch == 0) o->prefetch = o->num_workers > 0 ? 2 * o->num_workers : 1;
    if (o->device.type == TG_CUDA && o->device.index >= tg_cuda_device_count())
        return tg_set_error(OP, "device cuda:%d is not available (%d CUDA devices)",
                            o->device.index, tg_cuda_device_count()),
               -1;
    return 0;
}

tg_loader *tg_loader_new_fn(tg_dataset *ds, tg_loader_opts o)
{
    if (check_opts(ds, &o) != 0) return NULL;
    tg_loader *l = calloc(1, sizeof *l);
    if (!l) return tg_set_error(OP, "out of memory");
    l->ds = ds;
    l->o = o;
    l->plan_epoch = -1;
    l->ring = calloc((size_t)o.prefetch, sizeof *l->ring);
    l->threads = calloc((size_t)(o.num_workers > 0 ? o.num_workers : 1), sizeof *l->threads);
    if (!l->ring || !l->threads) {
        free(l->ring);
        free(l->threads);
        free(l);
        return tg_set_error(OP, "out of memory");
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->work_cv, NULL);
    pthread_cond_init(&l->ready_cv, NULL);
    l->sampler = o.sampler;
    if (!o.sampler && make_own_sampler(l) != 0) {
        tg_loader_free(l);
        return NULL;
    }
    return l;
}

void tg_loader_free(tg_loader *l)
{
    if (!l) return;
    stop_run(l);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->work_cv);
    pthread_cond_destroy(&l->ready_cv);
    tg_sampler_free(l->own_sampler);
    free(l->plan);
    free(l->ring);
    free(l->threads);
    free(l);
}

static int next_batch(tg_loader *l, tg_batch *out)
{
    if (l->failed) return tg_set_error(OP, "%s", l->fail_msg), -1;
    if (l->pos >= num_batches(l)) {
        stop_run(l);
        l->epoch++;
        l->pos = 0;
        return 0;
    }
    if (make_plan(l) != 0) return -1;
    char msg[MSG_CAP];
    int rc;
    if (l->o.num_workers == 0) {
        rc = fill_batch(l, l->pos, out, msg) == 0 ? 1 : -1;
    } else {
        if (!l->running && start_run(l) != 0) return -1;
        rc = take_batch(l, out, msg);
    }
    if (rc < 0) {
        stop_run(l);
        l->failed = true;
        memcpy(l->fail_msg, msg, MSG_CAP);
        return tg_set_error(OP, "%s", l->fail_msg), -1;
    }
    l->pos++;
    return 1;
}

int tg_loader_next(tg_loader *l, tg_batch *out)
{
    if (!l || !out) return tg_set_error(OP, "the loader or batch is NULL"), -1;
    memset(out, 0, sizeof *out);
    double t0 = now_s();
    int rc = next_batch(l, out);
    l->wait_s += now_s() - t0;
    return rc;
}

int64_t tg_loader_num_batches(const tg_loader *l) { return l ? num_batches(l) : 0; }
int64_t tg_loader_epoch(const tg_loader *l) { return l ? l->epoch : 0; }
double tg_loader_wait_seconds(const tg_loader *l) { return l ? l->wait_s : 0; }

void tg_loader_reset(tg_loader *l)
{
    if (!l) return;
    stop_run(l);
    l->pos = 0;
    l->failed = false;
}

int tg_loader_set_epoch(tg_loader *l, int64_t epoch)
{
    if (!l) return tg_set_error(OP, "the loader is NULL"), -1;
    return tg_loader_set_state(l, (tg_loader_state){ epoch, 0, l->o.seed });
}

tg_loader_state tg_loader_get_state(const tg_loader *l)
{
    return l ? (tg_loader_state){ l->epoch, l->pos, l->o.seed } : (tg_loader_state){ 0, 0, 0 };
}

int tg_loader_set_state(tg_loader *l, tg_loader_state st)
{
    if (!l) return tg_set_error(OP, "the loader is NULL"), -1;
    if (st.epoch < 0)
        return tg_set_error(OP, "epoch must be >= 0, got %lld", (long long)st.epoch), -1;
    int64_t nb = num_batches(l); /* the seed does not change it */
    if (st.batch < 0 || st.batch > nb)
        return tg_set_error(OP, "batch %lld out of range (an epoch has %lld batches)",
                            (long long)st.batch, (long long)nb),
               -1;
    stop_run(l);
    if (st.seed != l->o.seed) {
        uint64_t old = l->o.seed;
        l->o.seed = st.seed;
        if (l->own_sampler && make_own_sampler(l) != 0) {
            l->o.seed = old;
            return -1;
        }
        l->plan_epoch = -1;
    }
    l->epoch = st.epoch;
    l->pos = st.batch;
    l->failed = false;
    return 0;
}

static void key(char *buf, size_t cap, const char *prefix, const char *name)
{
    snprintf(buf, cap, "%s%s", prefix ? prefix : "", name);
}

int tg_loader_state_save(const tg_loader *l, tg_state *s, const char *prefix)
{
    if (!l || !s) return tg_set_error(OP, "the loader or state is NULL"), -1;
    tg_loader_state st = tg_loader_get_state(l);
    char k[256];
    key(k, sizeof k, prefix, "epoch");
    if (tg_state_put_int(s, k, st.epoch) != 0) return -1;
    key(k, sizeof k, prefix, "batch");
    if (tg_state_put_int(s, k, st.batch) != 0) return -1;
    key(k, sizeof k, prefix, "seed");
    return tg_state_put_int(s, k, (int64_t)st.seed);
}

int tg_loader_state_load(tg_loader *l, const tg_state *s, const char *prefix)
{
    if (!l || !s) return tg_set_error(OP, "the loader or state is NULL"), -1;
    tg_loader_state st;
    int64_t seed;
    char k[256];
    key(k, sizeof k, prefix, "epoch");
    if (tg_state_get_int(s, k, &st.epoch) != 0) return -1;
    key(k, sizeof k, prefix, "batch");
    if (tg_state_get_int(s, k, &st.batch) != 0) return -1;
    key(k, sizeof k, prefix, "seed");
    if (tg_state_get_int(s, k, &seed) != 0) return -1;
    st.seed = (uint64_t)seed;
    return tg_loader_set_state(l, st);
}
