/* Reduction plans: shapes, offsets, errors, and a sum kernel through tg__reduce_for_each. */
#include "rt_test.h"
#include "kt_util.h"

TestSuite(rt_reduce, .fini = rt_leak_check);

typedef struct sum_ctx {
    const float *in;
    double *out;
} sum_ctx;
static void sum_loop(int64_t o, int64_t off, int64_t n, int64_t st, const int64_t *tab, void *p)
{
    sum_ctx *c = p;
    double s = 0;
    for (int64_t j = 0; j < n; j++) s += c->in[off + (tab ? tab[j] : j * st)];
    c->out[o] = s;
}

static void sum_check(tg_tensor *t, const int64_t *dims, int64_t nd, bool keepdim,
                      const double *want, int64_t nout)
{
    tg_reduce_plan p;
    cr_assert_eq(tg__reduce_plan_make(&p, "sum", t, dims, nd, keepdim), 0);
    cr_assert_eq(p.outer_numel, nout);
    double out[256];
    sum_ctx c = { tg_tensor_data(t), out };
    cr_assert_eq(tg__reduce_for_each(&p, sum_loop, &c), 0);
    for (int64_t i = 0; i < nout; i++) cr_expect_eq(out[i], want[i], "out[%lld]", (long long)i);
}

Test(rt_reduce, shapes)
{
    tg_tensor *t = rt_arange((int64_t[]){ 2, 3, 4 }, 3, TG_FLOAT32);
    tg_reduce_plan p;
    cr_assert_eq(tg__reduce_plan_make(&p, "sum", t, (int64_t[]){ 1 }, 1, false), 0);
    cr_expect_eq(p.out_ndim, 2);
    cr_expect_eq(p.out_sizes[0], 2);
    cr_expect_eq(p.out_sizes[1], 4);
    cr_expect_eq(p.inner_numel, 3);
    cr_expect_eq(p.outer_numel, 8);
    cr_assert_eq(tg__reduce_plan_make(&p, "sum", t, (int64_t[]){ -1, 0 }, 2, true), 0);
    cr_expect_eq(p.out_ndim, 3);
    cr_expect_eq(p.out_sizes[0], 1);
    cr_expect_eq(p.out_sizes[1], 3);
    cr_expect_eq(p.out_sizes[2], 1);
    cr_assert_eq(tg__reduce_plan_make(&p, "sum", t, NULL, 0, false), 0);
    cr_expect_eq(p.out_ndim, 0);
    cr_expect_eq(p.inner_numel, 24);
    cr_expect_eq(p.inner_ndim, 1, "a contiguous full reduction is one strided run");
    tg_release(t);
}

Test(rt_reduce, errors)
{
    tg_tensor *t = rt_arange((int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_reduce_plan p;
    cr_expect_eq(tg__reduce_plan_make(&p, "sum", t, (int64_t[]){ 3 }, 1, false), -1);
    cr_expect_str_eq(tg_last_error(),
                     "sum: Dimension out of range (expected to be in range of [-2, 1], but got 3)");
    tg_clear_error();
    cr_expect_eq(tg__reduce_plan_make(&p, "sum", t, (int64_t[]){ 1, -1 }, 2, false), -1);
    cr_expect_str_eq(tg_last_error(), "sum: dim 1 appears multiple times in the list of dims");
    tg_clear_error();
    tg_release(t);
}

Test(rt_reduce, sums)
{
    tg_tensor *t = rt_arange((int64_t[]){ 2, 3, 4 }, 3, TG_FLOAT32);
    /* over dim 1: out[i][k] = sum_j (12 i + 4 j + k) = 36 i + 12 + 3 k */
    double w1[8];
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) w1[i * 4 + k] = 36 * i + 12 + 3 * k;
    sum_check(t, (int64_t[]){ 1 }, 1, false, w1, 8);
    /* over dims 0 and 2 (not coalescable: needs the offset table): out[j] = sum_{i,k} */
    double w2[3];
    for (int j = 0; j < 3; j++) w2[j] = 2 * 4 * 4 * j + 4 * 12 + 2 * 6;
    sum_check(t, (int64_t[]){ 0, 2 }, 2, false, w2, 3);
    sum_check(t, NULL, 0, false, (double[]){ 276 }, 1);
    /* a transposed view, reducing its last dim */
    tg_tensor *a = rt_arange((int64_t[]){ 3, 4 }, 2, TG_FLOAT32);
    tg_tensor *at = tg__make_view(a, (int64_t[]){ 4, 3 }, (int64_t[]){ 1, 4 }, 2, 0);
    sum_check(at, (int64_t[]){ 1 }, 1, false, (double[]){ 12, 15, 18, 21 }, 4);
    /* inner index j is the row-major position among the reduced dims */
    tg_reduce_plan p;
    cr_assert_eq(tg__reduce_plan_make(&p, "argmax", at, NULL, 0, false), 0);
    for (int64_t j = 0; j < 12; j++)
        cr_expect_eq(tg__reduce_inner_offset(&p, j), (j % 3) * 4 + j / 3);
    kt_release_all(t, a, at);
}

Test(rt_reduce, scalar_and_empty)
{
    tg_tensor *s = tg__scalar_tensor(4, TG_FLOAT32, TG_DEVICE_CPU);
    sum_check(s, (int64_t[]){ 0 }, 1, false, (double[]){ 4 }, 1);
    sum_check(s, (int64_t[]){ -1 }, 1, true, (double[]){ 4 }, 1);
    tg_tensor *e = tg__empty("t", (int64_t[]){ 3, 0 }, 2, TG_FLOAT32, TG_DEVICE_CPU);
    sum_check(e, (int64_t[]){ 1 }, 1, false, (double[]){ 0, 0, 0 }, 3);
    kt_release_all(s, e);
}

Test(rt_reduce, parallel_outer)
{
    tg_set_num_threads(2);
    tg_tensor *t = rt_arange((int64_t[]){ 256, 1024 }, 2, TG_FLOAT32);
    tg_reduce_plan p;
    cr_assert_eq(tg__reduce_plan_make(&p, "sum", t, (int64_t[]){ 1 }, 1, false), 0);
    double out[256];
    sum_ctx c = { tg_tensor_data(t), out };
    cr_assert_eq(tg__reduce_for_each(&p, sum_loop, &c), 0);
    for (int i = 0; i < 256; i++) cr_expect_eq(out[i], 1024.0 * 1024 * i + 1023.0 * 1024 / 2);
    tg_release(t);
}
