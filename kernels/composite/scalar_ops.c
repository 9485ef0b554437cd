/* The Scalar overloads of pointwise operators that do more than wrap their Scalar: pow with a
 * Scalar exponent (+ in place, out=), which checks the exponent first, and where with a Scalar
 * branch, which converts it to the result dtype. The plain ones (add/sub/mul/div.Scalar,
 * eq/ne/lt/le/gt/ge.Scalar, pow.Scalar, ...) are generated from `scalar_overload_of:` in the
 * spec (generated/tg_structured.c, docs/spec.md).
 *
 * A Scalar is wrapped as a zero-dim "wrapped number" tensor (tg_wrap_scalar: int64 when
 * integral, else float64) that takes part in type promotion weakly, exactly as PyTorch's
 * Python scalars do: int_tensor ** 2 stays integral, ** 2.5 is the default float. Then the
 * Tensor overload is called through the public API, so dispatch and autograd flow through it.
 * Every function returns a new reference or NULL. */
#include "core/core.h"
#include "pointwise_convert.h"
/* The public functions of the operators called here. */
#include "ops/pow.h"
#include "ops/where.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/pow.h"
#include "kernels/where.h"
#include "composite_util.h"

/* tg__then(w, op(..., w)) releases the wrapper w and passes the result through. The public
 * functions return NULL (keeping the first error) when given a NULL tensor, so a failed wrap
 * needs no separate path. */

/* ------------------------------------------------------------------ pow */

/* pow.Tensor_Scalar refuses an integral tensor to a negative integral power (the Tensor_Tensor
 * overload instead gives 0, 1 or -1 for such elements), and converts the exponent to the
 * result dtype with PyTorch's overflow check (uint8 ** 300 is an error). */
static int check_pow_exponent(const tg_tensor *self, double exponent)
{
    if (tg_dtype_is_integral(self->dtype, true) && tg__pw_is_integral_scalar(exponent) &&
        exponent < 0)
        return tg__fail("pow", "Integers to negative integer powers are not allowed.");
    tg_result_type_state st = TG_RESULT_TYPE_INIT;
    tg__result_type_update(&st, self);
    tg__result_type_update_scalar(&st, exponent, tg__pw_is_integral_scalar(exponent));
    return tg__pw_check_scalar("pow", exponent, tg__result_type_finish(&st));
}

tg_tensor *tg__composite_pow_scalar(tg_tensor *self, double exponent)
{
    if (check_pow_exponent(self, exponent) != 0) return NULL;
    tg_tensor *w = tg_wrap_scalar(exponent);
    return tg__then(w, tg_pow(self, w));
}

tg_tensor *tg__composite_pow_scalar_(tg_tensor *self, double exponent)
{
    if (check_pow_exponent(self, exponent) != 0) return NULL;
    tg_tensor *w = tg_wrap_scalar(exponent);
    return tg__then(w, tg_pow_(self, w));
}

tg_tensor *tg__composite_pow_scalar_out(tg_tensor *self, double exponent, tg_tensor *out)
{
    if (check_pow_exponent(self, exponent) != 0) return NULL;
    tg_tensor *w = tg_wrap_scalar(exponent);
    return tg__then(w, tg_pow_out(self, w, out));
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
