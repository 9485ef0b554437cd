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
#include "tg_cuda.cuh"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/adam_step.h"
#include "kernels/sgd_step.h"
#include "optim_checks.h" /* the CPU kernels' argument checks */

#define THREADS 256
#define NOPS 5

/* The shared checks (optim_checks.h), then every operand on the parameter's device. */
static int same_devices(const char *op, tg_tensor *const *ts)
{
    for (int k = 1; k < NOPS; k++)
        if (ts[k] && tg__cuda_same_device(op, ts[0], ts[k])) return -1;
    return 0;
}

/* ------------------------------------------------------------------ operands */

/* Up to five operands of the parameter's shape (param, grad, then the state buffers; NULL
 * ones unused): their first elements and one offset calculator for all of them. */
struct ops {
    char *p[NOPS];
    tg_cuda_offsets<NOPS> oc;
    bool contiguous;
};

static ops ops_of(tg_tensor *const *ts)
{
    ops o;
    memset(&o, 0, sizeof o);
    const int64_t *strides[NOPS];
    int64_t esize[NOPS];
    o.contiguous = true;
    for (int k = 0; k < NOPS; k++) {
        strides[k] = ts[k] ? ts[k]->strides : NULL;
        esize[k] = ts[k] ? (int64_t)tg_dtype_size(ts[k]->dtype) : 0;
        if (!ts[k]) continue;
        o.p[k] = tg__k_data(ts[k]);
        o.contiguous &= tg__is_contiguous(ts[k]);
    }
    o.oc = tg__cuda_offsets_from_strides<NOPS>(ts[0]->sizes, ts[0]->ndim, strides, esize);
    return o;
}

/* Element i of every operand: off[k] bytes from o.p[k]. */
template <typename T> __device__ __forceinline__ void element(const ops &o, int64_t i, int64_t *off)
{
    if (!o.contiguous) {
        o.oc.get(i, off);
        return;
    }
    for (int k = 0; k < NOPS; k++) off[k] = i * (int64_t)sizeof(T);
}

template <typename T> __device__ __forceinline__ T *at(const ops &o, int k, const int64_t *off)
{
    return (T *)(o.p[k] + off[k]);
}

/* The host side of every step: the operands on the parameter's device (ts[0]), then
 * launch(tag, o, n, stream) starts the step's kernel for the storage type in tag. Bumps the
 * version of every operand the step writes (all but the gradient, ts[1]) and returns the
 * parameter as a new reference, or NULL + error. */
template <class L> static tg_tensor *optim_step(const char *op, tg_tensor *const *ts, L &&launch)
{
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, ts[0]->device, &rc);
    if (rc || same_devices(op, ts)) return NULL;
    ops o = ops_of(ts);
    int64_t n = tg__numel(ts[0]);
    if (n > 0) {
        tg__cuda_dispatch_float(ts[0]->dtype, [&](auto tag) { launch(tag, o, n, st); });
        if (tg__cuda_launch_ok(op)) return NULL;
    }
    for (int k = NOPS - 1; k >= 0; k--)
        if (ts[k] && k != 1) tg__bump_version(ts[k]);
    return tg_retain(ts[0]);
}

template <typename A> __device__ __forceinline__ A ksqrt(A v);
template <> __device__ __forceinline__ float ksqrt<float>(float v) { return sqrtf(v); }
template <> __device__ __forceinline__ double ksqrt<double>(double v) { return sqrt(v); }

template <typename A> __device__ __forceinline__ A max_nan(A a, A b)
{
    return a > b || a != a ? a : b;
}

/* ------------------------------------------------------------------ SGD */

struct sgd_args {
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize, first_step, has_buf;
};

template <typename T> __global__ void sgd_kernel(ops o, int64_t n, sgd_args c)
{
    typedef typename tg_cuda_compute_of<T>::type A;
    A wd = (A)c.weight_decay, mom = (A)c.momentum, damp1 = (A)(1 - c.dampening), nlr = (A)-c.lr;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[NOPS];
        element<T>(o, i, off);
        T *pp = at<T>(o, 0, off);
        A p = tg__cuda_widen(*pp), g = tg__cuda_widen(*at<T>(o, 1, off));
        A d = c.maximize ? -g : g;
        if (c.weight_decay != 0) d = d + wd * p;
        if (c.has_buf) {
            T *bp = at<T>(o, 2, off);
            A m = c.first_step ? d : tg__cuda_widen(*bp) * mom + damp1 * d;
            *bp = tg__cuda_narrow<T>(m);
            d = c.nesterov ? d + mom * m : m;
        }
        *pp = tg__cuda_narrow<T>(p + nlr * d);
    }
}

extern "C" tg_tensor *tg__cuda_sgd_step_(tg_tensor *self, tg_tensor *grad,
                                         tg_tensor *momentum_buffer, double lr, double momentum,
                                         double dampening, double weight_decay, bool nesterov,
                                         bool maximize, bool first_step)
{
    const char *op = "sgd_step_";
    if (tg__sgd_check(op, self, grad, momentum_buffer, lr, momentum, dampening, weight_decay,
                      nesterov) != 0)
        return NULL;
    tg_tensor *buf = momentum != 0 ? momentum_buffer : NULL;
    tg_tensor *ts[NOPS] = { self, grad, buf, NULL, NULL };
    sgd_args c = { lr,       momentum, dampening,  weight_decay,
                   nesterov, maximize, first_step, buf != NULL };
    return optim_step(op, ts, [&](auto tag, const ops &o, int64_t n, cudaStream_t st) {
        using T = typename decltype(tag)::type;
        sgd_kernel<T><<<tg__cuda_blocks(n, THREADS), THREADS, 0, st>>>(o, n, c);
    });
}

/* ------------------------------------------------------------------ Adam / AdamW */

struct adam_args {
    double lr, beta1, beta2, eps, weight_decay;
    double step_size, bc2_sqrt; /* lr / (1 - beta1^step), sqrt(1 - beta2^step) */
    bool amsgrad, maximize, decoupled;
};

template <typename T> __global__ void adam_kernel(ops o, int64_t n, adam_args c)
{
    typedef typename tg_cuda_compute_of<T>::type A;
    A decay = (A)(1 - c.lr * c.weight_decay), wd = (A)c.weight_decay;
    A b1 = (A)c.beta1, b2 = (A)c.beta2, a1 = (A)(1 - c.beta1), a2 = (A)(1 - c.beta2);
    A bc2 = (A)c.bc2_sqrt, eps = (A)c.eps, nstep = (A)-c.step_size;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t off[NOPS];
        element<T>(o, i, off);
        T *pp = at<T>(o, 0, off), *mp = at<T>(o, 2, off), *vp = at<T>(o, 3, off);
        A p = tg__cuda_widen(*pp), g = tg__cuda_widen(*at<T>(o, 1, off));
        A gi = c.maximize ? -g : g;
        if (c.decoupled) p = p * decay;
        else if (c.weight_decay != 0) gi = gi + wd * p;
        A m = tg__cuda_widen(*mp) * b1 + a1 * gi;
        A v = tg__cuda_widen(*vp) * b2 + a2 * gi * gi;
        *mp = tg__cuda_narrow<T>(m);
        *vp = tg__cuda_narrow<T>(v);
        A s = v;
        if (c.amsgrad) {
            T *xp = at<T>(o, 4, off);
            s = max_nan(tg__cuda_widen(*xp), v);
            *xp = tg__cuda_narrow<T>(s);
        }
        A denom = ksqrt(s) / bc2 + eps;
        *pp = tg__cuda_narrow<T>(p + nstep * m / denom);
    }
}

extern "C" tg_tensor *tg__cuda_adam_step_(tg_tensor *self, tg_tensor *grad, tg_tensor *exp_avg,
                                          tg_tensor *exp_avg_sq, tg_tensor *max_exp_avg_sq,
                                          int64_t step, double lr, double beta1, double beta2,
                                          double eps, double weight_decay, bool amsgrad,
                                          bool maximize, bool decoupled_weight_decay)
{
    const char *op = "adam_step_";
    if (tg__adam_check(op, self, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1, beta2,
                       eps, weight_decay, amsgrad) != 0)
        return NULL;
    tg_tensor *vmax = amsgrad ? max_exp_avg_sq : NULL;
    tg_tensor *ts[NOPS] = { self, grad, exp_avg, exp_avg_sq, vmax };
    adam_args c = { lr, beta1, beta2,   eps,      weight_decay,
                    0,  0,     amsgrad, maximize, decoupled_weight_decay };
    c.step_size = lr / (1 - pow(beta1, (double)step));
    c.bc2_sqrt = sqrt(1 - pow(beta2, (double)step));
    return optim_step(op, ts, [&](auto tag, const ops &o, int64_t n, cudaStream_t st) {
        using T = typename decltype(tag)::type;
        adam_kernel<T><<<tg__cuda_blocks(n, THREADS), THREADS, 0, st>>>(o, n, c);
    });
}
