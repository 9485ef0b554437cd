/* Autograd misuse fails cleanly, with PyTorch's messages, and leaks nothing: backward twice
 * without retain_graph, an in-place edit of a saved tensor, an implicit gradient for a
 * non-scalar, in-place on a leaf, out= with requires_grad, an operator without a derivative.
 * Plus higher-order derivatives through create_graph and a 100,000-node chain built,
 * backwarded and freed (the engine and the graph's destruction must not recurse). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kt_util.h"

/* A float64 leaf requiring grad holding vals. */
static tg_tensor *leaf(const double *vals, int64_t n)
{
    tg_tensor *t = tg_tensor_from_data(vals, (int64_t[]){ n }, 1, TG_FLOAT64);
    return tg_tensor_set_requires_grad(t, true);
}

static void expect_values(const tg_tensor *t, const double *want, int64_t n, const char *what)
{
    cr_assert(t, "%s: NULL (%s)", what, tg_last_error() ? tg_last_error() : "no error");
    cr_assert_eq(tg_tensor_numel(t), n, "%s: numel", what);
    double got[16];
    tg_tensor_to_doubles(t, got, n);
    for (int64_t i = 0; i < n; i++)
        cr_expect(fabs(got[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])),
                  "%s[%lld]: %.17g, expected %.17g", what, (long long)i, got[i], want[i]);
}

static const char BACKWARD_TWICE[] =
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.";

Test(autograd_errors, backward_twice_without_retain_graph)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2, 3 }, 3);
    tg_tensor *y = tg_mul(x, x); /* MulBackward0 saves x twice */
    tg_tensor *s = tg_sum(y);
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    cr_expect_eq(tg_backward(s), -1);
    kt_expect_last_error(BACKWARD_TWICE);
    /* The first backward's gradient is intact: 2x. */
    tg_tensor *g = tg_tensor_grad(x);
    expect_values(g, (double[]){ 2, 4, 6 }, 3, "x.grad");
    kt_release_all(g, s, y, x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_errors, retain_graph_allows_a_second_backward_that_accumulates)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2, 3 }, 3);
    tg_tensor *y = tg_mul(x, x), *s = tg_sum(y);
    cr_assert_eq(tg_backward(s, .retain_graph = true), 0, "%s", tg_last_error());
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    tg_tensor *g = tg_tensor_grad(x);
    expect_values(g, (double[]){ 4, 8, 12 }, 3, "x.grad after two backwards");
    kt_release_all(g, s, y, x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_errors, inplace_modification_of_a_saved_tensor)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 0.5, 1, 1.5 }, 3);
    tg_tensor *y = tg_exp(x);            /* ExpBackward0 saves its result */
    tg_tensor *z = tg_add_scalar_(y, 1); /* y is now at version 1 */
    cr_assert(z, "%s", tg_last_error());
    tg_tensor *s = tg_sum(y);
    cr_expect_eq(tg_backward(s), -1);
    kt_expect_last_error(
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [torch.DoubleTensor [3]], which is output 0 of ExpBackward0, is "
        "at version 1; expected version 0 instead. Hint: the tensor was modified in place "
        "after it was saved for backward; clone() it before the in-place operation, or use "
        "the out-of-place operation.");
    kt_release_all(s, z, y, x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_errors, nonscalar_backward_needs_a_gradient)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2, 3 }, 3);
    tg_tensor *y = tg_mul_scalar(x, 2);
    cr_expect_eq(tg_backward(y), -1);
    kt_expect_last_error("backward: grad can be implicitly created only for scalar outputs");
    cr_expect_null(tg_tensor_grad(x));
    /* With a gradient it works: d(2x)/dx . v = 2v. */
    tg_tensor *v = tg_tensor_from_data((double[]){ 1, -1, 0.5 }, (int64_t[]){ 3 }, 1, TG_FLOAT64);
    cr_assert_eq(tg_backward(y, .grad = v), 0, "%s", tg_last_error());
    tg_tensor *g = tg_tensor_grad(x);
    expect_values(g, (double[]){ 2, -2, 1 }, 3, "x.grad");
    kt_release_all(g, v, y, x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_errors, inplace_on_a_leaf_requiring_grad)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2, 3 }, 3);
    tg_tensor *o = tg_ones(TG_INTS(3), .dtype = TG_FLOAT64);
    kt_expect_refusal(
        tg_add_(x, o),
        "add_: a leaf Variable that requires grad is being used in an in-place operation.");
    kt_expect_refusal(
        tg_exp_(x),
        "exp_: a leaf Variable that requires grad is being used in an in-place operation.");
    /* The leaf is unchanged, and in-place is fine with grad mode off (torch.no_grad()). */
    expect_values(x, (double[]){ 1, 2, 3 }, 3, "x");
    TG_NO_GRAD {
        tg_release(tg_add_(x, o));
    }
    expect_values(x, (double[]){ 2, 3, 4 }, 3, "x after add_ under no_grad");
    /* A view of such a leaf is refused too. */
    tg_tensor *v = tg_slice(x, .start = 1);
    kt_expect_refusal(
        tg_mul_scalar_(v, 2),
        "mul_: a view of a leaf Variable that requires grad is being used in an in-place "
        "operation.");
    kt_release_all(v, o, x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_errors, inplace_on_a_view_of_a_nonleaf_is_refused)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2, 3, 4 }, 4);
    tg_tensor *c = tg_clone(x);
    tg_tensor *v = tg_slice(c, .start = 2);
    kt_expect_refusal(
        tg_mul_scalar_(v, 2),
        "mul_: in-place operations on views of tensors that require grad are not supported "
        "by autograd; clone() the view first or use the out-of-place operation");
    kt_release_all(v, c, x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_errors, out_variant_with_requires_grad)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2, 3 }, 3);
    tg_tensor *o = tg_ones(TG_INTS(3), .dtype = TG_FLOAT64);
    tg_tensor *out = tg_empty(TG_INTS(3), .dtype = TG_FLOAT64);
    kt_expect_refusal(
        tg_add_out(x, o, out),
        "add(): functions with out=... arguments don't support automatic differentiation, "
        "but one of the arguments requires grad.");
    kt_expect_refusal(
        tg_exp_out(x, out),
        "exp(): functions with out=... arguments don't support automatic differentiation, "
        "but one of the arguments requires grad.");
    /* Under no_grad, out= works. */
    TG_NO_GRAD {
        tg_tensor *r = tg_add_out(x, o, out);
        cr_expect_eq(r, out);
        tg_release(r);
    }
    expect_values(out, (double[]){ 2, 3, 4 }, 3, "out");
    kt_release_all(out, o, x);
    kt_expect_no_leak(base, "the test");
}

/* as_strided's formula is not_implemented(...): the forward works, backward names it. */
Test(autograd_errors, operator_without_a_derivative_fails_at_backward)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2, 3, 4 }, 4);
    tg_tensor *y = tg_as_strided(x, TG_INTS(2), TG_INTS(2));
    cr_assert(y, "forward: %s", tg_last_error());
    tg_tensor *s = tg_sum(y);
    cr_expect_eq(tg_backward(s), -1);
    const char *e = tg_last_error();
    cr_expect(e && strstr(e, "the derivative for 'as_strided"), "error: %s", e ? e : "(none)");
    tg_clear_error();
    cr_expect_null(tg_tensor_grad(x));
    kt_release_all(s, y, x);
    kt_expect_no_leak(base, "the test");
}

/* sgd_step_ has no derivative entry (optimizer steps run under no_grad): recorded on a
 * non-leaf with grad mode on, its node fails at backward naming the operator. */
Test(autograd_errors, operator_without_an_entry_names_itself)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2, 3 }, 3);
    tg_tensor *p = tg_clone(x);
    tg_tensor *g = tg_ones(TG_INTS(3), .dtype = TG_FLOAT64);
    tg_tensor *r = tg_sgd_step_(p, g, NULL, 0.1);
    cr_assert(r, "forward: %s", tg_last_error());
    expect_values(p, (double[]){ 0.9, 1.9, 2.9 }, 3, "p after the step");
    tg_tensor *s = tg_sum(p);
    cr_expect_eq(tg_backward(s), -1);
    kt_expect_last_error("the derivative for 'sgd_step_' is not implemented.");
    kt_release_all(s, r, g, p, x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_errors, grad_of_an_input_not_in_the_graph)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2 }, 2), *z = leaf((double[]){ 3, 4 }, 2);
    tg_tensor *s = tg_sum(x);
    tg_tensor *gs[2] = { NULL, NULL };
    cr_expect_eq(tg_grad(TG_TENSORS(s), TG_TENSORS(x, z), gs, .retain_graph = true), -1);
    kt_expect_last_error(
        "grad: One of the differentiated Tensors appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior.");
    cr_expect(gs[0] == NULL && gs[1] == NULL);
    cr_assert_eq(tg_grad(TG_TENSORS(s), TG_TENSORS(x, z), gs, .allow_unused = true), 0, "%s",
                 tg_last_error());
    expect_values(gs[0], (double[]){ 1, 1 }, 2, "ds/dx");
    cr_expect_null(gs[1]);
    kt_release_all(gs[0], s, z, x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_errors, no_grad_records_nothing)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2 }, 2);
    tg_tensor *y = NULL;
    TG_NO_GRAD {
        y = tg_mul(x, x);
    }
    cr_expect(!tg_tensor_requires_grad(y));
    cr_expect_null(tg_tensor_grad_fn(y));
    tg_tensor *s = tg_sum(y);
    cr_expect_eq(tg_backward(s), -1);
    kt_expect_last_error(
        "backward: element 0 of tensors does not require grad and does not have a grad_fn");
    kt_release_all(s, y, x);
    kt_expect_no_leak(base, "the test");
}

/* ------------------------------------------------------------------ higher order */

/* d/dx x^3 = 3x^2, d2/dx2 = 6x, d3/dx3 = 6, each through create_graph. */
Test(autograd_higher_order, third_power_through_mul_and_pow)
{
    kt_live base = kt_live_now();
    const double xs[] = { 0.5, -1, 2 };
    tg_tensor *x = leaf(xs, 3);
    for (int form = 0; form < 2; form++) {
        tg_tensor *x2 = form ? NULL : tg_mul(x, x);
        tg_tensor *y = form ? tg_pow_scalar(x, 3) : tg_mul(x2, x);
        tg_tensor *s = tg_sum(y), *g1 = NULL, *g2 = NULL, *g3 = NULL;
        cr_assert_eq(tg_grad(TG_TENSORS(s), TG_TENSORS(x), &g1, .create_graph = true), 0, "%s",
                     tg_last_error());
        expect_values(g1, (double[]){ 0.75, 3, 12 }, 3, "dy/dx");
        cr_expect(tg_tensor_requires_grad(g1), "create_graph: the gradient is differentiable");
        tg_tensor *s1 = tg_sum(g1);
        cr_assert_eq(tg_grad(TG_TENSORS(s1), TG_TENSORS(x), &g2, .create_graph = true), 0, "%s",
                     tg_last_error());
        expect_values(g2, (double[]){ 3, -6, 12 }, 3, "d2y/dx2 = 6x");
        tg_tensor *s2 = tg_sum(g2);
        cr_assert_eq(tg_grad(TG_TENSORS(s2), TG_TENSORS(x), &g3), 0, "%s", tg_last_error());
        expect_values(g3, (double[]){ 6, 6, 6 }, 3, "d3y/dx3 = 6");
        cr_expect(!tg_tensor_requires_grad(g3), "without create_graph the gradient has no history");
        kt_release_all(g3, s2, g2, s1, g1, s, y, x2);
    }
    tg_release(x);
    kt_expect_no_leak(base, "the test");
}

/* backward with create_graph accumulates a .grad that has history; differentiating it again
 * gives the second derivative. */
Test(autograd_higher_order, backward_create_graph_then_grad_of_grad)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1, 2 }, 2);
    tg_tensor *y = tg_pow_scalar(x, 3), *s = tg_sum(y);
    cr_assert_eq(tg_backward(s, .create_graph = true), 0, "%s", tg_last_error());
    tg_tensor *g = tg_tensor_grad(x);
    expect_values(g, (double[]){ 3, 12 }, 2, "x.grad = 3x^2");
    cr_expect(tg_tensor_requires_grad(g));
    tg_tensor *gs = tg_sum(g), *gg = NULL;
    cr_assert_eq(tg_grad(TG_TENSORS(gs), TG_TENSORS(x), &gg), 0, "%s", tg_last_error());
    expect_values(gg, (double[]){ 6, 12 }, 2, "d(sum 3x^2)/dx = 6x");
    /* x.grad refers to the graph that refers to x: clearing .grad breaks that cycle. */
    tg_tensor_set_grad(x, NULL);
    kt_release_all(gg, gs, g, s, y, x);
    kt_expect_no_leak(base, "the test");
}

/* ------------------------------------------------------------------ deep graphs */

#define CHAIN 100000

/* y = x; CHAIN times: y = (y * 1) + x, alternating the two ops, so y = (CHAIN/2 + 1) x and
 * dy/dx = CHAIN/2 + 1. Intermediates are released as the chain grows: the graph alone keeps
 * them. */
static tg_tensor *build_chain(tg_tensor *x)
{
    tg_tensor *y = tg_retain(x);
    for (int i = 0; i < CHAIN; i++) {
        tg_tensor *next = i % 2 ? tg_add(y, x) : tg_mul_scalar(y, 1.0);
        tg_release(y);
        y = next;
        if (!y) break;
    }
    return y;
}

Test(autograd_deep, chain_of_100000_ops_backward_and_free)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 0.25 }, 1);
    tg_tensor *y = build_chain(x);
    cr_assert(y, "%s", tg_last_error());
    expect_values(y, (double[]){ 0.25 * (CHAIN / 2 + 1) }, 1, "y");
    cr_assert_eq(tg_backward(y), 0, "%s", tg_last_error());
    tg_tensor *g = tg_tensor_grad(x);
    expect_values(g, (double[]){ CHAIN / 2 + 1 }, 1, "dy/dx");
    tg_release(g);
    tg_release(y); /* frees the remaining 100,000 nodes */
    tg_release(x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_deep, chain_of_100000_ops_freed_without_backward)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 0.25 }, 1);
    tg_tensor *y = build_chain(x);
    cr_assert(y, "%s", tg_last_error());
    tg_release(y); /* the whole graph dies here, without recursion */
    tg_release(x);
    kt_expect_no_leak(base, "the test");
}

Test(autograd_deep, chain_with_retain_graph_twice)
{
    kt_live base = kt_live_now();
    tg_tensor *x = leaf((double[]){ 1 }, 1);
    tg_tensor *y = build_chain(x);
    cr_assert(y, "%s", tg_last_error());
    tg_tensor *g = NULL;
    cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(x), &g, .retain_graph = true), 0, "%s",
                 tg_last_error());
    expect_values(g, (double[]){ CHAIN / 2 + 1 }, 1, "dy/dx, first");
    tg_release(g);
    cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(x), &g), 0, "%s", tg_last_error());
    expect_values(g, (double[]){ CHAIN / 2 + 1 }, 1, "dy/dx, second");
    kt_release_all(g, y, x);
    kt_expect_no_leak(base, "the test");
}
