/* visionops::roi_align and its backward on CUDA: argument checks and allocation here, with
 * tensorgen's public API; the computation on the device (visionops_kernels.cu), in the inputs'
 * dtype, on tensorgen's stream of their device. */
#include "visionops/kernels/_roi_align_backward.h"
#include "visionops/kernels/roi_align.h"
#include "visionops_checks.h"
#include "visionops_cuda.h"

tg_tensor *visionops__cuda_roi_align_cuda(tg_tensor *input, tg_tensor *rois, double spatial_scale,
                                          int64_t pooled_height, int64_t pooled_width,
                                          int64_t sampling_ratio, bool aligned)
{
    if (vo_check_roi_align(input, rois, pooled_height, pooled_width)) return NULL;
    tg_device dev = tg_tensor_device(input);
    int64_t C = tg_tensor_size(input, 1), H = tg_tensor_size(input, 2),
            W = tg_tensor_size(input, 3);
    int64_t K = tg_tensor_size(rois, 0);
    tg_tensor *x = tg_contiguous(input), *r = tg_contiguous(rois);
    tg_tensor *out = x && r ? tg_empty(TG_INTS(K, C, pooled_height, pooled_width),
                                       .dtype = tg_tensor_dtype(input), .device = dev)
                            : NULL;
    const char *err =
        !out ? NULL
             : vo_roi_align_cuda(tg_tensor_data(x), tg_tensor_data(r),
                                 tg_tensor_dtype(x) == TG_FLOAT64, K, C, H, W, spatial_scale,
                                 pooled_height, pooled_width, sampling_ratio, aligned,
                                 tg_tensor_data(out), tg_cuda_stream(dev.index));
    if (err) {
        tg_set_error("visionops::roi_align", "CUDA error: %s", err);
        tg_release(out);
        out = NULL;
    }
    tg_release(x);
    tg_release(r);
    return out;
}

tg_tensor *visionops__cuda_roi_align_backward_cuda(tg_tensor *grad, tg_tensor *rois,
                                                   double spatial_scale, int64_t pooled_height,
                                                   int64_t pooled_width, int64_t batch_size,
                                                   int64_t channels, int64_t height, int64_t width,
                                                   int64_t sampling_ratio, bool aligned)
{
    if (vo_check_roi_align_backward(grad, rois, pooled_height, pooled_width, batch_size, channels))
        return NULL;
    int64_t K = tg_tensor_size(rois, 0);
    tg_device dev = tg_tensor_device(grad);
    tg_tensor *g = tg_contiguous(grad), *r = tg_contiguous(rois);
    tg_tensor *gin = g && r ? tg_zeros(TG_INTS(batch_size, channels, height, width),
                                       .dtype = tg_tensor_dtype(grad), .device = dev)
                            : NULL;
    const char *err =
        !gin ? NULL
             : vo_roi_align_backward_cuda(
                   tg_tensor_data(g), tg_tensor_data(r), tg_tensor_dtype(g) == TG_FLOAT64, K,
                   channels, height, width, spatial_scale, pooled_height, pooled_width,
                   sampling_ratio, aligned, tg_tensor_data(gin), tg_cuda_stream(dev.index));
    if (err) {
        tg_set_error("visionops::_roi_align_backward", "CUDA error: %s", err);
        tg_release(gin);
        gin = NULL;
    }
    tg_release(g);
    tg_release(r);
    return gin;
}
