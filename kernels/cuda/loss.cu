/* nll_loss_forward and nll_loss_backward on CUDA. Semantics, dtype rules and messages are the
 * CPU kernels' (kernels/cpu/loss.c).
 *
 * self (C) or (N, C) log-probabilities, target () or (N) int64/uint8 class indices, weight (C)
 * or NULL, any strides. The forward runs in one block (the samples are few next to the N * C
 * input): per-thread double sums of the losses and of the weights, merged in shared memory in
 * a fixed order, so the result is deterministic. A target out of [0, C) (and not ignore_index)
 * is an error "Target 7 is out of bounds." like the CPU's: the kernels record the first
 * offending sample in a device word that the host reads back, so these two operators
 * synchronise the stream once per call. */
#include "tg_cuda.cuh"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/nll_loss_backward.h"
#include "kernels/nll_loss_forward.h"
#include "loss_checks.h" /* the CPU kernels' argument checks */

enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };
#define THREADS 256

/* ------------------------------------------------------------------ nll_loss */

/* Operand pointers and strides (elements) for the kernels. */
struct nll_dev {
    const char *x, *t, *w;
    tg_dtype xdt, tdt;
    int64_t xs0, xs1, ts, ws;
    int64_t n, c;
    int64_t ignore_index;
};

/* Target of sample i: 1 counted, 0 ignored, -1 out of bounds (first such sample recorded). */
__device__ __forceinline__ int nll_target(const nll_dev &a, int64_t i, int64_t *t,
                                          unsigned long long *bad)
{
    *t = tg__cuda_load<int64_t>(a.t + i * a.ts * tg__cuda_elem_size(a.tdt), a.tdt);
    if (*t == a.ignore_index) return 0;
    if (*t < 0 || *t >= a.c) {
        atomicMin(bad, (unsigned long long)i);
        return -1;
    }
    return 1;
}

__device__ __forceinline__ double nll_weight(const nll_dev &a, int64_t t)
{
    return a.w ? tg__cuda_load<double>(a.w + t * a.ws * tg__cuda_elem_size(a.xdt), a.xdt) : 1.0;
}

/* One block. per_sample: out (N) gets each loss; else out[0] the mean or sum. tw[0] the total
 * weight (0 for per-sample losses, as PyTorch). */
__global__ void __launch_bounds__(THREADS)
    nll_forward_kernel(nll_dev a, bool per_sample, int reduction, char *out, char *tw,
                       unsigned long long *bad)
{
    __shared__ double s_loss[THREADS], s_w[THREADS];
    double loss_sum = 0, w_sum = 0;
    int64_t es = tg__cuda_elem_size(a.xdt);
    for (int64_t i = threadIdx.x; i < a.n; i += blockDim.x) {
        int64_t t;
        double loss = 0;
        if (nll_target(a, i, &t, bad) > 0) {
            double w = nll_weight(a, t);
            loss = -tg__cuda_load<double>(a.x + (i * a.xs0 + t * a.xs1) * es, a.xdt) * w;
            w_sum += w;
            loss_sum += loss;
        }
        if (per_sample) tg__cuda_store(out + i * es, a.xdt, loss);
    }
    s_loss[threadIdx.x] = loss_sum;
    s_w[threadIdx.x] = w_sum;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if ((int)threadIdx.x < h) {
            s_loss[threadIdx.x] += s_loss[threadIdx.x + h];
            s_w[threadIdx.x] += s_w[threadIdx.x + h];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (!per_sample)
            tg__cuda_store(out, a.xdt, reduction == RED_MEAN ? s_loss[0] / s_w[0] : s_loss[0]);
        tg__cuda_store(tw, a.xdt, per_sample ? 0.0 : s_w[0]);
    }
}

/* gi (N, C) contiguous, zero-filled before: gi[i, t] = weight[t] * g_i. For the reduced
 * forms g_i = -(grad / total_weight) (mean) or -grad (sum), with grad and total_weight read
 * from device memory (or passed by value when they are host scalars: go_host / tw_host). */
__global__ void nll_backward_kernel(nll_dev a, bool per_sample, int reduction, char *gi,
                                    const char *go, tg_dtype godt, int64_t gos, double go_host,
                                    const char *tw, tg_dtype twdt, double tw_host,
                                    unsigned long long *bad)
{
    int64_t es = tg__cuda_elem_size(a.xdt);
    double scale = 0;
    if (!per_sample) {
        double g = go ? tg__cuda_load<double>(go, godt) : go_host;
        double w = tw ? tg__cuda_load<double>(tw, twdt) : tw_host;
        scale = -(reduction == RED_MEAN ? g / w : g);
    }
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.n;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t t;
        if (nll_target(a, i, &t, bad) <= 0) continue;
        double g = per_sample
                       ? -tg__cuda_load<double>(go + i * gos * tg__cuda_elem_size(godt), godt)
                       : scale;
        tg__cuda_store(gi + (i * a.c + t) * es, a.xdt, nll_weight(a, t) * g);
    }
}

/* The shared checks (loss_checks.h), then devices; fills the kernels' view. 0 or -1 + error. */
static int nll_check(const char *op, tg_tensor *self, tg_tensor *target, tg_tensor *weight,
                     nll_dev *a)
{
    if (tg__nll_check(op, self, target, weight) != 0) return -1;
    int64_t c = self->sizes[self->ndim - 1];
    if (tg__cuda_same_device(op, self, target) || tg__cuda_same_device(op, self, weight)) return -1;
    bool batched = self->ndim == 2;
    a->x = tg__k_data(self);
    a->t = tg__k_data(target);
    a->w = weight ? tg__k_data(weight) : NULL;
    a->xdt = self->dtype;
    a->tdt = target->dtype;
    a->n = batched ? self->sizes[0] : 1;
    a->c = c;
    a->xs0 = batched ? self->strides[0] : 0;
    a->xs1 = self->strides[self->ndim - 1];
    a->ts = target->ndim ? target->strides[0] : 0;
    a->ws = weight ? weight->strides[0] : 0;
    return 0;
}

/* Reads the out-of-bounds word back (synchronising the stream) and records the CPU's error
 * for the first offending sample. 0 or -1. */
static int nll_bounds(const char *op, const nll_dev &a, unsigned long long *bad_dev,
                      cudaStream_t st)
{
    unsigned long long bad = 0;
    if (tg__cuda_ok(op, cudaMemcpyAsync(&bad, bad_dev, sizeof bad, cudaMemcpyDeviceToHost, st)) ||
        tg__cuda_ok(op, cudaStreamSynchronize(st)))
        return -1;
    if (bad == ~0ULL) return 0;
    int64_t t = 0;
    int64_t esz = (int64_t)tg_dtype_size(a.tdt);
    if (tg__cuda_ok(op, cudaMemcpy(&t, a.t + (int64_t)bad * a.ts * esz, (size_t)esz,
                                   cudaMemcpyDeviceToHost)))
        return -1;
    if (a.tdt == TG_UINT8) t &= 0xff;
    return tg__fail(op, "Target %lld is out of bounds.", (long long)t);
}

/* A device word initialised to "no bad sample" (all ones), in a small workspace tensor. */
static tg_tensor *bad_word(const char *op, tg_device dev, cudaStream_t st)
{
    int64_t n = 8;
    tg_tensor *w = tg__empty(op, &n, 1, TG_UINT8, dev);
    if (w && tg__cuda_ok(op, cudaMemsetAsync(tg__k_data(w), 0xff, 8, st))) {
        tg_release(w);
        w = NULL;
    }
    return w;
}

extern "C" tg_output_total_weight tg__cuda_nll_loss_forward(tg_tensor *self, tg_tensor *target,
                                                            tg_tensor *weight, int64_t reduction,
                                                            int64_t ignore_index)
{
    const char *op = "nll_loss_forward";
    tg_output_total_weight res = { NULL, NULL };
    nll_dev a;
    if (nll_check(op, self, target, weight, &a) != 0) return res;
    a.ignore_index = ignore_index;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    if (rc) return res;
    bool per_sample = reduction == RED_NONE && self->ndim == 2;
    int64_t none = 0;
    tg_tensor *out = per_sample ? tg__empty(op, &a.n, 1, self->dtype, self->device)
                                : tg__empty(op, &none, 0, self->dtype, self->device);
    tg_tensor *tw = out ? tg__empty(op, &none, 0, self->dtype, self->device) : NULL;
    tg_tensor *bad = tw ? bad_word(op, self->device, st) : NULL;
    if (!bad) goto fail;
    nll_forward_kernel<<<1, THREADS, 0, st>>>(a, per_sample, (int)reduction, tg__k_data(out),
                                              tg__k_data(tw),
                                              (unsigned long long *)tg__k_data(bad));
    if (tg__cuda_launch_ok(op) || nll_bounds(op, a, (unsigned long long *)tg__k_data(bad), st))
        goto fail;
    tg_release(bad);
    res.output = out;
    res.total_weight = tw;
    return res;
fail:
    tg_release(out);
    tg_release(tw);
    tg_release(bad);
    return res;
}

extern "C" tg_tensor *tg__cuda_nll_loss_backward(tg_tensor *grad_output, tg_tensor *self,
                                                 tg_tensor *target, tg_tensor *weight,
                                                 int64_t reduction, int64_t ignore_index,
                                                 tg_tensor *total_weight)
{
    const char *op = "nll_loss_backward";
    nll_dev a;
    if (nll_check(op, self, target, weight, &a) != 0) return NULL;
    a.ignore_index = ignore_index;
    bool per_sample = reduction == RED_NONE && self->ndim == 2;
    if (tg__nll_backward_check(op, grad_output, total_weight, per_sample, a.n) != 0) return NULL;
    /* A one-element grad_output or total_weight may be a host (CPU) scalar: read it here. */
    bool go_host = grad_output->device.type == TG_CPU,
         tw_host = total_weight->device.type == TG_CPU;
    if (go_host && (per_sample || grad_output->ndim != 0)) {
        if (tg__cuda_same_device(op, self, grad_output)) return NULL;
    }
    if (tw_host && total_weight->ndim != 0 && tg__cuda_same_device(op, self, total_weight))
        return NULL;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    if (rc) return NULL;
    tg_tensor *gi = tg__empty(op, self->sizes, self->ndim, self->dtype, self->device);
    tg_tensor *bad = gi ? bad_word(op, self->device, st) : NULL;
    if (!bad) {
        tg_release(gi);
        return NULL;
    }
    int64_t n = tg__numel(gi);
    if (n && tg__cuda_ok(
                 op, cudaMemsetAsync(tg__k_data(gi), 0, (size_t)n * tg_dtype_size(gi->dtype), st)))
        goto fail;
    {
        double gov = go_host ? tg__pw_load_f64(tg__k_data(grad_output), grad_output->dtype) : 0;
        double twv = tw_host ? tg__pw_load_f64(tg__k_data(total_weight), total_weight->dtype) : 0;
        int64_t gos = grad_output->ndim ? grad_output->strides[0] : 0;
        nll_backward_kernel<<<tg__cuda_blocks(a.n, THREADS), THREADS, 0, st>>>(
            a, per_sample, (int)reduction, tg__k_data(gi), go_host ? NULL : tg__k_data(grad_output),
            grad_output->dtype, gos, gov, tw_host ? NULL : tg__k_data(total_weight),
            total_weight->dtype, twv, (unsigned long long *)tg__k_data(bad));
    }
    if (tg__cuda_launch_ok(op) || nll_bounds(op, a, (unsigned long long *)tg__k_data(bad), st))
        goto fail;
    tg_release(bad);
    return gi;
fail:
    tg_release(gi);
    tg_release(bad);
    return NULL;
}
