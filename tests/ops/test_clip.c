/* _foreach_norm, tg_clip_grad_norm_ and adam_step_ as AdamW against PyTorch 1.13
 * (tests/fixtures/clip_fixtures.h, from tests/fixtures/gen_clip.py): the norms of three
 * tensors for ord 2, 1, inf, -inf, 0 and 3; torch.nn.utils.clip_grad_norm_ (norm 2 clipping
 * and not clipping, inf, 1) on the same gradients, total and scaled gradients; five
 * torch.optim.AdamW steps (lr 1e-3, weight_decay 0.1, amsgrad both ways) of three tensors,
 * every step's parameters; float64 and float32; and PyTorch's messages for bad input.
 *
 * Metric: float64 1e-12 relative (sums in another order); float32: norms and clipping are
 * rounded once from double here, and PyTorch accumulates in float, so 1e-6 relative; AdamW
 * float32 1e-6 absolute + 1e-5 relative after five steps (as tests/ops/test_optim.c). */
#include "kt_case.h"
#include "../fixtures/clip_fixtures.h"
#include "tg_cover.h"
#include "tg_nn_optim.h" /* tg_clip_grad_norm_ */

TG_COVERS("_foreach_norm.Scalar");

static const int64_t SHAPES[3][3] = { { 3, 4, 0 }, { 5, 0, 0 }, { 2, 2, 3 } };
static const int64_t NDIMS[3] = { 2, 1, 3 };
static const int64_t NUMELS[3] = { 12, 5, 12 };
static const double *const XS[3] = { fx_fn_x0, fx_fn_x1, fx_fn_x2 };
static const double *const GS[3] = { fx_clip_g0, fx_clip_g1, fx_clip_g2 };
static const double *const PS[3] = { fx_adamw_p0, fx_adamw_p1, fx_adamw_p2 };
enum { TOTAL = 29, STEPS = 5 };

/* kt_tol_relative's bound: float64 1e-12, float32 1e-6 */
static double relative_bound(tg_dtype dt)
{
    double rtol, atol;
    kt_tol_of(&kt_tol_relative, dt, &rtol, &atol);
    return rtol;
}

static tg_tensor *make(const double *v, int i, tg_dtype dt)
{
    return kt_tensor(v, SHAPES[i], NDIMS[i], dt);
}

Test(foreach_norm, every_ord_both_dtypes)
{
    const struct {
        double ord;
        const double *f64, *f32;
    } cs[] = {
        { 2, fx_fn_f64_2, fx_fn_f32_2 },
        { 1, fx_fn_f64_1, fx_fn_f32_1 },
        { INFINITY, fx_fn_f64_inf, fx_fn_f32_inf },
        { -INFINITY, fx_fn_f64_ninf, fx_fn_f32_ninf },
        { 0, fx_fn_f64_0, fx_fn_f32_0 },
        { 3, fx_fn_f64_3, fx_fn_f32_3 },
    };
    const tg_dtype dts[2] = { TG_FLOAT64, TG_FLOAT32 };
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        tg_tensor *xs[3];
        for (int i = 0; i < 3; i++) xs[i] = make(XS[i], i, dts[k]);
        /* the third as a transposed view: the norm ignores the layout */
        tg_tensor *xt = tg_transpose(xs[2], 0, 2);
        tg_tensor *list[3] = { xs[0], xs[1], xt };
        for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
            tg_tensor_list in = { list, 3 };
            tg_tensor_list r = tg__foreach_norm(in, .ord = cs[c].ord);
            cr_assert(r.data, "ord %g: %s", cs[c].ord, tg_last_error());
            cr_assert_eq(r.len, 3);
            const double *want = k == 0 ? cs[c].f64 : cs[c].f32;
            for (int i = 0; i < 3; i++) {
                char what[64];
                snprintf(what, sizeof what, "ord %g tensor %d %s", cs[c].ord, i,
                         tg_dtype_name(dts[k]));
                cr_expect_eq(tg_tensor_dim(r.data[i]), 0);
                cr_expect_eq(tg_tensor_dtype(r.data[i]), dts[k]);
                kt_assert_close(r.data[i], want + i, 1, relative_bound(dts[k]), 0, what);
            }
            tg_tensor_list_release(r);
        }
        tg_release(xt);
        for (int i = 0; i < 3; i++) tg_release(xs[i]);
        kt_assert_no_leak(base);
    }
}

Test(foreach_norm, errors)
{
    kt_live base = kt_live_now();
    tg_tensor_list none = { NULL, 0 };
    tg_tensor_list r = tg__foreach_norm(none);
    cr_expect_null(r.data);
    kt_assert_error("_foreach_norm: Tensor list must have at least one tensor.");
    tg_tensor *il = tg_ones(TG_INTS(3), .dtype = TG_INT64);
    tg_tensor *l1[1] = { il };
    tg_tensor_list in1 = { l1, 1 };
    r = tg__foreach_norm(in1);
    cr_expect_null(r.data);
    kt_assert_error(
        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long");
    tg_tensor *e = tg_empty(TG_INTS(0));
    tg_tensor *l2[1] = { e };
    tg_tensor_list in2 = { l2, 1 };
    r = tg__foreach_norm(in2, .ord = INFINITY);
    cr_expect_null(r.data);
    kt_assert_error("linalg.vector_norm cannot compute the inf norm on an empty tensor because "
                    "the operation does not have an identity");
    /* the 2-norm of an empty tensor is 0 */
    r = tg__foreach_norm(in2);
    cr_assert(r.data, "%s", tg_last_error());
    kt_assert_close(r.data[0], (const double[]){ 0 }, 1, 0, 0, "empty");
    tg_tensor_list_release(r);
    kt_release_all(e, il);
    kt_assert_no_leak(base);
}

Test(clip_grad_norm, matches_torch)
{
    const struct {
        const char *name;
        double max_norm, norm_type;
        const double *f64_total, *f64_g, *f32_total, *f32_g;
    } cs[] = {
        { "norm 2, clipping", 1.0, 2, fx_clip_f64_n2_clip_total, fx_clip_f64_n2_clip_g,
          fx_clip_f32_n2_clip_total, fx_clip_f32_n2_clip_g },
        { "norm 2, not clipping", 100.0, 2, fx_clip_f64_n2_keep_total, fx_clip_f64_n2_keep_g,
          fx_clip_f32_n2_keep_total, fx_clip_f32_n2_keep_g },
        { "norm inf, clipping", 0.5, INFINITY, fx_clip_f64_inf_clip_total, fx_clip_f64_inf_clip_g,
          fx_clip_f32_inf_clip_total, fx_clip_f32_inf_clip_g },
        { "norm 1, clipping", 2.0, 1, fx_clip_f64_n1_clip_total, fx_clip_f64_n1_clip_g,
          fx_clip_f32_n1_clip_total, fx_clip_f32_n1_clip_g },
    };
    const tg_dtype dts[2] = { TG_FLOAT64, TG_FLOAT32 };
    for (int k = 0; k < 2; k++) {
        kt_live base = kt_live_now();
        for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
            /* three parameters with gradients and one without (skipped) */
            tg_tensor *ps[4];
            for (int i = 0; i < 3; i++) {
                ps[i] = make(XS[i], i, dts[k]);
                tg_tensor_set_requires_grad(ps[i], true);
                tg_tensor *g = make(GS[i], i, dts[k]);
                tg_tensor_set_grad(ps[i], g);
                tg_release(g);
            }
            ps[3] = tg_tensor_set_requires_grad(tg_ones(TG_INTS(2)), true);
            double total = tg_clip_grad_norm_(ps, 4, cs[c].max_norm, cs[c].norm_type);
            cr_assert(total >= 0, "%s: %s", cs[c].name, tg_last_error());
            double want = (k == 0 ? cs[c].f64_total : cs[c].f32_total)[0];
            cr_expect(fabs(total - want) <= relative_bound(dts[k]) * want,
                      "%s: total %.17g, want %.17g", cs[c].name, total, want);
            const double *wg = k == 0 ? cs[c].f64_g : cs[c].f32_g;
            for (int i = 0, off = 0; i < 3; off += (int)NUMELS[i], i++) {
                tg_tensor *g = tg_tensor_grad(ps[i]);
                kt_assert_close(g, wg + off, NUMELS[i], relative_bound(dts[k]), 1e-15, cs[c].name);
                tg_release(g);
            }
            tg_tensor *g3 = tg_tensor_grad(ps[3]);
            cr_expect_null(g3);
            for (int i = 0; i < 4; i++) tg_release(ps[i]);
        }
        kt_assert_no_leak(base);
    }
    /* no gradient at all: 0, nothing touched */
    tg_tensor *p = tg_ones(TG_INTS(2));
    cr_expect_eq(tg_clip_grad_norm_(&p, 1, 1.0, 2), 0);
    cr_expect_eq(tg_clip_grad_norm_(NULL, 0, 1.0, 2), 0);
    tg_release(p);
    /* errors: a NULL parameter */
    tg_tensor *bad[1] = { NULL };
    cr_expect_eq(tg_clip_grad_norm_(bad, 1, 1.0, 2), -1);
    kt_assert_error("clip_grad_norm_: parameter 0 is NULL");
}

/* adam_step_ with decoupled_weight_decay (AdamW) over five steps of three tensors. */
Test(clip_grad_norm, adamw_five_steps_match_torch_optim_adamw)
{
    const tg_dtype dts[2] = { TG_FLOAT64, TG_FLOAT32 };
    const double *want[2][2] = { { fx_adamw_f64_plain, fx_adamw_f64_ams },
                                 { fx_adamw_f32_plain, fx_adamw_f32_ams } };
    for (int k = 0; k < 2; k++) {
        for (int ams = 0; ams < 2; ams++) {
            kt_live base = kt_live_now();
            tg_tensor *p[3], *m[3], *v[3], *vmax[3];
            for (int i = 0; i < 3; i++) {
                p[i] = make(PS[i], i, dts[k]);
                tg_int_list size = { .len = NDIMS[i], .data = SHAPES[i] };
                m[i] = tg_zeros(size, .dtype = dts[k]);
                v[i] = tg_zeros(size, .dtype = dts[k]);
                vmax[i] = tg_zeros(size, .dtype = dts[k]);
            }
            for (int s = 0; s < STEPS; s++) {
                for (int i = 0, off = 0; i < 3; off += (int)NUMELS[i], i++) {
                    tg_tensor *g = make(fx_adamw_grads + s * TOTAL + off, i, dts[k]);
                    tg_tensor *r = NULL;
                    TG_NO_GRAD {
                        r = tg_adam_step_(p[i], g, m[i], v[i], vmax[i], s + 1, .lr = 1e-3,
                                          .weight_decay = 0.1, .amsgrad = ams,
                                          .decoupled_weight_decay = true);
                    }
                    cr_assert_eq(r, p[i], "%s", tg_last_error());
                    kt_release_all(r, g);
                    char what[96];
                    snprintf(what, sizeof what, "AdamW %s%s step %d tensor %d",
                             tg_dtype_name(dts[k]), ams ? " amsgrad" : "", s + 1, i);
                    const double *w = want[k][ams] + s * TOTAL + off;
                    if (k == 0) kt_assert_close(p[i], w, NUMELS[i], 1e-12, 1e-14, what);
                    else kt_assert_close(p[i], w, NUMELS[i], 1e-5, 1e-6, what);
                }
            }
            for (int i = 0; i < 3; i++) {
                kt_release_all(p[i], m[i], v[i], vmax[i]);
            }
            kt_assert_no_leak(base);
        }
    }
}
