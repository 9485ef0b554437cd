/* Argument checks and size computations of the factory and random-fill kernels, shared by the
 * CPU kernels (factory.c) and the CUDA kernels (kernels/cuda/factory.cu, random.cu), so that
 * both backends accept the same arguments, size their outputs the same way and refuse with
 * the same (PyTorch's) words. Each check returns 0, or records the error and returns -1.
 * Compiles as C and as C++ (host code only). */
#ifndef TG_FACTORY_CHECKS_H
#define TG_FACTORY_CHECKS_H

#include "pointwise_convert.h"
#include <float.h>
#include <stdio.h>

/* Formats a Scalar the way C++ streams print a double ("1", "0.5", "1e+10"). */
static inline const char *tg__fc_fmt_num(char *buf, size_t cap, double v)
{
    snprintf(buf, cap, "%g", v);
    return buf;
}

/* ------------------------------------------------------------------ arange */

/* What arange writes: `size` values start + i * step (floating dtypes, in the dtype's
 * accumulation type) or istart + i * istep (integer dtypes, wrapping). */
typedef struct tg_arange_plan {
    int64_t size;
    double start, step;
    int64_t istart, istep;
} tg_arange_plan;

/* arange's checks and size for an out tensor of dtype t: ceil((end - start) / step) values; for
 * integer dtypes start, end and step are truncated first (so a step of 0.5 is "step must be
 * nonzero"), as in PyTorch. */
static inline int tg__arange_plan_make(tg_arange_plan *p, double start, double end, double step,
                                       tg_dtype t)
{
    const bool integral = !tg_dtype_is_floating(t);
    char a[64], b[64];
    int64_t istart = 0, iend = 0, istep = 0;
    double size_d;
    if (integral) {
        if (!isfinite(start) || !isfinite(end))
            return tg__fail("arange", "unsupported range: %s -> %s",
                            tg__fc_fmt_num(a, sizeof a, start), tg__fc_fmt_num(b, sizeof b, end));
        istart = tg__pw_f64_to_i64(start);
        iend = tg__pw_f64_to_i64(end);
        istep = tg__pw_f64_to_i64(step);
        if (istep == 0) return tg__fail("arange", "step must be nonzero");
        if (t == TG_INT64) size_d = ceil((double)(iend - istart) / (double)istep);
        else size_d = ceil((end - start) / step);
        if (!((istep > 0 && iend >= istart) || (istep < 0 && iend <= istart)))
            return tg__fail("arange", "upper bound and larger bound inconsistent with step sign");
    } else {
        if (!(step > 0 || step < 0)) return tg__fail("arange", "step must be nonzero");
        if (!isfinite(start) || !isfinite(end))
            return tg__fail("arange", "unsupported range: %s -> %s",
                            tg__fc_fmt_num(a, sizeof a, start), tg__fc_fmt_num(b, sizeof b, end));
        if (!((step > 0 && end >= start) || (step < 0 && end <= start)))
            return tg__fail("arange", "upper bound and larger bound inconsistent with step sign");
        size_d = ceil((end - start) / step);
    }
    if (!(size_d >= 0 && size_d <= 9223372036854775807.0))
        return tg__fail("arange", "invalid size, possible overflow?");
    p->size = (int64_t)size_d;
    p->start = start;
    p->step = step;
    p->istart = istart;
    p->istep = istep;
    return 0;
}

/* Resizes arange's out to the planned size, with PyTorch's warning when a non-empty out had
 * another number of elements. */
static inline int tg__arange_resize_out(tg_tensor *out, int64_t size)
{
    if (tg__numel(out) == size) return 0;
    if (tg__numel(out) > 0) {
        char shape[256];
        tg__warn("The number of elements in the out tensor of shape %s is %lld which does "
                 "not match the computed number of elements %lld. Note that this may occur "
                 "as a result of rounding error. The out tensor will be resized to a tensor "
                 "of shape (%lld,).",
                 tg__shape_str(shape, sizeof shape, out->sizes, out->ndim),
                 (long long)tg__numel(out), (long long)size, (long long)size);
    }
    return tg__resize_out("arange", out, &size, 1);
}

/* ------------------------------------------------------------------ linspace, eye */

static inline int tg__linspace_check(int64_t steps, tg_tensor *out)
{
    if (steps < 0) return tg__fail("linspace", "number of steps must be non-negative");
    if (tg__numel(out) != steps && tg__resize_out("linspace", out, &steps, 1) != 0) return -1;
    return 0;
}

static inline int tg__eye_check(int64_t n, int64_t m, tg_tensor *out)
{
    if (n < 0) return tg__fail("eye", "n must be greater or equal to 0, got %lld", (long long)n);
    if (m < 0) return tg__fail("eye", "m must be greater or equal to 0, got %lld", (long long)m);
    int64_t sizes[2] = { n, m };
    return tg__resize_out("eye", out, sizes, 2);
}

/* ------------------------------------------------------------------ random fills */

/* Mantissa digits of a floating dtype: the number of random bits a uniform value uses. */
static inline int tg__random_float_digits(tg_dtype t)
{
    switch (t) {
    case TG_FLOAT16: return 11;
    case TG_BFLOAT16: return 8;
    case TG_FLOAT32: return 24;
    default: return 53;
    }
}

static inline int tg__uniform_check(tg_dtype t, double from, double to)
{
    char a[64], b[64];
    if (!tg_dtype_is_floating(t))
        return tg__fail("uniform_", "\"check_uniform_bounds\" not implemented for '%s'",
                        tg__dtype_torch_name(t));
    if (from > to)
        return tg__fail("uniform_",
                        "uniform_ expects to return a [from, to) range, but found "
                        "from=%s > to=%s",
                        tg__fc_fmt_num(a, sizeof a, from), tg__fc_fmt_num(b, sizeof b, to));
    double limit = t == TG_FLOAT64 ? DBL_MAX : t == TG_FLOAT16 ? 65504.0 : FLT_MAX;
    if (to - from > limit)
        return tg__fail("uniform_",
                        "uniform_ expects to-from <= std::numeric_limits<%s>::max(), "
                        "but found to=%s and from=%s which result in to-from to exceed the limit",
                        tg__dtype_torch_name(t), tg__fc_fmt_num(b, sizeof b, to),
                        tg__fc_fmt_num(a, sizeof a, from));
    return 0;
}

/* backend: "cpu" or "cuda", for the kernel name PyTorch puts in the message. */
static inline int tg__normal_check(tg_dtype t, double std, const char *backend)
{
    char a[64];
    if (!tg_dtype_is_floating(t))
        return tg__fail("normal_", "\"normal_kernel_%s\" not implemented for '%s'", backend,
                        tg__dtype_torch_name(t));
    if (!(std >= 0.0))
        return tg__fail("normal_", "normal expects std >= 0.0, but found std %s",
                        tg__fc_fmt_num(a, sizeof a, std));
    return 0;
}

/* The inclusive bounds a random_ value of dtype t must lie in (an error outside). */
static inline void tg__random_dtype_bounds(tg_dtype t, double *lo, double *hi)
{
    switch (t) {
    case TG_BOOL:
        *lo = 0;
        *hi = 1;
        break;
    case TG_UINT8:
        *lo = 0;
        *hi = 255;
        break;
    case TG_INT8:
        *lo = -128;
        *hi = 127;
        break;
    case TG_INT16:
        *lo = -32768;
        *hi = 32767;
        break;
    case TG_INT32:
        *lo = -2147483648.0;
        *hi = 2147483647.0;
        break;
    case TG_FLOAT16:
        *lo = -65504;
        *hi = 65504;
        break;
    default:
        *lo = -INFINITY;
        *hi = INFINITY;
        break;
    }
}

/* random_'s checks; on success *range is the number of values from `from` on (0 stands for
 * 2^64: every 64-bit value). `tname` is the dtype's name in messages (tg__k_meta_name). */
static inline int tg__random_range(tg_dtype t, const char *tname, int64_t from, tg_opt_int to,
                                   const char *backend, uint64_t *range)
{
    double lo, hi;
    tg__random_dtype_bounds(t, &lo, &hi);
    if (!tg_is_none_int(to)) {
        if (from >= to)
            return tg__fail("random_",
                            "random_ expects 'from' to be less than 'to', but got "
                            "from=%lld >= to=%lld",
                            (long long)from, (long long)to);
        if ((double)from < lo || (double)from > hi)
            return tg__fail("random_", "from is out of bounds for %s", tname);
        if ((double)(to - 1) < lo || (double)(to - 1) > hi)
            return tg__fail("random_", "to - 1 is out of bounds for %s", tname);
        *range = (uint64_t)to - (uint64_t)from;
    } else if (from == INT64_MIN) {
        if (t == TG_BOOL || t == TG_FLOAT16)
            return tg__fail("random_",
                            "\"random_full_64_bits_range_kernel_%s\" not implemented "
                            "for '%s'",
                            backend, tg__dtype_torch_name(t));
        if (t != TG_INT64 && !tg_dtype_is_floating(t))
            return tg__fail("random_",
                            "random_full_64_bits_range_kernel_%s handles only int64, "
                            "double, float and bfloat16",
                            backend);
        *range = 0;
    } else {
        int64_t to_inc =
            tg_dtype_is_floating(t) ? (int64_t)1 << tg__random_float_digits(t) : (int64_t)hi;
        if (t == TG_INT64) to_inc = INT64_MAX;
        if (from > to_inc)
            return tg__fail("random_",
                            "random_ expects 'from' casted to dtype to be less than "
                            "or equal to 'to_inc' casted to dtype, but got from=%lld > to_inc=%lld",
                            (long long)from, (long long)to_inc);
        if ((double)from < lo) return tg__fail("random_", "from is out of bounds for %s", tname);
        *range = (uint64_t)to_inc - (uint64_t)from + 1; /* 2^64 wraps to 0: every value */
    }
    return 0;
}

#endif
