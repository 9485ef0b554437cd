/* visionops::roi_align and its backward on the CPU (torchvision's RoIAlign): every output bin
 * averages the bilinear samples of its roi's grid (visionops_checks.h, vo_roi_geometry), and the
 * backward spreads each bin's gradient back onto the four pixels of every sample with the same
 * weights. Computed in double; the result has the input's dtype.
 *   input (N, C, H, W), rois (K, 5) [batch index, x1, y1, x2, y2] -> out (K, C, PH, PW). */
#include "visionops/kernels/_roi_align_backward.h"
#include "visionops/kernels/roi_align.h"
#include "visionops_checks.h"

/* A contiguous float64 copy of t (a new reference, or NULL). */
static tg_tensor *as_doubles(tg_tensor *t)
{
    tg_tensor *d = tg_to(t, TG_FLOAT64);
    tg_tensor *c = d ? tg_contiguous(d) : NULL;
    tg_release(d);
    return c;
}

/* out (a float64 result) in dtype `dt`: a new reference; out is released. */
static tg_tensor *in_dtype(tg_tensor *out, tg_dtype dt)
{
    if (!out || dt == TG_FLOAT64) return out;
    tg_tensor *r = tg_to(out, dt);
    tg_release(out);
    return r;
}

tg_tensor *visionops__cpu_roi_align_cpu(tg_tensor *input, tg_tensor *rois, double spatial_scale,
                                        int64_t pooled_height, int64_t pooled_width,
                                        int64_t sampling_ratio, bool aligned)
{
    if (vo_check_roi_align(input, rois, pooled_height, pooled_width)) return NULL;
    int64_t C = tg_tensor_size(input, 1);
    int64_t H = tg_tensor_size(input, 2), W = tg_tensor_size(input, 3), K = tg_tensor_size(rois, 0);
    tg_tensor *x = as_doubles(input), *r = as_doubles(rois);
    tg_tensor *out =
        x && r ? tg_empty(TG_INTS(K, C, pooled_height, pooled_width), .dtype = TG_FLOAT64) : NULL;
    for (int64_t k = 0; out && k < K; k++) {
        const double *roi = (const double *)tg_tensor_data(r) + 5 * k;
        vo_roi g = vo_roi_geometry(roi, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                   aligned);
        for (int64_t c = 0; c < C; c++) {
            const double *plane = (const double *)tg_tensor_data(x) + (g.batch * C + c) * H * W;
            double *o =
                (double *)tg_tensor_data(out) + ((k * C + c) * pooled_height) * pooled_width;
            for (int64_t ph = 0; ph < pooled_height; ph++)
                for (int64_t pw = 0; pw < pooled_width; pw++) {
                    double sum = 0, w[4];
                    int64_t at[4];
                    for (int i = 0; vo_next_sample(&g, ph, pw, H, W, &i, at, w);)
                        for (int q = 0; q < 4; q++) sum += w[q] * plane[at[q]];
                    o[ph * pooled_width + pw] = sum / g.count;
                }
        }
    }
    tg_release(x);
    tg_release(r);
    return in_dtype(out, tg_tensor_dtype(input));
}

tg_tensor *visionops__cpu_roi_align_backward_cpu(tg_tensor *grad, tg_tensor *rois,
                                                 double spatial_scale, int64_t pooled_height,
                                                 int64_t pooled_width, int64_t batch_size,
                                                 int64_t channels, int64_t height, int64_t width,
                                                 int64_t sampling_ratio, bool aligned)
{
    if (vo_check_roi_align_backward(grad, rois, pooled_height, pooled_width, batch_size, channels))
        return NULL;
    int64_t K = tg_tensor_size(rois, 0);
    tg_tensor *gout = as_doubles(grad), *r = as_doubles(rois);
    tg_tensor *gin =
        gout && r ? tg_zeros(TG_INTS(batch_size, channels, height, width), .dtype = TG_FLOAT64)
                  : NULL;
    for (int64_t k = 0; gin && k < K; k++) {
        const double *roi = (const double *)tg_tensor_data(r) + 5 * k;
        vo_roi g = vo_roi_geometry(roi, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                                   aligned);
        for (int64_t c = 0; c < channels; c++) {
            double *plane =
                (double *)tg_tensor_data(gin) + (g.batch * channels + c) * height * width;
            const double *go = (const double *)tg_tensor_data(gout) +
                               (k * channels + c) * pooled_height * pooled_width;
            for (int64_t ph = 0; ph < pooled_height; ph++)
                for (int64_t pw = 0; pw < pooled_width; pw++) {
                    double share = go[ph * pooled_width + pw] / g.count, w[4];
                    int64_t at[4];
                    for (int i = 0; vo_next_sample(&g, ph, pw, height, width, &i, at, w);)
                        for (int q = 0; q < 4; q++) plane[at[q]] += w[q] * share;
                }
        }
    }
    tg_release(gout);
    tg_release(r);
    return in_dtype(gin, tg_tensor_dtype(grad));
}
