/* What the generated kernels of the pointwise operators (`ufunc_inner_loop:` in the spec,
 * docs/adding-an-operator.md) share between the CPU and CUDA: the description of one call
 * (tg_ufunc_call), its parameters in each compute type, and the meta functions that build a
 * call's iteration and check its arguments, so that both backends refuse the same inputs in
 * PyTorch's words (PyTorch's TORCH_META_FUNC). An operator names its meta function in the
 * spec (`ufunc_meta: comparison` calls tg__ufunc_meta_comparison); without one it gets
 * unary / unary_float / binary / binary_float by its input count and whether its scalar
 * function has an integer form.
 *
 * Each meta function builds `it` (inputs broadcast and promoted to their common dtype, the
 * output allocated, written in place or the user's out=) with the backend's iterator flags,
 * then checks what needs the computation dtype: 0, or -1 with the error recorded and nothing
 * held. Host code; compiles as C and as C++ (the CUDA runner calls it too). */
#ifndef TG_UFUNC_META_H
#define TG_UFUNC_META_H

#include "core/core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    TG_UFUNC_MAX_IN = 3,    /* tensor inputs of a pointwise operator */
    TG_UFUNC_MAX_PARAMS = 6 /* its other arguments: Scalars, bools, parsed strings */
};

typedef struct tg_ufunc_call tg_ufunc_call;
typedef int (*tg_ufunc_meta_fn)(tg_iter *it, tg_ufunc_call *call, int flags);

/* One call of a pointwise operator, as its generated kernel fills it in (positionally, so
 * that the C and the CUDA kernels read alike). */
struct tg_ufunc_call {
    const char *op;        /* the operator's name in errors: "exp" */
    tg_ufunc_meta_fn meta; /* builds the iteration and checks */
    tg_tensor *out;        /* NULL: allocated; in[0]: in place; else the user's out= */
    int nin;
    tg_tensor *in[TG_UFUNC_MAX_IN]; /* the tensor arguments in schema order */
    int nparams;
    /* The other arguments in schema order (bools as 0/1, strings as the code their parse
     * function gave), passed to the scalar function after the inputs. */
    double params[TG_UFUNC_MAX_PARAMS];
    const char *backend; /* "cpu" / "cuda", set by the runner: PyTorch names kernels in errors */
    bool int_div;        /* set by a meta: an integer zero divisor is "ZeroDivisionError" */
};

/* A call's parameters in a compute type: float for float16/bfloat16/float32, double for
 * float64, int64_t for the integers and bool (an integral Scalar converted, another 0).
 * tg__ufunc_params fills the first nparams of the array of the compute dtype's kind only (a
 * call's loops read no other: a per-call cost, paid on every 1-element call). */
typedef struct tg_ufunc_params {
    float f32[TG_UFUNC_MAX_PARAMS];
    double f64[TG_UFUNC_MAX_PARAMS];
    int64_t i64[TG_UFUNC_MAX_PARAMS];
} tg_ufunc_params;

void tg__ufunc_params(const tg_ufunc_call *call, tg_dtype compute, tg_ufunc_params *p);

/* ---- the meta functions (kernels/common/ufunc_meta.c) ---- */

/* out = f(in[0]) in the promoted dtype; neg, abs and relu refuse bool in PyTorch's words. */
int tg__ufunc_meta_unary(tg_iter *it, tg_ufunc_call *call, int flags);
/* The same, integer and bool inputs computing in the default float dtype (exp, sin, ...). */
int tg__ufunc_meta_unary_float(tg_iter *it, tg_ufunc_call *call, int flags);
/* out = f(in[0], in[1]), broadcast and promoted (mul, maximum). */
int tg__ufunc_meta_binary(tg_iter *it, tg_ufunc_call *call, int flags);
/* The same, integer and bool inputs computing in the default float dtype (div). */
int tg__ufunc_meta_binary_float(tg_iter *it, tg_ufunc_call *call, int flags);
/* binary with params[0] = alpha, which an integral computation takes only integral (add). */
int tg__ufunc_meta_binary_alpha(tg_iter *it, tg_ufunc_call *call, int flags);
/* binary_alpha refusing bool operands first (sub). */
int tg__ufunc_meta_sub(tg_iter *it, tg_ufunc_call *call, int flags);
/* binary refusing a bool computation, as PyTorch's "pow" kernel does. */
int tg__ufunc_meta_pow(tg_iter *it, tg_ufunc_call *call, int flags);
/* div with params[0] = rounding mode (tg__pw_div_mode_rounding_mode): 0 is true division
 * (binary_float); trunc and floor keep integer dtypes, refuse bool and set int_div. */
int tg__ufunc_meta_div_mode(tg_iter *it, tg_ufunc_call *call, int flags);
/* out = in[0] OP in[1] as bool (or stored into self's dtype in place); the scalar functions
 * return bool. */
int tg__ufunc_meta_comparison(tg_iter *it, tg_ufunc_call *call, int flags);
/* A structured activation (leaky_relu, gelu, ...): out= must have self's dtype, the result
 * keeps it, and only floating dtypes have a kernel ("\"leaky_relu_cpu\" not implemented for
 * 'Long'", PyTorch's kernel names). */
int tg__ufunc_meta_activation(tg_iter *it, tg_ufunc_call *call, int flags);
/* An activation's backward: (grad_output, self, ...) broadcast and promoted into a new tensor
 * or the given grad_input; floating dtypes only. */
int tg__ufunc_meta_activation_backward(tg_iter *it, tg_ufunc_call *call, int flags);
/* activation_backward of leaky_relu and elu, whose last parameter says self is the in-place
 * forward's result, which needs params[0] (the slope or alpha) >= 0. */
int tg__ufunc_meta_activation_backward_from_result(tg_iter *it, tg_ufunc_call *call, int flags);

#ifdef __cplusplus
}
#endif

#endif
