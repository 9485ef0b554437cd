/* cumsum and cumprod on the CPU (cumsum.out, cumprod.out; the functional and in-place forms
 * delegate here with out NULL or out == self).
 *
 * As PyTorch 1.13 (impl_func_cum_ops): a 0-dim self fills the result with its value, an empty
 * one gives an empty result, otherwise self (converted to the result dtype) is scanned along
 * dim. The accumulator is PyTorch's CPU at::acc_type: double for float32/float64 (and float16/
 * bfloat16), int64 for the integers (wrapping like two's complement), bool for bool (any / all
 * nonzero so far), so values match PyTorch's CPU bit for bit.
 *
 * self is seen as [outer, n, inner] around dim. Work items are (outer index, block of up to
 * CUM_BLOCK inner positions), split across threads: each item keeps CUM_BLOCK accumulators
 * and walks k = 0..n-1, reading a run of the block's inner positions at each k, so a scan
 * over a leading dim of a contiguous tensor reads rows (vectorisable) rather than columns.
 * The scan reads element k before writing result element k, so out may be self. */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "structure_checks.h"
#include "reduce_view.h" /* tg__view3 */

#include "kernels/cumprod.h"
#include "kernels/cumsum.h"

#include <string.h>

#define CUM_BLOCK 256

typedef struct cum_job {
    bool prod;
    tg_dtype st, rt; /* self's and the result's dtypes */
    const char *x;
    char *y;
    int64_t n, inner, nblocks;          /* nblocks: inner blocks per outer index */
    int64_t xs_outer, xs_dim, xs_inner; /* self strides, elements */
    int64_t ys_outer, ys_dim, ys_inner; /* result strides, elements */
    size_t xe, ye;                      /* element sizes */
} cum_job;

/* One step k of a typed scan over m contiguous inner positions: y = (acc op= x), float64 in
 * double (f64) or the int64 scan in unsigned arithmetic (wraps, no UB). Instantiated with f64
 * constant. */
TG_ALWAYS_INLINE void scan_step(bool f64, bool prod, const char *x, char *y, void *acc, int64_t m)
{
    for (int64_t i = 0; i < m; i++) {
        if (f64) {
            double *a = acc, v = ((const double *)x)[i];
            ((double *)y)[i] = a[i] = prod ? a[i] * v : a[i] + v;
        } else {
            uint64_t *a = acc, v = ((const uint64_t *)x)[i];
            ((uint64_t *)y)[i] = a[i] = prod ? a[i] * v : a[i] + v;
        }
    }
}

/* Float scan of one item: a double accumulator per inner position (typed loop for the
 * contiguous float32/float64 cases, converting loads otherwise). */
static void cum_item_f64(const cum_job *j, const char *x, char *y, int64_t m)
{
    double acc[CUM_BLOCK];
    for (int64_t i = 0; i < m; i++) acc[i] = j->prod ? 1.0 : 0.0;
    bool typed = j->st == j->rt && j->xs_inner == 1 && j->ys_inner == 1;
    if (m == 1 && j->st == j->rt && j->rt == TG_FLOAT32) {
        /* one slice (a scan over the last dim): a plain loop, one accumulator */
        const float *xf = (const float *)x;
        float *yf = (float *)y;
        double a = acc[0];
        if (j->prod)
            for (int64_t k = 0; k < j->n; k++) yf[k * j->ys_dim] = (float)(a *= xf[k * j->xs_dim]);
        else
            for (int64_t k = 0; k < j->n; k++) yf[k * j->ys_dim] = (float)(a += xf[k * j->xs_dim]);
        return;
    }
    if (m == 1 && j->st == j->rt && j->rt == TG_FLOAT64) {
        const double *xd = (const double *)x;
        double *yd = (double *)y;
        double a = acc[0];
        if (j->prod)
            for (int64_t k = 0; k < j->n; k++) yd[k * j->ys_dim] = (a *= xd[k * j->xs_dim]);
        else
            for (int64_t k = 0; k < j->n; k++) yd[k * j->ys_dim] = (a += xd[k * j->xs_dim]);
        return;
    }
    for (int64_t k = 0; k < j->n; k++) {
        const char *xr = x + k * j->xs_dim * (int64_t)j->xe;
        char *yr = y + k * j->ys_dim * (int64_t)j->ye;
        if (typed && j->rt == TG_FLOAT32) {
            const float *xf = (const float *)xr;
            float *yf = (float *)yr;
            if (j->prod)
                for (int64_t i = 0; i < m; i++) yf[i] = (float)(acc[i] *= (double)xf[i]);
            else
                for (int64_t i = 0; i < m; i++) yf[i] = (float)(acc[i] += (double)xf[i]);
        } else if (typed && j->rt == TG_FLOAT64) {
            scan_step(true, j->prod, xr, yr, acc, m);
        } else {
            for (int64_t i = 0; i < m; i++) {
                /* self.to(result dtype) first, as PyTorch converts before scanning */
                double v = tg__pw_load_f64(xr + i * j->xs_inner * (int64_t)j->xe, j->st);
                char tmp[8];
                tg__pw_store_f64(tmp, j->rt, v);
                v = tg__pw_load_f64(tmp, j->rt);
                acc[i] = j->prod ? acc[i] * v : acc[i] + v;
                tg__pw_store_f64(yr + i * j->ys_inner * (int64_t)j->ye, j->rt, acc[i]);
            }
        }
    }
}

/* Integer and bool scan of one item, in int64 (unsigned arithmetic: wraps, no UB). */
static void cum_item_i64(const cum_job *j, const char *x, char *y, int64_t m)
{
    uint64_t acc[CUM_BLOCK];
    for (int64_t i = 0; i < m; i++) acc[i] = j->prod ? 1 : 0;
    bool typed = j->st == TG_INT64 && j->rt == TG_INT64 && j->xs_inner == 1 && j->ys_inner == 1;
    for (int64_t k = 0; k < j->n; k++) {
        const char *xr = x + k * j->xs_dim * (int64_t)j->xe;
        char *yr = y + k * j->ys_dim * (int64_t)j->ye;
        if (typed) {
            scan_step(false, j->prod, xr, yr, acc, m);
            continue;
        }
        for (int64_t i = 0; i < m; i++) {
            char tmp[8];
            int64_t v;
            if (tg_dtype_is_floating(j->st)) {
                double f = tg__pw_load_f64(xr + i * j->xs_inner * (int64_t)j->xe, j->st);
                tg__pw_store_f64(tmp, j->rt, f); /* the float -> integer conversion of .to() */
            } else {
                tg__pw_store_i64(tmp, j->rt,
                                 tg__pw_load_i64(xr + i * j->xs_inner * (int64_t)j->xe, j->st));
            }
            v = tg__pw_load_i64(tmp, j->rt);
            acc[i] = j->prod ? acc[i] * (uint64_t)v : acc[i] + (uint64_t)v;
            if (j->rt == TG_BOOL) acc[i] = acc[i] != 0; /* bool accumulates as bool */
            tg__pw_store_i64(yr + i * j->ys_inner * (int64_t)j->ye, j->rt, (int64_t)acc[i]);
        }
    }
}

static void cum_task(int64_t b, int64_t e, void *ctx)
{
    const cum_job *j = ctx;
    for (int64_t it = b; it < e; it++) {
        int64_t o = it / j->nblocks, i0 = (it % j->nblocks) * CUM_BLOCK;
        int64_t m = j->inner - i0 < CUM_BLOCK ? j->inner - i0 : CUM_BLOCK;
        const char *x = j->x + (o * j->xs_outer + i0 * j->xs_inner) * (int64_t)j->xe;
        char *y = j->y + (o * j->ys_outer + i0 * j->ys_inner) * (int64_t)j->ye;
        if (tg_dtype_is_floating(j->rt)) cum_item_f64(j, x, y, m);
        else cum_item_i64(j, x, y, m);
    }
}

static tg_tensor *cum_common(const char *op, bool prod, tg_tensor *self, int64_t dim,
                             tg_dtype dtype, tg_tensor *out)
{
    int64_t d;
    tg_dtype rt;
    if (tg__cum_check(op, self, dim, dtype, out, &d, &rt) != 0) return NULL;
    tg_tensor *res = tg__k_prepare_out(op, out, self->sizes, self->ndim, rt);
    if (!res) return NULL;
    int64_t numel = tg__numel(self);
    if (numel == 0) return res;
    /* a 0-dim self: the result is its value (converted) */
    tg_tensor *src = tg_retain(self), *dst = tg_retain(res);
    cum_job j;
    memset(&j, 0, sizeof j);
    j.prod = prod;
    j.st = self->dtype;
    j.rt = rt;
    j.n = self->ndim ? self->sizes[d] : 1;
    j.inner = 1;
    for (int64_t k = d + 1; k < self->ndim; k++) j.inner *= self->sizes[k];
    bool ok = self->ndim == 0 || (tg__view3(self, d, &j.xs_outer, &j.xs_dim, &j.xs_inner) &&
                                  tg__view3(res, d, &j.ys_outer, &j.ys_dim, &j.ys_inner));
    if (self->ndim == 0) j.xs_dim = j.ys_dim = 1;
    if (!ok) {
        /* geometry that does not collapse: scan contiguous copies (then copy back) */
        tg_release(src);
        tg_release(dst);
        src = tg__empty(op, self->sizes, self->ndim, self->dtype, TG_DEVICE_CPU);
        dst = tg__empty(op, self->sizes, self->ndim, rt, TG_DEVICE_CPU);
        if (!src || !dst || tg__copy_into(op, src, self) != 0) goto fail;
        tg__view3(src, d, &j.xs_outer, &j.xs_dim, &j.xs_inner);
        tg__view3(dst, d, &j.ys_outer, &j.ys_dim, &j.ys_inner);
    }
    j.x = tg__k_data(src);
    j.y = tg__k_data(dst);
    j.xe = tg_dtype_size(j.st);
    j.ye = tg_dtype_size(j.rt);
    j.nblocks = (j.inner + CUM_BLOCK - 1) / CUM_BLOCK;
    int64_t items = (numel / (j.n * j.inner)) * j.nblocks;
    int64_t per_item = j.n * (j.inner < CUM_BLOCK ? j.inner : CUM_BLOCK);
    int64_t grain = per_item >= tg__grain_size() ? 1 : tg__grain_size() / per_item;
    tg__parallel_for(items, grain, cum_task, &j);
    if (dst != res && tg__copy_into(op, res, dst) != 0) goto fail;
    tg_release(src);
    tg_release(dst);
    if (out) tg__bump_version(res);
    return res;
fail:
    tg_release(src);
    tg_release(dst);
    tg_release(res);
    return NULL;
}

/* self any shape and dtype; out (optional) of self's shape; the scan along dim. */
tg_tensor *tg__cpu_cumsum_out(tg_tensor *self, int64_t dim, tg_dtype dtype, tg_tensor *out)
{
    return cum_common("cumsum", false, self, dim, dtype, out);
}

tg_tensor *tg__cpu_cumprod_out(tg_tensor *self, int64_t dim, tg_dtype dtype, tg_tensor *out)
{
    return cum_common("cumprod", true, self, dim, dtype, out);
}
