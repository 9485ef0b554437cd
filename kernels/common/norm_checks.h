/* Argument checks and index arithmetic of the normalization and resizing operators
 * (native_batch_norm, native_group_norm, upsample_nearest2d, upsample_bilinear2d and their
 * backward operators), shared by the CPU kernels (kernels/cpu/norm.c), the CUDA kernels
 * (kernels/cuda/norm.cu) and the composites (kernels/composite/norm.c): PyTorch 1.13's
 * messages in PyTorch's order. Static inline, C and C++. Each check returns 0, or -1 with the
 * error recorded. */
#ifndef TG_NORM_CHECKS_H
#define TG_NORM_CHECKS_H

#include <math.h>

#include "tg_hd.h"
#include "tg_kutil.h"

static inline bool tg__norm_same_shape(const tg_tensor *a, const tg_tensor *b)
{
    if (a->ndim != b->ndim) return false;
    for (int64_t i = 0; i < a->ndim; i++)
        if (a->sizes[i] != b->sizes[i]) return false;
    return true;
}

/* input.size(1) of a tensor that may have fewer dimensions: PyTorch's wrap_dim messages. */
static inline int tg__norm_check_dim1(const char *op, const tg_tensor *input)
{
    if (input->ndim == 0)
        return tg__fail(op, "Dimension specified as 1 but tensor has no dimensions");
    if (input->ndim < 2)
        return tg__fail(
            op, "Dimension out of range (expected to be in range of [%lld, %lld], but got 1)",
            (long long)-input->ndim, (long long)(input->ndim - 1));
    return 0;
}

static inline int tg__norm_check_features(const char *op, const char *name, const tg_tensor *t,
                                          int64_t c)
{
    if (t && tg__numel(t) != c)
        return tg__fail(op, "%s should contain %lld elements not %lld", name, (long long)c,
                        (long long)tg__numel(t));
    return 0;
}

static inline int tg__norm_check_param_dtype(const char *op, const tg_tensor *input,
                                             const tg_tensor *p)
{
    if (p && p->dtype != input->dtype)
        return tg__fail(op, "mixed dtype (CPU): expect parameter to have scalar type of %s",
                        tg__dtype_torch_name(input->dtype));
    return 0;
}

static inline int tg__norm_check_floating(const char *op, const char *kname, const tg_tensor *t)
{
    if (t->dtype != TG_FLOAT32 && t->dtype != TG_FLOAT64)
        return tg__fail(op, "\"%s\" not implemented for '%s'", kname,
                        tg__dtype_torch_name(t->dtype));
    return 0;
}

/* native_batch_norm: input (N, C, *), the per-channel tensors of C elements
 * (_batch_norm_impl_index's checks), running statistics required in evaluation. */
static inline int tg__batch_norm_check(const char *op, const tg_tensor *input,
                                       const tg_tensor *weight, const tg_tensor *bias,
                                       const tg_tensor *running_mean, const tg_tensor *running_var,
                                       bool training)
{
    if (tg__norm_check_dim1(op, input) != 0) return -1;
    int64_t c = input->sizes[1];
    if (running_mean) {
        if (tg__norm_check_features(op, "running_mean", running_mean, c) != 0) return -1;
    } else if (!training) return tg__fail(op, "running_mean must be defined in evaluation mode");
    if (running_var) {
        if (tg__norm_check_features(op, "running_var", running_var, c) != 0) return -1;
    } else if (!training) return tg__fail(op, "running_var must be defined in evaluation mode");
    if (tg__norm_check_features(op, "weight", weight, c) != 0) return -1;
    if (tg__norm_check_features(op, "bias", bias, c) != 0) return -1;
    if (tg__norm_check_floating(op, "batch_norm", input) != 0) return -1;
    const tg_tensor *ps[4] = { weight, bias, running_mean, running_var };
    for (int i = 0; i < 4; i++)
        if (tg__norm_check_param_dtype(op, input, ps[i]) != 0) return -1;
    return 0;
}

/* native_batch_norm_backward: grad_out of input's shape, the statistics it needs. */
static inline int tg__batch_norm_backward_check(const char *op, const tg_tensor *grad_out,
                                                const tg_tensor *input, const tg_tensor *weight,
                                                const tg_tensor *running_mean,
                                                const tg_tensor *running_var,
                                                const tg_tensor *save_mean,
                                                const tg_tensor *save_invstd, bool train)
{
    char s1[256], s2[256];
    if (tg__norm_check_dim1(op, input) != 0) return -1;
    if (!tg__norm_same_shape(grad_out, input))
        return tg__fail(op, "Expected grad_out of shape %s to match input of shape %s",
                        tg__shape_str(s1, sizeof s1, grad_out->sizes, grad_out->ndim),
                        tg__shape_str(s2, sizeof s2, input->sizes, input->ndim));
    int64_t c = input->sizes[1];
    if (train) {
        if (!save_mean || !save_invstd)
            return tg__fail(op, "save_mean and save_invstd must be defined in training mode");
        if (tg__norm_check_features(op, "save_mean", save_mean, c) != 0) return -1;
        if (tg__norm_check_features(op, "save_invstd", save_invstd, c) != 0) return -1;
    } else {
        if (!running_mean) return tg__fail(op, "running_mean must be defined in evaluation mode");
        if (!running_var) return tg__fail(op, "running_var must be defined in evaluation mode");
        if (tg__norm_check_features(op, "running_mean", running_mean, c) != 0) return -1;
        if (tg__norm_check_features(op, "running_var", running_var, c) != 0) return -1;
    }
    if (tg__norm_check_features(op, "weight", weight, c) != 0) return -1;
    if (tg__norm_check_floating(op, "batch_norm_backward", input) != 0) return -1;
    const tg_tensor *ps[4] = { grad_out, weight, train ? save_mean : running_mean,
                               train ? save_invstd : running_var };
    for (int i = 0; i < 4; i++)
        if (tg__norm_check_param_dtype(op, input, ps[i]) != 0) return -1;
    return 0;
}

/* check_group_norm_inputs (PyTorch prints weight's shape in the bias message, [0] when
 * there is no weight: kept). */
static inline int tg__group_norm_inputs_check(const char *op, const tg_tensor *input,
                                              const tg_tensor *weight, const tg_tensor *bias,
                                              int64_t c, int64_t groups)
{
    char s1[256], s2[256];
    static const int64_t zero = 0;
    if (groups <= 0)
        return tg__fail(op, "Expected num groups to be greater than 0, got %lld",
                        (long long)groups);
    if (c % groups != 0)
        return tg__fail(
            op,
            "Expected number of channels in input to be divisible by num_groups, but got "
            "input of shape %s and num_groups=%lld",
            tg__shape_str(s1, sizeof s1, input->sizes, input->ndim), (long long)groups);
    if (weight && !(weight->ndim == 1 && tg__numel(weight) == c))
        return tg__fail(op,
                        "Expected weight to be a vector of size equal to the number of channels in "
                        "input, but got weight of shape %s and input of shape %s",
                        tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim),
                        tg__shape_str(s2, sizeof s2, input->sizes, input->ndim));
    if (bias && !(bias->ndim == 1 && tg__numel(bias) == c))
        return tg__fail(op,
                        "Expected bias to be a vector of size equal to the number of channels in "
                        "input, but got bias of shape %s and input of shape %s",
                        weight ? tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim)
                               : tg__shape_str(s1, sizeof s1, &zero, 1),
                        tg__shape_str(s2, sizeof s2, input->sizes, input->ndim));
    return 0;
}

static inline int tg__group_norm_check(const char *op, const tg_tensor *input,
                                       const tg_tensor *weight, const tg_tensor *bias, int64_t n,
                                       int64_t c, int64_t hxw, int64_t groups)
{
    if (tg__group_norm_inputs_check(op, input, weight, bias, c, groups) != 0) return -1;
    if (n < 0 || c < 0 || hxw < 0 || tg__numel(input) != n * c * hxw)
        return tg__fail(op, "Expected X.numel() == N * C * HxW to be true, but got false.  (Could "
                            "this error message be improved?  If so, please report an enhancement "
                            "request to PyTorch.)");
    if (tg__norm_check_floating(op, "GroupNormKernelImpl", input) != 0) return -1;
    if (tg__norm_check_param_dtype(op, input, weight) != 0) return -1;
    if (tg__norm_check_param_dtype(op, input, bias) != 0) return -1;
    return 0;
}

static inline int tg__group_norm_backward_check(const char *op, const tg_tensor *grad_out,
                                                const tg_tensor *input, const tg_tensor *mean,
                                                const tg_tensor *rstd, const tg_tensor *weight,
                                                int64_t n, int64_t c, int64_t hxw, int64_t groups)
{
    if (tg__group_norm_check(op, input, weight, NULL, n, c, hxw, groups) != 0) return -1;
    if (tg__numel(grad_out) != n * c * hxw)
        return tg__fail(op, "Expected dY.numel() == N * C * HxW to be true, but got false.");
    if (tg__numel(mean) != n * groups)
        return tg__fail(op, "Expected mean.numel() == N * group to be true, but got false.");
    if (tg__numel(rstd) != n * groups)
        return tg__fail(op, "Expected rstd.numel() == N * group to be true, but got false.");
    const tg_tensor *ps[3] = { grad_out, mean, rstd };
    for (int i = 0; i < 3; i++)
        if (tg__norm_check_param_dtype(op, input, ps[i]) != 0) return -1;
    return 0;
}

/* upsample_2d_common_check (input (N, C, H, W)) and the sizes. */
static inline int tg__upsample2d_sizes_check(const char *op, tg_int_list output_size,
                                             tg_int_list input_size)
{
    if (output_size.len != 2)
        return tg__fail(op, "It is expected output_size equals to 2, but got size %lld",
                        (long long)output_size.len);
    if (input_size.len != 4)
        return tg__fail(op, "It is expected input_size equals to 4, but got size %lld",
                        (long long)input_size.len);
    int64_t ih = input_size.data[2], iw = input_size.data[3];
    int64_t oh = output_size.data[0], ow = output_size.data[1];
    if (!(ih > 0 && iw > 0 && oh > 0 && ow > 0))
        return tg__fail(op,
                        "Input and output sizes should be greater than 0, but got input (H: %lld, "
                        "W: %lld) output (H: %lld, W: %lld)",
                        (long long)ih, (long long)iw, (long long)oh, (long long)ow);
    return 0;
}

static inline int tg__upsample2d_check(const char *op, const char *kname, const tg_tensor *self,
                                       tg_int_list output_size)
{
    int64_t sizes[4] = { 0, 0, 0, 0 };
    if (output_size.len != 2)
        return tg__fail(op, "It is expected output_size equals to 2, but got size %lld",
                        (long long)output_size.len);
    if (self->ndim != 4)
        return tg__fail(op, "It is expected input_size equals to 4, but got size %lld",
                        (long long)self->ndim);
    for (int i = 0; i < 4; i++) sizes[i] = self->sizes[i];
    if (tg__upsample2d_sizes_check(op, output_size, (tg_int_list){ .len = 4, .data = sizes }) != 0)
        return -1;
    return tg__norm_check_floating(op, kname, self);
}

static inline int tg__upsample2d_backward_check(const char *op, const char *kname,
                                                const tg_tensor *grad_output,
                                                tg_int_list output_size, tg_int_list input_size)
{
    if (tg__upsample2d_sizes_check(op, output_size, input_size) != 0) return -1;
    if (grad_output->ndim != 4)
        return tg__fail(
            op, "Expected grad_output to be a tensor of dimension 4 but got: dimension %lld",
            (long long)grad_output->ndim);
    int64_t full[4] = { input_size.data[0], input_size.data[1], output_size.data[0],
                        output_size.data[1] };
    for (int i = 0; i < 4; i++)
        if (grad_output->sizes[i] != full[i])
            return tg__fail(
                op,
                "Expected grad_output to have the same shape as output; output.size(%d) "
                "= %lld but got grad_output.size(%d) = %lld",
                i, (long long)full[i], i, (long long)grad_output->sizes[i]);
    return tg__norm_check_floating(op, kname, grad_output);
}

/* ---- source indices (PyTorch's UpSample.h) ---- */

/* compute_scales_value: 1 / scale when one is given (> 0), else in / out. */
static inline double tg__ups_scale(tg_opt_float s, int64_t in, int64_t out)
{
    return (!tg_is_none_float(s) && s > 0.) ? 1.0 / s : (double)in / (double)out;
}

/* The nearest source index of dst: min(floor(dst * scale), in - 1), in float (PyTorch's
 * nearest_idx: identity when in == out, dst >> 1 when out == 2 in). */
static inline int64_t tg__ups_nearest_idx(int64_t dst, int64_t in, int64_t out, tg_opt_float s)
{
    if (out == in) return dst;
    if (out == 2 * in) return dst >> 1;
    float scale = (float)tg__ups_scale(s, in, out);
    int64_t src = (int64_t)floorf((float)dst * scale);
    return src < in - 1 ? src : in - 1;
}

/* area_pixel_compute_scale for the linear modes (the scale is ignored with align_corners). */
static inline double tg__ups_linear_scale(int64_t in, int64_t out, bool align_corners,
                                          tg_opt_float s)
{
    if (align_corners) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
    return tg__ups_scale(s, in, out);
}

/* Output index i's two source indices and the second one's weight along one linear axis
 * (compute_indices_weights_linear, area_pixel_compute_source_index): float32 computes the
 * source position in float, as PyTorch's kernel does. CPU and CUDA. */
static inline TG_HD void tg__ups_linear_index(int64_t i, int64_t in, double scale, bool ac,
                                              bool f32, int64_t *i0, int64_t *i1, double *l1)
{
    double real;
    if (f32) {
        float fs = (float)scale;
        float r = ac ? fs * (float)i : fs * ((float)i + 0.5f) - 0.5f;
        real = r < 0 ? 0 : r;
    } else {
        double r = ac ? scale * (double)i : scale * ((double)i + 0.5) - 0.5;
        real = r < 0 ? 0 : r;
    }
    int64_t a = (int64_t)real; /* guard_index_and_lambda: scales may reach past the end */
    if (a > in - 1) a = in - 1;
    *i0 = a;
    *i1 = a + (a < in - 1 ? 1 : 0);
    double l = real - (double)a;
    *l1 = l < 0 ? 0 : (l > 1 ? 1 : l);
    if (f32) *l1 = (float)*l1;
}

#endif
