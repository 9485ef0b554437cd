/* The fused attention kernels on CUDA: _scaled_dot_product_fused_attention and its backward,
 * float32 and float64. Semantics, checks and messages are the CPU kernels'
 * (kernels/cpu/attention.c, kernels/common/attention_checks.h); q, k, v, grad_out and out are
 * read in place through their strides (any strides), a floating mask of another dtype than
 * query is converted once.
 *
 * Forward: one thread block per (batch, head, tile of ATT_BQ = 32 query rows), one thread per
 * query row. The block walks the keys in tiles of ATT_BK = 16, staged in shared memory (K and V
 * tiles, ATT_BK x head dim each, head dims up to ATT_EMAX = 128); each thread keeps its row's
 * running max and sum in registers, its scores for the tile in shared memory, and its output
 * row (the accumulator, rescaled when the max grows) in the output tensor, which it alone
 * writes. Causal tiles above the diagonal are not visited. Shared memory: (2 * 16 * 128 +
 * 32 * 16) elements, 18 KiB in float32, 36 KiB in float64.
 *
 * Backward (kept simple, it runs here only on the CPU emulator): three kernels with one thread
 * per row and no shared memory, 128 threads per block. D_i = rowsum(dO_i * O_i); dQ_i from the
 * thread of query row i looping over the keys; dK_j, dV_j from the thread of key row j looping
 * over the queries, each recomputing P = exp(S - logsumexp). Every gradient row has one owner:
 * deterministic, no atomics. */
#include "tg_cuda.cuh"
#include "attention_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/_scaled_dot_product_fused_attention.h"
#include "kernels/_scaled_dot_product_fused_attention_backward.h"

#include <math.h>

#define ATT_BQ 32
#define ATT_BK 16
#define ATT_EMAX 128
#define ATT_BWD_THREADS 128

__device__ __forceinline__ float att_exp(float x) { return expf(x); }
__device__ __forceinline__ double att_exp(double x) { return exp(x); }
__device__ __forceinline__ float att_log(float x) { return logf(x); }
__device__ __forceinline__ double att_log(double x) { return log(x); }

struct att_args {
    tg_attn_geom g;
    const char *q, *k, *v, *m; /* m: NULL without a mask */
    char *o, *lse;
    const char *go, *od;   /* backward: grad_out and out */
    int64_t gos[4], os[4]; /* their element strides */
    char *dq, *dk, *dv, *D;
};

/* The mask term of score (b, h, i, j): -inf where masked out, the float mask's value, or 0. */
template <class T>
__device__ __forceinline__ T att_mask(const att_args &a, int64_t b, int64_t h, int64_t i, int64_t j)
{
    const tg_attn_geom &g = a.g;
    if (g.causal) return j > i ? (T)-INFINITY : (T)0;
    if (g.mask_kind == 0) return (T)0;
    int64_t off = b * g.ms[0] + h * g.ms[1] + i * g.ms[2] + j * g.ms[3];
    if (g.mask_kind == 1) return ((const unsigned char *)a.m)[off] ? (T)0 : (T)-INFINITY;
    return ((const T *)a.m)[off];
}

template <class T> __global__ void tg__cuda_attn_fwd_kernel(att_args a)
{
    __shared__ T Ks[ATT_BK * ATT_EMAX];
    __shared__ T Vs[ATT_BK * ATT_EMAX];
    __shared__ T Ss[ATT_BQ * ATT_BK];
    const tg_attn_geom &g = a.g;
    const int64_t E = g.E, Ev = g.Ev, nqb = (g.L + ATT_BQ - 1) / ATT_BQ;
    const int64_t bh = blockIdx.x / nqb, qb = blockIdx.x % nqb, b = bh / g.H, h = bh % g.H;
    const int r = threadIdx.x;
    const int64_t i0 = qb * ATT_BQ, i = i0 + r;
    const bool valid = i < g.L;
    const T *q = (const T *)a.q + b * g.qs[0] + h * g.qs[1] + i * g.qs[2];
    const T *k = (const T *)a.k + b * g.ks[0] + h * g.ks[1];
    const T *v = (const T *)a.v + b * g.vs[0] + h * g.vs[1];
    T *o = (T *)a.o + (bh * g.L + i) * Ev;
    if (valid)
        for (int64_t c = 0; c < Ev; c++) o[c] = 0;
    T m = (T)-INFINITY, l = 0;
    int64_t kend = g.S;
    if (g.causal && i0 + ATT_BQ < kend) kend = i0 + ATT_BQ;
    for (int64_t j0 = 0; j0 < kend; j0 += ATT_BK) {
        const int64_t nk = kend - j0 < ATT_BK ? kend - j0 : ATT_BK;
        __syncthreads(); /* the previous tile is no longer read */
        for (int64_t x = threadIdx.x; x < nk * E; x += blockDim.x)
            Ks[x] = k[(j0 + x / E) * g.ks[2] + (x % E) * g.ks[3]];
        for (int64_t x = threadIdx.x; x < nk * Ev; x += blockDim.x)
            Vs[x] = v[(j0 + x / Ev) * g.vs[2] + (x % Ev) * g.vs[3]];
        __syncthreads();
        if (!valid) continue;
        T *s = Ss + r * ATT_BK;
        T mx = m;
        for (int64_t c = 0; c < nk; c++) {
            T dot = 0;
            for (int64_t e = 0; e < E; e++) dot += q[e * g.qs[3]] * Ks[c * E + e];
            T sc = dot * (T)g.scale + att_mask<T>(a, b, h, i, j0 + c);
            s[c] = sc;
            mx = sc > mx ? sc : mx;
        }
        if (mx == (T)-INFINITY) continue; /* every key so far masked */
        T corr = m == (T)-INFINITY ? (T)0 : att_exp(m - mx), sum = 0;
        for (int64_t c = 0; c < nk; c++) {
            T p = att_exp(s[c] - mx);
            s[c] = p;
            sum += p;
        }
        for (int64_t e = 0; e < Ev; e++) {
            T acc = o[e] * corr;
            for (int64_t c = 0; c < nk; c++) acc += s[c] * Vs[c * Ev + e];
            o[e] = acc;
        }
        l = l * corr + sum;
        m = mx;
    }
    if (!valid) return;
    T inv = l > 0 ? (T)1 / l : (T)0;
    for (int64_t e = 0; e < Ev; e++) o[e] *= inv;
    ((T *)a.lse)[bh * g.L + i] = l > 0 ? m + att_log(l) : (T)-INFINITY;
}

/* P and dS of score (i, j) of head (b, h): p = exp(s - lse_i), ds = p * (dO_i . v_j - D_i). */
template <class T>
__device__ __forceinline__ void att_p_ds(const att_args &a, int64_t b, int64_t h, int64_t i,
                                         int64_t j, T *p, T *ds)
{
    const tg_attn_geom &g = a.g;
    const int64_t bh = b * g.H + h;
    const T lse = ((const T *)a.lse)[bh * g.L + i];
    const T *q = (const T *)a.q + b * g.qs[0] + h * g.qs[1] + i * g.qs[2];
    const T *k = (const T *)a.k + b * g.ks[0] + h * g.ks[1] + j * g.ks[2];
    const T *v = (const T *)a.v + b * g.vs[0] + h * g.vs[1] + j * g.vs[2];
    const T *go = (const T *)a.go + b * a.gos[0] + h * a.gos[1] + i * a.gos[2];
    T mk = att_mask<T>(a, b, h, i, j);
    if (lse == (T)-INFINITY || mk == (T)-INFINITY) {
        *p = 0;
        *ds = 0;
        return;
    }
    T dot = 0;
    for (int64_t e = 0; e < g.E; e++) dot += q[e * g.qs[3]] * k[e * g.ks[3]];
    T pv = att_exp(dot * (T)g.scale + mk - lse), dp = 0;
    for (int64_t e = 0; e < g.Ev; e++) dp += go[e * a.gos[3]] * v[e * g.vs[3]];
    *p = pv;
    *ds = pv * (dp - ((const T *)a.D)[bh * g.L + i]);
}

/* D_i = rowsum(dO_i * O_i), one thread per (b, h, i). */
template <class T> __global__ void tg__cuda_attn_bwd_d_kernel(att_args a)
{
    const tg_attn_geom &g = a.g;
    int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (t >= g.B * g.H * g.L) return;
    int64_t i = t % g.L, bh = t / g.L, b = bh / g.H, h = bh % g.H;
    const T *go = (const T *)a.go + b * a.gos[0] + h * a.gos[1] + i * a.gos[2];
    const T *o = (const T *)a.od + b * a.os[0] + h * a.os[1] + i * a.os[2];
    T d = 0;
    for (int64_t e = 0; e < g.Ev; e++) d += go[e * a.gos[3]] * o[e * a.os[3]];
    ((T *)a.D)[t] = d;
}

/* dQ_i = scale * sum_j dS_ij k_j, one thread per query row. */
template <class T> __global__ void tg__cuda_attn_bwd_dq_kernel(att_args a)
{
    const tg_attn_geom &g = a.g;
    int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (t >= g.B * g.H * g.L) return;
    int64_t i = t % g.L, bh = t / g.L, b = bh / g.H, h = bh % g.H;
    T *dq = (T *)a.dq + t * g.E;
    for (int64_t e = 0; e < g.E; e++) dq[e] = 0;
    int64_t jend = g.causal && i + 1 < g.S ? i + 1 : g.S;
    for (int64_t j = 0; j < jend; j++) {
        T p, ds;
        att_p_ds<T>(a, b, h, i, j, &p, &ds);
        if (ds == 0) continue;
        const T *k = (const T *)a.k + b * g.ks[0] + h * g.ks[1] + j * g.ks[2];
        for (int64_t e = 0; e < g.E; e++) dq[e] += (T)g.scale * ds * k[e * g.ks[3]];
    }
}

/* dV_j = sum_i P_ij dO_i and dK_j = scale * sum_i dS_ij q_i, one thread per key row. */
template <class T> __global__ void tg__cuda_attn_bwd_dkv_kernel(att_args a)
{
    const tg_attn_geom &g = a.g;
    int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (t >= g.B * g.H * g.S) return;
    int64_t j = t % g.S, bh = t / g.S, b = bh / g.H, h = bh % g.H;
    T *dk = (T *)a.dk + t * g.E, *dv = (T *)a.dv + t * g.Ev;
    for (int64_t e = 0; e < g.E; e++) dk[e] = 0;
    for (int64_t e = 0; e < g.Ev; e++) dv[e] = 0;
    for (int64_t i = g.causal ? j : 0; i < g.L; i++) {
        T p, ds;
        att_p_ds<T>(a, b, h, i, j, &p, &ds);
        if (p == 0) continue;
        const T *q = (const T *)a.q + b * g.qs[0] + h * g.qs[1] + i * g.qs[2];
        const T *go = (const T *)a.go + b * a.gos[0] + h * a.gos[1] + i * a.gos[2];
        for (int64_t e = 0; e < g.Ev; e++) dv[e] += p * go[e * a.gos[3]];
        for (int64_t e = 0; e < g.E; e++) dk[e] += (T)g.scale * ds * q[e * g.qs[3]];
    }
}

template <class T> __global__ void tg__cuda_attn_fill_kernel(T *p, int64_t n, T v)
{
    for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < n;
         x += (int64_t)blockDim.x * gridDim.x)
        p[x] = v;
}

/* ------------------------------------------------------------------ host side */

static int fill(const char *op, tg_tensor *t, double v, cudaStream_t st)
{
    int64_t n = tg__numel(t);
    if (n == 0) return 0;
    if (t->dtype == TG_FLOAT32)
        tg__cuda_attn_fill_kernel<float>
            <<<tg__cuda_blocks(n, TG_CUDA_THREADS), TG_CUDA_THREADS, 0, st>>>(
                (float *)tg__k_data(t), n, (float)v);
    else
        tg__cuda_attn_fill_kernel<double>
            <<<tg__cuda_blocks(n, TG_CUDA_THREADS), TG_CUDA_THREADS, 0, st>>>(
                (double *)tg__k_data(t), n, v);
    return tg__cuda_launch_ok(op);
}

/* Checks, the mask in a readable form (*mask_out: a new reference or NULL) and the stream. */
static int prepare(const char *op, tg_tensor *query, tg_tensor *key, tg_tensor *value,
                   tg_tensor *attn_mask, double dropout_p, bool is_causal, tg_opt_float scale,
                   att_args *a, tg_tensor **mask_out, cudaStream_t *st)
{
    *mask_out = NULL;
    tg_attn_geom *g = &a->g;
    if (tg__attn_fused_check(op, query, key, value, attn_mask, dropout_p, is_causal, scale, g) != 0)
        return -1;
    if (tg__cuda_same_device(op, query, key) || tg__cuda_same_device(op, query, value) ||
        (attn_mask && tg__cuda_same_device(op, query, attn_mask)))
        return -1;
    if (g->E > ATT_EMAX || g->Ev > ATT_EMAX)
        return tg__fail(op, "the CUDA kernel supports head dims up to %d, got %lld and %lld",
                        ATT_EMAX, (long long)g->E, (long long)g->Ev);
    int rc;
    *st = tg__cuda_select_stream(op, query->device, &rc);
    if (rc) return -1;
    if (attn_mask) {
        tg_dtype mdt = attn_mask->dtype == TG_BOOL ? TG_BOOL : query->dtype;
        tg_tensor *mk = attn_mask->dtype == mdt ? tg_retain(attn_mask)
                                                : tg__cuda_contiguous(op, attn_mask, mdt);
        if (!mk) return -1;
        for (int64_t d = 0; d < mk->ndim; d++) {
            int64_t wd = 4 - mk->ndim + d;
            g->ms[wd] = mk->sizes[d] == 1 ? 0 : mk->strides[d];
        }
        *mask_out = mk;
    }
    a->q = tg__k_data(query);
    a->k = tg__k_data(key);
    a->v = tg__k_data(value);
    a->m = *mask_out ? tg__k_data(*mask_out) : NULL;
    return 0;
}

extern "C" tg_output_logsumexp
tg__cuda_scaled_dot_product_fused_attention(tg_tensor *query, tg_tensor *key, tg_tensor *value,
                                            double dropout_p, bool is_causal, tg_tensor *attn_mask,
                                            tg_opt_float scale)
{
    const char *op = "_scaled_dot_product_fused_attention";
    tg_output_logsumexp r = { NULL, NULL };
    att_args a;
    memset(&a, 0, sizeof a);
    tg_tensor *mk;
    cudaStream_t st;
    if (prepare(op, query, key, value, attn_mask, dropout_p, is_causal, scale, &a, &mk, &st) != 0)
        return r;
    const tg_attn_geom &g = a.g;
    const int64_t osz[4] = { g.B, g.H, g.L, g.Ev }, lsz[3] = { g.B, g.H, g.L };
    r.output = tg__empty(op, osz, 4, query->dtype, query->device);
    r.logsumexp = r.output ? tg__empty(op, lsz, 3, query->dtype, query->device) : NULL;
    int rc = r.logsumexp ? 0 : -1;
    if (rc == 0 && g.B * g.H * g.L > 0) {
        a.o = tg__k_data(r.output);
        a.lse = tg__k_data(r.logsumexp);
        unsigned blocks = (unsigned)(g.B * g.H * ((g.L + ATT_BQ - 1) / ATT_BQ));
        if (query->dtype == TG_FLOAT32)
            tg__cuda_attn_fwd_kernel<float><<<blocks, ATT_BQ, 0, st>>>(a);
        else tg__cuda_attn_fwd_kernel<double><<<blocks, ATT_BQ, 0, st>>>(a);
        rc = tg__cuda_launch_ok(op);
    }
    tg_release(mk);
    if (rc != 0) {
        tg_release(r.output);
        tg_release(r.logsumexp);
        r.output = r.logsumexp = NULL;
    }
    return r;
}

extern "C" tg_grad_query_grad_key_grad_value tg__cuda_scaled_dot_product_fused_attention_backward(
    tg_tensor *grad_out, tg_tensor *query, tg_tensor *key, tg_tensor *value, tg_tensor *out,
    tg_tensor *logsumexp, double dropout_p, bool is_causal, tg_tensor *attn_mask,
    tg_opt_float scale)
{
    const char *op = "_scaled_dot_product_fused_attention_backward";
    tg_grad_query_grad_key_grad_value r = { NULL, NULL, NULL };
    att_args a;
    memset(&a, 0, sizeof a);
    tg_tensor *mk, *lse = NULL, *D = NULL;
    cudaStream_t st;
    if (prepare(op, query, key, value, attn_mask, dropout_p, is_causal, scale, &a, &mk, &st) != 0)
        return r;
    const tg_attn_geom &g = a.g;
    int rc = tg__attn_backward_check(op, grad_out, out, logsumexp, &g, query->dtype);
    if (rc == 0 &&
        (tg__cuda_same_device(op, query, grad_out) || tg__cuda_same_device(op, query, out) ||
         tg__cuda_same_device(op, query, logsumexp)))
        rc = -1;
    if (rc == 0) {
        lse = tg__cuda_contiguous(op, logsumexp, logsumexp->dtype);
        D = lse ? tg__empty(op, logsumexp->sizes, 3, query->dtype, query->device) : NULL;
        r.grad_query = D ? tg__empty(op, query->sizes, 4, query->dtype, query->device) : NULL;
        r.grad_key = r.grad_query ? tg__empty(op, key->sizes, 4, key->dtype, key->device) : NULL;
        r.grad_value =
            r.grad_key ? tg__empty(op, value->sizes, 4, value->dtype, value->device) : NULL;
        rc = r.grad_value ? 0 : -1;
    }
    if (rc == 0) {
        a.go = tg__k_data(grad_out);
        a.od = tg__k_data(out);
        for (int d = 0; d < 4; d++) {
            a.gos[d] = grad_out->strides[d];
            a.os[d] = out->strides[d];
        }
        a.lse = tg__k_data(lse);
        a.D = tg__k_data(D);
        a.dq = tg__k_data(r.grad_query);
        a.dk = tg__k_data(r.grad_key);
        a.dv = tg__k_data(r.grad_value);
        int64_t nl = g.B * g.H * g.L, ns = g.B * g.H * g.S;
        unsigned bl = (unsigned)((nl + ATT_BWD_THREADS - 1) / ATT_BWD_THREADS);
        unsigned bs = (unsigned)((ns + ATT_BWD_THREADS - 1) / ATT_BWD_THREADS);
        if (nl > 0) {
            if (query->dtype == TG_FLOAT32) {
                tg__cuda_attn_bwd_d_kernel<float><<<bl, ATT_BWD_THREADS, 0, st>>>(a);
                tg__cuda_attn_bwd_dq_kernel<float><<<bl, ATT_BWD_THREADS, 0, st>>>(a);
            } else {
                tg__cuda_attn_bwd_d_kernel<double><<<bl, ATT_BWD_THREADS, 0, st>>>(a);
                tg__cuda_attn_bwd_dq_kernel<double><<<bl, ATT_BWD_THREADS, 0, st>>>(a);
            }
            rc = tg__cuda_launch_ok(op);
        }
        if (rc == 0 && ns > 0) {
            if (query->dtype == TG_FLOAT32)
                tg__cuda_attn_bwd_dkv_kernel<float><<<bs, ATT_BWD_THREADS, 0, st>>>(a);
            else tg__cuda_attn_bwd_dkv_kernel<double><<<bs, ATT_BWD_THREADS, 0, st>>>(a);
            rc = tg__cuda_launch_ok(op);
        }
        if (rc == 0 && nl > 0 && g.E == 0) rc = fill(op, r.grad_query, 0, st);
    }
    tg_release(mk);
    tg_release(lse);
    tg_release(D);
    if (rc != 0) {
        tg_release(r.grad_query);
        tg_release(r.grad_key);
        tg_release(r.grad_value);
        r.grad_query = r.grad_key = r.grad_value = NULL;
    }
    return r;
}
