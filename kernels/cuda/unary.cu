/* CUDA unary pointwise kernels: neg, abs, relu (keep the dtype) and exp, log, sqrt, rsqrt,
 * sin, cos, tanh, sigmoid (integer and bool inputs compute in the default float dtype). The
 * same operators, checks and scalar functions as kernels/cpu/unary.c:
 *
 *   self (any shape) -> out (same shape)
 *   out == NULL: allocated; out == self: in place; else the user's out= (dtype checked by the
 *   iterator: "result type Float can't be cast to the desired output type Long").
 *
 * float32 exp and sigmoid use tg__pw_exp_f32 (the CPU's own exp, so both backends agree to
 * the bit on it); the other transcendental functions are CUDA's libm (sinf, logf, ...), within
 * a few ulp of glibc's. */
#include "pointwise.cuh"
#include "pointwise_checks.h"
#include "activation_lm_scalar.h" /* erf, log1p, expm1 */
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/abs.h"
#include "kernels/cos.h"
#include "kernels/erf.h"
#include "kernels/exp.h"
#include "kernels/expm1.h"
#include "kernels/log.h"
#include "kernels/log1p.h"
#include "kernels/neg.h"
#include "kernels/relu.h"
#include "kernels/rsqrt.h"
#include "kernels/sigmoid.h"
#include "kernels/sin.h"
#include "kernels/sqrt.h"
#include "kernels/tanh.h"

/* An operator's scalar functions (pointwise_scalar.h), one per compute type, as a functor:
 * floating kinds only, or (tg_cuda_unary_fn) integers too. */
template <float (*F32)(float), double (*F64)(double)> struct tg_cuda_floating_fn {
    __device__ float operator()(float x) const { return F32(x); }
    __device__ double operator()(double x) const { return F64(x); }
};

template <float (*F32)(float), double (*F64)(double), int64_t (*I64)(int64_t)>
struct tg_cuda_unary_fn : tg_cuda_floating_fn<F32, F64> {
    using tg_cuda_floating_fn<F32, F64>::operator();
    __device__ int64_t operator()(int64_t x) const { return I64(x); }
};

typedef tg_cuda_unary_fn<tg__pw_neg_f32, tg__pw_neg_f64, tg__pw_neg_i64> tg_cuda_neg_fn;
typedef tg_cuda_unary_fn<tg__pw_abs_f32, tg__pw_abs_f64, tg__pw_abs_i64> tg_cuda_abs_fn;
typedef tg_cuda_unary_fn<tg__pw_relu_f32, tg__pw_relu_f64, tg__pw_relu_i64> tg_cuda_relu_fn;
typedef tg_cuda_floating_fn<tg__pw_exp_f32, tg__pw_exp_f64> tg_cuda_exp_fn;
typedef tg_cuda_floating_fn<tg__pw_log_f32, tg__pw_log_f64> tg_cuda_log_fn;
typedef tg_cuda_floating_fn<tg__pw_sqrt_f32, tg__pw_sqrt_f64> tg_cuda_sqrt_fn;
typedef tg_cuda_floating_fn<tg__pw_rsqrt_f32, tg__pw_rsqrt_f64> tg_cuda_rsqrt_fn;
typedef tg_cuda_floating_fn<tg__pw_sin_f32, tg__pw_sin_f64> tg_cuda_sin_fn;
typedef tg_cuda_floating_fn<tg__pw_cos_f32, tg__pw_cos_f64> tg_cuda_cos_fn;
typedef tg_cuda_floating_fn<tg__pw_tanh_f32, tg__pw_tanh_f64> tg_cuda_tanh_fn;
typedef tg_cuda_floating_fn<tg__pw_sigmoid_f32, tg__pw_sigmoid_f64> tg_cuda_sigmoid_fn;
typedef tg_cuda_floating_fn<tg__pw_erf_f32, tg__pw_erf_f64> tg_cuda_erf_fn;
typedef tg_cuda_floating_fn<tg__pw_log1p_f32, tg__pw_log1p_f64> tg_cuda_log1p_fn;
typedef tg_cuda_floating_fn<tg__pw_expm1_f32, tg__pw_expm1_f64> tg_cuda_expm1_fn;

/* Runs one unary operator. KINDS == TG_CUDA_FLOATING: integer inputs are promoted to the
 * default float dtype (TG_ITER_INT_TO_FLOAT). */
template <unsigned KINDS, class F>
static tg_tensor *unary_run(const char *name, const F &f, tg_tensor *self, tg_tensor *out)
{
    if (tg__pw_check_unary_bool(name, self->dtype, "cuda") != 0) return NULL;
    int flags = TG_CUDA_ITER_FLAGS;
    if (!(KINDS & TG_CUDA_KIND_I64)) flags |= TG_ITER_INT_TO_FLOAT;
    tg_iter it;
    tg_tensor *ins[1] = { self };
    if (tg__pw_iter_build(&it, name, flags, out, self, ins, 1) != 0) return NULL;
    if (tg__cuda_pw_run<KINDS, 1>(&it, f) != 0) {
        tg__iter_abort(&it);
        return NULL;
    }
    return tg__iter_finish(&it, 0);
}

/* neg.out ... sigmoid.out: out = f(self). */
extern "C" tg_tensor *tg__cuda_neg_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_ALL_KINDS>("neg", tg_cuda_neg_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_abs_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_ALL_KINDS>("abs", tg_cuda_abs_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_relu_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_ALL_KINDS>("relu", tg_cuda_relu_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_exp_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("exp", tg_cuda_exp_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_log_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("log", tg_cuda_log_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_sqrt_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("sqrt", tg_cuda_sqrt_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_rsqrt_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("rsqrt", tg_cuda_rsqrt_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_sin_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("sin", tg_cuda_sin_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_cos_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("cos", tg_cuda_cos_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_tanh_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("tanh", tg_cuda_tanh_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_sigmoid_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("sigmoid", tg_cuda_sigmoid_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_erf_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("erf", tg_cuda_erf_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_log1p_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("log1p", tg_cuda_log1p_fn{}, self, out);
}
extern "C" tg_tensor *tg__cuda_expm1_out(tg_tensor *self, tg_tensor *out)
{
    return unary_run<TG_CUDA_FLOATING>("expm1", tg_cuda_expm1_fn{}, self, out);
}
