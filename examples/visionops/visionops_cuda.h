/* The launchers of visionops' CUDA kernels (visionops_kernels.cu), called by the host side of
 * its CUDA kernels (nms_cuda.c, roi_align_cuda.c), which checks arguments and allocates through
 * tensorgen's public API. Pointers are device memory; `stream` is tensorgen's stream of the
 * device (tg_cuda_stream), so the work is ordered with tensorgen's. Each returns NULL, or the
 * CUDA error's text. */
#ifndef VISIONOPS_CUDA_H
#define VISIONOPS_CUDA_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* nms: mask[i * blocks + b] bit t says box order[i] overlaps box order[b * 64 + t] (later in the
 * order) by an IoU above thr; blocks = ceil(n / 64). boxes (n, 4). */
const char *vo_nms_mask_cuda(const void *boxes, bool is_double, const int64_t *order, int64_t n,
                             double thr, uint64_t *mask, void *stream);

/* roi_align's sizes and options: rois (K, 5), the channels and planes of the input (C, H, W),
 * PH x PW bins. */
typedef struct vo_roi_align_args {
    int64_t K, C, H, W, PH, PW, sampling_ratio;
    double spatial_scale;
    bool aligned;
} vo_roi_align_args;

/* roi_align forward (src the input (N, C, H, W), dst the output (K, C, PH, PW)) or backward (src
 * the output's gradient, dst the input's, zeroed by the caller, accumulated into with atomics).
 * rois (K, 5); all of the dtype given by is_double. */
const char *vo_roi_align_cuda(const void *src, const void *rois, bool is_double,
                              const vo_roi_align_args *a, bool backward, void *dst, void *stream);

#ifdef __cplusplus
}
#endif

#endif
