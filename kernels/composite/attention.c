/* scaled_dot_product_attention (CompositeImplicitAutograd): the fused kernel
 * (_scaled_dot_product_fused_attention, kernels/cpu/attention.c, kernels/cuda/attention.cu)
 * when it applies, else _scaled_dot_product_attention_math, the reference written with matmul,
 * masked_fill / add, softmax and dropout, which returns (output, attention weights) as
 * PyTorch's does. Autograd flows through the operators each calls: the fused operator has its
 * own derivative (its backward operator), the math path its parts'.
 *
 * The fused path is taken when dropout_p == 0, query, key and value are 4-D float32/float64
 * tensors with equal (batch, heads) on one device, and attn_mask (if any) needs no gradient
 * (the fused backward gives none for it) and has at most 4 dims; on CUDA the head dims are at
 * most 128. Everything else (3-D or
 * broadcast batch dims, dropout, float16, a learned mask) takes the math path. */
#include "tg_kutil.h"
#include "attention_checks.h"
/* The public functions of the operators called here. */
#include "ops/_scaled_dot_product_attention_math.h"
#include "ops/_scaled_dot_product_fused_attention.h"
#include "ops/add.h"
#include "ops/div.h"
#include "ops/dropout.h"
#include "ops/eq.h"
#include "ops/masked_fill.h"
#include "ops/matmul.h"
#include "ops/mul.h"
#include "ops/ones.h"
#include "ops/softmax.h"
#include "ops/transpose.h"
#include "ops/triu.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/_scaled_dot_product_attention_math.h"
#include "kernels/scaled_dot_product_attention.h"
#include "composite_util.h"

#include <math.h>

/* The scores after the mask: is_causal masks keys j > i (tril(ones(L, S)) kept), a bool mask
 * masks its False entries, a floating mask is added. Consumes att. */
static tg_tensor *apply_mask(tg_tensor *att, tg_tensor *mask, bool is_causal, int64_t L, int64_t S)
{
    if (is_causal) {
        int64_t sz[2] = { L, S };
        tg_int_list size = { .len = 2, .data = sz };
        tg_tensor *ones = tg_ones(size, .dtype = TG_BOOL, .device = tg_tensor_device(att));
        tg_tensor *drop = ones ? tg__then(ones, tg_triu(ones, .diagonal = 1)) : NULL;
        if (!drop) return tg__then(att, NULL);
        return tg__then2(att, drop, tg_masked_fill_scalar(att, drop, -INFINITY));
    }
    if (!mask) return att;
    if (mask->dtype == TG_BOOL) {
        tg_tensor *drop = tg_eq_scalar(mask, 0);
        if (!drop) return tg__then(att, NULL);
        return tg__then2(att, drop, tg_masked_fill_scalar(att, drop, -INFINITY));
    }
    return tg__then(att, tg_add(att, mask));
}

tg_tensors2 tg__composite_scaled_dot_product_attention_math(tg_tensor *query, tg_tensor *key,
                                                            tg_tensor *value, tg_tensor *attn_mask,
                                                            double dropout_p, bool is_causal,
                                                            tg_tensor *dropout_mask,
                                                            tg_opt_float scale)
{
    const char *op = "_scaled_dot_product_attention_math";
    tg_tensors2 r = { NULL, NULL };
    if (tg__sdpa_check_qkv(op, query, key, value) != 0 ||
        tg__sdpa_check_mask(op, query, attn_mask, is_causal) != 0)
        return r;
    int64_t E = query->sizes[query->ndim - 1];
    double sc = !tg_is_none_float(scale) ? scale : 1.0 / sqrt((double)(E > 0 ? E : 1));
    tg_tensor *kt = tg_transpose(key, -2, -1);
    tg_tensor *att = kt ? tg__then(kt, tg_matmul(query, kt)) : NULL;
    if (att) att = tg__then(att, tg_mul_scalar(att, sc));
    if (att)
        att = apply_mask(att, attn_mask, is_causal, query->sizes[query->ndim - 2],
                         key->sizes[key->ndim - 2]);
    if (att) att = tg__then(att, tg_softmax(att, -1));
    if (att && dropout_p > 0) {
        if (dropout_mask) {
            tg_tensor *d = tg_mul(att, dropout_mask);
            att = tg__then(att, d ? tg__then(d, tg_div_scalar(d, 1.0 - dropout_p)) : NULL);
        } else {
            att = tg__then(att, tg_dropout(att, dropout_p, true));
        }
    }
    if (!att) return r;
    r.r0 = tg_matmul(att, value);
    if (!r.r0) {
        tg_release(att);
        return r;
    }
    r.r1 = att;
    return r;
}

/* Whether the fused kernel computes this call (see the file comment). */
static bool fused_applies(const tg_tensor *q, const tg_tensor *k, const tg_tensor *v,
                          const tg_tensor *mask, double dropout_p)
{
    if (dropout_p != 0) return false;
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4) return false;
    if (q->dtype != TG_FLOAT32 && q->dtype != TG_FLOAT64) return false;
    for (int d = 0; d < 2; d++)
        if (k->sizes[d] != q->sizes[d] || v->sizes[d] != q->sizes[d]) return false;
    if (q->device.type != k->device.type || q->device.index != k->device.index ||
        q->device.type != v->device.type || q->device.index != v->device.index)
        return false;
    if (q->device.type == TG_CUDA && (q->sizes[3] > 128 || v->sizes[3] > 128))
        return false; /* the CUDA kernel's shared tiles hold head dims up to 128 */
    if (mask) {
        if (mask->ndim > 4 || tg_tensor_requires_grad(mask)) return false;
        if (mask->device.type != q->device.type || mask->device.index != q->device.index)
            return false;
        const int64_t want[4] = { q->sizes[0], q->sizes[1], q->sizes[2], k->sizes[2] };
        for (int64_t d = 0; d < mask->ndim; d++) /* else the math path reports it */
            if (mask->sizes[d] != 1 && mask->sizes[d] != want[4 - mask->ndim + d]) return false;
    }
    return true;
}

tg_tensor *tg__composite_scaled_dot_product_attention(tg_tensor *query, tg_tensor *key,
                                                      tg_tensor *value, tg_tensor *attn_mask,
                                                      double dropout_p, bool is_causal,
                                                      tg_opt_float scale)
{
    const char *op = "scaled_dot_product_attention";
    if (tg__sdpa_check_qkv(op, query, key, value) != 0 ||
        tg__sdpa_check_mask(op, query, attn_mask, is_causal) != 0)
        return NULL;
    if (fused_applies(query, key, value, attn_mask, dropout_p)) {
        tg_output_logsumexp f = tg__scaled_dot_product_fused_attention(
            query, key, value, .is_causal = is_causal, .attn_mask = attn_mask, .scale = scale);
        tg_release(f.logsumexp);
        return f.output;
    }
    tg_tensors2 m = tg__scaled_dot_product_attention_math(query, key, value, .attn_mask = attn_mask,
                                                          .dropout_p = dropout_p,
                                                          .is_causal = is_causal, .scale = scale);
    tg_release(m.r1);
    return m.r0;
}
