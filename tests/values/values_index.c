/* Value cases of the indexing kernels (kt_case.h) on the inputs of the PyTorch fixtures
 * (tests/fixtures/index_fixtures.h, whose expected values tests/ops/test_index.c checks on the
 * CPU): index_select, gather, scatter (src, value, reduce), scatter_add, scatter_reduce,
 * index_add, functional and in place, float64, float32 and the integer cases in int64; a
 * transposed self written in place, a large accumulation, nonzero; the index errors (checked on
 * the host before any kernel runs: nothing written). Bounds: gathers, copies and integers
 * exact; the float sums run in the CPU's order: kt_tol_scatter. */
#include "kt_case.h"
#include "../fixtures/index_fixtures.h"

/* The case's operator, functional or in place on a clone of x. */
static tg_tensor *run(const fx_idx_case *c, tg_tensor *x, tg_tensor *i, tg_tensor *s, bool inplace)
{
    tg_tensor *t = inplace ? tg_clone(x) : NULL;
    switch (c->op) {
    case FX_INDEX_SELECT: return tg_index_select(x, c->dim, i);
    case FX_GATHER: return tg_gather(x, c->dim, i);
    case FX_SCATTER_SRC:
        return inplace ? tg_scatter_src_(t, c->dim, i, s) : tg_scatter_src(x, c->dim, i, s);
    case FX_SCATTER_VALUE:
        return inplace ? tg_scatter_value_(t, c->dim, i, c->value)
                       : tg_scatter_value(x, c->dim, i, c->value);
    case FX_SCATTER_REDUCE:
        return inplace ? tg_scatter_reduce_(t, c->dim, i, s, c->reduce)
                       : tg_scatter_reduce(x, c->dim, i, s, c->reduce);
    case FX_SCATTER_VALUE_REDUCE:
        return inplace ? tg_scatter_value_reduce_(t, c->dim, i, c->value, c->reduce)
                       : tg_scatter_value_reduce(x, c->dim, i, c->value, c->reduce);
    case FX_SCATTER_ADD:
        return inplace ? tg_scatter_add_(t, c->dim, i, s) : tg_scatter_add(x, c->dim, i, s);
    case FX_SCATTER_REDUCE_TWO:
        return inplace ? tg_scatter_reduce_two_(t, c->dim, i, s, c->reduce,
                                                .include_self = c->include_self)
                       : tg_scatter_reduce_two(x, c->dim, i, s, c->reduce,
                                               .include_self = c->include_self);
    case FX_INDEX_ADD:
        return inplace ? tg_index_add_(t, c->dim, i, s, .alpha = c->alpha)
                       : tg_index_add(x, c->dim, i, s, .alpha = c->alpha);
    }
    return NULL;
}

/* fixture case a->param at the case's dtype (int64 for the integer cases only): functional and
 * in place */
KT_FN(f_case)
{
    const fx_idx_case *c = &fx_idx_cases[a->param];
    if (c->integer != (a->dtype == TG_INT64)) return KT_NO_FORM;
    tg_tensor *xt = kt_fixture(a, c->x, c->xshape, c->xdim, a->dtype);
    tg_tensor *s = c->src ? kt_fixture(a, c->src, c->sshape, c->sdim, a->dtype) : NULL;
    tg_tensor *i = kt_fixture_i64(a, c->index, c->ishape, c->idim);
    if (c->index_i32) i = tg_to(i, TG_INT32);
    return kt_y2(y, run(c, xt, i, s, false), run(c, xt, i, s, true));
}
static const char *case_name(int p) { return fx_idx_cases[p].name; }

/* scatter_add_ into a transposed (50, 40) self through transposed index and src */
KT_FN(f_scatter_add_transposed)
{
    tg_tensor *t = tg_transpose(x[0], 0, 1);
    return kt_y1(y, tg_scatter_add_(t, 1, tg_transpose(x[2], 0, 1), tg_transpose(x[1], 0, 1)));
}
KT_FN(f_index_select_rows) { return kt_y1(y, tg_index_select(x[0], 0, x[1])); }

KT_FN(f_nonzero)
{
    const fx_nz_case *c = &fx_nz_cases[a->param];
    return kt_y1(y, tg_nonzero(kt_fixture(a, c->x, c->xshape, c->xdim, (tg_dtype)c->dtype)));
}
static const char *nonzero_name(int p) { return fx_nz_cases[p].name; }
KT_FN(f_nonzero_large) { return kt_y1(y, tg_nonzero(x[0])); }

/* index 7 of 5 rows: refused before any kernel runs; the self is left as it was */
KT_FN(f_out_of_bounds)
{
    static const int64_t v[2] = { 1, 7 };
    tg_tensor *t = tg_clone(x[0]), *i = kt_fixture_i64(a, v, (int64_t[]){ 2, 1 }, 2);
    kt_expect_error(tg_gather(t, 0, i), "index 7 is out of bounds for dimension 0 with size 5");
    tg_tensor *ones = tg_ones(TG_INTS(2, 1), .dtype = TG_FLOAT32, .device = a->device);
    kt_expect_error(tg_scatter_add_(t, 0, i, ones),
                    "index 7 is out of bounds for dimension 0 with size 5");
    return kt_y1(y, t);
}
KT_FN(f_index_select_bad)
{
    static const int64_t v[2] = { 1, 7 };
    return kt_y1(y, tg_index_select(x[0], 0, kt_fixture_i64(a, v, (int64_t[]){ 2 }, 1)));
}
KT_FN(f_index_add_bad)
{
    static const int64_t v[2] = { 1, 7 };
    tg_tensor *ones = tg_ones(TG_INTS(5, 2), .dtype = TG_FLOAT32, .device = a->device);
    return kt_y1(y, tg_index_add(x[0], 1, kt_fixture_i64(a, v, (int64_t[]){ 2 }, 1), ones));
}

#define X_5_4                                          \
    {                                                  \
        KT_RAND_OF(TG_FLOAT32, -1, 1, 5, 4), .seed = 1 \
    }

static const kt_case index_cases[] = {
    KT_CASE("index_select", "every fixture case, functional and in place", f_case, { { 0 } },
            { 3, { TG_FLOAT64, TG_FLOAT32, TG_INT64 } }, &kt_tol_scatter,
            .count = KT_NUMEL(fx_idx_cases), .param_name = case_name,
            KT_ALSO("gather.out", "scatter.src_out", "scatter.value_out", "scatter.reduce_out",
                    "scatter.value_reduce_out", "scatter_add.out", "scatter_reduce.two_out",
                    "index_add.out")),
    KT_CASE("scatter_add.out", "scatter_add_ into a transposed self", f_scatter_add_transposed,
            { { KT_RAND(-1, 1, 40, 50), .seed = 3 },
              { KT_RAND(-1, 1, 300, 40), .seed = 4 },
              { KT_RAND_OF(TG_INT64, 0, 40, 300, 40), .seed = 5 } },
            KT_ONE(TG_FLOAT32), &kt_tol_scatter),
    KT_CASE(
        "index_select", "1000 rows of (40, 50)", f_index_select_rows,
        { { KT_RAND(-1, 1, 40, 50), .seed = 3 }, { KT_RAND_OF(TG_INT64, 0, 40, 1000), .seed = 6 } },
        KT_ONE(TG_FLOAT32), &kt_exact),
    KT_CASE("nonzero", "every fixture case", f_nonzero, { { 0 } }, { 0 }, &kt_exact,
            .count = KT_NUMEL(fx_nz_cases), .param_name = nonzero_name),
    KT_CASE("nonzero", "(3, 120, 100)", f_nonzero_large,
            { { KT_RAND_OF(TG_INT64, -1, 2, 3, 120, 100), .seed = 9 } }, { 0 }, &kt_exact),
    KT_CASE("gather.out", "index 7 of 5 rows: refused, nothing written", f_out_of_bounds, { X_5_4 },
            { 0 }, &kt_exact, KT_ALSO("scatter_add.out")),
    KT_CASE("index_select", "index 7 of 5 rows", f_index_select_bad, { X_5_4 },
            .error = "index out of range in self"),
    KT_CASE("index_add.out", "index 7 of 4 columns", f_index_add_bad, { X_5_4 },
            .error = "index out of range in self"),
};
KT_REGISTER(index_cases);
