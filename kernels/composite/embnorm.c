/* Embedding and normalization composites (CompositeImplicitAutograd, so they need no
 * derivative entries):
 *   layer_norm                      native_layer_norm's output (PyTorch 1.13's layer_norm);
 *   rms_norm                        PyTorch 2.x's formula, input * rsqrt(mean(input^2) + eps)
 *                                   (* weight), in differentiable operators;
 *   embedding_backward              embedding_dense_backward (sparse=True refused);
 *   embedding_dense_double_backward the rows of grad picked by indices, zero at padding_idx
 *                                   (FunctionsManual's helper), through embedding, so that it
 *                                   differentiates again;
 *   layer_norm_double_backward      native_layer_norm_backward's derivative (below);
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
#include "ops/neg.h"
#include "ops/pow.h"
#include "ops/rsqrt.h"
#include "ops/sub.h"
#include "ops/sum.h"
#include "ops/to.h"
#include "ops/unsqueeze.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/embedding_backward.h"
#include "kernels/embedding_dense_double_backward.h"
#include "kernels/layer_norm.h"
#include "kernels/layer_norm_double_backward.h"
#include "kernels/one_hot.h"
#include "kernels/rms_norm.h"
#include "composite_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

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

tg_tensor *tg__composite_rms_norm(tg_tensor *input, tg_int_list normalized_shape, tg_tensor *weight,
                                  tg_opt_float eps)
{
    const char *op = "rms_norm";
    int64_t m, n;
    if (tg__layer_norm_inputs_check(op, input, normalized_shape, weight, NULL, &m, &n) != 0)
        return NULL;
    /* the trailing len(normalized_shape) dims, innermost first as PyTorch lists them */
    int64_t dims[TG_MAX_DIMS];
    for (int64_t i = 0; i < normalized_shape.len; i++) dims[i] = input->ndim - i - 1;
    tg_int_list dl = { .len = normalized_shape.len, .data = dims };
    double e = !tg_is_none_float(eps)       ? eps
               : input->dtype == TG_FLOAT64 ? DBL_EPSILON
                                            : FLT_EPSILON;
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
    return tg_embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq);
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

/* ------------------------------------------------------------------ layer norm double backward
 *
 * Per row of N elements (r = rstd, xhat = (x - mean) * r, g = gO * gamma), the backward is
 *   dx = P(g),  dgamma = sum_rows(gO * xhat),  dbeta = sum_rows(gO),
 * with P(u) = r * (u - mean(u) - xhat * mean(u * xhat)), which is also the Jacobian of xhat
 * with respect to x (symmetric), and d r / d x = -r^2 xhat / N. Given ggI, ggG, ggB (the
 * gradients of dx, dgamma, dbeta), the chain rule gives
 *   gO:    gamma * P(ggI) + ggG * xhat + ggB
 *   gamma: sum_rows(gO * P(ggI))
 *   x:     P(v + ggG * gO) - mean(ggI * (g - mean(g) - xhat * mean(g * xhat))) * r^2 * xhat,
 *          v = -r * (mean(g * xhat) * ggI + mean(ggI * xhat) * g)
 * (means over the normalized dims, keepdim; sums over the leading dims). Every intermediate
 * goes to an arena released at the end. */

enum { LNDB_MAX = 96 };

typedef struct lndb_arena {
    tg_tensor *t[LNDB_MAX];
    int n;
    bool fail;
} lndb_arena;

/* Keeps r in the arena (a NULL result marks the arena failed; the error is recorded). */
static tg_tensor *lndb_keep(lndb_arena *a, tg_tensor *r)
{
    if (!r || a->n == LNDB_MAX) {
        if (r) {
            tg_release(r);
            tg_set_error("layer_norm_double_backward", "too many intermediates");
        }
        a->fail = true;
        return NULL;
    }
    a->t[a->n++] = r;
    return r;
}

/* Evaluates expr only while nothing has failed. */
#define K(expr) (a->fail ? NULL : lndb_keep(a, (expr)))

typedef struct lndb_ctx {
    lndb_arena *a;
    tg_int_list rowdims, lead; /* the normalized dims; the leading dims */
    tg_tensor *r, *xhat;
} lndb_ctx;

static tg_tensor *lndb_mean(lndb_ctx *c, tg_tensor *u)
{
    lndb_arena *a = c->a;
    return K(tg_mean(u, .dim = c->rowdims, .keepdim = true));
}

/* P(u) = r * (u - mean(u) - xhat * mean(u * xhat)) */
static tg_tensor *lndb_proj(lndb_ctx *c, tg_tensor *u)
{
    lndb_arena *a = c->a;
    tg_tensor *m = lndb_mean(c, u);
    tg_tensor *ux = K(tg_mul(u, c->xhat));
    tg_tensor *mx = ux ? lndb_mean(c, ux) : NULL;
    tg_tensor *t = K(tg_sub(u, m));
    tg_tensor *xm = K(tg_mul(c->xhat, mx));
    t = K(tg_sub(t, xm));
    return K(tg_mul(t, c->r));
}

/* sum over the leading dims (none: u itself). */
static tg_tensor *lndb_sum_rows(lndb_ctx *c, tg_tensor *u)
{
    lndb_arena *a = c->a;
    if (c->lead.len == 0) return u;
    return K(tg_sum(u, .dim = c->lead));
}

static tg_tensor *lndb_add(lndb_arena *a, tg_tensor *acc, tg_tensor *t)
{
    if (!acc) return t;
    return K(tg_add(acc, t));
}

static tg_tensors3 lndb_run(lndb_arena *a, tg_tensor *input, tg_tensor *gamma, tg_tensor *ggI,
                            tg_tensor *ggG, tg_tensor *ggB, tg_tensor *gO, tg_tensor *mean,
                            tg_tensor *rstd, tg_int_list ns, tg_bool_list output_mask)
{
    tg_tensors3 res = { NULL, NULL, NULL };
    bool mask[3];
    tg__k_output_mask(output_mask, mask);
    int64_t dims[TG_MAX_DIMS], lead[TG_MAX_DIMS];
    int64_t k = ns.len, nd = input->ndim;
    for (int64_t i = 0; i < k; i++) dims[i] = nd - k + i;
    for (int64_t i = 0; i < nd - k; i++) lead[i] = i;
    lndb_ctx c = { a, { .len = k, .data = dims }, { .len = nd - k, .data = lead }, rstd, NULL };
    c.xhat = K(tg_sub(input, mean));
    c.xhat = K(tg_mul(c.xhat, rstd));
    tg_tensor *g = gamma ? K(tg_mul(gO, gamma)) : gO;
    tg_tensor *gI = NULL, *gG = NULL, *ggO = NULL;
    if (ggI) {
        tg_tensor *pgg = lndb_proj(&c, ggI);
        if (mask[2]) ggO = gamma ? K(tg_mul(pgg, gamma)) : pgg;
        tg_tensor *gp = mask[1] && gamma ? K(tg_mul(gO, pgg)) : NULL;
        if (gp) gG = lndb_sum_rows(&c, gp);
        if (mask[0]) {
            tg_tensor *gx = K(tg_mul(g, c.xhat));
            tg_tensor *b = gx ? lndb_mean(&c, gx) : NULL;
            tg_tensor *ix = K(tg_mul(ggI, c.xhat));
            tg_tensor *mix = ix ? lndb_mean(&c, ix) : NULL;
            /* v = -r * (b * ggI + mix * g) */
            tg_tensor *v = K(tg_mul(ggI, b));
            tg_tensor *gm = K(tg_mul(g, mix));
            v = K(tg_add(v, gm));
            v = K(tg_mul(v, rstd));
            v = K(tg_neg(v));
            /* C = mean(ggI * (g - mean(g) - xhat * b)) */
            tg_tensor *mg = lndb_mean(&c, g);
            tg_tensor *t = K(tg_sub(g, mg));
            tg_tensor *xb = K(tg_mul(c.xhat, b));
            t = K(tg_sub(t, xb));
            t = K(tg_mul(ggI, t));
            tg_tensor *cc = t ? lndb_mean(&c, t) : NULL;
            /* - C * r^2 * xhat */
            tg_tensor *corr = K(tg_mul(cc, rstd));
            corr = K(tg_mul(corr, rstd));
            corr = K(tg_mul(corr, c.xhat));
            gI = v ? lndb_proj(&c, v) : NULL;
            gI = K(tg_sub(gI, corr));
        }
    }
    if (ggG) {
        tg_tensor *u2 = mask[0] ? K(tg_mul(gO, ggG)) : NULL;
        if (u2) gI = lndb_add(a, gI, lndb_proj(&c, u2));
        if (mask[2]) ggO = lndb_add(a, ggO, K(tg_mul(c.xhat, ggG)));
    }
    if (ggB && mask[2]) {
        /* ggB broadcast to gO's shape */
        tg_tensor *z = K(tg_mul_scalar(gO, 0.0));
        ggO = lndb_add(a, ggO ? ggO : z, ggB);
    }
    if (a->fail) return res;
    /* zeros where a requested gradient got no contribution, like PyTorch's undefined-safe sums */
    if (mask[0] && !gI) gI = K(tg_mul_scalar(input, 0.0));
    if (mask[1] && gamma && !gG) gG = K(tg_mul_scalar(gamma, 0.0));
    if (mask[2] && !ggO) ggO = K(tg_mul_scalar(gO, 0.0));
    if (a->fail) return res;
    res.r0 = mask[0] ? tg_retain(gI) : NULL;
    res.r1 = mask[1] && gamma ? tg_retain(gG) : NULL;
    res.r2 = mask[2] ? tg_retain(ggO) : NULL;
    return res;
}

#undef K

tg_tensors3 tg__composite_layer_norm_double_backward(tg_tensor *input, tg_tensor *gamma,
                                                     tg_tensor *ggI, tg_tensor *ggG, tg_tensor *ggB,
                                                     tg_tensor *gO, tg_tensor *save_mean,
                                                     tg_tensor *save_invstd,
                                                     tg_int_list normalized_shape,
                                                     tg_bool_list output_mask)
{
    const char *op = "layer_norm_double_backward";
    tg_tensors3 res = { NULL, NULL, NULL };
    int64_t m, n;
    if (tg__layer_norm_inputs_check(op, input, normalized_shape, gamma, NULL, &m, &n) != 0)
        return res;
    lndb_arena *a = calloc(1, sizeof *a);
    if (!a) {
        tg__error(op, "out of memory");
        return res;
    }
    res = lndb_run(a, input, gamma, ggI, ggG, ggB, gO, save_mean, save_invstd, normalized_shape,
                   output_mask);
    for (int i = 0; i < a->n; i++) tg_release(a->t[i]);
    free(a);
    return res;
}
