/* The geometry and argument checks of convolution / convolution_backward, shared by the CPU
 * kernels (kernels/cpu/conv.c) and the CUDA kernels (kernels/cuda/conv.cu): PyTorch's messages
 * in PyTorch's order (ATen's ConvUtils check_shape_forward). Static inline, C and C++.
 *
 * Both directions are described as one regular convolution (tg__conv_geom): im2col reads the
 * "image" side (im: channels im_c, spatial im_sp), a GEMM with the weight
 * (col_c, im_c / groups, k...) produces the "column" side (col: channels col_c, spatial col_sp).
 * A convolution reads im (its input) and writes col (its output); a transposed convolution is
 * the same thing read backwards: its input is the col side and its output the im side, so its
 * weight (C_in, C_out / groups, k...) has the same shape in these terms. Spatial arrays always
 * hold 3 dims: fewer spatial dims are padded in front with size 1, stride 1, padding 0,
 * dilation 1. */
#ifndef TG_CONV_CHECKS_H
#define TG_CONV_CHECKS_H

#include <stdio.h>
#include <string.h>

#include "tg_kutil.h"

typedef struct tg__conv_geom {
    int nsp;         /* spatial dims of the operator: 1, 2 or 3 */
    bool transposed; /* the operator is a transposed convolution */
    int64_t n, groups;
    int64_t im_c, col_c;               /* channels of the im and col sides */
    int64_t im_sp[3], col_sp[3], k[3]; /* sizes (padded to 3 dims in front) */
    int64_t stride[3], pad[3], dil[3]; /* of the regular convolution im -> col */
    int64_t in_sizes[5], out_sizes[5]; /* the operator's input and output shapes (2 + nsp) */
} tg__conv_geom;

static inline int64_t tg__conv_prod3(const int64_t *a) { return a[0] * a[1] * a[2]; }

/* rows of a group's column matrix (im_c / groups * kD * kH * kW) */
static inline int64_t tg__conv_col_rows(const tg__conv_geom *g)
{
    return g->im_c / g->groups * tg__conv_prod3(g->k);
}

/* "[1, 2]" for an int list (PyTorch's way of printing one). */
static inline const char *tg__conv_list_str(char *buf, size_t cap, tg_int_list l)
{
    return tg__shape_str(buf, cap, l.data, (int64_t)l.len);
}

/* "(2 x 3)" of n values. */
static inline const char *tg__conv_x_str(char *buf, size_t cap, const int64_t *v, int n)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? " x " : "(", (long long)v[i]);
    if (len < cap) snprintf(buf + len, cap - len, ")");
    return buf;
}

/* An int[] argument has one value per spatial dim (ATen's expand_param_if_needed also takes a
 * single value for all of them). Fills out[3] padded in front with `fill`. */
static inline int tg__conv_param(const char *op, const char *name, tg_int_list l, int nsp,
                                 int64_t fill, int64_t *out)
{
    char b[128];
    if (l.len != 1 && (int)l.len != nsp)
        return tg__fail(op,
                        "expected %s to be a single integer value or a list of %d values to match "
                        "the convolution dimensions, but got %s=%s",
                        name, nsp, name, tg__conv_list_str(b, sizeof b, l));
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - nsp);
        out[i] = j < 0 ? fill : l.data[l.len == 1 ? 0 : j];
    }
    return 0;
}

/* PyTorch's name of a dense tensor type: torch.FloatTensor, torch.cuda.DoubleTensor. */
static inline const char *tg__conv_type_str(char *buf, size_t cap, const tg_tensor *t)
{
    const char *n;
    switch (t->dtype) {
    case TG_FLOAT32: n = "Float"; break;
    case TG_FLOAT64: n = "Double"; break;
    case TG_FLOAT16: n = "Half"; break;
    case TG_BFLOAT16: n = "BFloat16"; break;
    case TG_INT64: n = "Long"; break;
    case TG_INT32: n = "Int"; break;
    case TG_INT16: n = "Short"; break;
    case TG_INT8: n = "Char"; break;
    case TG_UINT8: n = "Byte"; break;
    default: n = "Bool"; break;
    }
    snprintf(buf, cap, "torch.%s%sTensor", t->device.type == TG_CUDA ? "cuda." : "", n);
    return buf;
}

/* Every check of a convolution of input with weight (and bias, or its sizes for the backward:
 * bias_len < 0 means no bias), and the geometry. 0, or -1 with the error recorded. */
static inline int tg__conv_prepare(const char *op, tg__conv_geom *g, const tg_tensor *input,
                                   const tg_tensor *weight, int64_t bias_len,
                                   const int64_t *bias_sizes, int64_t bias_ndim, tg_int_list stride,
                                   tg_int_list padding, tg_int_list dilation, bool transposed,
                                   tg_int_list output_padding, int64_t groups)
{
    char s1[256], s2[256], s3[256];
    memset(g, 0, sizeof *g);
    int64_t wd = weight->ndim;
    if (wd < 3 || wd > 5)
        return tg__fail(op,
                        "Expected a weight of 3, 4 or 5 dimensions (1 to 3 spatial), but got "
                        "weight of size %s",
                        tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim));
    int nsp = (int)wd - 2;
    int64_t opad[3];
    g->nsp = nsp;
    g->transposed = transposed;
    if (tg__conv_param(op, "stride", stride, nsp, 1, g->stride) != 0 ||
        tg__conv_param(op, "padding", padding, nsp, 0, g->pad) != 0 ||
        tg__conv_param(op, "dilation", dilation, nsp, 1, g->dil) != 0 ||
        (transposed && tg__conv_param(op, "output_padding", output_padding, nsp, 0, opad) != 0))
        return -1;
    if (!transposed) opad[0] = opad[1] = opad[2] = 0;
    for (int i = 0; i < 3; i++) {
        if (g->pad[i] < 0) return tg__fail(op, "negative padding is not supported");
        if (opad[i] < 0) return tg__fail(op, "negative output_padding is not supported");
        if (g->stride[i] <= 0) return tg__fail(op, "non-positive stride is not supported");
        if (g->dil[i] <= 0) return tg__fail(op, "non-positive dilation is not supported");
    }
    if (groups <= 0) return tg__fail(op, "non-positive groups is not supported");
    if (input->ndim != wd)
        return tg__fail(
            op,
            "Expected %lld-dimensional input for %lld-dimensional weight %s, but got "
            "%lld-dimensional input of size %s instead",
            (long long)wd, (long long)wd, tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim),
            (long long)input->ndim, tg__shape_str(s2, sizeof s2, input->sizes, input->ndim));
    if (weight->sizes[0] < groups)
        return tg__fail(
            op,
            "Given groups=%lld, expected weight to be at least %lld at dimension 0, but "
            "got weight of size %s instead",
            (long long)groups, (long long)groups,
            tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim));
    if (weight->sizes[0] % groups != 0)
        return tg__fail(
            op,
            "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, "
            "but got weight of size [%s] instead",
            (long long)groups, (long long)groups,
            tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim));
    int64_t want_c = transposed ? weight->sizes[0] : weight->sizes[1] * groups;
    if (input->sizes[1] != want_c)
        return tg__fail(
            op,
            "Given %s%lld, weight of size %s, expected input%s to have %lld channels, but "
            "got %lld channels instead",
            transposed ? "transposed=" : "groups=", (long long)(transposed ? 1 : groups),
            tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim),
            tg__shape_str(s2, sizeof s2, input->sizes, input->ndim), (long long)want_c,
            (long long)input->sizes[1]);
    int64_t out_c = transposed ? weight->sizes[1] * groups : weight->sizes[0];
    if (bias_len >= 0 && !(bias_ndim == 1 && bias_sizes[0] == out_c))
        return tg__fail(op,
                        "Given %sweight of size %s, expected bias to be 1-dimensional with %lld "
                        "elements, but got bias of size %s instead",
                        transposed ? "transposed=1, " : "",
                        tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim), (long long)out_c,
                        tg__shape_str(s2, sizeof s2, bias_sizes, bias_ndim));
    g->n = input->sizes[0];
    g->groups = groups;
    int64_t in_sp[3], out_sp[3], ksz[3];
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - nsp);
        g->k[i] = j < 0 ? 1 : weight->sizes[2 + j];
        in_sp[i] = j < 0 ? 1 : input->sizes[2 + j];
        ksz[i] = g->dil[i] * (g->k[i] - 1) + 1;
    }
    if (!transposed) {
        int64_t padded[3], kk[3];
        for (int i = 0; i < 3; i++) {
            padded[i] = in_sp[i] + 2 * g->pad[i];
            kk[i] = ksz[i];
        }
        for (int i = 3 - nsp; i < 3; i++)
            if (padded[i] < ksz[i])
                return tg__fail(op,
                                "Calculated padded input size per channel: %s. Kernel size: %s. "
                                "Kernel size can't be greater than actual input size",
                                tg__conv_x_str(s1, sizeof s1, padded + 3 - nsp, nsp),
                                tg__conv_x_str(s2, sizeof s2, kk + 3 - nsp, nsp));
        for (int i = 0; i < 3; i++) out_sp[i] = (padded[i] - ksz[i]) / g->stride[i] + 1;
    } else {
        for (int i = 0; i < 3; i++)
            if (opad[i] >= g->stride[i] && opad[i] >= g->dil[i]) {
                static const char *const nm[3] = { "depth", "height", "width" };
                size_t len = 0;
                int first = nsp == 3 ? 0 : 1; /* ATen views 1-d as 2-d here */
                s3[0] = 0;
                for (int d = first; d < 3; d++)
                    len += (size_t)snprintf(s3 + len, sizeof s3 - len, "%soutput_padding_%s: %lld",
                                            d > first ? " " : "", nm[d], (long long)opad[d]);
                for (int d = first; d < 3; d++)
                    len += (size_t)snprintf(s3 + len, sizeof s3 - len, " stride_%s: %lld", nm[d],
                                            (long long)g->stride[d]);
                for (int d = first; d < 3; d++)
                    len += (size_t)snprintf(s3 + len, sizeof s3 - len, " dilation_%s: %lld", nm[d],
                                            (long long)g->dil[d]);
                return tg__fail(
                    op, "output padding must be smaller than either stride or dilation, but got %s",
                    s3);
            }
        for (int i = 0; i < 3; i++)
            out_sp[i] = (in_sp[i] - 1) * g->stride[i] - 2 * g->pad[i] + ksz[i] + opad[i];
        for (int i = 3 - nsp; i < 3; i++)
            if (out_sp[i] <= 0)
                return tg__fail(op,
                                "Given input size per channel: %s. Calculated output size per "
                                "channel: %s. Output size is too small",
                                tg__conv_x_str(s1, sizeof s1, in_sp + 3 - nsp, nsp),
                                tg__conv_x_str(s2, sizeof s2, out_sp + 3 - nsp, nsp));
    }
    if (input->dtype != weight->dtype)
        return tg__fail(
            op,
            "Input type (%s) and weight type (%s) should be the same or input should be a "
            "MKLDNN tensor and weight is a dense tensor",
            tg__conv_type_str(s1, sizeof s1, input), tg__conv_type_str(s2, sizeof s2, weight));
    if (input->dtype != TG_FLOAT32 && input->dtype != TG_FLOAT64)
        return tg__fail(op, "\"convolution\" not implemented for '%s'",
                        tg__dtype_torch_name(input->dtype));
    /* The operator's shapes, then the im/col sides. */
    g->in_sizes[0] = g->out_sizes[0] = g->n;
    g->in_sizes[1] = input->sizes[1];
    g->out_sizes[1] = out_c;
    for (int j = 0; j < nsp; j++) {
        g->in_sizes[2 + j] = in_sp[3 - nsp + j];
        g->out_sizes[2 + j] = out_sp[3 - nsp + j];
    }
    g->im_c = transposed ? out_c : input->sizes[1];
    g->col_c = transposed ? input->sizes[1] : out_c;
    for (int i = 0; i < 3; i++) {
        g->im_sp[i] = transposed ? out_sp[i] : in_sp[i];
        g->col_sp[i] = transposed ? in_sp[i] : out_sp[i];
    }
    return 0;
}

/* A 1x1 kernel with stride 1 and no padding: the column matrix is the image itself. */
static inline bool tg__conv_is_pointwise(const tg__conv_geom *g)
{
    for (int i = 0; i < 3; i++)
        if (g->k[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0) return false;
    return true;
}

/* A tensor of the expected shape given to the backward (grad_output): PyTorch's message. */
static inline int tg__conv_check_grad_output(const char *op, const tg__conv_geom *g,
                                             const tg_tensor *grad_output, tg_dtype dtype)
{
    char s1[256], s2[256];
    int64_t nd = 2 + g->nsp;
    bool ok = grad_output->ndim == nd;
    for (int64_t i = 0; ok && i < nd; i++) ok = grad_output->sizes[i] == g->out_sizes[i];
    if (!ok)
        return tg__fail(op, "Expected grad_output of size %s, but got %s",
                        tg__shape_str(s1, sizeof s1, g->out_sizes, nd),
                        tg__shape_str(s2, sizeof s2, grad_output->sizes, grad_output->ndim));
    if (grad_output->dtype != dtype)
        return tg__fail(op, "expected grad_output of dtype %s, but got %s",
                        tg__dtype_torch_name(dtype), tg__dtype_torch_name(grad_output->dtype));
    return 0;
}

/* convolution_backward's checks (the forward's, with bias_sizes for the bias, then
 * grad_output's shape and dtype) and which gradients output_mask asks for. 0, or -1 + error. */
static inline int tg__conv_prepare_backward(const char *op, tg__conv_geom *g,
                                            const tg_tensor *grad_output, const tg_tensor *input,
                                            const tg_tensor *weight, tg_int_list bias_sizes,
                                            tg_int_list stride, tg_int_list padding,
                                            tg_int_list dilation, bool transposed,
                                            tg_int_list output_padding, int64_t groups,
                                            tg_bool_list output_mask, bool want[3])
{
    bool has_bias = bias_sizes.data != NULL;
    for (int i = 0; i < 3; i++) want[i] = output_mask.len > i && output_mask.data[i];
    if (tg__conv_prepare(op, g, input, weight, has_bias ? 1 : -1, bias_sizes.data,
                         (int64_t)bias_sizes.len, stride, padding, dilation, transposed,
                         output_padding, groups) != 0)
        return -1;
    return tg__conv_check_grad_output(op, g, grad_output, input->dtype);
}

#endif
