/* CUDA random fills: uniform_, normal_, random_, with the CPU kernels' checks, distributions
 * and formulas (kernels/cpu/factory.c, factory_checks.h) and a counter-based generator.
 *
 * Stream: each call draws one 64-bit key from the tg_generator (the default one when NULL), so
 * a sequence of calls is reproducible after tg_manual_seed and every call gets fresh numbers.
 * Elements are taken in groups of four (row-major order); group g runs Philox4x32-10
 * (philox.cuh) keyed by that draw on the counters (g, 0) and (g, 1), and gets four 64-bit
 * words r[0..3], one per element: uniform_ and random_ use r[j] for element j as the CPU uses
 * its j-th draw, normal_ runs Box-Muller on (r[0], r[1]) and (r[2], r[3]) as the CPU does on
 * its pairs. The values therefore follow the CPU's formulas exactly; the sequences are not the
 * CPU's (nor PyTorch's). Any strides: element i is written through the tensor's offsets. */
#include "tg_cuda.cuh"
#include "factory_checks.h"
#include "tg_kutil.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/normal.h"
#include "kernels/random.h"
#include "kernels/uniform.h"
#include "philox.cuh"

typedef enum tg_cuda_rand_kind {
    TG_CUDA_RAND_UNIFORM,
    TG_CUDA_RAND_NORMAL,
    TG_CUDA_RAND_INT
} tg_cuda_rand_kind;

struct tg_cuda_rand_args {
    tg_cuda_rand_kind kind;
    tg_dtype t;
    int64_t n;
    uint64_t seed;
    double a, b;    /* uniform: from, to; normal: mean, std */
    int digits;     /* uniform: mantissa digits of t */
    int64_t from;   /* random_ */
    uint64_t range; /* random_: 0 is 2^64 */
};

__global__ void tg__cuda_rand_kernel(char *base, tg_cuda_offsets<1> oc, tg_cuda_rand_args a)
{
    const int64_t groups = (a.n + 3) / 4;
    const int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += step) {
        const uint2 key = tg__philox_key(a.seed);
        const uint32_t glo = (uint32_t)g, ghi = (uint32_t)((uint64_t)g >> 32);
        const uint4 w0 = tg__philox4x32_10(make_uint4(glo, ghi, 0, 0), key);
        const uint4 w1 = tg__philox4x32_10(make_uint4(glo, ghi, 1, 0), key);
        uint64_t r[4] = {
            ((uint64_t)w0.x << 32) | w0.y,
            ((uint64_t)w0.z << 32) | w0.w,
            ((uint64_t)w1.x << 32) | w1.y,
            ((uint64_t)w1.z << 32) | w1.w,
        };
        double v[4];
        if (a.kind == TG_CUDA_RAND_NORMAL) {
            for (int p = 0; p < 2; p++) {
                double u1 = 1.0 - (double)(r[2 * p] >> 11) * 0x1.0p-53; /* (0, 1]: log finite */
                double u2 = (double)(r[2 * p + 1] >> 11) * 0x1.0p-53;
                double rad = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
                v[2 * p] = __dadd_rn(a.a, __dmul_rn(__dmul_rn(a.b, rad), cos(th)));
                v[2 * p + 1] = __dadd_rn(a.a, __dmul_rn(__dmul_rn(a.b, rad), sin(th)));
            }
        }
        for (int j = 0; j < 4; j++) {
            const int64_t i = g * 4 + j;
            if (i >= a.n) break;
            int64_t off[1];
            oc.get(i, off);
            char *p = base + off[0];
            if (a.kind == TG_CUDA_RAND_UNIFORM) {
                double u = (double)(r[j] >> (64 - a.digits)) * ldexp(1.0, -a.digits); /* [0, 1) */
                tg__cuda_store(
                    p, a.t, __dadd_rn(__dmul_rn(u, a.b - a.a), a.a)); /* unfused, as on the CPU */
            } else if (a.kind == TG_CUDA_RAND_NORMAL) {
                tg__cuda_store(p, a.t, v[j]);
            } else {
                uint64_t o = a.range ? r[j] % a.range : r[j];
                int64_t x = (int64_t)((uint64_t)a.from + o);
                if (tg__pw_kind(a.t) != TG_PW_I64) tg__cuda_store(p, a.t, (double)x);
                else tg__cuda_store(p, a.t, x);
            }
        }
    }
}

/* Draws the call's key and launches. */
static tg_tensor *rand_run(const char *op, tg_tensor *self, tg_cuda_rand_args a,
                           tg_generator *generator)
{
    if (self->device.type != TG_CUDA) {
        tg__error(op, "Expected a CUDA tensor, got a %s one", "cpu");
        return NULL;
    }
    a.t = self->dtype;
    a.n = tg__numel(self);
    a.seed = tg__random_u64(generator ? generator : tg__default_generator());
    if (a.n > 0) {
        const int device = tg__cuda_device_of(self);
        tg_cuda_device_guard guard(device);
        tg__cuda_rand_kernel<<<tg__cuda_blocks((a.n + 3) / 4, TG_CUDA_THREADS), TG_CUDA_THREADS, 0,
                               tg__cuda_stream(device)>>>(tg__k_data(self),
                                                          tg__cuda_offsets_from_tensor(self), a);
        if (tg__cuda_launch_ok(op) != 0) return NULL;
    }
    tg__bump_version(self);
    return tg_retain(self);
}

static tg_cuda_rand_args rand_args(tg_cuda_rand_kind kind)
{
    tg_cuda_rand_args a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    return a;
}

/* uniform_: self ~ U[from, to), floating dtypes only. */
extern "C" tg_tensor *tg__cuda_uniform_(tg_tensor *self, double from, double to,
                                        tg_generator *generator)
{
    if (tg__uniform_check(self->dtype, from, to) != 0) return NULL;
    tg_cuda_rand_args a = rand_args(TG_CUDA_RAND_UNIFORM);
    a.a = from;
    a.b = to;
    a.digits = tg__random_float_digits(self->dtype);
    return rand_run("uniform_", self, a, generator);
}

/* normal_: self ~ N(mean, std^2), floating dtypes only. */
extern "C" tg_tensor *tg__cuda_normal_(tg_tensor *self, double mean, double std,
                                       tg_generator *generator)
{
    if (tg__normal_check(self->dtype, std, "cuda") != 0) return NULL;
    tg_cuda_rand_args a = rand_args(TG_CUDA_RAND_NORMAL);
    a.a = mean;
    a.b = std;
    return rand_run("normal_", self, a, generator);
}

/* random_.from: uniform integers in [from, to), or up to the dtype's maximum when to is None. */
extern "C" tg_tensor *tg__cuda_random_(tg_tensor *self, int64_t from, tg_opt_int to,
                                       tg_generator *generator)
{
    tg_cuda_rand_args a = rand_args(TG_CUDA_RAND_INT);
    if (tg__random_range(self->dtype, tg__k_meta_name(self->dtype), from, to, "cuda", &a.range) !=
        0)
        return NULL;
    a.from = from;
    return rand_run("random_", self, a, generator);
}
