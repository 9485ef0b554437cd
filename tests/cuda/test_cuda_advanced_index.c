/* CUDA advanced indexing (kernels/cuda/advanced_index.cu) against the CPU kernels on the
 * inputs of the PyTorch fixtures (tests/fixtures/advanced_index_fixtures.h): index.Tensor,
 * index_put (functional and in place, with and without accumulate) and masked_select in
 * float32, float64 and int64, with indices on the device and on the host; a transposed self;
 * the embedding-backward pattern (many duplicates, accumulate); the index errors (checked on
 * the host before any kernel runs, nothing written); autograd through index on the device.
 *
 * Bounds: copies are exact; accumulation runs in the CPU's order (index order per position),
 * so sums are exact too, but 1e-6 relative is allowed for float32 in case the compiler
 * contracts differently. */
#include "cuda_cmp.h"
#include "../fixtures/advanced_index_fixtures.h"

TG_CUDA_COVERS("index.Tensor", "index_put_");

#ifndef TG_WITH_CUDA
Test(cuda_advanced_index, skipped) { CC_SKIP_NO_CUDA_BUILD(); }
#else

#define NUMEL(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* The case's indices (the open scope's), on the device when `dev`. */
static tg_tensor_list indices_of(const fx_ai_case *c, tg_tensor **items, bool dev)
{
    static const tg_dtype dts[5] = { TG_INT64, TG_INT64, TG_INT32, TG_BOOL, TG_UINT8 };
    for (int64_t j = 0; j < c->nidx; j++) {
        const fx_ai_index *ix = &c->idx[j];
        items[j] = NULL;
        if (!ix->kind) continue;
        tg_tensor *t = tg_to(kt_tensor_i64(ix->v, ix->shape, ix->ndim), dts[ix->kind]);
        items[j] = dev ? cc_cuda(t) : t;
    }
    return (tg_tensor_list){ items, c->nidx };
}

Test(cuda_advanced_index, cases_vs_cpu)
{
    CC_REQUIRE_DEVICE("cuda_advanced_index::cases_vs_cpu");
    kt_live base = kt_live_now();
    static const tg_dtype dts[3] = { TG_FLOAT64, TG_FLOAT32, TG_INT64 };
    for (int64_t k = 0; k < NUMEL(fx_ai_cases); k++) {
        const fx_ai_case *c = &fx_ai_cases[k];
        for (int t = 0; t < 3; t++) {
            tg_scope_begin();
            tg_tensor *hi[4], *di[4], *ci[4];
            tg_tensor_list h = indices_of(c, hi, false), d = indices_of(c, di, true);
            tg_tensor_list hc = indices_of(c, ci, false); /* host indices for device self */
            tg_tensor *x = kt_tensor(c->x, c->xshape, c->xdim, dts[t]);
            tg_tensor *v = kt_tensor(c->v, c->vshape, c->vdim, dts[t]);
            tg_tensor *xd = cc_cuda(x), *vd = cc_cuda(v);
            tg_tensor *want = tg_index(x, h);
            cr_assert(want, "%s: %s", c->name, tg_last_error());
            cc_assert_close(tg_index(xd, d), want, 0, 0, c->name);
            cc_assert_close(tg_index(xd, hc), want, 0, 0, c->name);
            tg_tensor *wp = tg_index_put(x, h, v, .accumulate = c->accumulate);
            tg_tensor *gp = tg_index_put(xd, d, vd, .accumulate = c->accumulate);
            cr_assert(wp && gp, "%s: %s", c->name, tg_last_error());
            cc_assert_close(gp, wp, 1e-6, 1e-6, c->name);
            tg_tensor *xc = tg_clone(xd);
            cr_assert_eq(tg_index_put_(xc, d, vd, .accumulate = c->accumulate), xc, "%s: %s",
                         c->name, tg_last_error());
            cc_assert_close(xc, wp, 1e-6, 1e-6, c->name);
            tg_scope_end();
        }
    }
    for (int64_t k = 0; k < NUMEL(fx_ms_cases); k++) {
        const fx_ms_case *c = &fx_ms_cases[k];
        tg_scope_begin();
        tg_tensor *m = tg_to(kt_tensor_i64(c->m, c->mshape, c->mdim), TG_BOOL);
        tg_tensor *x = kt_tensor(c->x, c->xshape, c->xdim, TG_FLOAT32);
        cc_assert_close(tg_masked_select(cc_cuda(x), cc_cuda(m)), tg_masked_select(x, m), 0, 0,
                        c->name);
        tg_scope_end();
    }
    kt_assert_no_leak(base);
}

/* A transposed self read and written through the view; the embedding gradient (accumulate
 * with many duplicates) and its autograd on the device. */
Test(cuda_advanced_index, strided_and_large)
{
    CC_REQUIRE_DEVICE("cuda_advanced_index::strided_and_large");
    kt_live base = kt_live_now();
    tg_scope_begin();
    const int64_t xs[2] = { 30, 40 }, is[2] = { 8, 50 }, gs[3] = { 8, 50, 30 };
    tg_tensor *x = cc_rand(xs, 2, TG_FLOAT32, 3, -1, 1);
    tg_tensor *idx = cc_rand(is, 2, TG_INT64, 5, 0, 40);
    tg_tensor *g = cc_rand(gs, 3, TG_FLOAT32, 4, -1, 1);
    /* x.t()[idx] : (8, 50, 30) rows of the transposed table */
    tg_tensor *want = tg_index(tg_transpose(x, 0, 1), TG_TENSORS(idx));
    tg_tensor *xt = tg_transpose(cc_cuda(x), 0, 1);
    cc_assert_close(tg_index(xt, TG_TENSORS(cc_cuda(idx))), want, 0, 0, "index transposed");
    tg_tensor *wt =
        tg_index_put_(tg_contiguous(tg_transpose(x, 0, 1)), TG_TENSORS(idx), g, .accumulate = true);
    tg_tensor *gt = tg_index_put_(xt, TG_TENSORS(cc_cuda(idx)), cc_cuda(g), .accumulate = true);
    cr_assert(wt && gt == xt, "%s", tg_last_error());
    cc_assert_close(gt, wt, 1e-6, 1e-6, "index_put_ accumulate transposed");
    /* autograd: the gradient of x[idx] on the device */
    tg_tensor *xd =
        tg_tensor_set_requires_grad(cc_cuda(tg_contiguous(tg_transpose(x, 0, 1))), true);
    tg_tensor *xh = tg_tensor_set_requires_grad(tg_contiguous(tg_transpose(x, 0, 1)), true);
    tg_tensor *gd = NULL, *gh = NULL;
    tg_tensor *yd = tg_index(xd, TG_TENSORS(cc_cuda(idx))), *yh = tg_index(xh, TG_TENSORS(idx));
    cr_assert_eq(
        tg_grad(TG_TENSORS(yd), TG_TENSORS(xd), &gd, .grad_outputs = TG_TENSORS(cc_cuda(g))), 0,
        "%s", tg_last_error());
    cr_assert_eq(tg_grad(TG_TENSORS(yh), TG_TENSORS(xh), &gh, .grad_outputs = TG_TENSORS(g)), 0,
                 "%s", tg_last_error());
    cc_assert_close(gd, gh, 1e-6, 1e-6, "grad of index");
    tg_scope_end();
    kt_assert_no_leak(base);
}

Test(cuda_advanced_index, errors)
{
    CC_REQUIRE_DEVICE("cuda_advanced_index::errors");
    kt_live base = kt_live_now();
    tg_scope_begin();
    const int64_t xs[2] = { 3, 4 };
    tg_tensor *x = cc_cuda(cc_rand(xs, 2, TG_FLOAT32, 1, -1, 1));
    tg_tensor *before = tg_to_device(x, TG_DEVICE_CPU);
    int64_t v[2] = { 1, 5 };
    tg_tensor *i = cc_cuda(kt_tensor_i64(v, (int64_t[]){ 2 }, 1));
    cr_assert_null(tg_index(x, TG_TENSORS(i)));
    kt_assert_error("index 5 is out of bounds for dimension 0 with size 3");
    cr_assert_null(tg_index_put_(
        x, TG_TENSORS(i), cc_cuda(tg_ones(TG_INTS(4), .dtype = TG_FLOAT32)), .accumulate = true));
    kt_assert_error("index 5 is out of bounds for dimension 0 with size 3");
    cc_assert_close(x, before, 0, 0, "untouched after the error");
    cr_assert_null(tg_index(x, TG_TENSORS(cc_cuda(tg_ones(TG_INTS(4), .dtype = TG_BOOL)))));
    kt_assert_error("The shape of the mask [4] at index 0 does not match the shape of the indexed "
                    "tensor [3] at index 0");
    cr_assert_null(tg_index(x, TG_TENSORS(i, i, i)));
    kt_assert_error("too many indices for tensor of dimension 2");
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif
