/* Gradcheck cases of the attention and masking operators (gradcheck.h): masked_fill (self and
 * the 0-dim value), tril/triu, baddbmm, the fused attention operator (its backward operator has
 * no derivative of its own: first order only) and scaled_dot_product_attention on both its paths
 * (4-D inputs take the fused kernel, 3-D ones the math composite, which also has second order). */
#include "gradcheck.h"

GC_FN(f_mf_scalar) { return gc_y1(y, tg_masked_fill_scalar(x[0], x[1], 2.5)); }
GC_FN(f_mf_tensor) { return gc_y1(y, tg_masked_fill(x[0], x[1], x[2])); }
GC_FN(f_tril) { return gc_y1(y, tg_tril(x[0], .diagonal = -1)); }
GC_FN(f_triu) { return gc_y1(y, tg_triu(x[0], .diagonal = 1)); }
GC_FN(f_baddbmm) { return gc_y1(y, tg_baddbmm(x[0], x[1], x[2], .beta = 0.5, .alpha = 2)); }
GC_FN(f_fused_causal)
{
    tg_output_logsumexp r =
        tg__scaled_dot_product_fused_attention(x[0], x[1], x[2], .is_causal = true);
    y[0] = r.output;
    tg_release(r.logsumexp);
    return y[0] ? 1 : -1;
}
GC_FN(f_fused_mask)
{
    tg_output_logsumexp r =
        tg__scaled_dot_product_fused_attention(x[0], x[1], x[2], .attn_mask = x[3], .scale = 0.7);
    y[0] = r.output;
    tg_release(r.logsumexp);
    return y[0] ? 1 : -1;
}
GC_FN(f_sdpa_causal)
{
    return gc_y1(y, tg_scaled_dot_product_attention(x[0], x[1], x[2], .is_causal = true));
}
GC_FN(f_sdpa_mask)
{
    return gc_y1(y, tg_scaled_dot_product_attention(x[0], x[1], x[2], .attn_mask = x[3]));
}
GC_FN(f_math)
{
    return gc_y_t2(y, tg__scaled_dot_product_attention_math(x[0], x[1], x[2], .attn_mask = x[3]));
}

/* The in-place forms, applied to a clone of x[0] (a leaf that requires grad cannot be written). */
GC_FN(f_mf_scalar_)
{
    tg_tensor *s = tg_clone(x[0]);
    y[0] = tg_masked_fill_scalar_(s, x[1], -1.5);
    tg_release(s);
    return y[0] ? 1 : -1;
}
GC_FN(f_mf_tensor_)
{
    tg_tensor *s = tg_clone(x[0]);
    y[0] = tg_masked_fill_(s, x[1], x[2]);
    tg_release(s);
    return y[0] ? 1 : -1;
}
GC_FN(f_tril_)
{
    tg_tensor *s = tg_clone(x[0]);
    y[0] = tg_tril_(s, .diagonal = 1);
    tg_release(s);
    return y[0] ? 1 : -1;
}
GC_FN(f_triu_)
{
    tg_tensor *s = tg_clone(x[0]);
    y[0] = tg_triu_(s);
    tg_release(s);
    return y[0] ? 1 : -1;
}
GC_FN(f_baddbmm_)
{
    tg_tensor *s = tg_clone(x[0]);
    y[0] = tg_baddbmm_(s, x[1], x[2], .beta = -1, .alpha = 0.5);
    tg_release(s);
    return y[0] ? 1 : -1;
}

static const gc_case attention_cases[] = {
    GC_CASE("masked_fill.Scalar", "broadcast mask", f_mf_scalar, { REAL_T(3, 4), MASK(4) },
            .gradgrad = true),
    GC_CASE("masked_fill.Tensor", "self and value", f_mf_tensor, { REAL(3, 4), MASK(3, 1), REAL0 },
            .gradgrad = true),
    GC_CASE("tril", "batched, transposed, diagonal -1", f_tril, { REAL_T(2, 4, 5) },
            .gradgrad = true),
    GC_CASE("triu", "batched, strided, diagonal 1", f_triu, { REAL_S(2, 4, 5) }, .gradgrad = true),
    GC_CASE("baddbmm", "beta 0.5, alpha 2", f_baddbmm,
            { REAL(2, 3, 4), REAL(2, 3, 5), REAL_T(2, 5, 4) }, .gradgrad = true),
    GC_CASE("baddbmm", "broadcast self", f_baddbmm, { REAL(3, 1), REAL(2, 3, 5), REAL(2, 5, 4) }),
    GC_CASE("_scaled_dot_product_fused_attention", "causal, L != S", f_fused_causal,
            { REAL(1, 2, 5, 4), REAL(1, 2, 7, 4), REAL(1, 2, 7, 3) }),
    GC_CASE("_scaled_dot_product_fused_attention", "float mask, scale, transposed", f_fused_mask,
            { REAL_T(2, 1, 6, 4), REAL(2, 1, 5, 4), REAL(2, 1, 5, 3), CONST(6, 5) }),
    GC_CASE("scaled_dot_product_attention", "fused path, causal", f_sdpa_causal,
            { REAL(1, 2, 6, 3), REAL(1, 2, 6, 3), REAL(1, 2, 6, 2) }),
    GC_CASE("scaled_dot_product_attention", "math path (3-D), float mask", f_sdpa_mask,
            { REAL(2, 4, 3), REAL(2, 5, 3), REAL(2, 5, 2), CONST(4, 5) }, .gradgrad = true),
    GC_CASE("_scaled_dot_product_attention_math", "output and weights", f_math,
            { REAL(2, 3, 4), REAL(2, 5, 4), REAL(2, 5, 3), CONST(3, 5) }, .gradgrad = true),
    GC_CASE("masked_fill_.Scalar", "in place", f_mf_scalar_, { REAL(3, 4), MASK(3, 4) },
            .gradgrad = true),
    GC_CASE("masked_fill_.Tensor", "in place, self and value", f_mf_tensor_,
            { REAL(3, 4), MASK(4), REAL0 }, .gradgrad = true),
    GC_CASE("tril_", "in place", f_tril_, { REAL(3, 4, 4) }, .gradgrad = true),
    GC_CASE("triu_", "in place", f_triu_, { REAL(4, 3) }, .gradgrad = true),
    GC_CASE("baddbmm_", "in place", f_baddbmm_, { REAL(2, 3, 4), REAL(2, 3, 5), REAL(2, 5, 4) },
            .gradgrad = true),
};
GC_REGISTER(attention_cases);
