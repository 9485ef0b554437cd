/* Forward-mode AD (tg_core.h, "forward-mode AD"): the runtime's semantics against PyTorch 1.13's
 * torch.autograd.forward_ad (tests/fixtures/forward_ad_fixtures.h, from
 * tests/fixtures/gen_forward_ad.py; functorch.jvp for nested levels, which forward_ad does not
 * nest in 1.13): make_dual / unpack_dual, errors, tangents through views and in-place
 * operators, nested levels, exiting a level, forward over reverse, plain tensors.
 *
 * Metric: every value within 1e-12 (absolute and relative) of PyTorch's, in float64: the
 * formulas are PyTorch's, and only libm's last bits may differ. Every test checks that it
 * leaves no tensor or storage alive. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../fixtures/forward_ad_fixtures.h"
#include "tensorgen.h"
#include "kt_util.h"

#define NO_LEVEL_MSG                                                                                      \
    "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() " \
    "first."

static int64_t tensors0, storages0;

static void init(void)
{
    tensors0 = tg_live_tensors();
    storages0 = tg_live_storages();
}

static void expect_no_leak(void)
{
    cr_expect_eq(tg_live_tensors(), tensors0, "leaked %lld tensors",
                 (long long)(tg_live_tensors() - tensors0));
    cr_expect_eq(tg_live_storages(), storages0, "leaked %lld storages",
                 (long long)(tg_live_storages() - storages0));
}

TestSuite(forward_ad, .init = init);

/* A float64 tensor of `shape` holding v (copied). */
static tg_tensor *f64(const double *v, const int64_t *shape, int64_t nd)
{
    tg_tensor *t = tg_tensor_from_data(v, shape, nd, TG_FLOAT64);
    cr_assert(t, "tensor_from_data: %s", tg_last_error());
    return t;
}

#define SHAPE(...) ((const int64_t[]){ __VA_ARGS__ }), (sizeof((int64_t[]){ __VA_ARGS__ }) / 8)

/* t's values (row-major, any strides) against want[0..n). */
static void expect_values(tg_tensor *t, const double *want, int64_t n, const char *what)
{
    cr_assert(t, "%s: NULL (%s)", what, tg_last_error() ? tg_last_error() : "no error");
    cr_assert_eq(tg_tensor_numel(t), n, "%s: %lld elements, expected %lld", what,
                 (long long)tg_tensor_numel(t), (long long)n);
    double got[16];
    cr_assert(n <= 16);
    cr_assert_eq(tg_tensor_to_doubles(t, got, n), 0, "%s: %s", what, tg_last_error());
    for (int64_t k = 0; k < n; k++)
        cr_expect(fabs(got[k] - want[k]) <= 1e-12 + 1e-12 * fabs(want[k]),
                  "%s: element %lld is %.17g, PyTorch gives %.17g", what, (long long)k, got[k],
                  want[k]);
}

/* The tangent of t at `level` against want (NULL: t must have none). */
static void expect_tangent(tg_tensor *t, int level, const double *want, int64_t n, const char *what)
{
    cr_assert(t, "%s: NULL (%s)", what, tg_last_error() ? tg_last_error() : "no error");
    tg_dual d = tg_unpack_dual(t, level);
    cr_assert(d.primal, "%s: unpack_dual: %s", what, tg_last_error());
    if (want) {
        cr_expect(d.tangent, "%s: no tangent", what);
        if (d.tangent) {
            cr_expect_eq(tg_tensor_dim(d.tangent), tg_tensor_dim(t), "%s: tangent's rank", what);
            for (int64_t k = 0; k < tg_tensor_dim(t) && k < tg_tensor_dim(d.tangent); k++)
                cr_expect_eq(tg_tensor_size(d.tangent, k), tg_tensor_size(t, k),
                             "%s: tangent's dim %lld", what, (long long)k);
            expect_values(d.tangent, want, n, what);
        }
    } else {
        cr_expect_null(d.tangent, "%s: a tangent where there should be none", what);
    }
    kt_release_all(d.primal, d.tangent);
}

/* ------------------------------------------------------------------ make_dual, unpack_dual */

Test(forward_ad, make_dual_unpack_dual_round_trip)
{
    tg_tensor *p = f64(fx_fwad_p, SHAPE(2, 3)), *t = f64(fx_fwad_t, SHAPE(2, 3));
    int lv = tg_fw_dual_level_enter();
    cr_assert_eq(lv, 0, "the outermost level is 0, got %d (%s)", lv, tg_last_error());
    tg_tensor *d = tg_make_dual(p, t, lv);
    cr_assert(d, "make_dual: %s", tg_last_error());
    expect_values(d, fx_fwad_p, 6, "the dual's values");
    cr_expect_eq(tg_tensor_data(d), tg_tensor_data(p), "the dual is a view of the primal");
    tg_dual u = tg_unpack_dual(d, lv);
    expect_values(u.primal, fx_fwad_p, 6, "primal");
    expect_values(u.tangent, fx_fwad_t, 6, "tangent");
    cr_expect_eq(tg_tensor_data(u.primal), tg_tensor_data(p), "the primal is a view");
    cr_expect_eq(tg_tensor_data(u.tangent), tg_tensor_data(t), "the tangent is kept by reference");
    expect_tangent(u.primal, lv, NULL, 0, "the unpacked primal");
    expect_tangent(p, lv, NULL, 0, "make_dual's argument");
    kt_release_all(u.primal, u.tangent, d);
    cr_expect_eq(tg_fw_dual_level_exit(lv), 0, "%s", tg_last_error());
    kt_release_all(t, p);
    expect_no_leak();
}

Test(forward_ad, make_dual_without_a_level_fails_with_pytorchs_message)
{
    tg_tensor *p = f64(fx_fwad_p, SHAPE(2, 3)), *t = f64(fx_fwad_t, SHAPE(2, 3));
    cr_expect_null(tg_make_dual(p, t, 0));
    cr_expect(tg_last_error() && strstr(tg_last_error(), NO_LEVEL_MSG), "error: %s",
              tg_last_error());
    tg_clear_error();
    tg_dual u = tg_unpack_dual(p, 0);
    cr_expect(!u.primal && !u.tangent, "unpack_dual at a level not entered must fail");
    cr_expect(tg_last_error() != NULL, "unpack_dual at a level not entered records an error");
    tg_clear_error();
    kt_release_all(t, p);
    expect_no_leak();
}

Test(forward_ad, make_dual_rejects_bad_tangents_and_primals)
{
    tg_tensor *p = f64(fx_fwad_p, SHAPE(2, 3)), *t = f64(fx_fwad_t, SHAPE(2, 3));
    tg_tensor *t3 = f64(fx_fwad_t, SHAPE(3)), *t32 = f64(fx_fwad_t, SHAPE(3, 2));
    tg_tensor *tf = tg__to_copy(t, .dtype = TG_FLOAT32);
    tg_tensor *pi = tg__to_copy(p, .dtype = TG_INT64), *ti = tg__to_copy(t, .dtype = TG_INT64);
    int lv = tg_fw_dual_level_enter();
    cr_assert_geq(lv, 0);
    struct {
        tg_tensor *primal, *tangent;
        const char *what;
    } bad[] = {
        { p, t3, "a tangent of shape (3) for a (2, 3) primal" },
        { p, t32, "a tangent of shape (3, 2) for a (2, 3) primal" },
        { p, tf, "a float32 tangent for a float64 primal" },
        { pi, ti, "an int64 primal" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        tg_tensor *d = tg_make_dual(bad[k].primal, bad[k].tangent, lv);
        cr_expect_null(d, "make_dual accepted %s", bad[k].what);
        tg_release(d);
        cr_expect(tg_last_error() && strstr(tg_last_error(), "make_dual"),
                  "%s: the error should name make_dual: %s", bad[k].what, tg_last_error());
        tg_clear_error();
    }
    /* A primal that already has a tangent at this level. */
    tg_tensor *d = tg_make_dual(p, t, lv);
    cr_assert(d, "%s", tg_last_error());
    tg_tensor *dd = tg_make_dual(d, t, lv);
    cr_expect_null(dd, "make_dual accepted a primal already dual at the level");
    tg_release(dd);
    tg_clear_error();
    /* Only the innermost level can be exited. */
    int lv2 = tg_fw_dual_level_enter();
    cr_assert_eq(lv2, lv + 1);
    cr_expect_eq(tg_fw_dual_level_exit(lv), -1, "exiting a level that is not the innermost");
    tg_clear_error();
    cr_expect_eq(tg_fw_dual_level_exit(lv2), 0, "%s", tg_last_error());
    tg_release(d);
    cr_expect_eq(tg_fw_dual_level_exit(lv), 0, "%s", tg_last_error());
    tg_tensor *all[] = { p, t, t3, t32, tf, pi, ti };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    expect_no_leak();
}

Test(forward_ad, levels_nest_up_to_the_maximum)
{
    int lv[TG_MAX_DUAL_LEVELS];
    for (int k = 0; k < TG_MAX_DUAL_LEVELS; k++) {
        lv[k] = tg_fw_dual_level_enter();
        cr_assert_eq(lv[k], k, "level %d: %s", k, tg_last_error());
    }
    cr_expect_eq(tg_fw_dual_level_enter(), -1, "more than TG_MAX_DUAL_LEVELS levels");
    cr_expect(tg_last_error() != NULL);
    tg_clear_error();
    for (int k = TG_MAX_DUAL_LEVELS - 1; k >= 0; k--) cr_expect_eq(tg_fw_dual_level_exit(lv[k]), 0);
    /* TG_DUAL_LEVEL enters and exits. */
    int seen = -1;
    TG_DUAL_LEVEL(l) { seen = l; }
    cr_expect_eq(seen, 0);
    TG_DUAL_LEVEL(l) { seen = l; }
    cr_expect_eq(seen, 0, "TG_DUAL_LEVEL exited its level");
    expect_no_leak();
}

/* ------------------------------------------------------------------ views */

Test(forward_ad, tangents_flow_through_views)
{
    tg_tensor *p = f64(fx_fwad_p, SHAPE(2, 3)), *t = f64(fx_fwad_t, SHAPE(2, 3));
    TG_DUAL_LEVEL(lv)
    {
        tg_tensor *d = tg_make_dual(p, t, lv);
        tg_tensor *tr = tg_transpose(d, 0, 1), *sl = tg_slice(d, .dim = 1, .start = 1, .end = 3);
        tg_tensor *se = tg_select(d, 0, 1), *vw = tg_view(d, TG_INTS(3, 2));
        tg_tensor *s = tg_sin(tr);
        expect_tangent(tr, lv, fx_fwad_transpose_t, 6, "transpose(0, 1)");
        expect_tangent(sl, lv, fx_fwad_slice_t, 4, "slice(dim 1, 1:3)");
        expect_tangent(se, lv, fx_fwad_select_t, 3, "select(0, 1)");
        expect_tangent(vw, lv, fx_fwad_view_t, 6, "view(3, 2)");
        expect_tangent(s, lv, fx_fwad_sin_transpose_t, 6, "sin(transpose)");
        tg_tensor *all[] = { d, tr, sl, se, vw, s };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    }
    kt_release_all(t, p);
    expect_no_leak();
}

/* ------------------------------------------------------------------ in-place */

Test(forward_ad, in_place_mul_on_a_dual_tensor)
{
    tg_tensor *a = f64(fx_fwad_a, SHAPE(3)), *ta = f64(fx_fwad_ta, SHAPE(3));
    tg_tensor *c = f64(fx_fwad_c, SHAPE(3)), *tc = f64(fx_fwad_tc, SHAPE(3));
    TG_DUAL_LEVEL(lv)
    {
        /* x.mul_(y), both dual: tangent ta c + a tc. */
        tg_tensor *ac = tg_clone(a), *tac = tg_clone(ta);
        tg_tensor *x = tg_make_dual(ac, tac, lv), *y = tg_make_dual(c, tc, lv);
        tg_tensor *r = tg_mul_(x, y);
        cr_expect(r, "mul_: %s", tg_last_error());
        expect_values(x, fx_fwad_mul__v, 3, "x.mul_(y)'s values");
        expect_tangent(x, lv, fx_fwad_mul__t, 3, "x.mul_(y), both dual");
        kt_release_all(r, x, ac, tac);
        /* A plain factor: tangent ta c. */
        ac = tg_clone(a);
        tac = tg_clone(ta);
        x = tg_make_dual(ac, tac, lv);
        r = tg_mul_(x, c);
        expect_tangent(x, lv, fx_fwad_mul_plain_t, 3, "x.mul_(c), c plain");
        /* Out of place, dual times plain: the same tangent. */
        tg_tensor *x2 = tg_make_dual(a, ta, lv), *m = tg_mul(x2, c);
        expect_tangent(m, lv, fx_fwad_mul_plain_t, 3, "x * c, c plain");
        tg_tensor *all[] = { r, x, ac, tac, y, x2, m };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    }
    kt_release_all(a, ta, c, tc);
    expect_no_leak();
}

Test(forward_ad, in_place_on_a_view_updates_the_base)
{
    tg_tensor *p = f64(fx_fwad_p, SHAPE(2, 3)), *t = f64(fx_fwad_t, SHAPE(2, 3));
    tg_tensor *a = f64(fx_fwad_a, SHAPE(3)), *ta = f64(fx_fwad_ta, SHAPE(3));
    tg_tensor *c = f64(fx_fwad_c, SHAPE(3)), *tc = f64(fx_fwad_tc, SHAPE(3));
    TG_DUAL_LEVEL(lv)
    {
        /* b.select(0, 1).mul_(y) on a dual b, y dual. */
        tg_tensor *pc = tg_clone(p), *tcl = tg_clone(t);
        tg_tensor *b = tg_make_dual(pc, tcl, lv), *y = tg_make_dual(c, tc, lv);
        tg_tensor *row = tg_select(b, 0, 1), *r = tg_mul_(row, y);
        cr_expect(r, "mul_: %s", tg_last_error());
        expect_values(b, fx_fwad_view_inplace_v, 6, "the base's values");
        expect_tangent(b, lv, fx_fwad_view_inplace_t, 6, "the base after row 1 *= y");
        /* base.select(0, 0).copy_(x) on a plain base, x dual: the base becomes dual. */
        tg_tensor *base = tg_zeros(TG_INTS(2, 3), .dtype = TG_FLOAT64);
        tg_tensor *x = tg_make_dual(a, ta, lv), *row0 = tg_select(base, 0, 0);
        tg_tensor *r2 = tg_copy_(row0, x);
        cr_expect(r2, "copy_: %s", tg_last_error());
        expect_values(base, fx_fwad_copy_view_v, 6, "the plain base's values");
        expect_tangent(base, lv, fx_fwad_copy_view_t, 6, "the plain base after copy_ into a row");
        tg_tensor *all[] = { pc, tcl, b, y, row, r, base, x, row0, r2 };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    }
    tg_tensor *all[] = { p, t, a, ta, c, tc };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    expect_no_leak();
}

/* ------------------------------------------------------------------ levels */

/* jvp of jvp: sin at x0 along 1 at both levels; the inner tangent cos(x0) is itself dual at
 * the outer level, with tangent -sin(x0). */
Test(forward_ad, nested_levels_give_second_derivatives)
{
    int64_t none[1] = { 0 };
    double one_v = 1.0;
    tg_tensor *x0 = tg_tensor_from_data(fx_fwad_x0, none, 0, TG_FLOAT64);
    tg_tensor *one = tg_tensor_from_data(&one_v, none, 0, TG_FLOAT64);
    int outer = tg_fw_dual_level_enter(), inner = tg_fw_dual_level_enter();
    cr_assert(outer == 0 && inner == 1, "levels %d, %d: %s", outer, inner, tg_last_error());
    tg_tensor *xo = tg_make_dual(x0, one, outer);
    tg_tensor *xi = tg_make_dual(xo, one, inner);
    cr_assert(xi, "make_dual on a tensor dual at another level: %s", tg_last_error());
    expect_tangent(xi, outer, &one_v, 1, "the outer tangent stays on the inner dual");
    tg_tensor *y = tg_sin(xi);
    expect_tangent(y, outer, fx_fwad_d1, 1, "d sin at the outer level");
    tg_dual u = tg_unpack_dual(y, inner);
    expect_values(u.tangent, fx_fwad_d1, 1, "d sin at the inner level");
    expect_tangent(u.tangent, outer, fx_fwad_d2, 1, "d2 sin: the inner tangent's outer tangent");
    kt_release_all(u.primal, u.tangent);
    tg_tensor *all[] = { y, xi, xo };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    cr_expect_eq(tg_fw_dual_level_exit(inner), 0, "%s", tg_last_error());
    cr_expect_eq(tg_fw_dual_level_exit(outer), 0, "%s", tg_last_error());
    kt_release_all(one, x0);
    expect_no_leak();
}

Test(forward_ad, exiting_a_level_drops_its_tangents)
{
    tg_tensor *p = f64(fx_fwad_p, SHAPE(2, 3)), *t = f64(fx_fwad_t, SHAPE(2, 3));
    int lv = tg_fw_dual_level_enter();
    tg_tensor *d = tg_make_dual(p, t, lv), *y = tg_sin(d);
    cr_assert(d && y, "%s", tg_last_error());
    cr_expect_eq(tg_fw_dual_level_exit(lv), 0);
    tg_dual u = tg_unpack_dual(d, lv);
    cr_expect(!u.primal && !u.tangent, "unpack_dual at an exited level must fail");
    tg_clear_error();
    int lv2 = tg_fw_dual_level_enter();
    cr_assert_eq(lv2, lv, "the level number is reused");
    expect_tangent(d, lv2, NULL, 0, "the dual made at the exited level");
    expect_tangent(y, lv2, NULL, 0, "a result computed at the exited level");
    tg_tensor *z = tg_sin(d);
    expect_tangent(z, lv2, NULL, 0, "a result computed from it now");
    expect_values(d, fx_fwad_p, 6, "the values stay");
    tg_release(z);
    cr_expect_eq(tg_fw_dual_level_exit(lv2), 0);
    kt_release_all(y, d, t, p);
    expect_no_leak();
}

/* ------------------------------------------------------------------ with reverse mode */

/* sum(x^3) (pow) or sum(sin x) (every input used once, so its backward accumulates nothing). */
static tg_tensor *objective(tg_tensor *x, bool cubes)
{
    tg_tensor *e = cubes ? tg_pow_scalar(x, 3) : tg_sin(x), *y = e ? tg_sum(e) : NULL;
    tg_release(e);
    return y;
}

/* The gradient of sum(x^3) taken inside a level on a dual x is dual: 3 x^2 with tangent 6 x v,
 * the Hessian-vector product (for sum(sin x): cos x, with tangent -sin(x) v). */
static void hvp(bool cubes)
{
    tg_tensor *x = tg_tensor_set_requires_grad(f64(fx_fwad_hx, SHAPE(3)), true);
    tg_tensor *v = f64(fx_fwad_hv, SHAPE(3));
    TG_DUAL_LEVEL(lv)
    {
        tg_tensor *xd = tg_make_dual(x, v, lv);
        cr_assert(xd, "%s", tg_last_error());
        cr_expect(tg_tensor_requires_grad(xd), "make_dual keeps the reverse-mode history");
        tg_tensor *y = objective(xd, cubes), *g = NULL;
        int rc = tg_grad(((tg_tensor_list){ &y, 1 }), ((tg_tensor_list){ &x, 1 }), &g);
        cr_expect_eq(rc, 0, "tg_grad: %s", tg_last_error());
        expect_values(g, cubes ? fx_fwad_hg : fx_fwad_sin_hg, 3, "the gradient");
        expect_tangent(g, lv, cubes ? fx_fwad_hvp : fx_fwad_sin_hvp, 3, "the gradient's tangent");
        tg_tensor *all[] = { xd, y, g };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    }
    tg_tensor *gx = tg_tensor_grad(x);
    cr_expect_null(gx, "tg_grad does not accumulate into .grad");
    kt_release_all(gx, v, x);
    expect_no_leak();
}

Test(forward_ad, forward_over_reverse_gives_a_hessian_vector_product) { hvp(true); }

Test(forward_ad, forward_over_reverse_of_sum_sin) { hvp(false); }

/* ------------------------------------------------------------------ plain tensors */

Test(forward_ad, results_of_plain_tensors_have_no_tangent)
{
    tg_tensor *p = f64(fx_fwad_p, SHAPE(2, 3)), *t = f64(fx_fwad_t, SHAPE(2, 3));
    TG_DUAL_LEVEL(lv)
    {
        tg_tensor *s = tg_sin(p), *m = tg_mul(s, p), *tr = tg_transpose(m, 0, 1);
        expect_tangent(s, lv, NULL, 0, "sin(plain)");
        expect_tangent(m, lv, NULL, 0, "sin(plain) * plain");
        expect_tangent(tr, lv, NULL, 0, "a view of a plain result");
        tg_tensor *d = tg_make_dual(p, t, lv);
        expect_tangent(p, lv, NULL, 0, "make_dual leaves its argument plain");
        tg_tensor *all[] = { s, m, tr, d };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    }
    kt_release_all(t, p);
    expect_no_leak();
}

/* Integral results of a dual tensor (argmax, a comparison) have no tangent and no error; an
 * operator without a forward formula that would give a floating result fails naming it. */
Test(forward_ad, integral_results_of_dual_tensors)
{
    tg_tensor *p = f64(fx_fwad_p, SHAPE(2, 3)), *t = f64(fx_fwad_t, SHAPE(2, 3));
    TG_DUAL_LEVEL(lv)
    {
        tg_tensor *d = tg_make_dual(p, t, lv);
        tg_tensor *am = tg_argmax(d), *gt = tg_gt_scalar(d, 0.0);
        cr_expect(am && gt, "argmax / gt of a dual tensor failed: %s", tg_last_error());
        expect_tangent(am, lv, NULL, 0, "argmax(dual)");
        expect_tangent(gt, lv, NULL, 0, "dual > 0");
        tg_tensor *all[] = { d, am, gt };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    }
    kt_release_all(t, p);
    expect_no_leak();
}
