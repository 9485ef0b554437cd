/* Normalization and resizing (CPU): native_batch_norm(_backward), native_group_norm(_backward),
 * upsample_nearest2d(_backward), upsample_bilinear2d(_backward), NCHW, float32 and float64.
 *
 * Operands are made contiguous and seen as (N, C, HW). Batch norm's statistics are one pass
 * per channel (parallel over channels): sums of x - K and (x - K)^2 with K the channel's first
 * element (shifted data keeps E[x^2] - E[x]^2 accurate), in the element type over blocks of
 * at most 1024 contiguous elements (vectorised with omp simd) and in double across blocks.
 * The output is one fused pass y = x * alpha + beta per (n, c) plane. */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "norm_checks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/native_batch_norm.h"
#include "kernels/native_batch_norm_backward.h"
#include "kernels/native_group_norm.h"
#include "kernels/native_group_norm_backward.h"
#include "kernels/upsample_bilinear2d.h"
#include "kernels/upsample_bilinear2d_backward.h"
#include "kernels/upsample_nearest2d.h"
#include "kernels/upsample_nearest2d_backward.h"

enum { NORM_BLOCK = 1024, NORM_GRAIN = 32768 };

/* ---- small helpers ---- */

/* A per-channel tensor (C elements, any strides) read into doubles; def when t is NULL. */
static void load_vec(const tg_tensor *t, int64_t n, double def, double *out)
{
    if (!t) {
        for (int64_t i = 0; i < n; i++) out[i] = def;
        return;
    }
    size_t es = tg_dtype_size(t->dtype);
    for (int64_t i = 0; i < n; i++)
        out[i] = tg__pw_load_f64(tg__k_data(t) + tg__k_offset(t, i) * (int64_t)es, t->dtype);
}

static void store_vec(tg_tensor *t, int64_t n, const double *v)
{
    size_t es = tg_dtype_size(t->dtype);
    for (int64_t i = 0; i < n; i++)
        tg__pw_store_f64(tg__k_data(t) + tg__k_offset(t, i) * (int64_t)es, t->dtype, v[i]);
}

static tg_tensor *new_vec(const char *op, int64_t n, tg_dtype dt, const double *v)
{
    tg_tensor *t = tg__empty(op, &n, 1, dt, TG_DEVICE_CPU);
    if (t && v) store_vec(t, n, v);
    return t;
}

/* The per-segment loops below run in the element type T (float for float32, double for
 * float64): each tests f32 once and runs a plain vectorisable loop of that type. */

/* Shifted sums over n contiguous elements from x + off: s += sum(x - k), ss += sum((x - k)^2),
 * each block of NORM_BLOCK in T, the blocks in double. */
static void shifted_sums(const void *x, bool f32, int64_t off, int64_t n, double k, double *s,
                         double *ss)
{
    for (int64_t b = 0; b < n; b += NORM_BLOCK) {
        int64_t e = b + NORM_BLOCK < n ? b + NORM_BLOCK : n;
        if (f32) {
            const float *xf = (const float *)x + off, kf = (float)k;
            float a = 0, q = 0;
#pragma omp simd reduction(+ : a, q)
            for (int64_t i = b; i < e; i++) a += xf[i] - kf, q += (xf[i] - kf) * (xf[i] - kf);
            *s += a, *ss += q;
            continue;
        }
        const double *xd = (const double *)x + off;
        double a = 0, q = 0;
#pragma omp simd reduction(+ : a, q)
        for (int64_t i = b; i < e; i++) a += xd[i] - k, q += (xd[i] - k) * (xd[i] - k);
        *s += a, *ss += q;
    }
}

/* Backward sums over n contiguous elements from off: s += sum(dy), dot += sum(dy * (x - m)). */
static void grad_sums(const void *dy, const void *x, bool f32, int64_t off, int64_t n, double m,
                      double *s, double *dot)
{
    for (int64_t b = 0; b < n; b += NORM_BLOCK) {
        int64_t e = b + NORM_BLOCK < n ? b + NORM_BLOCK : n;
        if (f32) {
            const float *g = (const float *)dy + off, *xf = (const float *)x + off, mf = (float)m;
            float a = 0, q = 0;
#pragma omp simd reduction(+ : a, q)
            for (int64_t i = b; i < e; i++) a += g[i], q += g[i] * (xf[i] - mf);
            *s += a, *dot += q;
            continue;
        }
        const double *g = (const double *)dy + off, *xd = (const double *)x + off;
        double a = 0, q = 0;
#pragma omp simd reduction(+ : a, q)
        for (int64_t i = b; i < e; i++) a += g[i], q += g[i] * (xd[i] - m);
        *s += a, *dot += q;
    }
}

/* y = x * a + b over n contiguous elements from off. */
static void affine(void *y, const void *x, bool f32, int64_t off, int64_t n, double a, double b)
{
    if (f32) {
        float *yf = (float *)y + off, af = (float)a, bf = (float)b;
        const float *xf = (const float *)x + off;
#pragma omp simd
        for (int64_t i = 0; i < n; i++) yf[i] = xf[i] * af + bf;
        return;
    }
    double *yd = (double *)y + off;
    const double *xd = (const double *)x + off;
#pragma omp simd
    for (int64_t i = 0; i < n; i++) yd[i] = xd[i] * a + b;
}

/* dx = dy * a + x * b + c over n contiguous elements from off. */
static void affine2(void *dx, const void *dy, const void *x, bool f32, int64_t off, int64_t n,
                    double a, double b, double c)
{
    if (f32) {
        float *df = (float *)dx + off, af = (float)a, bf = (float)b, cf = (float)c;
        const float *g = (const float *)dy + off, *xf = (const float *)x + off;
#pragma omp simd
        for (int64_t i = 0; i < n; i++) df[i] = g[i] * af + xf[i] * bf + cf;
        return;
    }
    double *dd = (double *)dx + off;
    const double *g = (const double *)dy + off, *xd = (const double *)x + off;
#pragma omp simd
    for (int64_t i = 0; i < n; i++) dd[i] = g[i] * a + xd[i] * b + c;
}

static double first_elem(const void *x, bool f32, int64_t off)
{
    return f32 ? (double)((const float *)x)[off] : ((const double *)x)[off];
}

static int64_t prod_from(const tg_tensor *t, int64_t d)
{
    int64_t p = 1;
    for (int64_t i = d; i < t->ndim; i++) p *= t->sizes[i];
    return p;
}

/* The end of a norm backward: dx, and the weight and bias gradients (as want[1] and want[2]
 * ask) from their double sums dw and db over c channels; all released on failure. */
static tg_tensors3 bwd_results(const char *op, const bool *want, tg_tensor *dx, int64_t c,
                               tg_dtype dt, const double *dw, const double *db)
{
    tg_tensor *gw = want[1] ? new_vec(op, c, dt, dw) : NULL;
    tg_tensor *gb = want[2] && (!want[1] || gw) ? new_vec(op, c, dt, db) : NULL;
    return tg__k_results3((!want[1] || gw) && (!want[2] || gb), dx, gw, gb);
}

/* ---- native_batch_norm ---- */

tg_tensors3 tg__cpu_native_batch_norm(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                      tg_tensor *running_mean, tg_tensor *running_var,
                                      bool training, double momentum, double eps)
{
    const char *op = "native_batch_norm";
    tg_tensors3 res = { NULL, NULL, NULL };
    if (tg__batch_norm_check(op, input, weight, bias, running_mean, running_var, training) != 0)
        return res;
    tg_dtype dt = input->dtype;
    bool f32 = dt == TG_FLOAT32;
    int64_t n = input->sizes[0], c = input->sizes[1], hw = prod_from(input, 2);
    int64_t m = n * hw;
    double *buf = malloc(sizeof(double) * (size_t)(6 * c + 1));
    tg_tensor *x = tg__contiguous(op, input);
    tg_tensor *y = x ? tg__empty(op, input->sizes, input->ndim, dt, TG_DEVICE_CPU) : NULL;
    if (!buf || !y) {
        if (!buf) tg__error(op, "out of memory");
        free(buf);
        tg_release(x);
        tg_release(y);
        return res;
    }
    double *mean = buf, *var = buf + c, *invstd = buf + 2 * c, *w = buf + 3 * c, *b = buf + 4 * c,
           *tmp = buf + 5 * c;
    const void *xd = tg__k_data(x);
    void *yd = tg__k_data(y);
    if (training) {
#pragma omp parallel for schedule(static) if (n * c * hw > NORM_GRAIN)
        for (int64_t ch = 0; ch < c; ch++) {
            double s = 0, ss = 0, k = m > 0 ? first_elem(xd, f32, ch * hw) : 0;
            for (int64_t i = 0; i < n; i++)
                shifted_sums(xd, f32, (i * c + ch) * hw, hw, k, &s, &ss);
            double d = m > 0 ? s / (double)m : 0;
            double v = m > 0 ? ss / (double)m - d * d : 0;
            mean[ch] = k + d;
            var[ch] = v > 0 ? v : 0;
        }
        for (int64_t ch = 0; ch < c; ch++) invstd[ch] = 1.0 / sqrt(var[ch] + eps);
        if (running_mean && m > 0) {
            load_vec(running_mean, c, 0, tmp);
            for (int64_t ch = 0; ch < c; ch++)
                tmp[ch] = momentum * mean[ch] + (1 - momentum) * tmp[ch];
            store_vec(running_mean, c, tmp);
        }
        if (running_var && m > 0) {
            load_vec(running_var, c, 0, tmp);
            for (int64_t ch = 0; ch < c; ch++)
                tmp[ch] =
                    momentum * (var[ch] * (double)m / (double)(m - 1)) + (1 - momentum) * tmp[ch];
            store_vec(running_var, c, tmp);
        }
    } else {
        load_vec(running_mean, c, 0, mean);
        load_vec(running_var, c, 1, var);
        for (int64_t ch = 0; ch < c; ch++) invstd[ch] = 1.0 / sqrt(var[ch] + eps);
    }
    load_vec(weight, c, 1, w);
    load_vec(bias, c, 0, b);
    for (int64_t ch = 0; ch < c; ch++) {
        double a = invstd[ch] * w[ch];
        w[ch] = a;
        b[ch] = b[ch] - mean[ch] * a;
    }
#pragma omp parallel for schedule(static) if (n * c * hw > NORM_GRAIN)
    for (int64_t p = 0; p < n * c; p++) affine(yd, xd, f32, p * hw, hw, w[p % c], b[p % c]);
    tg_release(x);
    res.r0 = y;
    res.r1 = training ? new_vec(op, c, dt, mean) : new_vec(op, 0, dt, NULL);
    res.r2 = res.r1 ? (training ? new_vec(op, c, dt, invstd) : new_vec(op, 0, dt, NULL)) : NULL;
    free(buf);
    if (!res.r2) {
        tg_release(res.r0);
        tg_release(res.r1);
        res.r0 = res.r1 = NULL;
    }
    return res;
}

tg_tensors3 tg__cpu_native_batch_norm_backward(tg_tensor *grad_out, tg_tensor *input,
                                               tg_tensor *weight, tg_tensor *running_mean,
                                               tg_tensor *running_var, tg_tensor *save_mean,
                                               tg_tensor *save_invstd, bool train, double eps,
                                               tg_bool_list output_mask)
{
    const char *op = "native_batch_norm_backward";
    tg_tensors3 res = { NULL, NULL, NULL };
    if (tg__batch_norm_backward_check(op, grad_out, input, weight, running_mean, running_var,
                                      save_mean, save_invstd, train) != 0)
        return res;
    bool want[3];
    tg__k_output_mask(output_mask, want);
    tg_dtype dt = input->dtype;
    bool f32 = dt == TG_FLOAT32;
    int64_t n = input->sizes[0], c = input->sizes[1], hw = prod_from(input, 2);
    int64_t m = n * hw;
    double *buf = malloc(sizeof(double) * (size_t)(5 * c + 1));
    tg_tensor *x = tg__contiguous(op, input);
    tg_tensor *dy = x ? tg__contiguous(op, grad_out) : NULL;
    tg_tensor *dx =
        dy && want[0] ? tg__empty(op, input->sizes, input->ndim, dt, TG_DEVICE_CPU) : NULL;
    if (!buf || !dy || (want[0] && !dx)) {
        if (!buf) tg__error(op, "out of memory");
        free(buf);
        tg_release(x);
        tg_release(dy);
        tg_release(dx);
        return res;
    }
    double *mean = buf, *invstd = buf + c, *w = buf + 2 * c, *sum = buf + 3 * c, *dot = buf + 4 * c;
    if (train) {
        load_vec(save_mean, c, 0, mean);
        load_vec(save_invstd, c, 1, invstd);
    } else {
        load_vec(running_mean, c, 0, mean);
        load_vec(running_var, c, 1, invstd);
        for (int64_t ch = 0; ch < c; ch++) invstd[ch] = 1.0 / sqrt(invstd[ch] + eps);
    }
    load_vec(weight, c, 1, w);
    const void *xd = tg__k_data(x), *dyd = tg__k_data(dy);
#pragma omp parallel for schedule(static) if (n * c * hw > NORM_GRAIN)
    for (int64_t ch = 0; ch < c; ch++) {
        double s = 0, d = 0;
        for (int64_t i = 0; i < n; i++)
            grad_sums(dyd, xd, f32, (i * c + ch) * hw, hw, mean[ch], &s, &d);
        sum[ch] = s;
        dot[ch] = d;
    }
    if (want[0]) {
        void *dxd = tg__k_data(dx);
#pragma omp parallel for schedule(static) if (n * c * hw > NORM_GRAIN)
        for (int64_t p = 0; p < n * c; p++) {
            int64_t ch = p % c;
            double a = invstd[ch] * w[ch];
            if (train && m > 0) {
                /* dx = (dy - sum / m - (x - mean) * k) * a, k = dot * invstd^2 / m */
                double k = dot[ch] * invstd[ch] * invstd[ch] / (double)m;
                affine2(dxd, dyd, xd, f32, p * hw, hw, a, -k * a,
                        (-sum[ch] / (double)m + mean[ch] * k) * a);
            } else {
                affine2(dxd, dyd, xd, f32, p * hw, hw, a, 0, 0);
            }
        }
    }
    for (int64_t ch = 0; ch < c; ch++) dot[ch] *= invstd[ch];
    res = bwd_results(op, want, dx, c, dt, dot, sum);
    free(buf);
    tg_tensor *tmp[2] = { x, dy };
    tg__k_release_all(tmp, 2);
    return res;
}

/* ---- native_group_norm ---- */

tg_tensors3 tg__cpu_native_group_norm(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                      int64_t N, int64_t C, int64_t HxW, int64_t group, double eps)
{
    const char *op = "native_group_norm";
    tg_tensors3 res = { NULL, NULL, NULL };
    if (tg__group_norm_check(op, input, weight, bias, N, C, HxW, group) != 0) return res;
    tg_dtype dt = input->dtype;
    bool f32 = dt == TG_FLOAT32;
    int64_t d = C / group, gsize = d * HxW, ng = N * group;
    double *buf = malloc(sizeof(double) * (size_t)(2 * ng + 2 * C + 1));
    tg_tensor *x = tg__contiguous(op, input);
    tg_tensor *y = x ? tg__empty(op, input->sizes, input->ndim, dt, TG_DEVICE_CPU) : NULL;
    int64_t msz[2] = { N, group };
    tg_tensor *mt = y ? tg__empty(op, msz, 2, dt, TG_DEVICE_CPU) : NULL;
    tg_tensor *rt = mt ? tg__empty(op, msz, 2, dt, TG_DEVICE_CPU) : NULL;
    if (!buf || !rt) {
        if (!buf) tg__error(op, "out of memory");
        free(buf);
        tg_release(x);
        tg_release(y);
        tg_release(mt);
        tg_release(rt);
        return res;
    }
    double *mean = buf, *rstd = buf + ng, *w = buf + 2 * ng, *b = buf + 2 * ng + C;
    load_vec(weight, C, 1, w);
    load_vec(bias, C, 0, b);
    const void *xd = tg__k_data(x);
    void *yd = tg__k_data(y);
#pragma omp parallel for schedule(static) if (N * C * HxW > NORM_GRAIN)
    for (int64_t p = 0; p < ng; p++) {
        double s = 0, ss = 0, k = gsize > 0 ? first_elem(xd, f32, p * gsize) : 0;
        shifted_sums(xd, f32, p * gsize, gsize, k, &s, &ss);
        double dm = gsize > 0 ? s / (double)gsize : 0;
        double v = gsize > 0 ? ss / (double)gsize - dm * dm : 0;
        double mu = k + dm, r = 1.0 / sqrt((v > 0 ? v : 0) + eps);
        mean[p] = mu;
        rstd[p] = r;
        for (int64_t j = 0; j < d; j++) {
            int64_t ch = (p % group) * d + j;
            double a = r * w[ch];
            affine(yd, xd, f32, p * gsize + j * HxW, HxW, a, b[ch] - mu * a);
        }
    }
    store_vec(mt, ng, mean);
    store_vec(rt, ng, rstd);
    free(buf);
    tg_release(x);
    res.r0 = y;
    res.r1 = mt;
    res.r2 = rt;
    return res;
}

tg_tensors3 tg__cpu_native_group_norm_backward(tg_tensor *grad_out, tg_tensor *input,
                                               tg_tensor *mean, tg_tensor *rstd, tg_tensor *weight,
                                               int64_t N, int64_t C, int64_t HxW, int64_t group,
                                               tg_bool_list output_mask)
{
    const char *op = "native_group_norm_backward";
    tg_tensors3 res = { NULL, NULL, NULL };
    if (tg__group_norm_backward_check(op, grad_out, input, mean, rstd, weight, N, C, HxW, group) !=
        0)
        return res;
    bool want[3];
    tg__k_output_mask(output_mask, want);
    tg_dtype dt = input->dtype;
    bool f32 = dt == TG_FLOAT32;
    int64_t d = C / group, gsize = d * HxW, ng = N * group, nc = N * C;
    double *buf = malloc(sizeof(double) * (size_t)(2 * ng + 2 * nc + 3 * C + 1));
    tg_tensor *x = tg__contiguous(op, input);
    tg_tensor *dy = x ? tg__contiguous(op, grad_out) : NULL;
    tg_tensor *dx =
        dy && want[0] ? tg__empty(op, input->sizes, input->ndim, dt, TG_DEVICE_CPU) : NULL;
    if (!buf || !dy || (want[0] && !dx)) {
        if (!buf) tg__error(op, "out of memory");
        free(buf);
        tg_release(x);
        tg_release(dy);
        tg_release(dx);
        return res;
    }
    double *mu = buf, *rs = buf + ng, *sum = buf + 2 * ng, *dot = buf + 2 * ng + nc,
           *w = buf + 2 * ng + 2 * nc, *dw = w + C, *db = w + 2 * C;
    load_vec(mean, ng, 0, mu);
    load_vec(rstd, ng, 1, rs);
    load_vec(weight, C, 1, w);
    const void *xd = tg__k_data(x), *dyd = tg__k_data(dy);
    void *dxd = dx ? tg__k_data(dx) : NULL;
#pragma omp parallel for schedule(static) if (N * C * HxW > NORM_GRAIN)
    for (int64_t p = 0; p < ng; p++) {
        double g1 = 0, g2 = 0;
        for (int64_t j = 0; j < d; j++) {
            int64_t ch = (p % group) * d + j, q = (p / group) * C + ch;
            double s = 0, t = 0;
            grad_sums(dyd, xd, f32, q * HxW, HxW, mu[p], &s, &t);
            sum[q] = s;
            dot[q] = t;
            g1 += w[ch] * s;
            g2 += w[ch] * t;
        }
        if (!dxd) continue;
        double r = rs[p], inv_m = gsize > 0 ? 1.0 / (double)gsize : 0;
        double bcoef = -r * r * r * g2 * inv_m;
        double ccoef = -r * g1 * inv_m - bcoef * mu[p];
        for (int64_t j = 0; j < d; j++) {
            int64_t ch = (p % group) * d + j, q = (p / group) * C + ch;
            affine2(dxd, dyd, xd, f32, q * HxW, HxW, r * w[ch], bcoef, ccoef);
        }
    }
    for (int64_t ch = 0; ch < C; ch++) {
        double a = 0, b = 0;
        for (int64_t i = 0; i < N; i++) {
            int64_t q = i * C + ch;
            a += dot[q] * rs[i * group + ch / d];
            b += sum[q];
        }
        dw[ch] = a;
        db[ch] = b;
    }
    res = bwd_results(op, want, dx, C, dt, dw, db);
    free(buf);
    tg_tensor *tmp[2] = { x, dy };
    tg__k_release_all(tmp, 2);
    return res;
}

/* ---- upsampling ---- */

/* Nearest source indices of the forward (compute_indices_weights_nearest: the scale in the
 * element type, floorf of scale * dst). */
static void nearest_indices(int64_t *idx, int64_t in, int64_t out, tg_opt_float s, bool f32)
{
    double scale = tg__ups_scale(s, in, out);
    float fs = (float)scale;
    for (int64_t i = 0; i < out; i++) {
        int64_t src = f32 ? (int64_t)floorf((float)i * fs) : (int64_t)floorf((float)(scale * i));
        idx[i] = src < in - 1 ? src : in - 1;
    }
}

/* Linear source indices and weights (compute_indices_weights_linear). */
static void linear_indices(int64_t *i0, int64_t *i1, double *l1, int64_t in, int64_t out,
                           bool align_corners, tg_opt_float s, bool f32)
{
    double scale = tg__ups_linear_scale(in, out, align_corners, s);
    for (int64_t i = 0; i < out; i++)
        tg__ups_linear_index(i, in, scale, align_corners, f32, &i0[i], &i1[i], &l1[i]);
}

static tg_tensor *upsample_fwd(const char *op, const char *kname, tg_tensor *self,
                               tg_int_list output_size, bool bilinear, bool align_corners,
                               tg_opt_float sh, tg_opt_float sw)
{
    if (tg__upsample2d_check(op, kname, self, output_size) != 0) return NULL;
    tg_dtype dt = self->dtype;
    bool f32 = dt == TG_FLOAT32;
    int64_t n = self->sizes[0], c = self->sizes[1], ih = self->sizes[2], iw = self->sizes[3];
    int64_t oh = output_size.data[0], ow = output_size.data[1];
    int64_t osz[4] = { n, c, oh, ow };
    size_t ni = (size_t)(2 * oh + 2 * ow + 2);
    int64_t *ib = malloc(sizeof(int64_t) * ni);
    double *lb = malloc(sizeof(double) * (size_t)(oh + ow + 2));
    tg_tensor *x = ib && lb ? tg__contiguous(op, self) : NULL;
    tg_tensor *y = x ? tg__empty(op, osz, 4, dt, TG_DEVICE_CPU) : NULL;
    if (!y) {
        if (!ib || !lb) tg__error(op, "out of memory");
        free(ib);
        free(lb);
        tg_release(x);
        return NULL;
    }
    int64_t *h0 = ib, *h1 = ib + oh, *w0 = ib + 2 * oh, *w1 = ib + 2 * oh + ow;
    double *lh = lb, *lw = lb + oh;
    if (bilinear) {
        linear_indices(h0, h1, lh, ih, oh, align_corners, sh, f32);
        linear_indices(w0, w1, lw, iw, ow, align_corners, sw, f32);
    } else {
        nearest_indices(h0, ih, oh, sh, f32);
        nearest_indices(w0, iw, ow, sw, f32);
    }
    const char *xd = tg__k_data(x);
    char *yd = tg__k_data(y);
#pragma omp parallel for schedule(static) if (n * c * oh * ow > NORM_GRAIN)
    for (int64_t p = 0; p < n * c; p++) {
        for (int64_t i = 0; i < oh; i++) {
            if (f32) {
                const float *src = (const float *)xd + p * ih * iw;
                float *dst = (float *)yd + (p * oh + i) * ow;
                if (!bilinear) {
                    const float *row = src + h0[i] * iw;
                    for (int64_t j = 0; j < ow; j++) dst[j] = row[w0[j]];
                } else {
                    const float *r0 = src + h0[i] * iw, *r1 = src + h1[i] * iw;
                    float b1 = (float)lh[i], b0 = 1.0f - b1;
                    for (int64_t j = 0; j < ow; j++) {
                        float a1 = (float)lw[j], a0 = 1.0f - a1;
                        float t0 = r0[w0[j]] * a0 + r0[w1[j]] * a1;
                        float t1 = r1[w0[j]] * a0 + r1[w1[j]] * a1;
                        dst[j] = t0 * b0 + t1 * b1;
                    }
                }
            } else {
                const double *src = (const double *)xd + p * ih * iw;
                double *dst = (double *)yd + (p * oh + i) * ow;
                if (!bilinear) {
                    const double *row = src + h0[i] * iw;
                    for (int64_t j = 0; j < ow; j++) dst[j] = row[w0[j]];
                } else {
                    const double *r0 = src + h0[i] * iw, *r1 = src + h1[i] * iw;
                    double b1 = lh[i], b0 = 1.0 - b1;
                    for (int64_t j = 0; j < ow; j++) {
                        double a1 = lw[j], a0 = 1.0 - a1;
                        double t0 = r0[w0[j]] * a0 + r0[w1[j]] * a1;
                        double t1 = r1[w0[j]] * a0 + r1[w1[j]] * a1;
                        dst[j] = t0 * b0 + t1 * b1;
                    }
                }
            }
        }
    }
    free(ib);
    free(lb);
    tg_release(x);
    return y;
}

static tg_tensor *upsample_bwd(const char *op, const char *kname, tg_tensor *grad_output,
                               tg_int_list output_size, tg_int_list input_size, bool bilinear,
                               bool align_corners, tg_opt_float sh, tg_opt_float sw)
{
    if (tg__upsample2d_backward_check(op, kname, grad_output, output_size, input_size) != 0)
        return NULL;
    tg_dtype dt = grad_output->dtype;
    bool f32 = dt == TG_FLOAT32;
    int64_t n = input_size.data[0], c = input_size.data[1], ih = input_size.data[2],
            iw = input_size.data[3];
    int64_t oh = output_size.data[0], ow = output_size.data[1];
    int64_t *ib = malloc(sizeof(int64_t) * (size_t)(2 * oh + 2 * ow + 2));
    double *lb = malloc(sizeof(double) * (size_t)(oh + ow + 2));
    tg_tensor *g = ib && lb ? tg__contiguous(op, grad_output) : NULL;
    tg_tensor *gi = g ? tg__empty(op, input_size.data, 4, dt, TG_DEVICE_CPU) : NULL;
    if (!gi) {
        if (!ib || !lb) tg__error(op, "out of memory");
        free(ib);
        free(lb);
        tg_release(g);
        return NULL;
    }
    int64_t *h0 = ib, *h1 = ib + oh, *w0 = ib + 2 * oh, *w1 = ib + 2 * oh + ow;
    double *lh = lb, *lw = lb + oh;
    if (bilinear) {
        linear_indices(h0, h1, lh, ih, oh, align_corners, sh, f32);
        linear_indices(w0, w1, lw, iw, ow, align_corners, sw, f32);
    } else {
        for (int64_t i = 0; i < oh; i++) h0[i] = tg__ups_nearest_idx(i, ih, oh, sh);
        for (int64_t j = 0; j < ow; j++) w0[j] = tg__ups_nearest_idx(j, iw, ow, sw);
    }
    const char *gd = tg__k_data(g);
    char *od = tg__k_data(gi);
    memset(od, 0, (size_t)(n * c * ih * iw) * tg_dtype_size(dt));
#pragma omp parallel for schedule(static) if (n * c * oh * ow > NORM_GRAIN)
    for (int64_t p = 0; p < n * c; p++) {
        for (int64_t i = 0; i < oh; i++) {
            if (f32) {
                const float *src = (const float *)gd + (p * oh + i) * ow;
                float *dst = (float *)od + p * ih * iw;
                if (!bilinear) {
                    float *row = dst + h0[i] * iw;
                    for (int64_t j = 0; j < ow; j++) row[w0[j]] += src[j];
                } else {
                    float *r0 = dst + h0[i] * iw, *r1 = dst + h1[i] * iw;
                    float b1 = (float)lh[i], b0 = 1.0f - b1;
                    for (int64_t j = 0; j < ow; j++) {
                        float a1 = (float)lw[j], a0 = 1.0f - a1, v = src[j];
                        r0[w0[j]] += b0 * a0 * v;
                        r0[w1[j]] += b0 * a1 * v;
                        r1[w0[j]] += b1 * a0 * v;
                        r1[w1[j]] += b1 * a1 * v;
                    }
                }
            } else {
                const double *src = (const double *)gd + (p * oh + i) * ow;
                double *dst = (double *)od + p * ih * iw;
                if (!bilinear) {
                    double *row = dst + h0[i] * iw;
                    for (int64_t j = 0; j < ow; j++) row[w0[j]] += src[j];
                } else {
                    double *r0 = dst + h0[i] * iw, *r1 = dst + h1[i] * iw;
                    double b1 = lh[i], b0 = 1.0 - b1;
                    for (int64_t j = 0; j < ow; j++) {
                        double a1 = lw[j], a0 = 1.0 - a1, v = src[j];
                        r0[w0[j]] += b0 * a0 * v;
                        r0[w1[j]] += b0 * a1 * v;
                        r1[w0[j]] += b1 * a0 * v;
                        r1[w1[j]] += b1 * a1 * v;
                    }
                }
            }
        }
    }
    free(ib);
    free(lb);
    tg_release(g);
    return gi;
}

tg_tensor *tg__cpu_upsample_nearest2d(tg_tensor *self, tg_int_list output_size,
                                      tg_opt_float scales_h, tg_opt_float scales_w)
{
    return upsample_fwd("upsample_nearest2d", "compute_indices_weights_nearest", self, output_size,
                        false, false, scales_h, scales_w);
}

tg_tensor *tg__cpu_upsample_nearest2d_backward(tg_tensor *grad_output, tg_int_list output_size,
                                               tg_int_list input_size, tg_opt_float scales_h,
                                               tg_opt_float scales_w)
{
    return upsample_bwd("upsample_nearest2d_backward", "upsample_nearest2d_backward", grad_output,
                        output_size, input_size, false, false, scales_h, scales_w);
}

tg_tensor *tg__cpu_upsample_bilinear2d(tg_tensor *self, tg_int_list output_size, bool align_corners,
                                       tg_opt_float scales_h, tg_opt_float scales_w)
{
    return upsample_fwd("upsample_bilinear2d", "compute_indices_weights_linear", self, output_size,
                        true, align_corners, scales_h, scales_w);
}

tg_tensor *tg__cpu_upsample_bilinear2d_backward(tg_tensor *grad_output, tg_int_list output_size,
                                                tg_int_list input_size, bool align_corners,
                                                tg_opt_float scales_h, tg_opt_float scales_w)
{
    return upsample_bwd("upsample_bilinear2d_backward", "upsample_bilinear2d_backward", grad_output,
                        output_size, input_size, true, align_corners, scales_h, scales_w);
}
