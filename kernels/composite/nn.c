/* Training layers and losses built from other operators (CompositeImplicitAutograd, so they
 * need no derivative entries): linear, mse_loss, nll_loss (over nll_loss_forward),
 * cross_entropy_loss (log_softmax + nll_loss, class-probability targets, label smoothing),
 * dropout (over native_dropout).
 *
 * reduction follows PyTorch's at::Reduction: 0 none, 1 mean, 2 sum. Every function returns a
 * new reference, or NULL with an error recorded; intermediates are released on every path. */
#include "tg_kutil.h"
/* The public functions of the operators called here. */
#include "ops/add.h"
#include "ops/addmm.h"
#include "ops/div.h"
#include "ops/eq.h"
#include "ops/log_softmax.h"
#include "ops/matmul.h"
#include "ops/mean.h"
#include "ops/mul.h"
#include "ops/native_dropout.h"
#include "ops/neg.h"
#include "ops/nll_loss_forward.h"
#include "ops/permute.h"
#include "ops/reshape.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/t.h"
#include "ops/view.h"
#include "ops/where.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/cross_entropy_loss.h"
#include "kernels/dropout.h"
#include "kernels/linear.h"
#include "kernels/mse_loss.h"
#include "kernels/nll_loss.h"
#include "composite_util.h"

#include <math.h>
#include <string.h>

enum { RED_NONE = 0, RED_MEAN = 1, RED_SUM = 2 };

static int check_reduction(const char *op, int64_t reduction)
{
    if (reduction == RED_NONE || reduction == RED_MEAN || reduction == RED_SUM) return 0;
    return tg__fail(op, "reduction must be 0 (none), 1 (mean) or 2 (sum), but got %lld",
                    (long long)reduction);
}

/* loss reduced as asked; `loss` is consumed. */
static tg_tensor *reduce_loss(tg_tensor *loss, int64_t reduction)
{
    if (reduction == RED_MEAN) return tg__then(loss, tg_mean(loss));
    if (reduction == RED_SUM) return tg__then(loss, tg_sum(loss));
    return loss;
}

/* ------------------------------------------------------------------ linear */

/* input (*, in) @ weight^T (out, in) + bias (out): addmm for a 2-D input with a bias (one
 * BLAS call, bias folded in as beta * C), matmul otherwise. */
tg_tensor *tg__composite_linear(tg_tensor *input, tg_tensor *weight, tg_tensor *bias)
{
    tg_tensor *wt = tg_t(weight);
    if (!wt) return NULL;
    if (input->ndim == 2 && bias) return tg__then(wt, tg_addmm(bias, input, wt));
    if (input->ndim > 2 && weight->ndim == 2 && bias && tg_tensor_is_contiguous(input)) {
        /* (*, in) as one (rows, in) matrix: the bias rides in the GEMM (beta = 1) instead of
         * a second pass over the result; the result viewed back as (*, out). */
        int64_t sizes[TG_MAX_DIMS];
        memcpy(sizes, input->sizes, sizeof(int64_t) * (size_t)input->ndim);
        sizes[input->ndim - 1] = weight->sizes[0];
        tg_tensor *flat = tg_view(input, TG_INTS(-1, input->sizes[input->ndim - 1]));
        tg_tensor *out2 = flat ? tg_addmm(bias, flat, wt) : NULL;
        tg_release(flat);
        tg_release(wt);
        tg_tensor *out =
            out2 ? tg_view(out2, (tg_int_list){ .len = input->ndim, .data = sizes }) : NULL;
        tg_release(out2);
        return out;
    }
    tg_tensor *out = tg__then(wt, tg_matmul(input, wt));
    if (!bias || !out) return out;
    return tg__then(out, tg_add(out, bias));
}

/* ------------------------------------------------------------------ mse_loss */

tg_tensor *tg__composite_mse_loss(tg_tensor *self, tg_tensor *target, int64_t reduction)
{
    if (check_reduction("mse_loss", reduction) != 0) return NULL;
    if (self->ndim != target->ndim ||
        memcmp(self->sizes, target->sizes, sizeof(int64_t) * (size_t)self->ndim) != 0) {
        char a[256], b[256];
        tg__warn(
            "Using a target size (torch.Size(%s)) that is different to the input size (torch.Size(%s)). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            tg__shape_str(a, sizeof a, target->sizes, target->ndim),
            tg__shape_str(b, sizeof b, self->sizes, self->ndim));
    }
    tg_tensor *d = tg_sub(self, target);
    return reduce_loss(tg__then(d, tg_mul(d, d)), reduction);
}

/* ------------------------------------------------------------------ nll_loss */

/* nll_loss_forward for any rank: (C) and (N, C) directly; (N, C, d1, ...) with the class dim
 * moved last and flattened to (N * d1 * ..., C), the target to (N * d1 * ...); a reduction=none
 * result is viewed back as (N, d1, ...). *total_weight (if asked) gets the summed weight. */
static tg_tensor *nll_nd(tg_tensor *self, tg_tensor *target, tg_tensor *weight, int64_t reduction,
                         int64_t ignore_index, tg_tensor **total_weight)
{
    if (self->ndim < 1)
        return tg__error("nll_loss", "Expected 1 or more dimensions (got %lld)",
                         (long long)self->ndim);
    if (self->ndim != 1 && target->ndim >= 1 && self->sizes[0] != target->sizes[0])
        return tg__error("nll_loss",
                         "Expected input batch_size (%lld) to match target batch_size (%lld).",
                         (long long)self->sizes[0], (long long)target->sizes[0]);
    tg_tensor *x, *t;
    int64_t out_size[TG_MAX_DIMS], nout = 0;
    if (self->ndim <= 2) {
        x = tg_retain(self);
        t = tg_retain(target);
    } else {
        out_size[nout++] = self->sizes[0];
        for (int64_t d = 2; d < self->ndim; d++) out_size[nout++] = self->sizes[d];
        if (target->ndim != nout ||
            memcmp(target->sizes, out_size, sizeof(int64_t) * (size_t)nout) != 0) {
            char a[256], b[256];
            return tg__error("nll_loss", "Expected target size %s, got %s",
                             tg__shape_str(a, sizeof a, out_size, nout),
                             tg__shape_str(b, sizeof b, target->sizes, target->ndim));
        }
        int64_t perm[TG_MAX_DIMS], k = 0;
        perm[k++] = 0;
        for (int64_t d = 2; d < self->ndim; d++) perm[k++] = d;
        perm[k++] = 1;
        tg_tensor *p = tg_permute(self, ((tg_int_list){ .len = k, .data = perm }));
        x = tg__then(p, tg_reshape(p, TG_INTS(-1, self->sizes[1])));
        t = tg_reshape(target, TG_INTS(-1));
    }
    tg_output_total_weight r = tg_nll_loss_forward(x, t, weight, reduction, ignore_index);
    tg_release(x);
    tg_release(t);
    if (total_weight) *total_weight = r.total_weight;
    else tg_release(r.total_weight);
    if (r.output && self->ndim > 2 && reduction == RED_NONE)
        r.output =
            tg__then(r.output, tg_view(r.output, ((tg_int_list){ .len = nout, .data = out_size })));
    if (!r.output && total_weight) {
        tg_release(*total_weight);
        *total_weight = NULL;
    }
    return r.output;
}

tg_tensor *tg__composite_nll_loss(tg_tensor *self, tg_tensor *target, tg_tensor *weight,
                                  int64_t reduction, int64_t ignore_index)
{
    if (check_reduction("nll_loss", reduction) != 0) return NULL;
    return nll_nd(self, target, weight, reduction, ignore_index, NULL);
}

/* ------------------------------------------------------------------ cross_entropy */

/* weight (C) viewed as (1, C, 1, ...) to broadcast against an input of rank ndim (class dim 1). */
static tg_tensor *weight_along_class_dim(tg_tensor *weight, int64_t ndim)
{
    if (ndim <= 1) return tg_retain(weight);
    int64_t shape[TG_MAX_DIMS];
    for (int64_t d = 0; d < ndim; d++) shape[d] = d == 1 ? tg__numel(weight) : 1;
    return tg_view(weight, ((tg_int_list){ .len = ndim, .data = shape }));
}

static int check_weight(tg_tensor *weight, int64_t n_classes)
{
    if (!weight || (weight->ndim == 1 && weight->sizes[0] == n_classes)) return 0;
    char a[256];
    return tg__fail(
        "cross_entropy",
        "cross_entropy: weight tensor should be defined either for all %lld classes or no "
        "classes but got weight tensor of shape: %s",
        (long long)n_classes, tg__shape_str(a, sizeof a, weight->sizes, weight->ndim));
}

/* Class-probability targets (target has self's shape): -sum(target * log_softmax(self)
 * [* weight]) over the class dim, the mean dividing by the number of samples (numel / C). */
static tg_tensor *cross_entropy_prob(tg_tensor *self, tg_tensor *target, tg_tensor *weight,
                                     int64_t reduction, double label_smoothing)
{
    int64_t class_dim = self->ndim == 1 ? 0 : 1, n_classes = self->sizes[class_dim];
    if (check_weight(weight, n_classes) != 0) return NULL;
    tg_tensor *logp = tg_log_softmax(self, class_dim);
    tg_tensor *t = tg_retain(target);
    if (label_smoothing > 0.0) {
        tg_tensor *k = tg_mul_scalar(target, 1 - label_smoothing);
        t = tg__then2(t, k, tg_add_scalar(k, label_smoothing / (double)n_classes));
    }
    tg_tensor *prod = tg__then2(logp, t, tg_mul(logp, t));
    if (weight) {
        tg_tensor *w = weight_along_class_dim(weight, self->ndim);
        prod = tg__then2(prod, w, tg_mul(prod, w));
    }
    tg_tensor *s;
    if (reduction == RED_NONE) {
        s = tg__then(prod, tg_sum(prod, .dim = TG_INTS(class_dim)));
    } else {
        s = tg__then(prod, tg_sum(prod));
        if (reduction == RED_MEAN) {
            double samples = n_classes ? (double)(tg__numel(self) / n_classes) : 0.0;
            s = tg__then(s, tg_div_scalar(s, samples));
        }
    }
    return tg__then(s, tg_neg(s));
}

/* Class-index targets with label smoothing: (1 - ls) * nll + ls / C * smooth, smooth being
 * -sum(log_softmax [* weight]) over classes, zero at ignored targets, and reduced as the nll
 * (a mean divides by nll's total weight: the summed weight, or the count, of the targets not
 * ignored). */
static tg_tensor *cross_entropy_smoothed(tg_tensor *logp, tg_tensor *target, tg_tensor *weight,
                                         int64_t reduction, int64_t ignore_index,
                                         double label_smoothing)
{
    int64_t class_dim = logp->ndim == 1 ? 0 : 1, n_classes = logp->sizes[class_dim];
    tg_tensor *total_weight = NULL;
    tg_tensor *nll = nll_nd(logp, target, weight, reduction, ignore_index, &total_weight);
    if (!nll) return NULL;
    tg_tensor *x = weight ? weight_along_class_dim(weight, logp->ndim) : NULL;
    tg_tensor *lw = x ? tg__then(x, tg_mul(logp, x)) : tg_retain(logp);
    tg_tensor *smooth = tg__then(lw, tg_sum(lw, .dim = TG_INTS(class_dim)));
    smooth = tg__then(smooth, tg_neg(smooth));
    tg_tensor *ignored = tg_eq_scalar(target, (double)ignore_index);
    smooth = tg__then2(smooth, ignored, tg_where_scalar_self(ignored, 0, smooth));
    if (reduction == RED_MEAN) {
        smooth = tg__then(smooth, tg_sum(smooth));
        smooth = tg__then(smooth, tg_div(smooth, total_weight));
    } else {
        smooth = reduce_loss(smooth, reduction);
    }
    tg_release(total_weight);
    tg_tensor *a = tg__then(nll, tg_mul_scalar(nll, 1 - label_smoothing));
    tg_tensor *b = tg__then(smooth, tg_mul_scalar(smooth, label_smoothing / (double)n_classes));
    return tg__then2(a, b, tg_add(a, b));
}

tg_tensor *tg__composite_cross_entropy(tg_tensor *self, tg_tensor *target, tg_tensor *weight,
                                       int64_t reduction, int64_t ignore_index,
                                       double label_smoothing)
{
    const char *op = "cross_entropy";
    if (check_reduction(op, reduction) != 0) return NULL;
    if (self->ndim < 1)
        return tg__error(op, "Expected 1 or more dimensions (got %lld)", (long long)self->ndim);
    int64_t class_dim = self->ndim == 1 ? 0 : 1;
    bool same_shape = self->ndim == target->ndim &&
                      memcmp(self->sizes, target->sizes, sizeof(int64_t) * (size_t)self->ndim) == 0;
    if (same_shape) {
        if (!tg_dtype_is_floating(target->dtype))
            return tg__error(
                op, "Expected floating point type for target with class probabilities, got %s",
                tg__dtype_torch_name(target->dtype));
        if (ignore_index >= 0)
            return tg__error(op, "ignore_index is not supported for floating point target");
        if (label_smoothing > 1.0)
            return tg__error(op, "label_smoothing must be between 0.0 and 1.0. Got: %g",
                             label_smoothing);
        return cross_entropy_prob(self, target, weight, reduction, label_smoothing);
    }
    if (label_smoothing > 1.0)
        return tg__error(op, "label_smoothing must be between 0.0 and 1.0. Got: %g",
                         label_smoothing);
    tg_tensor *logp = tg_log_softmax(self, class_dim);
    if (!logp) return NULL;
    if (label_smoothing > 0.0)
        return tg__then(logp, cross_entropy_smoothed(logp, target, weight, reduction, ignore_index,
                                                     label_smoothing));
    return tg__then(logp, nll_nd(logp, target, weight, reduction, ignore_index, NULL));
}

/* ------------------------------------------------------------------ dropout */

/* In training, native_dropout's output; input itself (a new reference) when p == 0, when not
 * training, or for an empty input, as PyTorch. */
tg_tensor *tg__composite_dropout(tg_tensor *input, double p, bool train)
{
    if (!(p >= 0 && p <= 1))
        return tg__error("dropout", "dropout probability has to be between 0 and 1, but got %g", p);
    if (p == 0 || !train || tg__numel(input) == 0) return tg_retain(input);
    tg_tensors2 r = tg_native_dropout(input, p, true);
    tg_release(r.r1);
    return r.r0;
}
