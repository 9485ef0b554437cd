/* Value cases of advanced indexing (kt_case.h) on the inputs of the PyTorch fixtures
 * (tests/fixtures/advanced_index_fixtures.h, whose expected values tests/ops/
 * test_advanced_index.c checks on the CPU): index.Tensor, index_put (functional and in place,
 * with and without accumulate) and masked_select in float64, float32 and int64, with the
 * indices on the device and on the host; a transposed self; the embedding-backward pattern
 * (many duplicates, accumulate) and the gradient of index through autograd; the index errors
 * (checked on the host before any kernel runs: nothing written). Bounds: copies exact; the
 * accumulations run in the CPU's order (index order per position): kt_tol_scatter. */
#include "kt_case.h"
#include "../fixtures/advanced_index_fixtures.h"

/* The case's indices, on the device, or (host) on the CPU. */
static tg_tensor_list indices_of(const fx_ai_case *c, const kt_arg *a, bool host, tg_tensor **items)
{
    static const tg_dtype dts[5] = { TG_INT64, TG_INT64, TG_INT32, TG_BOOL, TG_UINT8 };
    for (int64_t j = 0; j < c->nidx; j++) {
        const fx_ai_index *ix = &c->idx[j];
        items[j] = NULL;
        if (!ix->kind) continue;
        tg_tensor *t = tg_to(kt_tensor_i64(ix->v, ix->shape, ix->ndim), dts[ix->kind]);
        items[j] = host || a->device.type == TG_CPU ? t : kt_copy_to(t, a->device);
    }
    return (tg_tensor_list){ items, c->nidx };
}

/* fixture case a->param: index with device and with host indices (copies: exact) */
KT_FN(f_index)
{
    const fx_ai_case *c = &fx_ai_cases[a->param];
    tg_tensor *d[4], *h[4];
    tg_tensor_list di = indices_of(c, a, false, d), hi = indices_of(c, a, true, h);
    tg_tensor *xt = kt_fixture(a, c->x, c->xshape, c->xdim, a->dtype);
    return kt_y2(y, tg_index(xt, di), tg_index(xt, hi));
}
/* index_put and index_put_ on a clone (accumulations) */
KT_FN(f_index_put)
{
    const fx_ai_case *c = &fx_ai_cases[a->param];
    tg_tensor *d[4];
    tg_tensor_list di = indices_of(c, a, false, d);
    tg_tensor *xt = kt_fixture(a, c->x, c->xshape, c->xdim, a->dtype);
    tg_tensor *v = kt_fixture(a, c->v, c->vshape, c->vdim, a->dtype), *t = tg_clone(xt);
    y[0] = tg_index_put(xt, di, v, .accumulate = c->accumulate);
    y[1] = tg_index_put_(t, di, v, .accumulate = c->accumulate);
    return y[0] && y[1] == t ? 2 : -1;
}
static const char *case_name(int p) { return fx_ai_cases[p].name; }

KT_FN(f_masked_select)
{
    const fx_ms_case *c = &fx_ms_cases[a->param];
    tg_tensor *m = tg_to(kt_fixture_i64(a, c->m, c->mshape, c->mdim), TG_BOOL);
    return kt_y1(y, tg_masked_select(kt_fixture(a, c->x, c->xshape, c->xdim, TG_FLOAT32), m));
}
static const char *masked_select_name(int p) { return fx_ms_cases[p].name; }

/* x (30, 40) seen transposed: x.t()[idx]; idx's rows accumulated into it in place */
KT_FN(f_index_transposed) { return kt_y1(y, tg_index(tg_transpose(x[0], 0, 1), TG_TENSORS(x[1]))); }
KT_FN(f_index_put_transposed)
{
    tg_tensor *t = tg_transpose(x[0], 0, 1);
    tg_tensor *r = tg_index_put_(t, TG_TENSORS(x[1]), x[2], .accumulate = true);
    return r == t ? kt_y1(y, r) : -1;
}
/* the gradient of x.t().contiguous()[idx] for grad_output x[2] */
KT_FN(f_index_grad)
{
    tg_tensor *leaf = tg_tensor_set_requires_grad(tg_contiguous(tg_transpose(x[0], 0, 1)), true);
    tg_tensor *g = NULL, *r = tg_index(leaf, TG_TENSORS(x[1]));
    if (!r || tg_grad(TG_TENSORS(r), TG_TENSORS(leaf), &g, .grad_outputs = TG_TENSORS(x[2])))
        return -1;
    return kt_y1(y, g);
}

/* index 5 of 3 rows: refused before any kernel runs, the self left as it was */
KT_FN(f_out_of_bounds)
{
    static const int64_t v[2] = { 1, 5 };
    tg_tensor *t = tg_clone(x[0]), *i = kt_fixture_i64(a, v, (int64_t[]){ 2 }, 1);
    kt_expect_error(tg_index(t, TG_TENSORS(i)),
                    "index 5 is out of bounds for dimension 0 with size 3");
    tg_tensor *ones = tg_ones(TG_INTS(4), .dtype = TG_FLOAT32, .device = a->device);
    kt_expect_error(tg_index_put_(t, TG_TENSORS(i), ones, .accumulate = true),
                    "index 5 is out of bounds for dimension 0 with size 3");
    return kt_y1(y, t);
}
KT_FN(f_mask_shape)
{
    return kt_y1(
        y, tg_index(x[0], TG_TENSORS(tg_ones(TG_INTS(4), .dtype = TG_BOOL, .device = a->device))));
}
KT_FN(f_too_many)
{
    static const int64_t v[2] = { 1, 2 };
    tg_tensor *i = kt_fixture_i64(a, v, (int64_t[]){ 2 }, 1);
    return kt_y1(y, tg_index(x[0], TG_TENSORS(i, i, i)));
}

#define X_3_4                                          \
    {                                                  \
        KT_RAND_OF(TG_FLOAT32, -1, 1, 3, 4), .seed = 1 \
    }
#define LARGE                                                                                 \
    { KT_RAND(-1, 1, 30, 40), .seed = 3 }, { KT_RAND_OF(TG_INT64, 0, 40, 8, 50), .seed = 5 }, \
    {                                                                                         \
        KT_RAND(-1, 1, 8, 50, 30), .seed = 4                                                  \
    }

static const kt_case advanced_index_cases[] = {
    KT_CASE("index.Tensor", "every fixture case, device and host indices", f_index, { { 0 } },
            { 3, { TG_FLOAT64, TG_FLOAT32, TG_INT64 } }, &kt_exact, .count = KT_NUMEL(fx_ai_cases),
            .param_name = case_name),
    KT_CASE("index_put_", "every fixture case, functional and in place", f_index_put, { { 0 } },
            { 3, { TG_FLOAT64, TG_FLOAT32, TG_INT64 } }, &kt_tol_scatter,
            .count = KT_NUMEL(fx_ai_cases), .param_name = case_name),
    KT_CASE("masked_select", "every fixture case", f_masked_select, { { 0 } }, { 0 }, &kt_exact,
            .count = KT_NUMEL(fx_ms_cases), .param_name = masked_select_name),
    KT_CASE("index.Tensor", "a transposed self by (8, 50) indices", f_index_transposed, { LARGE },
            KT_ONE(TG_FLOAT32), &kt_exact),
    KT_CASE("index_put_", "into a transposed self, (8, 50) duplicates accumulated",
            f_index_put_transposed, { LARGE }, KT_ONE(TG_FLOAT32), &kt_tol_scatter),
    KT_CASE("index.Tensor", "its gradient, through autograd", f_index_grad, { LARGE },
            KT_ONE(TG_FLOAT32), &kt_tol_scatter),
    KT_CASE("index.Tensor", "index 5 of 3 rows: refused, nothing written", f_out_of_bounds,
            { X_3_4 }, { 0 }, &kt_exact, KT_ALSO("index_put_")),
    KT_CASE("index.Tensor", "a mask of the wrong shape", f_mask_shape, { X_3_4 },
            .error = "The shape of the mask [4] at index 0 does not match the shape of the indexed "
                     "tensor [3] at index 0"),
    KT_CASE("index.Tensor", "three indices for two dims", f_too_many, { X_3_4 },
            .error = "too many indices for tensor of dimension 2"),
};
KT_REGISTER(advanced_index_cases);
