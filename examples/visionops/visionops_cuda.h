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

/* roi_align forward (out (K, C, PH, PW)) and backward (grad_in (N, C, H, W), zeroed by the caller,
 * accumulated into with atomics). rois (K, 5), all of the dtype given by is_double. */
const char *vo_roi_align_cuda(const void *input, const void *rois, bool is_double, int64_t K,
                              int64_t C, int64_t H, int64_t W, double spatial_scale, int64_t PH,
                              int64_t PW, int64_t sampling_ratio, bool aligned, void *out,
                              void *stream);
const char *vo_roi_align_backward_cuda(const void *grad, const void *rois, bool is_double,
                                       int64_t K, int64_t C, int64_t H, int64_t W,
                                       double spatial_scale, int64_t PH, int64_t PW,
                                       int64_t sampling_ratio, bool aligned, void *grad_in,
                                       void *stream);

#ifdef __cplusplus
}
#endif

#endif
