/* Composite activation kernels: hardtanh (clamp, as PyTorch's hardtanh_out), relu6 (PyTorch's
 * composite on hardtanh), feature_dropout (dropout2d) and elu_double_backward, the autograd
 * helper of elu_backward's derivative (FunctionsManual's). The pointwise activations with
 * kernels of their own are generated from kernels/common/ufunc/activation.h.
 *
 * Every function returns a new reference, or NULL with an error recorded; intermediates are
 * released on every path. */
#include "tg_kutil.h"
/* The public functions of the operators called here. */
#include "ops/clamp.h"
#include "ops/div.h"
#include "ops/elu_backward.h"
#include "ops/hardtanh.h"
#include "ops/lt.h"
#include "ops/mul.h"
#include "ops/rand.h"
#include "ops/to.h"
#include "ops/zeros.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/elu_double_backward.h"
#include "kernels/feature_dropout.h"
#include "kernels/hardtanh.h"
#include "kernels/relu6.h"
#include "composite_util.h"

#include <math.h>

/* ------------------------------------------------------------------ hardtanh */

/* PyTorch's hardtanh_out before its clamp: bool is refused; for an integral self the bounds
 * are truncated to integers (Scalar::toLong), so that they never promote, and uint8 refuses
 * negative ones. *lo and *hi become the bounds clamp gets. */
static int hardtanh_bounds(const tg_tensor *self, double min_val, double max_val, double *lo,
                           double *hi)
{
    tg_dtype t = self->dtype;
    if (t == TG_BOOL) return tg__fail("hardtanh", "Bool inputs not supported for hardtanh");
    *lo = min_val;
    *hi = max_val;
    if (tg_dtype_is_floating(t)) return 0;
    const double *v[2] = { lo, hi };
    for (int k = 0; k < 2; k++) /* the range of int64_t, as c10's checked_convert */
        if (!(*v[k] >= -9223372036854775808.0 && *v[k] < 9223372036854775808.0))
            return tg__fail("hardtanh",
                            "value cannot be converted to type int64_t without overflow");
    *lo = (double)(int64_t)*lo;
    *hi = (double)(int64_t)*hi;
    if (t == TG_UINT8 && (*lo < 0 || *hi < 0))
        return tg__fail("hardtanh", "cannot do hardtanh on an unsigned type with negative limits");
    return 0;
}

/* The out= tensor must have self's dtype (clamp's structured kernel requires it in PyTorch). */
tg_tensor *tg__composite_hardtanh_out(tg_tensor *self, double min_val, double max_val,
                                      tg_tensor *out)
{
    double lo, hi;
    if (hardtanh_bounds(self, min_val, max_val, &lo, &hi) != 0) return NULL;
    if (out->dtype != self->dtype)
        return tg__error("hardtanh", "Found dtype %s but expected %s",
                         tg__dtype_torch_name(out->dtype), tg__dtype_torch_name(self->dtype));
    return tg_clamp_out(self, out, .min = lo, .max = hi);
}

tg_tensor *tg__composite_hardtanh(tg_tensor *self, double min_val, double max_val)
{
    double lo, hi;
    if (hardtanh_bounds(self, min_val, max_val, &lo, &hi) != 0) return NULL;
    return tg_clamp(self, .min = lo, .max = hi);
}

tg_tensor *tg__composite_hardtanh_(tg_tensor *self, double min_val, double max_val)
{
    double lo, hi;
    if (hardtanh_bounds(self, min_val, max_val, &lo, &hi) != 0) return NULL;
    return tg_clamp_(self, .min = lo, .max = hi);
}

/* ------------------------------------------------------------------ relu6 */

tg_tensor *tg__composite_relu6(tg_tensor *self)
{
    return tg_hardtanh(self, .min_val = 0, .max_val = 6);
}

tg_tensor *tg__composite_relu6_(tg_tensor *self)
{
    return tg_hardtanh_(self, .min_val = 0, .max_val = 6);
}

/* ------------------------------------------------------------------ feature_dropout */

/* PyTorch's _dropout_impl<feature_dropout=true>: the checks and early returns, then the noise
 * of shape (N, C, 1, ...) in input's dtype and device, 1 with probability 1 - p (a float64
 * uniform draw from the default generator below 1 - p) else 0, divided by 1 - p in that dtype
 * (noise.bernoulli_(1 - p).div_(1 - p)). NULL noise with *done set: the result is decided
 * (*done holds it, or NULL after an error). */
static tg_tensor *feature_noise(tg_tensor *input, double p, bool train, bool in_place,
                                tg_tensor **done)
{
    *done = NULL;
    const char *op = in_place ? "feature_dropout_" : "feature_dropout";
    if (!(p >= 0 && p <= 1)) {
        tg__error(op, "dropout probability has to be between 0 and 1, but got %g", p);
        return NULL;
    }
    if (p == 0 || !train || tg__numel(input) == 0) {
        *done = tg_retain(input);
        return NULL;
    }
    tg_device dev = tg_tensor_device(input);
    if (p == 1) { /* input * zeros({}) */
        tg_tensor *z = tg_zeros(TG_INTS_EMPTY, .dtype = input->dtype, .device = dev);
        if (z) *done = tg__then(z, in_place ? tg_mul_(input, z) : tg_mul(input, z));
        return NULL;
    }
    if (input->ndim < 2) {
        tg__error(op, "Feature dropout requires at least 2 dimensions in the input");
        return NULL;
    }
    int64_t sizes[TG_MAX_DIMS];
    for (int64_t d = 0; d < input->ndim; d++) sizes[d] = d < 2 ? input->sizes[d] : 1;
    tg_int_list size = { .len = input->ndim, .data = sizes };
    tg_tensor *u = tg_rand(size, .dtype = TG_FLOAT64, .device = dev);
    if (!u) return NULL;
    tg_tensor *keep = tg__then(u, tg_lt_scalar(u, 1 - p));
    if (!keep) return NULL;
    tg_tensor *noise = tg__then(keep, tg_to(keep, input->dtype));
    if (!noise) return NULL;
    return tg__then(noise, tg_div_scalar_(noise, 1 - p));
}

tg_tensor *tg__composite_feature_dropout(tg_tensor *input, double p, bool train)
{
    tg_tensor *done, *noise = feature_noise(input, p, train, false, &done);
    if (!noise) return done;
    return tg__then(noise, tg_mul(input, noise));
}

tg_tensor *tg__composite_feature_dropout_(tg_tensor *self, double p, bool train)
{
    tg_tensor *done, *noise = feature_noise(self, p, train, true, &done);
    if (!noise) return done;
    return tg__then(noise, tg_mul_(self, noise));
}

/* ------------------------------------------------------------------ elu_double_backward */

/* FunctionsManual's elu_double_backward: the derivative of elu_backward(grad_output, ...,
 * self_or_result) for self_or_result, applied to grad:
 *   is_result: grad * grad_output * input_scale * (self_or_result < 0)
 *   else:      elu_backward(grad * grad_output * input_scale, ..., self_or_result)
 *              * (self_or_result < 0)
 * (the mask cast to grad's dtype, as type_as(grad)). */
tg_tensor *tg__composite_elu_double_backward(tg_tensor *grad, tg_tensor *grad_output, double alpha,
                                             double scale, double input_scale, bool is_result,
                                             tg_tensor *self_or_result)
{
    tg_tensor *lt = tg_lt_scalar(self_or_result, 0);
    if (!lt) return NULL;
    tg_tensor *mask = tg__then(lt, tg_to(lt, grad->dtype));
    if (!mask) return NULL;
    tg_tensor *gg = tg_mul(grad, grad_output);
    if (gg) gg = tg__then(gg, tg_mul_scalar(gg, input_scale));
    if (gg && !is_result)
        gg = tg__then(gg, tg_elu_backward(gg, alpha, scale, input_scale, false, self_or_result));
    if (!gg) {
        tg_release(mask);
        return NULL;
    }
    return tg__then2(gg, mask, tg_mul(gg, mask));
}
