/* Embedding and normalization composites (CompositeImplicitAutograd, so they need no
 * derivative entries):
 *   layer_norm                      native_layer_norm's output (PyTorch 1.13's layer_norm);
 *   rms_norm                        PyTorch 2.x's formula, input * rsqrt(mean(input^2) + eps)
 *                                   (* weight), in differentiable operators;
 *   embedding_backward              embedding_dense_backward (sparse=True refused);
 *   embedding_dense_double_backward the rows of grad picked by indices, zero at padding_idx
 *                                   (FunctionsManual's helper), through embedding, so that it
 *                                   differentiates again;
 *   one_hot                         PyTorch 1.13's checks, then (self[..., None] == arange(C))
 *                                   as int64 (no scatter needed; works on every device).
 * Each returns a new reference, or NULL with an error recorded; intermediates are released on
 * every path. */
#include "tg_kutil.h"
#include "embnorm_checks.h"
/* The public functions of the operators called here. */
#include "ops/amax.h"
#include "ops/amin.h"
#include "ops/arange.h"
#include "ops/add.h"
#include "ops/embedding.h"
#include "ops/embedding_dense_backward.h"
#include "ops/eq.h"
#include "ops/mean.h"
#include "ops/mul.h"
#include "ops/native_layer_norm.h"
#include "ops/ne.h"
#include "ops/pow.h"
#include "ops/rsqrt.h"
#include "ops/to.h"
#include "ops/unsqueeze.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/embedding_backward.h"
#include "kernels/embedding_dense_double_backward.h"
#include "kernels/layer_norm.h"
#include "kernels/one_hot.h"
#include "kernels/rms_norm.h"
#include "composite_util.h"

#include <float.h>
#include <math.h>

tg_tensor *tg__composite_layer_norm(tg_tensor *input, tg_int_list normalized_shape,
                                    tg_tensor *weight, tg_tensor *bias, double eps,
                                    bool cudnn_enable)
{
    (void)cudnn_enable; /* deprecated in PyTorch too */
    tg_tensors3 r = tg_native_layer_norm(input, normalized_shape, weight, bias, eps);
    tg_release(r.r1);
    tg_release(r.r2);
    return r.r0;
}

tg_tensor *tg__composite_rms_norm(tg_tensor *input, tg_int_list normalized_shape,
                                  tg_tensor *weight, tg_opt_float eps)
{
    const char *op = "rms_norm";
    int64_t m, n;
    if (tg__layer_norm_inputs_check(op, input, normalized_shape, weight, NULL, &m, &n) != 0)
        return NULL;
    /* the trailing len(normalized_shape) dims, innermost first as PyTorch lists them */
    int64_t dims[TG_MAX_DIMS];
    for (int64_t i = 0; i < normalized_shape.len; i++) dims[i] = input->ndim - i - 1;
    tg_int_list dl = { dims, normalized_shape.len };
    double e = eps.has_value ? eps.value : input->dtype == TG_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
    tg_tensor *sq = tg_pow_scalar(input, 2.0);
    tg_tensor *ms = sq ? tg__then(sq, tg_mean(sq, .dim = dl, .keepdim = true)) : NULL;
    tg_tensor *rs = ms ? tg__then(ms, tg_add_scalar(ms, e)) : NULL;
    rs = rs ? tg__then(rs, tg_rsqrt(rs)) : NULL;
    tg_tensor *y = rs ? tg__then(rs, tg_mul(input, rs)) : NULL;
    if (y && weight) y = tg__then(y, tg_mul(y, weight));
    return y;
}

tg_tensor *tg__composite_embedding_backward(tg_tensor *grad, tg_tensor *indices,
                                            int64_t num_weights, int64_t padding_idx,
                                            bool scale_grad_by_freq, bool sparse)
{
    if (sparse) {
        tg__error("embedding_backward",
                  "sparse=True is not supported (tensorgen has no sparse tensors); use "
                  "sparse=False");
        return NULL;
    }
    return tg_embedding_dense_backward(grad, indices, num_weights, padding_idx,
                                       scale_grad_by_freq);
}

tg_tensor *tg__composite_embedding_dense_double_backward(tg_tensor *grad, tg_tensor *indices,
                                                         int64_t padding_idx)
{
    /* scale_grad_by_freq is not applied here, as in PyTorch (its helper ignores it) */
    tg_tensor *gg = tg_embedding(grad, indices);
    if (!gg || padding_idx < 0) return gg;
    tg_tensor *keep = tg_ne_scalar(indices, (double)padding_idx);
    keep = keep ? tg__then(keep, tg_unsqueeze(keep, -1)) : NULL;
    keep = keep ? tg__then(keep, tg_to(keep, grad->dtype)) : NULL;
    return keep ? tg__then2(keep, gg, tg_mul(gg, keep)) : tg__then(gg, NULL);
}

tg_tensor *tg__composite_one_hot(tg_tensor *self, int64_t num_classes)
{
    const char *op = "one_hot";
    if (self->dtype != TG_INT64) {
        tg__error(op, "one_hot is only applicable to index tensor.");
        return NULL;
    }
    if (tg__numel(self) == 0 && num_classes <= 0) {
        tg__error(op, "Can not infer total number of classes from empty tensor.");
        return NULL;
    }
    if (tg__numel(self) > 0) {
        /* PyTorch checks on the host (a synchronising read on CUDA); so do we, on every
         * device, so that a bad class is an error and not a silent zero row */
        tg_tensor *mn = tg_amin(self), *mx = mn ? tg_amax(self) : NULL;
        if (!mx) {
            tg_release(mn);
            return NULL;
        }
        int64_t lo = (int64_t)tg_item(mn), hi = (int64_t)tg_item(mx);
        tg_release(mn);
        tg_release(mx);
        if (lo < 0) {
            tg__error(op, "Class values must be non-negative.");
            return NULL;
        }
        if (num_classes == -1) num_classes = hi + 1;
        else if (num_classes <= hi) {
            tg__error(op, "Class values must be smaller than num_classes.");
            return NULL;
        }
    }
    tg_tensor *cls = tg_arange((double)num_classes, .dtype = TG_INT64, .device = self->device);
    tg_tensor *s = cls ? tg_unsqueeze(self, -1) : NULL;
    tg_tensor *hit = s ? tg__then2(s, cls, tg_eq(s, cls)) : tg__then(cls, NULL);
    return hit ? tg__then(hit, tg_to(hit, TG_INT64)) : NULL;
}
