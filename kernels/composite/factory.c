/* Factory composites: empty, empty_like, zeros/ones/full (+ _out, _like), arange, linspace,
 * eye, rand/randn/randint (+ _generator, _like), zero_.
 *
 * Each allocates with tg_empty / tg_empty_like (or takes the user's out=) and fills through a
 * dispatched operator (fill_, arange.start_out, linspace.out, eye.m_out, uniform_, normal_,
 * random_), so a device with its own fill kernels gets them. Defaults are PyTorch's: dtype
 * None is the default float dtype (int64 for arange with integral arguments and for full
 * with an integral value; a Scalar is a double here, so full(..., True) is int64, not bool),
 * device None is the CPU, *_like keep self's dtype, device and (memory_format preserve)
 * strides. Every function returns a new reference or NULL with an error; nothing
 * leaks on error paths. */
#include "core/core.h"
#include "pointwise_convert.h"
/* The public functions of the operators called here. */
#include "ops/arange.h"
#include "ops/empty.h"
#include "ops/empty_like.h"
#include "ops/eye.h"
#include "ops/fill.h"
#include "ops/linspace.h"
#include "ops/normal.h"
#include "ops/random.h"
#include "ops/uniform.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/arange.h"
#include "kernels/empty.h"
#include "kernels/empty_like.h"
#include "kernels/eye.h"
#include "kernels/full.h"
#include "kernels/full_like.h"
#include "kernels/linspace.h"
#include "kernels/ones.h"
#include "kernels/ones_like.h"
#include "kernels/rand.h"
#include "kernels/rand_like.h"
#include "kernels/randint.h"
#include "kernels/randint_like.h"
#include "kernels/randn.h"
#include "kernels/randn_like.h"
#include "kernels/zero.h"
#include "kernels/zeros.h"
#include "kernels/zeros_like.h"
#include "composite_util.h"

#include <string.h>

/* ------------------------------------------------------------------ allocation */

/* Layout and device checks shared by every factory; fills *dev (None -> CPU). */
static int factory_device(const char *op, tg_layout layout, tg_device device, tg_device *dev)
{
    if (layout != TG_LAYOUT_NONE && layout != TG_STRIDED)
        return tg__fail(op, "only the strided layout is supported");
    *dev = device.type == TG_DEVICE_NONE ? TG_DEVICE_CPU : device;
    return 0;
}

/* A new tensor with exactly the given strides (which must be non-overlapping and dense: the
 * storage holds numel elements). The runtime allocates contiguous tensors; we allocate one of
 * numel elements and give it this geometry (it is ours alone, so this is safe). */
static tg_tensor *empty_strided_dense(const char *op, const int64_t *sizes, const int64_t *strides,
                                      int64_t ndim, tg_dtype dtype, tg_device dev)
{
    tg_tensor *t = tg__empty(op, sizes, ndim, dtype, dev);
    if (!t) return NULL;
    for (int64_t d = 0; d < ndim; d++) t->strides[d] = strides[d];
    return t;
}

/* PyTorch's is_non_overlapping_and_dense: some permutation of the dims makes t contiguous. */
static bool non_overlapping_and_dense(const tg_tensor *t)
{
    int64_t perm[TG_MAX_DIMS];
    int64_t n = 0;
    for (int64_t d = 0; d < t->ndim; d++)
        if (t->sizes[d] != 1) perm[n++] = d;
    /* insertion sort of the non-trivial dims by increasing stride */
    for (int64_t i = 1; i < n; i++)
        for (int64_t j = i; j > 0 && t->strides[perm[j]] < t->strides[perm[j - 1]]; j--) {
            int64_t tmp = perm[j];
            perm[j] = perm[j - 1];
            perm[j - 1] = tmp;
        }
    int64_t expected = 1;
    for (int64_t i = 0; i < n; i++) {
        if (t->sizes[perm[i]] == 0) return true;
        if (t->strides[perm[i]] != expected) return false;
        expected *= t->sizes[perm[i]];
    }
    return true;
}

/* Channels-last strides for a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) shape: C fastest, then
 * the spatial dims, then N. */
static void channels_last_strides(const int64_t *sizes, int64_t ndim, int64_t *strides)
{
    int64_t s = 1;
    strides[1] = s;
    s *= sizes[1] > 0 ? sizes[1] : 1;
    for (int64_t d = ndim - 1; d >= 2; d--) {
        strides[d] = s;
        s *= sizes[d] > 0 ? sizes[d] : 1;
    }
    strides[0] = s;
}

/* empty.memory_format: an uninitialised tensor; dtype None -> default float, device None ->
 * CPU; channels_last (4-D) / channels_last_3d (5-D) give the permuted strides. */
tg_tensor *tg__composite_empty(tg_int_list size, tg_dtype dtype, tg_layout layout, tg_device device,
                               tg_opt_bool pin_memory, tg_memory_format memory_format)
{
    (void)pin_memory;
    tg_device dev;
    if (factory_device("empty", layout, device, &dev) != 0) return NULL;
    if (dtype == TG_DTYPE_NONE) dtype = tg_get_default_dtype();
    if (memory_format == TG_CHANNELS_LAST || memory_format == TG_CHANNELS_LAST_3D) {
        int64_t want = memory_format == TG_CHANNELS_LAST ? 4 : 5;
        if (size.len != want)
            return tg__error("empty", "required rank %lld tensor to use %s format", (long long)want,
                             want == 4 ? "channels_last" : "channels_last_3d");
        int64_t strides[5];
        channels_last_strides(size.data, size.len, strides);
        return empty_strided_dense("empty", size.data, strides, size.len, dtype, dev);
    }
    return tg__empty("empty", size.data, size.len, dtype, dev);
}

/* empty_like: self's shape; dtype/device default to self's. memory_format None or preserve
 * keeps self's strides when self is non-overlapping and dense (a transposed tensor gives a
 * transposed result, as in PyTorch), else contiguous. */
tg_tensor *tg__composite_empty_like(tg_tensor *self, tg_dtype dtype, tg_layout layout,
                                    tg_device device, tg_opt_bool pin_memory,
                                    tg_memory_format memory_format)
{
    (void)pin_memory;
    tg_device dev;
    if (factory_device("empty_like", layout, device.type == TG_DEVICE_NONE ? self->device : device,
                       &dev) != 0)
        return NULL;
    if (dtype == TG_DTYPE_NONE) dtype = self->dtype;
    if (memory_format == TG_CHANNELS_LAST || memory_format == TG_CHANNELS_LAST_3D)
        return tg__composite_empty((tg_int_list){ .len = self->ndim, .data = self->sizes }, dtype,
                                   layout, dev, pin_memory, memory_format);
    bool preserve = memory_format == TG_MEMORY_FORMAT_NONE || memory_format == TG_PRESERVE_FORMAT;
    if (preserve && non_overlapping_and_dense(self))
        return empty_strided_dense("empty_like", self->sizes, self->strides, self->ndim, dtype,
                                   dev);
    return tg__empty("empty_like", self->sizes, self->ndim, dtype, dev);
}

/* ------------------------------------------------------------------ constant fills */

/* Fills t (a new reference we own, or NULL after an error) with v; returns t, or NULL after
 * releasing it (fill_ returns another reference to t). */
static tg_tensor *filled(tg_tensor *t, double v) { return tg__then(t, tg_fill_(t, v)); }

/* zero_: self = 0. */
tg_tensor *tg__composite_zero_(tg_tensor *self) { return tg_fill_(self, 0); }

tg_tensor *tg__composite_zeros(tg_int_list size, tg_dtype dtype, tg_layout layout, tg_device device,
                               tg_opt_bool pin_memory)
{
    return filled(tg_empty(size, .dtype = dtype, .layout = layout, .device = device,
                           .pin_memory = pin_memory),
                  0);
}

tg_tensor *tg__composite_ones(tg_int_list size, tg_dtype dtype, tg_layout layout, tg_device device,
                              tg_opt_bool pin_memory)
{
    return filled(tg_empty(size, .dtype = dtype, .layout = layout, .device = device,
                           .pin_memory = pin_memory),
                  1);
}

/* full: dtype None is inferred from the value like PyTorch's Python scalar (integral -> int64,
 * else the default float). */
tg_tensor *tg__composite_full(tg_int_list size, double fill_value, tg_dtype dtype, tg_layout layout,
                              tg_device device, tg_opt_bool pin_memory)
{
    if (dtype == TG_DTYPE_NONE)
        dtype = tg__pw_is_integral_scalar(fill_value) ? TG_INT64 : tg_get_default_dtype();
    return filled(tg_empty(size, .dtype = dtype, .layout = layout, .device = device,
                           .pin_memory = pin_memory),
                  fill_value);
}

/* The out= forms: out is resized (when empty) to size, keeps its dtype, and is filled. */
static tg_tensor *full_into(const char *op, tg_int_list size, double v, tg_tensor *out)
{
    if (tg__resize_out(op, out, size.data, size.len) != 0) return NULL;
    return tg_fill_(out, v);
}

tg_tensor *tg__composite_zeros_out(tg_int_list size, tg_tensor *out)
{
    return full_into("zeros", size, 0, out);
}
tg_tensor *tg__composite_ones_out(tg_int_list size, tg_tensor *out)
{
    return full_into("ones", size, 1, out);
}
tg_tensor *tg__composite_full_out(tg_int_list size, double fill_value, tg_tensor *out)
{
    return full_into("full", size, fill_value, out);
}

tg_tensor *tg__composite_zeros_like(tg_tensor *self, tg_dtype dtype, tg_layout layout,
                                    tg_device device, tg_opt_bool pin_memory,
                                    tg_memory_format memory_format)
{
    return filled(tg_empty_like(self, .dtype = dtype, .layout = layout, .device = device,
                                .pin_memory = pin_memory, .memory_format = memory_format),
                  0);
}

tg_tensor *tg__composite_ones_like(tg_tensor *self, tg_dtype dtype, tg_layout layout,
                                   tg_device device, tg_opt_bool pin_memory,
                                   tg_memory_format memory_format)
{
    return filled(tg_empty_like(self, .dtype = dtype, .layout = layout, .device = device,
                                .pin_memory = pin_memory, .memory_format = memory_format),
                  1);
}

tg_tensor *tg__composite_full_like(tg_tensor *self, double fill_value, tg_dtype dtype,
                                   tg_layout layout, tg_device device, tg_opt_bool pin_memory,
                                   tg_memory_format memory_format)
{
    return filled(tg_empty_like(self, .dtype = dtype, .layout = layout, .device = device,
                                .pin_memory = pin_memory, .memory_format = memory_format),
                  fill_value);
}

/* ------------------------------------------------------------------ ranges */

/* Fills t, a new empty tensor, through an out= or in-place operator: returns what fill returns
 * (a new reference, or NULL after an error) and releases t. */
typedef tg_tensor *(*fill_fn)(tg_tensor *t, const void *args);

static tg_tensor *into_new(tg_tensor *t, fill_fn fill, const void *args)
{
    if (!t) return NULL;
    tg_tensor *r = fill(t, args);
    tg_release(t);
    return r;
}

typedef struct range_args {
    double start, end, step;
    int64_t steps, n, m;
} range_args;

static tg_tensor *arange_fill(tg_tensor *t, const void *vargs)
{
    const range_args *a = vargs;
    return tg_arange_start_out(a->start, a->end, t, .step = a->step);
}

/* arange.start_step: dtype None is int64 when start, end and step are all integral, else
 * the default float. The size is computed by the out= kernel (it resizes the empty tensor). */
tg_tensor *tg__composite_arange_start_step(double start, double end, double step, tg_dtype dtype,
                                           tg_layout layout, tg_device device,
                                           tg_opt_bool pin_memory)
{
    if (dtype == TG_DTYPE_NONE) {
        bool integral = tg__pw_is_integral_scalar(start) && tg__pw_is_integral_scalar(end) &&
                        tg__pw_is_integral_scalar(step);
        dtype = integral ? TG_INT64 : tg_get_default_dtype();
    }
    range_args a = { .start = start, .end = end, .step = step };
    return into_new(tg_empty(TG_INTS(0), .dtype = dtype, .layout = layout, .device = device,
                             .pin_memory = pin_memory),
                    arange_fill, &a);
}

tg_tensor *tg__composite_arange(double end, tg_dtype dtype, tg_layout layout, tg_device device,
                                tg_opt_bool pin_memory)
{
    return tg__composite_arange_start_step(0, end, 1, dtype, layout, device, pin_memory);
}

tg_tensor *tg__composite_arange_start(double start, double end, tg_dtype dtype, tg_layout layout,
                                      tg_device device, tg_opt_bool pin_memory)
{
    return tg__composite_arange_start_step(start, end, 1, dtype, layout, device, pin_memory);
}

/* arange.out: [0, end) into out. */
tg_tensor *tg__composite_arange_out(double end, tg_tensor *out)
{
    return tg_arange_start_out(0, end, out);
}

static tg_tensor *linspace_fill(tg_tensor *t, const void *vargs)
{
    const range_args *a = vargs;
    return tg_linspace_out(a->start, a->end, a->steps, t);
}

/* linspace: dtype None is the default float (also for integral start/end, as PyTorch 1.13). */
tg_tensor *tg__composite_linspace(double start, double end, int64_t steps, tg_dtype dtype,
                                  tg_layout layout, tg_device device, tg_opt_bool pin_memory)
{
    if (steps < 0) return tg__error("linspace", "number of steps must be non-negative");
    range_args a = { .start = start, .end = end, .steps = steps };
    return into_new(tg_empty(TG_INTS(steps), .dtype = dtype, .layout = layout, .device = device,
                             .pin_memory = pin_memory),
                    linspace_fill, &a);
}

static tg_tensor *eye_fill(tg_tensor *t, const void *vargs)
{
    const range_args *a = vargs;
    return tg_eye_m_out(a->n, a->m, t);
}

/* eye.m: (n, m) identity. */
tg_tensor *tg__composite_eye_m(int64_t n, int64_t m, tg_dtype dtype, tg_layout layout,
                               tg_device device, tg_opt_bool pin_memory)
{
    if (n < 0) return tg__error("eye", "n must be greater or equal to 0, got %lld", (long long)n);
    if (m < 0) return tg__error("eye", "m must be greater or equal to 0, got %lld", (long long)m);
    range_args a = { .n = n, .m = m };
    return into_new(tg_empty(TG_INTS(n, m), .dtype = dtype, .layout = layout, .device = device,
                             .pin_memory = pin_memory),
                    eye_fill, &a);
}

tg_tensor *tg__composite_eye(int64_t n, tg_dtype dtype, tg_layout layout, tg_device device,
                             tg_opt_bool pin_memory)
{
    return tg__composite_eye_m(n, n, dtype, layout, device, pin_memory);
}

/* eye.out: (n, n) identity into out. */
tg_tensor *tg__composite_eye_out(int64_t n, tg_tensor *out) { return tg_eye_m_out(n, n, out); }

/* ------------------------------------------------------------------ random tensors */

typedef struct rand_args {
    tg_generator *gen;
    int64_t low, high;
} rand_args;

static tg_tensor *uniform_fill(tg_tensor *t, const void *vargs)
{
    const rand_args *a = vargs;
    return tg_uniform_(t, .generator = a->gen);
}

static tg_tensor *normal_fill(tg_tensor *t, const void *vargs)
{
    const rand_args *a = vargs;
    return tg_normal_(t, .generator = a->gen);
}

static tg_tensor *randint_fill(tg_tensor *t, const void *vargs)
{
    const rand_args *a = vargs;
    return tg_random_(t, a->low, a->high, .generator = a->gen);
}

/* A new tensor of `size` (random_new) or like self (random_like) filled by fill(t, a). */
static tg_tensor *random_new(tg_int_list size, tg_dtype dtype, tg_layout layout, tg_device device,
                             tg_opt_bool pin_memory, fill_fn fill, const rand_args *a)
{
    return into_new(tg_empty(size, .dtype = dtype, .layout = layout, .device = device,
                             .pin_memory = pin_memory),
                    fill, a);
}

static tg_tensor *random_like(tg_tensor *self, tg_dtype dtype, tg_layout layout, tg_device device,
                              tg_opt_bool pin_memory, tg_memory_format memory_format, fill_fn fill,
                              const rand_args *a)
{
    return into_new(tg_empty_like(self, .dtype = dtype, .layout = layout, .device = device,
                                  .pin_memory = pin_memory, .memory_format = memory_format),
                    fill, a);
}

/* rand: U[0, 1); an integer dtype is uniform_'s error ("check_uniform_bounds" not implemented
 * for 'Long'). */
tg_tensor *tg__composite_rand_generator(tg_int_list size, tg_generator *generator, tg_dtype dtype,
                                        tg_layout layout, tg_device device, tg_opt_bool pin_memory)
{
    rand_args a = { .gen = generator };
    return random_new(size, dtype, layout, device, pin_memory, uniform_fill, &a);
}

tg_tensor *tg__composite_rand(tg_int_list size, tg_dtype dtype, tg_layout layout, tg_device device,
                              tg_opt_bool pin_memory)
{
    return tg__composite_rand_generator(size, NULL, dtype, layout, device, pin_memory);
}

tg_tensor *tg__composite_rand_like(tg_tensor *self, tg_dtype dtype, tg_layout layout,
                                   tg_device device, tg_opt_bool pin_memory,
                                   tg_memory_format memory_format)
{
    rand_args a = { .gen = NULL };
    return random_like(self, dtype, layout, device, pin_memory, memory_format, uniform_fill, &a);
}

/* randn: N(0, 1). */
tg_tensor *tg__composite_randn_generator(tg_int_list size, tg_generator *generator, tg_dtype dtype,
                                         tg_layout layout, tg_device device, tg_opt_bool pin_memory)
{
    rand_args a = { .gen = generator };
    return random_new(size, dtype, layout, device, pin_memory, normal_fill, &a);
}

tg_tensor *tg__composite_randn(tg_int_list size, tg_dtype dtype, tg_layout layout, tg_device device,
                               tg_opt_bool pin_memory)
{
    return tg__composite_randn_generator(size, NULL, dtype, layout, device, pin_memory);
}

tg_tensor *tg__composite_randn_like(tg_tensor *self, tg_dtype dtype, tg_layout layout,
                                    tg_device device, tg_opt_bool pin_memory,
                                    tg_memory_format memory_format)
{
    rand_args a = { .gen = NULL };
    return random_like(self, dtype, layout, device, pin_memory, memory_format, normal_fill, &a);
}

/* randint.low: uniform integers in [low, high); dtype defaults to int64 (the schema's `long`). */
tg_tensor *tg__composite_randint_low(int64_t low, int64_t high, tg_int_list size, tg_dtype dtype,
                                     tg_layout layout, tg_device device, tg_opt_bool pin_memory)
{
    if (dtype == TG_DTYPE_NONE) dtype = TG_INT64;
    rand_args a = { .low = low, .high = high };
    return random_new(size, dtype, layout, device, pin_memory, randint_fill, &a);
}

tg_tensor *tg__composite_randint(int64_t high, tg_int_list size, tg_dtype dtype, tg_layout layout,
                                 tg_device device, tg_opt_bool pin_memory)
{
    return tg__composite_randint_low(0, high, size, dtype, layout, device, pin_memory);
}

/* randint_like: self's shape, dtype (unless given) and device. */
tg_tensor *tg__composite_randint_like_low(tg_tensor *self, int64_t low, int64_t high,
                                          tg_dtype dtype, tg_layout layout, tg_device device,
                                          tg_opt_bool pin_memory, tg_memory_format memory_format)
{
    rand_args a = { .low = low, .high = high };
    return random_like(self, dtype, layout, device, pin_memory, memory_format, randint_fill, &a);
}

tg_tensor *tg__composite_randint_like(tg_tensor *self, int64_t high, tg_dtype dtype,
                                      tg_layout layout, tg_device device, tg_opt_bool pin_memory,
                                      tg_memory_format memory_format)
{
    return tg__composite_randint_like_low(self, 0, high, dtype, layout, device, pin_memory,
                                          memory_format);
}
