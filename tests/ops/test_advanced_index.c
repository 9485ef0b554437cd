/* Advanced indexing against PyTorch 1.13 (tests/fixtures/advanced_index_fixtures.h, from
 * tests/fixtures/gen_advanced_index.py): index.Tensor (+ out=), index_put / index_put_ (with
 * and without accumulate), masked_select (+ out=) in float64, float32 and int64 (the fixtures'
 * values are whole numbers, so every dtype is exact); the gradients of autograd and of the
 * backward helpers (index_backward, masked_select_backward) against torch.autograd's; larger
 * and strided cases against element-by-element readings; PyTorch's error messages.
 *
 * Metric: values exactly; float64 gradients |got - want| <= 1e-12 + 1e-10 |want|. */
#include "kt_util.h"
#include "../fixtures/advanced_index_fixtures.h"
#include "tg_cover.h"

TG_COVERS("index.Tensor", "index.Tensor_out", "index_put_", "index_put", "index_backward",
          "masked_select", "masked_select.out", "masked_select_backward");

/* The case's indices (the open scope's tensors) into items; the list over them. */
static tg_tensor_list case_indices(const fx_ai_case *c, tg_tensor **items)
{
    for (int64_t j = 0; j < c->nidx; j++) {
        const fx_ai_index *ix = &c->idx[j];
        items[j] = NULL;
        if (!ix->kind) continue;
        tg_tensor *t = kt_tensor_i64(ix->v, ix->shape, ix->ndim);
        static const tg_dtype dts[5] = { TG_INT64, TG_INT64, TG_INT32, TG_BOOL, TG_UINT8 };
        items[j] = ix->kind == 1 ? t : tg_to(t, dts[ix->kind]);
    }
    return (tg_tensor_list){ items, c->nidx };
}

Test(advanced_index, values_vs_pytorch)
{
    kt_live live = kt_live_now();
    static const tg_dtype dts[3] = { TG_FLOAT64, TG_FLOAT32, TG_INT64 };
    for (int64_t k = 0; k < KT_NUMEL(fx_ai_cases); k++) {
        const fx_ai_case *c = &fx_ai_cases[k];
        for (int t = 0; t < 3; t++) {
            tg_dtype dt = dts[t];
            char what[96];
            tg_scope_begin();
            tg_tensor *items[4];
            tg_tensor_list ind = case_indices(c, items);
            tg_tensor *x = kt_tensor(c->x, c->xshape, c->xdim, dt);
            tg_tensor *v = kt_tensor(c->v, c->vshape, c->vdim, dt);
            snprintf(what, sizeof what, "%s dtype %d index", c->name, (int)dt);
            tg_tensor *y = tg_index(x, ind);
            cr_assert(y, "%s: %s", what, tg_last_error());
            kt_assert_shape(y, c->yshape, c->ydim);
            kt_assert_close(y, c->y, tg_tensor_numel(y), 0, 0, what);
            tg_tensor *yo = tg_index_out(x, ind, tg_empty(TG_INTS(0), .dtype = dt));
            cr_assert(yo, "%s out: %s", what, tg_last_error());
            kt_assert_close(yo, c->y, tg_tensor_numel(yo), 0, 0, what);

            snprintf(what, sizeof what, "%s dtype %d index_put", c->name, (int)dt);
            tg_tensor *p = tg_index_put(x, ind, v, .accumulate = c->accumulate);
            cr_assert(p, "%s: %s", what, tg_last_error());
            kt_assert_shape(p, c->xshape, c->xdim);
            kt_assert_close(p, c->yp, tg_tensor_numel(p), 0, 0, what);
            kt_assert_close(x, c->x, tg_tensor_numel(x), 0, 0, "index_put left self alone");
            tg_tensor *xc = tg_clone(x);
            tg_tensor *pi = tg_index_put_(xc, ind, v, .accumulate = c->accumulate);
            cr_assert_eq(pi, xc, "%s in place: %s", what, tg_last_error());
            kt_assert_close(xc, c->yp, tg_tensor_numel(xc), 0, 0, what);
            tg_scope_end();
        }
    }
    kt_assert_no_leak(live);
}

Test(advanced_index, gradients_vs_pytorch)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_ai_cases); k++) {
        const fx_ai_case *c = &fx_ai_cases[k];
        char what[96];
        tg_scope_begin();
        tg_tensor *items[4];
        tg_tensor_list ind = case_indices(c, items);
        tg_tensor *x =
            tg_tensor_set_requires_grad(kt_tensor(c->x, c->xshape, c->xdim, TG_FLOAT64), true);
        tg_tensor *v =
            tg_tensor_set_requires_grad(kt_tensor(c->v, c->vshape, c->vdim, TG_FLOAT64), true);
        tg_tensor *g = kt_tensor(c->g, c->yshape, c->ydim, TG_FLOAT64);
        tg_tensor *g2 = kt_tensor(c->g2, c->xshape, c->xdim, TG_FLOAT64);
        /* index: self */
        tg_tensor *y = tg_index(x, ind);
        cr_assert(y, "%s: %s", c->name, tg_last_error());
        tg_tensor *gx = NULL;
        cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(x), &gx, .grad_outputs = TG_TENSORS(g)), 0,
                     "%s: %s", c->name, tg_last_error());
        snprintf(what, sizeof what, "%s grad of index", c->name);
        kt_assert_close(gx, c->gx, tg_tensor_numel(x), 1e-10, 1e-12, what);
        tg_tensor *hb = NULL;
        TG_NO_GRAD {
            hb = tg_index_backward(tg_zeros_like(x), ind, g);
        }
        cr_assert(hb, "%s: %s", c->name, tg_last_error());
        kt_assert_close(hb, c->gx, tg_tensor_numel(x), 1e-10, 1e-12, "index_backward");
        /* index_put (functional) and index_put_ (on a non-leaf clone): self and values */
        for (int inplace = 0; inplace < 2; inplace++) {
            tg_tensor *yp =
                inplace ? tg_index_put_(tg_mul_scalar(x, 1), ind, v, .accumulate = c->accumulate)
                        : tg_index_put(x, ind, v, .accumulate = c->accumulate);
            cr_assert(yp, "%s: %s", c->name, tg_last_error());
            tg_tensor *gr[2] = { NULL, NULL };
            cr_assert_eq(tg_grad(TG_TENSORS(yp), TG_TENSORS(x, v), gr,
                                 .grad_outputs = TG_TENSORS(g2), .allow_unused = true),
                         0, "%s: %s", c->name, tg_last_error());
            snprintf(what, sizeof what, "%s grad of index_put%s self", c->name, inplace ? "_" : "");
            cr_assert(gr[0] && gr[1], "%s: a gradient is missing", what);
            kt_assert_close(gr[0], c->gpx, tg_tensor_numel(x), 1e-10, 1e-12, what);
            snprintf(what, sizeof what, "%s grad of index_put%s values", c->name,
                     inplace ? "_" : "");
            kt_assert_shape(gr[1], c->vshape, c->vdim);
            kt_assert_close(gr[1], c->gpv, tg_tensor_numel(v), 1e-10, 1e-12, what);
        }
        tg_scope_end();
    }
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ masked_select */

Test(advanced_index, masked_select_vs_pytorch)
{
    kt_live live = kt_live_now();
    static const tg_dtype dts[3] = { TG_FLOAT64, TG_FLOAT32, TG_INT64 };
    for (int64_t k = 0; k < KT_NUMEL(fx_ms_cases); k++) {
        const fx_ms_case *c = &fx_ms_cases[k];
        char what[96];
        for (int t = 0; t < 3; t++) {
            tg_scope_begin();
            tg_tensor *m = tg_to(kt_tensor_i64(c->m, c->mshape, c->mdim), TG_BOOL);
            tg_tensor *x = kt_tensor(c->x, c->xshape, c->xdim, dts[t]);
            snprintf(what, sizeof what, "%s dtype %d", c->name, (int)dts[t]);
            tg_tensor *y = tg_masked_select(x, m);
            cr_assert(y, "%s: %s", what, tg_last_error());
            kt_assert_shape(y, c->yshape, c->ydim);
            kt_assert_close(y, c->y, tg_tensor_numel(y), 0, 0, what);
            tg_tensor *yo = tg_masked_select_out(x, m, tg_empty(TG_INTS(0), .dtype = dts[t]));
            cr_assert(yo, "%s out: %s", what, tg_last_error());
            kt_assert_close(yo, c->y, tg_tensor_numel(yo), 0, 0, what);
            tg_scope_end();
        }
        tg_scope_begin();
        tg_tensor *m = tg_to(kt_tensor_i64(c->m, c->mshape, c->mdim), TG_BOOL);
        tg_tensor *x =
            tg_tensor_set_requires_grad(kt_tensor(c->x, c->xshape, c->xdim, TG_FLOAT64), true);
        tg_tensor *g = kt_tensor(c->g, c->yshape, c->ydim, TG_FLOAT64);
        tg_tensor *y = tg_masked_select(x, m);
        tg_tensor *gx = NULL;
        cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(x), &gx, .grad_outputs = TG_TENSORS(g)), 0,
                     "%s: %s", c->name, tg_last_error());
        kt_assert_shape(gx, c->xshape, c->xdim);
        kt_assert_close(gx, c->gx, tg_tensor_numel(x), 1e-10, 1e-12, c->name);
        tg_tensor *hb = NULL;
        TG_NO_GRAD {
            hb = tg_masked_select_backward(g, x, m);
        }
        cr_assert(hb, "%s: %s", c->name, tg_last_error());
        kt_assert_close(hb, c->gx, tg_tensor_numel(x), 1e-10, 1e-12, "masked_select_backward");
        tg_scope_end();
    }
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ larger and strided */

/* The embedding pattern: rows of a (V, E) table by (B, T) ids, and their gradient as
 * index_put_ with accumulate (many duplicates), twice (the same bits: fixed order), against
 * float64 sums; then a transposed (non-contiguous) table read and written through the view. */
Test(advanced_index, embedding_rows_and_strided)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    enum { V = 50, E = 1200, N = 400 };
    double *tab = malloc(sizeof(double) * V * E), *gv = malloc(sizeof(double) * N * E);
    int64_t ids[N];
    kt_fill_random(tab, V * E, 3, -1, 1);
    kt_fill_random(gv, N * E, 4, -1, 1);
    for (int i = 0; i < N; i++) ids[i] = (i * 7919) % V;
    tg_tensor *t = kt_tensor(tab, (int64_t[]){ V, E }, 2, TG_FLOAT32);
    tg_tensor *idx = kt_tensor_i64(ids, (int64_t[]){ 20, 20 }, 2);
    tg_tensor *r = tg_index(t, TG_TENSORS(idx));
    cr_assert(r, "%s", tg_last_error());
    double *want = malloc(sizeof(double) * V * E > sizeof(double) * N * E ? sizeof(double) * V * E
                                                                          : sizeof(double) * N * E);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < E; j++) want[i * E + j] = (double)(float)tab[ids[i] * E + j];
    kt_assert_close(r, want, N * E, 0, 0, "index rows");
    tg_tensor *g = kt_tensor(gv, (int64_t[]){ 20, 20, E }, 3, TG_FLOAT32);
    tg_tensor *a = tg_index_put_(tg_zeros(TG_INTS(V, E), .dtype = TG_FLOAT32), TG_TENSORS(idx), g,
                                 .accumulate = true);
    tg_tensor *b = tg_index_put_(tg_zeros(TG_INTS(V, E), .dtype = TG_FLOAT32), TG_TENSORS(idx), g,
                                 .accumulate = true);
    cr_assert(a && b, "%s", tg_last_error());
    double *va = kt_values(a), *vb = kt_values(b);
    cr_assert(memcmp(va, vb, sizeof(double) * V * E) == 0, "accumulate differs between runs");
    free(va);
    free(vb);
    memset(want, 0, sizeof(double) * V * E);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < E; j++) want[ids[i] * E + j] += (double)(float)gv[i * E + j];
    kt_assert_close(a, want, V * E, 1e-4, 1e-4, "index_put_ accumulate");

    /* (E', V') transposed view of a contiguous (V', E') tensor: x[:, [2, 0]] and a put */
    double base[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
    tg_tensor *bt = kt_tensor(base, (int64_t[]){ 3, 4 }, 2, TG_FLOAT64);
    tg_tensor *vt = tg_transpose(bt, 0, 1); /* (4, 3): vt[i][j] = base[j * 4 + i] */
    int64_t cols[2] = { 2, 0 };
    tg_tensor *ci = kt_tensor_i64(cols, (int64_t[]){ 2 }, 1);
    tg_tensor *s = tg_index(vt, TG_TENSORS(NULL, ci));
    static const double ws[8] = { 8, 0, 9, 1, 10, 2, 11, 3 };
    cr_assert(s, "%s", tg_last_error());
    kt_assert_close(s, ws, 8, 0, 0, "index of a transposed view");
    tg_tensor *one = tg_ones(TG_INTS(1), .dtype = TG_FLOAT64);
    cr_assert_eq(tg_index_put_(vt, TG_TENSORS(NULL, ci), one, .accumulate = true), vt);
    static const double wb[12] = { 1, 2, 3, 4, 4, 5, 6, 7, 9, 10, 11, 12 };
    kt_assert_close(bt, wb, 12, 0, 0, "index_put_ through a transposed view");
    free(want);
    free(tab);
    free(gv);
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ errors */

Test(advanced_index, errors)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(3, 4), .dtype = TG_FLOAT32);
    int64_t v5[1] = { 5 }, vm4[1] = { -4 }, v0[3] = { 0, 1, 2 }, v01[2] = { 0, 1 };
    tg_tensor *i5 = kt_tensor_i64(v5, (int64_t[]){ 1 }, 1);
    tg_tensor *im4 = kt_tensor_i64(vm4, (int64_t[]){ 1 }, 1);
    tg_tensor *i3 = kt_tensor_i64(v0, (int64_t[]){ 3 }, 1);
    tg_tensor *i2 = kt_tensor_i64(v01, (int64_t[]){ 2 }, 1);
    tg_tensor *m3 = tg_ones(TG_INTS(3), .dtype = TG_BOOL);
    tg_tensor *m4 = tg_ones(TG_INTS(4), .dtype = TG_BOOL);

    kt_expect_error(tg_index(x, TG_TENSORS(i5)),
                    "index 5 is out of bounds for dimension 0 with size 3");
    kt_expect_error(tg_index(x, TG_TENSORS(im4)),
                    "index -4 is out of bounds for dimension 0 with size 3");
    kt_expect_error(tg_index(x, TG_TENSORS(NULL, i5)),
                    "index 5 is out of bounds for dimension 1 with size 4");
    kt_expect_error(tg_index(x, TG_TENSORS(i2, i2, i2)),
                    "too many indices for tensor of dimension 2");
    kt_expect_error(tg_index(x, TG_TENSORS(m4)),
                    "The shape of the mask [4] at index 0 does not match the shape of the indexed "
                    "tensor [3] at index 0");
    kt_expect_error(tg_index(tg_zeros(TG_INTS(4, 4), .dtype = TG_FLOAT32), TG_TENSORS(NULL, m3)),
                    "The shape of the mask [3] at index 0 does not match the shape of the indexed "
                    "tensor [4] at index 1");
    kt_expect_error(tg_index(x, TG_TENSORS(tg_to(i2, TG_FLOAT32))),
                    "tensors used as indices must be long, int, byte or bool tensors");
    kt_expect_error(tg_index(x, TG_TENSORS(i2, i3)),
                    "shape mismatch: indexing tensors could not be broadcast together with shapes "
                    "[2], [3]");

    /* index_put_: values' shape and dtype, bounds, nothing written on error */
    tg_tensor *y = tg_clone(x);
    kt_expect_error(tg_index_put_(y, TG_TENSORS(i3), tg_ones(TG_INTS(2), .dtype = TG_FLOAT32)),
                    "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing "
                    "result of shape [3, 4]");
    kt_expect_error(tg_index_put_(y, TG_TENSORS(i3), tg_ones(TG_INTS(4), .dtype = TG_FLOAT64)),
                    "Index put requires the source and destination dtypes match, got Float for "
                    "the destination and Double for the source.");
    int64_t vbad[2] = { 1, 7 };
    kt_expect_error(tg_index_put_(y, TG_TENSORS(kt_tensor_i64(vbad, (int64_t[]){ 2 }, 1)),
                                  tg_ones(TG_INTS(4), .dtype = TG_FLOAT32), .accumulate = true),
                    "index 7 is out of bounds for dimension 0 with size 3");
    double *vy = kt_values(y);
    for (int i = 0; i < 12; i++) cr_assert_eq(vy[i], 0.0, "index_put_ wrote before failing");
    free(vy);
    kt_expect_error(tg_index_put(x, TG_TENSORS(i2, i3), tg_ones(TG_INTS(1), .dtype = TG_FLOAT32)),
                    "shape mismatch: indexing tensors could not be broadcast together");

    kt_expect_error(tg_index(x, TG_TENSORS(NULL)), "at least one of the indices must be a tensor");
    /* the node gives its indices back after backward: a second backward fails */
    tg_tensor *xg = tg_tensor_set_requires_grad(tg_clone(x), true);
    tg_tensor *ys = tg_sum(tg_index(xg, TG_TENSORS(i2)));
    cr_assert_eq(tg_backward(ys), 0, "%s", tg_last_error());
    cr_assert_neq(tg_backward(ys), 0);
    kt_assert_error("backward through the graph a second time");

    /* masked_select */
    kt_expect_error(tg_masked_select(x, tg_ones(TG_INTS(3, 4), .dtype = TG_UINT8)),
                    "masked_select: expected BoolTensor for mask");
    kt_expect_error(tg_masked_select(x, tg_ones(TG_INTS(3, 3), .dtype = TG_BOOL)),
                    "The size of tensor a (4) must match the size of tensor b (3) at "
                    "non-singleton dimension 1");
    tg_scope_end();
    kt_assert_no_leak(live);
}
