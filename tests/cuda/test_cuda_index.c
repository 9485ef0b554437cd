/* CUDA indexing kernels (kernels/cuda/index.cu) against the CPU kernels on the inputs of the
 * PyTorch fixtures (tests/fixtures/index_fixtures.h): every case, functional and in place,
 * float32, float64 and the integer cases in int64; a non-contiguous self; the index errors
 * (checked on the host before any kernel runs, nothing written).
 *
 * Bounds: gathers, copies and the integer reductions are exact; the float sums run in the
 * same order as the CPU's (index order per position), so they are exact too, but 1e-12 / 1e-6
 * relative is allowed in case the compiler contracts a multiply-add differently. */
#include "cuda_cmp.h"
#include "../fixtures/index_fixtures.h"

TG_CUDA_COVERS("index_select", "gather.out", "scatter.src_out", "scatter.value_out",
               "scatter.reduce_out", "scatter.value_reduce_out", "scatter_add.out",
               "scatter_reduce.two_out", "index_add.out", "nonzero");

#ifndef TG_WITH_CUDA
Test(cuda_index, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

#define NUMEL(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* The case's operator, functional (inplace false) or in place on a clone. */
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

Test(cuda_index, cases_vs_cpu)
{
    CC_REQUIRE_DEVICE("cuda_index::cases_vs_cpu");
    kt_live base = kt_live_now();
    for (int64_t k = 0; k < NUMEL(fx_idx_cases); k++) {
        const fx_idx_case *c = &fx_idx_cases[k];
        for (int t = 0; t < 2; t++) {
            if (c->integer && t) continue;
            tg_dtype dt = c->integer ? TG_INT64 : t ? TG_FLOAT32 : TG_FLOAT64;
            double tol = dt == TG_FLOAT32 ? 1e-6 : dt == TG_FLOAT64 ? 1e-12 : 0;
            tg_scope_begin();
            tg_tensor *x = kt_tensor(c->x, c->xshape, c->xdim, dt);
            tg_tensor *s = c->src ? kt_tensor(c->src, c->sshape, c->sdim, dt) : NULL;
            tg_tensor *i = kt_tensor_i64(c->index, c->ishape, c->idim);
            if (c->index_i32) i = tg_to(i, TG_INT32);
            for (int inplace = 0; inplace < 2; inplace++) {
                tg_tensor *want = run(c, x, i, s, inplace);
                tg_tensor *got = run(c, cc_cuda(x), cc_cuda(i), s ? cc_cuda(s) : NULL, inplace);
                cr_assert(want && got, "%s: %s", c->name, tg_last_error());
                cc_assert_close(got, want, tol, tol, c->name);
            }
            tg_scope_end();
        }
    }
    kt_assert_no_leak(base);
}

/* A transposed self, written in place through the view, and the large accumulation. */
Test(cuda_index, strided_and_large)
{
    CC_REQUIRE_DEVICE("cuda_index::strided_and_large");
    kt_live base = kt_live_now();
    tg_scope_begin();
    const int64_t xs[2] = { 40, 50 }, ss[2] = { 300, 40 };
    tg_tensor *x = cc_rand(xs, 2, TG_FLOAT32, 3, -1, 1);
    tg_tensor *src = cc_rand(ss, 2, TG_FLOAT32, 4, -1, 1);
    tg_tensor *idx = cc_rand(ss, 2, TG_INT64, 5, 0, 40);
    tg_tensor *want = tg_scatter_add_(tg_contiguous(tg_transpose(x, 0, 1)), 1,
                                      tg_transpose(idx, 0, 1), tg_transpose(src, 0, 1));
    tg_tensor *xt = tg_transpose(cc_cuda(x), 0, 1); /* (50, 40), non-contiguous */
    tg_tensor *got =
        tg_scatter_add_(xt, 1, tg_transpose(cc_cuda(idx), 0, 1), tg_transpose(cc_cuda(src), 0, 1));
    cr_assert(got == xt, "%s", tg_last_error());
    cc_assert_close(got, want, 1e-6, 1e-6, "scatter_add_ transposed");
    const int64_t n1[1] = { 1000 };
    tg_tensor *ids = cc_rand(n1, 1, TG_INT64, 6, 0, 40);
    cc_assert_close(tg_index_select(cc_cuda(x), 0, cc_cuda(ids)), tg_index_select(x, 0, ids), 0, 0,
                    "index_select rows");
    tg_scope_end();
    kt_assert_no_leak(base);
}

Test(cuda_index, nonzero)
{
    CC_REQUIRE_DEVICE("cuda_index::nonzero");
    kt_live base = kt_live_now();
    for (int64_t k = 0; k < NUMEL(fx_nz_cases); k++) {
        const fx_nz_case *c = &fx_nz_cases[k];
        tg_scope_begin();
        tg_tensor *x = kt_tensor(c->x, c->xshape, c->xdim, (tg_dtype)c->dtype);
        cc_assert_close(tg_nonzero(cc_cuda(x)), tg_nonzero(x), 0, 0, c->name);
        tg_scope_end();
    }
    tg_scope_begin();
    const int64_t s3[3] = { 3, 120, 100 };
    tg_tensor *x = cc_rand(s3, 3, TG_INT64, 9, -1, 2);
    cc_assert_close(tg_nonzero(cc_cuda(x)), tg_nonzero(x), 0, 0, "nonzero large");
    tg_scope_end();
    kt_assert_no_leak(base);
}

Test(cuda_index, errors)
{
    CC_REQUIRE_DEVICE("cuda_index::errors");
    kt_live base = kt_live_now();
    tg_scope_begin();
    const int64_t xs[2] = { 5, 4 };
    tg_tensor *x = cc_cuda(cc_rand(xs, 2, TG_FLOAT32, 1, -1, 1));
    tg_tensor *before = tg_to_device(x, TG_DEVICE_CPU);
    int64_t v[2] = { 1, 7 };
    tg_tensor *i = cc_cuda(kt_tensor_i64(v, (int64_t[]){ 2, 1 }, 2));
    cr_assert_null(tg_gather(x, 0, i));
    kt_assert_error("index 7 is out of bounds for dimension 0 with size 5");
    cr_assert_null(tg_scatter_add_(x, 0, i, cc_cuda(tg_ones(TG_INTS(2, 1), .dtype = TG_FLOAT32))));
    kt_assert_error("index 7 is out of bounds for dimension 0 with size 5");
    cc_assert_close(x, before, 0, 0, "untouched after the error");
    cr_assert_null(tg_index_select(x, 0, cc_cuda(kt_tensor_i64(v, (int64_t[]){ 2 }, 1))));
    kt_assert_error("index out of range in self");
    cr_assert_null(tg_index_add(x, 1, cc_cuda(kt_tensor_i64(v, (int64_t[]){ 2 }, 1)),
                                cc_cuda(tg_ones(TG_INTS(5, 2), .dtype = TG_FLOAT32))));
    kt_assert_error("index out of range in self");
    cr_assert_null(tg_gather(x, 0, kt_tensor_i64(v, (int64_t[]){ 2, 1 }, 2)));
    kt_assert_error("Expected all tensors to be on the same device");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
