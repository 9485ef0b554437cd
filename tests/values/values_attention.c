/* Value cases of masked_fill, tril/triu, baddbmm and the fused attention (kt_case.h), float32
 * and float64: contiguous and transposed or strided inputs, every mask kind of the fused
 * operator, L != S and sizes that are not multiples of the tiles. masked_fill and tril/triu
 * copy values: exact; baddbmm and attention: kt_tol_attention. */
#include "kt_case.h"

/* x transposed in its last two dims and back: the same values, not contiguous. */
static tg_tensor *transposed(tg_tensor *x)
{
    return tg_transpose(tg_contiguous(tg_transpose(x, -1, -2)), -1, -2);
}

/* 0: Scalar; 1: a Tensor value on the device; 2: a Tensor value on the CPU; 3: in place on a
 * strided self with a strided mask (the transpose of a (7, 5) one) */
KT_FN(f_masked_fill)
{
    tg_tensor *v = tg_full(TG_INTS_EMPTY, 1.25, .dtype = a->dtype);
    switch (a->param) {
    case 0: return kt_y1(y, tg_masked_fill_scalar(x[0], x[1], -3.5));
    case 1:
        return kt_y1(y, tg_masked_fill(
                            x[0], x[1],
                            tg_full(TG_INTS_EMPTY, 1.25, .dtype = a->dtype, .device = a->device)));
    case 2: return kt_y1(y, tg_masked_fill(x[0], x[1], v));
    default: {
        tg_tensor *m = kt_input(a, (int64_t[]){ 7, 5 }, 2, TG_BOOL, 5, 0, 2);
        return kt_y1(y, tg_masked_fill_scalar_(transposed(x[0]), tg_transpose(m, 0, 1), 9));
    }
    }
}
KT_FN(f_masked_fill_float_mask)
{
    return kt_y1(y, tg_masked_fill_scalar_(x[0], tg_ones(TG_INTS(5, 1), .device = a->device), 1));
}

/* diagonal -3, -1, 1, 3 (parameter / 6) of: tril; triu of a strided self; triu.out; tril_ of a
 * strided clone; triu_; tril.out into a clone */
KT_FN(f_tril_triu)
{
    int64_t d = a->param / 6 * 2 - 3;
    tg_tensor *t = x[0], *o = tg_empty(TG_INTS(0), .dtype = a->dtype, .device = a->device);
    switch (a->param % 6) {
    case 0: return kt_y1(y, tg_tril(t, .diagonal = d));
    case 1: return kt_y1(y, tg_triu(transposed(t), .diagonal = d));
    case 2: return kt_y1(y, tg_triu_out(t, o, .diagonal = d));
    case 3: return kt_y1(y, tg_tril_(tg_clone(transposed(t)), .diagonal = d));
    case 4: return kt_y1(y, tg_triu_(tg_clone(t), .diagonal = d));
    default: return kt_y1(y, tg_tril_out(t, tg_clone(t), .diagonal = d));
    }
}

/* 0: beta 0.5, alpha -2; 1: a broadcast (4, 1) self; 2: baddbmm_ beta 2; 3: baddbmm.out beta 0;
 * batch2 transposed throughout */
KT_FN(f_baddbmm)
{
    tg_tensor *b = transposed(x[3]);
    switch (a->param) {
    case 0: return kt_y1(y, tg_baddbmm(x[0], x[2], b, .beta = 0.5, .alpha = -2));
    case 1: return kt_y1(y, tg_baddbmm(x[1], x[2], b));
    case 2: return kt_y1(y, tg_baddbmm_(tg_clone(x[0]), x[2], b, .beta = 2));
    default: {
        tg_tensor *o = tg_empty(TG_INTS(0), .dtype = a->dtype, .device = a->device);
        return kt_y1(y, tg_baddbmm_out(x[0], x[2], b, o, .beta = 0));
    }
    }
}

/* The fused attention forward and backward: parameter = kind * 2 + shape (kind 0 none, 1
 * causal, 2 a bool (B, 1, L, S) mask, 3 a float (L, S) mask of the other dtype; shape 0: L = S =
 * 37, 1: L 21, S 50, strided q (a (B, L, H, E) storage) and k except causal's, which strides
 * the first), and 8: causal with L 50, S 19 (float32). */
KT_FN(f_fused)
{
    const int64_t B = 2, H = 3, E = 16, Ev = 9;
    int kind = a->param < 8 ? a->param / 2 : 1, shape = a->param % 2;
    if (a->param == 8 && a->dtype != TG_FLOAT32) return KT_NO_FORM;
    int64_t L = a->param == 8 ? 50 : shape ? 21 : 37, S = a->param == 8 ? 19 : shape ? 50 : 37;
    bool strided = a->param < 8 && (kind == 1) == (shape == 0);
    tg_dtype dt = a->dtype;
    tg_tensor *q = kt_input(a, (int64_t[]){ B, H, L, E }, 4, dt, 31, -1.5, 1.5);
    tg_tensor *k = kt_input(a, (int64_t[]){ B, H, S, E }, 4, dt, 32, -1.5, 1.5);
    tg_tensor *v = kt_input(a, (int64_t[]){ B, H, S, Ev }, 4, dt, 33, -1, 1);
    if (strided) { /* (B, L, H, E) storage seen as (B, H, L, E), as the GPT's views are */
        q = tg_transpose(kt_input(a, (int64_t[]){ B, L, H, E }, 4, dt, 41, -1.5, 1.5), 1, 2);
        k = transposed(k);
    }
    tg_tensor *m = NULL;
    if (kind == 2) m = kt_input(a, (int64_t[]){ B, 1, L, S }, 4, TG_BOOL, 34, 0, 2);
    if (kind == 3)
        m = kt_input(a, (int64_t[]){ L, S }, 2, dt == TG_FLOAT32 ? TG_FLOAT64 : TG_FLOAT32, 35, -1,
                     1);
    tg_output_logsumexp f =
        tg__scaled_dot_product_fused_attention(q, k, v, .is_causal = kind == 1, .attn_mask = m);
    tg_tensor *go = transposed(kt_input(a, (int64_t[]){ B, H, L, Ev }, 4, dt, 36, -1, 1));
    tg_grad_query_grad_key_grad_value g = tg__scaled_dot_product_fused_attention_backward(
        go, q, k, v, f.output, f.logsumexp, 0.0, kind == 1, .attn_mask = m);
    y[0] = f.output;
    y[1] = f.logsumexp;
    y[2] = g.grad_query;
    y[3] = g.grad_key;
    y[4] = g.grad_value;
    return f.output && g.grad_query ? 5 : -1;
}

/* the composite (on device tensors it takes the fused path), and the gradients of its sum
 * through autograd */
KT_FN(f_sdpa)
{
    tg_tensor *l[3];
    for (int i = 0; i < 3; i++) l[i] = tg_tensor_set_requires_grad(tg_clone(x[i]), true);
    y[0] = tg_scaled_dot_product_attention(l[0], l[1], l[2], .is_causal = true);
    if (!y[0] || tg_grad(TG_TENSORS(tg_sum(y[0])), TG_TENSORS(l[0], l[1], l[2]), y + 1)) return -1;
    return 4;
}

#define QKV(s)                                 \
    {                                          \
        KT_RAND(-1, 1, 1, 2, 33, 8), .seed = s \
    }

static const kt_case attention_cases[] = {
    KT_CASE(
        "masked_fill.Scalar", "(2, 5, 7) with a (5, 1) mask; Tensor values; strided, in place",
        f_masked_fill,
        { { KT_RAND(-2, 2, 2, 5, 7), .seed = 3 }, { KT_RAND_OF(TG_BOOL, 0, 2, 5, 1), .seed = 4 } },
        KT_F32_F64, &kt_exact, .count = 4,
        KT_ALSO("masked_fill.Tensor", "masked_fill_.Scalar", "masked_fill_.Tensor")),
    KT_CASE("masked_fill_.Scalar", "a float mask", f_masked_fill_float_mask,
            { { KT_RAND(-2, 2, 2, 5, 7) } }, KT_F32_F64,
            .error = "masked_fill_ only supports boolean masks"),
    KT_CASE("tril.out", "(2, 3, 6, 5): tril, triu, out=, in place, strided", f_tril_triu,
            { { KT_RAND(-1, 1, 2, 3, 6, 5), .seed = 10 } }, KT_F32_F64, &kt_exact, .count = 24,
            KT_ALSO("triu.out", "tril", "triu", "tril_", "triu_")),
    KT_CASE("baddbmm.out",
            "(3, 4, 5) @ (3, 5, 6): beta, alpha, broadcast, in place, out=", f_baddbmm,
            { { KT_RAND(-1, 1, 3, 4, 6), .seed = 1 },
              { KT_RAND(-1, 1, 4, 1), .seed = 2 },
              { KT_RAND(-1, 1, 3, 4, 5), .seed = 3 },
              { KT_RAND(-1, 1, 3, 5, 6), .seed = 4 } },
            KT_F32_F64, &kt_tol_attention, .count = 4, KT_ALSO("baddbmm", "baddbmm_")),
    KT_CASE("_scaled_dot_product_fused_attention",
            "forward and backward: every mask kind, L != S, strided", f_fused, { { 0 } },
            KT_F32_F64, &kt_tol_attention, .count = 9,
            KT_ALSO("_scaled_dot_product_fused_attention_backward")),
    KT_CASE("scaled_dot_product_attention", "(1, 2, 33, 8), causal, and its gradients", f_sdpa,
            { QKV(50), QKV(51), QKV(52) }, KT_ONE(TG_FLOAT64), &kt_tol_attention),
};
KT_REGISTER(attention_cases);
