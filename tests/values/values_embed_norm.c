/* Value cases of layer norm and embedding (kt_case.h): native_layer_norm (one and two
 * normalized dims, affine, weight only, plain, a transposed input, 300 rows for several
 * column-sum chunks) and its backward under every output_mask; embedding (int64 and int32
 * indices, every element size) and embedding_dense_backward (padding_idx,
 * scale_grad_by_freq); the composites one_hot and rms_norm; out-of-range indices.
 * Bounds: kt_tol_norm, kt_tol_norm_backward; embedding exact, its backward kt_tol_atomic. */
#include "kt_case.h"

/* ------------------------------------------------------------------ layer norm */

/* x (5, 6, 40), grad_output, then the weights and biases of (40) and (6, 40) */
#define LN_INPUTS                                                                     \
    { KT_RAND(-2, 3, 5, 6, 40), .seed = 1 }, { KT_RAND(-1, 1, 5, 6, 40), .seed = 2 }, \
        { KT_RAND(-1, 1, 40), .seed = 3 }, { KT_RAND(-1, 1, 40), .seed = 4 },         \
        { KT_RAND(-1, 1, 6, 40), .seed = 5 },                                         \
    {                                                                                 \
        KT_RAND(-1, 1, 6, 40), .seed = 6                                              \
    }

/* config 0: (40) affine; 1: (6, 40) affine; 2: (40) weight only; 3: (40) plain */
static tg_tensors3 layer_norm(tg_tensor *const *x, int config, tg_tensor *in, tg_int_list *ns,
                              tg_tensor **w, tg_tensor **b)
{
    static const int64_t ns1[] = { 40 }, ns2[] = { 6, 40 };
    *ns = config == 1 ? (tg_int_list){ .len = 2, .data = ns2 }
                      : (tg_int_list){ .len = 1, .data = ns1 };
    *w = config == 3 ? NULL : config == 1 ? x[4] : x[2];
    *b = config >= 2 ? NULL : config == 1 ? x[5] : x[3];
    return tg_native_layer_norm(in, *ns, *w, *b, 1e-5);
}
KT_FN(f_layer_norm)
{
    tg_int_list ns;
    tg_tensor *w, *b;
    return kt_y3(y, layer_norm(x, a->param, x[0], &ns, &w, &b));
}
/* parameter = config * 3 + mask: the backward from this device's statistics */
KT_FN(f_layer_norm_backward)
{
    static const bool masks[3][3] = { { true, true, true },
                                      { false, true, true },
                                      { true, false, false } };
    tg_int_list ns;
    tg_tensor *w, *b;
    tg_tensors3 f = layer_norm(x, a->param / 3, x[0], &ns, &w, &b);
    tg_bool_list mask = { masks[a->param % 3], 3 };
    return kt_y3(y, tg_native_layer_norm_backward(x[1], x[0], ns, f.r1, f.r2, w, b, mask));
}
KT_FN(f_layer_norm_transposed)
{
    tg_int_list ns;
    tg_tensor *w, *b;
    return kt_y3(y, layer_norm(x, 0, tg_transpose(x[0], 0, 1), &ns, &w, &b));
}
KT_FN(f_rms_norm) { return kt_y1(y, tg_rms_norm(x[0], TG_INTS(40), .weight = x[2])); }
/* (300, 33): weight and bias the same tensor; the backward from this device's statistics */
KT_FN(f_layer_norm_300)
{
    tg_tensors3 f = tg_native_layer_norm(x[0], TG_INTS(33), x[2], x[2], 1e-5);
    if (a->param == 0) return kt_y3(y, f);
    return kt_y3(y, tg_native_layer_norm_backward(x[1], x[0], TG_INTS(33), f.r1, f.r2, x[2], x[2],
                                                  TG_BOOLS(true, true, true)));
}

/* ------------------------------------------------------------------ embedding */

#define IDX                                           \
    {                                                 \
        KT_RAND_OF(TG_INT64, 0, 37, 4, 9), .seed = 21 \
    }
KT_FN(f_embedding)
{
    return kt_y2(y, tg_embedding(x[0], x[1]), tg_embedding(x[0], tg_to(x[1], TG_INT32)));
}
/* parameter = (padding_idx -1 or 3) * 4 + scale_grad_by_freq * 2 + int32 indices */
KT_FN(f_embedding_backward)
{
    int64_t pad = a->param / 4 ? 3 : -1;
    tg_tensor *i = a->param % 2 ? tg_to(x[1], TG_INT32) : x[1];
    return kt_y1(y, tg_embedding_dense_backward(x[0], i, 37, pad, a->param / 2 % 2));
}
KT_FN(f_one_hot) { return kt_y2(y, tg_one_hot(x[0]), tg_one_hot(x[0], .num_classes = 40)); }
/* indices in [0, 38): 37 is out of range */
KT_FN(f_embedding_bad)
{
    tg_tensor *i = a->param ? tg_to(x[1], TG_INT32) : x[1];
    return kt_y1(y, tg_embedding(x[0], i));
}
KT_FN(f_embedding_backward_bad)
{
    return kt_y1(y, tg_embedding_dense_backward(x[0], x[1], 37, -1, true));
}

static const kt_case embed_norm_cases[] = {
    KT_CASE("native_layer_norm", "(5, 6, 40): affine, (6, 40), weight only, plain", f_layer_norm,
            { LN_INPUTS }, KT_F32_F64, &kt_tol_norm, .count = 4),
    KT_CASE("native_layer_norm_backward", "every config and output_mask", f_layer_norm_backward,
            { LN_INPUTS }, KT_F32_F64, &kt_tol_norm_backward, .count = 12),
    KT_CASE("native_layer_norm", "a transposed input", f_layer_norm_transposed, { LN_INPUTS },
            KT_F32_F64, &kt_tol_norm),
    KT_CASE("native_layer_norm", "(300, 33)", f_layer_norm_300,
            { { KT_RAND(-1, 1, 300, 33), .seed = 7 },
              { KT_RAND(-1, 1, 300, 33), .seed = 8 },
              { KT_RAND(-1, 1, 33), .seed = 9 } },
            KT_F32_F64, &kt_tol_norm),
    KT_CASE("native_layer_norm_backward", "(300, 33)", f_layer_norm_300,
            { { KT_RAND(-1, 1, 300, 33), .seed = 7 },
              { KT_RAND(-1, 1, 300, 33), .seed = 8 },
              { KT_RAND(-1, 1, 33), .seed = 9 } },
            KT_F32_F64, &kt_tol_norm_backward, .count = 2),
    KT_CASE("rms_norm", "(5, 6, 40) over (40), weight", f_rms_norm, { LN_INPUTS }, KT_F32_F64,
            &kt_tol_norm),

    KT_CASE("embedding", "(37, 19) by (4, 9) int64 and int32", f_embedding,
            { { KT_RAND(-3, 3, 37, 19), .seed = 22 }, IDX },
            { 4, { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_INT8 } }, &kt_exact),
    KT_CASE("embedding_dense_backward", "padding_idx, scale_grad_by_freq, int32",
            f_embedding_backward, { { KT_RAND(-1, 1, 4, 9, 19), .seed = 23 }, IDX }, KT_F32_F64,
            &kt_tol_atomic, .count = 8),
    KT_CASE("one_hot", "(4, 9), and 40 classes", f_one_hot, { IDX }, { 0 }, &kt_exact),
    KT_CASE("embedding", "index 37 of 37 rows", f_embedding_bad,
            { { KT_RAND_OF(TG_FLOAT32, -1, 1, 37, 19), .seed = 24 },
              { KT_RAND_OF(TG_INT64, 0, 38, 4, 9), .seed = 25 } },
            .count = 2, .error = "index out of range in self"),
    KT_CASE("embedding_dense_backward", "index 37 of 37 rows", f_embedding_backward_bad,
            { { KT_RAND_OF(TG_FLOAT32, -1, 1, 4, 9, 19), .seed = 26 },
              { KT_RAND_OF(TG_INT64, 0, 38, 4, 9), .seed = 25 } },
            .error = "index out of range in self"),
};
KT_REGISTER(embed_norm_cases);
