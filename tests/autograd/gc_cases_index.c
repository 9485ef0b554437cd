/* Gradcheck cases of the indexing operators (gradcheck.h). Indices are constant inputs
 * (GC_INDEX, duplicates included, for the accumulating operators) or, for scatter.src and
 * scatter.value, whose derivative assumes each position is written once, fixed distinct
 * indices built in the function. amax / amin take GC_DISTINCT inputs with src shifted by 0.05
 * so that no src value ties with self's. In-place operators run on a clone of x[0]. */
#include "gradcheck.h"

static int one(tg_tensor *r, tg_tensor **y)
{
    y[0] = r;
    return r ? 1 : -1;
}

/* In place on a clone of x[0]: the result is the op's return value (a new reference to the
 * clone). */
static int inplace(tg_tensor *s, tg_tensor *r, tg_tensor **y)
{
    tg_release(s);
    return one(r, y);
}

/* (2, 5) row indices into 4 rows, distinct in each column, on `like`'s device (the CUDA grad
 * table runs the cases on a GPU). */
static tg_tensor *distinct_rows(tg_tensor *like)
{
    static const int64_t v[10] = { 3, 0, 2, 1, 0, 1, 3, 0, 2, 3 };
    static const int64_t shape[2] = { 2, 5 };
    tg_tensor *cpu = tg_tensor_from_data(v, shape, 2, TG_INT64);
    tg_tensor *r = cpu ? tg_to_device(cpu, tg_tensor_device(like)) : NULL;
    tg_release(cpu);
    return r;
}

GC_FN(f_index_select0) { return one(tg_index_select(x[0], 0, x[1]), y); }
GC_FN(f_index_select1) { return one(tg_index_select(x[0], -1, x[1]), y); }
GC_FN(f_gather1) { return one(tg_gather(x[0], 1, x[1]), y); }
GC_FN(f_gather0) { return one(tg_gather(x[0], -2, x[1]), y); }
GC_FN(f_scatter_src)
{
    tg_tensor *i = distinct_rows(x[0]);
    tg_tensor *r = tg_scatter_src(x[0], 0, i, x[1]);
    tg_release(i);
    return one(r, y);
}
GC_FN(f_scatter_src_)
{
    tg_tensor *i = distinct_rows(x[0]), *s = tg_clone(x[0]);
    tg_tensor *r = tg_scatter_src_(s, 0, i, x[1]);
    tg_release(i);
    return inplace(s, r, y);
}
GC_FN(f_scatter_value)
{
    tg_tensor *i = distinct_rows(x[0]);
    tg_tensor *r = tg_scatter_value(x[0], 0, i, 1.5);
    tg_release(i);
    return one(r, y);
}
GC_FN(f_scatter_value_)
{
    tg_tensor *i = distinct_rows(x[0]), *s = tg_clone(x[0]);
    tg_tensor *r = tg_scatter_value_(s, 0, i, -0.5);
    tg_release(i);
    return inplace(s, r, y);
}
GC_FN(f_scatter_add) { return one(tg_scatter_add(x[0], 0, x[1], x[2]), y); }
GC_FN(f_scatter_add1) { return one(tg_scatter_add(x[0], -1, x[1], x[2]), y); }
GC_FN(f_scatter_add_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace(s, tg_scatter_add_(s, 0, x[1], x[2]), y);
}
GC_FN(f_sr_sum) { return one(tg_scatter_reduce_two(x[0], 0, x[1], x[2], "sum"), y); }
GC_FN(f_sr_mean) { return one(tg_scatter_reduce_two(x[0], 0, x[1], x[2], "mean"), y); }
GC_FN(f_sr_mean_ex)
{
    return one(tg_scatter_reduce_two(x[0], 1, x[1], x[2], "mean", .include_self = false), y);
}
static int sr_shifted(tg_tensor *const *x, tg_tensor **y, const char *red, bool inc)
{
    tg_tensor *s = tg_add_scalar(x[2], 0.05);
    tg_tensor *r = s ? tg_scatter_reduce_two(x[0], 0, x[1], s, red, .include_self = inc) : NULL;
    tg_release(s);
    return one(r, y);
}
GC_FN(f_sr_amax) { return sr_shifted(x, y, "amax", true); }
GC_FN(f_sr_amin_ex) { return sr_shifted(x, y, "amin", false); }
GC_FN(f_sr_mean_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace(s, tg_scatter_reduce_two_(s, 0, x[1], x[2], "mean"), y);
}
GC_FN(f_index_add) { return one(tg_index_add(x[0], 0, x[1], x[2], .alpha = 2), y); }
GC_FN(f_index_add1) { return one(tg_index_add(x[0], 1, x[1], x[2]), y); }
GC_FN(f_index_add_)
{
    tg_tensor *s = tg_clone(x[0]);
    return inplace(s, tg_index_add_(s, 0, x[1], x[2], .alpha = -1.5), y);
}

static const gc_case index_cases[] = {
    GC_CASE("index_select", "dim 0, duplicates", f_index_select0, { REAL(5, 4), INDEX(5, 6) },
            true),
    GC_CASE("index_select", "dim -1 of a transposed self", f_index_select1,
            { REAL_T(3, 5), INDEX(5, 4) }, true),
    GC_CASE("gather", "dim 1", f_gather1, { REAL(4, 5), INDEX(5, 4, 3) }, true),
    GC_CASE("gather", "dim -2, index larger along dim", f_gather0, { REAL_T(3, 4), INDEX(3, 6, 2) },
            true),
    GC_CASE("scatter.src", "dim 0, distinct", f_scatter_src, { REAL(4, 5), REAL(2, 5) }, true),
    GC_CASE("scatter_.src", "in place", f_scatter_src_, { REAL(4, 5), REAL(2, 5) }, true),
    GC_CASE("scatter.value", "dim 0", f_scatter_value, { REAL(4, 5) }, true),
    GC_CASE("scatter_.value", "in place", f_scatter_value_, { REAL(4, 5) }, true),
    GC_CASE("scatter_add", "dim 0, duplicates", f_scatter_add,
            { REAL(4, 5), INDEX(4, 6, 5), REAL(6, 5) }, true),
    GC_CASE("scatter_add", "dim -1, index smaller than self", f_scatter_add1,
            { REAL_T(3, 4), INDEX(4, 2, 7), REAL(2, 7) }),
    GC_CASE("scatter_add_", "in place", f_scatter_add_, { REAL(4, 5), INDEX(4, 6, 5), REAL(6, 5) }),
    GC_CASE("scatter_reduce.two", "sum", f_sr_sum, { REAL(4, 5), INDEX(4, 6, 5), REAL(6, 5) },
            true),
    GC_CASE("scatter_reduce.two", "mean", f_sr_mean, { REAL(4, 5), INDEX(4, 6, 5), REAL(6, 5) },
            true),
    GC_CASE("scatter_reduce.two", "mean, include_self false, dim 1", f_sr_mean_ex,
            { REAL(3, 4), INDEX(4, 3, 6), REAL(3, 6) }, true),
    GC_CASE("scatter_reduce.two", "amax", f_sr_amax,
            { DISTINCT(4, 5), INDEX(4, 6, 5), DISTINCT(6, 5) }),
    GC_CASE("scatter_reduce.two", "amin, include_self false", f_sr_amin_ex,
            { DISTINCT(4, 5), INDEX(4, 6, 5), DISTINCT(6, 5) }),
    GC_CASE("scatter_reduce_.two", "mean in place", f_sr_mean_,
            { REAL(4, 5), INDEX(4, 6, 5), REAL(6, 5) }),
    GC_CASE("index_add", "dim 0, duplicates, alpha 2", f_index_add,
            { REAL(5, 4), INDEX(5, 7), REAL(7, 4) }, true),
    GC_CASE("index_add", "dim 1 of a transposed self", f_index_add1,
            { REAL_T(3, 5), INDEX(5, 3), REAL(3, 3) }),
    GC_CASE("index_add_", "in place, alpha -1.5", f_index_add_,
            { REAL(5, 4), INDEX(5, 7), REAL(7, 4) }),
};
GC_REGISTER(index_cases);
