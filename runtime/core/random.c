/* Random numbers: xoshiro256** per generator, seeded through splitmix64, one mutex per
 * generator (kernels that fill many elements use tg__random_u64_n to take it once).
 * Normals use Box-Muller; the second value of each pair is kept for the next call. */
#include "core/rt_private.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct tg_generator {
    uint64_t s[4];
    bool has_spare;
    double spare;
    pthread_mutex_t lock;
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void seed_locked(tg_generator *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++) g->s[i] = splitmix64(&seed);
    g->has_spare = false;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t next_locked(tg_generator *g)
{
    uint64_t *s = g->s;
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static inline double to_unit(uint64_t x) { return (double)(x >> 11) * 0x1.0p-53; }

tg_generator *tg_generator_new(uint64_t seed)
{
    tg_generator *g = malloc(sizeof *g);
    if (!g) return tg__error("generator_new", "out of memory");
    pthread_mutex_init(&g->lock, NULL);
    seed_locked(g, seed);
    return g;
}

void tg_generator_free(tg_generator *g)
{
    if (!g || g == tg__default_generator()) return;
    pthread_mutex_destroy(&g->lock);
    free(g);
}

void tg_generator_manual_seed(tg_generator *g, uint64_t seed)
{
    if (!g) return;
    pthread_mutex_lock(&g->lock);
    seed_locked(g, seed);
    pthread_mutex_unlock(&g->lock);
}

static tg_generator default_gen = { .lock = PTHREAD_MUTEX_INITIALIZER };
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void default_init(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    seed_locked(&default_gen, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
                                  ((uint64_t)getpid() << 32));
}

tg_generator *tg__default_generator(void)
{
    pthread_once(&default_once, default_init);
    return &default_gen;
}

void tg_manual_seed(uint64_t seed) { tg_generator_manual_seed(tg__default_generator(), seed); }

static tg_generator *gen_or_default(tg_generator *g) { return g ? g : tg__default_generator(); }

uint64_t tg__random_u64(tg_generator *g)
{
    g = gen_or_default(g);
    pthread_mutex_lock(&g->lock);
    uint64_t r = next_locked(g);
    pthread_mutex_unlock(&g->lock);
    return r;
}

void tg__random_u64_n(tg_generator *g, uint64_t *out, int64_t n)
{
    g = gen_or_default(g);
    pthread_mutex_lock(&g->lock);
    for (int64_t i = 0; i < n; i++) out[i] = next_locked(g);
    pthread_mutex_unlock(&g->lock);
}

double tg__random_uniform(tg_generator *g) { return to_unit(tg__random_u64(g)); }

double tg__random_normal(tg_generator *g)
{
    g = gen_or_default(g);
    pthread_mutex_lock(&g->lock);
    double r;
    if (g->has_spare) {
        g->has_spare = false;
        r = g->spare;
    } else {
        double u1 = 1.0 - to_unit(next_locked(g)); /* (0, 1]: log is finite */
        double u2 = to_unit(next_locked(g));
        double rad = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
        r = rad * cos(th);
        g->spare = rad * sin(th);
        g->has_spare = true;
    }
    pthread_mutex_unlock(&g->lock);
    return r;
}

/* The state as bytes: s[0..3] little-endian, has_spare, spare's bits. */
enum { STATE_BYTES = 4 * 8 + 1 + 8 };

tg_tensor *tg_get_rng_state(tg_generator *g)
{
    g = gen_or_default(g);
    uint8_t b[STATE_BYTES];
    pthread_mutex_lock(&g->lock);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 8; k++) b[8 * i + k] = (uint8_t)(g->s[i] >> (8 * k));
    b[32] = g->has_spare;
    uint64_t bits;
    memcpy(&bits, &g->spare, sizeof bits);
    for (int k = 0; k < 8; k++) b[33 + k] = (uint8_t)(bits >> (8 * k));
    pthread_mutex_unlock(&g->lock);
    return tg_tensor_from_data(b, (int64_t[]){ STATE_BYTES }, 1, TG_UINT8);
}

int tg_set_rng_state(tg_generator *g, const tg_tensor *state)
{
    if (!state || tg_tensor_dtype(state) != TG_UINT8 || tg_tensor_numel(state) != STATE_BYTES ||
        tg_tensor_device(state).type != TG_CPU || !tg_tensor_is_contiguous(state)) {
        tg__error("set_rng_state",
                  "expected a contiguous CPU uint8 tensor of %d bytes (from "
                  "tg_get_rng_state)",
                  STATE_BYTES);
        return -1;
    }
    const uint8_t *b = tg_tensor_data(state);
    if (b[32] > 1) {
        tg__error("set_rng_state", "not a generator state: byte 32 is %u", b[32]);
        return -1;
    }
    g = gen_or_default(g);
    pthread_mutex_lock(&g->lock);
    for (int i = 0; i < 4; i++) {
        g->s[i] = 0;
        for (int k = 0; k < 8; k++) g->s[i] |= (uint64_t)b[8 * i + k] << (8 * k);
    }
    g->has_spare = b[32];
    uint64_t bits = 0;
    for (int k = 0; k < 8; k++) bits |= (uint64_t)b[33 + k] << (8 * k);
    memcpy(&g->spare, &bits, sizeof bits);
    pthread_mutex_unlock(&g->lock);
    return 0;
}
