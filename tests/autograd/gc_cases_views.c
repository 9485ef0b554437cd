/* Gradcheck cases of views and shapes (view, reshape, transpose, slice, select, cat, stack ...)
 * and copies and conversions (clone, _to_copy, to, copy_) (gradcheck.h).
 *
 * Each case is a small function of its inputs x[] that calls the operator and returns its
 * outputs in y[] (GC_FN, gradcheck.h). In-place operators run on a clone of x[0] (a leaf requiring
 * grad cannot be modified in place); operators that draw random numbers reseed a generator
 * inside the function, so that the finite differences see the same draw on every call. Inputs
 * are chosen away from the points where an operator is not differentiable (GC_AWAY0 for relu
 * and abs, GC_POS for log and sqrt, GC_DISTINCT for max and min, which would otherwise tie). */
#include "gradcheck.h"

/* ------------------------------------------------------------------ views and shapes */

GC_FN(f_as_strided) { return gc_y1(y, tg_as_strided(x[0], TG_INTS(2, 2), TG_INTS(1, 2))); }
GC_FN(f_view) { return gc_y1(y, tg_view(x[0], TG_INTS(2, 6))); }
GC_FN(f_view_flat) { return gc_y1(y, tg_view(x[0], TG_INTS(-1))); }
GC_FN(f_reshape) { return gc_y1(y, tg_reshape(x[0], TG_INTS(6, 2))); }
GC_FN(f_transpose) { return gc_y1(y, tg_transpose(x[0], 0, 2)); }
GC_FN(f_t) { return gc_y1(y, tg_t(x[0])); }
GC_FN(f_permute) { return gc_y1(y, tg_permute(x[0], TG_INTS(2, 0, 1))); }
GC_FN(f_squeeze) { return gc_y1(y, tg_squeeze(x[0])); }
GC_FN(f_squeeze_dim) { return gc_y1(y, tg_squeeze_dim(x[0], 1)); }
GC_FN(f_unsqueeze) { return gc_y1(y, tg_unsqueeze(x[0], 1)); }
GC_FN(f_unsqueeze_last) { return gc_y1(y, tg_unsqueeze(x[0], -1)); }
GC_FN(f_expand) { return gc_y1(y, tg_expand(x[0], TG_INTS(2, 3, 4))); }
/* An expanded view, then an op that reads every element. */
GC_FN(f_expand_mul)
{
    tg_tensor *e = tg_expand(x[0], TG_INTS(3, 4));
    y[0] = tg_mul(e, x[1]);
    tg_release(e);
    return 1;
}
GC_FN(f_slice) { return gc_y1(y, tg_slice(x[0], .dim = 0, .start = 1, .end = 5, .step = 2)); }
GC_FN(f_slice_neg) { return gc_y1(y, tg_slice(x[0], .dim = -1, .start = -3)); }
GC_FN(f_select) { return gc_y1(y, tg_select(x[0], 1, 2)); }
GC_FN(f_select_neg) { return gc_y1(y, tg_select(x[0], 0, -1)); }
GC_FN(f_flatten) { return gc_y1(y, tg_flatten(x[0], .start_dim = 1)); }
GC_FN(f_contiguous) { return gc_y1(y, tg_contiguous(x[0])); }
GC_FN(f_slice_backward) { return gc_y1(y, tg_slice_backward(x[0], TG_INTS(5, 4), 0, 1, 5, 2)); }
GC_FN(f_select_backward) { return gc_y1(y, tg_select_backward(x[0], TG_INTS(3, 4), 1, 2)); }
GC_FN(f_cat) { return gc_y1(y, tg_cat(TG_TENSORS(x[0], x[1]), .dim = 1)); }
GC_FN(f_stack) { return gc_y1(y, tg_stack(TG_TENSORS(x[0], x[1]))); }
/* A view of a non-leaf modified in place, then read through its base. */
GC_FN(f_view_inplace_base)
{
    tg_tensor *s = tg_clone(x[0]);
    tg_tensor *v = tg_select(s, 0, 1);
    tg_release(tg_mul_(v, x[1]));
    tg_release(v);
    y[0] = s;
    return 1;
}

/* ------------------------------------------------------------------ copies and conversions */

GC_FN(f_clone) { return gc_y1(y, tg_clone(x[0])); }
GC_FN(f_to_copy) { return gc_y1(y, tg__to_copy(x[0])); }
GC_FN(f_to_copy_f32) { return gc_y1(y, tg__to_copy(x[0], .dtype = TG_FLOAT32)); }
GC_FN(f_to_f32) { return gc_y1(y, tg_to(x[0], TG_FLOAT32)); }
GC_FN(f_to_copy_flag) { return gc_y1(y, tg_to(x[0], TG_FLOAT64, .copy = true)); }
GC_FN(f_copy_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_copy_(s, x[1]), y);
}

static const gc_case views_cases[] = {
    /* views and shapes */
    GC_CASE("as_strided", "not implemented: fails at backward naming it", f_as_strided,
            { REAL(2, 3) }, .expect_error = "as_strided"),
    GC_CASE("view", "(3,4) -> (2,6)", f_view, { REAL(3, 4) }),
    GC_CASE("view", "(2,3,2) -> (-1)", f_view_flat, { REAL(2, 3, 2) }),
    GC_CASE("reshape", "of a transposed input (copies)", f_reshape, { REAL_T(3, 4) }),
    GC_CASE("transpose.int", "dims 0, 2", f_transpose, { REAL(2, 3, 4) }),
    GC_CASE("t", "of a strided input", f_t, { REAL_S(3, 4) }),
    GC_CASE("permute", "(2, 0, 1)", f_permute, { REAL_T(2, 3, 4) }),
    GC_CASE("squeeze", "(3,1,4,1)", f_squeeze, { REAL(3, 1, 4, 1) }),
    GC_CASE("squeeze.dim", "dim 1 of (3,1,4)", f_squeeze_dim, { REAL(3, 1, 4) }),
    GC_CASE("unsqueeze", "dim 1", f_unsqueeze, { REAL(3, 4) }),
    GC_CASE("unsqueeze", "dim -1, transposed", f_unsqueeze_last, { REAL_T(3, 4) }),
    GC_CASE("expand", "(3,1) -> (2,3,4)", f_expand, { REAL(3, 1) }),
    GC_CASE("expand", "(4) -> (3,4) times x1", f_expand_mul, { REAL(4), REAL(3, 4) }),
    GC_CASE("slice.Tensor", "dim 0 [1:5:2]", f_slice, { REAL(5, 4) }),
    GC_CASE("slice.Tensor", "dim -1 [-3:], transposed", f_slice_neg, { REAL_T(3, 5) }),
    GC_CASE("slice.Tensor", "a view of a clone modified in place", f_view_inplace_base,
            { REAL(3, 4), REAL(4) }),
    GC_CASE("select.int", "dim 1, index 2", f_select, { REAL(3, 4) }),
    GC_CASE("select.int", "dim 0, index -1, strided", f_select_neg, { REAL_S(3, 4) }),
    GC_CASE("flatten.using_ints", "start_dim 1", f_flatten, { REAL(2, 3, 4) }),
    GC_CASE("contiguous", "of a transposed input", f_contiguous, { REAL_T(3, 4) }),
    GC_CASE("slice_backward", "(2,4) into (5,4) [1:5:2]", f_slice_backward, { REAL(2, 4) }),
    GC_CASE("select_backward", "(3) into (3,4) at [:, 2]", f_select_backward, { REAL(3) }),
    /* cat's Tensor[] input: one gradient per element (more cases, and split, unbind, chunk,
     * in test_gradcheck_lists.c); stack is cat of unsqueezed inputs. */
    GC_CASE("cat", "dim 1", f_cat, { REAL(3, 2), REAL(3, 4) }),
    GC_CASE("stack", "dim 0", f_stack, { REAL(3, 2), REAL(3, 2) }),

    /* copies and conversions */
    GC_CASE("clone", "transposed", f_clone, { REAL_T(3, 4) }),
    GC_CASE("_to_copy", "float64 -> float64", f_to_copy, { REAL_S(3, 4) }),
    GC_CASE("_to_copy", "float64 -> float32 (eps 1e-3: float32 rounding)", f_to_copy_f32,
            { REAL(3, 4) }, .eps = 1e-3),
    GC_CASE("to.dtype", "float64 -> float32 (eps 1e-3: float32 rounding)", f_to_f32, { REAL(3, 4) },
            .eps = 1e-3),
    GC_CASE("to.dtype", "copy=True", f_to_copy_flag, { REAL(3, 4) }),
    GC_CASE("copy_", "(1,4) broadcast into a clone", f_copy_, { REAL(3, 4), REAL(1, 4) }),
    GC_CASE("copy_", "transposed into a clone", f_copy_, { REAL(3, 4), REAL_T(3, 4) }),
};
GC_REGISTER(views_cases);
