/* Normalization layers built from other operators (CompositeImplicitAutograd, so they need no
 * derivative entries): batch_norm (over native_batch_norm, with torch.nn.functional's "more
 * than 1 value per channel" check and _batch_norm_impl_index's), group_norm (over
 * native_group_norm) and instance_norm (batch norm of the input seen as (1, N * C, *), as
 * PyTorch 1.13's at::instance_norm). Each returns a new reference, or NULL with an error
 * recorded; intermediates are released on every path. */
#include "tg_kutil.h"
#include "norm_checks.h"
/* The public functions of the operators called here. */
#include "ops/contiguous.h"
#include "ops/copy.h"
#include "ops/expand.h"
#include "ops/mean.h"
#include "ops/batch_norm.h"
#include "ops/native_batch_norm.h"
#include "ops/native_group_norm.h"
#include "ops/reshape.h"
#include "ops/unsqueeze.h"
#include "ops/add.h"
#include "ops/div.h"
#include "ops/mul.h"
#include "ops/pow.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/zeros_like.h"
#include "ops/upsample_bilinear2d.h"
#include "ops/upsample_bilinear2d_backward.h"
#include "ops/upsample_nearest2d.h"
#include "ops/upsample_nearest2d_backward.h"
#include "ops/view.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/batch_norm.h"
#include "kernels/batchnorm_double_backward.h"
#include "kernels/group_norm.h"
#include "kernels/instance_norm.h"
#include "kernels/upsample_bilinear2d.h"
#include "kernels/upsample_bilinear2d_backward.h"
#include "kernels/upsample_nearest2d.h"
#include "kernels/upsample_nearest2d_backward.h"
#include "composite_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tg_tensor *first_of3(tg_tensors3 r)
{
    tg_release(r.r1);
    tg_release(r.r2);
    return r.r0;
}

tg_tensor *tg__composite_batch_norm(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                    tg_tensor *running_mean, tg_tensor *running_var, bool training,
                                    double momentum, double eps, bool cudnn_enabled)
{
    (void)cudnn_enabled;
    const char *op = "batch_norm";
    if (tg__norm_check_dim1(op, input) != 0) return NULL;
    if (training) {
        int64_t prod = input->sizes[0];
        for (int64_t i = 2; i < input->ndim; i++) prod *= input->sizes[i];
        if (prod == 1) {
            char s[256];
            tg__shape_str(s, sizeof s, input->sizes, input->ndim);
            return tg__error(op,
                             "Expected more than 1 value per channel when training, got input "
                             "size torch.Size(%s)",
                             s);
        }
    }
    if (tg__batch_norm_check(op, input, weight, bias, running_mean, running_var, training) != 0)
        return NULL;
    return first_of3(tg_native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                          momentum, eps));
}

tg_tensor *tg__composite_group_norm(tg_tensor *input, int64_t num_groups, tg_tensor *weight,
                                    tg_tensor *bias, double eps, bool cudnn_enabled)
{
    (void)cudnn_enabled;
    const char *op = "group_norm";
    if (tg__norm_check_dim1(op, input) != 0) return NULL;
    int64_t n = input->sizes[0], c = input->sizes[1], hxw = 1;
    for (int64_t i = 2; i < input->ndim; i++) hxw *= input->sizes[i];
    if (tg__group_norm_inputs_check(op, input, weight, bias, c, num_groups) != 0) return NULL;
    tg_tensor *x = tg_contiguous(input);
    tg_tensor *w = x && weight ? tg_contiguous(weight) : NULL;
    tg_tensor *b = x && bias ? tg_contiguous(bias) : NULL;
    tg_tensor *r = NULL;
    if (x && (!weight || w) && (!bias || b))
        r = first_of3(tg_native_group_norm(x, w, b, n, c, hxw, num_groups, eps));
    tg_release(x);
    tg_release(w);
    tg_release(b);
    return r;
}

/* t (C) repeated n times: (n * C), a new tensor (a view of t when n == 1). */
static tg_tensor *repeat_vec(tg_tensor *t, int64_t n, int64_t c)
{
    if (!t) return NULL;
    tg_tensor *u = tg_unsqueeze(t, 0);
    tg_tensor *e = u ? tg__then(u, tg_expand(u, TG_INTS(n, c))) : NULL;
    return e ? tg__then(e, tg_reshape(e, TG_INTS(n * c))) : NULL;
}

tg_tensor *tg__composite_instance_norm(tg_tensor *input, tg_tensor *weight, tg_tensor *bias,
                                       tg_tensor *running_mean, tg_tensor *running_var,
                                       bool use_input_stats, double momentum, double eps,
                                       bool cudnn_enabled)
{
    const char *op = "instance_norm";
    if (!use_input_stats && !(running_mean && running_var))
        return tg__error(op, "Expected running_mean and running_var to be defined when "
                             "use_input_stats is false");
    if (tg__norm_check_dim1(op, input) != 0) return NULL;
    int64_t b = input->sizes[0], c = input->sizes[1];
    int64_t shape[TG_MAX_DIMS];
    if (input->ndim > TG_MAX_DIMS) return tg__error(op, "too many dimensions");
    memcpy(shape, input->sizes, sizeof(int64_t) * (size_t)input->ndim);
    shape[0] = 1;
    shape[1] = b * c;
    tg_tensor *w = repeat_vec(weight, b, c), *bi = repeat_vec(bias, b, c);
    tg_tensor *rm = repeat_vec(running_mean, b, c), *rv = repeat_vec(running_var, b, c);
    tg_tensor *x = NULL, *xr = NULL, *out = NULL, *res = NULL;
    if ((weight && !w) || (bias && !bi) || (running_mean && !rm) || (running_var && !rv)) goto done;
    x = tg_contiguous(input);
    xr = x ? tg_view(x, (tg_int_list){ .len = input->ndim, .data = shape }) : NULL;
    out =
        xr ? tg_batch_norm(xr, w, bi, rm, rv, use_input_stats, momentum, eps, cudnn_enabled) : NULL;
    if (!out) goto done;
    bool ok = true;
    TG_NO_GRAD {
        tg_tensor *pairs[2][2] = { { running_mean, rm }, { running_var, rv } };
        for (int i = 0; i < 2 && ok; i++) {
            if (!pairs[i][0]) continue;
            tg_tensor *v = tg_view(pairs[i][1], TG_INTS(b, c));
            tg_tensor *m = v ? tg__then(v, tg_mean(v, .dim = TG_INTS(0))) : NULL;
            tg_tensor *cp = m ? tg__then(m, tg_copy_(pairs[i][0], m)) : NULL;
            ok = cp != NULL;
            tg_release(cp);
        }
    }
    if (ok) res = tg_view(out, (tg_int_list){ .len = input->ndim, .data = input->sizes });
done:
    tg_release(w);
    tg_release(bi);
    tg_release(rm);
    tg_release(rv);
    tg_release(x);
    tg_release(xr);
    tg_release(out);
    return res;
}

/* ------------------------------------------------------------------ batchnorm_double_backward */

/* native_batch_norm_backward's derivative: PyTorch 1.13's batchnorm_double_backward
 * (FunctionsManual.cpp) term by term, in differentiable operators (so its own derivative exists
 * too). ggI, ggG, ggB (the gradients of the three outputs of native_batch_norm_backward) may be
 * NULL. */

/* The intermediates of batchnorm_double_backward, released together at the end (a kernel owns
 * what its calls return). */
typedef struct bn_arena {
    tg_tensor *t[160];
    int n;
    bool overflow;
} bn_arena;

static tg_tensor *arena_add(bn_arena *a, tg_tensor *t)
{
    if (!t) return NULL;
    if (a->n == (int)(sizeof a->t / sizeof a->t[0])) {
        /* cannot happen with the formula below; fail cleanly rather than leak */
        tg_release(t);
        a->overflow = true;
        return NULL;
    }
    a->t[a->n++] = t;
    return t;
}

#define K(expr) arena_add(a, (expr))

/* t (C elements) viewed as (1, C, 1, ...) with like's number of dimensions. */
static tg_tensor *dim1_view(bn_arena *a, tg_tensor *t, const tg_tensor *like)
{
    if (!t) return NULL;
    int64_t shape[TG_MAX_DIMS];
    for (int64_t i = 0; i < like->ndim; i++) shape[i] = 1;
    shape[1] = like->sizes[1];
    return K(tg_reshape(t, (tg_int_list){ .len = like->ndim, .data = shape }));
}

/* The sum over every dimension but 1. */
static tg_tensor *sum_ex1(bn_arena *a, tg_tensor *t, int64_t ndim, bool keepdim)
{
    if (!t) return NULL;
    int64_t dims[TG_MAX_DIMS], k = 0;
    for (int64_t d = 0; d < ndim; d++)
        if (d != 1) dims[k++] = d;
    return K(tg_sum(t, .dim = (tg_int_list){ .len = k, .data = dims }, .keepdim = keepdim));
}

/* x * g, or x when g is NULL (no affine weight: gamma is one). */
static tg_tensor *mul_opt(bn_arena *a, tg_tensor *x, tg_tensor *g)
{
    return g ? K(tg_mul(x, g)) : x;
}

/* The first backward's grad_input for gradient g and weight gam (NULL: one). */
static tg_tensor *first_back_grad_input(bn_arena *a, tg_tensor *g, tg_tensor *gam, tg_tensor *s12,
                                        tg_tensor *s1, tg_tensor *xmu, double m, int64_t nd)
{
    tg_tensor *h0 = K(tg_div_scalar(mul_opt(a, s12, gam), m));
    tg_tensor *h1 =
        K(tg_sub(K(tg_sub(K(tg_mul_scalar(g, m)), sum_ex1(a, g, nd, true))),
                 K(tg_mul(K(tg_mul(xmu, s1)), sum_ex1(a, K(tg_mul(g, xmu)), nd, true)))));
    return K(tg_mul(h0, h1));
}

static tg_tensors3 bn_double_backward(bn_arena *a, tg_tensor *input, tg_tensor *gamma,
                                      tg_tensor *ggI, tg_tensor *ggG, tg_tensor *ggB, tg_tensor *gO,
                                      tg_tensor *running_mean, tg_tensor *running_var,
                                      bool training, double eps, tg_tensor *save_mean,
                                      tg_tensor *save_invstd, tg_bool_list output_mask)
{
    tg_tensors3 res = { NULL, NULL, NULL };
    bool mask[3];
    tg__k_output_mask(output_mask, mask);
    bool affine = gamma != NULL;
    int64_t nd = input->ndim;
    double m = (double)input->sizes[0];
    for (int64_t i = 2; i < nd; i++) m *= (double)input->sizes[i];
    tg_tensor *gamma_e = affine ? dim1_view(a, gamma, input) : NULL;
    tg_tensor *ggG_e = affine && ggG ? dim1_view(a, ggG, input) : NULL;
    tg_tensor *ggB_e = affine && ggB ? dim1_view(a, ggB, input) : NULL;
    tg_tensor *mu = dim1_view(a, training ? save_mean : running_mean, input);
    tg_tensor *xmu = K(tg_sub(input, mu));
    tg_tensor *s12 =
        training ? dim1_view(a, save_invstd, input)
                 : dim1_view(a, K(tg_pow_scalar(K(tg_add_scalar(running_var, eps)), -0.5)), input);
    tg_tensor *s1 = K(tg_pow_scalar(s12, 2)), *s32 = K(tg_pow_scalar(s12, 3));
    tg_tensor *xmu_s32 = K(tg_mul(xmu, s32));
    tg_tensor *gOxmu_sum = sum_ex1(a, K(tg_mul(gO, xmu)), nd, true);
    tg_tensor *gO_sum = sum_ex1(a, gO, nd, true);

    tg_tensor *gI = NULL;
    if (ggI && training) {
        tg_tensor *ggI_sum = sum_ex1(a, ggI, nd, true);
        tg_tensor *ggIxmu_sum = sum_ex1(a, K(tg_mul(ggI, xmu)), nd, true);
        tg_tensor *all_sub =
            K(tg_add(K(tg_sub(K(tg_div_scalar(K(tg_mul(ggI_sum, gO_sum)), m)),
                              sum_ex1(a, K(tg_mul(gO, ggI)), nd, true))),
                     K(tg_mul_scalar(K(tg_mul(K(tg_mul(s1, gOxmu_sum)), ggIxmu_sum)), 3.0 / m))));
        tg_tensor *t0 = K(tg_div_scalar(K(tg_mul(xmu_s32, all_sub)), m));
        tg_tensor *t1 = K(tg_mul(K(tg_div_scalar(K(tg_mul(ggIxmu_sum, s32)), m)),
                                 K(tg_sub(K(tg_div_scalar(gO_sum, m)), gO))));
        tg_tensor *t2 = K(tg_mul(K(tg_div_scalar(K(tg_mul(gOxmu_sum, s32)), m)),
                                 K(tg_sub(K(tg_div_scalar(ggI_sum, m)), ggI))));
        gI = mul_opt(a, K(tg_add(K(tg_add(t0, t1)), t2)), gamma_e);
    }
    if (ggG_e) {
        tg_tensor *term;
        if (training) {
            tg_tensor *t0 = K(tg_mul(gO, s12));
            tg_tensor *t1 = K(tg_div_scalar(K(tg_mul(s12, gO_sum)), -m));
            tg_tensor *t2 = K(tg_div_scalar(K(tg_mul(xmu_s32, gOxmu_sum)), -m));
            term = K(tg_mul(ggG_e, K(tg_add(K(tg_add(t0, t1)), t2))));
        } else {
            term = K(tg_mul(K(tg_mul(ggG_e, s12)), gO));
        }
        gI = gI ? K(tg_add(gI, term)) : term;
    }
    tg_tensor *gG = NULL;
    if (affine && ggI) {
        if (training)
            gG = sum_ex1(a, K(tg_mul(ggI, first_back_grad_input(a, gO, NULL, s12, s1, xmu, m, nd))),
                         nd, false);
        else gG = sum_ex1(a, K(tg_mul(K(tg_mul(ggI, gO)), s12)), nd, false);
    }
    tg_tensor *ggO = NULL;
    if (ggI)
        ggO = training ? first_back_grad_input(a, ggI, gamma_e, s12, s1, xmu, m, nd)
                       : mul_opt(a, K(tg_mul(ggI, s12)), gamma_e);
    if (ggG_e) {
        tg_tensor *term = K(tg_mul(K(tg_mul(ggG_e, xmu)), s12));
        ggO = ggO ? K(tg_add(ggO, term)) : term;
    }
    if (ggB_e) ggO = ggO ? K(tg_add(ggO, ggB_e)) : K(tg_add(K(tg_zeros_like(gO)), ggB_e));
    if (mask[1] && !gG && affine) gG = K(tg_zeros_like(gamma));
    if (mask[0] && !gI) gI = K(tg_zeros_like(input));
    if (mask[2] && !ggO) ggO = K(tg_zeros_like(gO));
    bool failed =
        a->overflow || (mask[0] && !gI) || (mask[1] && affine && !gG) || (mask[2] && !ggO);
    if (!failed) {
        /* gI may be an argument itself (never: every branch makes a new tensor), and the
         * results are retained before the arena releases its references */
        res.r0 = mask[0] ? tg_retain(gI) : NULL;
        res.r1 = mask[1] && gG ? tg_retain(gG) : NULL;
        res.r2 = mask[2] ? tg_retain(ggO) : NULL;
    }
    return res;
}

#undef K

tg_tensors3 tg__composite_batchnorm_double_backward(
    tg_tensor *input, tg_tensor *gamma, tg_tensor *ggI, tg_tensor *ggG, tg_tensor *ggB,
    tg_tensor *gO, tg_tensor *running_mean, tg_tensor *running_var, bool training, double eps,
    tg_tensor *save_mean, tg_tensor *save_invstd, tg_bool_list output_mask)
{
    tg_tensors3 res = { NULL, NULL, NULL };
    const char *op = "batchnorm_double_backward";
    if (tg__norm_check_dim1(op, input) != 0) return res;
    if (training ? (!save_mean || !save_invstd) : (!running_mean || !running_var)) {
        tg__error(op, "the statistics of the forward are missing");
        return res;
    }
    bn_arena *a = calloc(1, sizeof *a);
    if (!a) {
        tg__error(op, "out of memory");
        return res;
    }
    res = bn_double_backward(a, input, gamma, ggI, ggG, ggB, gO, running_mean, running_var,
                             training, eps, save_mean, save_invstd, output_mask);
    for (int i = 0; i < a->n; i++) tg_release(a->t[i]);
    free(a);
    return res;
}

/* ------------------------------------------------------------------ upsampling, .vec */

/* compute_output_size's check that output_size or scale_factors (`name`) has one entry per
 * spatial dimension. 0 or -1. */
static int ups_vec_len_check(const char *op, const char *name, int64_t len, int64_t spatial)
{
    if (len == spatial) return 0;
    return tg__fail(op,
                    "Expected static_cast<int64_t>(%s->size()) == spatial_dimensions to be true, "
                    "but got false.  (Could this error message be improved?  If so, please report "
                    "an enhancement request to PyTorch.)",
                    name);
}

/* upsample::compute_output_size for 2 spatial dimensions of `in` (N, C, H, W sizes). 0 or -1. */
static int ups_vec_size(const char *op, const int64_t *in, int64_t in_len, tg_int_list output_size,
                        tg_float_list scale_factors, int64_t *osize)
{
    int64_t spatial = in_len - 2;
    bool has_size = output_size.data != NULL, has_scales = scale_factors.data != NULL;
    if (has_size == has_scales)
        return tg__fail(op, "Must specify exactly one of output_size and scale_factors");
    if (has_size) {
        if (ups_vec_len_check(op, "output_size", output_size.len, spatial) != 0) return -1;
        if (spatial != 2) goto not4;
        osize[0] = output_size.data[0];
        osize[1] = output_size.data[1];
        return 0;
    }
    if (ups_vec_len_check(op, "scale_factors", scale_factors.len, spatial) != 0) return -1;
    if (spatial != 2) goto not4;
    for (int i = 0; i < 2; i++) osize[i] = (int64_t)((double)in[i + 2] * scale_factors.data[i]);
    return 0;
not4: /* what upsample_2d_common_check then says */
    return tg__fail(op, "It is expected input_size equals to 4, but got size %lld",
                    (long long)in_len);
}

static tg_opt_float scale_value(tg_float_list s, int i)
{
    return s.data ? s.data[i] : TG_NONE_FLOAT;
}

/* The .vec overloads: the output size from output_size or scale_factors (of x's sizes, or of
 * input_size for a backward), then the operator with the scales. */
typedef enum { UPS_NEAREST, UPS_NEAREST_BACKWARD, UPS_BILINEAR, UPS_BILINEAR_BACKWARD } ups_op;

static tg_tensor *ups_vec(const char *op, ups_op kind, tg_tensor *x, tg_int_list output_size,
                          tg_int_list input_size, bool align_corners, tg_float_list scale_factors)
{
    bool backward = kind == UPS_NEAREST_BACKWARD || kind == UPS_BILINEAR_BACKWARD;
    int64_t o[2];
    if (ups_vec_size(op, backward ? input_size.data : x->sizes, backward ? input_size.len : x->ndim,
                     output_size, scale_factors, o) != 0)
        return NULL;
    tg_int_list os = { .len = 2, .data = o };
    tg_opt_float sh = scale_value(scale_factors, 0), sw = scale_value(scale_factors, 1);
    switch (kind) {
    case UPS_NEAREST: return tg_upsample_nearest2d(x, os, .scales_h = sh, .scales_w = sw);
    case UPS_NEAREST_BACKWARD:
        return tg_upsample_nearest2d_backward(x, os, input_size, .scales_h = sh, .scales_w = sw);
    case UPS_BILINEAR:
        return tg_upsample_bilinear2d(x, os, align_corners, .scales_h = sh, .scales_w = sw);
    default:
        return tg_upsample_bilinear2d_backward(x, os, input_size, align_corners, .scales_h = sh,
                                               .scales_w = sw);
    }
}

tg_tensor *tg__composite_upsample_nearest2d_vec(tg_tensor *input, tg_int_list output_size,
                                                tg_float_list scale_factors)
{
    return ups_vec("upsample_nearest2d", UPS_NEAREST, input, output_size, TG_NO_INTS, false,
                   scale_factors);
}

tg_tensor *tg__composite_upsample_nearest2d_backward_vec(tg_tensor *grad_output,
                                                         tg_int_list output_size,
                                                         tg_int_list input_size,
                                                         tg_float_list scale_factors)
{
    return ups_vec("upsample_nearest2d_backward", UPS_NEAREST_BACKWARD, grad_output, output_size,
                   input_size, false, scale_factors);
}

tg_tensor *tg__composite_upsample_bilinear2d_vec(tg_tensor *input, tg_int_list output_size,
                                                 bool align_corners, tg_float_list scale_factors)
{
    return ups_vec("upsample_bilinear2d", UPS_BILINEAR, input, output_size, TG_NO_INTS,
                   align_corners, scale_factors);
}

tg_tensor *tg__composite_upsample_bilinear2d_backward_vec(tg_tensor *grad_output,
                                                          tg_int_list output_size,
                                                          tg_int_list input_size,
                                                          bool align_corners,
                                                          tg_float_list scale_factors)
{
    return ups_vec("upsample_bilinear2d_backward", UPS_BILINEAR_BACKWARD, grad_output, output_size,
                   input_size, align_corners, scale_factors);
}
