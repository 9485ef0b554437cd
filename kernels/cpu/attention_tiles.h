/* The fused attention loops of kernels/cpu/attention.c for one element type, included once per
 * type with T (float or double), SUF (the function suffix), GEMM (cblas_sgemm / cblas_dgemm),
 * EXP_T, EXP_ROW (a row's exponentials in place, returning their sum) and LOG_T defined. Not a public header: no include guard on purpose.
 *
 * Tiles: BQ query rows x BK keys. Every matrix product of a tile (S = Q K^T, O += P V, and in the
 * backward dV += P^T dO, dP = dO V^T, dQ += dS K, dK += dS^T Q) is one cblas call on the tile,
 * reading q/k/v/grad_out in place through their row strides (the last dim is contiguous).
 * OpenBLAS runs single-threaded inside our OpenMP tasks. */

#define ATT_CAT_(a, b) a##_##b
#define ATT_CAT(a, b) ATT_CAT_(a, b)
#define ATT_FN(name) ATT_CAT(name, SUF)

/* Adds the mask to a tile of scores s (nq x nk, row stride BK) of rows i0.., keys j0..:
 * causal (key j > row i), bool (False) -> -inf, floating -> added. mbase points at the mask's
 * (b, h) plane (element strides g->ms[2], g->ms[3]). */
static void ATT_FN(apply_mask)(const tg_attn_geom *g, const char *mbase, T *s, int64_t i0,
                               int64_t nq, int64_t j0, int64_t nk)
{
    if (g->causal) {
        if (j0 + nk - 1 <= i0) return; /* tile entirely on or below the diagonal */
        for (int64_t r = 0; r < nq; r++) {
            int64_t first = i0 + r + 1 - j0; /* first masked column of row r */
            for (int64_t c = first < 0 ? 0 : first; c < nk; c++) s[r * BK + c] = -INFINITY;
        }
        return;
    }
    if (g->mask_kind == 1) {
        const unsigned char *m = (const unsigned char *)mbase;
        for (int64_t r = 0; r < nq; r++) {
            const unsigned char *mr = m + (i0 + r) * g->ms[2] + j0 * g->ms[3];
            for (int64_t c = 0; c < nk; c++)
                if (!mr[c * g->ms[3]]) s[r * BK + c] = -INFINITY;
        }
    } else if (g->mask_kind == 2) {
        const T *m = (const T *)mbase;
        for (int64_t r = 0; r < nq; r++) {
            const T *mr = m + (i0 + r) * g->ms[2] + j0 * g->ms[3];
            for (int64_t c = 0; c < nk; c++) s[r * BK + c] += mr[c * g->ms[3]];
        }
    }
}

/* Forward of the query block (b, h, i0 .. i0 + nq): online softmax over key tiles; the output
 * rows (contiguous, Ev wide) are the accumulator. s holds one BQ x BK tile, m and l BQ each. */
static void ATT_FN(fwd_block)(const tg_attn_geom *g, const T *q, const T *k, const T *v,
                              const char *mbase, T *o, T *lse, int64_t i0, int64_t nq, T *s, T *m,
                              T *l)
{
    const int64_t E = g->E, Ev = g->Ev;
    for (int64_t r = 0; r < nq; r++) {
        m[r] = -INFINITY;
        l[r] = 0;
    }
    memset(o, 0, sizeof(T) * (size_t)(nq * Ev));
    int64_t kend = g->S;
    if (g->causal && i0 + nq < kend) kend = i0 + nq; /* tiles above the diagonal: skipped */
    for (int64_t j0 = 0; j0 < kend; j0 += BK) {
        int64_t nk = kend - j0 < BK ? kend - j0 : BK;
        if (E > 0)
            GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nk, (int)E, (T)g->scale, q,
                 (int)g->qs[2], k + j0 * g->ks[2], (int)g->ks[2], (T)0, s, BK);
        else
            for (int64_t r = 0; r < nq; r++)
                for (int64_t c = 0; c < nk; c++) s[r * BK + c] = 0;
        ATT_FN(apply_mask)(g, mbase, s, i0, nq, j0, nk);
        for (int64_t r = 0; r < nq; r++) {
            T *sr = s + r * BK;
            T mx = m[r];
            for (int64_t c = 0; c < nk; c++) mx = sr[c] > mx ? sr[c] : mx;
            if (mx == -INFINITY) { /* every key so far masked: nothing to add */
                for (int64_t c = 0; c < nk; c++) sr[c] = 0;
                continue;
            }
            T corr = m[r] == -INFINITY ? (T)0 : EXP_T(m[r] - mx);
            T sum = EXP_ROW(sr, nk, mx);
            l[r] = l[r] * corr + sum;
            m[r] = mx;
            if (corr != (T)1) {
                T *orow = o + r * Ev;
                for (int64_t c = 0; c < Ev; c++) orow[c] *= corr;
            }
        }
        if (Ev > 0)
            GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, (int)Ev, (int)nk, (T)1, s, BK,
                 v + j0 * g->vs[2], (int)g->vs[2], (T)1, o, (int)Ev);
    }
    for (int64_t r = 0; r < nq; r++) {
        T inv = l[r] > 0 ? (T)1 / l[r] : (T)0; /* a fully masked row gives 0 */
        T *orow = o + r * Ev;
        for (int64_t c = 0; c < Ev; c++) orow[c] *= inv;
        lse[r] = l[r] > 0 ? m[r] + LOG_T(l[r]) : -INFINITY;
    }
}

/* Backward of one (b, h): for each key tile j (its dK, dV rows owned here, accumulated over
 * the query tiles), recompute P = exp(S - lse) per query tile and accumulate
 * dV_j += P^T dO_i, dS = P * (dO_i V_j^T - D_i), dQ_i += scale dS K_j, dK_j += scale dS^T Q_i.
 * dq, dk, dv point at this head's contiguous rows (zeroed here). D holds L values, p and dp one
 * BQ x BK tile each. */
static void ATT_FN(bwd_head)(const tg_attn_geom *g, const T *q, const T *k, const T *v,
                             const char *mbase, const T *go, int64_t gos, const T *o, int64_t os,
                             const T *lse, T *dq, T *dk, T *dv, T *D, T *p, T *dp)
{
    const int64_t L = g->L, S = g->S, E = g->E, Ev = g->Ev;
    const T scale = (T)g->scale;
    for (int64_t i = 0; i < L; i++) {
        T d = 0;
        for (int64_t c = 0; c < Ev; c++) d += go[i * gos + c] * o[i * os + c];
        D[i] = d;
    }
    memset(dq, 0, sizeof(T) * (size_t)(L * E));
    memset(dk, 0, sizeof(T) * (size_t)(S * E));
    memset(dv, 0, sizeof(T) * (size_t)(S * Ev));
    for (int64_t j0 = 0; j0 < S; j0 += BK) {
        int64_t nk = S - j0 < BK ? S - j0 : BK;
        /* causal: query rows i < j0 see none of these keys */
        int64_t istart = g->causal ? (j0 / BQ) * BQ : 0;
        for (int64_t i0 = istart; i0 < L; i0 += BQ) {
            int64_t nq = L - i0 < BQ ? L - i0 : BQ;
            const T *qi = q + i0 * g->qs[2], *kj = k + j0 * g->ks[2], *vj = v + j0 * g->vs[2];
            const T *goi = go + i0 * gos;
            if (E > 0)
                GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nk, (int)E, scale, qi,
                     (int)g->qs[2], kj, (int)g->ks[2], (T)0, p, BK);
            else
                for (int64_t r = 0; r < nq; r++)
                    for (int64_t c = 0; c < nk; c++) p[r * BK + c] = 0;
            ATT_FN(apply_mask)(g, mbase, p, i0, nq, j0, nk);
            for (int64_t r = 0; r < nq; r++) {
                T lr = lse[i0 + r];
                T *pr = p + r * BK;
                if (lr == -INFINITY) {
                    for (int64_t c = 0; c < nk; c++) pr[c] = 0;
                    continue;
                }
                EXP_ROW(pr, nk, lr);
            }
            /* dV_j (nk x Ev) += P^T (nk x nq) dO_i (nq x Ev) */
            if (Ev > 0)
                GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)nk, (int)Ev, (int)nq, (T)1, p,
                     BK, goi, (int)gos, (T)1, dv + j0 * Ev, (int)Ev);
            /* dP (nq x nk) = dO_i V_j^T */
            if (Ev > 0)
                GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nk, (int)Ev, (T)1, goi,
                     (int)gos, vj, (int)g->vs[2], (T)0, dp, BK);
            else
                for (int64_t r = 0; r < nq; r++)
                    for (int64_t c = 0; c < nk; c++) dp[r * BK + c] = 0;
            for (int64_t r = 0; r < nq; r++) {
                T d = D[i0 + r];
                for (int64_t c = 0; c < nk; c++)
                    dp[r * BK + c] = p[r * BK + c] * (dp[r * BK + c] - d);
            }
            if (E > 0) {
                /* dQ_i (nq x E) += scale dS K_j ; dK_j (nk x E) += scale dS^T Q_i */
                GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nq, (int)E, (int)nk, scale, dp,
                     BK, kj, (int)g->ks[2], (T)1, dq + i0 * E, (int)E);
                GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)nk, (int)E, (int)nq, scale, dp,
                     BK, qi, (int)g->qs[2], (T)1, dk + j0 * E, (int)E);
            }
        }
    }
}

#undef ATT_FN
#undef ATT_CAT
#undef ATT_CAT_
