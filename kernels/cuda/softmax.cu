/* softmax and log_softmax on CUDA (_softmax.out, _log_softmax.out) and their backward data
 * ops. Semantics and messages are the CPU kernels' (kernels/cpu/softmax.c).
 *
 * self is seen as slices along dim: slice s = (o, i) of [outer, n, inner] has its first
 * element at row-major index o * n * inner + i and steps by self's stride along dim, so any
 * strides work without copies (offsets come from the tensor's geometry).
 *
 *  - inner == 1 (softmax over the last dim, the common case): one block per slice (rows
 *    grid-strided over blocks). Each thread keeps an online (max, sum of exp(x - max)) pair
 *    over its elements, rescaling the sum when the max grows; the pairs are combined in shared
 *    memory; a second pass writes exp(x - m) / s or x - m - log(s). The row is read twice
 *    (the second time mostly from L2) and written once.
 *  - inner > 1 (softmax over a leading dim): one thread per slice; neighbouring threads handle
 *    neighbouring i, so their loads are coalesced.
 *
 * Computation in float for float16/bfloat16/float32 (exp: expf), double for float64. NaN in a
 * slice makes the slice NaN; a slice of all -inf gives NaN (0/0), as on the CPU.
 * half_to_float (float16 input, float32 output) is supported, as in PyTorch's CUDA kernel. */
#include "tg_cuda.cuh"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/_log_softmax.h"
#include "kernels/_log_softmax_backward_data.h"
#include "kernels/_softmax.h"
#include "kernels/_softmax_backward_data.h"
#include "softmax_checks.h" /* the CPU kernels' argument checks */

#define THREADS 256

/* Slices of one operand: where slice s starts (through the operand's offset calculator) and
 * the step along dim, in elements. */
struct slices {
    tg_cuda_offsets<1> oc;
    int64_t n, inner, step;
};

/* The first element of slice s of the operand at base. */
template <typename T> __device__ __forceinline__ T *slice_base(T *base, const slices &sl, int64_t s)
{
    int64_t o = s / sl.inner, i = s % sl.inner, off;
    sl.oc.get(o * sl.n * sl.inner + i, &off);
    return (T *)((const char *)base + off);
}

template <typename A> __device__ __forceinline__ A nan_max(A a, A b)
{
    return (a > b || a != a) ? a : b;
}
__device__ __forceinline__ float kexp(float x) { return expf(x); }
__device__ __forceinline__ double kexp(double x) { return exp(x); }
__device__ __forceinline__ float klog(float x) { return logf(x); }
__device__ __forceinline__ double klog(double x) { return log(x); }

/* (m, s) <- (m, s) combined with element x: s is the sum of exp(v - m) over the elements. */
template <typename A> __device__ __forceinline__ void online_add(A &m, A &s, A x)
{
    A mn = nan_max(m, x);
    if (mn == -(A)INFINITY) return; /* only -inf so far: nothing to add yet */
    s = s * kexp(m - mn) + kexp(x - mn);
    m = mn;
}

template <typename A> __device__ __forceinline__ void online_merge(A &m, A &s, A m2, A s2)
{
    A mn = nan_max(m, m2);
    if (mn == -(A)INFINITY) return;
    s = s * kexp(m - mn) + s2 * kexp(m2 - mn);
    m = mn;
}

/* One block per slice (inner == 1). A is the computation type: float for float16, bfloat16
 * and float32 (U may be float for half_to_float), double for float64 (never rounded through
 * float). */
template <typename T, typename U, bool LOG>
__global__ void __launch_bounds__(THREADS)
    softmax_block_kernel(const T *x, slices xs, U *y, slices ys, int64_t nslices)
{
    typedef typename tg_cuda_compute_of<T>::type A;
    __shared__ A sm_m[THREADS], sm_s[THREADS];
    for (int64_t s = blockIdx.x; s < nslices; s += gridDim.x) {
        const T *xp = slice_base(x, xs, s);
        U *yp = slice_base(y, ys, s);
        A m = -(A)INFINITY, sum = 0;
        for (int64_t k = threadIdx.x; k < xs.n; k += blockDim.x)
            online_add(m, sum, tg__cuda_widen(xp[k * xs.step]));
        sm_m[threadIdx.x] = m;
        sm_s[threadIdx.x] = sum;
        __syncthreads();
        for (int h = blockDim.x / 2; h > 0; h /= 2) {
            if ((int)threadIdx.x < h) {
                A m1 = sm_m[threadIdx.x], s1 = sm_s[threadIdx.x];
                online_merge(m1, s1, sm_m[threadIdx.x + h], sm_s[threadIdx.x + h]);
                sm_m[threadIdx.x] = m1;
                sm_s[threadIdx.x] = s1;
            }
            __syncthreads();
        }
        m = sm_m[0];
        sum = sm_s[0];   /* a slice of only -inf keeps 0: exp(nan) / 0 -> NaN, as the CPU's */
        __syncthreads(); /* everyone has read sm[0] before the next slice overwrites it */
        A c = m + klog(sum), r = (A)1 / sum;
        for (int64_t k = threadIdx.x; k < xs.n; k += blockDim.x) {
            A v = tg__cuda_widen(xp[k * xs.step]);
            yp[k * ys.step] = tg__cuda_narrow<U>(LOG ? v - c : kexp(v - m) * r);
        }
    }
}

/* One thread per slice (inner > 1). A as above. */
template <typename T, typename U, bool LOG>
__global__ void softmax_thread_kernel(const T *x, slices xs, U *y, slices ys, int64_t nslices)
{
    typedef typename tg_cuda_compute_of<T>::type A;
    for (int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; s < nslices;
         s += (int64_t)gridDim.x * blockDim.x) {
        const T *xp = slice_base(x, xs, s);
        U *yp = slice_base(y, ys, s);
        A m = -(A)INFINITY, sum = 0;
        for (int64_t k = 0; k < xs.n; k++) online_add(m, sum, tg__cuda_widen(xp[k * xs.step]));
        A c = m + klog(sum), r = (A)1 / sum;
        for (int64_t k = 0; k < xs.n; k++) {
            A v = tg__cuda_widen(xp[k * xs.step]);
            yp[k * ys.step] = tg__cuda_narrow<U>(LOG ? v - c : kexp(v - m) * r);
        }
    }
}

static slices slices_of(const tg_tensor *t, int64_t d)
{
    slices sl;
    sl.oc = tg__cuda_offsets_from_tensor(t);
    sl.n = t->ndim ? t->sizes[d] : 1;
    sl.step = t->ndim ? t->strides[d] : 0;
    sl.inner = 1;
    for (int64_t k = d + 1; k < t->ndim; k++) sl.inner *= t->sizes[k];
    return sl;
}

static unsigned block_threads(int64_t n)
{
    return n <= 32 ? 32 : n <= 64 ? 64 : n <= 128 ? 128 : THREADS;
}

/* Blocks of the one-block-per-slice kernels (they loop over slices beyond this). */
static unsigned slice_blocks(int64_t nslices)
{
    return (unsigned)(nslices < 65536 * 8 ? nslices : 65536 * 8);
}

template <typename T, typename U, bool LOG>
static void launch_forward(const tg_tensor *self, tg_tensor *res, int64_t d, cudaStream_t st)
{
    slices xs = slices_of(self, d), ys = slices_of(res, d);
    int64_t nslices = tg__numel(self) / xs.n;
    const T *x = (const T *)tg__k_data(self);
    U *y = (U *)tg__k_data(res);
    if (xs.inner == 1)
        softmax_block_kernel<T, U, LOG>
            <<<slice_blocks(nslices), block_threads(xs.n), 0, st>>>(x, xs, y, ys, nslices);
    else
        softmax_thread_kernel<T, U, LOG>
            <<<tg__cuda_blocks(nslices, THREADS), THREADS, 0, st>>>(x, xs, y, ys, nslices);
}

template <bool LOG>
static int run_forward(const char *op, const tg_tensor *self, tg_tensor *res, int64_t d, bool h2f,
                       cudaStream_t st)
{
    switch (self->dtype) {
    case TG_FLOAT64: launch_forward<double, double, LOG>(self, res, d, st); break;
    case TG_FLOAT32: launch_forward<float, float, LOG>(self, res, d, st); break;
    case TG_BFLOAT16: launch_forward<__nv_bfloat16, __nv_bfloat16, LOG>(self, res, d, st); break;
    default:
        if (h2f) launch_forward<__half, float, LOG>(self, res, d, st);
        else launch_forward<__half, __half, LOG>(self, res, d, st);
        break;
    }
    return tg__cuda_launch_ok(op);
}

static tg_tensor *softmax_common(const char *op, bool lg, tg_tensor *self, int64_t dim,
                                 bool half_to_float, tg_tensor *out)
{
    int64_t d = tg__wrap_dim(op, dim, self->ndim);
    if (d < 0) return NULL;
    if (tg__softmax_check_dtype(op, lg, self, d) != 0) return NULL;
    if (half_to_float && self->dtype != TG_FLOAT16)
        return (tg_tensor *)tg__error(op, "conversion is supported for Half type only");
    if (tg__cuda_same_device(op, self, out)) return NULL;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, self->device, &rc);
    if (rc) return NULL;
    tg_dtype odt = half_to_float ? TG_FLOAT32 : self->dtype;
    tg_tensor *res = tg__cuda_prepare_out(op, out, self->sizes, self->ndim, odt, self->device);
    if (!res) return NULL;
    if (tg__numel(self) == 0) return res;
    rc = lg ? run_forward<true>(op, self, res, d, half_to_float, st)
            : run_forward<false>(op, self, res, d, half_to_float, st);
    return tg__k_result_out(rc == 0, res, out != NULL);
}

extern "C" tg_tensor *tg__cuda_softmax_out(tg_tensor *self, int64_t dim, bool half_to_float,
                                           tg_tensor *out)
{
    return softmax_common("_softmax", false, self, dim, half_to_float, out);
}

extern "C" tg_tensor *tg__cuda_log_softmax_out(tg_tensor *self, int64_t dim, bool half_to_float,
                                               tg_tensor *out)
{
    return softmax_common("_log_softmax", true, self, dim, half_to_float, out);
}

/* ------------------------------------------------------------------ backward */

/*   softmax:     gi = y * (g - sum(g * y))        (y = softmax output)
 *   log_softmax: gi = g - exp(y) * sum(g)         (y = log_softmax output)
 * g, y and gi share a dtype T (y converted first when it differs); A is the computation type
 * (sums in double for every dtype, as the CPU's). One block per slice when inner == 1. */
template <typename T, bool LOG>
__global__ void __launch_bounds__(THREADS)
    smb_block_kernel(const T *g, slices gs, const T *y, slices ys, T *o, slices os, int64_t nslices)
{
    typedef typename tg_cuda_compute_of<T>::type A;
    __shared__ double sm[THREADS];
    for (int64_t s = blockIdx.x; s < nslices; s += gridDim.x) {
        const T *gp = slice_base(g, gs, s), *yp = slice_base(y, ys, s);
        T *op = slice_base(o, os, s);
        double acc = 0;
        for (int64_t k = threadIdx.x; k < gs.n; k += blockDim.x) {
            double gv = (double)tg__cuda_widen(gp[k * gs.step]);
            acc += LOG ? gv : gv * (double)tg__cuda_widen(yp[k * ys.step]);
        }
        sm[threadIdx.x] = acc;
        __syncthreads();
        for (int h = blockDim.x / 2; h > 0; h /= 2) {
            if ((int)threadIdx.x < h) sm[threadIdx.x] += sm[threadIdx.x + h];
            __syncthreads();
        }
        A a = (A)sm[0];
        __syncthreads();
        for (int64_t k = threadIdx.x; k < gs.n; k += blockDim.x) {
            A gv = tg__cuda_widen(gp[k * gs.step]), yv = tg__cuda_widen(yp[k * ys.step]);
            op[k * os.step] = tg__cuda_narrow<T>(LOG ? gv - kexp(yv) * a : yv * (gv - a));
        }
    }
}

template <typename T, bool LOG>
__global__ void smb_thread_kernel(const T *g, slices gs, const T *y, slices ys, T *o, slices os,
                                  int64_t nslices)
{
    typedef typename tg_cuda_compute_of<T>::type A;
    for (int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; s < nslices;
         s += (int64_t)gridDim.x * blockDim.x) {
        const T *gp = slice_base(g, gs, s), *yp = slice_base(y, ys, s);
        T *op = slice_base(o, os, s);
        double acc = 0;
        for (int64_t k = 0; k < gs.n; k++) {
            double gv = (double)tg__cuda_widen(gp[k * gs.step]);
            acc += LOG ? gv : gv * (double)tg__cuda_widen(yp[k * ys.step]);
        }
        A a = (A)acc;
        for (int64_t k = 0; k < gs.n; k++) {
            A gv = tg__cuda_widen(gp[k * gs.step]), yv = tg__cuda_widen(yp[k * ys.step]);
            op[k * os.step] = tg__cuda_narrow<T>(LOG ? gv - kexp(yv) * a : yv * (gv - a));
        }
    }
}

static tg_tensor *softmax_backward(const char *op, const char *check_name, bool lg,
                                   tg_tensor *grad_output, tg_tensor *output, int64_t dim)
{
    int64_t d;
    if (tg__softmax_backward_check(op, check_name, grad_output, output, dim, &d) != 0) return NULL;
    tg_dtype rdt = grad_output->dtype;
    if (tg__cuda_same_device(op, grad_output, output)) return NULL;
    int rc;
    cudaStream_t st = tg__cuda_select_stream(op, grad_output->device, &rc);
    if (rc) return NULL;
    tg_tensor *y = output->dtype == rdt ? tg_retain(output) : tg__cuda_contiguous(op, output, rdt);
    tg_tensor *res =
        y ? tg__empty(op, grad_output->sizes, grad_output->ndim, rdt, grad_output->device) : NULL;
    if (!res) {
        tg_release(y);
        return NULL;
    }
    int64_t numel = tg__numel(res);
    if (numel > 0) {
        slices gs = slices_of(grad_output, d), ys = slices_of(y, d), os = slices_of(res, d);
        int64_t nslices = numel / gs.n;
        tg__cuda_dispatch_float(rdt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T *gp = (const T *)tg__k_data(grad_output), *yp = (const T *)tg__k_data(y);
            T *o = (T *)tg__k_data(res);
            if (gs.inner == 1) {
                unsigned grid = slice_blocks(nslices);
                if (lg)
                    smb_block_kernel<T, true>
                        <<<grid, block_threads(gs.n), 0, st>>>(gp, gs, yp, ys, o, os, nslices);
                else
                    smb_block_kernel<T, false>
                        <<<grid, block_threads(gs.n), 0, st>>>(gp, gs, yp, ys, o, os, nslices);
            } else {
                unsigned grid = tg__cuda_blocks(nslices, THREADS);
                if (lg)
                    smb_thread_kernel<T, true>
                        <<<grid, THREADS, 0, st>>>(gp, gs, yp, ys, o, os, nslices);
                else
                    smb_thread_kernel<T, false>
                        <<<grid, THREADS, 0, st>>>(gp, gs, yp, ys, o, os, nslices);
            }
        });
        rc = tg__cuda_launch_ok(op);
    }
    tg_release(y);
    return tg__k_result(rc == 0, res);
}

/* The result has grad_output's dtype, as the CPU kernels'. */
extern "C" tg_tensor *tg__cuda_softmax_backward_data(tg_tensor *grad_output, tg_tensor *output,
                                                     int64_t dim, tg_dtype input_dtype)
{
    (void)input_dtype;
    return softmax_backward("_softmax_backward_data", "softmax_backward", false, grad_output,
                            output, dim);
}

extern "C" tg_tensor *tg__cuda_log_softmax_backward_data(tg_tensor *grad_output, tg_tensor *output,
                                                         int64_t dim, tg_dtype input_dtype)
{
    (void)input_dtype;
    return softmax_backward("_log_softmax_backward_data", "log_softmax_backward", true, grad_output,
                            output, dim);
}
