/* Gradcheck cases for Tensor[] inputs and outputs (gradcheck.h): cat and stack, whose Tensor[]
 * input gets one gradient per element (`tensors: split_with_sizes(grad, tensors.size(dim), dim)`),
 * and split, split_with_sizes, unbind and chunk, whose Tensor[] output's node has one output
 * per element (`self: cat(grads, dim)`). The pieces of a split are the function's outputs, so
 * the harness checks each piece's Jacobian with the other pieces' gradients materialised as
 * zeros by the engine. Registered with GC_REGISTER; run by tests/autograd/test_gradcheck.c. */
#include "gradcheck.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* The pieces of a list result as the function's outputs (the array is freed, the references
 * move to y). -1 when the call failed. */
static int pieces(tg_tensor_list l, tg_tensor **y)
{
    if (!l.data) return -1;
    int n = 0;
    for (int64_t i = 0; i < l.len; i++) {
        if (n < GC_MAX_OUTPUTS) y[n++] = l.data[i];
        else tg_release(l.data[i]);
    }
    tg_tensor_list_release((tg_tensor_list){ l.data, 0 }); /* the array only */
    return n;
}

/* ------------------------------------------------------------------ Tensor[] inputs */

GC_FN(f_cat_dim1) { return gc_y1(y, tg_cat(TG_TENSORS(x[0], x[1]), .dim = 1)); }
GC_FN(f_cat3_neg) { return gc_y1(y, tg_cat(TG_TENSORS(x[0], x[1], x[2]), .dim = -2)); }
GC_FN(f_cat_same) { return gc_y1(y, tg_cat(TG_TENSORS(x[0], x[0], x[1]))); }
/* A legacy 1-D empty input is skipped by cat: its gradient is an empty tensor of its shape. */
GC_FN(f_cat_legacy_empty) { return gc_y1(y, tg_cat(TG_TENSORS(x[0], x[2], x[1]), .dim = 1)); }
/* float32 and float64 inputs: the result is float64, each gradient comes back in its input's
 * dtype (the engine casts), and to.dtype carries it to the float64 leaf. */
GC_FN(f_cat_mixed)
{
    tg_tensor *f = tg_to(x[0], TG_FLOAT32);
    y[0] = tg_cat(TG_TENSORS(f, x[1]), .dim = 0);
    tg_release(f);
    return 1;
}
GC_FN(f_stack0) { return gc_y1(y, tg_stack(TG_TENSORS(x[0], x[1]))); }
GC_FN(f_stack_neg) { return gc_y1(y, tg_stack(TG_TENSORS(x[0], x[1], x[0]), .dim = -1)); }

/* ------------------------------------------------------------------ Tensor[] outputs */

GC_FN(f_split0) { return pieces(tg_split(x[0], 2), y); }
GC_FN(f_split_neg) { return pieces(tg_split(x[0], 3, .dim = -1), y); }
/* Only pieces 0 and 2 are used: piece 1's gradient is zeros made by the engine. */
GC_FN(f_split_partial)
{
    tg_tensor_list l = tg_split(x[0], 1);
    if (!l.data) return -1;
    y[0] = tg_retain(l.data[0]);
    y[1] = tg_mul(l.data[2], l.data[2]);
    tg_tensor_list_release(l);
    return 2;
}
GC_FN(f_split_sizes) { return pieces(tg_split_with_sizes(x[0], TG_INTS(1, 0, 4), .dim = 1), y); }
GC_FN(f_split_sizes_t) { return pieces(tg_split_with_sizes(x[0], TG_INTS(3, 1), .dim = -2), y); }
GC_FN(f_unbind1) { return pieces(tg_unbind(x[0], .dim = 1), y); }
GC_FN(f_unbind0) { return pieces(tg_unbind(x[0]), y); }
/* unbind, scale one row, stack back: a Tensor[] output feeding a Tensor[] input. */
GC_FN(f_unbind_stack)
{
    tg_tensor_list l = tg_unbind(x[0]);
    if (!l.data) return -1;
    tg_tensor *s = tg_mul(l.data[1], x[1]);
    y[0] = tg_stack(TG_TENSORS(l.data[0], s, l.data[2]), .dim = 1);
    tg_release(s);
    tg_tensor_list_release(l);
    return 1;
}
GC_FN(f_chunk) { return pieces(tg_chunk(x[0], 4), y); }
GC_FN(f_chunk_dim1) { return pieces(tg_chunk(x[0], 2, .dim = 1), y); }

static const gc_case list_cases[] = {
    GC_CASE("cat", "dim 1: (3,2) + (3,4)", f_cat_dim1, { REAL(3, 2), REAL(3, 4) },
            .gradgrad = true),
    GC_CASE("cat", "dim -2, three inputs, transposed and strided", f_cat3_neg,
            { REAL(2, 3), REAL_T(1, 3), REAL_S(4, 3) }, .gradgrad = true),
    GC_CASE("cat", "the same input twice (gradients add up)", f_cat_same,
            { REAL(2, 3), REAL(1, 3) }),
    GC_CASE("cat", "dim 1 with a legacy 1-D empty input", f_cat_legacy_empty,
            { REAL(2, 3, 2), REAL(2, 1, 2), REAL(0) }),
    GC_CASE("cat", "float32 + float64 (eps 1e-3: float32 rounding)", f_cat_mixed,
            { REAL(2, 3), REAL(1, 3) }, .eps = 1e-3),
    GC_CASE("cat", "a constant input", f_cat_dim1, { REAL(3, 2), CONST(3, 1) }),
    GC_CASE("stack", "dim 0", f_stack0, { REAL(3, 2), REAL(3, 2) }, .gradgrad = true),
    GC_CASE("stack", "dim -1, an input twice, transposed", f_stack_neg,
            { REAL_T(2, 3), REAL(2, 3) }),
    GC_CASE("split.Tensor", "(5,3) in 2s along dim 0: last piece shorter", f_split0, { REAL(5, 3) },
            .gradgrad = true),
    GC_CASE("split.Tensor", "dim -1, transposed", f_split_neg, { REAL_T(2, 7) }),
    GC_CASE("split.Tensor", "a piece unused (zeros materialised)", f_split_partial, { REAL(3, 2) }),
    GC_CASE("split_with_sizes", "[1, 0, 4] along dim 1", f_split_sizes, { REAL(2, 5) },
            .gradgrad = true),
    GC_CASE("split_with_sizes", "[3, 1] along dim -2, strided", f_split_sizes_t, { REAL_S(4, 3) }),
    GC_CASE("unbind.int", "dim 1", f_unbind1, { REAL(3, 4) }),
    GC_CASE("unbind.int", "dim 0, transposed", f_unbind0, { REAL_T(3, 2) }, .gradgrad = true),
    GC_CASE("unbind.int", "unbind, scale a row, stack back", f_unbind_stack,
            { REAL(3, 4), REAL(4) }, .gradgrad = true),
    GC_CASE("chunk", "(6,2) into 4 chunks: 3 pieces", f_chunk, { REAL(6, 2) }, .gradgrad = true),
    GC_CASE("chunk", "dim 1, strided", f_chunk_dim1, { REAL_S(2, 5) }),
};
GC_REGISTER(list_cases);
