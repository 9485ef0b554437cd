/* Activation kernels (CPU): leaky_relu, hardswish, hardsigmoid and elu (structured out=
 * kernels, which also serve the functional and in-place entries), and the backward operators
 * leaky_relu_backward, hardtanh_backward, hardswish_backward, hardsigmoid_backward and
 * elu_backward. (hardtanh itself is clamp, kernels/composite/activation.c.)
 *
 *   forward:  self (any shape, floating) -> out (self's shape and dtype)
 *             out == NULL: allocated; out == self: in place; else the user's out=, which must
 *             have self's dtype (PyTorch's structured unary operators)
 *   backward: grad_output, self (broadcast, promoted to one floating dtype) -> a new tensor
 *
 * The scalar functions are PyTorch 1.13's definitions, in kernels/common/pointwise_scalar.h
 * (shared with kernels/cuda/activation.cu); the argument checks and iterations are in
 * kernels/common/activation_checks.h (shared too). float32 and float64 compute in their own
 * type, float16 and bfloat16 in float (loaded, computed, rounded once on store). Each loop has
 * a contiguous float32 / float64 path (constant strides, which the compiler vectorises) and a
 * reference path for any dtype and strides; tg__pw_force_reference makes every call take the
 * reference path, for the tests. */
#include "core/core.h"
#include "pointwise_loops.h"
#include "activation_loops.h"
#include "activation_checks.h"
#include "pointwise_scalar.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/elu.h"
#include "kernels/elu_backward.h"
#include "kernels/hardsigmoid.h"
#include "kernels/hardsigmoid_backward.h"
#include "kernels/hardswish.h"
#include "kernels/hardswish_backward.h"
#include "kernels/hardtanh_backward.h"
#include "kernels/leaky_relu.h"
#include "kernels/leaky_relu_backward.h"

/* A call's parameters in both compute types (p[] float, q[] double) and its flag. */
typedef struct act_ctx {
    tg_dtype dtype;
    float p[3];
    double q[3];
    bool flag;
} act_ctx;

/* One loop per operator (activation_loops.h). */
#define ACT_UNARY_LOOP(fname, E32, E64) TG_ACT_UNARY_LOOP(fname, act_ctx, E32, E64)
#define ACT_BINARY_LOOP(fname, E32, E64) TG_ACT_BINARY_LOOP(fname, act_ctx, E32, E64)

ACT_UNARY_LOOP(leaky_relu_loop, tg__pw_leaky_relu_f32(x, p[0]), tg__pw_leaky_relu_f64(x, q[0]))
ACT_UNARY_LOOP(hardswish_loop, tg__pw_hardswish_f32(x), tg__pw_hardswish_f64(x))
ACT_UNARY_LOOP(hardsigmoid_loop, tg__pw_hardsigmoid_f32(x), tg__pw_hardsigmoid_f64(x))
ACT_UNARY_LOOP(elu_loop, tg__pw_elu_f32(x, p[0], p[1], p[2]), tg__pw_elu_f64(x, q[0], q[1], q[2]))

ACT_BINARY_LOOP(leaky_relu_backward_loop, tg__pw_leaky_relu_backward_f32(g, x, p[0]),
                tg__pw_leaky_relu_backward_f64(g, x, q[0]))
ACT_BINARY_LOOP(hardtanh_backward_loop, tg__pw_hardtanh_backward_f32(g, x, p[0], p[1]),
                tg__pw_hardtanh_backward_f64(g, x, q[0], q[1]))
ACT_BINARY_LOOP(hardswish_backward_loop, tg__pw_hardswish_backward_f32(g, x),
                tg__pw_hardswish_backward_f64(g, x))
ACT_BINARY_LOOP(hardsigmoid_backward_loop, tg__pw_hardsigmoid_backward_f32(g, x),
                tg__pw_hardsigmoid_backward_f64(g, x))
ACT_BINARY_LOOP(elu_backward_loop, tg__pw_elu_backward_f32(g, x, p[0], p[1], p[2], c->flag),
                tg__pw_elu_backward_f64(g, x, q[0], q[1], q[2], c->flag))

static tg_tensor *act_unary(tg_act_op op, tg_tensor *self, tg_tensor *out, tg_iter_loop1d loop,
                            act_ctx *c)
{
    tg_iter it;
    if (tg__act_unary_iter_build(&it, op, 0, self, out, false) != 0) return NULL;
    c->dtype = it.dtype;
    tg__iter_for_each(&it, loop, c);
    return tg__iter_finish(&it, 0);
}

static tg_tensor *act_binary(tg_act_op op, tg_tensor *grad_output, tg_tensor *self,
                             tg_iter_loop1d loop, act_ctx *c)
{
    tg_iter it;
    if (tg__act_binary_iter_build(&it, op, 0, grad_output, self, false) != 0) return NULL;
    c->dtype = it.dtype;
    tg__iter_for_each(&it, loop, c);
    return tg__iter_finish(&it, 0);
}

/* Parameters as the compute types see them: p[k] = (float)v[k], q[k] = v[k]. */
static act_ctx act_params(double v0, double v1, double v2, bool flag)
{
    act_ctx c = { .p = { (float)v0, (float)v1, (float)v2 }, .q = { v0, v1, v2 }, .flag = flag };
    return c;
}

/* elu's coefficients (negcoef, poscoef, negiptcoef), negcoef multiplied in each type. */
static act_ctx elu_params(double alpha, double scale, double input_scale, bool is_result)
{
    tg_act_elu_coefs_f32 f = tg__act_elu_coefs_f32(alpha, scale, input_scale);
    tg_act_elu_coefs_f64 d = tg__act_elu_coefs_f64(alpha, scale, input_scale);
    act_ctx c = { .p = { f.neg, f.pos, f.negipt },
                  .q = { d.neg, d.pos, d.negipt },
                  .flag = is_result };
    return c;
}

/* ------------------------------------------------------------------ forward */

tg_tensor *tg__cpu_leaky_relu_out(tg_tensor *self, double negative_slope, tg_tensor *out)
{
    act_ctx c = act_params(negative_slope, 0, 0, false);
    return act_unary(TG_ACT_LEAKY_RELU, self, out, leaky_relu_loop, &c);
}

tg_tensor *tg__cpu_hardswish_out(tg_tensor *self, tg_tensor *out)
{
    act_ctx c = act_params(0, 0, 0, false);
    return act_unary(TG_ACT_HARDSWISH, self, out, hardswish_loop, &c);
}

tg_tensor *tg__cpu_hardsigmoid_out(tg_tensor *self, tg_tensor *out)
{
    act_ctx c = act_params(0, 0, 0, false);
    return act_unary(TG_ACT_HARDSIGMOID, self, out, hardsigmoid_loop, &c);
}

tg_tensor *tg__cpu_elu_out(tg_tensor *self, double alpha, double scale, double input_scale,
                           tg_tensor *out)
{
    act_ctx c = elu_params(alpha, scale, input_scale, false);
    return act_unary(TG_ACT_ELU, self, out, elu_loop, &c);
}

/* ------------------------------------------------------------------ backward */

tg_tensor *tg__cpu_leaky_relu_backward(tg_tensor *grad_output, tg_tensor *self,
                                       double negative_slope, bool self_is_result)
{
    if (tg__act_check_is_result(TG_ACT_LEAKY_RELU_BACKWARD, self_is_result, negative_slope) != 0)
        return NULL;
    act_ctx c = act_params(negative_slope, 0, 0, false);
    return act_binary(TG_ACT_LEAKY_RELU_BACKWARD, grad_output, self, leaky_relu_backward_loop, &c);
}

tg_tensor *tg__cpu_hardtanh_backward(tg_tensor *grad_output, tg_tensor *self, double min_val,
                                     double max_val)
{
    act_ctx c = act_params(min_val, max_val, 0, false);
    return act_binary(TG_ACT_HARDTANH_BACKWARD, grad_output, self, hardtanh_backward_loop, &c);
}

tg_tensor *tg__cpu_hardswish_backward(tg_tensor *grad_output, tg_tensor *self)
{
    act_ctx c = act_params(0, 0, 0, false);
    return act_binary(TG_ACT_HARDSWISH_BACKWARD, grad_output, self, hardswish_backward_loop, &c);
}

tg_tensor *tg__cpu_hardsigmoid_backward(tg_tensor *grad_output, tg_tensor *self)
{
    act_ctx c = act_params(0, 0, 0, false);
    return act_binary(TG_ACT_HARDSIGMOID_BACKWARD, grad_output, self, hardsigmoid_backward_loop,
                      &c);
}

tg_tensor *tg__cpu_elu_backward(tg_tensor *grad_output, double alpha, double scale,
                                double input_scale, bool is_result, tg_tensor *self_or_result)
{
    if (tg__act_check_is_result(TG_ACT_ELU_BACKWARD, is_result, alpha) != 0) return NULL;
    act_ctx c = elu_params(alpha, scale, input_scale, is_result);
    return act_binary(TG_ACT_ELU_BACKWARD, grad_output, self_or_result, elu_backward_loop, &c);
}
