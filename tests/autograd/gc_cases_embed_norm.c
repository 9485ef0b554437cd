/* Gradcheck cases of the embedding and layer-norm operators (kernels/cpu/layer_norm.c,
 * kernels/cpu/embedding.c, kernels/composite/embnorm.c). Index inputs are constant int64 in
 * [0, rows); embedding's double backward goes embedding -> embedding_dense_backward ->
 * embedding_dense_double_backward (-> embedding again); native_layer_norm's goes through
 * native_layer_norm_backward -> layer_norm_double_backward (a composite), checked by the
 * gradgradchecks of native_layer_norm and the gradcheck of native_layer_norm_backward.
 * scale_grad_by_freq is not a derivative (it rescales the true gradient; PyTorch's gradcheck
 * fails too, and embedding_dense_backward's derivative ignores it as PyTorch's does): the
 * value tests cover it (tests/ops/test_embed_norm.c). */
#include "gradcheck.h"
#include "tg_cover.h"
#include "kt_util.h"

/* layer_norm_double_backward (native_layer_norm_backward's derivative) runs in the cases of
 * native_layer_norm_backward and the gradgradchecks of native_layer_norm below. */
TG_COVERS("layer_norm_double_backward");

static int first3(tg_tensors3 r, tg_tensor **y)
{
    y[0] = r.r0;
    kt_release_all(r.r1, r.r2);
    return 1;
}

static const int64_t ns_last[1] = { 4 }, ns_two[2] = { 3, 4 };

GC_FN(f_native_ln)
{
    return first3(
        tg_native_layer_norm(x[0], (tg_int_list){ .len = 1, .data = ns_last }, x[1], x[2], 1e-5),
        y);
}
GC_FN(f_native_ln_two_plain)
{
    return first3(
        tg_native_layer_norm(x[0], (tg_int_list){ .len = 2, .data = ns_two }, NULL, NULL, 1e-5), y);
}
GC_FN(f_ln)
{
    tg_int_list ns = { .len = 1, .data = ns_last };
    y[0] = tg_layer_norm(x[0], ns, .weight = x[1], .bias = x[2], .eps = 1e-3);
    return 1;
}
GC_FN(f_native_ln_backward)
{
    tg_int_list ns = { .len = 1, .data = ns_last };
    tg_tensors3 r = tg_native_layer_norm(x[1], ns, x[2], NULL, 1e-5);
    tg_tensors3 g = tg_native_layer_norm_backward(x[0], x[1], ns, r.r1, r.r2, x[2], NULL,
                                                  TG_BOOLS(true, true, false));
    kt_release_all(r.r0, r.r1, r.r2);
    if (!g.r0) return -1;
    return gc_y_first2(y, g);
}
GC_FN(f_native_ln_backward_plain)
{
    tg_int_list ns = { .len = 2, .data = ns_two };
    tg_tensors3 r = tg_native_layer_norm(x[1], ns, NULL, NULL, 1e-5);
    tg_tensors3 g = tg_native_layer_norm_backward(x[0], x[1], ns, r.r1, r.r2, NULL, NULL,
                                                  TG_BOOLS(true, false, false));
    kt_release_all(r.r0, r.r1, r.r2);
    if (!g.r0) return -1;
    y[0] = g.r0;
    return 1;
}
GC_FN(f_rms)
{
    tg_int_list ns = { .len = 1, .data = ns_last };
    y[0] = tg_rms_norm(x[0], ns, .weight = x[1]);
    return 1;
}
GC_FN(f_rms_two_eps)
{
    tg_int_list ns = { .len = 2, .data = ns_two };
    tg_opt_float eps = 1e-2;
    y[0] = tg_rms_norm(x[0], ns, .eps = eps);
    return 1;
}
GC_FN(f_emb) { return gc_y1(y, tg_embedding(x[0], x[1])); }
/* The padding row (5) is never looked up (indices in [0, 5)): a looked-up padding row gets a
 * zero gradient by definition, which finite differences (and PyTorch's gradcheck) disagree
 * with; tests/ops/test_embed_norm.c checks that row's zero gradient. */
GC_FN(f_emb_pad) { return gc_y1(y, tg_embedding(x[0], x[1], .padding_idx = 5)); }
GC_FN(f_emb_dense_bw) { return gc_y1(y, tg_embedding_dense_backward(x[0], x[1], 6, 1, false)); }
GC_FN(f_emb_dense_bw_int32)
{
    tg_tensor *i32 = tg_to(x[1], TG_INT32);
    y[0] = tg_embedding_dense_backward(x[0], i32, 6, -1, false);
    tg_release(i32);
    return 1;
}
GC_FN(f_emb_backward) { return gc_y1(y, tg_embedding_backward(x[0], x[1], 6, 3, false, false)); }
GC_FN(f_emb_ddb) { return gc_y1(y, tg_embedding_dense_double_backward(x[0], x[1], 1)); }

static const gc_case embed_norm_cases[] = {
    GC_CASE("native_layer_norm", "affine, (3, 4) over [4]", f_native_ln,
            { REAL(3, 4), REAL(4), REAL(4) }, .gradgrad = true),
    GC_CASE("native_layer_norm", "no affine, over [3, 4], transposed", f_native_ln_two_plain,
            { REAL_T(2, 3, 4) }, .gradgrad = true),
    GC_CASE("layer_norm", "affine, strided, eps 1e-3", f_ln, { REAL_S(3, 4), REAL(4), REAL(4) },
            .gradgrad = true),
    GC_CASE("native_layer_norm_backward", "grad_out, input, weight", f_native_ln_backward,
            { REAL(3, 4), REAL(3, 4), REAL(4) }),
    GC_CASE("native_layer_norm_backward", "no weight, over [3, 4]", f_native_ln_backward_plain,
            { REAL(2, 3, 4), REAL(2, 3, 4) }),
    GC_CASE("rms_norm", "weight, eps None", f_rms, { REAL(3, 4), REAL(4) }, .gradgrad = true),
    GC_CASE("rms_norm", "over [3, 4], eps 1e-2, transposed", f_rms_two_eps, { REAL_T(2, 3, 4) },
            .gradgrad = true),
    GC_CASE("embedding", "(2, 4) indices", f_emb, { REAL(6, 3), INDEX(6, 2, 4) }, .gradgrad = true),
    GC_CASE("embedding", "padding_idx 5, transposed weight", f_emb_pad,
            { REAL_T(6, 3), INDEX(5, 2, 4) }, .gradgrad = true),
    GC_CASE("embedding_dense_backward", "padding_idx 1", f_emb_dense_bw,
            { REAL(2, 4, 3), INDEX(6, 2, 4) }, .gradgrad = true),
    GC_CASE("embedding_dense_backward", "int32 indices, strided", f_emb_dense_bw_int32,
            { REAL_S(2, 4, 3), INDEX(6, 2, 4) }),
    GC_CASE("embedding_backward", "padding_idx 3", f_emb_backward,
            { REAL(2, 4, 3), INDEX(6, 2, 4) }, .gradgrad = true),
    GC_CASE("embedding_dense_double_backward", "padding_idx 1", f_emb_ddb,
            { REAL(6, 3), INDEX(6, 2, 4) }, .gradgrad = true),
};
GC_REGISTER(embed_norm_cases);
