/* Scalar overloads of the pointwise operators: add/sub/mul/div.Scalar (+ in place), pow with
 * a Scalar exponent or base, eq/ne/lt/le/gt/ge.Scalar (+ in place, out=), where with a Scalar
 * branch.
 *
 * A Scalar is wrapped as a zero-dim "wrapped number" tensor (int64 when integral, else
 * float64) that takes part in type promotion weakly, exactly as PyTorch's Python scalars do:
 * int_tensor + 2 stays integral, int_tensor + 2.5 is the default float, uint8 + 300 stays
 * uint8 (and wraps). Then the Tensor overload is called through the public API, so dispatch
 * and autograd flow through it. Every function returns a new reference or NULL. */
#include "core/core.h"
#include "pointwise_loops.h"
#include "tensorgen.h"
#include "tg_kernels.h"
#include "composite_util.h"

static tg_tensor *wrap(double v) { return tg__wrapped_scalar(v, tg__pw_is_integral_scalar(v)); }

/* tg__then(w, op(..., w)) releases the wrapper w and passes the result through. The public
 * functions return NULL (keeping the first error) when given a NULL tensor, so a failed wrap
 * needs no separate path. */

/* ------------------------------------------------------------------ arithmetic */
tg_tensor *tg__composite_add_scalar(tg_tensor *self, double other, double alpha)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_add(self, w, .alpha = alpha));
}

tg_tensor *tg__composite_add_scalar_(tg_tensor *self, double other, double alpha)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_add_(self, w, .alpha = alpha));
}

tg_tensor *tg__composite_sub_scalar(tg_tensor *self, double other, double alpha)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_sub(self, w, .alpha = alpha));
}

tg_tensor *tg__composite_sub_scalar_(tg_tensor *self, double other, double alpha)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_sub_(self, w, .alpha = alpha));
}

tg_tensor *tg__composite_mul_scalar(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_mul(self, w));
}

tg_tensor *tg__composite_mul_scalar_(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_mul_(self, w));
}

tg_tensor *tg__composite_div_scalar(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_div(self, w));
}

tg_tensor *tg__composite_div_scalar_(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_div_(self, w));
}

/* ------------------------------------------------------------------ pow */

/* pow.Tensor_Scalar refuses an integral tensor to a negative integral power (the Tensor_Tensor
 * overload instead gives 0, 1 or -1 for such elements), and converts the exponent to the
 * result dtype with PyTorch's overflow check (uint8 ** 300 is an error). */
static int check_pow_exponent(const tg_tensor *self, double exponent)
{
    if (tg_dtype_is_integral(self->dtype, true) && tg__pw_is_integral_scalar(exponent) && exponent < 0) {
        tg__error("pow", "Integers to negative integer powers are not allowed.");
        return -1;
    }
    tg_result_type_state st = TG_RESULT_TYPE_INIT;
    tg__result_type_update(&st, self);
    tg__result_type_update_scalar(&st, exponent, tg__pw_is_integral_scalar(exponent));
    return tg__pw_check_scalar("pow", exponent, tg__result_type_finish(&st));
}

tg_tensor *tg__composite_pow_scalar(tg_tensor *self, double exponent)
{
    if (check_pow_exponent(self, exponent) != 0) return NULL;
    tg_tensor *w = wrap(exponent);
    return tg__then(w, tg_pow(self, w));
}

tg_tensor *tg__composite_pow_scalar_(tg_tensor *self, double exponent)
{
    if (check_pow_exponent(self, exponent) != 0) return NULL;
    tg_tensor *w = wrap(exponent);
    return tg__then(w, tg_pow_(self, w));
}

tg_tensor *tg__composite_pow_scalar_out(tg_tensor *self, double exponent, tg_tensor *out)
{
    if (check_pow_exponent(self, exponent) != 0) return NULL;
    tg_tensor *w = wrap(exponent);
    return tg__then(w, tg_pow_out(self, w, out));
}

/* pow.Scalar: self ** exponent with a Scalar base (2 ** int_tensor stays integral). */
tg_tensor *tg__composite_pow_scalar_self(double self, tg_tensor *exponent)
{
    tg_tensor *w = wrap(self);
    return tg__then(w, tg_pow(w, exponent));
}

/* ------------------------------------------------------------------ comparisons */
tg_tensor *tg__composite_eq_scalar(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_eq(self, w));
}

tg_tensor *tg__composite_eq_scalar_(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_eq_(self, w));
}

tg_tensor *tg__composite_eq_scalar_out(tg_tensor *self, double other, tg_tensor *out)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_eq_out(self, w, out));
}

tg_tensor *tg__composite_ne_scalar(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_ne(self, w));
}

tg_tensor *tg__composite_ne_scalar_(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_ne_(self, w));
}

tg_tensor *tg__composite_ne_scalar_out(tg_tensor *self, double other, tg_tensor *out)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_ne_out(self, w, out));
}

tg_tensor *tg__composite_lt_scalar(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_lt(self, w));
}

tg_tensor *tg__composite_lt_scalar_(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_lt_(self, w));
}

tg_tensor *tg__composite_lt_scalar_out(tg_tensor *self, double other, tg_tensor *out)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_lt_out(self, w, out));
}

tg_tensor *tg__composite_le_scalar(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_le(self, w));
}

tg_tensor *tg__composite_le_scalar_(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_le_(self, w));
}

tg_tensor *tg__composite_le_scalar_out(tg_tensor *self, double other, tg_tensor *out)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_le_out(self, w, out));
}

tg_tensor *tg__composite_gt_scalar(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_gt(self, w));
}

tg_tensor *tg__composite_gt_scalar_(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_gt_(self, w));
}

tg_tensor *tg__composite_gt_scalar_out(tg_tensor *self, double other, tg_tensor *out)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_gt_out(self, w, out));
}

tg_tensor *tg__composite_ge_scalar(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_ge(self, w));
}

tg_tensor *tg__composite_ge_scalar_(tg_tensor *self, double other)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_ge_(self, w));
}

tg_tensor *tg__composite_ge_scalar_out(tg_tensor *self, double other, tg_tensor *out)
{
    tg_tensor *w = wrap(other);
    return tg__then(w, tg_ge_out(self, w, out));
}

/* ------------------------------------------------------------------ where */

/* The Scalar branch becomes a zero-dim tensor of result_type(tensor, scalar), converted with
 * PyTorch's overflow check ("value cannot be converted to type int8_t without overflow"). */
static tg_tensor *where_scalar_tensor(double v, const tg_tensor *t)
{
    tg_result_type_state st = TG_RESULT_TYPE_INIT;
    tg__result_type_update(&st, t);
    tg__result_type_update_scalar(&st, v, tg__pw_is_integral_scalar(v));
    tg_dtype dtype = tg__result_type_finish(&st);
    if (tg__pw_check_scalar("where", v, dtype) != 0) return NULL;
    return tg__scalar_tensor(v, dtype, t->device.type == TG_CUDA ? TG_DEVICE_CPU : t->device);
}

/* where.ScalarSelf: condition ? self : other. */
tg_tensor *tg__composite_where_scalar_self(tg_tensor *condition, double self, tg_tensor *other)
{
    tg_tensor *s = where_scalar_tensor(self, other);
    if (!s) return NULL;
    tg_tensor *r = tg_where(condition, s, other);
    tg_release(s);
    return r;
}

/* where.ScalarOther: condition ? self : other. */
tg_tensor *tg__composite_where_scalar_other(tg_tensor *condition, tg_tensor *self, double other)
{
    tg_tensor *o = where_scalar_tensor(other, self);
    if (!o) return NULL;
    tg_tensor *r = tg_where(condition, self, o);
    tg_release(o);
    return r;
}
