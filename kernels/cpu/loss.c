/* nll_loss_forward and nll_loss_backward (CPU), PyTorch's semantics and messages.
 *
 * self is (C) or (N, C) log-probabilities (any floating dtype), target () or (N) class
 * indices (int64 or uint8), weight (C) of self's dtype or NULL. For sample i with class
 * t = target[i] != ignore_index, the loss is -weight[t] * self[i, t]; reduction 0 keeps the
 * (N) losses (ignored samples 0), 1 divides their sum by total_weight = sum of weight[t] over
 * the samples not ignored (NaN when that is 0, as PyTorch), 2 sums. Sums run in double over
 * the samples, which are few next to the N * C input: the loops are serial. */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "loss_checks.h"

#include <math.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/nll_loss_backward.h"
#include "kernels/nll_loss_forward.h"

enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };

typedef struct nll_args {
    const char *op;
    tg_tensor *x, *t, *w; /* contiguous references (w may be NULL) */
    int64_t n, c;         /* samples (1 for a 1-D self), classes */
    bool batched;         /* self is 2-D */
} nll_args;

static void nll_args_release(nll_args *a)
{
    tg_release(a->x);
    tg_release(a->t);
    tg_release(a->w);
}

/* Shape and dtype checks in PyTorch's order, then contiguous operands. 0 or -1 + error. */
static int nll_prepare(nll_args *a, const char *op, tg_tensor *self, tg_tensor *target,
                       tg_tensor *weight)
{
    memset(a, 0, sizeof *a);
    a->op = op;
    if (tg__nll_check(op, self, target, weight) != 0) return -1;
    a->c = self->sizes[self->ndim - 1];
    a->batched = self->ndim == 2;
    a->n = a->batched ? self->sizes[0] : 1;
    a->x = tg__contiguous(op, self);
    a->t = a->x ? tg__contiguous(op, target) : NULL;
    a->w = a->t && weight ? tg__contiguous(op, weight) : NULL;
    if (!a->x || !a->t || (weight && !a->w)) {
        nll_args_release(a);
        return -1;
    }
    return 0;
}

/* Target of sample i, checked against the classes unless ignored. */
static int nll_target(const nll_args *a, int64_t i, int64_t ignore_index, int64_t *t)
{
    *t = tg__pw_load_i64(tg__k_data(a->t) + i * (int64_t)tg_dtype_size(a->t->dtype), a->t->dtype);
    if (*t == ignore_index) return 0;
    if (*t < 0 || *t >= a->c)
        return tg__fail(a->op, "Target %lld is out of bounds.", (long long)*t);
    return 1;
}

static double nll_weight(const nll_args *a, int64_t t)
{
    return a->w ? tg__pw_load_f64(tg__k_data(a->w) + t * (int64_t)tg_dtype_size(a->w->dtype),
                                  a->w->dtype)
                : 1.0;
}

static double nll_input(const nll_args *a, int64_t i, int64_t t)
{
    size_t es = tg_dtype_size(a->x->dtype);
    return tg__pw_load_f64(tg__k_data(a->x) + (i * a->c + t) * (int64_t)es, a->x->dtype);
}

static tg_tensor *scalar_of(const char *op, double v, tg_dtype dt)
{
    int64_t none = 0;
    tg_tensor *r = tg__empty(op, &none, 0, dt, TG_DEVICE_CPU);
    if (r) tg__pw_store_f64(tg__k_data(r), dt, v);
    return r;
}

tg_output_total_weight tg__cpu_nll_loss_forward(tg_tensor *self, tg_tensor *target,
                                                tg_tensor *weight, int64_t reduction,
                                                int64_t ignore_index)
{
    const char *op = "nll_loss_forward";
    tg_output_total_weight res = { NULL, NULL };
    nll_args a;
    if (nll_prepare(&a, op, self, target, weight) != 0) return res;
    tg_dtype dt = self->dtype;
    bool per_sample = reduction == RED_NONE && a.batched;
    tg_tensor *out = per_sample ? tg__empty(op, &a.n, 1, dt, TG_DEVICE_CPU) : NULL;
    double sum = 0, total = 0;
    int ok = per_sample && !out ? -1 : 0;
    for (int64_t i = 0; ok >= 0 && i < a.n; i++) {
        int64_t t;
        ok = nll_target(&a, i, ignore_index, &t);
        double loss = 0;
        if (ok > 0) {
            double w = nll_weight(&a, t);
            loss = -nll_input(&a, i, t) * w;
            total += w;
            sum += loss;
        }
        if (ok >= 0 && per_sample)
            tg__pw_store_f64(tg__k_data(out) + i * (int64_t)tg_dtype_size(dt), dt, loss);
    }
    nll_args_release(&a);
    if (ok < 0) {
        tg_release(out);
        return res;
    }
    if (!per_sample) out = scalar_of(op, reduction == RED_MEAN ? sum / total : sum, dt);
    /* PyTorch reports no total weight for per-sample losses. */
    res.total_weight = out ? scalar_of(op, per_sample ? 0.0 : total, dt) : NULL;
    if (!res.total_weight) {
        tg_release(out);
        return res;
    }
    res.output = out;
    return res;
}

tg_tensor *tg__cpu_nll_loss_backward(tg_tensor *grad_output, tg_tensor *self, tg_tensor *target,
                                     tg_tensor *weight, int64_t reduction, int64_t ignore_index,
                                     tg_tensor *total_weight)
{
    const char *op = "nll_loss_backward";
    nll_args a;
    if (nll_prepare(&a, op, self, target, weight) != 0) return NULL;
    bool per_sample = reduction == RED_NONE && a.batched;
    if (tg__nll_backward_check(op, grad_output, total_weight, per_sample, a.n) != 0) {
        nll_args_release(&a);
        return NULL;
    }
    tg_dtype dt = self->dtype;
    size_t es = tg_dtype_size(dt);
    tg_tensor *gi = tg__empty(op, self->sizes, self->ndim, dt, TG_DEVICE_CPU);
    tg_tensor *go = gi ? tg__contiguous(op, grad_output) : NULL;
    if (!go) {
        tg_release(gi);
        nll_args_release(&a);
        return NULL;
    }
    memset(tg__k_data(gi), 0, es * (size_t)tg__numel(gi));
    double scale = 0;
    if (!per_sample) {
        double g = tg__pw_load_f64(tg__k_data(go), go->dtype);
        double tw = tg__pw_load_f64(tg__k_data(total_weight), total_weight->dtype);
        scale = -(reduction == RED_MEAN ? g / tw : g);
    }
    int ok = 0;
    for (int64_t i = 0; ok >= 0 && i < a.n; i++) {
        int64_t t;
        ok = nll_target(&a, i, ignore_index, &t);
        if (ok <= 0) continue;
        double g = per_sample
                       ? -tg__pw_load_f64(tg__k_data(go) + i * (int64_t)tg_dtype_size(go->dtype),
                                          go->dtype)
                       : scale;
        tg__pw_store_f64(tg__k_data(gi) + (i * a.c + t) * (int64_t)es, dt, nll_weight(&a, t) * g);
    }
    tg_release(go);
    nll_args_release(&a);
    if (ok < 0) {
        tg_release(gi);
        return NULL;
    }
    return gi;
}
