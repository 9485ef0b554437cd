/* Argument checks and output shapes of the pooling and padding operators, shared by the CPU
 * kernels (kernels/cpu/pool.c) and the CUDA kernels (kernels/cuda/pool.cu): PyTorch 1.13's
 * messages in PyTorch's order (aten/src/ATen/native/Pool.h, DilatedMaxPool2d.cpp,
 * AveragePool2d.cpp, AdaptiveAveragePooling.cpp, AdaptiveMaxPooling2d.cpp,
 * ReflectionPad.cpp, ReplicationPadding.cpp). Static inline, C and C++. Each check returns 0,
 * or -1 with the error recorded.
 *
 * Layout: self is (C, H, W) or (N, C, H, W), read as nbatch * C planes of H * W (the kernels
 * make it contiguous); outputs are contiguous, (.., OH, OW). */
#ifndef TG_POOL_CHECKS_H
#define TG_POOL_CHECKS_H

#include "tg_kutil.h"

#include <stdio.h>
#include <string.h>
#include "tg_hd.h"

/* The geometry of one pooling or padding call. */
typedef struct tg_pool2d {
    int64_t ndim;      /* 3 or 4 */
    int64_t nbatch, c; /* nbatch 1 for a 3-d self */
    int64_t ih, iw, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw; /* pooling */
    int64_t pl, pr, pt, pb;                 /* padding: left, right, top, bottom */
    int64_t divisor;                        /* avg_pool2d: divisor_override, 0 for none */
    bool ceil_mode, count_include_pad;
} tg_pool2d;

static inline int64_t tg__pool_planes(const tg_pool2d *p) { return p->nbatch * p->c; }

/* The output shape (self's leading dims, then oh, ow) into sizes; returns its ndim. */
static inline int64_t tg__pool_out_shape(const tg_pool2d *p, int64_t *sizes)
{
    int64_t k = 0;
    if (p->ndim == 4) sizes[k++] = p->nbatch;
    sizes[k++] = p->c;
    sizes[k++] = p->oh;
    sizes[k++] = p->ow;
    return k;
}

/* "Dimension out of range (expected to be in range of [-n, n-1], but got d)". */
static inline int tg__pool_dim_range(const char *op, int64_t ndim, int64_t d)
{
    if (ndim == 0)
        return tg__fail(op, "Dimension specified as %lld but tensor has no dimensions",
                        (long long)d);
    return tg__fail(
        op, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
        (long long)-ndim, (long long)(ndim - 1), (long long)d);
}

/* floor division (div_rtn) */
static inline int64_t tg__pool_div_rtn(int64_t x, int64_t y)
{
    int64_t q = x / y, r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) q--;
    return q;
}

/* PyTorch's pooling_output_shape (with its stride and pad checks). */
static inline int tg__pool_output_size(const char *op, int64_t in, int64_t k, int64_t pad,
                                       int64_t s, int64_t d, bool ceil_mode, int64_t *out)
{
    if (s == 0) return tg__fail(op, "stride should not be zero");
    if (pad < 0) return tg__fail(op, "pad must be non-negative, but got pad: %lld", (long long)pad);
    if (pad > k / 2)
        return tg__fail(
            op, "pad should be at most half of kernel size, but got pad=%lld and kernel_size=%lld",
            (long long)pad, (long long)k);
    int64_t o = tg__pool_div_rtn(in + 2 * pad - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
    if (ceil_mode && (o - 1) * s >= in + pad) o--;
    *out = o;
    return 0;
}

/* One int or two (an int[2] argument): a[0], a[1]. */
static inline int64_t tg__pool_second(tg_int_list l) { return l.len == 1 ? l.data[0] : l.data[1]; }

/* pool2d_shape_check: kernel, stride, dilation positive, non-empty planes, output size. */
static inline int tg__pool2d_shape_check(const char *op, const tg_tensor *self, const tg_pool2d *p)
{
    char s1[256];
    if (p->kw <= 0 || p->kh <= 0)
        return tg__fail(op, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                        (long long)p->kh, (long long)p->kw);
    if (p->sw <= 0 || p->sh <= 0)
        return tg__fail(op, "stride should be greater than zero, but got dH: %lld dW: %lld",
                        (long long)p->sh, (long long)p->sw);
    if (p->dh <= 0 || p->dw <= 0)
        return tg__fail(
            op, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
            (long long)p->dh, (long long)p->dw);
    int64_t nd = self->ndim;
    bool valid = nd >= 3 && self->sizes[1] != 0 && self->sizes[2] != 0;
    if (!((nd == 3 && self->sizes[0] != 0 && valid) || (nd == 4 && valid && self->sizes[3] != 0)))
        return tg__fail(
            op,
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:%s",
            tg__shape_str(s1, sizeof s1, self->sizes, nd));
    if (p->kw / 2 < p->pw || p->kh / 2 < p->ph)
        return tg__fail(
            op,
            "pad should be smaller than or equal to half of kernel size, but got padW = %lld, padH = %lld, kW = %lld, kH = %lld",
            (long long)p->pw, (long long)p->ph, (long long)p->kw, (long long)p->kh);
    if (p->ow < 1 || p->oh < 1)
        return tg__fail(
            op,
            "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output size is too small",
            (long long)p->c, (long long)p->ih, (long long)p->iw, (long long)p->c, (long long)p->oh,
            (long long)p->ow);
    return 0;
}

/* The dtype rule of the kernels: float32 and float64 ("max_pool2d" not implemented for ...). */
static inline int tg__pool_dtype_check(const char *op, const char *name, const tg_tensor *t)
{
    if (t->dtype == TG_FLOAT32 || t->dtype == TG_FLOAT64) return 0;
    return tg__fail(op, "\"%s\" not implemented for '%s'", name, tg__dtype_torch_name(t->dtype));
}

/* max_pool2d_with_indices's meta function: argument lists, dims, output size. */
static inline int tg__max_pool2d_check(const char *op, const tg_tensor *self, tg_int_list kernel,
                                       tg_int_list stride, tg_int_list padding,
                                       tg_int_list dilation, bool ceil_mode, tg_pool2d *p)
{
    memset(p, 0, sizeof *p);
    if (kernel.len != 1 && kernel.len != 2)
        return tg__fail(
            op, "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
    p->kh = kernel.data[0];
    p->kw = tg__pool_second(kernel);
    if (stride.len > 2)
        return tg__fail(
            op, "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
    p->sh = stride.len ? stride.data[0] : p->kh;
    p->sw = stride.len ? tg__pool_second(stride) : p->kw;
    if (padding.len != 1 && padding.len != 2)
        return tg__fail(
            op, "max_pool2d: padding must be either be a single int, or a tuple of two ints");
    p->ph = padding.data[0];
    p->pw = tg__pool_second(padding);
    if (dilation.len != 1 && dilation.len != 2)
        return tg__fail(op,
                        "max_pool2d: dilation must be either a single int, or a tuple of two ints");
    p->dh = dilation.data[0];
    p->dw = tg__pool_second(dilation);
    if (self->ndim != 3 && self->ndim != 4)
        return tg__fail(op, "non-empty 3D or 4D (batch mode) tensor expected for input");
    p->ndim = self->ndim;
    p->ceil_mode = ceil_mode;
    p->nbatch = self->ndim == 4 ? self->sizes[0] : 1;
    p->c = self->sizes[self->ndim - 3];
    p->ih = self->sizes[self->ndim - 2];
    p->iw = self->sizes[self->ndim - 1];
    if (tg__pool_output_size(op, p->ih, p->kh, p->ph, p->sh, p->dh, ceil_mode, &p->oh) ||
        tg__pool_output_size(op, p->iw, p->kw, p->pw, p->sw, p->dw, ceil_mode, &p->ow))
        return -1;
    return tg__pool2d_shape_check(op, self, p);
}

/* avg_pool2d's meta function. */
static inline int tg__avg_pool2d_check(const char *op, const tg_tensor *self, tg_int_list kernel,
                                       tg_int_list stride, tg_int_list padding, bool ceil_mode,
                                       bool count_include_pad, tg_opt_int divisor, tg_pool2d *p)
{
    memset(p, 0, sizeof *p);
    if (kernel.len != 1 && kernel.len != 2)
        return tg__fail(
            op, "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
    p->kh = kernel.data[0];
    p->kw = tg__pool_second(kernel);
    if (stride.len > 2)
        return tg__fail(
            op, "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
    p->sh = stride.len ? stride.data[0] : p->kh;
    p->sw = stride.len ? tg__pool_second(stride) : p->kw;
    if (padding.len != 1 && padding.len != 2)
        return tg__fail(op,
                        "avg_pool2d: padding must either be a single int, or a tuple of two ints");
    p->ph = padding.data[0];
    p->pw = tg__pool_second(padding);
    p->dh = p->dw = 1;
    if (!tg_is_none_int(divisor) && divisor == 0) return tg__fail(op, "divisor must be not zero");
    p->divisor = tg_is_none_int(divisor) ? 0 : divisor;
    if (self->ndim < 3) return tg__pool_dim_range(op, self->ndim, -3);
    p->ndim = self->ndim;
    p->ceil_mode = ceil_mode;
    p->count_include_pad = count_include_pad;
    p->nbatch = self->ndim == 4 ? self->sizes[0] : 1;
    p->c = self->sizes[self->ndim - 3];
    p->ih = self->sizes[self->ndim - 2];
    p->iw = self->sizes[self->ndim - 1];
    if (tg__pool_output_size(op, p->ih, p->kh, p->ph, p->sh, 1, ceil_mode, &p->oh) ||
        tg__pool_output_size(op, p->iw, p->kw, p->pw, p->sw, 1, ceil_mode, &p->ow))
        return -1;
    return tg__pool2d_shape_check(op, self, p);
}

/* check_dim_size(t, ndim, dim, size) */
static inline int tg__pool_dim_size(const char *op, const tg_tensor *t, int64_t ndim, int64_t dim,
                                    int64_t size)
{
    if (t->ndim == ndim && t->sizes[dim] == size) return 0;
    return tg__fail(
        op,
        "Expected a tensor of dimension %lld and tensor.size[%lld] == %lld but got: dimension %lld and tensor.size[%lld] = %lld",
        (long long)ndim, (long long)dim, (long long)size, (long long)t->ndim, (long long)dim,
        (long long)(dim < t->ndim ? t->sizes[dim] : 0));
}

/* grad_output (and indices, when given) have the output's shape; dtypes agree. */
static inline int tg__pool_backward_check(const char *op, const tg_tensor *grad_output,
                                          const tg_tensor *self, const tg_tensor *indices,
                                          const tg_pool2d *p)
{
    int64_t nd = self->ndim;
    if (tg__pool_dim_size(op, grad_output, nd, nd - 3, p->c) ||
        tg__pool_dim_size(op, grad_output, nd, nd - 2, p->oh) ||
        tg__pool_dim_size(op, grad_output, nd, nd - 1, p->ow))
        return -1;
    if (nd == 4 && tg__pool_dim_size(op, grad_output, nd, 0, p->nbatch)) return -1;
    if (indices) {
        if (tg__pool_dim_size(op, indices, nd, nd - 3, p->c) ||
            tg__pool_dim_size(op, indices, nd, nd - 2, p->oh) ||
            tg__pool_dim_size(op, indices, nd, nd - 1, p->ow))
            return -1;
        if (nd == 4 && tg__pool_dim_size(op, indices, nd, 0, p->nbatch)) return -1;
        if (indices->dtype != TG_INT64)
            return tg__fail(op, "expected scalar type Long but found %s",
                            tg__dtype_torch_name(indices->dtype));
    }
    if (grad_output->dtype != self->dtype)
        return tg__fail(op, "expected scalar type %s but found %s",
                        tg__dtype_torch_name(self->dtype),
                        tg__dtype_torch_name(grad_output->dtype));
    return 0;
}

/* Checks a padding backward's dtypes: self's by the backend's check (PyTorch names the kernels
 * differently), then grad_output's against it. */
typedef int (*tg_pool_dtype_check_fn)(const char *op, const char *name, const tg_tensor *t);

/* Adaptive pooling's windows: output cell i of o over a dim of n covers [start, end). */
static inline TG_HD int64_t tg__adaptive_start(int64_t i, int64_t o, int64_t n)
{
    return (i / o) * n + ((i % o) * n) / o;
}
static inline TG_HD int64_t tg__adaptive_end(int64_t i, int64_t o, int64_t n)
{
    return 1 + ((i + 1) * n - 1) / o;
}

/* The window of average-pooling output (oh, ow) clipped to the input, [h0, h1) x [w0, w1), and
 * its divisor (divisor_override, else the window counted with its padding or without, as
 * count_include_pad says); false when the window holds no input element. */
static inline TG_HD bool tg__avg_pool_window(const tg_pool2d *p, int64_t oh, int64_t ow,
                                             int64_t *h0, int64_t *h1, int64_t *w0, int64_t *w1,
                                             int64_t *div)
{
    *h0 = oh * p->sh - p->ph;
    *w0 = ow * p->sw - p->pw;
    *h1 = *h0 + p->kh < p->ih + p->ph ? *h0 + p->kh : p->ih + p->ph;
    *w1 = *w0 + p->kw < p->iw + p->pw ? *w0 + p->kw : p->iw + p->pw;
    int64_t pool = (*h1 - *h0) * (*w1 - *w0);
    if (*h0 < 0) *h0 = 0;
    if (*w0 < 0) *w0 = 0;
    if (*h1 > p->ih) *h1 = p->ih;
    if (*w1 > p->iw) *w1 = p->iw;
    if (*h0 >= *h1 || *w0 >= *w1) return false;
    *div = p->divisor ? p->divisor : p->count_include_pad ? pool : (*h1 - *h0) * (*w1 - *w0);
    return true;
}

/* _adaptive_avg_pool2d (avg) or adaptive_max_pool2d (max) arguments. */
static inline int tg__adaptive_pool2d_check(const char *op, const tg_tensor *self,
                                            tg_int_list output_size, bool max, tg_pool2d *p)
{
    char s1[256];
    const char *name = max ? "adaptive_max_pool2d" : "adaptive_avg_pool2d";
    memset(p, 0, sizeof *p);
    int64_t nd = self->ndim;
    if (!max && output_size.len != 2)
        return tg__fail(op, "adaptive_avg_pool2d: output_size must be 2");
    if (nd != 3 && nd != 4)
        return tg__fail(op, "%s(): Expected 3D or 4D tensor, but got%s %s", name, max ? ":" : "",
                        tg__shape_str(s1, sizeof s1, self->sizes, nd));
    for (int64_t i = 1; i < nd; i++)
        if (self->sizes[i] <= 0)
            return tg__fail(
                op,
                "%s(): Expected input to have non-zero size for non-batch dimensions, but input has sizes %s with dimension %lld being empty",
                name, tg__shape_str(s1, sizeof s1, self->sizes, nd), (long long)i);
    if (max && output_size.len != 2)
        return tg__fail(op, "adaptive_max_pool2d(): internal error: output_size.size() must be 2");
    p->ndim = nd;
    p->nbatch = nd == 4 ? self->sizes[0] : 1;
    p->c = self->sizes[nd - 3];
    p->ih = self->sizes[nd - 2];
    p->iw = self->sizes[nd - 1];
    p->oh = output_size.data[0];
    p->ow = output_size.data[1];
    if (p->oh < 0 || p->ow < 0) {
        int64_t sizes[4];
        int64_t k = tg__pool_out_shape(p, sizes);
        return tg__fail(op, "Trying to create tensor with negative dimension %lld: %s",
                        (long long)(p->oh < 0 ? p->oh : p->ow),
                        tg__shape_str(s1, sizeof s1, sizes, k));
    }
    return 0;
}

/* reflection_pad2d (reflect) or replication_pad2d arguments; output size in p. */
static inline int tg__pad2d_check(const char *op, const tg_tensor *self, tg_int_list padding,
                                  bool reflect, tg_pool2d *p)
{
    char s1[256];
    memset(p, 0, sizeof *p);
    int64_t nd = self->ndim;
    if (!reflect && padding.len != 4) return tg__fail(op, "padding size is expected to be 4");
    if (nd < 3) return tg__pool_dim_range(op, nd, nd <= 1 ? 1 : 2);
    bool valid = self->sizes[1] != 0 && self->sizes[2] != 0;
    if (!((nd == 3 && self->sizes[0] != 0 && valid) || (nd == 4 && valid && self->sizes[3] != 0))) {
        if (reflect) {
            char b[256];
            int k = 0;
            for (int64_t i = 0; i < nd && k < (int)sizeof b - 24; i++)
                k += snprintf(b + k, sizeof b - (size_t)k, i ? ",%lld" : "%lld",
                              (long long)self->sizes[i]);
            return tg__fail(
                op,
                "3D or 4D (batch mode) tensor expected for input, but got: [ torch.%sTensor{%s} ]",
                tg__dtype_torch_name(self->dtype), b);
        }
        return tg__fail(
            op,
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: %s",
            tg__shape_str(s1, sizeof s1, self->sizes, nd));
    }
    if (reflect && padding.len != 4) return tg__fail(op, "padding size is expected to be 4");
    p->ndim = nd;
    p->nbatch = nd == 4 ? self->sizes[0] : 1;
    p->c = self->sizes[nd - 3];
    p->ih = self->sizes[nd - 2];
    p->iw = self->sizes[nd - 1];
    p->pl = padding.data[0];
    p->pr = padding.data[1];
    p->pt = padding.data[2];
    p->pb = padding.data[3];
    p->oh = p->ih + p->pt + p->pb;
    p->ow = p->iw + p->pl + p->pr;
    if (reflect) {
        if (!(p->pl < p->iw && p->pr < p->iw))
            return tg__fail(
                op,
                "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (%lld, %lld) at dimension %lld of input %lld",
                (long long)p->pl, (long long)p->pr, (long long)(nd - 1), (long long)nd);
        if (!(p->pt < p->ih && p->pb < p->ih))
            return tg__fail(
                op,
                "Argument #6: Padding size should be less than the corresponding input dimension, but got: padding (%lld, %lld) at dimension %lld of input %lld",
                (long long)p->pt, (long long)p->pb, (long long)(nd - 2), (long long)nd);
        if (p->ow < 1 && p->oh < 1)
            return tg__fail(
                op, "input (H: %lld, W: %lld)is too small.  Calculated output H: %lld W: %lld",
                (long long)p->ih, (long long)p->iw, (long long)p->oh, (long long)p->ow);
    } else if (p->ow < 1 && p->oh < 1) {
        return tg__fail(op,
                        "input (H: %lld, W: %lld ) is too small. Calculated output H: %lld W: %lld",
                        (long long)p->ih, (long long)p->iw, (long long)p->oh, (long long)p->ow);
    }
    if (p->oh < 0 || p->ow < 0) {
        int64_t sizes[4];
        int64_t k = tg__pool_out_shape(p, sizes);
        return tg__fail(op, "Trying to create tensor with negative dimension %lld: %s",
                        (long long)(p->ow < 0 ? p->ow : p->oh),
                        tg__shape_str(s1, sizeof s1, sizes, k));
    }
    return 0;
}

/* The padding backward operators' grad_output: the padded shape. */
static inline int tg__pad2d_backward_check(const char *op, const tg_tensor *grad_output,
                                           const tg_pool2d *p)
{
    int64_t nd = p->ndim;
    if (grad_output->ndim != nd)
        return tg__fail(op, "Expected a tensor of dimension %lld but got %lld", (long long)nd,
                        (long long)grad_output->ndim);
    if (grad_output->sizes[nd - 1] != p->ow)
        return tg__fail(op, "gradOutput width unexpected. Expected: %lld, Got: %lld",
                        (long long)p->ow, (long long)grad_output->sizes[nd - 1]);
    if (grad_output->sizes[nd - 2] != p->oh)
        return tg__fail(op, "gradOutput height unexpected. Expected: %lld, Got: %lld",
                        (long long)p->oh, (long long)grad_output->sizes[nd - 2]);
    if (grad_output->sizes[nd - 3] != p->c || (nd == 4 && grad_output->sizes[0] != p->nbatch))
        return tg__fail(op, "gradOutput planes unexpected. Expected: %lld, Got: %lld",
                        (long long)p->c, (long long)grad_output->sizes[nd - 3]);
    return 0;
}

/* The source index along one dim of output position j for reflection / replication padding
 * with `before` padding and n input elements (PyTorch's arithmetic, negative pads crop). */
static inline TG_HD int64_t tg__pad_src(int64_t j, int64_t before, int64_t n, bool reflect)
{
    int64_t i_start = before < 0 ? -before : 0, o_start = before > 0 ? before : 0, ip;
    if (j < before) ip = reflect ? before * 2 - j : before;
    else if (j < n + before) ip = j;
    else ip = reflect ? (n + before - 1) * 2 - j : n + before - 1;
    return ip - o_start + i_start;
}

/* _adaptive_avg_pool2d_backward: grad_output (.., OH, OW) with self's leading dims. */
static inline int tg__adaptive_backward_shape(const char *op, const tg_tensor *grad_output,
                                              const tg_tensor *self, tg_pool2d *p)
{
    char s1[256], s2[256];
    int64_t nd = self->ndim;
    bool ok = (nd == 3 || nd == 4) && grad_output->ndim == nd;
    for (int64_t i = 0; ok && i < nd - 2; i++) ok = grad_output->sizes[i] == self->sizes[i];
    if (!ok)
        return tg__fail(op, "grad_output of shape %s does not match self of shape %s",
                        tg__shape_str(s1, sizeof s1, grad_output->sizes, grad_output->ndim),
                        tg__shape_str(s2, sizeof s2, self->sizes, nd));
    memset(p, 0, sizeof *p);
    p->ndim = nd;
    p->nbatch = nd == 4 ? self->sizes[0] : 1;
    p->c = self->sizes[nd - 3];
    p->ih = self->sizes[nd - 2];
    p->iw = self->sizes[nd - 1];
    p->oh = grad_output->sizes[nd - 2];
    p->ow = grad_output->sizes[nd - 1];
    return 0;
}

static inline int tg__adaptive_avg_backward_check(const char *op, const tg_tensor *grad_output,
                                                  const tg_tensor *self, tg_pool2d *p)
{
    char s1[256];
    int64_t nd = grad_output->ndim;
    for (int64_t i = 1; i < nd; i++)
        if (grad_output->sizes[i] <= 0)
            return tg__fail(
                op,
                "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size for non-batch dimensions, but grad_output has sizes %s with dimension %lld being empty",
                tg__shape_str(s1, sizeof s1, grad_output->sizes, nd), (long long)i);
    if (nd != 3 && nd != 4)
        return tg__fail(op, "adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got %s",
                        tg__shape_str(s1, sizeof s1, self->sizes, self->ndim));
    if (self->dtype != grad_output->dtype)
        return tg__fail(op, "expected dtype %s for `grad_output` but got dtype %s",
                        tg__k_meta_name(self->dtype), tg__k_meta_name(grad_output->dtype));
    return tg__adaptive_backward_shape(op, grad_output, self, p);
}

static inline int tg__adaptive_max_backward_check(const char *op, const tg_tensor *grad_output,
                                                  const tg_tensor *self, const tg_tensor *indices,
                                                  tg_pool2d *p)
{
    char s1[256], s2[256];
    int64_t nd = grad_output->ndim;
    if (nd != 3 && nd != 4)
        return tg__fail(
            op, "adaptive_max_pooling2d_backward(): Expected 3D or 4D grad_output, but got: %s",
            tg__shape_str(s1, sizeof s1, grad_output->sizes, nd));
    for (int64_t i = 1; i < nd; i++)
        if (grad_output->sizes[i] <= 0)
            return tg__fail(
                op,
                "adaptive_max_pool2d_backward(): Expected grad_output to have non-zero size for non-batch dimensions, but grad_output has sizes %s with dimension %lld being empty",
                tg__shape_str(s1, sizeof s1, grad_output->sizes, nd), (long long)i);
    if (self->dtype != grad_output->dtype)
        return tg__fail(op, "expected dtype %s for `grad_output` but got dtype %s",
                        tg__k_meta_name(self->dtype), tg__k_meta_name(grad_output->dtype));
    if (indices->dtype != TG_INT64)
        return tg__fail(op, "expected scalar type Long but found %s",
                        tg__dtype_torch_name(indices->dtype));
    if (indices->ndim != nd)
        return tg__fail(op, "indices of shape %s do not match grad_output of shape %s",
                        tg__shape_str(s1, sizeof s1, indices->sizes, indices->ndim),
                        tg__shape_str(s2, sizeof s2, grad_output->sizes, nd));
    for (int64_t i = 0; i < nd; i++)
        if (indices->sizes[i] != grad_output->sizes[i])
            return tg__fail(op, "indices of shape %s do not match grad_output of shape %s",
                            tg__shape_str(s1, sizeof s1, indices->sizes, indices->ndim),
                            tg__shape_str(s2, sizeof s2, grad_output->sizes, nd));
    return tg__adaptive_backward_shape(op, grad_output, self, p);
}

/* max_pool_double_backward: self (.., H, W) and int64 indices (.., OH, OW) with the same
 * leading dims, dim == 2; the planes are the leading dims flattened. */
static inline int tg__max_pool_double_backward_check(const char *op, const tg_tensor *self,
                                                     const tg_tensor *indices, int64_t dim,
                                                     tg_pool2d *p)
{
    char s1[256], s2[256];
    if (dim != 2) return tg__fail(op, "dim must be 2, but got %lld", (long long)dim);
    if (indices->dtype != TG_INT64) return tg__fail(op, "gather(): Expected dtype int64 for index");
    int64_t nd = self->ndim;
    bool ok = nd >= 2 && indices->ndim == nd;
    for (int64_t i = 0; ok && i < nd - 2; i++) ok = indices->sizes[i] == self->sizes[i];
    if (!ok)
        return tg__fail(op, "indices of shape %s do not match self of shape %s",
                        tg__shape_str(s1, sizeof s1, indices->sizes, indices->ndim),
                        tg__shape_str(s2, sizeof s2, self->sizes, nd));
    memset(p, 0, sizeof *p);
    p->ndim = nd;
    p->nbatch = 1;
    for (int64_t i = 0; i < nd - 2; i++) p->nbatch *= self->sizes[i];
    p->c = 1;
    p->ih = self->sizes[nd - 2];
    p->iw = self->sizes[nd - 1];
    p->oh = indices->sizes[nd - 2];
    p->ow = indices->sizes[nd - 1];
    return 0;
}

/* A padding backward's checks on every backend, in PyTorch's order: the forward's
 * (tg__pad2d_check, into *p), grad_output's shape, self's dtype (`dtype_check`, the backend's,
 * with PyTorch's kernel `name`), grad_output's dtype. 0, or -1 with the error recorded. */
static inline int tg__pad2d_backward_checks(const char *op, const char *name,
                                            const tg_tensor *grad_output, const tg_tensor *self,
                                            tg_int_list padding, bool reflect,
                                            tg_pool_dtype_check_fn dtype_check, tg_pool2d *p)
{
    if (tg__pad2d_check(op, self, padding, reflect, p) ||
        tg__pad2d_backward_check(op, grad_output, p) || dtype_check(op, name, self))
        return -1;
    if (grad_output->dtype != self->dtype)
        return tg__fail(op, "expected scalar type %s but found %s",
                        tg__dtype_torch_name(self->dtype),
                        tg__dtype_torch_name(grad_output->dtype));
    return 0;
}

#endif
