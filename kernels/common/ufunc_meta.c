/* The meta functions of the pointwise operators (ufunc_meta.h): iteration building and the
 * checks PyTorch 1.13 makes, in its words, for the CPU and CUDA kernels tgen generates. */
#include "ufunc_meta.h"
#include "pointwise_checks.h"

void tg__ufunc_params(const tg_ufunc_call *call, tg_dtype compute, tg_ufunc_params *p)
{
    const tg_pw_kind k = tg__pw_kind(compute);
    for (int j = 0; j < call->nparams; j++) {
        const double v = call->params[j];
        if (k == TG_PW_F32) p->f32[j] = (float)v;
        else if (k == TG_PW_F64) p->f64[j] = v;
        else p->i64[j] = tg__pw_is_integral_scalar(v) ? (int64_t)v : 0;
    }
}

/* out = f(in...) with the inputs promoted; in place when out is in[0]. */
static int build(tg_iter *it, tg_ufunc_call *call, int flags)
{
    return tg__pw_iter_build(it, call->op, flags, call->out, call->in[0], call->in, call->nin);
}

/* A check of the computation dtype after the iteration is built: on failure the iteration is
 * released. */
static int checked(tg_iter *it, int rc)
{
    if (rc != 0) tg__iter_abort(it);
    return rc;
}

int tg__ufunc_meta_unary(tg_iter *it, tg_ufunc_call *call, int flags)
{
    if (tg__pw_check_unary_bool(call->op, call->in[0]->dtype, call->backend) != 0) return -1;
    return build(it, call, flags);
}

int tg__ufunc_meta_unary_float(tg_iter *it, tg_ufunc_call *call, int flags)
{
    return tg__ufunc_meta_unary(it, call, flags | TG_ITER_INT_TO_FLOAT);
}

int tg__ufunc_meta_binary(tg_iter *it, tg_ufunc_call *call, int flags)
{
    return build(it, call, flags);
}

int tg__ufunc_meta_binary_float(tg_iter *it, tg_ufunc_call *call, int flags)
{
    return build(it, call, flags | TG_ITER_INT_TO_FLOAT);
}

int tg__ufunc_meta_binary_alpha(tg_iter *it, tg_ufunc_call *call, int flags)
{
    if (build(it, call, flags) != 0) return -1;
    return checked(it, tg__pw_check_alpha(call->op, it->dtype, call->params[0]));
}

int tg__ufunc_meta_sub(tg_iter *it, tg_ufunc_call *call, int flags)
{
    if (tg__pw_check_sub_operands(call->in[0]->dtype, call->in[1]->dtype) != 0) return -1;
    return tg__ufunc_meta_binary_alpha(it, call, flags);
}

int tg__ufunc_meta_pow(tg_iter *it, tg_ufunc_call *call, int flags)
{
    if (build(it, call, flags) != 0) return -1;
    return checked(it, tg__pw_check_not_bool(call->op, it->dtype, "pow", NULL));
}

int tg__ufunc_meta_div_mode(tg_iter *it, tg_ufunc_call *call, int flags)
{
    const int mode = (int)call->params[0];
    if (mode == TG_PW_DIV_TRUE) return tg__ufunc_meta_binary_float(it, call, flags);
    if (build(it, call, flags) != 0) return -1;
    call->int_div = true;
    const char *kernel = mode == TG_PW_DIV_TRUNC ? "div_trunc" : "div_floor";
    return checked(it, tg__pw_check_not_bool(call->op, it->dtype, kernel, call->backend));
}

int tg__ufunc_meta_comparison(tg_iter *it, tg_ufunc_call *call, int flags)
{
    return build(it, call, flags | TG_ITER_BOOL_OUTPUT);
}

/* ------------------------------------------------------------------ activations */

/* PyTorch 1.13's kernel names in "\"<kernel>\" not implemented for 'Long'" (its AT_DISPATCH
 * names, hardtanh_backward's CPU one included); an operator not listed is "<op>_<backend>". */
static const struct {
    const char *op, *cpu, *cuda;
} kernel_names[] = {
    { "leaky_relu", "leaky_relu_cpu", "leaky_relu_cuda" },
    { "leaky_relu_backward", "leaky_relu_backward_cpu", "leaky_relu_backward_cuda" },
    { "hardtanh_backward", "hardshrink_backward_cpu", "hardtanh_backward_cuda" },
    { "hardswish", "hardswish_cpu", "hardswish_cuda" },
    { "hardswish_backward", "hardswish_backward_cpu", "hardswish_backward_cuda" },
    { "hardsigmoid", "hardsigmoid_cpu", "hardsigmoid_cuda" },
    { "hardsigmoid_backward", "hardsigmoid_backward", "hardsigmoid_backward_cuda" },
    { "elu", "elu_cpu", "elu_cuda" },
    { "elu_backward", "elu_backward_cpu", "elu_backward_cuda" },
    { "gelu", "GeluKernelImpl", "GeluCUDAKernelImpl" },
    { "gelu_backward", "GeluBackwardKernelImpl", "GeluBackwardCUDAKernelImpl" },
    { "silu", "silu_cpu", "silu_cuda" },
    { "silu_backward", "silu_backward_cpu", "silu_backward_cuda" },
    { "mish", "mish_cpu", "mish_cuda" },
    { "mish_backward", "mish_backward_cpu", "mish_backward_cuda" },
    { "softplus", "softplus_cpu", "softplus_cuda" },
    { "softplus_backward", "softplus_backward_cpu", "softplus_backward_cuda" },
    { "log_sigmoid_forward", "log_sigmoid_cpu", "log_sigmoid_forward_cuda" },
    { "log_sigmoid_backward", "log_sigmoid_backward_cpu", "log_sigmoid_backward_cuda" },
};

/* A floating computation dtype, else PyTorch's dispatch error naming its kernel. */
static int check_floating(const tg_ufunc_call *call, tg_dtype t)
{
    if (tg_dtype_is_floating(t)) return 0;
    const bool cuda = strcmp(call->backend, "cuda") == 0;
    for (size_t i = 0; i < sizeof kernel_names / sizeof *kernel_names; i++)
        if (strcmp(kernel_names[i].op, call->op) == 0)
            return tg__fail(call->op, "\"%s\" not implemented for '%s'",
                            cuda ? kernel_names[i].cuda : kernel_names[i].cpu,
                            tg__dtype_torch_name(t));
    return tg__fail(call->op, "\"%s_%s\" not implemented for '%s'", call->op, call->backend,
                    tg__dtype_torch_name(t));
}

int tg__ufunc_meta_activation(tg_iter *it, tg_ufunc_call *call, int flags)
{
    const tg_tensor *self = call->in[0], *out = call->out;
    if (out && out != self && out->dtype != self->dtype)
        return tg__fail(call->op, "Found dtype %s but expected %s",
                        tg__dtype_torch_name(out->dtype), tg__dtype_torch_name(self->dtype));
    if (build(it, call, flags) != 0) return -1;
    return checked(it, check_floating(call, it->dtype));
}

int tg__ufunc_meta_activation_backward(tg_iter *it, tg_ufunc_call *call, int flags)
{
    /* No in-place form: out is the user's grad_input or NULL. */
    if (tg__pw_iter_build(it, call->op, flags, call->out, NULL, call->in, call->nin) != 0)
        return -1;
    return checked(it, check_floating(call, it->dtype));
}

int tg__ufunc_meta_activation_backward_from_result(tg_iter *it, tg_ufunc_call *call, int flags)
{
    const bool is_result = call->params[call->nparams - 1] != 0;
    if (is_result && call->params[0] < 0) {
        if (strcmp(call->op, "leaky_relu_backward") == 0)
            return tg__fail(call->op,
                            "In-place leakyReLu backward calculation is triggered with a negative "
                            "slope which is not supported. This is caused by calling in-place "
                            "forward function with a negative slope, please call out-of-place "
                            "version instead. File an issue at https://github.com/pytorch/pytorch "
                            "if you do require supporting in-place leakRelu backward calculation "
                            "with negative slope");
        return tg__fail(call->op,
                        "In-place elu backward calculation is triggered with a negative slope "
                        "which is not supported. This is caused by calling in-place forward "
                        "function with a negative slope, please call out-of-place version "
                        "instead.");
    }
    return tg__ufunc_meta_activation_backward(it, call, flags);
}
