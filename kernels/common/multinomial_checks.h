/* multinomial: argument checks (PyTorch 1.13's messages and their order) and the per-row
 * sampling, shared by the CPU kernel (kernels/cpu/multinomial.c) and the CUDA kernel
 * (kernels/cuda/multinomial.cu, which runs the row functions on the device). Static inline,
 * C11 and C++.
 *
 * Sampling from uniform draws u in [0, 1):
 *   with replacement: the row's running sums c_j (double); sample s takes the first j with
 *     c_j > u_s * c_{n-1}, which is never a zero-weight category (its c_j equals c_{j-1});
 *   without replacement (and PyTorch's path for one sample): the exponential race, category j
 *     gets w_j / E_j with E_j = -log(1 - u_j) ~ Exp(1), and the samples are the num_samples
 *     largest, in decreasing order (a sequential draw without replacement); zero weights score 0
 *     and come last, as in PyTorch's topk of the same scores. */
#ifndef TG_MULTINOMIAL_CHECKS_H
#define TG_MULTINOMIAL_CHECKS_H

#include <math.h>

#include "sort_checks.h"

/* The shape and argument checks, before any value is read; *rows and *n get the row count
 * and the category count. */
static inline int tg__multinomial_check(const char *op, const tg_tensor *self, int64_t num_samples,
                                        bool replacement, const tg_tensor *out, int64_t *rows,
                                        int64_t *n)
{
    if (self->ndim < 1 || self->ndim > 2) return tg__fail(op, "prob_dist must be 1 or 2 dim");
    if (!tg_dtype_is_floating(self->dtype))
        return tg__fail(op, "multinomial only supports floating-point dtypes for input, got: %s",
                        tg__dtype_torch_name(self->dtype));
    if (out && out->dtype != TG_INT64)
        return tg__fail(op, "multinomial expects Long tensor out, got: %s",
                        tg__dtype_torch_name(out->dtype));
    if (num_samples <= 0) return tg__fail(op, "cannot sample n_sample <= 0 samples");
    *n = self->sizes[self->ndim - 1];
    *rows = self->ndim == 2 ? self->sizes[0] : 1;
    if (!replacement && num_samples > *n)
        return tg__fail(op, "cannot sample n_sample > prob_dist.size(-1) samples without "
                            "replacement");
    if (*n > ((int64_t)1 << 24)) return tg__fail(op, "number of categories cannot exceed 2^24");
    return 0;
}

/* The value checks of one row of weights w[0..n): 0, 1 for inf / NaN / negative, 2 for a
 * zero sum. */
static inline TG_HD int tg__multinomial_row_bad(const double *w, int64_t n)
{
    double s = 0;
    for (int64_t j = 0; j < n; j++) {
        if (!(w[j] >= 0) || w[j] == INFINITY) return 1;
        s += w[j];
    }
    return s > 0 ? 0 : 2;
}

static inline int tg__multinomial_fail(const char *op, int bad)
{
    return bad == 1 ? tg__fail(op, "probability tensor contains either `inf`, `nan` or element < 0")
                    : tg__fail(op, "invalid multinomial distribution (sum of probabilities <= 0)");
}

/* With replacement: w[0..n) (a valid row) becomes its running sums; out[t * os] for t < k
 * gets the category of draw u[t]. */
static inline TG_HD void tg__multinomial_with(double *w, int64_t n, const double *u, int64_t k,
                                              int64_t *out, int64_t os)
{
    for (int64_t j = 1; j < n; j++) w[j] += w[j - 1];
    double total = w[n - 1];
    int64_t last = n - 1; /* the last category of positive weight */
    while (last > 0 && w[last] == w[last - 1]) last--;
    for (int64_t t = 0; t < k; t++) {
        double x = u[t] * total;
        int64_t lo = 0, hi = n; /* first j with w[j] > x, in [lo, hi] */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (w[mid] > x) hi = mid;
            else lo = mid + 1;
        }
        out[t * os] = lo < n ? lo : last; /* lo == n only when x rounded up to the total */
    }
}

/* Without replacement: p has room for 2n pairs; out[t * os] for t < k (k <= n) gets the
 * race's t-th winner among w[0..n) with draws u[0..n). */
static inline TG_HD void tg__multinomial_without(const double *w, int64_t n, const double *u,
                                                 int64_t k, tg_sort_pair *p, int64_t *out,
                                                 int64_t os)
{
    for (int64_t j = 0; j < n; j++) {
        double e = -log1p(-u[j]); /* Exp(1), > 0 but for u == 0 */
        double q = w[j] == 0 ? 0 : e > 0 ? w[j] / e : INFINITY;
        p[j].key = tg__sort_key_f64(q, true);
        p[j].idx = j;
    }
    int64_t m = n;
    if (tg__topk_use_select(k, n)) {
        tg__sort_select(p, n, k);
        m = k;
    }
    tg__sort_pairs(p, p + n, m);
    for (int64_t t = 0; t < k; t++) out[t * os] = p[t].idx;
}

/* A uniform double in [0, 1) from 64 random bits. */
static inline TG_HD double tg__multinomial_u01(uint64_t r)
{
    return (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

#endif
