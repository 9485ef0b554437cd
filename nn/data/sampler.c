/* Samplers: the indices one rank visits in an epoch (tg_nn_data.h). The order is the base list
 * (0..n-1 or a subset), permuted by Fisher-Yates with a generator seeded from seed + epoch when
 * shuffling, as torch seeds its DistributedSampler's randperm; the rank split then follows
 * DistributedSampler exactly: the padded list is order[k % n] for k < total, and rank r takes
 * k = r, r + world, ... So out[j] = order[(rank + j * world) % n]. */
#include <stdlib.h>
#include <string.h>

#include "../nn_private.h"

struct tg_sampler {
    int64_t n;
    int64_t *base; /* the subset, or NULL for 0..n-1 */
    tg_sampler_opts o;
    int64_t per_rank; /* torch's num_samples */
};

tg_sampler *tg_sampler_new_fn(int64_t n, const int64_t *subset, tg_sampler_opts o)
{
    const char *op = "Sampler";
    if (o.world_size == 0) o.world_size = 1;
    if (n < 0)
        return tg_set_error(op, "the number of indices must be >= 0, got %lld", (long long)n);
    if (o.world_size < 0)
        return tg_set_error(op, "world_size must be positive, got %d", o.world_size);
    if (o.rank < 0 || o.rank >= o.world_size)
        return tg_set_error(op, "Invalid rank %d, rank should be in the interval [0, %d]", o.rank,
                            o.world_size - 1);
    tg_sampler *s = calloc(1, sizeof *s);
    if (!s) return tg_set_error(op, "out of memory");
    if (subset && n > 0) {
        s->base = malloc((size_t)n * sizeof *s->base);
        if (!s->base) {
            free(s);
            return tg_set_error(op, "out of memory");
        }
        memcpy(s->base, subset, (size_t)n * sizeof *s->base);
    }
    s->n = n;
    s->o = o;
    int64_t w = o.world_size;
    s->per_rank = o.drop_last ? n / w : (n + w - 1) / w;
    return s;
}

void tg_sampler_free(tg_sampler *s)
{
    if (!s) return;
    free(s->base);
    free(s);
}

int64_t tg_sampler_length(const tg_sampler *s) { return s ? s->per_rank : 0; }

int tg_sampler_indices(const tg_sampler *s, int64_t epoch, int64_t *out)
{
    if (!s || !out) return tg_set_error("Sampler", "the sampler or output is NULL"), -1;
    if (s->per_rank == 0) return 0;
    int64_t n = s->n, w = s->o.world_size;
    int64_t *order = malloc((size_t)n * sizeof *order);
    if (!order) return tg_set_error("Sampler", "out of memory"), -1;
    for (int64_t i = 0; i < n; i++) order[i] = s->base ? s->base[i] : i;
    if (s->o.shuffle) {
        tg_data_rng r;
        tg_data_rng_seed(&r, s->o.seed + (uint64_t)epoch);
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = tg_data_rng_below(&r, i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
    for (int64_t j = 0; j < s->per_rank; j++) out[j] = order[(s->o.rank + j * w) % n];
    free(order);
    return 0;
}
