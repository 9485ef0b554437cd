/* Fused optimizer steps on CUDA: sgd_step_ and adam_step_, one elementwise kernel each, with
 * the arithmetic, argument checks and messages of the CPU kernels (kernels/cpu/optim.c,
 * torch.optim 1.13's single-tensor SGD/Adam/AdamW).
 *
 * Every operand has the parameter's shape and floating dtype (checked). float32 computes in
 * float with the Scalar factors rounded to float, as the CPU's typed loop (results agree with
 * it to a few ulp: the GPU's sqrtf and division are correctly rounded, FMA contraction may
 * differ); float64 in double; float16/bfloat16 in float (the CPU's reference loop uses
 * double: agreement to the storage type's rounding). Contiguous operands are indexed
 * directly, others through their geometry. */
#include "kc_common.cuh"
#include "optim_checks.h"      /* the CPU kernels' argument checks */


#define THREADS 256
#define NOPS 5

/* The shared checks (optim_checks.h), then every operand on the parameter's device. */
static int same_devices(const char *op, tg_tensor *const *ts)
{
    for (int k = 1; k < NOPS; k++)
        if (ts[k] && kc_same_device(op, ts[0], ts[k])) return -1;
    return 0;
}

/* ------------------------------------------------------------------ operands */

/* Up to five operands (param, grad, then the state buffers; NULL ones unused). */
struct ops {
    char *p[NOPS];
    kc_geo g[NOPS];
    bool contiguous;
};

static ops ops_of(tg_tensor *const *ts)
{
    ops o;
    memset(&o, 0, sizeof o);
    o.contiguous = true;
    for (int k = 0; k < NOPS; k++) {
        if (!ts[k]) continue;
        o.p[k] = kc_data(ts[k]);
        o.g[k] = kc_geo_of(ts[k]);
        o.contiguous &= tg__is_contiguous(ts[k]);
    }
    return o;
}

template <typename T> __device__ __forceinline__ T *at(const ops &o, int k, int64_t i)
{
    return (T *)o.p[k] + (o.contiguous ? i : kc_offset(o.g[k], i));
}

template <typename A> __device__ __forceinline__ A ksqrt(A v);
template <> __device__ __forceinline__ float ksqrt<float>(float v) { return sqrtf(v); }
template <> __device__ __forceinline__ double ksqrt<double>(double v) { return sqrt(v); }

template <typename A> __device__ __forceinline__ A max_nan(A a, A b) { return a > b || a != a ? a : b; }

/* ------------------------------------------------------------------ SGD */

struct sgd_args {
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize, first_step, has_buf;
};

template <typename T>
__global__ void sgd_kernel(ops o, int64_t n, sgd_args c)
{
    typedef typename kc_acc<T>::type A;
    A wd = (A)c.weight_decay, mom = (A)c.momentum, damp1 = (A)(1 - c.dampening), nlr = (A)-c.lr;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T *pp = at<T>(o, 0, i);
        A p = (A)kc_to_double(*pp), g = (A)kc_to_double(*at<T>(o, 1, i));
        A d = c.maximize ? -g : g;
        if (c.weight_decay != 0) d = d + wd * p;
        if (c.has_buf) {
            T *bp = at<T>(o, 2, i);
            A m = c.first_step ? d : (A)kc_to_double(*bp) * mom + damp1 * d;
            *bp = kc_from_double<T>((double)m);
            d = c.nesterov ? d + mom * m : m;
        }
        *pp = kc_from_double<T>((double)(p + nlr * d));
    }
}

extern "C" tg_tensor *tg__cuda_sgd_step_(tg_tensor *self, tg_tensor *grad, tg_tensor *momentum_buffer, double lr,
                                         double momentum, double dampening, double weight_decay, bool nesterov,
                                         bool maximize, bool first_step)
{
    const char *op = "sgd_step_";
    if (tg__sgd_check(op, self, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov) != 0)
        return NULL;
    tg_tensor *buf = momentum != 0 ? momentum_buffer : NULL;
    int rc;
    cudaStream_t st = kc_stream(op, self->device, &rc);
    if (rc) return NULL;
    tg_tensor *ts[NOPS] = { self, grad, buf, NULL, NULL };
    if (same_devices(op, ts)) return NULL;
    ops o = ops_of(ts);
    sgd_args c = { lr, momentum, dampening, weight_decay, nesterov, maximize, first_step, buf != NULL };
    int64_t n = tg__numel(self);
    if (n > 0) {
        kc_dispatch_float(self->dtype, [&](auto tag) {
            using T = decltype(tag);
            sgd_kernel<T><<<kc_blocks(n, THREADS), THREADS, 0, st>>>(o, n, c);
        });
        if (kc_launch_check(op)) return NULL;
    }
    if (buf) tg__bump_version(buf);
    tg__bump_version(self);
    return tg_retain(self);
}

/* ------------------------------------------------------------------ Adam / AdamW */

struct adam_args {
    double lr, beta1, beta2, eps, weight_decay;
    double step_size, bc2_sqrt;      /* lr / (1 - beta1^step), sqrt(1 - beta2^step) */
    bool amsgrad, maximize, decoupled;
};

template <typename T>
__global__ void adam_kernel(ops o, int64_t n, adam_args c)
{
    typedef typename kc_acc<T>::type A;
    A decay = (A)(1 - c.lr * c.weight_decay), wd = (A)c.weight_decay;
    A b1 = (A)c.beta1, b2 = (A)c.beta2, a1 = (A)(1 - c.beta1), a2 = (A)(1 - c.beta2);
    A bc2 = (A)c.bc2_sqrt, eps = (A)c.eps, nstep = (A)-c.step_size;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T *pp = at<T>(o, 0, i), *mp = at<T>(o, 2, i), *vp = at<T>(o, 3, i);
        A p = (A)kc_to_double(*pp), g = (A)kc_to_double(*at<T>(o, 1, i));
        A gi = c.maximize ? -g : g;
        if (c.decoupled) p = p * decay;
        else if (c.weight_decay != 0) gi = gi + wd * p;
        A m = (A)kc_to_double(*mp) * b1 + a1 * gi;
        A v = (A)kc_to_double(*vp) * b2 + a2 * gi * gi;
        *mp = kc_from_double<T>((double)m);
        *vp = kc_from_double<T>((double)v);
        A s = v;
        if (c.amsgrad) {
            T *xp = at<T>(o, 4, i);
            s = max_nan((A)kc_to_double(*xp), v);
            *xp = kc_from_double<T>((double)s);
        }
        A denom = ksqrt(s) / bc2 + eps;
        *pp = kc_from_double<T>((double)(p + nstep * m / denom));
    }
}

extern "C" tg_tensor *tg__cuda_adam_step_(tg_tensor *self, tg_tensor *grad, tg_tensor *exp_avg, tg_tensor *exp_avg_sq,
                                          tg_tensor *max_exp_avg_sq, int64_t step, double lr, double beta1,
                                          double beta2, double eps, double weight_decay, bool amsgrad, bool maximize,
                                          bool decoupled_weight_decay)
{
    const char *op = "adam_step_";
    if (tg__adam_check(op, self, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay,
                       amsgrad) != 0)
        return NULL;
    tg_tensor *vmax = amsgrad ? max_exp_avg_sq : NULL;
    int rc;
    cudaStream_t st = kc_stream(op, self->device, &rc);
    if (rc) return NULL;
    tg_tensor *ts[NOPS] = { self, grad, exp_avg, exp_avg_sq, vmax };
    if (same_devices(op, ts)) return NULL;
    ops o = ops_of(ts);
    adam_args c = { lr, beta1, beta2, eps, weight_decay, 0, 0, amsgrad, maximize, decoupled_weight_decay };
    c.step_size = lr / (1 - pow(beta1, (double)step));
    c.bc2_sqrt = sqrt(1 - pow(beta2, (double)step));
    int64_t n = tg__numel(self);
    if (n > 0) {
        kc_dispatch_float(self->dtype, [&](auto tag) {
            using T = decltype(tag);
            adam_kernel<T><<<kc_blocks(n, THREADS), THREADS, 0, st>>>(o, n, c);
        });
        if (kc_launch_check(op)) return NULL;
    }
    tg__bump_version(exp_avg);
    tg__bump_version(exp_avg_sq);
    if (vmax) tg__bump_version(vmax);
    tg__bump_version(self);
    return tg_retain(self);
}
