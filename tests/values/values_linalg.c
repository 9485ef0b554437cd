/* Value cases of the matrix products (kt_case.h): mm, bmm, addmm, in every floating dtype.
 *
 * Layouts: row-major operands, transposed views (t(), transpose(1, 2): cuBLAS's OP_T),
 * operands with two non-unit strides (copied), a column-major out= (C^T = B^T A^T), a
 * permuted batch, a broadcast bias, K = 0. Values in [-1, 1). Bound: kt_tol_gemm. */
#include "kt_case.h"

/* mm of (M, K) by (K, N), parameter = size * 8 + layout bits: 1 a = t() of (K, M), 2 b = t()
 * of (N, K), 4 a sliced with step 2 along both dims of (2M, 2K); result 1: into a column-major
 * out= (the transpose of a contiguous (N, M) tensor). */
static const int64_t mm_sizes[5][3] = {
    { 33, 64, 17 }, { 1, 300, 5 }, { 128, 1, 96 }, { 7, 0, 9 }, { 256, 256, 256 }
};
KT_FN(f_mm)
{
    int s = a->param / 8, layout = a->param % 8;
    if ((layout & 4) && (layout & 1)) return KT_NO_FORM;
    int64_t M = mm_sizes[s][0], K = mm_sizes[s][1], N = mm_sizes[s][2];
    int64_t sa[2] = { layout & 1 ? K : M, layout & 1 ? M : K };
    int64_t sb[2] = { layout & 2 ? N : K, layout & 2 ? K : N };
    if (layout & 4) {
        sa[0] = 2 * M;
        sa[1] = 2 * K;
    }
    tg_tensor *ma = kt_input(a, sa, 2, a->dtype, 11 + (uint64_t)s, -1, 1);
    tg_tensor *mb = kt_input(a, sb, 2, a->dtype, 12 + (uint64_t)s, -1, 1);
    if (layout & 1) ma = tg_t(ma);
    if (layout & 4) ma = tg_slice(tg_slice(ma, .dim = 0, .step = 2), .dim = 1, .step = 2);
    if (layout & 2) mb = tg_t(mb);
    tg_tensor *out = tg_t(tg_zeros(TG_INTS(N, M), .dtype = a->dtype, .device = a->device));
    return kt_y2(y, tg_mm(ma, mb), tg_mm_out(ma, mb, out));
}
static const char *mm_name(int p)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "%lldx%lldx%lld layout %d", (long long)mm_sizes[p / 8][0],
             (long long)mm_sizes[p / 8][1], (long long)mm_sizes[p / 8][2], p % 8);
    return buf;
}

/* 0: (5, 33, 20) @ (5, 20, 17); 1: transposed batches; 2: a batch-strided (permuted) a */
KT_FN(f_bmm)
{
    tg_tensor *ma = kt_input(a, (int64_t[]){ 5, 33, 20 }, 3, a->dtype, 1, -1, 1);
    tg_tensor *mb = kt_input(a, (int64_t[]){ 5, 20, 17 }, 3, a->dtype, 2, -1, 1);
    if (a->param == 0) return kt_y1(y, tg_bmm(ma, mb));
    if (a->param == 1) {
        tg_tensor *at = kt_input(a, (int64_t[]){ 5, 20, 33 }, 3, a->dtype, 3, -1, 1);
        tg_tensor *bt = kt_input(a, (int64_t[]){ 5, 17, 20 }, 3, a->dtype, 4, -1, 1);
        return kt_y1(y, tg_bmm(tg_transpose(at, 1, 2), tg_transpose(bt, 1, 2)));
    }
    tg_tensor *ap = kt_input(a, (int64_t[]){ 33, 5, 20 }, 3, a->dtype, 5, -1, 1);
    return kt_y1(y, tg_bmm(tg_permute(ap, TG_INTS(1, 0, 2)), mb));
}

/* 0: a 1-D bias; 1: beta 0.5, alpha 2; 2: transposed, beta 0; 3: K = 0, beta 3; 4: addmm_ */
KT_FN(f_addmm)
{
    tg_tensor *ma = kt_input(a, (int64_t[]){ 40, 30 }, 2, a->dtype, 1, -1, 1);
    tg_tensor *mb = kt_input(a, (int64_t[]){ 30, 24 }, 2, a->dtype, 2, -1, 1);
    tg_tensor *bias = kt_input(a, (int64_t[]){ 24 }, 1, a->dtype, 3, -1, 1);
    tg_tensor *full = kt_input(a, (int64_t[]){ 40, 24 }, 2, a->dtype, 4, -1, 1);
    switch (a->param) {
    case 0: return kt_y1(y, tg_addmm(bias, ma, mb));
    case 1: return kt_y1(y, tg_addmm(full, ma, mb, .beta = 0.5, .alpha = 2));
    case 2: return kt_y1(y, tg_addmm(tg_t(full), tg_t(mb), tg_t(ma), .beta = 0));
    case 3: {
        tg_tensor *k0a = kt_input(a, (int64_t[]){ 40, 0 }, 2, a->dtype, 5, -1, 1);
        tg_tensor *k0b = kt_input(a, (int64_t[]){ 0, 24 }, 2, a->dtype, 6, -1, 1);
        return kt_y1(y, tg_addmm(full, k0a, k0b, .beta = 3));
    }
    default: return kt_y1(y, tg_addmm_(full, ma, mb, .beta = 1, .alpha = -1));
    }
}

KT_FN(f_mm_mixed) { return kt_y1(y, tg_mm(x[1], x[0])); }
KT_FN(f_mm_self) { return kt_y1(y, tg_mm(x[0], x[0])); }

static const kt_case linalg_cases[] = {
    KT_CASE("mm.out", "sizes and layouts, and a column-major out=", f_mm, { { 0 } }, KT_FLOATS,
            &kt_tol_gemm, .count = 40, .param_name = mm_name),
    KT_CASE("bmm.out", "row-major, transposed, a permuted batch", f_bmm, { { 0 } }, KT_FLOATS,
            &kt_tol_gemm, .count = 3),
    KT_CASE("addmm.out", "bias, beta, alpha, transposed, K = 0, in place", f_addmm, { { 0 } },
            KT_FLOATS, &kt_tol_gemm, .count = 5),
    KT_CASE("mm.out", "float32 by float64", f_mm_mixed,
            { { KT_RAND_OF(TG_FLOAT32, -1, 1, 4, 2) }, { KT_RAND_OF(TG_FLOAT64, -1, 1, 3, 4) } },
            .error = "expected scalar type Double but found Float"),
    KT_CASE("mm.out", "(4, 2) by (4, 2)", f_mm_self, { { KT_RAND_OF(TG_FLOAT32, -1, 1, 4, 2) } },
            .error = "mat1 and mat2 shapes cannot be multiplied (4x2 and 4x2)"),
};
KT_REGISTER(linalg_cases);
