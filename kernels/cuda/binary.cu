/* CUDA binary pointwise kernels: add, sub (with alpha), mul, div (true, trunc, floor), pow,
 * maximum, minimum. The same operators as kernels/cpu/binary.c, with its checks
 * (pointwise_checks.h) and its scalar functions (pointwise_scalar.h):
 *
 *   self (any shape), other (broadcastable) -> out (broadcast shape, promoted dtype)
 *   out == NULL: allocated; out == self: in place (out may not grow); else the user's out=.
 *
 * Each functor below holds one operator's scalar function per compute type; the launcher
 * (pointwise.cuh) applies it over the iteration. Integer division by zero is PyTorch's CPU
 * "ZeroDivisionError" here too: the functor raises a device flag that is read after the
 * kernel (which synchronises the stream, only for integer trunc/floor division). */
#include "pointwise.cuh"
#include "pointwise_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/add.h"
#include "kernels/div.h"
#include "kernels/maximum.h"
#include "kernels/minimum.h"
#include "kernels/mul.h"
#include "kernels/pow.h"
#include "kernels/sub.h"

/* ------------------------------------------------------------------ functors */

/* An operator's scalar functions (pointwise_scalar.h), one per compute type, as a functor.
 * alpha is add's and sub's (the other functions ignore it). */
template <float (*F32)(float, float, float), double (*F64)(double, double, double),
          int64_t (*I64)(int64_t, int64_t, int64_t)>
struct tg_cuda_binary_fn {
    float af;
    double ad;
    int64_t ai;
    __device__ float operator()(float a, float b) const { return F32(a, b, af); }
    __device__ double operator()(double a, double b) const { return F64(a, b, ad); }
    __device__ int64_t operator()(int64_t a, int64_t b) const { return I64(a, b, ai); }
};

/* True division: integers are promoted to float by the iterator (floating kinds only). */
struct tg_cuda_div_fn {
    __device__ float operator()(float a, float b) const { return tg__pw_div_f32(a, b, 0); }
    __device__ double operator()(double a, double b) const { return tg__pw_div_f64(a, b, 0); }
};

/* trunc/floor division: an integer b == 0 sets *zero_div and writes 0 (the result is
 * discarded with the error). */
template <float (*F32)(float, float, float), double (*F64)(double, double, double),
          int64_t (*I64)(int64_t, int64_t, int64_t)>
struct tg_cuda_int_div_fn {
    int *zero_div;
    __device__ float operator()(float a, float b) const { return F32(a, b, 0); }
    __device__ double operator()(double a, double b) const { return F64(a, b, 0); }
    __device__ int64_t operator()(int64_t a, int64_t b) const
    {
        if (b == 0) {
            *zero_div = 1;
            return 0;
        }
        return I64(a, b, 0);
    }
};

typedef tg_cuda_binary_fn<tg__pw_add_f32, tg__pw_add_f64, tg__pw_add_i64> tg_cuda_add_fn;
typedef tg_cuda_binary_fn<tg__pw_sub_f32, tg__pw_sub_f64, tg__pw_sub_i64> tg_cuda_sub_fn;
typedef tg_cuda_binary_fn<tg__pw_mul_f32, tg__pw_mul_f64, tg__pw_mul_i64> tg_cuda_mul_fn;
typedef tg_cuda_int_div_fn<tg__pw_div_trunc_f32, tg__pw_div_trunc_f64, tg__pw_div_trunc_i64>
    tg_cuda_div_trunc_fn;
typedef tg_cuda_int_div_fn<tg__pw_div_floor_f32, tg__pw_div_floor_f64, tg__pw_div_floor_i64>
    tg_cuda_div_floor_fn;
typedef tg_cuda_binary_fn<tg__pw_pow_f32, tg__pw_pow_f64, tg__pw_pow_i64> tg_cuda_pow_fn;
typedef tg_cuda_binary_fn<tg__pw_maximum_f32, tg__pw_maximum_f64, tg__pw_maximum_i64>
    tg_cuda_maximum_fn;
typedef tg_cuda_binary_fn<tg__pw_minimum_f32, tg__pw_minimum_f64, tg__pw_minimum_i64>
    tg_cuda_minimum_fn;

/* ------------------------------------------------------------------ running one operator */

/* A check that needs the computation dtype (after the iterator chose it). */
typedef int (*binary_dtype_check)(const char *op, tg_dtype t, double alpha);

static int check_alpha(const char *op, tg_dtype t, double alpha)
{
    return tg__pw_check_alpha(op, t, alpha);
}
static int check_div_trunc(const char *op, tg_dtype t, double)
{
    return tg__pw_check_not_bool(op, t, "div_trunc", "cuda");
}
static int check_div_floor(const char *op, tg_dtype t, double)
{
    return tg__pw_check_not_bool(op, t, "div_floor", "cuda");
}
static int check_pow(const char *op, tg_dtype t, double)
{
    return tg__pw_check_not_bool(op, t, "pow", NULL);
}

/* Builds the iteration (broadcast, promotion, out= checks; flags beyond PROMOTE_INPUTS as
 * given), checks the dtype, runs f and returns out as a new reference. */
template <unsigned KINDS, class F>
static tg_tensor *binary_run(const char *name, int flags, binary_dtype_check check, const F &f,
                             tg_tensor *self, tg_tensor *other, double alpha, tg_tensor *out)
{
    tg_iter it;
    tg_tensor *ins[2] = { self, other };
    if (tg__pw_iter_build(&it, name, flags | TG_CUDA_ITER_FLAGS, out, self, ins, 2) != 0)
        return NULL;
    if ((check && check(name, it.dtype, alpha) != 0) || tg__cuda_pw_run<KINDS, 2>(&it, f) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

/* Integer trunc/floor division: the same, with the zero-divisor flag read back. */
template <class F>
static tg_tensor *binary_run_int_div(const char *name, binary_dtype_check check, F f,
                                     tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    tg_iter it;
    tg_tensor *ins[2] = { self, other };
    if (tg__pw_iter_build(&it, name, TG_CUDA_ITER_FLAGS, out, self, ins, 2) != 0) return NULL;
    if (check(name, it.dtype, 1) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    bool integral = tg__pw_kind(it.dtype) == TG_PW_I64 && it.numel > 0;
    tg_cuda_flag zero_div;
    int dev = tg__cuda_iter_device(&it);
    if (integral && zero_div.init(name, dev < 0 ? 0 : dev) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    f.zero_div = zero_div.dev;
    int hit = 0;
    if (tg__cuda_pw_run<TG_CUDA_ALL_KINDS, 2>(&it, f) != 0 ||
        (integral && (hit = zero_div.read()) < 0)) {
        tg__iter_abort(&it);
        return NULL;
    }
    if (hit) {
        tg__iter_abort(&it);
        tg__error(name, "ZeroDivisionError");
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

/* ------------------------------------------------------------------ kernels */

/* add.out: out = self + alpha * other. */
extern "C" tg_tensor *tg__cuda_add_out(tg_tensor *self, tg_tensor *other, double alpha,
                                       tg_tensor *out)
{
    tg_cuda_add_fn f = { (float)alpha, alpha,
                         tg__pw_is_integral_scalar(alpha) ? (int64_t)alpha : 0 };
    return binary_run<TG_CUDA_ALL_KINDS>("add", 0, check_alpha, f, self, other, alpha, out);
}

/* sub.out: out = self - alpha * other; PyTorch refuses bool operands. */
extern "C" tg_tensor *tg__cuda_sub_out(tg_tensor *self, tg_tensor *other, double alpha,
                                       tg_tensor *out)
{
    if (tg__pw_check_sub_operands(self->dtype, other->dtype) != 0) return NULL;
    tg_cuda_sub_fn f = { (float)alpha, alpha,
                         tg__pw_is_integral_scalar(alpha) ? (int64_t)alpha : 0 };
    return binary_run<TG_CUDA_ALL_KINDS>("sub", 0, check_alpha, f, self, other, alpha, out);
}

/* mul.out: out = self * other (bool: logical and). */
extern "C" tg_tensor *tg__cuda_mul_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return binary_run<TG_CUDA_ALL_KINDS>("mul", 0, NULL, tg_cuda_mul_fn{}, self, other, 1, out);
}

/* div.out: true division; integer and bool operands compute in the default float dtype. */
extern "C" tg_tensor *tg__cuda_div_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return binary_run<TG_CUDA_FLOATING>("div", TG_ITER_INT_TO_FLOAT, NULL, tg_cuda_div_fn{}, self,
                                        other, 1, out);
}

/* div.out_mode: rounding_mode NULL, "trunc" or "floor" (see the CPU kernel). */
extern "C" tg_tensor *tg__cuda_div_mode_out(tg_tensor *self, tg_tensor *other,
                                            const char *rounding_mode, tg_tensor *out)
{
    tg_pw_div_mode mode;
    if (tg__pw_parse_div_mode(rounding_mode, &mode) != 0) return NULL;
    switch (mode) {
    case TG_PW_DIV_TRUNC:
        return binary_run_int_div("div", check_div_trunc, tg_cuda_div_trunc_fn{ NULL }, self, other,
                                  out);
    case TG_PW_DIV_FLOOR:
        return binary_run_int_div("div", check_div_floor, tg_cuda_div_floor_fn{ NULL }, self, other,
                                  out);
    default: return tg__cuda_div_out(self, other, out);
    }
}

/* pow.Tensor_Tensor_out: out = self ** exponent. */
extern "C" tg_tensor *tg__cuda_pow_out(tg_tensor *self, tg_tensor *exponent, tg_tensor *out)
{
    return binary_run<TG_CUDA_ALL_KINDS>("pow", 0, check_pow, tg_cuda_pow_fn{}, self, exponent, 1,
                                         out);
}

/* maximum.out / minimum.out: elementwise max/min, NaN if either side is NaN. */
extern "C" tg_tensor *tg__cuda_maximum_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return binary_run<TG_CUDA_ALL_KINDS>("maximum", 0, NULL, tg_cuda_maximum_fn{}, self, other, 1,
                                         out);
}

extern "C" tg_tensor *tg__cuda_minimum_out(tg_tensor *self, tg_tensor *other, tg_tensor *out)
{
    return binary_run<TG_CUDA_ALL_KINDS>("minimum", 0, NULL, tg_cuda_minimum_fn{}, self, other, 1,
                                         out);
}
