/* The random fills: uniform_, normal_, random_ (CUDA's are kernels/cuda/random.cu).
 *
 * Each writes into self (any dtype and strides) and returns a new reference to it: a contiguous
 * buffer is filled from the generator (one lock per batch of 256 draws) and copied into a
 * non-contiguous self; the sequences are this library's own (not PyTorch's Philox/mt19937
 * streams), the distributions and range checks are PyTorch's. */
#include "core/core.h"
#include "pointwise_convert.h"
#include "tg_kutil.h"
#include "factory_checks.h"

#include "kernels/normal.h"
#include "kernels/random.h"
#include "kernels/uniform.h"

/* ------------------------------------------------------------------ random fills */

/* Calls fn for batches of up to 256 contiguous elements of a tensor shaped like self, then
 * copies into self when it is not contiguous. fn(dst, dtype, n, r, state) writes n elements
 * from the 64-bit draws r[]: n of them, or n rounded up to even when `pairs` (Box-Muller). */
typedef void (*gen_batch_fn)(char *dst, tg_dtype t, int64_t n, const uint64_t *r,
                             const void *state);

static tg_tensor *random_fill(const char *op, tg_tensor *self, tg_generator *gen, bool pairs,
                              gen_batch_fn fn, const void *state)
{
    const bool direct = tg__is_contiguous(self);
    tg_tensor *buf = direct ? tg_retain(self) : tg__empty_like(op, self, self->dtype);
    if (!buf) return NULL;
    const int64_t n = tg__numel(buf), es = (int64_t)tg_dtype_size(buf->dtype);
    char *d = tg__k_data(buf);
    uint64_t r[256];
    for (int64_t i = 0; i < n; i += 256) {
        int64_t k = n - i < 256 ? n - i : 256;
        tg__random_u64_n(gen, r, pairs ? (k + 1) / 2 * 2 : k);
        fn(d + i * es, buf->dtype, k, r, state);
    }
    int rc = 0;
    if (direct) tg__bump_version(self);
    else rc = tg__copy_into(op, self, buf);
    tg_release(buf);
    return rc == 0 ? tg_retain(self) : NULL;
}

typedef struct uniform_state {
    double from, to;
} uniform_state;

static void uniform_batch(char *dst, tg_dtype t, int64_t n, const uint64_t *r, const void *vstate)
{
    const uniform_state *s = vstate;
    const int digits = tg__random_float_digits(t);
    const double scale = ldexp(1.0, -digits);
    const int64_t es = (int64_t)tg_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(r[i] >> (64 - digits)) * scale; /* [0, 1) on the dtype's grid */
        tg__pw_store_f64(dst + i * es, t, u * (s->to - s->from) + s->from);
    }
}

/* uniform_: self ~ U[from, to), floating dtypes only. */
tg_tensor *tg__cpu_uniform_(tg_tensor *self, double from, double to, tg_generator *generator)
{
    if (tg__uniform_check(self->dtype, from, to) != 0) return NULL;
    uniform_state s = { from, to };
    return random_fill("uniform_", self, generator, false, uniform_batch, &s);
}

typedef struct normal_state {
    double mean, std;
} normal_state;

/* Box-Muller on pairs of uniform draws; the odd element of a batch uses its own pair. */
static void normal_batch(char *dst, tg_dtype t, int64_t n, const uint64_t *r, const void *vstate)
{
    const normal_state *s = vstate;
    const int64_t npairs = (n + 1) / 2;
    const int64_t es = (int64_t)tg_dtype_size(t);
    for (int64_t p = 0; p < npairs; p++) {
        double u1 = 1.0 - (double)(r[2 * p] >> 11) * 0x1.0p-53; /* (0, 1]: log finite */
        double u2 = (double)(r[2 * p + 1] >> 11) * 0x1.0p-53;
        double rad = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
        tg__pw_store_f64(dst + 2 * p * es, t, s->mean + s->std * rad * cos(th));
        if (2 * p + 1 < n)
            tg__pw_store_f64(dst + (2 * p + 1) * es, t, s->mean + s->std * rad * sin(th));
    }
}

/* normal_: self ~ N(mean, std^2), floating dtypes only. */
tg_tensor *tg__cpu_normal_(tg_tensor *self, double mean, double std, tg_generator *generator)
{
    if (tg__normal_check(self->dtype, std, "cpu") != 0) return NULL;
    normal_state s = { mean, std };
    return random_fill("normal_", self, generator, true, normal_batch, &s);
}

typedef struct int_state {
    int64_t from;
    uint64_t range;
} int_state;

/* from + r mod range (range 0 stands for 2^64: every 64-bit value). */
static void int_batch(char *dst, tg_dtype t, int64_t n, const uint64_t *r, const void *vstate)
{
    const int_state *s = vstate;
    const int64_t es = (int64_t)tg_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t off = s->range ? r[i] % s->range : r[i];
        int64_t v = (int64_t)((uint64_t)s->from + off);
        if (tg_dtype_is_floating(t)) tg__pw_store_f64(dst + i * es, t, (double)v);
        else tg__pw_store_i64(dst + i * es, t, v);
    }
}

/* random_.from: self ~ uniform integers in [from, to), or [from, max of the dtype] when to is
 * None (2^mantissa digits for floating dtypes); from = INT64_MIN with to None means every
 * 64-bit value (int64 and floating dtypes only). */
tg_tensor *tg__cpu_random_(tg_tensor *self, int64_t from, tg_opt_int to, tg_generator *generator)
{
    int_state s = { from, 0 };
    if (tg__random_range(self->dtype, tg__k_meta_name(self->dtype), from, to, "cpu", &s.range) != 0)
        return NULL;
    return random_fill("random_", self, generator, false, int_batch, &s);
}
