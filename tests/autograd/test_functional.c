/* The functional transforms (tg_functional.h, kernels/composite/functional.c) against
 * PyTorch 1.13's torch.autograd.functional and torch.autograd.forward_ad
 * (tests/fixtures/functional_fixtures.h, from tests/fixtures/gen_functional.py), on three small
 * compositions written here as the generator writes them: an MLP (linear-tanh-linear, two
 * outputs, and its cross-entropy loss; a relu variant for jvp), a softmax cross-entropy, and a
 * GPT block (layer_norm, a GELU MLP, the residual) and its mean-square loss. Checked: jvp
 * (forward mode), vjp, jacobian with both strategies (and their agreement), hessian with both
 * outer strategies (and its symmetry), hvp (forward-over-reverse) and vhp, create_graph
 * composing with tg_grad, inputs f does not use, PyTorch's messages for bad arguments, f's own
 * failures, and that no tensor or storage is left behind on any path.
 *
 * Metric: float64 throughout, |got - want| <= 1e-12 + 1e-9 |want| (the same arithmetic
 * in another order: matrix products by OpenBLAS, reductions by another tree). */
#include "kt_util.h"
#include "../fixtures/functional_fixtures.h"
#include "tg_functional.h"

static const double RTOL = 1e-9, ATOL = 1e-12;

/* ------------------------------------------------------------------ the functions */

typedef struct problem {
    int n;
    int64_t shapes[6][3];
    int64_t ndims[6];
} problem;

static const problem MLP = { 5, { { 4, 5 }, { 6, 5 }, { 6 }, { 3, 6 }, { 3 } }, { 2, 2, 1, 2, 1 } };
static const problem CE = { 1, { { 3, 4 } }, { 2 } };
static const problem BLOCK = { 6,
                               { { 2, 3, 4 }, { 4 }, { 4 }, { 8, 4 }, { 8 }, { 4, 8 } },
                               { 3, 1, 1, 2, 1, 2 } };

static int64_t numel_of(const problem *p, int i)
{
    int64_t n = 1;
    for (int d = 0; d < p->ndims[i]; d++) n *= p->shapes[i][d];
    return n;
}

/* The inputs of p from fixture arrays (new references, no scope). */
static void make_inputs(const problem *p, const double *const *vals, tg_tensor **out)
{
    for (int i = 0; i < p->n; i++)
        out[i] = kt_tensor(vals[i], p->shapes[i], p->ndims[i], TG_FLOAT64);
}

static int ret1(tg_tensor **out, tg_tensor *t)
{
    out[0] = t;
    return t ? 1 : -1;
}

/* (logits, h): h = tanh(linear(x, W1, b1)), logits = linear(h, W2, b2). */
static int f_mlp(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)ctx;
    (void)max;
    tg_tensor *const *a = in.data;
    tg_tensor *h = tg_tanh(tg_linear(a[0], a[1], .bias = a[2]));
    out[0] = tg_linear(h, a[3], .bias = a[4]);
    out[1] = h;
    return out[0] ? 2 : -1;
}

static int f_mlp_relu(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)ctx;
    (void)max;
    tg_tensor *const *a = in.data;
    return ret1(out, tg_linear(tg_relu(tg_linear(a[0], a[1], .bias = a[2])), a[3], .bias = a[4]));
}

/* cross_entropy(logits of f_mlp, target); ctx is the int64 target. */
static int f_mlp_loss(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    tg_tensor *o[2];
    if (f_mlp(NULL, in, o, max) < 0) return -1;
    return ret1(out, tg_cross_entropy(o[0], ctx));
}

static int f_ce(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)max;
    return ret1(out, tg_cross_entropy(in.data[0], ctx));
}

/* x + linear(gelu(linear(layer_norm(x, [4], w, b), W1, b1)), W2) */
static tg_tensor *block(tg_tensor *const *a)
{
    tg_tensor *h = tg_layer_norm(a[0], TG_INTS(4), .weight = a[1], .bias = a[2]);
    tg_tensor *g = tg_gelu(tg_linear(h, a[3], .bias = a[4]));
    return tg_add(a[0], tg_linear(g, a[5]));
}

/* ctx: NULL for the whole block's inputs; else the block's inputs, of which `in` replaces the
 * first in.len (hessian w.r.t. x and w only). */
static int f_block(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)max;
    tg_tensor *a[6];
    for (int i = 0; i < 6; i++) a[i] = i < in.len ? in.data[i] : ((tg_tensor **)ctx)[i];
    return ret1(out, block(a));
}

static int f_block_loss(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    tg_tensor *o[1];
    if (f_block(ctx, in, o, max) < 0) return -1;
    return ret1(out, tg_mean(tg_mul(o[0], o[0])));
}

/* ------------------------------------------------------------------ checks */

static void expect_list(tg_tensor_list l, const double *const *want, const int64_t *numels, int n,
                        const char *what)
{
    cr_assert(l.data, "%s: %s", what, tg_last_error());
    cr_assert_eq(l.len, n, "%s: %lld tensors, expected %d", what, (long long)l.len, n);
    for (int i = 0; i < n; i++) {
        char w[64];
        snprintf(w, sizeof w, "%s[%d]", what, i);
        cr_assert(!tg_tensor_requires_grad(l.data[i]), "%s: requires grad without create_graph", w);
        kt_assert_close(l.data[i], want[i], numels[i], RTOL, ATOL, w);
    }
}

/* Every element of a against b (same numel). */
static void expect_same(tg_tensor *a, tg_tensor *b, double rtol, const char *what)
{
    double *w = kt_values(b);
    kt_assert_close(a, w, tg_tensor_numel(b), rtol, 1e-12, what);
    free(w);
}

static void numels(const problem *p, int64_t *out)
{
    for (int i = 0; i < p->n; i++) out[i] = numel_of(p, i);
}

static const double *const MLP_IN[] = { fx_mlp_in0, fx_mlp_in1, fx_mlp_in2, fx_mlp_in3,
                                        fx_mlp_in4 };
static const double *const MLP_TAN[] = { fx_mlp_tan0, fx_mlp_tan1, fx_mlp_tan2, fx_mlp_tan3,
                                         fx_mlp_tan4 };
static const double *const MLP_HV[] = { fx_mlp_hv0, fx_mlp_hv1, fx_mlp_hv2, fx_mlp_hv3,
                                        fx_mlp_hv4 };
static const double *const BLOCK_IN[] = { fx_block_in0, fx_block_in1, fx_block_in2,
                                          fx_block_in3, fx_block_in4, fx_block_in5 };
static const double *const BLOCK_TAN[] = { fx_block_tan0, fx_block_tan1, fx_block_tan2,
                                           fx_block_tan3, fx_block_tan4, fx_block_tan5 };
static const double *const BLOCK_HV[] = { fx_block_hv0, fx_block_hv1, fx_block_hv2,
                                          fx_block_hv3, fx_block_hv4, fx_block_hv5 };

static tg_tensor *target(const int64_t *v, int64_t n)
{
    return tg_tensor_from_data(v, &n, 1, TG_INT64);
}

/* ------------------------------------------------------------------ jvp */

Test(functional, jvp_mlp_forward_mode_matches_forward_ad)
{
    kt_live base = kt_live_now();
    tg_tensor *x[5], *t[5];
    make_inputs(&MLP, MLP_IN, x);
    make_inputs(&MLP, MLP_TAN, t);
    tg_tensor_list outs, jvp; /* no scope open: the caller owns the lists */
    cr_assert_eq(
        tg_jvp(f_mlp, NULL, ((tg_tensor_list){ x, 5 }), ((tg_tensor_list){ t, 5 }), &outs, &jvp), 0,
        "%s", tg_last_error());
    expect_list(outs, (const double *const[]){ fx_mlp_out0, fx_mlp_out1 }, (int64_t[]){ 12, 24 }, 2,
                "outputs");
    expect_list(jvp, (const double *const[]){ fx_mlp_jvp0, fx_mlp_jvp1 }, (int64_t[]){ 12, 24 }, 2,
                "jvp");
    tg_tensor_list_release(outs);
    tg_tensor_list_release(jvp);
    /* relu, and outputs not asked for */
    cr_assert_eq(tg_jvp(f_mlp_relu, NULL, ((tg_tensor_list){ x, 5 }), ((tg_tensor_list){ t, 5 }),
                        NULL, &jvp),
                 0, "%s", tg_last_error());
    expect_list(jvp, (const double *const[]){ fx_mlp_relu_jvp }, (int64_t[]){ 12 }, 1, "relu jvp");
    tg_tensor_list_release(jvp);
    kt_release_n(x, 5);
    kt_release_n(t, 5);
    kt_assert_no_leak(base);
}

Test(functional, jvp_ce_and_block)
{
    kt_live base = kt_live_now();
    tg_tensor *y = target((int64_t[]){ 1, 0, 3 }, 3), *x[6], *t[6];
    make_inputs(&CE, (const double *const[]){ fx_ce_in0 }, x);
    make_inputs(&CE, (const double *const[]){ fx_ce_tan0 }, t);
    tg_scope_begin(); /* with a scope: the scope owns the lists */
    tg_tensor_list outs, jvp;
    cr_assert_eq(
        tg_jvp(f_ce, y, ((tg_tensor_list){ x, 1 }), ((tg_tensor_list){ t, 1 }), &outs, &jvp), 0,
        "%s", tg_last_error());
    expect_list(outs, (const double *const[]){ fx_ce_out }, (int64_t[]){ 1 }, 1, "ce out");
    expect_list(jvp, (const double *const[]){ fx_ce_jvp }, (int64_t[]){ 1 }, 1, "ce jvp");
    tg_scope_end();
    kt_release_n(x, 1);
    kt_release_n(t, 1);

    make_inputs(&BLOCK, BLOCK_IN, x);
    make_inputs(&BLOCK, BLOCK_TAN, t);
    tg_scope_begin();
    cr_assert_eq(
        tg_jvp(f_block, NULL, ((tg_tensor_list){ x, 6 }), ((tg_tensor_list){ t, 6 }), &outs, &jvp),
        0, "%s", tg_last_error());
    expect_list(outs, (const double *const[]){ fx_block_out }, (int64_t[]){ 24 }, 1, "block out");
    expect_list(jvp, (const double *const[]){ fx_block_jvp }, (int64_t[]){ 24 }, 1, "block jvp");
    tg_scope_end();
    kt_release_n(x, 6);
    kt_release_n(t, 6);
    tg_release(y);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ vjp */

Test(functional, vjp_mlp_ce_block)
{
    kt_live base = kt_live_now();
    tg_tensor *x[6], *v[2];
    int64_t n[6];
    make_inputs(&MLP, MLP_IN, x);
    v[0] = kt_tensor(fx_mlp_v0, (int64_t[]){ 4, 3 }, 2, TG_FLOAT64);
    v[1] = kt_tensor(fx_mlp_v1, (int64_t[]){ 4, 6 }, 2, TG_FLOAT64);
    tg_scope_begin();
    tg_tensor_list outs, vjp;
    cr_assert_eq(
        tg_vjp(f_mlp, NULL, ((tg_tensor_list){ x, 5 }), ((tg_tensor_list){ v, 2 }), &outs, &vjp), 0,
        "%s", tg_last_error());
    numels(&MLP, n);
    expect_list(outs, (const double *const[]){ fx_mlp_out0, fx_mlp_out1 }, (int64_t[]){ 12, 24 }, 2,
                "outputs");
    expect_list(
        vjp,
        (const double *const[]){ fx_mlp_vjp0, fx_mlp_vjp1, fx_mlp_vjp2, fx_mlp_vjp3, fx_mlp_vjp4 },
        n, 5, "vjp");
    cr_expect(!tg_tensor_requires_grad(x[0]) && !tg_tensor_grad(x[1]), "the inputs are untouched");
    tg_scope_end();
    kt_release_n(x, 5);
    kt_release_n(v, 2);

    /* v empty for a scalar output: PyTorch's v=None */
    tg_tensor *y = target((int64_t[]){ 1, 0, 3 }, 3);
    make_inputs(&CE, (const double *const[]){ fx_ce_in0 }, x);
    tg_scope_begin();
    cr_assert_eq(
        tg_vjp(f_ce, y, ((tg_tensor_list){ x, 1 }), ((tg_tensor_list){ NULL, 0 }), NULL, &vjp), 0,
        "%s", tg_last_error());
    expect_list(vjp, (const double *const[]){ fx_ce_grad }, (int64_t[]){ 12 }, 1, "ce grad");
    tg_scope_end();
    kt_release_n(x, 1);
    tg_release(y);

    make_inputs(&BLOCK, BLOCK_IN, x);
    v[0] = kt_tensor(fx_block_v0, (int64_t[]){ 2, 3, 4 }, 3, TG_FLOAT64);
    tg_scope_begin();
    cr_assert_eq(
        tg_vjp(f_block, NULL, ((tg_tensor_list){ x, 6 }), ((tg_tensor_list){ v, 1 }), NULL, &vjp),
        0, "%s", tg_last_error());
    numels(&BLOCK, n);
    expect_list(vjp,
                (const double *const[]){ fx_block_vjp0, fx_block_vjp1, fx_block_vjp2, fx_block_vjp3,
                                         fx_block_vjp4, fx_block_vjp5 },
                n, 6, "block vjp");
    tg_scope_end();
    kt_release_n(x, 6);
    tg_release(v[0]);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ jacobian */

static const double *mlp_jac(int i, int j)
{
    static const double *const J[2][5] = {
        { fx_mlp_jac_0_0, fx_mlp_jac_0_1, fx_mlp_jac_0_2, fx_mlp_jac_0_3, fx_mlp_jac_0_4 },
        { fx_mlp_jac_1_0, fx_mlp_jac_1_1, fx_mlp_jac_1_2, fx_mlp_jac_1_3, fx_mlp_jac_1_4 },
    };
    return J[i][j];
}

Test(functional, jacobian_mlp_both_strategies)
{
    kt_live base = kt_live_now();
    tg_tensor *x[5];
    make_inputs(&MLP, MLP_IN, x);
    const int64_t out_shape[2][2] = { { 4, 3 }, { 4, 6 } };
    tg_tensor_list jac[2];
    for (int s = 0; s < 2; s++) {
        int n = tg_jacobian(f_mlp, NULL, ((tg_tensor_list){ x, 5 }), &jac[s],
                            .strategy = s ? TG_FORWARD_MODE : TG_REVERSE_MODE);
        cr_assert_eq(n, 2, "strategy %d: %s", s, tg_last_error());
        cr_assert_eq(jac[s].len, 10);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 5; j++) {
                tg_tensor *b = jac[s].data[i * 5 + j];
                int64_t shape[4] = { out_shape[i][0], out_shape[i][1] };
                for (int d = 0; d < MLP.ndims[j]; d++) shape[2 + d] = MLP.shapes[j][d];
                kt_assert_shape(b, shape, 2 + MLP.ndims[j]);
                char what[64];
                snprintf(what, sizeof what, "strategy %d block [%d][%d]", s, i, j);
                kt_assert_close(b, mlp_jac(i, j), tg_tensor_numel(b), RTOL, ATOL, what);
            }
    }
    for (int b = 0; b < 10; b++) expect_same(jac[1].data[b], jac[0].data[b], 1e-12, "agree");
    tg_tensor_list_release(jac[0]);
    tg_tensor_list_release(jac[1]);
    kt_release_n(x, 5);
    kt_assert_no_leak(base);
}

Test(functional, jacobian_block_both_strategies)
{
    kt_live base = kt_live_now();
    tg_tensor *x[6];
    make_inputs(&BLOCK, BLOCK_IN, x);
    tg_scope_begin();
    for (int s = 0; s < 2; s++) {
        tg_tensor_list jac;
        cr_assert_eq(tg_jacobian(f_block, x, ((tg_tensor_list){ x, 1 }), &jac,
                                 .strategy = s ? TG_FORWARD_MODE : TG_REVERSE_MODE),
                     1, "%s", tg_last_error());
        kt_assert_shape(jac.data[0], (int64_t[]){ 2, 3, 4, 2, 3, 4 }, 6);
        kt_assert_close(jac.data[0], fx_block_jac_x, 576, RTOL, ATOL, "block jacobian");
    }
    tg_scope_end();
    kt_release_n(x, 6);
    kt_assert_no_leak(base);
}

/* f(x, unused) = 2x: the blocks of the unused input are zeros, with both strategies; so is its
 * vjp, and its jvp contributes nothing. */
static int f_ignores_second(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)ctx;
    (void)max;
    return ret1(out, tg_mul_scalar(in.data[0], 2.0));
}

Test(functional, unused_input_gives_zeros)
{
    kt_live base = kt_live_now();
    double xv[3] = { 1, 2, 3 }, uv[2] = { 4, 5 };
    tg_tensor *in[2] = { kt_tensor(xv, (int64_t[]){ 3 }, 1, TG_FLOAT64),
                         kt_tensor(uv, (int64_t[]){ 2 }, 1, TG_FLOAT64) };
    tg_scope_begin();
    for (int s = 0; s < 2; s++) {
        tg_tensor_list jac;
        cr_assert_eq(tg_jacobian(f_ignores_second, NULL, ((tg_tensor_list){ in, 2 }), &jac,
                                 .strategy = s ? TG_FORWARD_MODE : TG_REVERSE_MODE),
                     1, "%s", tg_last_error());
        kt_assert_close(jac.data[0], (double[]){ 2, 0, 0, 0, 2, 0, 0, 0, 2 }, 9, 0, 0, "d/dx");
        kt_assert_shape(jac.data[1], (int64_t[]){ 3, 2 }, 2);
        kt_assert_close(jac.data[1], (double[]){ 0, 0, 0, 0, 0, 0 }, 6, 0, 0, "d/du");
    }
    tg_tensor_list vjp, jvp;
    tg_tensor *v[1] = { kt_tensor(xv, (int64_t[]){ 3 }, 1, TG_FLOAT64) }; /* the scope's */
    cr_assert_eq(tg_vjp(f_ignores_second, NULL, ((tg_tensor_list){ in, 2 }),
                        ((tg_tensor_list){ v, 1 }), NULL, &vjp),
                 0, "%s", tg_last_error());
    kt_assert_close(vjp.data[1], (double[]){ 0, 0 }, 2, 0, 0, "vjp of the unused input");
    cr_assert_eq(tg_jvp(f_ignores_second, NULL, ((tg_tensor_list){ in, 2 }),
                        ((tg_tensor_list){ in, 2 }), NULL, &jvp),
                 0, "%s", tg_last_error());
    kt_assert_close(jvp.data[0], (double[]){ 2, 4, 6 }, 3, 0, 0, "jvp");
    tg_scope_end();
    kt_release_n(in, 2);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ hessian */

static const double *mlp_hess(int i, int j)
{
    static const double *const H[5][5] = {
        { fx_mlp_hess_0_0, fx_mlp_hess_0_1, fx_mlp_hess_0_2, fx_mlp_hess_0_3, fx_mlp_hess_0_4 },
        { fx_mlp_hess_1_0, fx_mlp_hess_1_1, fx_mlp_hess_1_2, fx_mlp_hess_1_3, fx_mlp_hess_1_4 },
        { fx_mlp_hess_2_0, fx_mlp_hess_2_1, fx_mlp_hess_2_2, fx_mlp_hess_2_3, fx_mlp_hess_2_4 },
        { fx_mlp_hess_3_0, fx_mlp_hess_3_1, fx_mlp_hess_3_2, fx_mlp_hess_3_3, fx_mlp_hess_3_4 },
        { fx_mlp_hess_4_0, fx_mlp_hess_4_1, fx_mlp_hess_4_2, fx_mlp_hess_4_3, fx_mlp_hess_4_4 },
    };
    return H[i][j];
}

/* Block [i][j] of the Hessian equals block [j][i] with its input dimensions swapped. */
static void expect_symmetric(tg_tensor_list h, const problem *p)
{
    for (int i = 0; i < p->n; i++)
        for (int j = 0; j < p->n; j++) {
            int64_t ni = numel_of(p, i), nj = numel_of(p, j);
            tg_tensor *a = tg_reshape(h.data[i * p->n + j], TG_INTS(ni, nj));
            tg_tensor *b = tg_transpose(tg_reshape(h.data[j * p->n + i], TG_INTS(nj, ni)), 0, 1);
            expect_same(a, b, 1e-10, "symmetric");
        }
}

Test(functional, hessian_mlp_loss_both_outer_strategies)
{
    kt_live base = kt_live_now();
    tg_tensor *x[5], *y = target((int64_t[]){ 0, 2, 1, 2 }, 4);
    make_inputs(&MLP, MLP_IN, x);
    tg_scope_begin();
    tg_tensor_list h[2];
    for (int s = 0; s < 2; s++) {
        cr_assert_eq(tg_hessian(f_mlp_loss, y, ((tg_tensor_list){ x, 5 }), &h[s],
                                .outer = s ? TG_FORWARD_MODE : TG_REVERSE_MODE),
                     0, "outer %d: %s", s, tg_last_error());
        cr_assert_eq(h[s].len, 25);
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++) {
                tg_tensor *b = h[s].data[i * 5 + j];
                int64_t shape[4];
                int nd = 0;
                for (int d = 0; d < MLP.ndims[i]; d++) shape[nd++] = MLP.shapes[i][d];
                for (int d = 0; d < MLP.ndims[j]; d++) shape[nd++] = MLP.shapes[j][d];
                kt_assert_shape(b, shape, nd);
                char what[64];
                snprintf(what, sizeof what, "outer %d block [%d][%d]", s, i, j);
                kt_assert_close(b, mlp_hess(i, j), tg_tensor_numel(b), RTOL, ATOL, what);
            }
        expect_symmetric(h[s], &MLP);
    }
    tg_scope_end();
    kt_release_n(x, 5);
    tg_release(y);
    kt_assert_no_leak(base);
}

Test(functional, hessian_ce_and_block)
{
    kt_live base = kt_live_now();
    tg_tensor *x[6], *y = target((int64_t[]){ 1, 0, 3 }, 3);
    make_inputs(&CE, (const double *const[]){ fx_ce_in0 }, x);
    tg_scope_begin();
    for (int s = 0; s < 2; s++) {
        tg_tensor_list h;
        cr_assert_eq(tg_hessian(f_ce, y, ((tg_tensor_list){ x, 1 }), &h,
                                .outer = s ? TG_FORWARD_MODE : TG_REVERSE_MODE),
                     0, "%s", tg_last_error());
        kt_assert_shape(h.data[0], (int64_t[]){ 3, 4, 3, 4 }, 4);
        kt_assert_close(h.data[0], fx_ce_hess, 144, RTOL, ATOL, "ce hessian");
        expect_symmetric(h, &CE);
    }
    tg_scope_end();
    kt_release_n(x, 1);
    tg_release(y);

    /* the block's loss w.r.t. (x, layer-norm weight), the rest fixed through ctx */
    make_inputs(&BLOCK, BLOCK_IN, x);
    const problem XW = { 2, { { 2, 3, 4 }, { 4 } }, { 3, 1 } };
    const double *want[4] = { fx_block_hess_0_0, fx_block_hess_0_1, fx_block_hess_1_0,
                              fx_block_hess_1_1 };
    tg_scope_begin();
    for (int s = 0; s < 2; s++) {
        tg_tensor_list h;
        cr_assert_eq(tg_hessian(f_block_loss, x, ((tg_tensor_list){ x, 2 }), &h,
                                .outer = s ? TG_FORWARD_MODE : TG_REVERSE_MODE),
                     0, "%s", tg_last_error());
        for (int b = 0; b < 4; b++)
            kt_assert_close(h.data[b], want[b], tg_tensor_numel(h.data[b]), RTOL, ATOL,
                            "block hessian");
        expect_symmetric(h, &XW);
    }
    tg_scope_end();
    kt_release_n(x, 6);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ hvp, vhp */

Test(functional, hvp_forward_over_reverse_and_vhp)
{
    kt_live base = kt_live_now();
    tg_tensor *x[6], *v[6], *y = target((int64_t[]){ 0, 2, 1, 2 }, 4);
    int64_t n[6];
    make_inputs(&MLP, MLP_IN, x);
    make_inputs(&MLP, MLP_HV, v);
    numels(&MLP, n);
    tg_tensor *value;
    tg_tensor_list hvp, vhp; /* no scope: owned by the caller */
    cr_assert_eq(
        tg_hvp(f_mlp_loss, y, ((tg_tensor_list){ x, 5 }), ((tg_tensor_list){ v, 5 }), &value, &hvp),
        0, "%s", tg_last_error());
    kt_assert_close(value, fx_mlp_loss, 1, RTOL, ATOL, "loss");
    expect_list(
        hvp,
        (const double *const[]){ fx_mlp_hvp0, fx_mlp_hvp1, fx_mlp_hvp2, fx_mlp_hvp3, fx_mlp_hvp4 },
        n, 5, "hvp");
    tg_release(value);
    tg_tensor_list_release(hvp);
    cr_assert_eq(
        tg_vhp(f_mlp_loss, y, ((tg_tensor_list){ x, 5 }), ((tg_tensor_list){ v, 5 }), NULL, &vhp),
        0, "%s", tg_last_error());
    expect_list(
        vhp,
        (const double *const[]){ fx_mlp_vhp0, fx_mlp_vhp1, fx_mlp_vhp2, fx_mlp_vhp3, fx_mlp_vhp4 },
        n, 5, "vhp");
    tg_tensor_list_release(vhp);
    kt_release_n(x, 5);
    kt_release_n(v, 5);
    tg_release(y);

    make_inputs(&BLOCK, BLOCK_IN, x);
    make_inputs(&BLOCK, BLOCK_HV, v);
    numels(&BLOCK, n);
    tg_scope_begin();
    cr_assert_eq(tg_hvp(f_block_loss, NULL, ((tg_tensor_list){ x, 6 }), ((tg_tensor_list){ v, 6 }),
                        &value, &hvp),
                 0, "%s", tg_last_error());
    kt_assert_close(value, fx_block_loss, 1, RTOL, ATOL, "block loss");
    expect_list(hvp,
                (const double *const[]){ fx_block_hvp0, fx_block_hvp1, fx_block_hvp2, fx_block_hvp3,
                                         fx_block_hvp4, fx_block_hvp5 },
                n, 6, "block hvp");
    tg_scope_end();
    kt_release_n(x, 6);
    kt_release_n(v, 6);

    y = target((int64_t[]){ 1, 0, 3 }, 3);
    make_inputs(&CE, (const double *const[]){ fx_ce_in0 }, x);
    make_inputs(&CE, (const double *const[]){ fx_ce_tan0 }, v);
    tg_scope_begin();
    cr_assert_eq(
        tg_hvp(f_ce, y, ((tg_tensor_list){ x, 1 }), ((tg_tensor_list){ v, 1 }), NULL, &hvp), 0,
        "%s", tg_last_error());
    expect_list(hvp, (const double *const[]){ fx_ce_hvp }, (int64_t[]){ 12 }, 1, "ce hvp");
    tg_scope_end();
    kt_release_n(x, 1);
    kt_release_n(v, 1);
    tg_release(y);
    kt_assert_no_leak(base);
}

/* mean(mlp_relu(...)^2): forward-over-reverse through relu, whose input's tangent has history
 * (it comes from linear's tangent of leaves that require grad). */
static int f_mlp_relu_sq(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    tg_tensor *o[1];
    if (f_mlp_relu(ctx, in, o, max) < 0) return -1;
    return ret1(out, tg_mean(tg_mul(o[0], o[0])));
}

Test(functional, hvp_through_relu)
{
    kt_live base = kt_live_now();
    tg_tensor *x[5], *v[5];
    int64_t n[5];
    make_inputs(&MLP, MLP_IN, x);
    make_inputs(&MLP, MLP_HV, v);
    numels(&MLP, n);
    tg_tensor_list hvp;
    cr_assert_eq(tg_hvp(f_mlp_relu_sq, NULL, ((tg_tensor_list){ x, 5 }), ((tg_tensor_list){ v, 5 }),
                        NULL, &hvp),
                 0, "%s", tg_last_error());
    expect_list(hvp,
                (const double *const[]){ fx_mlp_relu_sq_hvp0, fx_mlp_relu_sq_hvp1,
                                         fx_mlp_relu_sq_hvp2, fx_mlp_relu_sq_hvp3,
                                         fx_mlp_relu_sq_hvp4 },
                n, 5, "relu hvp");
    tg_tensor_list_release(hvp);
    kt_release_n(x, 5);
    kt_release_n(v, 5);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ create_graph */

/* vjp with create_graph of the cross-entropy is its gradient g(x), with history: the gradient
 * of sum(g * t) is then H t, PyTorch's hvp. And jvp with create_graph: the product can be
 * differentiated (d/dx of sum(jvp) = H t for a scalar function, by symmetry). */
Test(functional, create_graph_composes_with_grad)
{
    kt_live base = kt_live_now();
    tg_tensor *y = target((int64_t[]){ 1, 0, 3 }, 3), *x[1], *t[1];
    make_inputs(&CE, (const double *const[]){ fx_ce_in0 }, x);
    make_inputs(&CE, (const double *const[]){ fx_ce_tan0 }, t);
    tg_tensor_set_requires_grad(x[0], true);
    tg_scope_begin();
    tg_tensor_list g;
    cr_assert_eq(tg_vjp(f_ce, y, ((tg_tensor_list){ x, 1 }), ((tg_tensor_list){ NULL, 0 }), NULL,
                        &g, .create_graph = true),
                 0, "%s", tg_last_error());
    cr_assert(tg_tensor_requires_grad(g.data[0]));
    kt_assert_close(g.data[0], fx_ce_grad, 12, RTOL, ATOL, "grad");
    tg_tensor *ht[1];
    cr_assert_eq(
        tg_grad(TG_TENSORS(tg_sum(tg_mul(g.data[0], t[0]))), ((tg_tensor_list){ x, 1 }), ht), 0,
        "%s", tg_last_error());
    kt_assert_close(ht[0], fx_ce_hvp, 12, RTOL, ATOL, "H t by vjp(create_graph) then grad");

    tg_tensor_list jvp;
    cr_assert_eq(tg_jvp(f_ce, y, ((tg_tensor_list){ x, 1 }), ((tg_tensor_list){ t, 1 }), NULL, &jvp,
                        .create_graph = true),
                 0, "%s", tg_last_error());
    kt_assert_close(jvp.data[0], fx_ce_jvp, 1, RTOL, ATOL, "jvp");
    cr_assert(tg_tensor_requires_grad(jvp.data[0]), "jvp with create_graph has history");
    cr_assert_eq(tg_grad(TG_TENSORS(jvp.data[0]), ((tg_tensor_list){ x, 1 }), ht), 0, "%s",
                 tg_last_error());
    kt_assert_close(ht[0], fx_ce_hvp, 12, RTOL, ATOL, "H t by jvp(create_graph) then grad");
    tg_scope_end();
    kt_release_n(x, 1);
    kt_release_n(t, 1);
    tg_release(y);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ nesting */

typedef struct nest_ctx {
    tg_tensor *target, *tangent;
} nest_ctx;

/* The directional derivative of the cross-entropy along ctx->tangent, by an inner tg_jvp: its
 * own dual level inside the outer one, whose tangents its inputs and results keep. */
static int f_ce_directional(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)max;
    nest_ctx *c = ctx;
    tg_tensor_list jvp;
    if (tg_jvp(f_ce, c->target, in, TG_TENSORS(c->tangent), NULL, &jvp)) return -1;
    return ret1(out, jvp.data[0]); /* recorded in the outer transform's scope, like the list */
}

Test(functional, jvp_of_jvp_is_a_second_derivative)
{
    kt_live base = kt_live_now();
    tg_tensor *y = target((int64_t[]){ 1, 0, 3 }, 3), *x[1], *t[1];
    make_inputs(&CE, (const double *const[]){ fx_ce_in0 }, x);
    make_inputs(&CE, (const double *const[]){ fx_ce_tan0 }, t);
    nest_ctx c = { y, t[0] };
    tg_scope_begin();
    tg_tensor_list outs, jvp;
    cr_assert_eq(tg_jvp(f_ce_directional, &c, ((tg_tensor_list){ x, 1 }),
                        ((tg_tensor_list){ t, 1 }), &outs, &jvp),
                 0, "%s", tg_last_error());
    kt_assert_close(outs.data[0], fx_ce_jvp, 1, RTOL, ATOL, "inner jvp: grad . t");
    kt_assert_close(jvp.data[0], fx_ce_tHt, 1, RTOL, ATOL, "outer jvp: t^T H t");
    tg_scope_end();
    kt_release_n(x, 1);
    kt_release_n(t, 1);
    tg_release(y);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ errors */

static int f_fails(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)ctx;
    (void)max;
    out[0] = tg_exp(in.data[0]); /* made, then dropped: the transform's scope frees it */
    return tg_add(in.data[0], tg_ones(TG_INTS(7), .dtype = TG_FLOAT64)) ? 1 : -1;
}

static int f_silent(void *ctx, tg_tensor_list in, tg_tensor **out, int max)
{
    (void)ctx;
    (void)in;
    (void)out;
    (void)max;
    return -1;
}

Test(functional, errors_in_pytorch_words_and_nothing_leaks)
{
    kt_live base = kt_live_now();
    tg_tensor *x[5], *t[5], *y = target((int64_t[]){ 0, 2, 1, 2 }, 4);
    make_inputs(&MLP, MLP_IN, x);
    make_inputs(&MLP, MLP_TAN, t);
    tg_tensor_list l = { NULL, 0 }, l2 = { NULL, 0 };
    tg_tensor_list xs = { x, 5 };
    tg_tensor *value = NULL;

    cr_assert_eq(tg_jvp(f_mlp, NULL, xs, ((tg_tensor_list){ t, 4 }), NULL, &l), -1);
    kt_assert_error("jvp: v is a tuple of invalid length: should be 5 but got 4.");
    cr_assert_null(l.data);
    tg_tensor *swapped[5] = { t[0], t[3], t[2], t[1], t[4] };
    cr_assert_eq(tg_jvp(f_mlp, NULL, xs, ((tg_tensor_list){ swapped, 5 }), &l2, &l), -1);
    kt_assert_error("jvp: Entry 1 in v has invalid size: should be [6, 5] but got [3, 6].");
    cr_assert(!l.data && !l2.data);
    cr_assert_eq(tg_jvp(f_mlp, NULL, xs, ((tg_tensor_list){ NULL, 0 }), NULL, &l), -1);
    kt_assert_error(
        "jvp: The vector v can only be None if the input to the user-provided function is "
        "a single Tensor with a single element.");
    cr_assert_eq(
        tg_jvp(f_mlp, NULL, ((tg_tensor_list){ x, 1 }), ((tg_tensor_list){ t, 2 }), NULL, &l), -1);
    kt_assert_error("jvp: The given v should contain a single Tensor.");

    cr_assert_eq(tg_vjp(f_mlp, NULL, xs, ((tg_tensor_list){ NULL, 0 }), NULL, &l), -1);
    kt_assert_error("vjp: The vector v can only be None if the user-provided function returns a "
                    "single Tensor with a single element.");
    cr_assert_eq(tg_vjp(f_mlp, NULL, xs, ((tg_tensor_list){ t, 1 }), &l2, &l), -1);
    kt_assert_error("vjp: v is a tuple of invalid length: should be 2 but got 1.");
    cr_assert(!l.data && !l2.data);

    cr_assert_eq(tg_hessian(f_mlp, NULL, xs, &l), -1);
    kt_assert_error("hessian: The function given to hessian should return a single Tensor");
    cr_assert_eq(tg_hessian(f_ignores_second, NULL, xs, &l, .outer = TG_FORWARD_MODE), -1);
    kt_assert_error(
        "hessian: The Tensor returned by the function given to hessian should contain a "
        "single element");
    cr_assert_eq(tg_hvp(f_mlp_loss, y, xs, ((tg_tensor_list){ NULL, 0 }), &value, &l), -1);
    kt_assert_error(
        "hvp: The vector v can only be None if the input to the user-provided function is "
        "a single Tensor with a single element.");
    cr_assert_null(value);
    cr_assert_eq(tg_hvp(f_mlp, NULL, xs, ((tg_tensor_list){ t, 5 }), &value, &l), -1);
    kt_assert_error("hvp: The function given to hvp should return a single Tensor");
    cr_assert_eq(tg_vhp(f_mlp_relu, NULL, xs, ((tg_tensor_list){ t, 5 }), &value, &l), -1);
    kt_assert_error("vhp: The Tensor returned by the function given to vhp should contain a single "
                    "element");
    cr_assert_eq(tg_jacobian(f_mlp, NULL, xs, &l, .strategy = (tg_jacobian_strategy)7), -1);
    kt_assert_error("jacobian: Expected strategy to be either");

    /* f's own failure, with outputs made before it: the error is f's, nothing is left */
    for (int s = 0; s < 2; s++) {
        cr_assert_eq(
            tg_jacobian(f_fails, NULL, xs, &l, .strategy = s ? TG_FORWARD_MODE : TG_REVERSE_MODE),
            -1);
        kt_assert_error("add: The size of tensor a (5) must match the size of tensor b (7)");
    }
    cr_assert_eq(tg_jvp(f_fails, NULL, xs, ((tg_tensor_list){ t, 5 }), NULL, &l), -1);
    kt_assert_error("add: The size of tensor a (5)");
    cr_assert_eq(tg_hvp(f_fails, NULL, xs, ((tg_tensor_list){ t, 5 }), NULL, &l), -1);
    kt_assert_error("add: The size of tensor a (5)");
    cr_assert_eq(tg_vjp(f_silent, NULL, xs, ((tg_tensor_list){ t, 1 }), NULL, &l), -1);
    kt_assert_error("vjp: the user-provided function failed without an error");

    /* integer inputs cannot be differentiated */
    tg_tensor *yl[1] = { y };
    cr_assert_eq(
        tg_jvp(f_ce, y, ((tg_tensor_list){ yl, 1 }), ((tg_tensor_list){ yl, 1 }), NULL, &l), -1);
    kt_assert_error("jvp: input 0 has dtype int64");
    cr_assert_eq(tg_hessian(f_ce, y, ((tg_tensor_list){ NULL, 0 }), &l), -1);
    kt_assert_error("hessian: expected at least one input tensor");

    cr_assert_null(l.data);
    kt_release_n(x, 5);
    kt_release_n(t, 5);
    tg_release(y);
    kt_assert_no_leak(base);
}
