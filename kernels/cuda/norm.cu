/* Normalization and resizing on CUDA: native_batch_norm(_backward), native_group_norm(_backward),
 * upsample_nearest2d(_backward), upsample_bilinear2d(_backward), float32 and float64, with the
 * CPU kernels' semantics, checks (kernels/common/norm_checks.h) and index arithmetic.
 *
 * Operands are made contiguous (N, C, HW). Statistics are one block per channel (batch norm)
 * or per (n, group) (group norm) reducing in double through shared memory; the per-channel
 * coefficients go to a small double workspace and one elementwise kernel applies them. The
 * upsampling backward kernels scatter with atomicAdd. */
#include "tg_cuda.cuh"
#include "norm_checks.h"

#include "kernels/native_batch_norm.h"
#include "kernels/native_batch_norm_backward.h"
#include "kernels/native_group_norm.h"
#include "kernels/native_group_norm_backward.h"
#include "kernels/upsample_bilinear2d.h"
#include "kernels/upsample_bilinear2d_backward.h"
#include "kernels/upsample_nearest2d.h"
#include "kernels/upsample_nearest2d_backward.h"

#define THREADS 256

/* ------------------------------------------------------------------ helpers (device) */

/* Sums a and b over the block (THREADS threads); the result is valid in thread 0. */
__device__ void block_sum2(double *sa, double *sb, double &a, double &b)
{
    int t = threadIdx.x;
    sa[t] = a;
    sb[t] = b;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) {
            sa[t] += sa[t + s];
            sb[t] += sb[t + s];
        }
        __syncthreads();
    }
    a = sa[0];
    b = sb[0];
}

/* Shifted sums of a (rows x len) slab with row stride `stride`: sum(x - k), sum((x - k)^2). */
template <class T>
__device__ void slab_sums(const T *x, int64_t rows, int64_t len, int64_t stride, double k,
                          double *sa, double *sb, double &s, double &ss)
{
    double a = 0, b = 0;
    int64_t total = rows * len;
    for (int64_t i = threadIdx.x; i < total; i += THREADS) {
        double d = (double)x[(i / len) * stride + i % len] - k;
        a += d;
        b += d * d;
    }
    block_sum2(sa, sb, a, b);
    s = a;
    ss = b;
}

/* sum(dy), sum(dy * (x - m)) over a slab. */
template <class T>
__device__ void slab_grad_sums(const T *dy, const T *x, int64_t rows, int64_t len, int64_t stride,
                               double m, double *sa, double *sb, double &s, double &dot)
{
    double a = 0, b = 0;
    int64_t total = rows * len;
    for (int64_t i = threadIdx.x; i < total; i += THREADS) {
        int64_t o = (i / len) * stride + i % len;
        double g = (double)dy[o];
        a += g;
        b += g * ((double)x[o] - m);
    }
    block_sum2(sa, sb, a, b);
    s = a;
    dot = b;
}

/* ------------------------------------------------------------------ batch norm */

struct bn_params {
    const void *w, *b;             /* contiguous (C) or NULL */
    void *rm, *rv;                 /* contiguous (C) or NULL: updated in training, read in eval */
    void *save_mean, *save_invstd; /* (C) outputs in training */
    double *coef;                  /* (2C): alpha, beta */
    int64_t n, c, hw;
    double momentum, eps;
};

template <class T> __global__ void bn_stats_kernel(const T *x, bn_params p, bool training)
{
    __shared__ double sa[THREADS], sb[THREADS];
    int64_t ch = blockIdx.x;
    int64_t m = p.n * p.hw;
    double mean, var;
    if (training) {
        double k = m > 0 ? (double)x[ch * p.hw] : 0, s, ss;
        slab_sums<T>(x + ch * p.hw, p.n, p.hw, p.c * p.hw, k, sa, sb, s, ss);
        double d = m > 0 ? s / (double)m : 0;
        var = m > 0 ? ss / (double)m - d * d : 0;
        if (var < 0) var = 0;
        mean = k + d;
    } else {
        mean = (double)((const T *)p.rm)[ch];
        var = (double)((const T *)p.rv)[ch];
    }
    if (threadIdx.x != 0) return;
    double invstd = 1.0 / sqrt(var + p.eps);
    if (training) {
        ((T *)p.save_mean)[ch] = (T)mean;
        ((T *)p.save_invstd)[ch] = (T)invstd;
        if (m > 0 && p.rm) {
            T *rm = (T *)p.rm;
            rm[ch] = (T)(p.momentum * mean + (1 - p.momentum) * (double)rm[ch]);
        }
        if (m > 0 && p.rv) {
            T *rv = (T *)p.rv;
            rv[ch] = (T)(p.momentum * (var * (double)m / (double)(m - 1)) +
                         (1 - p.momentum) * (double)rv[ch]);
        }
    }
    double w = p.w ? (double)((const T *)p.w)[ch] : 1.0;
    double b = p.b ? (double)((const T *)p.b)[ch] : 0.0;
    double alpha = invstd * w;
    p.coef[ch] = alpha;
    p.coef[p.c + ch] = b - mean * alpha;
}

/* y = x * a[c] + b[c] (+ z * d[c]) over (n, c, hw), coef (a | b | d) of c each. */
template <class T>
__global__ void channel_affine_kernel(T *y, const T *x, const T *z, const double *coef,
                                      int64_t total, int64_t c, int64_t hw)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t ch = (i / hw) % c;
        double v = (double)x[i] * coef[ch] + coef[c + ch];
        if (z) v += (double)z[i] * coef[2 * c + ch];
        y[i] = (T)v;
    }
}

/* Backward coefficients per channel: dx = dy * a + x * b + c; grad_weight, grad_bias. */
template <class T>
__global__ void bn_backward_kernel(const T *dy, const T *x, const T *w, const T *mean_p,
                                   const T *var_p, bool train, double eps, int64_t n, int64_t c,
                                   int64_t hw, double *coef, T *gw, T *gb)
{
    __shared__ double sa[THREADS], sb[THREADS];
    int64_t ch = blockIdx.x;
    double mean = (double)mean_p[ch];
    double invstd = train ? (double)var_p[ch] : 1.0 / sqrt((double)var_p[ch] + eps);
    double s, dot;
    slab_grad_sums<T>(dy + ch * hw, x + ch * hw, n, hw, c * hw, mean, sa, sb, s, dot);
    if (threadIdx.x != 0) return;
    int64_t m = n * hw;
    double a = invstd * (w ? (double)w[ch] : 1.0);
    double kb = 0, kc = 0;
    if (train && m > 0) {
        double k = dot * invstd * invstd / (double)m;
        kb = -k * a;
        kc = (-s / (double)m + mean * k) * a;
    }
    /* channel_affine_kernel's layout with x = dy, z = x: dx = dy * a + kc + x * kb */
    coef[ch] = a;
    coef[c + ch] = kc;
    coef[2 * c + ch] = kb;
    if (gw) gw[ch] = (T)(dot * invstd);
    if (gb) gb[ch] = (T)s;
}

static tg_tensor *dev_empty(const char *op, int64_t n, tg_dtype dt, tg_device dev)
{
    return tg__empty(op, &n, 1, dt, dev);
}

/* The outputs of a batch or group norm backward, on input's device: the gradients output_mask
 * asks for in g (grad_input of input's shape, grad_weight and grad_bias of c elements, input's
 * dtype; NULL when not wanted) and a float64 scratch of nscratch elements. True when all were
 * made (the error recorded otherwise). */
static bool bwd_outputs(const char *op, const tg_tensor *input, tg_bool_list output_mask, int64_t c,
                        int64_t nscratch, tg_tensor **g, tg_tensor **scratch)
{
    bool want[3];
    tg__k_output_mask(output_mask, want);
    tg_dtype dt = input->dtype;
    tg_device dev = input->device;
    g[0] = want[0] ? tg__empty(op, input->sizes, input->ndim, dt, dev) : NULL;
    g[1] = want[1] ? dev_empty(op, c, dt, dev) : NULL;
    g[2] = want[2] ? dev_empty(op, c, dt, dev) : NULL;
    *scratch = dev_empty(op, nscratch, TG_FLOAT64, dev);
    return *scratch && (!want[0] || g[0]) && (!want[1] || g[1]) && (!want[2] || g[2]);
}

extern "C" tg_tensors3 tg__cuda_native_batch_norm(tg_tensor *input, tg_tensor *weight,
                                                  tg_tensor *bias, tg_tensor *running_mean,
                                                  tg_tensor *running_var, bool training,
                                                  double momentum, double eps)
{
    const char *op = "native_batch_norm";
    tg_tensors3 res = { NULL, NULL, NULL };
    if (tg__batch_norm_check(op, input, weight, bias, running_mean, running_var, training) != 0)
        return res;
    tg_tensor *others[4] = { weight, bias, running_mean, running_var }, *cp[5];
    cudaStream_t st;
    if (tg__cuda_begin_copies(op, input, others, 4, 4, &st, cp) != 0) return res;
    tg_tensor *x = cp[0], *w = cp[1], *b = cp[2], *rm = cp[3], *rv = cp[4];
    tg_dtype dt = input->dtype;
    tg_device dev = input->device;
    int64_t n = input->sizes[0], c = input->sizes[1], hw = 1;
    for (int64_t i = 2; i < input->ndim; i++) hw *= input->sizes[i];
    tg_tensor *y = tg__empty(op, input->sizes, input->ndim, dt, dev);
    tg_tensor *sm = y ? dev_empty(op, training ? c : 0, dt, dev) : NULL;
    tg_tensor *si = sm ? dev_empty(op, training ? c : 0, dt, dev) : NULL;
    tg_tensor *coef = si ? dev_empty(op, 2 * c + 1, TG_FLOAT64, dev) : NULL;
    bool ok = coef != NULL;
    if (ok && c > 0) {
        bn_params p;
        p.w = w ? tg__k_data(w) : NULL;
        p.b = b ? tg__k_data(b) : NULL;
        p.rm = rm ? tg__k_data(rm) : NULL;
        p.rv = rv ? tg__k_data(rv) : NULL;
        p.save_mean = tg__k_data(sm);
        p.save_invstd = tg__k_data(si);
        p.coef = (double *)tg__k_data(coef);
        p.n = n;
        p.c = c;
        p.hw = hw;
        p.momentum = momentum;
        p.eps = eps;
        int64_t total = n * c * hw;
        tg__cuda_dispatch_float(dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
                bn_stats_kernel<T>
                    <<<(unsigned)c, THREADS, 0, st>>>((const T *)tg__k_data(x), p, training);
                if (total > 0)
                    channel_affine_kernel<T><<<tg__cuda_blocks(total, THREADS), THREADS, 0, st>>>(
                        (T *)tg__k_data(y), (const T *)tg__k_data(x), (const T *)NULL, p.coef,
                        total, c, hw);
            }
        });
        ok = tg__cuda_launch_ok(op) == 0;
    }
    /* running statistics that were copied: write back */
    if (ok && training && rm && rm != running_mean)
        ok = tg__cuda_copy_broadcast(op, running_mean, rm) == 0;
    if (ok && training && rv && rv != running_var)
        ok = tg__cuda_copy_broadcast(op, running_var, rv) == 0;
    tg_release(coef);
    tg__k_release_all(cp, 5);
    return tg__k_results3(ok, y, sm, si);
}

extern "C" tg_tensors3
tg__cuda_native_batch_norm_backward(tg_tensor *grad_out, tg_tensor *input, tg_tensor *weight,
                                    tg_tensor *running_mean, tg_tensor *running_var,
                                    tg_tensor *save_mean, tg_tensor *save_invstd, bool train,
                                    double eps, tg_bool_list output_mask)
{
    const char *op = "native_batch_norm_backward";
    tg_tensors3 res = { NULL, NULL, NULL };
    if (tg__batch_norm_backward_check(op, grad_out, input, weight, running_mean, running_var,
                                      save_mean, save_invstd, train) != 0)
        return res;
    tg_tensor *mp = train ? save_mean : running_mean, *vp = train ? save_invstd : running_var;
    tg_tensor *others[4] = { grad_out, weight, mp, vp }, *cp[5];
    cudaStream_t st;
    if (tg__cuda_begin_copies(op, input, others, 4, 4, &st, cp) != 0) return res;
    tg_tensor *x = cp[0], *dy = cp[1], *w = cp[2], *m = cp[3], *v = cp[4];
    int64_t n = input->sizes[0], c = input->sizes[1], hw = 1;
    for (int64_t i = 2; i < input->ndim; i++) hw *= input->sizes[i];
    tg_tensor *g[3], *coef;
    bool ok = bwd_outputs(op, input, output_mask, c, 3 * c + 1, g, &coef);
    tg_tensor *dx = g[0], *gw = g[1], *gb = g[2];
    tg_dtype dt = input->dtype;
    if (ok && c > 0) {
        int64_t total = n * c * hw;
        tg__cuda_dispatch_float(dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
                double *cf = (double *)tg__k_data(coef);
                bn_backward_kernel<T><<<(unsigned)c, THREADS, 0, st>>>(
                    (const T *)tg__k_data(dy), (const T *)tg__k_data(x),
                    w ? (const T *)tg__k_data(w) : (const T *)NULL, (const T *)tg__k_data(m),
                    (const T *)tg__k_data(v), train, eps, n, c, hw, cf,
                    gw ? (T *)tg__k_data(gw) : (T *)NULL, gb ? (T *)tg__k_data(gb) : (T *)NULL);
                if (dx && total > 0)
                    channel_affine_kernel<T><<<tg__cuda_blocks(total, THREADS), THREADS, 0, st>>>(
                        (T *)tg__k_data(dx), (const T *)tg__k_data(dy), (const T *)tg__k_data(x),
                        cf, total, c, hw);
            }
        });
        ok = tg__cuda_launch_ok(op) == 0;
    }
    tg_release(coef);
    /* c == 0: the gradients have no elements */
    return tg__cuda_grads_end(op, ok, false, g, cp, 5, st);
}

/* ------------------------------------------------------------------ group norm */

template <class T>
__global__ void gn_stats_kernel(const T *x, int64_t gsize, double eps, T *mean_o, T *rstd_o)
{
    __shared__ double sa[THREADS], sb[THREADS];
    int64_t p = blockIdx.x;
    double k = gsize > 0 ? (double)x[p * gsize] : 0, s, ss;
    slab_sums<T>(x + p * gsize, 1, gsize, 0, k, sa, sb, s, ss);
    if (threadIdx.x != 0) return;
    double d = gsize > 0 ? s / (double)gsize : 0;
    double v = gsize > 0 ? ss / (double)gsize - d * d : 0;
    mean_o[p] = (T)(k + d);
    rstd_o[p] = (T)(1.0 / sqrt((v > 0 ? v : 0) + eps));
}

/* y = (x - mean[n, g]) * rstd[n, g] * w[c] + b[c] */
template <class T>
__global__ void gn_apply_kernel(T *y, const T *x, const T *mean, const T *rstd, const T *w,
                                const T *b, int64_t total, int64_t c, int64_t hw, int64_t group)
{
    int64_t d = c / group;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t nc = i / hw, ch = nc % c, ng = (nc / c) * group + ch / d;
        double a = (double)rstd[ng] * (w ? (double)w[ch] : 1.0);
        double v = ((double)x[i] - (double)mean[ng]) * a + (b ? (double)b[ch] : 0.0);
        y[i] = (T)v;
    }
}

/* Per (n, c): sum(dy), sum(dy * (x - mean[n, g])) into sums (2 * N * C). */
template <class T>
__global__ void gn_grad_sums_kernel(const T *dy, const T *x, const T *mean, int64_t c, int64_t hw,
                                    int64_t group, double *sums, int64_t nc_total)
{
    __shared__ double sa[THREADS], sb[THREADS];
    int64_t q = blockIdx.x;
    int64_t ng = (q / c) * group + (q % c) / (c / group);
    double s, dot;
    slab_grad_sums<T>(dy + q * hw, x + q * hw, 1, hw, 0, (double)mean[ng], sa, sb, s, dot);
    if (threadIdx.x != 0) return;
    sums[q] = s;
    sums[nc_total + q] = dot;
}

/* Per (n, g): coefficients (bcoef, ccoef) of dx = dy * rstd * w[c] + x * bcoef + ccoef. */
template <class T>
__global__ void gn_coef_kernel(const double *sums, const T *w, const T *mean, const T *rstd,
                               int64_t n, int64_t c, int64_t hw, int64_t group, double *coef)
{
    int64_t ng = n * group, d = c / group, nc = n * c;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < ng;
         p += (int64_t)gridDim.x * blockDim.x) {
        double g1 = 0, g2 = 0;
        for (int64_t j = 0; j < d; j++) {
            int64_t ch = (p % group) * d + j, q = (p / group) * c + ch;
            double wc = w ? (double)w[ch] : 1.0;
            g1 += wc * sums[q];
            g2 += wc * sums[nc + q];
        }
        double r = (double)rstd[p], mu = (double)mean[p];
        double inv_m = d * hw > 0 ? 1.0 / (double)(d * hw) : 0;
        double bc = -r * r * r * g2 * inv_m;
        coef[p] = bc;
        coef[ng + p] = -r * g1 * inv_m - bc * mu;
    }
}

template <class T>
__global__ void gn_dx_kernel(T *dx, const T *dy, const T *x, const T *w, const T *rstd,
                             const double *coef, int64_t total, int64_t c, int64_t hw,
                             int64_t group, int64_t ng_total)
{
    int64_t d = c / group;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t nc = i / hw, ch = nc % c, ng = (nc / c) * group + ch / d;
        double a = (double)rstd[ng] * (w ? (double)w[ch] : 1.0);
        dx[i] = (T)((double)dy[i] * a + (double)x[i] * coef[ng] + coef[ng_total + ng]);
    }
}

template <class T>
__global__ void gn_dw_kernel(const double *sums, const T *rstd, int64_t n, int64_t c, int64_t group,
                             T *dw, T *db)
{
    int64_t d = c / group, nc = n * c;
    for (int64_t ch = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; ch < c;
         ch += (int64_t)gridDim.x * blockDim.x) {
        double a = 0, b = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t q = i * c + ch;
            a += sums[nc + q] * (double)rstd[i * group + ch / d];
            b += sums[q];
        }
        if (dw) dw[ch] = (T)a;
        if (db) db[ch] = (T)b;
    }
}

extern "C" tg_tensors3 tg__cuda_native_group_norm(tg_tensor *input, tg_tensor *weight,
                                                  tg_tensor *bias, int64_t N, int64_t C,
                                                  int64_t HxW, int64_t group, double eps)
{
    const char *op = "native_group_norm";
    tg_tensors3 res = { NULL, NULL, NULL };
    if (tg__group_norm_check(op, input, weight, bias, N, C, HxW, group) != 0) return res;
    tg_tensor *others[2] = { weight, bias }, *cp[3];
    cudaStream_t st;
    if (tg__cuda_begin_copies(op, input, others, 2, 2, &st, cp) != 0) return res;
    tg_tensor *x = cp[0], *w = cp[1], *b = cp[2];
    int64_t msz[2] = { N, group };
    tg_dtype dt = input->dtype;
    tg_device dev = input->device;
    tg_tensor *y = tg__empty(op, input->sizes, input->ndim, dt, dev);
    tg_tensor *mt = y ? tg__empty(op, msz, 2, dt, dev) : NULL;
    tg_tensor *rt = mt ? tg__empty(op, msz, 2, dt, dev) : NULL;
    bool ok = rt != NULL;
    int64_t ng = N * group, total = N * C * HxW;
    if (ok && ng > 0) {
        tg__cuda_dispatch_float(dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
                gn_stats_kernel<T><<<(unsigned)ng, THREADS, 0, st>>>(
                    (const T *)tg__k_data(x), (C / group) * HxW, eps, (T *)tg__k_data(mt),
                    (T *)tg__k_data(rt));
                if (total > 0)
                    gn_apply_kernel<T><<<tg__cuda_blocks(total, THREADS), THREADS, 0, st>>>(
                        (T *)tg__k_data(y), (const T *)tg__k_data(x), (const T *)tg__k_data(mt),
                        (const T *)tg__k_data(rt), w ? (const T *)tg__k_data(w) : (const T *)NULL,
                        b ? (const T *)tg__k_data(b) : (const T *)NULL, total, C, HxW, group);
            }
        });
        ok = tg__cuda_launch_ok(op) == 0;
    }
    tg__k_release_all(cp, 3);
    return tg__k_results3(ok, y, mt, rt);
}

extern "C" tg_tensors3 tg__cuda_native_group_norm_backward(tg_tensor *grad_out, tg_tensor *input,
                                                           tg_tensor *mean, tg_tensor *rstd,
                                                           tg_tensor *weight, int64_t N, int64_t C,
                                                           int64_t HxW, int64_t group,
                                                           tg_bool_list output_mask)
{
    const char *op = "native_group_norm_backward";
    tg_tensors3 res = { NULL, NULL, NULL };
    if (tg__group_norm_backward_check(op, grad_out, input, mean, rstd, weight, N, C, HxW, group) !=
        0)
        return res;
    tg_tensor *others[4] = { grad_out, mean, rstd, weight }, *cp[5];
    cudaStream_t st;
    if (tg__cuda_begin_copies(op, input, others, 4, 4, &st, cp) != 0) return res;
    tg_tensor *x = cp[0], *dy = cp[1], *mu = cp[2], *rs = cp[3], *w = cp[4];
    int64_t nc = N * C, ng = N * group, total = N * C * HxW;
    tg_tensor *g[3], *ws;
    bool ok = bwd_outputs(op, input, output_mask, C, 2 * nc + 2 * ng + 1, g, &ws);
    tg_tensor *dx = g[0], *gw = g[1], *gb = g[2];
    tg_dtype dt = input->dtype;
    if (ok && nc > 0) {
        tg__cuda_dispatch_float(dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
                double *sums = (double *)tg__k_data(ws), *coef = sums + 2 * nc;
                const T *wp = w ? (const T *)tg__k_data(w) : (const T *)NULL;
                gn_grad_sums_kernel<T><<<(unsigned)nc, THREADS, 0, st>>>(
                    (const T *)tg__k_data(dy), (const T *)tg__k_data(x), (const T *)tg__k_data(mu),
                    C, HxW, group, sums, nc);
                if (dx && total > 0) {
                    gn_coef_kernel<T><<<tg__cuda_blocks(ng, THREADS), THREADS, 0, st>>>(
                        sums, wp, (const T *)tg__k_data(mu), (const T *)tg__k_data(rs), N, C, HxW,
                        group, coef);
                    gn_dx_kernel<T><<<tg__cuda_blocks(total, THREADS), THREADS, 0, st>>>(
                        (T *)tg__k_data(dx), (const T *)tg__k_data(dy), (const T *)tg__k_data(x),
                        wp, (const T *)tg__k_data(rs), coef, total, C, HxW, group, ng);
                }
                if (gw || gb)
                    gn_dw_kernel<T><<<tg__cuda_blocks(C, THREADS), THREADS, 0, st>>>(
                        sums, (const T *)tg__k_data(rs), N, C, group,
                        gw ? (T *)tg__k_data(gw) : (T *)NULL, gb ? (T *)tg__k_data(gb) : (T *)NULL);
            }
        });
        ok = tg__cuda_launch_ok(op) == 0;
    }
    tg_release(ws);
    /* no elements: zero gradients */
    return tg__cuda_grads_end(op, ok, nc == 0, g, cp, 5, st);
}

/* ------------------------------------------------------------------ upsampling */

struct ups_geom {
    int64_t nc, ih, iw, oh, ow;
    bool bilinear, align_corners, f32;
    double scale_h, scale_w; /* nearest: tg__ups_scale; linear: tg__ups_linear_scale */
    bool near_special_h, near_special_w;
};

/* Forward nearest index (the element type's arithmetic, as the CPU's nearest_indices). */
__device__ __forceinline__ int64_t ups_nearest_fwd(int64_t i, int64_t in, double scale, bool f32)
{
    int64_t src =
        f32 ? (int64_t)floorf((float)i * (float)scale) : (int64_t)floorf((float)(scale * i));
    return src < in - 1 ? src : in - 1;
}

/* Backward nearest index (tg__ups_nearest_idx). */
__device__ __forceinline__ int64_t ups_nearest_bwd(int64_t i, int64_t in, int64_t out, double scale)
{
    if (out == in) return i;
    if (out == 2 * in) return i >> 1;
    int64_t src = (int64_t)floorf((float)i * (float)scale);
    return src < in - 1 ? src : in - 1;
}

/* Output (oh_i, ow_i)'s four bilinear taps in a plane: element offsets o (rows h0, h1 by
 * columns w0, w1) and the weights a0, a1 (columns) and b0, b1 (rows). */
template <class T>
__device__ __forceinline__ void ups_bilinear(const ups_geom &g, int64_t oh_i, int64_t ow_i,
                                             int64_t o[4], T &a0, T &a1, T &b0, T &b1)
{
    int64_t h0, h1, w0, w1;
    double lh, lw;
    tg__ups_linear_index(oh_i, g.ih, g.scale_h, g.align_corners, g.f32, &h0, &h1, &lh);
    tg__ups_linear_index(ow_i, g.iw, g.scale_w, g.align_corners, g.f32, &w0, &w1, &lw);
    b1 = (T)lh;
    b0 = (T)1 - b1;
    a1 = (T)lw;
    a0 = (T)1 - a1;
    o[0] = h0 * g.iw + w0;
    o[1] = h0 * g.iw + w1;
    o[2] = h1 * g.iw + w0;
    o[3] = h1 * g.iw + w1;
}

template <class T> __global__ void ups_fwd_kernel(T *y, const T *x, ups_geom g)
{
    int64_t total = g.nc * g.oh * g.ow;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t ow_i = i % g.ow, oh_i = (i / g.ow) % g.oh, p = i / (g.ow * g.oh);
        const T *src = x + p * g.ih * g.iw;
        if (!g.bilinear) {
            int64_t h = ups_nearest_fwd(oh_i, g.ih, g.scale_h, g.f32);
            int64_t w = ups_nearest_fwd(ow_i, g.iw, g.scale_w, g.f32);
            y[i] = src[h * g.iw + w];
        } else {
            int64_t o[4];
            T a0, a1, b0, b1;
            ups_bilinear(g, oh_i, ow_i, o, a0, a1, b0, b1);
            T t0 = src[o[0]] * a0 + src[o[1]] * a1;
            T t1 = src[o[2]] * a0 + src[o[3]] * a1;
            y[i] = t0 * b0 + t1 * b1;
        }
    }
}

template <class T> __global__ void ups_bwd_kernel(T *gi, const T *go, ups_geom g)
{
    int64_t total = g.nc * g.oh * g.ow;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t ow_i = i % g.ow, oh_i = (i / g.ow) % g.oh, p = i / (g.ow * g.oh);
        T *dst = gi + p * g.ih * g.iw;
        T v = go[i];
        if (!g.bilinear) {
            int64_t h = ups_nearest_bwd(oh_i, g.ih, g.oh, g.scale_h);
            int64_t w = ups_nearest_bwd(ow_i, g.iw, g.ow, g.scale_w);
            atomicAdd(dst + h * g.iw + w, v);
        } else {
            int64_t o[4];
            T a0, a1, b0, b1;
            ups_bilinear(g, oh_i, ow_i, o, a0, a1, b0, b1);
            atomicAdd(dst + o[0], b0 * a0 * v);
            atomicAdd(dst + o[1], b0 * a1 * v);
            atomicAdd(dst + o[2], b1 * a0 * v);
            atomicAdd(dst + o[3], b1 * a1 * v);
        }
    }
}

static ups_geom ups_make(int64_t n, int64_t c, int64_t ih, int64_t iw, int64_t oh, int64_t ow,
                         bool bilinear, bool ac, tg_opt_float sh, tg_opt_float sw, tg_dtype dt)
{
    ups_geom g;
    g.nc = n * c;
    g.ih = ih;
    g.iw = iw;
    g.oh = oh;
    g.ow = ow;
    g.bilinear = bilinear;
    g.align_corners = ac;
    g.f32 = dt == TG_FLOAT32;
    g.scale_h = bilinear ? tg__ups_linear_scale(ih, oh, ac, sh) : tg__ups_scale(sh, ih, oh);
    g.scale_w = bilinear ? tg__ups_linear_scale(iw, ow, ac, sw) : tg__ups_scale(sw, iw, ow);
    g.near_special_h = g.near_special_w = false;
    return g;
}

/* The upsampling kernels' launch: src's contiguous copy through g into a new tensor of sizes
 * rsz, the forward's output or the backward's grad_input (zeroed first: the backward adds). */
static tg_tensor *ups_launch(const char *op, tg_tensor *src, const int64_t *rsz, const ups_geom &g,
                             bool backward)
{
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, src->device, &rc);
    if (rc) return NULL;
    tg_dtype dt = src->dtype;
    tg_tensor *x = tg__cuda_contiguous(op, src, dt);
    tg_tensor *y = x ? tg__empty(op, rsz, 4, dt, src->device) : NULL;
    if (!y) {
        tg_release(x);
        return NULL;
    }
    int64_t total = g.nc * g.oh * g.ow, ny = tg__numel(y);
    bool ok =
        !backward || ny == 0 ||
        tg__cuda_ok(op, cudaMemsetAsync(tg__k_data(y), 0, (size_t)ny * tg_dtype_size(dt), st)) == 0;
    if (ok && total > 0) {
        tg__cuda_dispatch_float(dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
                unsigned blocks = tg__cuda_blocks(total, THREADS);
                if (backward)
                    ups_bwd_kernel<T><<<blocks, THREADS, 0, st>>>((T *)tg__k_data(y),
                                                                  (const T *)tg__k_data(x), g);
                else
                    ups_fwd_kernel<T><<<blocks, THREADS, 0, st>>>((T *)tg__k_data(y),
                                                                  (const T *)tg__k_data(x), g);
            }
        });
        ok = tg__cuda_launch_ok(op) == 0;
    }
    tg_release(x);
    return tg__k_result(ok, y);
}

static tg_tensor *ups_fwd(const char *op, const char *kname, tg_tensor *self,
                          tg_int_list output_size, bool bilinear, bool ac, tg_opt_float sh,
                          tg_opt_float sw)
{
    if (tg__upsample2d_check(op, kname, self, output_size) != 0) return NULL;
    int64_t osz[4] = { self->sizes[0], self->sizes[1], output_size.data[0], output_size.data[1] };
    ups_geom g = ups_make(osz[0], osz[1], self->sizes[2], self->sizes[3], osz[2], osz[3], bilinear,
                          ac, sh, sw, self->dtype);
    return ups_launch(op, self, osz, g, false);
}

static tg_tensor *ups_bwd(const char *op, const char *kname, tg_tensor *grad_output,
                          tg_int_list output_size, tg_int_list input_size, bool bilinear, bool ac,
                          tg_opt_float sh, tg_opt_float sw)
{
    if (tg__upsample2d_backward_check(op, kname, grad_output, output_size, input_size) != 0)
        return NULL;
    ups_geom g = ups_make(input_size.data[0], input_size.data[1], input_size.data[2],
                          input_size.data[3], output_size.data[0], output_size.data[1], bilinear,
                          ac, sh, sw, grad_output->dtype);
    return ups_launch(op, grad_output, input_size.data, g, true);
}

extern "C" tg_tensor *tg__cuda_upsample_nearest2d(tg_tensor *self, tg_int_list output_size,
                                                  tg_opt_float scales_h, tg_opt_float scales_w)
{
    return ups_fwd("upsample_nearest2d", "compute_indices_weights_nearest", self, output_size,
                   false, false, scales_h, scales_w);
}

extern "C" tg_tensor *tg__cuda_upsample_nearest2d_backward(tg_tensor *grad_output,
                                                           tg_int_list output_size,
                                                           tg_int_list input_size,
                                                           tg_opt_float scales_h,
                                                           tg_opt_float scales_w)
{
    return ups_bwd("upsample_nearest2d_backward", "upsample_nearest2d_backward", grad_output,
                   output_size, input_size, false, false, scales_h, scales_w);
}

extern "C" tg_tensor *tg__cuda_upsample_bilinear2d(tg_tensor *self, tg_int_list output_size,
                                                   bool align_corners, tg_opt_float scales_h,
                                                   tg_opt_float scales_w)
{
    return ups_fwd("upsample_bilinear2d", "compute_indices_weights_linear", self, output_size, true,
                   align_corners, scales_h, scales_w);
}

extern "C" tg_tensor *
tg__cuda_upsample_bilinear2d_backward(tg_tensor *grad_output, tg_int_list output_size,
                                      tg_int_list input_size, bool align_corners,
                                      tg_opt_float scales_h, tg_opt_float scales_w)
{
    return ups_bwd("upsample_bilinear2d_backward", "upsample_bilinear2d_backward", grad_output,
                   output_size, input_size, true, align_corners, scales_h, scales_w);
}
