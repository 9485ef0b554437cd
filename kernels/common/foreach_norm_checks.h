/* _foreach_norm: argument checks (PyTorch's messages) and the per-element arithmetic of the
 * norm, shared by the CPU kernel (kernels/cpu/foreach_norm.c) and the CUDA kernel
 * (kernels/cuda/foreach_norm.cu, whose device code runs the accumulation functions). Static
 * inline, C11 and C++.
 *
 * Each tensor's norm accumulates in double: a sum (of x^2, |x|, |x|^p or of x != 0) or an
 * extreme of |x| (inf: max, -inf: min; NaN propagates), combined over chunks in a fixed order,
 * finished (sqrt, 1/p power) and rounded once to the tensor's dtype. */
#ifndef TG_FOREACH_NORM_CHECKS_H
#define TG_FOREACH_NORM_CHECKS_H

#include <math.h>

#include "tg_kutil.h"
#include "tg_hd.h"

typedef enum tg_norm_kind {
    TG_NORM_2,
    TG_NORM_1,
    TG_NORM_INF,
    TG_NORM_NEG_INF,
    TG_NORM_0,
    TG_NORM_P,
} tg_norm_kind;

static inline tg_norm_kind tg__norm_kind(double ord)
{
    if (ord == 2) return TG_NORM_2;
    if (ord == 1) return TG_NORM_1;
    if (ord == INFINITY) return TG_NORM_INF;
    if (ord == -INFINITY) return TG_NORM_NEG_INF;
    if (ord == 0) return TG_NORM_0;
    return TG_NORM_P;
}

/* The accumulator's start: 0 for sums, -inf / +inf for the extremes (never left so: an empty
 * tensor is refused for them). */
static inline TG_HD double tg__norm_init(tg_norm_kind k)
{
    return k == TG_NORM_INF ? -INFINITY : k == TG_NORM_NEG_INF ? INFINITY : 0.0;
}

/* acc combined with one element x. */
static inline TG_HD double tg__norm_add(tg_norm_kind k, double p, double acc, double x)
{
    double a = fabs(x);
    switch (k) {
    case TG_NORM_2: return acc + x * x;
    case TG_NORM_1: return acc + a;
    case TG_NORM_INF: return a > acc || a != a ? a : acc;
    case TG_NORM_NEG_INF: return a < acc || a != a ? a : acc;
    case TG_NORM_0: return acc + (x != 0 ? 1.0 : 0.0);
    default: return acc + pow(a, p);
    }
}

/* Two partial accumulators combined. */
static inline TG_HD double tg__norm_merge(tg_norm_kind k, double a, double b)
{
    if (k == TG_NORM_INF) return b > a || b != b ? b : a;
    if (k == TG_NORM_NEG_INF) return b < a || b != b ? b : a;
    return a + b;
}

static inline TG_HD double tg__norm_finish(tg_norm_kind k, double p, double acc)
{
    if (k == TG_NORM_2) return sqrt(acc);
    if (k == TG_NORM_P) return pow(acc, 1.0 / p);
    return acc;
}

/* A non-empty list of floating tensors on one device; the extremes need elements. 0 or -1. */
static inline int tg__foreach_norm_check(const char *op, tg_tensor_list self, double ord)
{
    if (self.len == 0) return tg__fail(op, "Tensor list must have at least one tensor.");
    for (int64_t i = 0; i < self.len; i++) {
        const tg_tensor *t = self.data[i];
        if (!t)
            return tg__fail(op, "Expected a Tensor at position %lld but got None", (long long)i);
        if (t->device.type != self.data[0]->device.type ||
            t->device.index != self.data[0]->device.index)
            return tg__fail(op,
                            "Expected all tensors to be on the same device, but tensor %lld "
                            "is on another device than tensor 0",
                            (long long)i);
        if (!tg_dtype_is_floating(t->dtype))
            return tg__fail(op,
                            "linalg.vector_norm: Expected a floating point or complex tensor "
                            "as input. Got %s",
                            tg__dtype_torch_name(t->dtype));
        if (tg__numel(t) == 0 && (ord == INFINITY || ord == -INFINITY || ord < 0))
            return tg__fail(op,
                            "linalg.vector_norm cannot compute the %g norm on an empty tensor "
                            "because the operation does not have an identity",
                            ord);
    }
    return 0;
}

#endif
