/* The argument checks and geometry of convolution and convolution_backward
 * (conv_checks.h), compiled once for both backends: PyTorch's messages in PyTorch's order
 * (ATen's ConvUtils check_shape_forward), one step per function. */
#include "conv_checks.h"
#include "tg_kutil.h"

#include <stdio.h>
#include <string.h>

/* "[1, 2]" for an int list (PyTorch's way of printing one). */
static const char *list_str(char *buf, size_t cap, tg_int_list l)
{
    return tg__shape_str(buf, cap, l.data, (int64_t)l.len);
}

/* "(2 x 3)" of n values. */
static const char *x_str(char *buf, size_t cap, const int64_t *v, int n)
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
static int conv_param(const char *op, const char *name, tg_int_list l, int nsp, int64_t fill,
                      int64_t *out)
{
    char b[128];
    if (l.len != 1 && (int)l.len != nsp)
        return tg__fail(op,
                        "expected %s to be a single integer value or a list of %d values to match "
                        "the convolution dimensions, but got %s=%s",
                        name, nsp, name, list_str(b, sizeof b, l));
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - nsp);
        out[i] = j < 0 ? fill : l.data[l.len == 1 ? 0 : j];
    }
    return 0;
}

/* PyTorch's name of a dense tensor type: torch.FloatTensor, torch.cuda.DoubleTensor. */
static const char *type_str(char *buf, size_t cap, const tg_tensor *t)
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

/* stride, padding, dilation (and a transposed convolution's output_padding, else zeros into
 * opad) into g, and their signs and groups'. */
static int check_params(const char *op, tg__conv_geom *g, tg_int_list stride, tg_int_list padding,
                        tg_int_list dilation, tg_int_list output_padding, int64_t groups,
                        int64_t *opad)
{
    const int nsp = g->nsp;
    if (conv_param(op, "stride", stride, nsp, 1, g->stride) != 0 ||
        conv_param(op, "padding", padding, nsp, 0, g->pad) != 0 ||
        conv_param(op, "dilation", dilation, nsp, 1, g->dil) != 0 ||
        (g->transposed && conv_param(op, "output_padding", output_padding, nsp, 0, opad) != 0))
        return -1;
    if (!g->transposed) opad[0] = opad[1] = opad[2] = 0;
    for (int i = 0; i < 3; i++) {
        if (g->pad[i] < 0) return tg__fail(op, "negative padding is not supported");
        if (opad[i] < 0) return tg__fail(op, "negative output_padding is not supported");
        if (g->stride[i] <= 0) return tg__fail(op, "non-positive stride is not supported");
        if (g->dil[i] <= 0) return tg__fail(op, "non-positive dilation is not supported");
    }
    if (groups <= 0) return tg__fail(op, "non-positive groups is not supported");
    return 0;
}

/* The input's rank and channels and the bias against the weight and groups; *out_c the output
 * channels. */
static int check_shapes(const char *op, const tg_tensor *input, const tg_tensor *weight,
                        int64_t bias_len, const int64_t *bias_sizes, int64_t bias_ndim,
                        bool transposed, int64_t groups, int64_t *out_c)
{
    char s1[256], s2[256];
    const int64_t wd = weight->ndim;
    const char *ws = tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim);
    if (input->ndim != wd)
        return tg__fail(op,
                        "Expected %lld-dimensional input for %lld-dimensional weight %s, but got "
                        "%lld-dimensional input of size %s instead",
                        (long long)wd, (long long)wd, ws, (long long)input->ndim,
                        tg__shape_str(s2, sizeof s2, input->sizes, input->ndim));
    if (weight->sizes[0] < groups)
        return tg__fail(op,
                        "Given groups=%lld, expected weight to be at least %lld at dimension 0, "
                        "but got weight of size %s instead",
                        (long long)groups, (long long)groups, ws);
    if (weight->sizes[0] % groups != 0)
        return tg__fail(op,
                        "Given groups=%lld, expected weight to be divisible by %lld at dimension "
                        "0, but got weight of size [%s] instead",
                        (long long)groups, (long long)groups, ws);
    int64_t want_c = transposed ? weight->sizes[0] : weight->sizes[1] * groups;
    if (input->sizes[1] != want_c)
        return tg__fail(
            op,
            "Given %s%lld, weight of size %s, expected input%s to have %lld channels, "
            "but got %lld channels instead",
            transposed ? "transposed=" : "groups=", (long long)(transposed ? 1 : groups), ws,
            tg__shape_str(s2, sizeof s2, input->sizes, input->ndim), (long long)want_c,
            (long long)input->sizes[1]);
    *out_c = transposed ? weight->sizes[1] * groups : weight->sizes[0];
    if (bias_len >= 0 && !(bias_ndim == 1 && bias_sizes[0] == *out_c))
        return tg__fail(op,
                        "Given %sweight of size %s, expected bias to be 1-dimensional with %lld "
                        "elements, but got bias of size %s instead",
                        transposed ? "transposed=1, " : "", ws, (long long)*out_c,
                        tg__shape_str(s2, sizeof s2, bias_sizes, bias_ndim));
    return 0;
}

/* A regular convolution's output sizes: the padded input must hold the (dilated) kernel. */
static int output_regular(const char *op, const tg__conv_geom *g, const int64_t *in_sp,
                          const int64_t *ksz, int64_t *out_sp)
{
    char s1[256], s2[256];
    const int nsp = g->nsp;
    int64_t padded[3];
    for (int i = 0; i < 3; i++) padded[i] = in_sp[i] + 2 * g->pad[i];
    for (int i = 3 - nsp; i < 3; i++)
        if (padded[i] < ksz[i])
            return tg__fail(op,
                            "Calculated padded input size per channel: %s. Kernel size: %s. "
                            "Kernel size can't be greater than actual input size",
                            x_str(s1, sizeof s1, padded + 3 - nsp, nsp),
                            x_str(s2, sizeof s2, ksz + 3 - nsp, nsp));
    for (int i = 0; i < 3; i++) out_sp[i] = (padded[i] - ksz[i]) / g->stride[i] + 1;
    return 0;
}

/* PyTorch's "output padding must be smaller than either stride or dilation" (ATen views a 1-d
 * convolution as 2-d here). */
static int output_padding_error(const char *op, const tg__conv_geom *g, const int64_t *opad)
{
    static const char *const nm[3] = { "depth", "height", "width" };
    char s[256];
    size_t len = 0;
    int first = g->nsp == 3 ? 0 : 1;
    s[0] = 0;
    for (int d = first; d < 3; d++)
        len += (size_t)snprintf(s + len, sizeof s - len, "%soutput_padding_%s: %lld",
                                d > first ? " " : "", nm[d], (long long)opad[d]);
    for (int d = first; d < 3; d++)
        len += (size_t)snprintf(s + len, sizeof s - len, " stride_%s: %lld", nm[d],
                                (long long)g->stride[d]);
    for (int d = first; d < 3; d++)
        len += (size_t)snprintf(s + len, sizeof s - len, " dilation_%s: %lld", nm[d],
                                (long long)g->dil[d]);
    return tg__fail(op, "output padding must be smaller than either stride or dilation, but got %s",
                    s);
}

/* A transposed convolution's output sizes, which must be positive. */
static int output_transposed(const char *op, const tg__conv_geom *g, const int64_t *in_sp,
                             const int64_t *ksz, const int64_t *opad, int64_t *out_sp)
{
    char s1[256], s2[256];
    const int nsp = g->nsp;
    for (int i = 0; i < 3; i++)
        if (opad[i] >= g->stride[i] && opad[i] >= g->dil[i])
            return output_padding_error(op, g, opad);
    for (int i = 0; i < 3; i++)
        out_sp[i] = (in_sp[i] - 1) * g->stride[i] - 2 * g->pad[i] + ksz[i] + opad[i];
    for (int i = 3 - nsp; i < 3; i++)
        if (out_sp[i] <= 0)
            return tg__fail(op,
                            "Given input size per channel: %s. Calculated output size per "
                            "channel: %s. Output size is too small",
                            x_str(s1, sizeof s1, in_sp + 3 - nsp, nsp),
                            x_str(s2, sizeof s2, out_sp + 3 - nsp, nsp));
    return 0;
}

/* The operator's shapes, then the im and col sides (conv_checks.h). */
static void fill_sides(tg__conv_geom *g, const tg_tensor *input, int64_t out_c,
                       const int64_t *in_sp, const int64_t *out_sp)
{
    const int nsp = g->nsp;
    g->in_sizes[0] = g->out_sizes[0] = g->n;
    g->in_sizes[1] = input->sizes[1];
    g->out_sizes[1] = out_c;
    for (int j = 0; j < nsp; j++) {
        g->in_sizes[2 + j] = in_sp[3 - nsp + j];
        g->out_sizes[2 + j] = out_sp[3 - nsp + j];
    }
    g->im_c = g->transposed ? out_c : input->sizes[1];
    g->col_c = g->transposed ? input->sizes[1] : out_c;
    for (int i = 0; i < 3; i++) {
        g->im_sp[i] = g->transposed ? out_sp[i] : in_sp[i];
        g->col_sp[i] = g->transposed ? in_sp[i] : out_sp[i];
    }
}

int tg__conv_prepare(const char *op, tg__conv_geom *g, const tg_tensor *input,
                     const tg_tensor *weight, int64_t bias_len, const int64_t *bias_sizes,
                     int64_t bias_ndim, tg_int_list stride, tg_int_list padding,
                     tg_int_list dilation, bool transposed, tg_int_list output_padding,
                     int64_t groups)
{
    char s1[256], s2[256];
    memset(g, 0, sizeof *g);
    const int64_t wd = weight->ndim;
    if (wd < 3 || wd > 5)
        return tg__fail(op,
                        "Expected a weight of 3, 4 or 5 dimensions (1 to 3 spatial), but got "
                        "weight of size %s",
                        tg__shape_str(s1, sizeof s1, weight->sizes, weight->ndim));
    g->nsp = (int)wd - 2;
    g->transposed = transposed;
    int64_t opad[3], out_c;
    if (check_params(op, g, stride, padding, dilation, output_padding, groups, opad) != 0 ||
        check_shapes(op, input, weight, bias_len, bias_sizes, bias_ndim, transposed, groups,
                     &out_c) != 0)
        return -1;
    g->n = input->sizes[0];
    g->groups = groups;
    int64_t in_sp[3], out_sp[3], ksz[3];
    for (int i = 0; i < 3; i++) {
        int j = i - (3 - g->nsp);
        g->k[i] = j < 0 ? 1 : weight->sizes[2 + j];
        in_sp[i] = j < 0 ? 1 : input->sizes[2 + j];
        ksz[i] = g->dil[i] * (g->k[i] - 1) + 1;
    }
    if ((transposed ? output_transposed(op, g, in_sp, ksz, opad, out_sp)
                    : output_regular(op, g, in_sp, ksz, out_sp)) != 0)
        return -1;
    if (input->dtype != weight->dtype)
        return tg__fail(op,
                        "Input type (%s) and weight type (%s) should be the same or input should "
                        "be a MKLDNN tensor and weight is a dense tensor",
                        type_str(s1, sizeof s1, input), type_str(s2, sizeof s2, weight));
    if (input->dtype != TG_FLOAT32 && input->dtype != TG_FLOAT64)
        return tg__fail(op, "\"convolution\" not implemented for '%s'",
                        tg__dtype_torch_name(input->dtype));
    fill_sides(g, input, out_c, in_sp, out_sp);
    return 0;
}

int tg__conv_check_grad_output(const char *op, const tg__conv_geom *g, const tg_tensor *grad_output,
                               tg_dtype dtype)
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

int tg__conv_prepare_backward(const char *op, tg__conv_geom *g, const tg_tensor *grad_output,
                              const tg_tensor *input, const tg_tensor *weight,
                              tg_int_list bias_sizes, tg_int_list stride, tg_int_list padding,
                              tg_int_list dilation, bool transposed, tg_int_list output_padding,
                              int64_t groups, tg_bool_list output_mask, bool want[3])
{
    bool has_bias = bias_sizes.data != NULL;
    tg__k_output_mask(output_mask, want);
    if (tg__conv_prepare(op, g, input, weight, has_bias ? 1 : -1, bias_sizes.data,
                         (int64_t)bias_sizes.len, stride, padding, dilation, transposed,
                         output_padding, groups) != 0)
        return -1;
    return tg__conv_check_grad_output(op, g, grad_output, input->dtype);
}
