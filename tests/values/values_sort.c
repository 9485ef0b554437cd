/* Value cases of sort, topk and sort_backward (kt_case.h): rows short enough for the
 * shared-memory bitonic kernel and longer ones for the one-thread-per-row fallback (sort,
 * topk's heap selection and its full sort), ties (every backend orders them stably, so the
 * indices agree exactly), NaN, the middle dim, a transposed input, float32, float64 and int64;
 * _foreach_norm and tg_clip_grad_norm_. Bounds: sort and topk move values without arithmetic:
 * exact; norms kt_tol_relative. */
#include "kt_case.h"
#include "tg_nn_optim.h" /* tg_clip_grad_norm_ */

/* Values with ties: integers in [-32, 32), as floating types divided by 4 (exact in every
 * dtype). */
static tg_tensor *quarters(const kt_arg *a, const int64_t *shape, int64_t ndim, uint64_t seed)
{
    tg_tensor *r = kt_input(a, shape, ndim, TG_INT64, seed, -32, 32);
    if (a->dtype == TG_INT64) return r;
    return tg_to(tg_div_scalar(tg_to(r, TG_FLOAT64), 4), a->dtype);
}

/* parameter = shape * 9 + dim * 2 + descending (dim 0 .. 3 is -1 .. 2), and shape * 9 + 8 the
 * transpose sorted along dim 0 */
static const int64_t sort_shapes[3][3] = { { 6, 37, 1 }, { 3, 1500, 1 }, { 2, 5, 7 } };
KT_FN(f_sort)
{
    int s = a->param / 9, r = a->param % 9;
    int64_t ndim = s == 2 ? 3 : 2, dim = r / 2 - 1;
    tg_tensor *t = quarters(a, sort_shapes[s], ndim, 10 + (uint64_t)s);
    if (r == 8) {
        tg_values_indices v = tg_sort(tg_transpose(t, 0, 1), .dim = 0);
        return kt_y2(y, v.values, v.indices);
    }
    if (dim >= ndim) return KT_NO_FORM;
    tg_values_indices v = tg_sort_stable(t, true, .dim = dim, .descending = r % 2);
    return kt_y2(y, v.values, v.indices);
}
/* sort, sort descending, topk 3 */
KT_FN(f_sort_nan)
{
    tg_values_indices v = a->param == 2   ? tg_topk(x[0], 3)
                          : a->param == 1 ? tg_sort(x[0], .descending = true)
                                          : tg_sort(x[0]);
    return kt_y2(y, v.values, v.indices);
}
static const double nan9[9] = { 1, NAN, -INFINITY, 0.5, NAN, INFINITY, -0.0, 0.0, 2 };

/* parameter = shape * 4 + k * 2 + largest: (4, 100) k 5, 60 (bitonic); (2, 3000) k 7 (heap
 * selection), 500 (full sort); the values, the indices and sort_backward of a random grad to
 * them; then parameter 8 + shape: topk 2 along dim 0 */
static const int64_t topk_shapes[2][2] = { { 4, 100 }, { 2, 3000 } };
static const int64_t topk_ks[2][2] = { { 5, 60 }, { 7, 500 } };
KT_FN(f_topk)
{
    int s = a->param < 8 ? a->param / 4 : a->param - 8, j = a->param / 2 % 2;
    tg_tensor *t = kt_input(a, topk_shapes[s], 2, a->dtype, 20 + (uint64_t)s, -3, 3);
    if (a->param >= 8) {
        tg_values_indices v = tg_topk(t, 2, .dim = 0);
        return kt_y2(y, v.values, v.indices);
    }
    tg_values_indices v = tg_topk(t, topk_ks[s][j], .largest = a->param % 2);
    if (!v.values) return -1;
    tg_tensor *g = kt_input(a, tg_tensor_sizes(v.values), 2, a->dtype, 30, -1, 1);
    y[2] = tg_sort_backward(g, -1, v.indices, TG_INTS(topk_shapes[s][0], topk_shapes[s][1]));
    return kt_y2(y, v.values, v.indices) > 0 && y[2] ? 3 : -1;
}
KT_FN(f_topk_too_many) { return kt_y1(y, tg_topk(x[0], 4).values); }
KT_FN(f_sort_backward_bad)
{
    tg_tensor *bad = tg_full(TG_INTS(2, 1), 3, .dtype = TG_INT64, .device = a->device);
    return kt_y1(y, tg_sort_backward(x[0], 1, bad, TG_INTS(2, 3)));
}

/* ------------------------------------------------------------------ norms */

/* (30, 17), (70000) and the (4, 3, 2) transpose of a (2, 3, 4) tensor */
#define NORM_INPUTS                                                              \
    { KT_RAND(-2, 2, 30, 17), .seed = 1 }, { KT_RAND(-1, 1, 70000), .seed = 2 }, \
    {                                                                            \
        KT_RAND(-3, 3, 2, 3, 4), .seed = 3                                       \
    }
static const double ords[6] = { 2, 1, INFINITY, -INFINITY, 0, 3 };
KT_FN(f_foreach_norm)
{
    tg_tensor *l[3] = { x[0], x[1], tg_transpose(x[2], 0, 2) };
    tg_tensor_list list = { l, 3 };
    tg_tensor_list r = tg__foreach_norm(list, .ord = ords[a->param]);
    if (!r.data) return -1;
    for (int i = 0; i < 3; i++) y[i] = r.data[i];
    return 3;
}
/* parameters whose grads are the inputs, clipped to 0.5 in the 2-norm (0) or the max norm (1):
 * the total norm (as a zero-dim tensor) and the clipped grads */
KT_FN(f_clip_grad_norm)
{
    tg_tensor *p[3], *g[3] = { x[0], x[1], tg_transpose(x[2], 0, 2) };
    for (int i = 0; i < 3; i++) {
        p[i] = tg_tensor_set_requires_grad(tg_zeros_like(g[i]), true);
        tg_tensor_set_grad(p[i], tg_clone(g[i]));
    }
    double total = tg_clip_grad_norm_(p, 3, 0.5, a->param ? INFINITY : 2);
    if (total < 0) return -1;
    y[0] = tg_full(TG_INTS_EMPTY, total, .dtype = TG_FLOAT64, .device = a->device);
    for (int i = 0; i < 3; i++) y[1 + i] = tg_tensor_grad(p[i]);
    return 4;
}

static const kt_case sort_cases[] = {
    KT_CASE("sort.values_stable", "3 shapes, every dim, both orders; a transposed input", f_sort,
            { { 0 } }, { 3, { TG_FLOAT32, TG_FLOAT64, TG_INT64 } }, &kt_exact, .count = 27),
    KT_CASE("sort.values_stable", "NaN and infinities; topk", f_sort_nan,
            { { KT_VALUES(nan9, 9) } }, KT_ONE(TG_FLOAT32), &kt_exact, .count = 3,
            KT_ALSO("topk.values")),
    KT_CASE("topk.values", "bitonic, heap, full sort; largest and smallest; dim 0; sort_backward",
            f_topk, { { 0 } }, KT_F32_F64, &kt_exact, .count = 10, KT_ALSO("sort_backward")),
    KT_CASE("topk.values", "k 4 of 3", f_topk_too_many, { { KT_RAND_OF(TG_FLOAT32, 0, 0, 2, 3) } },
            .error = "topk: selected index k out of range"),
    KT_CASE("sort_backward", "index 3 of 3", f_sort_backward_bad,
            { { KT_RAND_OF(TG_FLOAT32, 1, 1, 2, 1) } },
            .error = "index 3 is out of bounds for dimension 1 with size 3"),
    KT_CASE("_foreach_norm.Scalar", "3 tensors, ord 2, 1, inf, -inf, 0, 3", f_foreach_norm,
            { NORM_INPUTS }, KT_F32_F64, &kt_tol_relative, .count = 6),
    KT_CASE("_foreach_norm.Scalar", "clip_grad_norm_ in the 2-norm and the max norm",
            f_clip_grad_norm, { NORM_INPUTS }, KT_F32_F64, &kt_tol_relative, .count = 2),
};
KT_REGISTER(sort_cases);
