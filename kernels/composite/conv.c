/* The convolution front ends (CompositeImplicitAutograd, as in PyTorch): conv1d/2d/3d with int
 * or "valid"/"same" padding, conv_transpose1d/2d/3d, all over `convolution` (kernels/cpu/conv.c,
 * kernels/cuda/conv.cu); and _convolution_double_backward, convolution_backward's derivative,
 * written with convolution and convolution_backward so that it is differentiable again.
 *
 * Every function returns a new reference, or NULL with an error recorded; intermediates are
 * released on every path. */
#include "tg_kutil.h"
/* The public functions of the operators called here. */
#include "ops/add.h"
#include "ops/contiguous.h"
#include "ops/convolution.h"
#include "ops/convolution_backward.h"
#include "ops/expand.h"
#include "ops/slice.h"
#include "ops/squeeze.h"
#include "ops/unsqueeze.h"
#include "ops/view.h"
#include "ops/zeros_like.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/_convolution_double_backward.h"
#include "kernels/conv1d.h"
#include "kernels/conv2d.h"
#include "kernels/conv3d.h"
#include "kernels/conv_transpose1d.h"
#include "kernels/conv_transpose2d.h"
#include "kernels/conv_transpose3d.h"
#include "composite_util.h"

#include <string.h>

static const tg_int_list no_output_padding = { .len = 1, .data = (const int64_t[]){ 0 } };

/* conv{1,2,3}d and conv_transpose{1,2,3}d: a batched (N, C, *) input goes to convolution as
 * it is, an unbatched (C, *) one with a batch dim of 1 added and removed. */
static tg_tensor *conv_nd(const char *op, int nsp, tg_tensor *input, tg_tensor *weight,
                          tg_tensor *bias, tg_int_list stride, tg_int_list padding,
                          tg_int_list dilation, bool transposed, tg_int_list output_padding,
                          int64_t groups)
{
    char s[256];
    int64_t d = input->ndim;
    if (d != nsp + 1 && d != nsp + 2)
        return tg__error(op,
                         "Expected %dD (unbatched) or %dD (batched) input to %s, but got input of "
                         "size: %s",
                         nsp + 1, nsp + 2, op, tg__shape_str(s, sizeof s, input->sizes, d));
    bool batched = d == nsp + 2;
    tg_tensor *x = batched ? tg_retain(input) : tg_unsqueeze(input, 0);
    if (!x) return NULL;
    tg_tensor *y = tg__then(x, tg_convolution(x, weight, bias, stride, padding, dilation,
                                              transposed, output_padding, groups));
    return batched || !y ? y : tg__then(y, tg_squeeze_dim(y, 0));
}

tg_tensor *tg__composite_conv1d(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                tg_int_list stride, tg_int_list padding, tg_int_list dilation,
                                int64_t groups)
{
    return conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, false,
                   no_output_padding, groups);
}

tg_tensor *tg__composite_conv2d(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                tg_int_list stride, tg_int_list padding, tg_int_list dilation,
                                int64_t groups)
{
    return conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, false,
                   no_output_padding, groups);
}

tg_tensor *tg__composite_conv3d(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                tg_int_list stride, tg_int_list padding, tg_int_list dilation,
                                int64_t groups)
{
    return conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, false,
                   no_output_padding, groups);
}

/* padding="valid" is no padding. padding="same" (stride 1 only) pads each spatial dim by
 * total = dilation * (kernel - 1): total / 2 on each side, and an odd total one more at the
 * end. The convolution runs with the larger padding (total + 1) / 2 on both sides, and the
 * output's extra first element along such a dim is dropped: the same values as PyTorch's
 * extra end padding, without a padded copy of the input. */
static tg_tensor *conv_padding_mode(const char *op, int nsp, tg_tensor *input, tg_tensor *weight,
                                    tg_tensor *bias, tg_int_list stride, const char *mode,
                                    tg_int_list dilation, int64_t groups)
{
    int64_t pad[3] = { 0, 0, 0 };
    bool drop_first[3] = { false, false, false };
    if (!strcmp(mode, "same")) {
        for (int64_t i = 0; i < stride.len; i++)
            if (stride.data[i] != 1)
                return tg__error(op, "padding='same' is not supported for strided convolutions");
        if (weight->ndim != nsp + 2)
            return tg__error(op,
                             "Expected a %d-dimensional weight for %s, but got weight of %lld "
                             "dimensions",
                             nsp + 2, op, (long long)weight->ndim);
        for (int i = 0; i < nsp; i++) {
            int64_t dil = dilation.data[dilation.len == 1 ? 0 : i];
            int64_t total = dil * (weight->sizes[2 + i] - 1);
            pad[i] = (total + 1) / 2;
            drop_first[i] = total % 2 != 0;
        }
    } else if (strcmp(mode, "valid") != 0) {
        return tg__error(op, "Invalid padding string: '%s'", mode);
    }
    tg_tensor *y = conv_nd(op, nsp, input, weight, bias, stride,
                           (tg_int_list){ .len = (int64_t)nsp, .data = pad }, dilation, false,
                           no_output_padding, groups);
    int64_t first = y ? y->ndim - nsp : 0; /* the first spatial dim (batched or not) */
    for (int i = 0; y && i < nsp; i++)
        if (drop_first[i]) y = tg__then(y, tg_slice(y, .dim = first + i, .start = 1));
    return y;
}

tg_tensor *tg__composite_conv1d_padding(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                        tg_int_list stride, const char *padding,
                                        tg_int_list dilation, int64_t groups)
{
    return conv_padding_mode("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}

tg_tensor *tg__composite_conv2d_padding(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                        tg_int_list stride, const char *padding,
                                        tg_int_list dilation, int64_t groups)
{
    return conv_padding_mode("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}

tg_tensor *tg__composite_conv3d_padding(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                        tg_int_list stride, const char *padding,
                                        tg_int_list dilation, int64_t groups)
{
    return conv_padding_mode("conv3d", 3, input, weight, bias, stride, padding, dilation, groups);
}

tg_tensor *tg__composite_conv_transpose1d(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                          tg_int_list stride, tg_int_list padding,
                                          tg_int_list output_padding, int64_t groups,
                                          tg_int_list dilation)
{
    return conv_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, true,
                   output_padding, groups);
}

tg_tensor *tg__composite_conv_transpose2d(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                          tg_int_list stride, tg_int_list padding,
                                          tg_int_list output_padding, int64_t groups,
                                          tg_int_list dilation)
{
    return conv_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, true,
                   output_padding, groups);
}

tg_tensor *tg__composite_conv_transpose3d(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                          tg_int_list stride, tg_int_list padding,
                                          tg_int_list output_padding, int64_t groups,
                                          tg_int_list dilation)
{
    return conv_nd("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, true,
                   output_padding, groups);
}

/* ------------------------------------------------------------------ double backward */

/* a + b where either may be NULL (an undefined tensor); takes both references. */
static tg_tensor *sum_defined(tg_tensor *a, tg_tensor *b, bool *failed)
{
    if (!a || !b) return a ? a : b;
    tg_tensor *r = tg__then2(a, b, tg_add(a, b));
    if (!r) *failed = true;
    return r;
}

/* convolution(x, w) is bilinear, and convolution_backward returns its two partial adjoints
 * gI(gO, w), gW(gO, x) and gb(gO). With incoming gradients ggI, ggW, ggb of those three:
 *   d/d gO = convolution(ggI, w) + convolution(x, ggW) + ggb (per channel)
 *   d/d w  = the weight adjoint of convolution at input ggI:   convolution_backward(gO, ggI, w)
 *   d/d x  = the input adjoint of convolution with weight ggW: convolution_backward(gO, x, ggW)
 * for plain and transposed convolutions alike. Returns (d gO, d x, d w) in the order of
 * convolution_backward's inputs (grad_output, input, weight), as output_mask selects. */
tg_tensors3 tg__composite_convolution_double_backward(
    tg_tensor *ggI, tg_tensor *ggW, tg_tensor *ggb, tg_tensor *gO, tg_tensor *weight,
    tg_tensor *self, tg_int_list stride, tg_int_list padding, tg_int_list dilation, bool transposed,
    tg_int_list output_padding, int64_t groups, tg_bool_list output_mask)
{
    tg_tensors3 r = { NULL, NULL, NULL };
    bool failed = false;
    bool want_gO = output_mask.len > 0 && output_mask.data[0];
    bool want_x = output_mask.len > 1 && output_mask.data[1];
    bool want_w = output_mask.len > 2 && output_mask.data[2];
    tg_bool_list only_input = TG_BOOLS(true, false, false);
    tg_bool_list only_weight = TG_BOOLS(false, true, false);
    if (want_gO) {
        tg_tensor *acc = NULL;
        if (ggI) {
            tg_tensor *t = tg_convolution(ggI, weight, NULL, stride, padding, dilation, transposed,
                                          output_padding, groups);
            failed |= !t;
            acc = sum_defined(acc, t, &failed);
        }
        if (ggW && !failed) {
            tg_tensor *t = tg_convolution(self, ggW, NULL, stride, padding, dilation, transposed,
                                          output_padding, groups);
            failed |= !t;
            acc = sum_defined(acc, t, &failed);
        }
        if (ggb && !failed) { /* ggb (C) as (1, C, 1, ...), expanded to gO's shape */
            int64_t shape[5] = { 1, 1, 1, 1, 1 };
            shape[1] = tg_tensor_numel(ggb);
            tg_int_list channel_shape = { .len = gO->ndim, .data = shape },
                        full = { .len = gO->ndim, .data = gO->sizes };
            tg_tensor *v = tg_view(ggb, channel_shape);
            tg_tensor *e = v ? tg__then(v, tg_expand(v, full)) : NULL;
            if (e && !acc) {
                acc = tg__then(e, tg_contiguous(e)); /* a tensor of its own, not a view of ggb */
                failed |= !acc;
            } else {
                failed |= !e;
                acc = sum_defined(acc, e, &failed);
            }
        }
        r.r0 = acc;
    }
    if (want_x && ggW && !failed) {
        tg_tensors3 b =
            tg_convolution_backward(gO, self, ggW, TG_NO_INTS, stride, padding, dilation,
                                    transposed, output_padding, groups, only_input);
        r.r1 = b.r0;
        failed |= !b.r0;
    }
    if (want_w && ggI && !failed) {
        tg_tensors3 b =
            tg_convolution_backward(gO, ggI, weight, TG_NO_INTS, stride, padding, dilation,
                                    transposed, output_padding, groups, only_weight);
        r.r2 = b.r1;
        failed |= !b.r1;
    }
    /* A requested gradient with no incoming term is zero (never an undefined result, which
     * the autograd glue would take for a failure when every result is undefined). */
    tg_tensor *like[3] = { gO, self, weight };
    tg_tensor **res[3] = { &r.r0, &r.r1, &r.r2 };
    bool want[3] = { want_gO, want_x, want_w };
    for (int i = 0; i < 3 && !failed; i++)
        if (want[i] && !*res[i]) failed = !(*res[i] = tg_zeros_like(like[i]));
    if (failed) {
        tg_release(r.r0);
        tg_release(r.r1);
        tg_release(r.r2);
        return (tg_tensors3){ NULL, NULL, NULL };
    }
    return r;
}
