/* Argument checks and iteration setup of the pointwise operators, shared by the CPU kernels
 * (the meta functions of the generated ones, ufunc_meta.c; kernels/cpu/ternary.c) and the CUDA
 * kernels (kernels/cuda/ternary.cu, threshold.cu), so that both
 * backends refuse the same inputs with the same (PyTorch's) words and build the same
 * iterations: tg__pw_iter_build (and where's and clamp's), the checks, and clamp.out's Scalar
 * bounds. Each check returns 0, or records the error naming `op` and returns -1.
 *
 * PyTorch names the kernel in some messages ("\"div_trunc_cpu\" not implemented for 'Bool'");
 * those take the backend's suffix ("cpu" or "cuda") as CUDA's ATen does. Compiles as C and as
 * C++ (host code only). */
#ifndef TG_POINTWISE_CHECKS_H
#define TG_POINTWISE_CHECKS_H

#include "pointwise_convert.h"
#include <string.h>

/* Builds the iteration of a pointwise operator `out = f(ins[0..nin-1])` as every backend does:
 * broadcast, inputs promoted to their common dtype (TG_ITER_PROMOTE_INPUTS, plus the backend's
 * `flags`); out NULL (allocated), self (in place: out may not grow) or the user's out=. 0, or
 * -1 with the error recorded. */
static inline int tg__pw_iter_build(tg_iter *it, const char *op, int flags, tg_tensor *out,
                                    const tg_tensor *self, tg_tensor **ins, int nin)
{
    tg_tensor *outs[1] = { out };
    flags |= TG_ITER_PROMOTE_INPUTS;
    if (out && out == self) flags |= TG_ITER_NO_BROADCAST_OUT;
    return tg__iter_build(it, op, flags, outs, 1, ins, nin);
}

/* "\"<kernel>_<backend>\" not implemented for 'Bool'" when t is bool (backend NULL: no
 * suffix, for kernels PyTorch names without one, like "pow"). */
static inline int tg__pw_check_not_bool(const char *op, tg_dtype t, const char *kernel,
                                        const char *backend)
{
    if (t != TG_BOOL) return 0;
    if (backend) tg__error(op, "\"%s_%s\" not implemented for 'Bool'", kernel, backend);
    else tg__error(op, "\"%s\" not implemented for 'Bool'", kernel);
    return -1;
}

/* add/sub: an integral (or bool) computation takes only an integral alpha. */
static inline int tg__pw_check_alpha(const char *op, tg_dtype t, double alpha)
{
    if (!tg_dtype_is_floating(t) && !tg__pw_is_integral_scalar(alpha))
        return tg__fail(
            op, "For integral input tensors, argument alpha must not be a floating point number.");
    return 0;
}

/* sub refuses bool operands, before anything else. */
static inline int tg__pw_check_sub_operands(tg_dtype self, tg_dtype other)
{
    if (self == TG_BOOL && other == TG_BOOL)
        return tg__fail("sub", "Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.");
    if (self == TG_BOOL || other == TG_BOOL)
        return tg__fail("sub", "Subtraction, the `-` operator, with a bool tensor is not "
                               "supported. If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.");
    return 0;
}

/* div's rounding_mode: NULL (true division), "trunc" or "floor". */
typedef enum tg_pw_div_mode { TG_PW_DIV_TRUE, TG_PW_DIV_TRUNC, TG_PW_DIV_FLOOR } tg_pw_div_mode;

static inline int tg__pw_parse_div_mode(const char *rounding_mode, tg_pw_div_mode *mode)
{
    if (!rounding_mode) {
        *mode = TG_PW_DIV_TRUE;
        return 0;
    }
    if (strcmp(rounding_mode, "trunc") == 0) {
        *mode = TG_PW_DIV_TRUNC;
        return 0;
    }
    if (strcmp(rounding_mode, "floor") == 0) {
        *mode = TG_PW_DIV_FLOOR;
        return 0;
    }
    return tg__fail("div",
                    "div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                    "but found '%s'",
                    rounding_mode);
}

/* Unary operators that refuse bool inputs (checked on the input's dtype, before the
 * iteration): neg, abs, relu. NULL when the operator accepts bool. */
static inline int tg__pw_check_unary_bool(const char *op, tg_dtype t, const char *backend)
{
    if (t != TG_BOOL) return 0;
    if (strcmp(op, "neg") == 0)
        return tg__fail(
            op, "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    if (strcmp(op, "abs") == 0) return tg__pw_check_not_bool(op, t, "abs", backend);
    if (strcmp(op, "relu") == 0) return tg__fail(op, "Boolean inputs not supported for relu");
    return 0;
}

/* where's condition as a bool tensor (a new reference), or NULL with PyTorch's error. A uint8
 * condition is accepted with a deprecation warning and converted to bool (on its device), so
 * that it cannot take part in type promotion: a bool operand never changes a result type, a
 * uint8 one would. */
static inline tg_tensor *tg__pw_where_condition(tg_tensor *condition)
{
    tg_dtype t = condition->dtype;
    if (t == TG_BOOL) return tg_retain(condition);
    if (t != TG_UINT8) {
        tg__error("where",
                  "where expected condition to be a boolean tensor, but got a tensor "
                  "with dtype %s",
                  tg__dtype_torch_name(t));
        return NULL;
    }
    tg__warn_once("where_uint8",
                  "where received a uint8 condition tensor. This behavior is "
                  "deprecated and will be removed in a future version of PyTorch. Use a "
                  "boolean condition instead.");
    tg_tensor *cond = tg__empty_like("where", condition, TG_BOOL);
    if (cond && tg__copy_into("where", cond, condition) != 0) {
        tg_release(cond);
        return NULL;
    }
    return cond;
}

/* where's iteration (condition, self, other -> out) with the backend's flags. *cond becomes
 * the bool condition (tg__pw_where_condition), which the iterator borrows: release it once
 * the iteration is finished. 0, or -1 with the error recorded (nothing held). */
static inline int tg__pw_where_iter_build(tg_iter *it, int flags, tg_tensor *condition,
                                          tg_tensor *self, tg_tensor *other, tg_tensor *out,
                                          tg_tensor **cond)
{
    *cond = tg__pw_where_condition(condition);
    if (!*cond) return -1;
    tg_tensor *ins[3] = { *cond, self, other };
    if (tg__pw_iter_build(it, "where", flags, out, self, ins, 3) == 0) return 0;
    tg_release(*cond);
    *cond = NULL;
    return -1;
}

/* clamp: at least one bound. */
static inline int tg__pw_check_clamp_bounds(bool has_min, bool has_max)
{
    if (has_min || has_max) return 0;
    return tg__fail("clamp", "torch.clamp: At least one of 'min' or 'max' must not be None");
}

/* clamp, once the computation dtype is known: PyTorch's two-bound tensor kernel has no bool
 * instantiation, and Scalar bounds must fit the dtype. */
static inline int tg__pw_check_clamp_dtype(tg_dtype t, bool tensor_min, bool tensor_max,
                                           const double *scalar_min, const double *scalar_max,
                                           const char *backend)
{
    if (t == TG_BOOL && tensor_min && tensor_max && !scalar_min && !scalar_max)
        return tg__pw_check_not_bool("clamp", t, "clamp", backend);
    if (scalar_min && tg__pw_check_scalar("clamp", *scalar_min, t) != 0) return -1;
    if (scalar_max && tg__pw_check_scalar("clamp", *scalar_max, t) != 0) return -1;
    return 0;
}

/* clamp's iteration: inputs self, then min (if any), then max (if any), with the backend's
 * flags, and the dtype check above (`backend` names the kernel; scalar_min/scalar_max as
 * there). Returns the number of inputs (2 or 3), or -1 with the error recorded (nothing held). */
static inline int tg__pw_clamp_iter_build(tg_iter *it, int flags, const char *backend,
                                          tg_tensor *self, tg_tensor *min, tg_tensor *max,
                                          tg_tensor *out, const double *scalar_min,
                                          const double *scalar_max)
{
    tg_tensor *ins[3] = { self, NULL, NULL };
    int nin = 1;
    if (min) ins[nin++] = min;
    if (max) ins[nin++] = max;
    if (tg__pw_iter_build(it, "clamp", flags, out, self, ins, nin) != 0) return -1;
    if (tg__pw_check_clamp_dtype(it->dtype, min != NULL, max != NULL, scalar_min, scalar_max,
                                 backend) != 0) {
        tg__iter_abort(it);
        return -1;
    }
    return nin;
}

/* clamp's Tensor-bound body in each backend (ternary.c, ternary.cu): min/max are tensors or
 * NULL; scalar_min/scalar_max point at the Scalars they wrap (for the overflow check), else
 * NULL. Returns the result as a new reference, or NULL + error. */
typedef tg_tensor *(*tg_pw_clamp_run_fn)(tg_tensor *self, tg_tensor *min, tg_tensor *max,
                                         tg_tensor *out, const double *scalar_min,
                                         const double *scalar_max);

/* clamp.out with Scalar bounds (either may be None, not both), for every backend: wraps the
 * bounds as Scalars that promote like Python numbers and hands them to the backend's `run`. */
static inline tg_tensor *tg__pw_clamp_scalar_bounds(tg_pw_clamp_run_fn run, tg_tensor *self,
                                                    tg_opt_scalar min, tg_opt_scalar max,
                                                    tg_tensor *out)
{
    if (tg__pw_check_clamp_bounds(!tg_is_none_float(min), !tg_is_none_float(max)) != 0) return NULL;
    tg_tensor *tmin = NULL, *tmax = NULL;
    if (!tg_is_none_float(min) && !(tmin = tg__wrapped_scalar(min, tg__pw_is_integral_scalar(min))))
        return NULL;
    if (!tg_is_none_float(max) &&
        !(tmax = tg__wrapped_scalar(max, tg__pw_is_integral_scalar(max)))) {
        tg_release(tmin);
        return NULL;
    }
    tg_tensor *r = run(self, tmin, tmax, out, !tg_is_none_float(min) ? &min : NULL,
                       !tg_is_none_float(max) ? &max : NULL);
    tg_release(tmin);
    tg_release(tmax);
    return r;
}

#endif
