// visionops' CUDA kernels (launched by visionops_cuda.h's functions): the same computations as
// the CPU kernels, with the geometry of visionops_checks.h, in the inputs' dtype.
#include <cuda_runtime.h>

#include "visionops_checks.h"
#include "visionops_cuda.h"

static const char *launched(void)
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? NULL : cudaGetErrorString(e);
}

static int64_t blocks_for(int64_t n, int threads) { return (n + threads - 1) / threads; }

// ---------------------------------------------------------------- nms

template <typename T> __device__ double iou(const T *a, const T *b)
{
    double w = fmin((double)a[2], (double)b[2]) - fmax((double)a[0], (double)b[0]);
    double h = fmin((double)a[3], (double)b[3]) - fmax((double)a[1], (double)b[1]);
    double inter = (w > 0 ? w : 0) * (h > 0 ? h : 0);
    double area_a = ((double)a[2] - a[0]) * ((double)a[3] - a[1]);
    double area_b = ((double)b[2] - b[0]) * ((double)b[3] - b[1]);
    return inter / (area_a + area_b - inter);
}

// One thread per (i, block of 64 later boxes): the bits of the boxes box i suppresses.
template <typename T>
__global__ void nms_mask(const T *boxes, const int64_t *order, int64_t n, int64_t blocks,
                         double thr, uint64_t *mask)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n * blocks) return;
    int64_t i = t / blocks, b = t % blocks;
    const T *bi = boxes + 4 * order[i];
    uint64_t bits = 0;
    for (int k = 0; k < 64; k++) {
        int64_t j = b * 64 + k;
        if (j > i && j < n && iou(bi, boxes + 4 * order[j]) > thr) bits |= (uint64_t)1 << k;
    }
    mask[t] = bits;
}

extern "C" const char *vo_nms_mask_cuda(const void *boxes, bool is_double, const int64_t *order,
                                        int64_t n, double thr, uint64_t *mask, void *stream)
{
    int64_t blocks = (n + 63) / 64, total = n * blocks;
    if (total == 0) return NULL;
    cudaStream_t s = (cudaStream_t)stream;
    if (is_double)
        nms_mask<double><<<blocks_for(total, 256), 256, 0, s>>>((const double *)boxes, order, n,
                                                                blocks, thr, mask);
    else
        nms_mask<float><<<blocks_for(total, 256), 256, 0, s>>>((const float *)boxes, order, n,
                                                               blocks, thr, mask);
    return launched();
}

// ---------------------------------------------------------------- roi_align

// Output element t of (K, C, PH, PW): its channel, bin and roi geometry.
struct roi_bin {
    int64_t c, ph, pw;
    vo_roi g;
};

template <typename T>
__device__ roi_bin bin_of(int64_t t, const T *rois, const vo_roi_align_args &a)
{
    int64_t k = t / (a.PW * a.PH * a.C);
    double r[5];
    for (int q = 0; q < 5; q++) r[q] = (double)rois[5 * k + q];
    return { (t / (a.PW * a.PH)) % a.C, (t / a.PW) % a.PH, t % a.PW,
             vo_roi_geometry(r, a.spatial_scale, a.PH, a.PW, a.sampling_ratio, a.aligned) };
}

// One thread per output element (k, c, ph, pw). Forward: the bin averages its samples of the
// input plane (src) into dst. Backward: the bin's gradient (src) spreads onto the pixels of every
// sample of the input's gradient (dst; atomics: bins and rois overlap).
template <typename T, bool Backward>
__global__ void roi_align_kernel(const T *src, const T *rois, vo_roi_align_args a, T *dst)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.K * a.C * a.PH * a.PW) return;
    roi_bin b = bin_of(t, rois, a);
    int64_t plane = (b.g.batch * a.C + b.c) * a.H * a.W, at[4];
    double w[4], sum = 0, share = Backward ? (double)src[t] / b.g.count : 0;
    for (int i = 0; vo_next_sample(&b.g, b.ph, b.pw, a.H, a.W, &i, at, w);)
        for (int q = 0; q < 4; q++) {
            if (Backward) atomicAdd(&dst[plane + at[q]], (T)(w[q] * share));
            else sum += w[q] * (double)src[plane + at[q]];
        }
    if (!Backward) dst[t] = (T)(sum / b.g.count);
}

template <typename T>
static void launch_roi_align(const void *src, const void *rois, const vo_roi_align_args &a,
                             bool backward, void *dst, cudaStream_t s)
{
    int64_t n = a.K * a.C * a.PH * a.PW;
    if (backward)
        roi_align_kernel<T, true>
            <<<blocks_for(n, 256), 256, 0, s>>>((const T *)src, (const T *)rois, a, (T *)dst);
    else
        roi_align_kernel<T, false>
            <<<blocks_for(n, 256), 256, 0, s>>>((const T *)src, (const T *)rois, a, (T *)dst);
}

extern "C" const char *vo_roi_align_cuda(const void *src, const void *rois, bool is_double,
                                         const vo_roi_align_args *a, bool backward, void *dst,
                                         void *stream)
{
    if (a->K * a->C * a->PH * a->PW == 0) return NULL;
    if (is_double) launch_roi_align<double>(src, rois, *a, backward, dst, (cudaStream_t)stream);
    else launch_roi_align<float>(src, rois, *a, backward, dst, (cudaStream_t)stream);
    return launched();
}
