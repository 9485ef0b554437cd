/* Argument checks and geometry of the fused attention operators
 * (_scaled_dot_product_fused_attention and its backward), shared by the CPU kernels
 * (kernels/cpu/attention.c) and the CUDA kernels (kernels/cuda/attention.cu); the composite
 * (kernels/composite/attention.c) uses the input checks too. Static inline, C and C++. Each check
 * returns 0, or -1 with the error recorded. */
#ifndef TG_ATTENTION_CHECKS_H
#define TG_ATTENTION_CHECKS_H

#include "tg_kutil.h"

#include <math.h>

/* What one fused call works on: query (B, H, L, E), key (B, H, S, E), value (B, H, S, Ev), all
 * element strides; the mask broadcast to (B, H, L, S) (stride 0 along broadcast dims). */
typedef struct tg_attn_geom {
    int64_t B, H, L, S, E, Ev;
    int64_t qs[4], ks[4], vs[4], ms[4];
    int mask_kind; /* 0 none, 1 bool (False = masked out), 2 floating (added; query's dtype) */
    bool causal;   /* top-left: row i takes keys j <= i */
    double scale;
} tg_attn_geom;

/* Query, key and value of one dtype; at least 2-D; equal head dims (query and key) and key
 * counts (key and value). PyTorch's sdp_utils messages for dtype and rank. */
static inline int tg__sdpa_check_qkv(const char *op, const tg_tensor *q, const tg_tensor *k,
                                     const tg_tensor *v)
{
    if (q->dtype != k->dtype || q->dtype != v->dtype)
        return tg__fail(op,
                        "Expected query, key, and value to have the same dtype, but got "
                        "query.dtype: %s key.dtype: %s and value.dtype: %s instead.",
                        tg__k_meta_name(q->dtype), tg__k_meta_name(k->dtype),
                        tg__k_meta_name(v->dtype));
    if (q->device.type != k->device.type || q->device.type != v->device.type)
        return tg__fail(op, "Expected query, key, and value to have the same device type");
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
        return tg__fail(op,
                        "Expected query, key, and value to all be  at least 2 dimensional, but got "
                        "query.dim: %lld key.dim: %lld and value.dim: %lld instead.",
                        (long long)q->ndim, (long long)k->ndim, (long long)v->ndim);
    if (!tg_dtype_is_floating(q->dtype))
        return tg__fail(op, "expected query, key and value to be floating, got %s",
                        tg__k_meta_name(q->dtype));
    if (q->sizes[q->ndim - 1] != k->sizes[k->ndim - 1])
        return tg__fail(op,
                        "query and key must have the same head dimension (last dim), but got "
                        "query %lld and key %lld",
                        (long long)q->sizes[q->ndim - 1], (long long)k->sizes[k->ndim - 1]);
    if (k->sizes[k->ndim - 2] != v->sizes[v->ndim - 2])
        return tg__fail(op,
                        "key and value must have the same sequence length (dim -2), but got key "
                        "%lld and value %lld",
                        (long long)k->sizes[k->ndim - 2], (long long)v->sizes[v->ndim - 2]);
    return 0;
}

/* attn_mask: bool, or floating (PyTorch also takes query's dtype); not with is_causal. */
static inline int tg__sdpa_check_mask(const char *op, const tg_tensor *q, const tg_tensor *mask,
                                      bool is_causal)
{
    if (!mask) return 0;
    if (is_causal)
        return tg__fail(op, "_scaled_dot_product_attention: Explicit attn_mask should not be set "
                            "when is_causal=True");
    if (mask->dtype != TG_BOOL && !tg_dtype_is_floating(mask->dtype) && mask->dtype != q->dtype)
        return tg__fail(op,
                        "Expected attn_mask dtype to be bool or float or to match query dtype, but "
                        "got attn_mask.dtype: %s and  query.dtype: %s instead.",
                        tg__k_meta_name(mask->dtype), tg__k_meta_name(q->dtype));
    return 0;
}

/* The fused operators' inputs: float32/float64 4-D (B, H, ., .) with equal B and H, no dropout,
 * a mask broadcastable to (B, H, L, S). Fills g (strides as given: the kernels require the last
 * dim contiguous and copy otherwise, before calling this). */
static inline int tg__attn_fused_check(const char *op, const tg_tensor *q, const tg_tensor *k,
                                       const tg_tensor *v, const tg_tensor *mask, double dropout_p,
                                       bool is_causal, tg_opt_float scale, tg_attn_geom *g)
{
    if (tg__sdpa_check_qkv(op, q, k, v) != 0) return -1;
    if (q->dtype != TG_FLOAT32 && q->dtype != TG_FLOAT64)
        return tg__fail(op, "the fused kernel supports float and double, got %s",
                        tg__k_meta_name(q->dtype));
    if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
        return tg__fail(op,
                        "expected 4-D (batch, heads, seq, head_dim) query, key and value, got "
                        "%lld-D, %lld-D and %lld-D",
                        (long long)q->ndim, (long long)k->ndim, (long long)v->ndim);
    for (int d = 0; d < 2; d++)
        if (k->sizes[d] != q->sizes[d] || v->sizes[d] != q->sizes[d])
            return tg__fail(op,
                            "query, key and value must have the same batch and head sizes, got "
                            "dim %d of sizes %lld, %lld and %lld",
                            d, (long long)q->sizes[d], (long long)k->sizes[d],
                            (long long)v->sizes[d]);
    if (dropout_p != 0)
        return tg__fail(op, "the fused kernel has no dropout (dropout_p must be 0, got %g)",
                        dropout_p);
    if (tg__sdpa_check_mask(op, q, mask, is_causal) != 0) return -1;
    g->B = q->sizes[0];
    g->H = q->sizes[1];
    g->L = q->sizes[2];
    g->E = q->sizes[3];
    g->S = k->sizes[2];
    g->Ev = v->sizes[3];
    for (int d = 0; d < 4; d++) {
        g->qs[d] = q->strides[d];
        g->ks[d] = k->strides[d];
        g->vs[d] = v->strides[d];
        g->ms[d] = 0;
    }
    g->causal = is_causal;
    g->scale = !tg_is_none_float(scale) ? scale : 1.0 / sqrt((double)(g->E > 0 ? g->E : 1));
    g->mask_kind = 0;
    if (mask) {
        const int64_t want[4] = { g->B, g->H, g->L, g->S };
        if (mask->ndim > 4)
            return tg__fail(op, "attn_mask must have at most 4 dims, got %lld",
                            (long long)mask->ndim);
        for (int64_t d = 0; d < mask->ndim; d++) {
            int64_t wd = 4 - mask->ndim + d;
            if (mask->sizes[d] != want[wd] && mask->sizes[d] != 1) {
                char a[96], b[96];
                return tg__fail(op, "attn_mask of shape %s is not broadcastable to %s",
                                tg__shape_str(a, sizeof a, mask->sizes, mask->ndim),
                                tg__shape_str(b, sizeof b, want, 4));
            }
            g->ms[wd] = mask->sizes[d] == 1 ? 0 : mask->strides[d];
        }
        g->mask_kind = mask->dtype == TG_BOOL ? 1 : 2;
    }
    return 0;
}

/* The backward's extra tensors: grad_out and out (B, H, L, Ev), logsumexp (B, H, L), all of
 * query's dtype and device. */
static inline int tg__attn_backward_check(const char *op, const tg_tensor *grad_out,
                                          const tg_tensor *out, const tg_tensor *lse,
                                          const tg_attn_geom *g, tg_dtype dt)
{
    const int64_t os[4] = { g->B, g->H, g->L, g->Ev };
    const tg_tensor *ts[2] = { grad_out, out };
    const char *names[2] = { "grad_out", "out" };
    for (int t = 0; t < 2; t++) {
        bool ok = ts[t]->ndim == 4 && ts[t]->dtype == dt;
        for (int d = 0; ok && d < 4; d++) ok = ts[t]->sizes[d] == os[d];
        if (!ok) {
            char a[96], b[96];
            return tg__fail(op, "%s must be %s of shape %s, got %s of shape %s", names[t],
                            tg__k_meta_name(dt), tg__shape_str(a, sizeof a, os, 4),
                            tg__k_meta_name(ts[t]->dtype),
                            tg__shape_str(b, sizeof b, ts[t]->sizes, ts[t]->ndim));
        }
    }
    bool ok = lse->ndim == 3 && lse->dtype == dt && lse->sizes[0] == g->B &&
              lse->sizes[1] == g->H && lse->sizes[2] == g->L;
    if (!ok) {
        char a[96], b[96];
        return tg__fail(op, "logsumexp must be %s of shape %s, got %s of shape %s",
                        tg__k_meta_name(dt), tg__shape_str(a, sizeof a, os, 3),
                        tg__k_meta_name(lse->dtype),
                        tg__shape_str(b, sizeof b, lse->sizes, lse->ndim));
    }
    return 0;
}

#endif
