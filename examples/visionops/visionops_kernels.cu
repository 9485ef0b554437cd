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

template <typename T>
__device__ vo_roi roi_of(const T *rois, int64_t k, double scale, int64_t PH, int64_t PW, int64_t sr,
                         bool aligned)
{
    double r[5];
    for (int q = 0; q < 5; q++) r[q] = (double)rois[5 * k + q];
    return vo_roi_geometry(r, scale, PH, PW, sr, aligned);
}

// One thread per output element (k, c, ph, pw).
template <typename T>
__global__ void roi_align_fwd(const T *input, const T *rois, int64_t K, int64_t C, int64_t H,
                              int64_t W, double scale, int64_t PH, int64_t PW, int64_t sr,
                              bool aligned, T *out)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= K * C * PH * PW) return;
    int64_t pw = t % PW, ph = (t / PW) % PH, c = (t / (PW * PH)) % C, k = t / (PW * PH * C);
    vo_roi g = roi_of(rois, k, scale, PH, PW, sr, aligned);
    const T *plane = input + (g.batch * C + c) * H * W;
    double sum = 0;
    for (int iy = 0; iy < g.grid_h; iy++)
        for (int ix = 0; ix < g.grid_w; ix++) {
            int64_t at[4];
            double w[4];
            if (vo_sample(&g, ph, pw, iy, ix, H, W, at, w))
                for (int q = 0; q < 4; q++) sum += w[q] * (double)plane[at[q]];
        }
    out[t] = (T)(sum / g.count);
}

// One thread per gradient element: its share goes to the pixels of every sample (atomics:
// bins and rois overlap).
template <typename T>
__global__ void roi_align_bwd(const T *grad, const T *rois, int64_t K, int64_t C, int64_t H,
                              int64_t W, double scale, int64_t PH, int64_t PW, int64_t sr,
                              bool aligned, T *grad_in)
{
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= K * C * PH * PW) return;
    int64_t pw = t % PW, ph = (t / PW) % PH, c = (t / (PW * PH)) % C, k = t / (PW * PH * C);
    vo_roi g = roi_of(rois, k, scale, PH, PW, sr, aligned);
    T *plane = grad_in + (g.batch * C + c) * H * W;
    double share = (double)grad[t] / g.count;
    for (int iy = 0; iy < g.grid_h; iy++)
        for (int ix = 0; ix < g.grid_w; ix++) {
            int64_t at[4];
            double w[4];
            if (vo_sample(&g, ph, pw, iy, ix, H, W, at, w))
                for (int q = 0; q < 4; q++) atomicAdd(&plane[at[q]], (T)(w[q] * share));
        }
}

extern "C" const char *vo_roi_align_cuda(const void *input, const void *rois, bool is_double,
                                         int64_t K, int64_t C, int64_t H, int64_t W, double scale,
                                         int64_t PH, int64_t PW, int64_t sr, bool aligned,
                                         void *out, void *stream)
{
    int64_t n = K * C * PH * PW;
    if (n == 0) return NULL;
    cudaStream_t s = (cudaStream_t)stream;
    if (is_double)
        roi_align_fwd<double>
            <<<blocks_for(n, 256), 256, 0, s>>>((const double *)input, (const double *)rois, K, C,
                                                H, W, scale, PH, PW, sr, aligned, (double *)out);
    else
        roi_align_fwd<float>
            <<<blocks_for(n, 256), 256, 0, s>>>((const float *)input, (const float *)rois, K, C, H,
                                                W, scale, PH, PW, sr, aligned, (float *)out);
    return launched();
}

extern "C" const char *vo_roi_align_backward_cuda(const void *grad, const void *rois,
                                                  bool is_double, int64_t K, int64_t C, int64_t H,
                                                  int64_t W, double scale, int64_t PH, int64_t PW,
                                                  int64_t sr, bool aligned, void *grad_in,
                                                  void *stream)
{
    int64_t n = K * C * PH * PW;
    if (n == 0) return NULL;
    cudaStream_t s = (cudaStream_t)stream;
    if (is_double)
        roi_align_bwd<double>
            <<<blocks_for(n, 256), 256, 0, s>>>((const double *)grad, (const double *)rois, K, C, H,
                                                W, scale, PH, PW, sr, aligned, (double *)grad_in);
    else
        roi_align_bwd<float>
            <<<blocks_for(n, 256), 256, 0, s>>>((const float *)grad, (const float *)rois, K, C, H,
                                                W, scale, PH, PW, sr, aligned, (float *)grad_in);
    return launched();
}
