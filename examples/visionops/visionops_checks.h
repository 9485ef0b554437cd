/* What the CPU and CUDA kernels of visionops share: their argument checks, with torchvision's
 * messages (so both devices fail alike), and RoIAlign's geometry, compiled by gcc and by nvcc
 * (VO_HD functions run on the host and on the device). Everything is static inline. */
#ifndef VISIONOPS_CHECKS_H
#define VISIONOPS_CHECKS_H

#include <math.h>
#include <stdlib.h>

#include "tensorgen.h"

#ifdef __CUDACC__
#define VO_HD __host__ __device__
#else
#define VO_HD
#endif

/* ------------------------------------------------------------------ checks (host) */

/* Records the error (naming the operator) and is -1: `if (bad) return VO_FAIL(op, ...);`. */
#define VO_FAIL(...) ((void)tg_set_error(__VA_ARGS__), -1)

static inline bool vo_floating(tg_dtype t) { return t == TG_FLOAT32 || t == TG_FLOAT64; }

/* nms: dets (N, 4) and scores (N), one floating dtype. 0, or -1 with the error. */
static inline int vo_check_nms(const tg_tensor *dets, const tg_tensor *scores)
{
    const char *op = "visionops::nms";
    if (tg_tensor_dim(dets) != 2)
        return VO_FAIL(op, "boxes should be a 2d tensor, got %lldD",
                       (long long)tg_tensor_dim(dets));
    if (tg_tensor_size(dets, 1) != 4)
        return VO_FAIL(op, "boxes should have 4 elements in dimension 1, got %lld",
                       (long long)tg_tensor_size(dets, 1));
    if (tg_tensor_dim(scores) != 1)
        return VO_FAIL(op, "scores should be a 1d tensor, got %lldD",
                       (long long)tg_tensor_dim(scores));
    if (tg_tensor_size(dets, 0) != tg_tensor_size(scores, 0))
        return VO_FAIL(op,
                       "boxes and scores should have same number of elements in dimension "
                       "0, got %lld and %lld",
                       (long long)tg_tensor_size(dets, 0), (long long)tg_tensor_size(scores, 0));
    if (!vo_floating(tg_tensor_dtype(dets)) || tg_tensor_dtype(dets) != tg_tensor_dtype(scores))
        return VO_FAIL(op,
                       "boxes and scores must be float32 or float64 of one dtype, got "
                       "%s and %s",
                       tg_dtype_name(tg_tensor_dtype(dets)),
                       tg_dtype_name(tg_tensor_dtype(scores)));
    return 0;
}

/* roi_align and its backward: `values` (the input, or the gradient) and rois (K, 5), one
 * floating dtype; pooled sizes positive. `nd` is the dims `values` must have. */
static inline int vo_check_roi(const char *op, const tg_tensor *values, const char *what, int nd,
                               const tg_tensor *rois, int64_t pooled_height, int64_t pooled_width)
{
    if (tg_tensor_dim(values) != nd)
        return VO_FAIL(op, "%s must be a %d-D tensor, got %lld-D", what, nd,
                       (long long)tg_tensor_dim(values));
    if (tg_tensor_dim(rois) != 2 || tg_tensor_size(rois, 1) != 5)
        return VO_FAIL(op, "rois must have shape as Tensor[K, 5]");
    if (!vo_floating(tg_tensor_dtype(values)) || tg_tensor_dtype(values) != tg_tensor_dtype(rois))
        return VO_FAIL(op, "%s and rois must be float32 or float64 of one dtype, got %s and %s",
                       what, tg_dtype_name(tg_tensor_dtype(values)),
                       tg_dtype_name(tg_tensor_dtype(rois)));
    if (pooled_height <= 0 || pooled_width <= 0)
        return VO_FAIL(op, "pooled_height and pooled_width must be positive, got %lld and %lld",
                       (long long)pooled_height, (long long)pooled_width);
    return 0;
}

/* Every roi names an image of the batch: rois[k, 0] a whole number in [0, batch_size). The
 * kernels index with it. 0, or -1 with the error. */
static inline int vo_check_roi_batches(const char *op, const tg_tensor *rois, int64_t batch_size)
{
    int64_t k = tg_tensor_size(rois, 0);
    double *r = (double *)malloc(sizeof(double) * (size_t)(5 * k + 1));
    if (!r) return VO_FAIL(op, "out of memory for %lld rois", (long long)k);
    int rc = tg_tensor_to_doubles(rois, r, 5 * k);
    for (int64_t i = 0; rc == 0 && i < k; i++)
        if (!(r[5 * i] >= 0 && r[5 * i] < (double)batch_size && r[5 * i] == floor(r[5 * i])))
            rc = VO_FAIL(op, "rois[%lld, 0] = %g is not the index of an image (there are %lld)",
                         (long long)i, r[5 * i], (long long)batch_size);
    free(r);
    return rc;
}

/* Everything roi_align's kernels check: input (N, C, H, W), rois naming its images. */
static inline int vo_check_roi_align(const tg_tensor *input, const tg_tensor *rois,
                                     int64_t pooled_height, int64_t pooled_width)
{
    const char *op = "visionops::roi_align";
    if (vo_check_roi(op, input, "input", 4, rois, pooled_height, pooled_width)) return -1;
    return vo_check_roi_batches(op, rois, tg_tensor_size(input, 0));
}

/* Everything _roi_align_backward's kernels check: grad (K, channels, pooled_height,
 * pooled_width) for rois (K, 5) naming images of the batch. */
static inline int vo_check_roi_align_backward(const tg_tensor *grad, const tg_tensor *rois,
                                              int64_t pooled_height, int64_t pooled_width,
                                              int64_t batch_size, int64_t channels)
{
    const char *op = "visionops::_roi_align_backward";
    if (vo_check_roi(op, grad, "grad", 4, rois, pooled_height, pooled_width) ||
        vo_check_roi_batches(op, rois, batch_size))
        return -1;
    int64_t K = tg_tensor_size(rois, 0);
    if (tg_tensor_size(grad, 0) != K || tg_tensor_size(grad, 1) != channels ||
        tg_tensor_size(grad, 2) != pooled_height || tg_tensor_size(grad, 3) != pooled_width)
        return VO_FAIL(op, "grad must have shape [%lld, %lld, %lld, %lld]", (long long)K,
                       (long long)channels, (long long)pooled_height, (long long)pooled_width);
    return 0;
}

/* ------------------------------------------------------------------ RoIAlign's geometry */

/* One roi's sampling grid: bin (ph, pw) averages grid_h x grid_w bilinear samples at
 * y = start_h + ph * bin_h + (iy + 0.5) * bin_h / grid_h (and x likewise). torchvision's
 * rule: coordinates scaled, shifted by half a pixel when `aligned`, at least 1 pixel wide when
 * not; sampling_ratio <= 0 picks ceil(roi size / pooled size) samples per bin. */
typedef struct vo_roi {
    int64_t batch;
    double start_h, start_w, bin_h, bin_w;
    int grid_h, grid_w;
    double count; /* samples per bin, at least 1 */
} vo_roi;

VO_HD static inline vo_roi vo_roi_geometry(const double r[5], double spatial_scale, int64_t ph,
                                           int64_t pw, int64_t sampling_ratio, bool aligned)
{
    vo_roi g;
    double offset = aligned ? 0.5 : 0.0;
    g.batch = (int64_t)r[0];
    g.start_w = r[1] * spatial_scale - offset;
    g.start_h = r[2] * spatial_scale - offset;
    double w = r[3] * spatial_scale - offset - g.start_w;
    double h = r[4] * spatial_scale - offset - g.start_h;
    if (!aligned) {
        w = w > 1.0 ? w : 1.0;
        h = h > 1.0 ? h : 1.0;
    }
    g.bin_h = h / (double)ph;
    g.bin_w = w / (double)pw;
    g.grid_h = sampling_ratio > 0 ? (int)sampling_ratio : (int)ceil(h / (double)ph);
    g.grid_w = sampling_ratio > 0 ? (int)sampling_ratio : (int)ceil(w / (double)pw);
    int n = g.grid_h * g.grid_w;
    g.count = n > 1 ? (double)n : 1.0;
    return g;
}

/* The bilinear sample at (y, x) of an H x W plane: the offsets of its four neighbours and
 * their weights. 0 when the point is outside the plane by more than a pixel (it contributes
 * nothing), else 1. */
VO_HD static inline int vo_bilinear(double y, double x, int64_t H, int64_t W, int64_t at[4],
                                    double w[4])
{
    if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W) return 0;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= H - 1) {
        y1 = y0 = H - 1;
        y = (double)y0;
    } else {
        y1 = y0 + 1;
    }
    if (x0 >= W - 1) {
        x1 = x0 = W - 1;
        x = (double)x0;
    } else {
        x1 = x0 + 1;
    }
    double ly = y - (double)y0, lx = x - (double)x0, hy = 1.0 - ly, hx = 1.0 - lx;
    at[0] = y0 * W + x0, at[1] = y0 * W + x1, at[2] = y1 * W + x0, at[3] = y1 * W + x1;
    w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
    return 1;
}

/* Sample (iy, ix) of bin (ph, pw) of roi g in an H x W plane: vo_bilinear at its position. */
VO_HD static inline int vo_sample(const vo_roi *g, int64_t ph, int64_t pw, int iy, int ix,
                                  int64_t H, int64_t W, int64_t at[4], double w[4])
{
    double y = g->start_h + (double)ph * g->bin_h + (iy + 0.5) * g->bin_h / g->grid_h;
    double x = g->start_w + (double)pw * g->bin_w + (ix + 0.5) * g->bin_w / g->grid_w;
    return vo_bilinear(y, x, H, W, at, w);
}

/* The next sample of bin (ph, pw) that falls in the plane: *i counts the bin's grid_h x grid_w
 * samples (start at 0); fills at and w (vo_bilinear) and returns 1, or 0 when none is left. */
VO_HD static inline int vo_next_sample(const vo_roi *g, int64_t ph, int64_t pw, int64_t H,
                                       int64_t W, int *i, int64_t at[4], double w[4])
{
    while (*i < g->grid_h * g->grid_w) {
        int iy = *i / g->grid_w, ix = *i % g->grid_w;
        ++*i;
        if (vo_sample(g, ph, pw, iy, ix, H, W, at, w)) return 1;
    }
    return 0;
}

#endif
