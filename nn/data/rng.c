/* The data loader's random numbers: xoshiro256** seeded through splitmix64 (the generator's
 * authors' recommendation), and the per-sample seed, a splitmix64 hash of (seed, epoch, index).
 * Nothing here touches the library's own generators, so a dataset's randomness never depends
 * on what else the program draws, nor on the thread that fills the sample. */
#include "tg_nn_data.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void tg_data_rng_seed(tg_data_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

uint64_t tg_data_rng_next(tg_data_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double tg_data_rng_uniform(tg_data_rng *r)
{
    return (double)(tg_data_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Lemire's rejection on the top bits would be faster; a plain rejection of the incomplete last
 * block of 2^64 keeps it obviously unbiased. */
int64_t tg_data_rng_below(tg_data_rng *r, int64_t n)
{
    if (n <= 0) return 0;
    uint64_t un = (uint64_t)n, limit = UINT64_MAX - UINT64_MAX % un, x;
    do {
        x = tg_data_rng_next(r);
    } while (x >= limit);
    return (int64_t)(x % un);
}

uint64_t tg_data_sample_seed(uint64_t seed, int64_t epoch, int64_t index)
{
    uint64_t x = seed;
    uint64_t h = splitmix64(&x);
    x = h ^ (uint64_t)epoch;
    h = splitmix64(&x);
    x = h ^ (uint64_t)index;
    return splitmix64(&x);
}
