/* The fused attention kernels on the CPU: _scaled_dot_product_fused_attention (output and
 * logsumexp) and its backward, float32 and float64 (kernels/cpu/attention_tiles.h holds the
 * loops, included once per type).
 *
 * Forward: one task per (batch, head, block of BQ query rows), spread over the OpenMP threads;
 * a task walks the key tiles (BK keys) with an online softmax (running max m and sum l per row,
 * the output rows rescaled when the max grows), so it holds one BQ x BK score tile and never
 * the L x S matrix: memory O(BQ * BK) per thread. With is_causal the key tiles wholly above the
 * diagonal are not visited. logsumexp = m + log(l) is kept for the backward.
 *
 * Backward: one task per (batch, head), which owns that head's dQ, dK and dV rows, so the sums
 * run in one fixed order and the result does not depend on the thread count (deterministic);
 * it recomputes P = exp(S - logsumexp) tile by tile, with D = rowsum(dO * O).
 *
 * Tile sizes: BQ = BK = 64 (a 64 x 64 float tile is 16 KiB, two of them fit L1/L2 with the
 * 64-wide q/k/v rows they multiply); measured against 32 and 128 at B=4, H=12, T=256, d=64.
 *
 * q, k, v (and grad_out, out) are read in place through their strides when the last dim is
 * contiguous and the row stride is at least the row length (the GPT's qkv.view().transpose(1, 2)
 * views are); any other layout is copied once. Masks broadcast with stride 0; a floating mask of
 * another dtype than query is converted once. */
#include "pointwise_convert.h"
#include "tg_kutil.h"
#include "attention_checks.h"
#include "pointwise_scalar.h"
#include "softmax_rows.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/_scaled_dot_product_fused_attention.h"
#include "kernels/_scaled_dot_product_fused_attention_backward.h"

#define BQ 64
#define BK 64

/* x[k] = e^(x[k] - shift), returning the sum: the capability's vector loop for float32. */
static float exp_row_f32(float *x, int64_t n, float shift)
{
    return TG_CAP_PICK(tg__softmax_rows)->exp_shift_f32(x, n, shift);
}
static double exp_row_f64(double *x, int64_t n, double shift)
{
    double s = 0;
    for (int64_t k = 0; k < n; k++) {
        x[k] = exp(x[k] - shift);
        s += x[k];
    }
    return s;
}

#define T float
#define SUF f32
#define GEMM cblas_sgemm
#define EXP_T(x) tg__pw_exp_f32(x)
#define EXP_ROW exp_row_f32
#define LOG_T logf
#include "attention_tiles.h"
#undef T
#undef SUF
#undef GEMM
#undef EXP_T
#undef EXP_ROW
#undef LOG_T

#define T double
#define SUF f64
#define GEMM cblas_dgemm
#define EXP_T(x) exp(x)
#define EXP_ROW exp_row_f64
#define LOG_T log
#include "attention_tiles.h"
#undef T
#undef SUF
#undef GEMM
#undef EXP_T
#undef EXP_ROW
#undef LOG_T

/* ------------------------------------------------------------------ operands */

/* t itself (a new reference) when BLAS can read its (., ., rows, cols) matrices in place: the
 * last dim contiguous and rows at least a row apart; else a contiguous copy. */
static tg_tensor *readable(const char *op, tg_tensor *t)
{
    int64_t cols = t->sizes[3], rows = t->sizes[2];
    bool ok = (cols <= 1 || t->strides[3] == 1) && (rows <= 1 || t->strides[2] >= cols);
    if (ok) return tg_retain(t);
    tg_tensor *c = tg__empty(op, t->sizes, t->ndim, t->dtype, t->device);
    if (c && tg__copy_into(op, c, t) != 0) {
        tg_release(c);
        return NULL;
    }
    return c;
}

/* The row stride BLAS is given: one row's length when there is a single row (any stride). */
static int64_t row_stride(const tg_tensor *t)
{
    int64_t cols = t->sizes[3] > 1 ? t->sizes[3] : 1;
    return t->sizes[2] <= 1 ? cols : t->strides[2];
}

/* The mask in a form the loops read: bool as is, floating in query's dtype. */
static tg_tensor *mask_operand(const char *op, tg_tensor *mask, tg_dtype dt)
{
    if (!mask) return NULL;
    if (mask->dtype == TG_BOOL || mask->dtype == dt) return tg_retain(mask);
    tg_tensor *c = tg__empty(op, mask->sizes, mask->ndim, dt, mask->device);
    if (c && tg__copy_into(op, c, mask) != 0) {
        tg_release(c);
        return NULL;
    }
    return c;
}

/* The checked geometry with the operands replaced by readable ones (refs in ops[0..3]:
 * q, k, v, mask). 0 or -1 (error recorded, nothing held). */
static int prepare(const char *op, tg_tensor *query, tg_tensor *key, tg_tensor *value,
                   tg_tensor *attn_mask, double dropout_p, bool is_causal, tg_opt_float scale,
                   tg_attn_geom *g, tg_tensor *ops[4])
{
    if (tg__attn_fused_check(op, query, key, value, attn_mask, dropout_p, is_causal, scale, g) != 0)
        return -1;
    if (attn_mask && attn_mask->device.type != query->device.type)
        return tg__fail(op, "attn_mask must be on query's device");
    ops[0] = readable(op, query);
    ops[1] = ops[0] ? readable(op, key) : NULL;
    ops[2] = ops[1] ? readable(op, value) : NULL;
    ops[3] = NULL;
    bool ok = ops[2] != NULL;
    if (ok && attn_mask) ok = (ops[3] = mask_operand(op, attn_mask, query->dtype)) != NULL;
    if (!ok) {
        tg__k_release_all(ops, 4);
        return -1;
    }
    for (int d = 0; d < 4; d++) {
        g->qs[d] = ops[0]->strides[d];
        g->ks[d] = ops[1]->strides[d];
        g->vs[d] = ops[2]->strides[d];
    }
    g->qs[2] = row_stride(ops[0]);
    g->ks[2] = row_stride(ops[1]);
    g->vs[2] = row_stride(ops[2]);
    if (ops[3]) /* strides of the converted mask, broadcast as checked */
        for (int64_t d = 0; d < ops[3]->ndim; d++) {
            int64_t wd = 4 - ops[3]->ndim + d;
            g->ms[wd] = ops[3]->sizes[d] == 1 ? 0 : ops[3]->strides[d];
        }
    return 0;
}

/* ------------------------------------------------------------------ forward */

typedef struct fwd_job {
    const tg_attn_geom *g;
    tg_dtype dt;
    const char *q, *k, *v, *m; /* data pointers (m NULL without a mask) */
    char *o, *lse;
    int64_t nqb; /* query blocks per head */
    int rc;
} fwd_job;

static void fwd_task(int64_t lo, int64_t hi, void *ctx)
{
    fwd_job *j = ctx;
    const tg_attn_geom *g = j->g;
    size_t e = tg_dtype_size(j->dt);
    char *buf = malloc(e * (size_t)(BQ * BK + 2 * BQ)); /* one score tile, m and l */
    if (!buf) {
        j->rc = -1;
        return;
    }
    for (int64_t t = lo; t < hi; t++) {
        int64_t bh = t / j->nqb, qb = t % j->nqb, b = bh / g->H, h = bh % g->H;
        int64_t i0 = qb * BQ, nq = g->L - i0 < BQ ? g->L - i0 : BQ;
        int64_t qoff = b * g->qs[0] + h * g->qs[1] + i0 * g->qs[2];
        int64_t koff = b * g->ks[0] + h * g->ks[1], voff = b * g->vs[0] + h * g->vs[1];
        int64_t moff = b * g->ms[0] + h * g->ms[1];
        int64_t ooff = (bh * g->L + i0) * g->Ev, loff = bh * g->L + i0;
        if (j->dt == TG_FLOAT32) {
            float *s = (float *)buf;
            fwd_block_f32(g, (const float *)j->q + qoff, (const float *)j->k + koff,
                          (const float *)j->v + voff,
                          j->m ? j->m + moff * (g->mask_kind == 1 ? 1 : 4) : NULL,
                          (float *)j->o + ooff, (float *)j->lse + loff, i0, nq, s, s + BQ * BK,
                          s + BQ * BK + BQ);
        } else {
            double *s = (double *)buf;
            fwd_block_f64(g, (const double *)j->q + qoff, (const double *)j->k + koff,
                          (const double *)j->v + voff,
                          j->m ? j->m + moff * (g->mask_kind == 1 ? 1 : 8) : NULL,
                          (double *)j->o + ooff, (double *)j->lse + loff, i0, nq, s, s + BQ * BK,
                          s + BQ * BK + BQ);
        }
    }
    free(buf);
}

/* Fills t (contiguous) with v. */
static void fill(tg_tensor *t, double v)
{
    int64_t n = tg__numel(t);
    char *p = tg__k_data(t);
    for (int64_t i = 0; i < n; i++)
        tg__pw_store_f64(p + i * (int64_t)tg_dtype_size(t->dtype), t->dtype, v);
}

tg_output_logsumexp tg__cpu_scaled_dot_product_fused_attention(tg_tensor *query, tg_tensor *key,
                                                               tg_tensor *value, double dropout_p,
                                                               bool is_causal, tg_tensor *attn_mask,
                                                               tg_opt_float scale)
{
    const char *op = "_scaled_dot_product_fused_attention";
    tg_output_logsumexp r = { NULL, NULL };
    tg_attn_geom g;
    tg_tensor *ops[4];
    if (prepare(op, query, key, value, attn_mask, dropout_p, is_causal, scale, &g, ops) != 0)
        return r;
    const int64_t osz[4] = { g.B, g.H, g.L, g.Ev }, lsz[3] = { g.B, g.H, g.L };
    r.output = tg__empty(op, osz, 4, query->dtype, query->device);
    r.logsumexp = r.output ? tg__empty(op, lsz, 3, query->dtype, query->device) : NULL;
    if (r.logsumexp) {
        if (g.L > 0 && g.S > 0) { /* E = 0: every score is 0, a uniform average of v */
            fwd_job j = { &g,
                          query->dtype,
                          tg__k_data(ops[0]),
                          tg__k_data(ops[1]),
                          tg__k_data(ops[2]),
                          ops[3] ? tg__k_data(ops[3]) : NULL,
                          tg__k_data(r.output),
                          tg__k_data(r.logsumexp),
                          (g.L + BQ - 1) / BQ,
                          0 };
            tg__parallel_for(g.B * g.H * j.nqb, 1, fwd_task, &j);
            if (j.rc != 0) {
                tg__error(op, "out of memory");
                tg_release(r.output);
                tg_release(r.logsumexp);
                r.output = r.logsumexp = NULL;
            }
        } else { /* no rows, or no keys: a zero output; logsumexp of no keys is -inf */
            fill(r.output, 0);
            fill(r.logsumexp, g.S == 0 ? -INFINITY : 0);
        }
    } else {
        tg_release(r.output);
        r.output = NULL;
    }
    tg__k_release_all(ops, 4);
    return r;
}

/* ------------------------------------------------------------------ backward */

typedef struct bwd_job {
    const tg_attn_geom *g;
    tg_dtype dt;
    const char *q, *k, *v, *m, *go, *o, *lse;
    int64_t gos[3], os[3]; /* batch, head and row strides of grad_out and out */
    char *dq, *dk, *dv;
    int rc;
} bwd_job;

static void bwd_task(int64_t lo, int64_t hi, void *ctx)
{
    bwd_job *j = ctx;
    const tg_attn_geom *g = j->g;
    size_t e = tg_dtype_size(j->dt);
    char *buf = malloc(e * (size_t)(2 * BQ * BK + g->L)); /* P and dP tiles, D */
    if (!buf) {
        j->rc = -1;
        return;
    }
    for (int64_t bh = lo; bh < hi; bh++) {
        int64_t b = bh / g->H, h = bh % g->H;
        int64_t qoff = b * g->qs[0] + h * g->qs[1];
        int64_t koff = b * g->ks[0] + h * g->ks[1], voff = b * g->vs[0] + h * g->vs[1];
        int64_t moff = b * g->ms[0] + h * g->ms[1];
        int64_t gooff = b * j->gos[0] + h * j->gos[1], ooff = b * j->os[0] + h * j->os[1];
        if (j->dt == TG_FLOAT32) {
            float *p = (float *)buf;
            bwd_head_f32(g, (const float *)j->q + qoff, (const float *)j->k + koff,
                         (const float *)j->v + voff,
                         j->m ? j->m + moff * (g->mask_kind == 1 ? 1 : 4) : NULL,
                         (const float *)j->go + gooff, j->gos[2], (const float *)j->o + ooff,
                         j->os[2], (const float *)j->lse + bh * g->L,
                         (float *)j->dq + bh * g->L * g->E, (float *)j->dk + bh * g->S * g->E,
                         (float *)j->dv + bh * g->S * g->Ev, p + 2 * BQ * BK, p, p + BQ * BK);
        } else {
            double *p = (double *)buf;
            bwd_head_f64(g, (const double *)j->q + qoff, (const double *)j->k + koff,
                         (const double *)j->v + voff,
                         j->m ? j->m + moff * (g->mask_kind == 1 ? 1 : 8) : NULL,
                         (const double *)j->go + gooff, j->gos[2], (const double *)j->o + ooff,
                         j->os[2], (const double *)j->lse + bh * g->L,
                         (double *)j->dq + bh * g->L * g->E, (double *)j->dk + bh * g->S * g->E,
                         (double *)j->dv + bh * g->S * g->Ev, p + 2 * BQ * BK, p, p + BQ * BK);
        }
    }
    free(buf);
}

tg_grad_query_grad_key_grad_value tg__cpu_scaled_dot_product_fused_attention_backward(
    tg_tensor *grad_out, tg_tensor *query, tg_tensor *key, tg_tensor *value, tg_tensor *out,
    tg_tensor *logsumexp, double dropout_p, bool is_causal, tg_tensor *attn_mask,
    tg_opt_float scale)
{
    const char *op = "_scaled_dot_product_fused_attention_backward";
    tg_grad_query_grad_key_grad_value r = { NULL, NULL, NULL };
    tg_attn_geom g;
    tg_tensor *ops[4];
    if (prepare(op, query, key, value, attn_mask, dropout_p, is_causal, scale, &g, ops) != 0)
        return r;
    tg_tensor *go = NULL, *o = NULL, *lse = NULL;
    bool ok = tg__attn_backward_check(op, grad_out, out, logsumexp, &g, query->dtype) == 0;
    if (ok)
        ok = (go = readable(op, grad_out)) && (o = readable(op, out)) &&
             (lse = tg__contiguous(op, logsumexp));
    if (ok) {
        r.grad_query = tg__empty(op, query->sizes, 4, query->dtype, query->device);
        r.grad_key = r.grad_query ? tg__empty(op, key->sizes, 4, key->dtype, key->device) : NULL;
        r.grad_value =
            r.grad_key ? tg__empty(op, value->sizes, 4, value->dtype, value->device) : NULL;
        ok = r.grad_value != NULL;
    }
    if (ok && g.L > 0 && g.S > 0) {
        bwd_job j = { &g,
                      query->dtype,
                      tg__k_data(ops[0]),
                      tg__k_data(ops[1]),
                      tg__k_data(ops[2]),
                      ops[3] ? tg__k_data(ops[3]) : NULL,
                      tg__k_data(go),
                      tg__k_data(o),
                      tg__k_data(lse),
                      { go->strides[0], go->strides[1], row_stride(go) },
                      { o->strides[0], o->strides[1], row_stride(o) },
                      tg__k_data(r.grad_query),
                      tg__k_data(r.grad_key),
                      tg__k_data(r.grad_value),
                      0 };
        tg__parallel_for(g.B * g.H, 1, bwd_task, &j);
        if (j.rc != 0) ok = (void *)tg__error(op, "out of memory") != NULL;
    } else if (ok) {
        fill(r.grad_query, 0);
        fill(r.grad_key, 0);
        fill(r.grad_value, 0);
    }
    if (!ok) {
        tg_release(r.grad_query);
        tg_release(r.grad_key);
        tg_release(r.grad_value);
        r.grad_query = r.grad_key = r.grad_value = NULL;
    }
    tg_release(go);
    tg_release(o);
    tg_release(lse);
    tg__k_release_all(ops, 4);
    return r;
}
