/* Composite kernels of the language-model activations: gelu_double_backward, the autograd
 * helper of gelu_backward's derivative (FunctionsManual's), written with differentiable
 * operators so that it is differentiable again; log_sigmoid (the output of
 * log_sigmoid_forward); glu and glu_backward (slices of self, sigmoid and products, on any
 * device). The activations with kernels of their own are in kernels/cpu/activation_lm.c and
 * kernels/cuda/activation_lm.cu.
 *
 * Returns a new reference, or NULL with an error recorded; intermediates are released on
 * every path. */
#include "tg_kutil.h"
#include <math.h>
#include <string.h>
/* The public functions of the operators called here. */
#include "ops/add.h"
#include "ops/cat.h"
#include "ops/log_sigmoid_forward.h"
#include "ops/sigmoid.h"
#include "ops/slice.h"
#include "ops/abs.h"
#include "ops/amax.h"
#include "ops/copy.h"
#include "ops/eq.h"
#include "ops/exp.h"
#include "ops/log.h"
#include "ops/sum.h"
#include "ops/sum_backward.h"
#include "ops/to.h"
#include "ops/where.h"
#include "ops/mul.h"
#include "ops/sub.h"
#include "ops/tanh.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/gelu_double_backward.h"
#include "kernels/glu.h"
#include "kernels/glu_backward.h"
#include "kernels/log_sigmoid.h"
#include "kernels/logsumexp.h"
#include "kernels/logsumexp_backward.h"
#include "composite_util.h"
#include "activation_lm_checks.h"
#include "ufunc/activation_lm.h"

/* Temporaries of one call, released together at its end: `if (!keep(x = tg_f(...), tmps,
 * &ntmps)) goto done;` records x (and fails, the error recorded, when x is NULL). */
enum { GDB_MAX_TMPS = 32 };
static bool keep(tg_tensor *t, tg_tensor **tmps, int *ntmps)
{
    if (t) tmps[(*ntmps)++] = t;
    return t != NULL;
}

/* ggI * gO * gelu''(input), where gelu' is gelu_backward's factor:
 *   'none': gelu'' = pdf(x) * (2 - x^2), pdf(x) = exp(-x^2 / 2) / sqrt(2 pi);
 *   'tanh': with u = beta * (1 + 3 kappa x^2) and t = tanh(beta * (x + kappa x^3)),
 *           gelu'' = (1 - t^2) * (u + 3 beta kappa x^2 - x * t * u^2). */
tg_tensor *tg__composite_gelu_double_backward(tg_tensor *ggI, tg_tensor *gO, tg_tensor *input,
                                              const char *approximate)
{
    const int tanh_approx = tg__pw_gelu_approximate("gelu_backward", approximate);
    if (tanh_approx < 0) return NULL;
    tg_tensor *tmps[GDB_MAX_TMPS];
    int ntmps = 0;
    tg_tensor *result = NULL, *x2, *second, *gg;
    if (!keep(x2 = tg_mul(input, input), tmps, &ntmps)) goto done;
    if (!tanh_approx) {
        tg_tensor *e, *pdf, *two_minus;
        if (!keep(e = tg_mul_scalar(x2, -0.5), tmps, &ntmps)) goto done;
        if (!keep(e = tg_exp(e), tmps, &ntmps)) goto done;
        if (!keep(pdf = tg_mul_scalar(e, TG_GELU_PDF), tmps, &ntmps)) goto done;
        if (!keep(two_minus = tg_mul_scalar(x2, -1.0), tmps, &ntmps)) goto done;
        if (!keep(two_minus = tg_add_scalar(two_minus, 2.0), tmps, &ntmps)) goto done;
        if (!keep(second = tg_mul(pdf, two_minus), tmps, &ntmps)) goto done;
    } else {
        tg_tensor *x3, *inner, *t, *t2, *one_minus_t2, *u, *u2, *xt, *xtu2, *bracket;
        if (!keep(x3 = tg_mul(x2, input), tmps, &ntmps)) goto done;
        if (!keep(inner = tg_mul_scalar(x3, TG_GELU_KAPPA), tmps, &ntmps)) goto done;
        if (!keep(inner = tg_add(inner, input), tmps, &ntmps)) goto done;
        if (!keep(inner = tg_mul_scalar(inner, TG_GELU_BETA), tmps, &ntmps)) goto done;
        if (!keep(t = tg_tanh(inner), tmps, &ntmps)) goto done;
        if (!keep(t2 = tg_mul(t, t), tmps, &ntmps)) goto done;
        if (!keep(one_minus_t2 = tg_mul_scalar(t2, -1.0), tmps, &ntmps)) goto done;
        if (!keep(one_minus_t2 = tg_add_scalar(one_minus_t2, 1.0), tmps, &ntmps)) goto done;
        if (!keep(u = tg_mul_scalar(x2, 3.0 * TG_GELU_KAPPA * TG_GELU_BETA), tmps, &ntmps))
            goto done;
        if (!keep(u = tg_add_scalar(u, TG_GELU_BETA), tmps, &ntmps)) goto done;
        if (!keep(u2 = tg_mul(u, u), tmps, &ntmps)) goto done;
        if (!keep(xt = tg_mul(input, t), tmps, &ntmps)) goto done;
        if (!keep(xtu2 = tg_mul(xt, u2), tmps, &ntmps)) goto done;
        if (!keep(bracket = tg_mul_scalar(x2, 3.0 * TG_GELU_BETA * TG_GELU_KAPPA), tmps, &ntmps))
            goto done;
        if (!keep(bracket = tg_add(bracket, u), tmps, &ntmps)) goto done;
        if (!keep(bracket = tg_sub(bracket, xtu2), tmps, &ntmps)) goto done;
        if (!keep(second = tg_mul(one_minus_t2, bracket), tmps, &ntmps)) goto done;
    }
    if (!keep(gg = tg_mul(ggI, gO), tmps, &ntmps)) goto done;
    result = tg_mul(gg, second);
done:
    for (int i = 0; i < ntmps; i++) tg_release(tmps[i]);
    return result;
}

/* ------------------------------------------------------------------ log_sigmoid */

tg_tensor *tg__composite_log_sigmoid(tg_tensor *self)
{
    tg_output_buffer r = tg_log_sigmoid_forward(self);
    tg_release(r.buffer);
    return r.output;
}

/* ------------------------------------------------------------------ glu */

/* The halves a = self[..., :h, ...] and b = self[..., h:, ...] along dim (views), and
 * s = sigmoid(b); 0, or -1 with the error recorded and nothing held. */
static int glu_parts(const char *op, tg_tensor *self, int64_t dim, int64_t *d, tg_tensor **a,
                     tg_tensor **s)
{
    if (tg__actlm_glu_check(op, self, dim, d) != 0) return -1;
    const int64_t h = self->sizes[*d] / 2;
    *a = tg_slice(self, .dim = *d, .start = 0, .end = h);
    tg_tensor *b = *a ? tg_slice(self, .dim = *d, .start = h, .end = 2 * h) : NULL;
    *s = b ? tg__then(b, tg_sigmoid(b)) : NULL;
    if (!*s) {
        tg_release(*a);
        return -1;
    }
    return 0;
}

tg_tensor *tg__composite_glu(tg_tensor *self, int64_t dim)
{
    int64_t d;
    tg_tensor *a, *s;
    if (glu_parts("glu", self, dim, &d, &a, &s) != 0) return NULL;
    return tg__then2(a, s, tg_mul(a, s));
}

tg_tensor *tg__composite_glu_out(tg_tensor *self, int64_t dim, tg_tensor *out)
{
    int64_t d;
    tg_tensor *a, *s;
    if (glu_parts("glu", self, dim, &d, &a, &s) != 0) return NULL;
    if (out->dtype != self->dtype) {
        tg_release(a);
        tg_release(s);
        return tg__error("glu", "Found dtype %s but expected %s", tg__dtype_torch_name(out->dtype),
                         tg__dtype_torch_name(self->dtype));
    }
    return tg__then2(a, s, tg_mul_out(a, s, out));
}

/* d/da = grad_output * s, d/db = grad_output * a * s * (1 - s), concatenated along dim. */
tg_tensor *tg__composite_glu_backward(tg_tensor *grad_output, tg_tensor *self, int64_t dim)
{
    int64_t d;
    tg_tensor *a, *s;
    if (glu_parts("glu_backward", self, dim, &d, &a, &s) != 0) return NULL;
    tg_tensor *tmps[GDB_MAX_TMPS];
    int ntmps = 0;
    tg_tensor *result = NULL, *ga, *one_minus, *gb;
    tmps[ntmps++] = a;
    tmps[ntmps++] = s;
    if (!keep(ga = tg_mul(grad_output, s), tmps, &ntmps)) goto done;
    if (!keep(one_minus = tg_mul_scalar(s, -1.0), tmps, &ntmps)) goto done;
    if (!keep(one_minus = tg_add_scalar(one_minus, 1.0), tmps, &ntmps)) goto done;
    if (!keep(gb = tg_mul(ga, a), tmps, &ntmps)) goto done;
    if (!keep(gb = tg_mul(gb, one_minus), tmps, &ntmps)) goto done;
    result = tg_cat(TG_TENSORS(ga, gb), .dim = d);
done:
    for (int i = 0; i < ntmps; i++) tg_release(tmps[i]);
    return result;
}

/* ------------------------------------------------------------------ logsumexp */

/* m = amax(x, dim, keepdim=True) with infinite maxima replaced by 0; then
 * log(sum(exp(x - m), dim, keepdim=True)) + m, and the kept size-1 dims summed away (exact)
 * when !keepdim. Integer and bool inputs are converted to the default float dtype first. */
tg_tensor *tg__composite_logsumexp(tg_tensor *self, tg_int_list dim, bool keepdim)
{
    tg_tensor *tmps[GDB_MAX_TMPS];
    int ntmps = 0;
    tg_tensor *result = NULL, *x = self, *m, *inf, *d, *r;
    if (!tg_dtype_is_floating(self->dtype))
        if (!keep(x = tg_to(self, tg_get_default_dtype()), tmps, &ntmps)) goto done;
    if (!keep(m = tg_amax(x, .dim = dim, .keepdim = true), tmps, &ntmps)) goto done;
    if (!keep(inf = tg_abs(m), tmps, &ntmps)) goto done;
    if (!keep(inf = tg_eq_scalar(inf, INFINITY), tmps, &ntmps)) goto done;
    if (!keep(m = tg_where_scalar_self(inf, 0.0, m), tmps, &ntmps)) goto done;
    if (!keep(d = tg_sub(x, m), tmps, &ntmps)) goto done;
    if (!keep(d = tg_exp(d), tmps, &ntmps)) goto done;
    if (!keep(r = tg_sum(d, .dim = dim, .keepdim = true), tmps, &ntmps)) goto done;
    if (!keep(r = tg_log(r), tmps, &ntmps)) goto done;
    if (keepdim) {
        result = tg_add(r, m);
    } else {
        if (!keep(r = tg_add(r, m), tmps, &ntmps)) goto done;
        result = tg_sum(r, .dim = dim, .keepdim = false);
    }
done:
    for (int i = 0; i < ntmps; i++) tg_release(tmps[i]);
    return result;
}

tg_tensor *tg__composite_logsumexp_out(tg_tensor *self, tg_int_list dim, bool keepdim,
                                       tg_tensor *out)
{
    tg_tensor *r = tg__composite_logsumexp(self, dim, keepdim);
    if (!r) return NULL;
    if (out->ndim != r->ndim || memcmp(out->sizes, r->sizes, sizeof(int64_t) * (size_t)r->ndim)) {
        tg_release(r);
        return tg__error("logsumexp", "out= has the wrong shape for the result");
    }
    return tg__then(r, tg_copy_(out, r));
}

/* grad * exp(self - result), grad and result re-expanded to self's shape (sum_backward). */
tg_tensor *tg__composite_logsumexp_backward(tg_tensor *grad, tg_tensor *self, tg_tensor *result,
                                            tg_int_list dim, bool keepdim)
{
    tg_tensor *tmps[GDB_MAX_TMPS];
    int ntmps = 0;
    tg_tensor *out = NULL, *g, *r, *e;
    tg_int_list sizes = { .len = self->ndim, .data = self->sizes };
    if (!keep(g = tg_sum_backward(grad, sizes, dim, keepdim), tmps, &ntmps)) goto done;
    if (!keep(r = tg_sum_backward(result, sizes, dim, keepdim), tmps, &ntmps)) goto done;
    if (!keep(e = tg_sub(self, r), tmps, &ntmps)) goto done;
    if (!keep(e = tg_exp(e), tmps, &ntmps)) goto done;
    out = tg_mul(g, e);
done:
    for (int i = 0; i < ntmps; i++) tg_release(tmps[i]);
    return out;
}
