/* Gradcheck cases of the reductions (sum, mean, prod, amax, amin, max, min, var, std) and the
 * matrix products (mm, bmm, addmm, matmul) (gradcheck.h).
 *
 * Each case is a small function of its inputs x[] that calls the operator and returns its
 * outputs in y[] (GC_FN, gradcheck.h). In-place operators run on a clone of x[0] (a leaf requiring
 * grad cannot be modified in place); operators that draw random numbers reseed a generator
 * inside the function, so that the finite differences see the same draw on every call. Inputs
 * are chosen away from the points where an operator is not differentiable (GC_AWAY0 for relu
 * and abs, GC_POS for log and sqrt, GC_DISTINCT for max and min, which would otherwise tie). */
#include "gradcheck.h"

/* ------------------------------------------------------------------ reductions */

GC_FN(f_sum_all) { return gc_y1(y, tg_sum(x[0])); }
GC_FN(f_sum_dim1_keep) { return gc_y1(y, tg_sum(x[0], .dim = TG_INTS(1), .keepdim = true)); }
GC_FN(f_sum_dims02) { return gc_y1(y, tg_sum(x[0], .dim = TG_INTS(0, -1))); }
GC_FN(f_mean_all) { return gc_y1(y, tg_mean(x[0])); }
GC_FN(f_mean_dim0_keep) { return gc_y1(y, tg_mean(x[0], .dim = TG_INTS(0), .keepdim = true)); }
GC_FN(f_mean_dims) { return gc_y1(y, tg_mean(x[0], .dim = TG_INTS(-1, 1))); }
GC_FN(f_prod_all) { return gc_y1(y, tg_prod(x[0])); }
GC_FN(f_prod_dim) { return gc_y1(y, tg_prod_dim(x[0], 1)); }
GC_FN(f_prod_dim_keep) { return gc_y1(y, tg_prod_dim(x[0], 0, .keepdim = true)); }
GC_FN(f_amax_dim) { return gc_y1(y, tg_amax(x[0], .dim = TG_INTS(1))); }
GC_FN(f_amax_all) { return gc_y1(y, tg_amax(x[0])); }
GC_FN(f_amin_dims_keep) { return gc_y1(y, tg_amin(x[0], .dim = TG_INTS(0, 2), .keepdim = true)); }
GC_FN(f_amin_all) { return gc_y1(y, tg_amin(x[0])); }
GC_FN(f_max_all) { return gc_y1(y, tg_max(x[0])); }
GC_FN(f_min_all) { return gc_y1(y, tg_min(x[0])); }
GC_FN(f_max_dim) { return gc_y_vi(y, tg_max_dim(x[0], 1)); }
GC_FN(f_max_dim_keep) { return gc_y_vi(y, tg_max_dim(x[0], 0, .keepdim = true)); }
GC_FN(f_min_dim) { return gc_y_vi(y, tg_min_dim(x[0], -1)); }
GC_FN(f_var_dim) { return gc_y1(y, tg_var(x[0], .dim = TG_INTS(1))); }
GC_FN(f_var_all_c0) { return gc_y1(y, tg_var(x[0], .correction = 0)); }
GC_FN(f_var_keep) { return gc_y1(y, tg_var(x[0], .dim = TG_INTS(0), .keepdim = true)); }
GC_FN(f_std_dim) { return gc_y1(y, tg_std(x[0], .dim = TG_INTS(-1))); }
GC_FN(f_std_all) { return gc_y1(y, tg_std(x[0])); }

/* ------------------------------------------------------------------ matrix products */

GC_FN(f_mm) { return gc_y1(y, tg_mm(x[0], x[1])); }
GC_FN(f_bmm) { return gc_y1(y, tg_bmm(x[0], x[1])); }
GC_FN(f_addmm) { return gc_y1(y, tg_addmm(x[0], x[1], x[2])); }
GC_FN(f_addmm_ab) { return gc_y1(y, tg_addmm(x[0], x[1], x[2], .beta = 0.5, .alpha = -2)); }
GC_FN(f_addmm_)
{
    tg_tensor *s = tg_clone(x[0]);
    return gc_inplace_result(s, tg_addmm_(s, x[1], x[2], .beta = 2, .alpha = 0.5), y);
}
GC_FN(f_matmul) { return gc_y1(y, tg_matmul(x[0], x[1])); }

static const gc_case reduce_cases[] = {
    /* reductions */
    GC_CASE("sum.dim_IntList", "everything, transposed", f_sum_all, { REAL_T(3, 4) },
            .gradgrad = true),
    GC_CASE("sum.dim_IntList", "dim 1, keepdim", f_sum_dim1_keep, { REAL(3, 4) }, .gradgrad = true),
    GC_CASE("sum.dim_IntList", "dims (0, -1) of (2,3,4), strided", f_sum_dims02,
            { REAL_S(2, 3, 4) }),
    GC_CASE("sum.dim_IntList", "zero-dim", f_sum_all, { REAL0 }),
    GC_CASE("mean.dim", "everything", f_mean_all, { REAL(3, 4) }),
    GC_CASE("mean.dim", "dim 0, keepdim, transposed", f_mean_dim0_keep, { REAL_T(3, 4) }),
    GC_CASE("mean.dim", "dims (-1, 1) of (2,3,4)", f_mean_dims, { REAL(2, 3, 4) }),
    GC_CASE("prod", "everything", f_prod_all, { AWAY0(2, 3) }),
    GC_CASE("prod.dim_int", "dim 1", f_prod_dim, { AWAY0(3, 4) }),
    GC_CASE("prod.dim_int", "dim 0, keepdim, transposed", f_prod_dim_keep, { AWAY0_T(3, 4) }),
    GC_CASE("amax", "dim 1", f_amax_dim, { DISTINCT(3, 4) }),
    GC_CASE("amax", "everything, transposed", f_amax_all, { DISTINCT_T(3, 4) }),
    GC_CASE("amin", "dims (0, 2), keepdim", f_amin_dims_keep, { DISTINCT(2, 3, 4) }),
    GC_CASE("amin", "everything", f_amin_all, { DISTINCT(3, 4) }),
    GC_CASE("max", "everything", f_max_all, { DISTINCT(3, 4) }),
    GC_CASE("min", "everything", f_min_all, { DISTINCT(3, 4) }),
    GC_CASE("max.dim", "dim 1 (indices not differentiable)", f_max_dim, { DISTINCT(3, 4) }),
    GC_CASE("max.dim", "dim 0, keepdim, transposed", f_max_dim_keep, { DISTINCT_T(3, 4) }),
    GC_CASE("min.dim", "dim -1 of (2,3,4)", f_min_dim, { DISTINCT(2, 3, 4) }),
    GC_CASE("var.correction", "dim 1", f_var_dim, { REAL(3, 4) }),
    GC_CASE("var.correction", "everything, correction 0, transposed", f_var_all_c0,
            { REAL_T(3, 4) }),
    GC_CASE("var.correction", "dim 0, keepdim", f_var_keep, { REAL(3, 4) }),
    GC_CASE("std.correction", "dim -1", f_std_dim, { REAL(3, 4) }),
    GC_CASE("std.correction", "everything, strided", f_std_all, { REAL_S(3, 4) }),

    /* matrix products */
    GC_CASE("mm", "(3,4) @ (4,2)", f_mm, { REAL(3, 4), REAL(4, 2) }, .gradgrad = true),
    GC_CASE("mm", "transposed @ strided", f_mm, { REAL_T(3, 4), REAL_S(4, 2) }, .gradgrad = true),
    GC_CASE("bmm", "(2,3,4) @ (2,4,2), transposed", f_bmm, { REAL_T(2, 3, 4), REAL(2, 4, 2) }),
    GC_CASE("addmm", "bias (2) broadcast", f_addmm, { REAL(2), REAL(3, 4), REAL(4, 2) }),
    GC_CASE("addmm", "beta 0.5, alpha -2, transposed", f_addmm_ab,
            { REAL(3, 2), REAL_T(3, 4), REAL(4, 2) }),
    GC_CASE("addmm_", "beta 2, alpha 0.5", f_addmm_, { REAL(3, 2), REAL(3, 4), REAL_T(4, 2) }),
    GC_CASE("matmul", "vector . vector", f_matmul, { REAL(4), REAL(4) }),
    GC_CASE("matmul", "matrix @ vector", f_matmul, { REAL_T(3, 4), REAL(4) }),
    GC_CASE("matmul", "batched (2,3,4) @ (4,2)", f_matmul, { REAL(2, 3, 4), REAL(4, 2) }),
};
GC_REGISTER(reduce_cases);
