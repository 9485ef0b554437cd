/* The indexing operators against PyTorch 1.13 (tests/fixtures/index_fixtures.h, from
 * tests/fixtures/gen_index.py): every case through its functional, in-place and out= forms,
 * in float64, float32 and (integer cases) int64; the gradients of autograd and of the backward
 * helpers against torch.autograd's; PyTorch's error messages for bad input.
 *
 * Metric: float64 |got - want| <= 1e-12 + 1e-10 |want| (sums in another order at most);
 * float32 1e-5 relative (inputs rounded to float); int64 exactly. */
#include "kt_util.h"
#include "../fixtures/index_fixtures.h"
#include "tg_cover.h"

TG_COVERS("index_select", "index_select.out", "index_select_backward", "gather", "gather.out",
          "gather_backward", "scatter.src", "scatter_.src", "scatter.src_out", "scatter.value",
          "scatter_.value", "scatter.value_out", "scatter.reduce", "scatter_.reduce",
          "scatter.reduce_out", "scatter.value_reduce", "scatter_.value_reduce",
          "scatter.value_reduce_out", "scatter_add", "scatter_add_", "scatter_add.out",
          "scatter_reduce.two", "scatter_reduce_.two", "scatter_reduce.two_out",
          "scatter_reduce_backward", "index_add", "index_add_", "index_add.out", "nonzero",
          "nonzero.out");

enum { FUNCTIONAL, INPLACE, OUT };

/* a and b hold the same values, exactly */
static bool same(const tg_tensor *a, const tg_tensor *b)
{
    int64_t n = tg_tensor_numel(a);
    if (n != tg_tensor_numel(b)) return false;
    double *va = kt_values(a), *vb = kt_values(b);
    bool eq = memcmp(va, vb, sizeof(double) * (size_t)n) == 0;
    free(va);
    free(vb);
    return eq;
}

static tg_tensor *case_index(const fx_idx_case *c)
{
    tg_tensor *i = kt_tensor_i64(c->index, c->ishape, c->idim);
    return c->index_i32 ? tg_to(i, TG_INT32) : i; /* the open scope's */
}

/* The case's operator on x (dtype dt) in form `form`; a new reference or NULL. */
static tg_tensor *run(const fx_idx_case *c, tg_tensor *x, tg_tensor *idx, tg_tensor *s, int form)
{
    tg_tensor *target = NULL, *r = NULL;
    if (form == INPLACE) target = tg_clone(x);
    else if (form == OUT) target = tg_empty(TG_INTS(0), .dtype = tg_tensor_dtype(x));
    switch (c->op) {
    case FX_INDEX_SELECT:
        if (form == INPLACE) break;
        r = form == OUT ? tg_index_select_out(x, c->dim, idx, target)
                        : tg_index_select(x, c->dim, idx);
        break;
    case FX_GATHER:
        if (form == INPLACE) break;
        r = form == OUT ? tg_gather_out(x, c->dim, idx, target) : tg_gather(x, c->dim, idx);
        break;
    case FX_SCATTER_SRC:
        r = form == OUT       ? tg_scatter_src_out(x, c->dim, idx, s, target)
            : form == INPLACE ? tg_scatter_src_(target, c->dim, idx, s)
                              : tg_scatter_src(x, c->dim, idx, s);
        break;
    case FX_SCATTER_VALUE:
        r = form == OUT       ? tg_scatter_value_out(x, c->dim, idx, c->value, target)
            : form == INPLACE ? tg_scatter_value_(target, c->dim, idx, c->value)
                              : tg_scatter_value(x, c->dim, idx, c->value);
        break;
    case FX_SCATTER_REDUCE:
        r = form == OUT       ? tg_scatter_reduce_out(x, c->dim, idx, s, c->reduce, target)
            : form == INPLACE ? tg_scatter_reduce_(target, c->dim, idx, s, c->reduce)
                              : tg_scatter_reduce(x, c->dim, idx, s, c->reduce);
        break;
    case FX_SCATTER_VALUE_REDUCE:
        r = form == OUT ? tg_scatter_value_reduce_out(x, c->dim, idx, c->value, c->reduce, target)
            : form == INPLACE ? tg_scatter_value_reduce_(target, c->dim, idx, c->value, c->reduce)
                              : tg_scatter_value_reduce(x, c->dim, idx, c->value, c->reduce);
        break;
    case FX_SCATTER_ADD:
        r = form == OUT       ? tg_scatter_add_out(x, c->dim, idx, s, target)
            : form == INPLACE ? tg_scatter_add_(target, c->dim, idx, s)
                              : tg_scatter_add(x, c->dim, idx, s);
        break;
    case FX_SCATTER_REDUCE_TWO:
        r = form == OUT       ? tg_scatter_reduce_two_out(x, c->dim, idx, s, c->reduce, target,
                                                          .include_self = c->include_self)
            : form == INPLACE ? tg_scatter_reduce_two_(target, c->dim, idx, s, c->reduce,
                                                       .include_self = c->include_self)
                              : tg_scatter_reduce_two(x, c->dim, idx, s, c->reduce,
                                                      .include_self = c->include_self);
        break;
    case FX_INDEX_ADD:
        r = form == OUT       ? tg_index_add_out(x, c->dim, idx, s, target, .alpha = c->alpha)
            : form == INPLACE ? tg_index_add_(target, c->dim, idx, s, .alpha = c->alpha)
                              : tg_index_add(x, c->dim, idx, s, .alpha = c->alpha);
        break;
    }
    if (form != FUNCTIONAL && r)
        cr_assert_eq(r, target, "%s: form %d returned another tensor", c->name, form);
    return r; /* target and r are the open scope's */
}

Test(index, values_vs_pytorch)
{
    kt_live live = kt_live_now();
    static const tg_dtype dts[2] = { TG_FLOAT64, TG_FLOAT32 };
    for (int64_t k = 0; k < KT_NUMEL(fx_idx_cases); k++) {
        const fx_idx_case *c = &fx_idx_cases[k];
        for (int t = 0; t < 2; t++) {
            tg_dtype dt = c->integer ? (t ? TG_INT32 : TG_INT64) : dts[t];
            if (c->integer && t && c->op == FX_SCATTER_REDUCE_TWO) continue;
            double rt = dt == TG_FLOAT32 ? 1e-5 : c->integer ? 0 : 1e-10;
            double at = dt == TG_FLOAT32 ? 1e-5 : c->integer ? 0 : 1e-12;
            tg_scope_begin();
            tg_tensor *x = kt_tensor(c->x, c->xshape, c->xdim, dt);
            tg_tensor *s = c->src ? kt_tensor(c->src, c->sshape, c->sdim, dt) : NULL;
            tg_tensor *idx = case_index(c);
            for (int form = FUNCTIONAL; form <= OUT; form++) {
                tg_tensor *r = run(c, x, idx, s, form);
                if (form == INPLACE && (c->op == FX_INDEX_SELECT || c->op == FX_GATHER)) continue;
                char what[96];
                snprintf(what, sizeof what, "%s dtype %d form %d", c->name, (int)dt, form);
                cr_assert(r, "%s: %s", what, tg_last_error());
                kt_assert_shape(r, c->yshape, c->ydim);
                kt_assert_close(r, c->y, tg_tensor_numel(r), rt, at, what);
            }
            tg_scope_end();
        }
    }
    kt_assert_no_leak(live);
}

/* Autograd's gradients for self and src against torch.autograd's, and the backward helpers. */
Test(index, gradients_vs_pytorch)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_idx_cases); k++) {
        const fx_idx_case *c = &fx_idx_cases[k];
        if (!c->gx) continue;
        tg_scope_begin();
        tg_tensor *x =
            tg_tensor_set_requires_grad(kt_tensor(c->x, c->xshape, c->xdim, TG_FLOAT64), true);
        tg_tensor *s = c->src ? kt_tensor(c->src, c->sshape, c->sdim, TG_FLOAT64) : NULL;
        if (s) tg_tensor_set_requires_grad(s, true);
        tg_tensor *idx = case_index(c);
        tg_tensor *g = kt_tensor(c->g, c->yshape, c->ydim, TG_FLOAT64);
        tg_tensor *y = run(c, x, idx, s, FUNCTIONAL);
        cr_assert(y, "%s: %s", c->name, tg_last_error());
        tg_tensor *grads[2] = { NULL, NULL };
        int rc = tg_grad(TG_TENSORS(y), s ? TG_TENSORS(x, s) : TG_TENSORS(x), grads,
                         .grad_outputs = TG_TENSORS(g), .allow_unused = true);
        cr_assert_eq(rc, 0, "%s: %s", c->name, tg_last_error());
        char what[96];
        snprintf(what, sizeof what, "%s grad self", c->name);
        if (grads[0]) kt_assert_close(grads[0], c->gx, tg_tensor_numel(x), 1e-10, 1e-12, what);
        if (s && grads[1]) {
            snprintf(what, sizeof what, "%s grad src", c->name);
            kt_assert_close(grads[1], c->gs, tg_tensor_numel(s), 1e-10, 1e-12, what);
        }
        /* the backward helpers on their own */
        tg_tensor *gx = NULL;
        tg_tensors2 b = { NULL, NULL };
        TG_NO_GRAD {
            if (c->op == FX_INDEX_SELECT) {
                tg_int_list sz = { .len = c->xdim, .data = c->xshape };
                gx = tg_index_select_backward(g, sz, c->dim, idx);
            } else if (c->op == FX_GATHER) {
                gx = tg_gather_backward(g, x, c->dim, idx, false);
            } else if (c->op == FX_SCATTER_REDUCE_TWO) {
                b = tg_scatter_reduce_backward(g, x, c->dim, idx, s, c->reduce, c->include_self, y);
                gx = b.r0;
            }
        }
        if (gx) {
            snprintf(what, sizeof what, "%s backward helper", c->name);
            kt_assert_close(gx, c->gx, tg_tensor_numel(x), 1e-10, 1e-12, what);
        }
        if (b.r1) kt_assert_close(b.r1, c->gs, tg_tensor_numel(s), 1e-10, 1e-12, what);
        tg_scope_end();
    }
    kt_assert_no_leak(live);
}

/* index_select along dim 0 (the embedding lookup's memcpy rows) of a larger table, and of a
 * transposed (non-contiguous) one, against an element-by-element reading. */
Test(index, index_select_rows_and_strided)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    enum { V = 300, E = 70, N = 500 };
    double *tab = malloc(sizeof(double) * V * E);
    int64_t ids[N];
    kt_fill_random(tab, V * E, 7, -1, 1);
    for (int i = 0; i < N; i++) ids[i] = (i * 7919) % V;
    tg_tensor *t = tg_tensor_from_data(tab, (int64_t[]){ V, E }, 2, TG_FLOAT64);
    tg_tensor *idx = kt_tensor_i64(ids, (int64_t[]){ N }, 1);
    tg_tensor *r = tg_index_select(t, 0, idx);
    tg_tensor *tt = tg_contiguous(tg_transpose(t, 0, 1)); /* (E, V) */
    tg_tensor *r2 = tg_index_select(tg_transpose(tt, 0, 1), 0, idx);
    tg_tensor *g = tg_gather(tg_transpose(tt, 0, 1), 0,
                             tg_contiguous(tg_expand(tg_view(idx, TG_INTS(N, 1)), TG_INTS(N, E))));
    cr_assert(r && r2 && g, "%s", tg_last_error());
    double *want = malloc(sizeof(double) * N * E);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < E; j++) want[i * E + j] = tab[ids[i] * E + j];
    kt_assert_close(r, want, N * E, 0, 0, "index_select rows");
    kt_assert_close(r2, want, N * E, 0, 0, "index_select strided");
    kt_assert_close(g, want, N * E, 0, 0, "gather strided");
    free(want);
    free(tab);
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* scatter_add / index_add with many duplicates in a large tensor run in parallel and give the
 * same result on every call (fixed order). */
Test(index, accumulate_deterministic)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    enum { R = 64, C = 4096, N = 2000 };
    double *src = malloc(sizeof(double) * N * C);
    int64_t *ids = malloc(sizeof(int64_t) * N);
    kt_fill_random(src, N * C, 11, -1, 1);
    for (int i = 0; i < N; i++) ids[i] = (i * 31) % R;
    tg_tensor *s = kt_tensor(src, (int64_t[]){ N, C }, 2, TG_FLOAT32);
    tg_tensor *idx = kt_tensor_i64(ids, (int64_t[]){ N }, 1);
    tg_tensor *z = tg_zeros(TG_INTS(R, C), .dtype = TG_FLOAT32);
    tg_tensor *a = tg_index_add(z, 0, idx, s), *b = tg_index_add(z, 0, idx, s);
    cr_assert(a && b, "%s", tg_last_error());
    cr_assert(same(a, b), "index_add differs between two runs");
    /* against float64 sums */
    double *want = calloc((size_t)R * C, sizeof(double));
    for (int i = 0; i < N; i++)
        for (int j = 0; j < C; j++) want[ids[i] * C + j] += (double)(float)src[(size_t)i * C + j];
    kt_assert_close(a, want, R * C, 1e-4, 1e-4, "index_add large");
    tg_tensor *ie = tg_contiguous(tg_expand(tg_view(idx, TG_INTS(N, 1)), TG_INTS(N, C)));
    tg_tensor *sa = tg_scatter_add(z, 0, ie, s), *sb = tg_scatter_add(z, 0, ie, s);
    cr_assert(sa && sb, "%s", tg_last_error());
    cr_assert(same(sa, sb), "scatter_add differs between two runs");
    kt_assert_close(sa, want, R * C, 1e-4, 1e-4, "scatter_add large");
    free(want);
    free(src);
    free(ids);
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* In place on a non-contiguous self writes through the view. */
Test(index, inplace_non_contiguous)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *base = tg_zeros(TG_INTS(3, 4), .dtype = TG_FLOAT64);
    tg_tensor *v = tg_transpose(base, 0, 1); /* (4, 3) */
    int64_t iv[3] = { 3, 0, 3 };
    tg_tensor *idx = kt_tensor_i64(iv, (int64_t[]){ 1, 3 }, 2);
    tg_tensor *src = tg_ones(TG_INTS(1, 3), .dtype = TG_FLOAT64);
    cr_assert(tg_scatter_add_(v, 0, idx, src) == v, "%s", tg_last_error());
    static const double want[12] = { 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1 };
    kt_assert_close(base, want, 12, 0, 0, "scatter_add_ through a transposed view");
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ errors */

Test(index, errors)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    tg_tensor *x = tg_zeros(TG_INTS(5, 4), .dtype = TG_FLOAT32);
    int64_t v7[2] = { 7, 0 }, vm1[1] = { -1 }, v5[1] = { 5 }, v12[2] = { 1, 2 }, v1[1] = { 1 };
    tg_tensor *i7 = kt_tensor_i64(v7, (int64_t[]){ 1, 2 }, 2);
    tg_tensor *im1 = kt_tensor_i64(vm1, (int64_t[]){ 1, 1 }, 2);
    tg_tensor *i5 = kt_tensor_i64(v5, (int64_t[]){ 1 }, 1);
    tg_tensor *i1 = kt_tensor_i64(v1, (int64_t[]){ 1 }, 1);
    tg_tensor *i11 = kt_tensor_i64(v1, (int64_t[]){ 1, 1 }, 2);
    tg_tensor *i12 = kt_tensor_i64(v12, (int64_t[]){ 2 }, 1);
    tg_tensor *s11 = tg_ones(TG_INTS(1, 1), .dtype = TG_FLOAT32);
    tg_tensor *s14 = tg_ones(TG_INTS(1, 4), .dtype = TG_FLOAT32);

    kt_expect_error(tg_gather(x, 0, i7), "index 7 is out of bounds for dimension 0 with size 5");
    kt_expect_error(tg_gather(x, 0, im1), "index -1 is out of bounds for dimension 0 with size 5");
    kt_expect_error(tg_gather(x, 0, tg_to(i7, TG_INT32)),
                    "gather(): Expected dtype int64 for index");
    kt_expect_error(tg_gather(x, 0, i1),
                    "Index tensor must have the same number of dimensions as input tensor");
    tg_tensor *z61 = tg_zeros(TG_INTS(6, 1), .dtype = TG_INT64);
    kt_expect_error(tg_gather(x, 1, z61),
                    "Size does not match at dimension 0 expected index [6, 1] to be smaller than "
                    "self [5, 4] apart from dimension 1");
    kt_expect_error(tg_gather(x, 2, i11),
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)");

    kt_expect_error(tg_scatter_src(x, 0, i7, tg_ones(TG_INTS(1, 2), .dtype = TG_FLOAT32)),
                    "index 7 is out of bounds for dimension 0 with size 5");
    kt_expect_error(tg_scatter_src(x, 0, i11, tg_ones(TG_INTS(1, 1), .dtype = TG_FLOAT64)),
                    "scatter(): Expected self.dtype to be equal to src.dtype");
    kt_expect_error(tg_scatter_src(x, 0, tg_to(i11, TG_INT32), s11),
                    "scatter(): Expected dtype int64 for index");
    kt_expect_error(tg_scatter_src(x, 0, i1, tg_ones(TG_INTS(1), .dtype = TG_FLOAT32)),
                    "Index tensor must have the same number of dimensions as self tensor");
    tg_tensor *z16 = tg_zeros(TG_INTS(1, 6), .dtype = TG_INT64);
    kt_expect_error(tg_scatter_src(x, 0, z16, tg_ones(TG_INTS(1, 8), .dtype = TG_FLOAT32)),
                    "Expected index [1, 6] to be smaller than self [5, 4] apart from dimension 0 "
                    "and to be smaller size than src [1, 8]");
    kt_expect_error(tg_scatter_reduce(x, 0, i11, s11, "foo"),
                    "reduce argument must be either add or multiply.");
    kt_expect_error(tg_scatter_reduce_two(x, 0, i11, s11, "foo"),
                    "reduce argument must be either sum, prod, mean, amax or amin.");
    kt_expect_error(tg_scatter_add(x, 0, i7, tg_ones(TG_INTS(1, 2), .dtype = TG_FLOAT32)),
                    "index 7 is out of bounds for dimension 0 with size 5");

    kt_expect_error(tg_index_select(x, 0, i5), "index out of range in self");
    kt_expect_error(tg_index_select(x, 0, tg_view(im1, TG_INTS(1))), "index out of range in self");
    kt_expect_error(tg_index_select(x, 0, i11), "index_select(): Index is supposed to be a vector");
    kt_expect_error(tg_index_select(x, 0, tg_to(i1, TG_FLOAT32)),
                    "index_select(): Expected dtype int32 or int64 for index");
    kt_expect_error(tg_index_select(x, 3, i1),
                    "Dimension out of range (expected to be in range of [-2, 1], but got 3)");

    kt_expect_error(tg_index_add(x, 0, i5, s14), "index out of range in self");
    kt_expect_error(tg_index_add(x, 0, i12, s14),
                    "index_add_(): Number of indices (2) should be equal to source.size(dim): "
                    "(1), for dim: 0");
    kt_expect_error(tg_index_add(x, 0, i11, s14),
                    "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: "
                    "Long and size: [1, 1]");
    kt_expect_error(tg_index_add(x, 0, tg_to(i1, TG_FLOAT32), s14),
                    "index_add_(): Expected dtype int32/int64 for index but got: Float");
    kt_expect_error(tg_index_add(x, 0, i1, tg_ones(TG_INTS(1, 4), .dtype = TG_FLOAT64)),
                    "index_add_(): self (Float) and source (Double) must have the same scalar "
                    "type");
    kt_expect_error(tg_index_add(x, 0, i1, tg_ones(TG_INTS(1, 3), .dtype = TG_FLOAT32)),
                    "The size of tensor a (4) must match the size of tensor b (3) at "
                    "non-singleton dimension 0");

    /* an out-of-bounds index leaves an in-place self untouched (checked before writing) */
    tg_tensor *y = tg_clone(x);
    int64_t vbad[2] = { 1, 9 };
    kt_expect_error(tg_scatter_add_(y, 0, kt_tensor_i64(vbad, (int64_t[]){ 2, 1 }, 2),
                                    tg_ones(TG_INTS(2, 1), .dtype = TG_FLOAT32)),
                    "index 9 is out of bounds for dimension 0 with size 5");
    cr_assert(same(y, x));
    /* scatter_reduce's prod has no derivative */
    tg_tensor *xr = tg_tensor_set_requires_grad(tg_clone(x), true);
    tg_tensor *pr = tg_scatter_reduce_two(xr, 0, i11, s11, "prod");
    cr_assert(pr, "%s", tg_last_error());
    cr_assert_neq(tg_backward(tg_sum(pr)), 0);
    kt_assert_error("prod");
    tg_scope_end();
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ nonzero */

static void check_nz(tg_tensor *r, const fx_nz_case *c)
{
    cr_assert(r, "%s: %s", c->name, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(r), TG_INT64);
    kt_assert_shape(r, c->yshape, c->ydim);
    double want[256];
    int64_t n = tg_tensor_numel(r);
    cr_assert(n <= 256);
    for (int64_t i = 0; i < n; i++) want[i] = (double)c->y[i];
    kt_assert_close(r, want, n, 0, 0, c->name);
}

Test(index, nonzero_vs_pytorch)
{
    kt_live live = kt_live_now();
    for (int64_t k = 0; k < KT_NUMEL(fx_nz_cases); k++) {
        const fx_nz_case *c = &fx_nz_cases[k];
        tg_scope_begin();
        tg_tensor *x = kt_tensor(c->x, c->xshape, c->xdim, (tg_dtype)c->dtype);
        check_nz(tg_nonzero(x), c);
        check_nz(tg_nonzero_out(x, tg_empty(TG_INTS(0), .dtype = TG_INT64)), c);
        tg_scope_end();
    }
    kt_assert_no_leak(live);
}

/* Several chunks (more than 32768 elements), a non-contiguous input, against a serial scan. */
Test(index, nonzero_large)
{
    kt_live live = kt_live_now();
    tg_scope_begin();
    enum { A = 3, B = 170, C = 150 };
    double *v = malloc(sizeof(double) * A * B * C);
    kt_fill_random(v, A * B * C, 21, -1, 1);
    for (int64_t i = 0; i < A * B * C; i++) v[i] = v[i] > 0.6 ? v[i] : 0;
    tg_tensor *x = kt_tensor(v, (int64_t[]){ A, B, C }, 3, TG_FLOAT32);
    tg_tensor *r = tg_nonzero(x), *rt = tg_nonzero(tg_transpose(x, 0, 2));
    cr_assert(r && rt, "%s", tg_last_error());
    int64_t n = 0;
    for (int64_t i = 0; i < A * B * C; i++) n += v[i] != 0;
    cr_assert_eq(tg_tensor_size(r, 0), n);
    cr_assert_eq(tg_tensor_size(rt, 0), n);
    double *got = kt_values(r), *want = malloc(sizeof(double) * (size_t)n * 3);
    int64_t k = 0;
    for (int64_t i = 0; i < A * B * C; i++)
        if (v[i] != 0) {
            want[k++] = (double)(i / (B * C));
            want[k++] = (double)(i / C % B);
            want[k++] = (double)(i % C);
        }
    kt_assert_close(r, want, n * 3, 0, 0, "nonzero large");
    /* the transposed input (C, B, A): its rows in its own row-major order */
    k = 0;
    for (int64_t c = 0; c < C; c++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t a = 0; a < A; a++)
                if (v[(a * B + b) * C + c] != 0) {
                    want[k++] = (double)c;
                    want[k++] = (double)b;
                    want[k++] = (double)a;
                }
    kt_assert_close(rt, want, n * 3, 0, 0, "nonzero transposed");
    free(got);
    free(want);
    free(v);
    tg_scope_end();
    kt_assert_no_leak(live);
}
