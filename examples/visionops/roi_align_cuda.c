/* visionops::roi_align and its backward on CUDA: argument checks and allocation here, with
 * tensorgen's public API; the computation on the device (visionops_kernels.cu), in the inputs'
 * dtype, on tensorgen's stream of their device. */
#include "visionops/kernels/_roi_align_backward.h"
#include "visionops/kernels/roi_align.h"
#include "visionops_checks.h"
#include "visionops_cuda.h"

/* Both directions: src and rois made contiguous, dst (of `dst_size`, src's dtype and device;
 * zeroed for the backward, which accumulates) filled on tensorgen's stream of the device. A new
 * reference, or NULL with op's error. */
static tg_tensor *run(const char *op, tg_tensor *src, tg_tensor *rois, const vo_roi_align_args *a,
                      bool backward, tg_int_list dst_size)
{
    tg_device dev = tg_tensor_device(src);
    tg_dtype dt = tg_tensor_dtype(src);
    tg_tensor *s = tg_contiguous(src), *r = tg_contiguous(rois);
    tg_tensor *dst = !s || !r   ? NULL
                     : backward ? tg_zeros(dst_size, .dtype = dt, .device = dev)
                                : tg_empty(dst_size, .dtype = dt, .device = dev);
    const char *err =
        dst ? vo_roi_align_cuda(tg_tensor_data(s), tg_tensor_data(r), dt == TG_FLOAT64, a, backward,
                                tg_tensor_data(dst), tg_cuda_stream(dev.index))
            : NULL;
    tg_release(s);
    tg_release(r);
    if (!err) return dst;
    tg_set_error(op, "CUDA error: %s", err);
    tg_release(dst);
    return NULL;
}

tg_tensor *visionops__cuda_roi_align_cuda(tg_tensor *input, tg_tensor *rois, double spatial_scale,
                                          int64_t pooled_height, int64_t pooled_width,
                                          int64_t sampling_ratio, bool aligned)
{
    if (vo_check_roi_align(input, rois, pooled_height, pooled_width)) return NULL;
    vo_roi_align_args a = { tg_tensor_size(rois, 0),
                            tg_tensor_size(input, 1),
                            tg_tensor_size(input, 2),
                            tg_tensor_size(input, 3),
                            pooled_height,
                            pooled_width,
                            sampling_ratio,
                            spatial_scale,
                            aligned };
    return run("visionops::roi_align", input, rois, &a, false, TG_INTS(a.K, a.C, a.PH, a.PW));
}

tg_tensor *visionops__cuda_roi_align_backward_cuda(tg_tensor *grad, tg_tensor *rois,
                                                   double spatial_scale, int64_t pooled_height,
                                                   int64_t pooled_width, int64_t batch_size,
                                                   int64_t channels, int64_t height, int64_t width,
                                                   int64_t sampling_ratio, bool aligned)
{
    if (vo_check_roi_align_backward(grad, rois, pooled_height, pooled_width, batch_size, channels))
        return NULL;
    vo_roi_align_args a = {
        tg_tensor_size(rois, 0), channels,      height, width, pooled_height, pooled_width,
        sampling_ratio,          spatial_scale, aligned
    };
    return run("visionops::_roi_align_backward", grad, rois, &a, true,
               TG_INTS(batch_size, channels, height, width));
}
