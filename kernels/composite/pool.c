/* The composite pooling and padding operators, as PyTorch 1.13 writes them:
 * max_pool2d (the values of max_pool2d_with_indices), max_pool1d and avg_pool1d (the 2-d
 * operators on a height-1 view, after PyTorch's 1-d argument checks), adaptive_avg_pool2d
 * (mean over the last two dims for a 1 x 1 output, _adaptive_avg_pool2d otherwise),
 * constant_pad_nd (CompositeExplicitAutograd: a filled tensor with the cropped input copied
 * into its middle) and constant_pad_nd_backward (constant_pad_nd with the pads negated).
 * Every function returns a new reference, or NULL with an error recorded, and releases its
 * intermediates on every path. */
#include "tg_kutil.h"

#include "ops/_adaptive_avg_pool2d.h"
#include "ops/avg_pool2d.h"
#include "ops/clone.h"
#include "ops/constant_pad_nd.h"
#include "ops/copy.h"
#include "ops/empty.h"
#include "ops/fill.h"
#include "ops/max_pool2d_with_indices.h"
#include "ops/mean.h"
#include "ops/slice.h"
#include "ops/squeeze.h"
#include "ops/unsqueeze.h"

#include "kernels/adaptive_avg_pool2d.h"
#include "kernels/avg_pool1d.h"
#include "kernels/constant_pad_nd.h"
#include "kernels/constant_pad_nd_backward.h"
#include "kernels/max_pool1d.h"
#include "kernels/max_pool2d.h"
#include "composite_util.h"

#include <stdlib.h>

tg_tensor *tg__composite_max_pool2d(tg_tensor *self, tg_int_list kernel_size, tg_int_list stride,
                                    tg_int_list padding, tg_int_list dilation, bool ceil_mode)
{
    tg_tensors2 r =
        tg_max_pool2d_with_indices(self, kernel_size, .stride = stride, .padding = padding,
                                   .dilation = dilation, .ceil_mode = ceil_mode);
    tg_release(r.r1);
    return r.r0;
}

/* check_max_pool1d of PyTorch 1.13 (MaxPooling.cpp). */
static int max_pool1d_check(const char *op, const tg_tensor *self, tg_int_list k, tg_int_list s,
                            tg_int_list p, tg_int_list d)
{
    char s1[256];
    int64_t nd = self->ndim;
    if (!((nd == 2 && self->sizes[1] != 0) ||
          (nd == 3 && self->sizes[1] != 0 && self->sizes[2] != 0)))
        return tg__fail(
            op,
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:%s",
            tg__shape_str(s1, sizeof s1, self->sizes, nd));
    if (k.len != 1)
        return tg__fail(
            op,
            "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size %lld",
            (long long)k.len);
    if (s.len > 1)
        return tg__fail(
            op,
            "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but got size %lld",
            (long long)s.len);
    if (p.len != 1)
        return tg__fail(
            op,
            "max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got size %lld",
            (long long)p.len);
    if (d.len != 1)
        return tg__fail(
            op,
            "max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but got size %lld",
            (long long)d.len);
    int64_t kv = k.data[0], sv = s.len ? s.data[0] : kv, pv = p.data[0], dv = d.data[0];
    if (kv <= 0)
        return tg__fail(op, "max_pool1d() kernel_size must be greater than zero, but got %lld",
                        (long long)kv);
    if (sv <= 0)
        return tg__fail(op, "max_pool1d() stride must be greater than zero, but got %lld",
                        (long long)sv);
    if (pv < 0)
        return tg__fail(op, "max_pool1d() padding must be non-negative, but got %lld",
                        (long long)pv);
    if (pv > kv / 2)
        return tg__fail(
            op,
            "max_pool1d() padding should be at most half of kernel size, but got padding=%lld and kernel_size=%lld",
            (long long)pv, (long long)kv);
    if (dv <= 0)
        return tg__fail(op, "max_pool1d() dilation must be greater than zero, but got %lld",
                        (long long)dv);
    return 0;
}

tg_tensor *tg__composite_max_pool1d(tg_tensor *self, tg_int_list kernel_size, tg_int_list stride,
                                    tg_int_list padding, tg_int_list dilation, bool ceil_mode)
{
    if (max_pool1d_check("max_pool1d", self, kernel_size, stride, padding, dilation) != 0)
        return NULL;
    int64_t k = kernel_size.data[0], s = stride.len ? stride.data[0] : k;
    tg_tensor *x = tg_unsqueeze(self, -2);
    if (!x) return NULL;
    tg_tensors2 r = tg_max_pool2d_with_indices(
        x, TG_INTS(1, k), .stride = TG_INTS(1, s), .padding = TG_INTS(0, padding.data[0]),
        .dilation = TG_INTS(1, dilation.data[0]), .ceil_mode = ceil_mode);
    tg_release(x);
    tg_release(r.r1);
    return r.r0 ? tg__then(r.r0, tg_squeeze_dim(r.r0, -2)) : NULL;
}

tg_tensor *tg__composite_avg_pool1d(tg_tensor *self, tg_int_list kernel_size, tg_int_list stride,
                                    tg_int_list padding, bool ceil_mode, bool count_include_pad)
{
    const char *op = "avg_pool1d";
    if (stride.len == 0) stride = kernel_size;
    if (self->ndim < 2 || self->ndim >= 4)
        return tg__error(
            op,
            "Expected 2 to 3 dimensions, but got %lld-dimensional tensor for argument #1 'self' (while checking arguments for avg_pool1d)",
            (long long)self->ndim);
    const char *names[3] = { "kernel_size", "stride", "padding" };
    tg_int_list lists[3] = { kernel_size, stride, padding };
    for (int i = 0; i < 3; i++)
        if (lists[i].len != 1)
            return tg__error(op, "avg_pool1d() argument '%s' should contain one int (got %lld)",
                             names[i], (long long)lists[i].len);
    tg_tensor *x = tg_unsqueeze(self, -2);
    if (!x) return NULL;
    tg_tensor *y =
        tg_avg_pool2d(x, TG_INTS(1, kernel_size.data[0]), .stride = TG_INTS(1, stride.data[0]),
                      .padding = TG_INTS(0, padding.data[0]), .ceil_mode = ceil_mode,
                      .count_include_pad = count_include_pad);
    tg_release(x);
    return y ? tg__then(y, tg_squeeze_dim(y, -2)) : NULL;
}

tg_tensor *tg__composite_adaptive_avg_pool2d(tg_tensor *self, tg_int_list output_size)
{
    const char *op = "adaptive_avg_pool2d";
    if (output_size.len != 2) return tg__error(op, "adaptive_avg_pool2d: output_size must be 2");
    if (output_size.data[0] < 0 || output_size.data[1] < 0)
        return tg__error(
            op,
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {%lld, %lld}",
            (long long)output_size.data[0], (long long)output_size.data[1]);
    if (output_size.data[0] == 1 && output_size.data[1] == 1)
        return tg_mean(self, .dim = TG_INTS(-1, -2), .keepdim = true);
    return tg__adaptive_avg_pool2d(self, output_size);
}

/* PyTorch's narrow: the view [start, start + length) of dim, with its checks. */
static tg_tensor *narrow(const char *op, tg_tensor *t, int64_t dim, int64_t start, int64_t length)
{
    int64_t size = t->sizes[dim];
    if (start != size) {
        if (start < -size || start >= size)
            return tg__error(
                op,
                "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                (long long)-size, (long long)(size - 1), (long long)start);
        if (start < 0) start += size;
    }
    if (length < 0 || start > size - length)
        return tg__error(op, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                         (long long)start, (long long)length, (long long)size);
    return tg_slice(t, .dim = dim, .start = start, .end = (start + length));
}

tg_tensor *tg__composite_constant_pad_nd(tg_tensor *self, tg_int_list pad, double value)
{
    const char *op = "constant_pad_nd";
    if (pad.len % 2 != 0)
        return tg__error(op, "Length of pad must be even but instead it equals %lld",
                         (long long)pad.len);
    int64_t l_inp = self->ndim, l_pad = pad.len / 2, l_diff = l_inp - l_pad;
    if (l_inp < l_pad)
        return tg__error(
            op,
            "Length of pad should be no more than twice the number of dimensions of the input. Pad length is %lldwhile the input has %llddimensions.",
            (long long)pad.len, (long long)l_inp);
    bool all_non_positive = true;
    tg_tensor *c_input = tg_retain(self);
    for (int64_t i = l_diff; i < l_inp && c_input; i++) {
        int64_t pi = 2 * (l_inp - i - 1);
        if (pad.data[pi] < 0)
            c_input = tg__then(
                c_input, narrow(op, c_input, i, -pad.data[pi], c_input->sizes[i] + pad.data[pi]));
        else if (pad.data[pi] != 0) all_non_positive = false;
        if (!c_input) break;
        if (pad.data[pi + 1] < 0)
            c_input =
                tg__then(c_input, narrow(op, c_input, i, 0, c_input->sizes[i] + pad.data[pi + 1]));
        else if (pad.data[pi + 1] != 0) all_non_positive = false;
    }
    if (!c_input) return NULL;
    if (all_non_positive) return tg__then(c_input, tg_clone(c_input));
    int64_t shape[TG_MAX_DIMS];
    for (int64_t i = 0; i < l_diff; i++) shape[i] = self->sizes[i];
    for (int64_t i = 0; i < l_pad; i++) {
        int64_t pi = pad.len - (i + 1) * 2;
        int64_t nd = self->sizes[l_diff + i] + pad.data[pi] + pad.data[pi + 1];
        if (nd <= 0) {
            tg_release(c_input);
            return tg__error(
                op,
                "The input size %lld, plus negative padding %lld and %lld resulted in a negative output size, which is invalid. Check dimension %lld of your input.",
                (long long)self->sizes[l_diff + i], (long long)pad.data[pi],
                (long long)pad.data[pi + 1], (long long)(l_diff + i));
        }
        shape[l_diff + i] = nd;
    }
    tg_int_list size = { .len = l_inp, .data = shape };
    tg_tensor *out = tg_empty(size, .dtype = self->dtype, .device = self->device);
    tg_tensor *f = out ? tg_fill_(out, value) : NULL;
    tg_release(f);
    tg_tensor *c_out = f ? tg_retain(out) : NULL;
    for (int64_t i = l_diff; i < l_inp && c_out; i++) {
        int64_t pi = 2 * (l_inp - i - 1);
        if (pad.data[pi] > 0)
            c_out = tg__then(c_out, tg_slice(c_out, .dim = i, .start = pad.data[pi]));
        if (c_out && pad.data[pi + 1] > 0)
            c_out = tg__then(
                c_out, tg_slice(c_out, .dim = i, .end = (c_out->sizes[i] - pad.data[pi + 1])));
    }
    tg_tensor *done = c_out ? tg_copy_(c_out, c_input) : NULL;
    tg_release(done);
    tg_release(c_out);
    tg_release(c_input);
    if (!done) {
        tg_release(out);
        return NULL;
    }
    return out;
}

tg_tensor *tg__composite_constant_pad_nd_backward(tg_tensor *grad, tg_int_list pad)
{
    int64_t *neg = malloc(sizeof(int64_t) * (size_t)(pad.len ? pad.len : 1));
    if (!neg) return tg__error("constant_pad_nd_backward", "out of memory");
    for (int64_t i = 0; i < pad.len; i++) neg[i] = -pad.data[i];
    tg_int_list np = { .len = pad.len, .data = neg };
    tg_tensor *r = tg_constant_pad_nd(grad, np);
    free(neg);
    return r;
}
