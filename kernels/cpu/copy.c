/* copy_: self[...] = src, broadcasting src to self's shape and converting any dtype to any
 * dtype, with any strides on either side.
 *
 *   self (written in place, keeps its shape and dtype), src (broadcastable to self)
 *
 * Conversions follow PyTorch's static_cast chain (see tg__pw_convert): float -> integer
 * truncates (x86 results out of range: 300.0 -> uint8 is 44), float64 -> float16 rounds
 * through float32, anything -> bool is != 0.
 *
 * Paths: (1) same dtype, both contiguous, same shape: memcpy split across the threads;
 * (2) same dtype otherwise: a strided move by element size; (3) float32 <-> float64
 * contiguous: typed loops; (4) the reference: per-element tg__pw_convert. */
#include "core/core.h"
#include "pointwise_loops.h"
#include "copy_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/copy.h"

typedef struct copy_ctx {
    tg_dtype dst, src;
} copy_ctx;

/* data[0] = destination, data[1] = source. */
static void copy_ref_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const copy_ctx *c = vctx;
    char *d = data[0];
    const char *s = data[1];
    for (int64_t i = 0; i < n; i++, d += strides[0], s += strides[1])
        tg__pw_convert(d, c->dst, s, c->src);
}

/* Same dtype: move elements by size; contiguous runs are one memcpy. */
static void copy_same_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const copy_ctx *c = vctx;
    const int64_t es = (int64_t)tg_dtype_size(c->dst);
    const int64_t ds = strides[0], ss = strides[1];
    char *d = data[0];
    const char *s = data[1];
    if (ds == es && ss == es) {
        memcpy(d, s, (size_t)(n * es));
        return;
    }
    switch (es) {
    case 1:
        for (int64_t i = 0; i < n; i++) d[i * ds] = s[i * ss];
        break;
    case 2:
        for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 2);
        break;
    case 4:
        for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 4);
        break;
    default:
        for (int64_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, 8);
        break;
    }
}

/* float32 <-> float64 (ctx's dst and src): typed loops over contiguous runs. */
static void copy_f32_f64_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const copy_ctx *c = vctx;
    if (strides[0] != (int64_t)tg_dtype_size(c->dst) ||
        strides[1] != (int64_t)tg_dtype_size(c->src))
        copy_ref_loop(data, strides, n, vctx);
    else if (c->dst == TG_FLOAT64) {
        double *d = (double *)data[0];
        const float *s = (const float *)data[1];
#pragma omp simd
        for (int64_t i = 0; i < n; i++) d[i] = s[i];
    } else {
        float *d = (float *)data[0];
        const double *s = (const double *)data[1];
#pragma omp simd
        for (int64_t i = 0; i < n; i++) d[i] = (float)s[i];
    }
}

/* Path (1): the bytes of a contiguous tensor, in chunks of at least 1 MiB per thread. */
typedef struct memcpy_ctx {
    char *dst;
    const char *src;
} memcpy_ctx;

static void memcpy_chunk(int64_t b, int64_t e, void *vctx)
{
    const memcpy_ctx *c = vctx;
    memcpy(c->dst + b, c->src + b, (size_t)(e - b));
}

/* copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!) */
tg_tensor *tg__cpu_copy_(tg_tensor *self, tg_tensor *src, bool non_blocking)
{
    (void)non_blocking;
    tg_tensor *res; /* a device copy: the runtime moves bytes through the device backend */
    if (tg__copy_settled(self, src, self->device.type != TG_CPU || src->device.type != TG_CPU,
                         &res))
        return res;
    if (!tg__pw_force_reference && self->dtype == src->dtype && tg__same_sizes(self, src) &&
        tg__is_contiguous(self) && tg__is_contiguous(src)) {
        memcpy_ctx mc = { (char *)tg_tensor_data(self), (const char *)tg_tensor_data(src) };
        int64_t nbytes = tg__numel(self) * (int64_t)tg_dtype_size(self->dtype);
        if (mc.dst != mc.src && nbytes > 0) tg__parallel_for(nbytes, 1 << 20, memcpy_chunk, &mc);
        tg__bump_version(self);
        return tg_retain(self);
    }
    if (!tg__pw_force_reference && tg__copy_transposed_2d(self, src)) { /* contiguous() of a t() */
        tg__bump_version(self);
        return tg_retain(self);
    }
    tg_iter it;
    if (tg__copy_iter_build(&it, self, src, TG_ITER_NO_INPUT_CAST) != 0) return NULL;
    copy_ctx ctx = { .dst = it.dtypes[0], .src = it.dtypes[1] };
    tg_iter_loop1d loop = copy_ref_loop;
    if (!tg__pw_force_reference) {
        if (ctx.dst == ctx.src) loop = copy_same_loop;
        else if ((ctx.dst == TG_FLOAT64 && ctx.src == TG_FLOAT32) ||
                 (ctx.dst == TG_FLOAT32 && ctx.src == TG_FLOAT64))
            loop = copy_f32_f64_loop;
    }
    tg__iter_for_each(&it, loop, &ctx);
    return tg__iter_finish(&it, 0); /* bumps self's version */
}
