/* The geometry and argument checks of convolution / convolution_backward, shared by the CPU
 * kernels (kernels/cpu/conv.c) and the CUDA kernels (kernels/cuda/conv.cu): PyTorch's messages
 * in PyTorch's order (ATen's ConvUtils check_shape_forward). Host code, compiled once
 * (conv_checks.c); C and C++.
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

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* A 1x1 kernel with stride 1 and no padding: the column matrix is the image itself. */
static inline bool tg__conv_is_pointwise(const tg__conv_geom *g)
{
    for (int i = 0; i < 3; i++)
        if (g->k[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0) return false;
    return true;
}

/* Every check of a convolution of input with weight (and bias, or its sizes for the backward:
 * bias_len < 0 means no bias), and the geometry. 0, or -1 with the error recorded. */
int tg__conv_prepare(const char *op, tg__conv_geom *g, const tg_tensor *input,
                     const tg_tensor *weight, int64_t bias_len, const int64_t *bias_sizes,
                     int64_t bias_ndim, tg_int_list stride, tg_int_list padding,
                     tg_int_list dilation, bool transposed, tg_int_list output_padding,
                     int64_t groups);

/* A tensor of the expected shape given to the backward (grad_output): PyTorch's message. */
int tg__conv_check_grad_output(const char *op, const tg__conv_geom *g, const tg_tensor *grad_output,
                               tg_dtype dtype);

/* convolution_backward's checks (the forward's, with bias_sizes for the bias, then
 * grad_output's shape and dtype) and which gradients output_mask asks for. 0, or -1 + error. */
int tg__conv_prepare_backward(const char *op, tg__conv_geom *g, const tg_tensor *grad_output,
                              const tg_tensor *input, const tg_tensor *weight,
                              tg_int_list bias_sizes, tg_int_list stride, tg_int_list padding,
                              tg_int_list dilation, bool transposed, tg_int_list output_padding,
                              int64_t groups, tg_bool_list output_mask, bool want[3]);

#ifdef __cplusplus
}
#endif

#endif
