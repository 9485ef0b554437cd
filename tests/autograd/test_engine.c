/* The autograd engine (runtime/autograd_*.c) on hand-written nodes (engine_nodes.h) over
 * real tensors: accumulation, graph shapes, retain_graph, create_graph, hooks, retain_grad,
 * tg_grad, version checks, in-place checks, a million-node chain, inspection, errors and
 * threads. Every test ends with no live tensor or storage. */
#include <pthread.h>
#include <time.h>

#include "engine_nodes.h"
#include "kt_util.h"

static void leak_check(void)
{
    cr_expect_eq(tg_live_tensors(), 0, "leaked %lld tensors", (long long)tg_live_tensors());
    cr_expect_eq(tg_live_storages(), 0, "leaked %lld storages", (long long)tg_live_storages());
}

TestSuite(autograd_engine, .fini = leak_check);

static const char ERR_TWICE[] =
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.";

/* ------------------------------------------------------------------ basics */

Test(autograd_engine, accumulates_into_leaves)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2, 3)), *b = en_leaf(EN_VEC(4, 5, 6));
    for (int it = 1; it <= 2; it++) {
        tg_tensor *c = en_mul(a, b), *s = en_sum(c);
        cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
        EN_EXPECT_GRAD(a, 4 * it, 5 * it, 6 * it); /* a second backward adds */
        EN_EXPECT_GRAD(b, 1 * it, 2 * it, 3 * it);
        cr_expect_null(tg_tensor_grad(c), "non-leaf .grad is not kept by default");
        kt_release_all(s, c);
    }
    tg_tensor_set_grad(a, NULL);
    cr_expect_null(tg_tensor_grad(a));
    kt_release_all(a, b);
}

Test(autograd_engine, diamond_and_repeated_input)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2)), *b = EN_VEC(3, 4), *c = EN_VEC(10, 20);
    /* a feeds two branches: d = a*b + a*c -> da = b + c */
    tg_tensor *x = en_mul(a, b), *y = en_mul(a, c), *d = en_add(x, y), *s = en_sum(d);
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    EN_EXPECT_GRAD(a, 13, 24);
    kt_release_all(s, d, x, y);
    /* the same tensor on both edges of one node: a*a -> 2a */
    tg_tensor_set_grad(a, NULL);
    tg_tensor *sq = en_mul(a, a), *s2 = en_sum(sq);
    cr_assert_eq(tg_backward(s2), 0, "%s", tg_last_error());
    EN_EXPECT_GRAD(a, 2, 4);
    kt_release_all(s2, sq, a, b, c);
}

Test(autograd_engine, broadcast_gradient_is_reduced)
{
    float v[6] = { 1, 2, 3, 4, 5, 6 };
    tg_tensor *a = en_leaf(tg_tensor_from_data(v, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32));
    tg_tensor *b = en_leaf(EN_VEC(1, 1, 1));
    tg_tensor *c = en_add(a, b), *s = en_sum(c);
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    EN_EXPECT_GRAD(b, 2, 2, 2);
    EN_EXPECT_GRAD(a, 1, 1, 1, 1, 1, 1);
    kt_release_all(s, c, a, b);
}

Test(autograd_engine, leaf_root_and_explicit_grad)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2)), *g = EN_VEC(5, 7);
    cr_assert_eq(tg_backward(a, .grad = g), 0, "%s", tg_last_error());
    EN_EXPECT_GRAD(a, 5, 7);
    cr_assert_eq(tg_backward(a, .grad = g), 0);
    EN_EXPECT_GRAD(a, 10, 14);
    EN_EXPECT(g, 5, 7); /* the caller's gradient was not modified */
    kt_release_all(a, g);
}

Test(autograd_engine, root_errors)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2)), *b = EN_VEC(3, 4);
    tg_tensor *c = en_mul(a, b);
    cr_expect_eq(tg_backward(c), -1);
    en_expect_error("grad can be implicitly created only for scalar outputs");
    cr_expect_eq(tg_backward(b), -1);
    en_expect_error("element 0 of tensors does not require grad and does not have a grad_fn");
    tg_tensor *g = EN_VEC(1, 2, 3);
    cr_expect_eq(tg_backward(c, .grad = g), -1);
    en_expect_error("Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and "
                    "output[0] has a shape of torch.Size([2]).");
    cr_expect_null(tg_tensor_grad(a));
    kt_release_all(g, c, a, b);
}

/* ------------------------------------------------------------------ retain / create graph */

Test(autograd_engine, retain_graph_and_second_backward_error)
{
    tg_tensor *a = en_leaf(EN_VEC(2)), *b = en_leaf(EN_VEC(3));
    tg_tensor *c = en_mul(a, b), *s = en_sum(c);
    cr_assert_eq(tg_backward(s, .retain_graph = true), 0, "%s", tg_last_error());
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    EN_EXPECT_GRAD(a, 6);
    cr_expect_eq(tg_backward(s), -1);
    cr_expect_str_eq(tg_last_error(), ERR_TWICE);
    tg_clear_error();
    EN_EXPECT_GRAD(a, 6); /* a failed backward leaves .grad alone */
    kt_release_all(s, c, a, b);
}

static bool probe_mode;
static int probe_apply(tg_node *n, tg_tensor *const *g, tg_tensor **out)
{
    probe_mode = tg_is_grad_enabled();
    out[0] = tg_retain(g[0]);
    return 0;
}

Test(autograd_engine, grad_mode_during_backward)
{
    tg_tensor *a = en_leaf(EN_VEC(1));
    tg_tensor *p = en_unary_fn(a, probe_apply), *s = en_sum(p);
    cr_assert_eq(tg_backward(s, .retain_graph = true), 0);
    cr_expect(!probe_mode, "grad mode is off in a plain backward");
    cr_assert(tg_is_grad_enabled());
    tg_tensor_set_grad(a, NULL);
    /* create_graph: on during the backward, restored after (also when it was off). */
    cr_assert_eq(tg_backward(s, .create_graph = true), 0);
    cr_expect(probe_mode, "grad mode is on under create_graph");
    cr_expect(tg_is_grad_enabled());
    tg_tensor_set_grad(a, NULL); /* break the .grad -> graph -> a cycle */
    kt_release_all(s, p, a);
}

Test(autograd_engine, double_backward_through_create_graph)
{
    /* y = a*a*a: dy/da = 3a^2, d2y/da2 = 6a */
    tg_tensor *a = en_leaf(EN_VEC(1, 2));
    tg_tensor *a2 = en_mul(a, a), *y = en_mul(a2, a), *s = en_sum(y);
    tg_tensor *g1 = NULL, *g2 = NULL;
    cr_assert_eq(tg_grad(TG_TENSORS(s), TG_TENSORS(a), &g1, .create_graph = true), 0, "%s",
                 tg_last_error());
    EN_EXPECT(g1, 3, 12);
    cr_expect(tg_tensor_requires_grad(g1));
    tg_tensor *gs = en_sum(g1);
    cr_assert_eq(tg_grad(TG_TENSORS(gs), TG_TENSORS(a), &g2), 0, "%s", tg_last_error());
    EN_EXPECT(g2, 6, 12);
    cr_expect(!tg_tensor_requires_grad(g2));
    cr_expect_null(tg_tensor_grad(a), "tg_grad does not accumulate into .grad");
    kt_release_all(g2, gs, g1, s, y, a2, a);
}

/* ------------------------------------------------------------------ hooks and retain_grad */

static int hook_calls;
static tg_tensor *hook_double(tg_tensor *g, void *ctx)
{
    hook_calls++;
    return en_mul(g, (tg_tensor *)ctx);
}
static tg_tensor *hook_observe(tg_tensor *g, void *ctx)
{
    hook_calls++;
    *(double *)ctx = tg_item(g);
    return NULL; /* keep g */
}

Test(autograd_engine, hooks)
{
    tg_tensor *two = EN_VEC(2);
    tg_tensor *a = en_leaf(EN_VEC(3)), *b = EN_VEC(5);
    tg_tensor *c = en_mul(a, b), *s = en_sum(c);
    double seen = 0;
    cr_assert_eq(tg_tensor_register_hook(c, hook_double, two), 0);    /* non-leaf */
    cr_assert_eq(tg_tensor_register_hook(a, hook_observe, &seen), 0); /* leaf */
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    cr_expect_eq(hook_calls, 2);
    cr_expect_eq(seen, 10.0, "the leaf hook sees the doubled gradient");
    EN_EXPECT_GRAD(a, 10);
    cr_expect_eq(tg_tensor_register_hook(b, hook_observe, &seen), -1);
    en_expect_error("cannot register a hook on a tensor that doesn't require gradient");
    kt_release_all(s, c, a, b, two);
}

Test(autograd_engine, retain_grad)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2)), *b = EN_VEC(3, 4);
    tg_tensor *c = en_mul(a, b), *d = en_mul(c, b), *s = en_sum(d);
    tg_tensor_retain_grad(c);
    tg_tensor_retain_grad(a); /* a leaf: no-op */
    cr_assert_eq(tg_backward(s, .retain_graph = true), 0, "%s", tg_last_error());
    EN_EXPECT_GRAD(c, 3, 4);
    cr_expect_null(tg_tensor_grad(d));
    cr_assert_eq(tg_backward(s), 0);
    EN_EXPECT_GRAD(c, 6, 8); /* retained grads accumulate too */
    kt_release_all(s, d, c);
    /* a tensor that retains grad and dies before the backward: its entry goes with it */
    c = en_mul(a, b);
    s = en_sum(c);
    tg_tensor_retain_grad(c);
    tg_release(c);
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    kt_release_all(s, a, b);
    tg_tensor *x = EN_VEC(1);
    tg_tensor_retain_grad(x);
    en_expect_error("can't retain_grad on Tensor that has requires_grad=False");
    tg_release(x);
}

/* ------------------------------------------------------------------ tg_grad */

Test(autograd_engine, grad_allow_unused)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2)), *b = en_leaf(EN_VEC(3, 4)), *z = en_leaf(EN_VEC(0));
    tg_tensor *c = en_mul(a, b), *s = en_sum(c);
    tg_tensor *g[3] = { NULL, NULL, NULL };
    cr_expect_eq(tg_grad(TG_TENSORS(s), TG_TENSORS(a, b, z), g, .retain_graph = true), -1);
    en_expect_error("One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.");
    cr_expect(!g[0] && !g[1] && !g[2]);
    cr_assert_eq(
        tg_grad(TG_TENSORS(s), TG_TENSORS(a, b, z), g, .allow_unused = true, .retain_graph = true),
        0, "%s", tg_last_error());
    EN_EXPECT(g[0], 3, 4);
    EN_EXPECT(g[1], 1, 2);
    cr_expect_null(g[2]);
    cr_expect_null(tg_tensor_grad(a));
    kt_release_all(g[0], g[1]);
    /* a non-leaf input: its gradient is captured, nothing below it runs */
    cr_assert_eq(tg_grad(TG_TENSORS(s), TG_TENSORS(c), g), 0, "%s", tg_last_error());
    EN_EXPECT(g[0], 1, 1);
    tg_release(g[0]);
    tg_tensor *k = EN_VEC(1);
    cr_expect_eq(tg_grad(TG_TENSORS(s), TG_TENSORS(k), g), -1);
    en_expect_error("One of the differentiated Tensors does not require grad");
    kt_release_all(k, s, c, a, b, z);
}

/* ------------------------------------------------------------------ in-place checks */

Test(autograd_engine, version_counter_errors)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2, 3)), *b = EN_VEC(4, 5, 6);
    tg_tensor *c = en_mul(a, b), *s = en_sum(c);
    tg__bump_version(b); /* b modified in place after being saved */
    cr_expect_eq(tg_backward(s), -1);
    cr_expect_str_eq(
        tg_last_error(),
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [torch.FloatTensor [3]] is at version 1; expected version 0 "
        "instead. Hint: the tensor was modified in place after it was saved for backward; "
        "clone() it before the in-place operation, or use the out-of-place operation.");
    tg_clear_error();
    kt_release_all(s, c);
    /* a saved output: the message names the node it is an output of */
    tg_tensor *e = en_exp(a);
    s = en_sum(e);
    tg__bump_version(e);
    tg__bump_version(e);
    cr_expect_eq(tg_backward(s), -1);
    en_expect_error("[torch.FloatTensor [3]], which is output 0 of ExpBackward0, is at "
                    "version 2; expected version 0 instead.");
    kt_release_all(s, e, a, b);
}

Test(autograd_engine, inplace_checks)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2)), *b = EN_VEC(3, 4);
    cr_expect_eq(tg_autograd_check_inplace("add_", a), -1);
    cr_expect_str_eq(tg_last_error(), "add_: a leaf Variable that requires grad is being "
                                      "used in an in-place operation.");
    tg_clear_error();
    cr_expect_eq(tg_autograd_check_inplace("add_", b), 0);
    tg_tensor *c = en_mul(a, b);
    cr_expect_eq(tg_autograd_check_inplace("add_", c), 0, "a non-leaf may be modified in place");
    TG_NO_GRAD {
        cr_expect_eq(tg_autograd_check_inplace("add_", a), 0);
    }
    tg_tensor *v = tg_tensor_detach(a);
    cr_expect(!tg_tensor_requires_grad(v) && tg_tensor_is_leaf(v));
    tg_tensor *w = tg_select(a, 0, 0); /* a view of a leaf (no autograd node here) */
    cr_expect_eq(tg_autograd_check_inplace("mul_", w), -1);
    en_expect_error("a view of a leaf Variable that requires grad is being used in an "
                    "in-place operation.");
    cr_expect_eq(tg_autograd_check_out("add", (tg_tensor *[]){ b, a }, 2), -1);
    cr_expect_str_eq(tg_last_error(),
                     "add(): functions with out=... arguments don't support "
                     "automatic differentiation, but one of the arguments requires grad.");
    tg_clear_error();
    cr_expect_eq(tg_autograd_check_out("add", (tg_tensor *[]){ b, NULL }, 2), 0);
    kt_release_all(w, v, c, a, b);
}

/* ------------------------------------------------------------------ inspection */

Test(autograd_engine, grad_fn_inspection)
{
    tg_tensor *a = en_leaf(EN_VEC(1)), *k = EN_VEC(2);
    tg_tensor *c = en_mul(a, k);
    cr_expect(tg_tensor_is_leaf(a) && !tg_tensor_is_leaf(c) && tg_tensor_is_leaf(k));
    cr_expect_null(tg_tensor_grad_fn(a));
    tg_node *fn = tg_tensor_grad_fn(c);
    cr_assert_not_null(fn);
    cr_expect_str_eq(tg_node_name(fn), "MulBackward0");
    cr_assert_eq(tg_node_num_next(fn), 2);
    int nr = -1;
    tg_node *acc = tg_node_next(fn, 0, &nr);
    cr_assert_not_null(acc);
    cr_expect_str_eq(tg_node_name(acc), "AccumulateGrad");
    cr_expect_eq(nr, 0);
    cr_expect_eq(tg_node_num_next(acc), 0);
    cr_expect_null(tg_node_next(fn, 1, &nr), "no gradient flows to k");
    /* one accumulator per leaf, shared by every node that uses it */
    tg_tensor *d = en_mul(a, a);
    cr_expect_eq(tg_node_next(tg_tensor_grad_fn(d), 0, NULL), acc);
    cr_expect_eq(tg_node_next(tg_tensor_grad_fn(d), 1, NULL), acc);
    tg_tensor *s = en_sum(c);
    cr_expect_str_eq(tg_node_name(tg_tensor_grad_fn(s)), "SumBackward0");
    cr_expect_eq(tg_node_next(tg_tensor_grad_fn(s), 0, NULL), fn);
    kt_release_all(s, d, c, a, k);
}

/* ------------------------------------------------------------------ more semantics */

Test(autograd_engine, grad_accumulates_in_place_and_set_grad_checks)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2)), *b = EN_VEC(3, 4);
    tg_tensor *c = en_mul(a, b), *s = en_sum(c);
    cr_assert_eq(tg_backward(s, .retain_graph = true), 0);
    tg_tensor *held = tg_tensor_grad(a); /* an optimizer holding .grad sees the sum */
    cr_assert_eq(tg_backward(s), 0);
    EN_EXPECT(held, 6, 8);
    tg_release(held);
    tg_tensor_set_grad(a, a);
    en_expect_error("can't assign Variable as its own grad");
    tg_tensor *wrong = EN_VEC(1, 2, 3);
    tg_tensor_set_grad(a, wrong);
    en_expect_error("assigned grad has data of a different size: [3] vs [2]");
    kt_release_all(wrong, s, c, a, b);
}

Test(autograd_engine, saved_output_does_not_keep_output_alive)
{
    tg_tensor *a = en_leaf(EN_VEC(0, 1));
    tg_tensor *e = en_exp(a), *s = en_sum(e);
    int64_t live = tg_live_tensors();
    tg_release(e); /* only the node's alias keeps its storage */
    cr_expect_eq(tg_live_tensors(), live - 1);
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    EN_EXPECT_GRAD(a, 1, exp(1.0));
    kt_release_all(s, a);
}

Test(autograd_engine, grad_with_several_outputs_and_grad_outputs)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2)), *b = en_leaf(EN_VEC(3, 4));
    tg_tensor *c = en_mul(a, b), *d = en_add(a, b);
    tg_tensor *gc = EN_VEC(1, 10), *gd = EN_VEC(100, 1000);
    tg_tensor *g[2] = { NULL, NULL };
    cr_assert_eq(tg_grad(TG_TENSORS(c, d), TG_TENSORS(a, b), g, .grad_outputs = TG_TENSORS(gc, gd)),
                 0, "%s", tg_last_error());
    EN_EXPECT(g[0], 1 * 3 + 100, 10 * 4 + 1000);
    EN_EXPECT(g[1], 1 * 1 + 100, 10 * 2 + 1000);
    kt_release_all(g[0], g[1], gc, gd, c, d, a, b);
}

/* A hook that runs a whole backward of its own (a nested task on the same thread). */
static tg_tensor *hook_nested(tg_tensor *g, void *ctx)
{
    tg_tensor *x = ctx;
    bool prev = tg_set_grad_enabled(true); /* hooks run with the backward's grad mode (off) */
    tg_tensor *y = en_mul(x, x), *s = en_sum(y);
    if (tg_backward(s) != 0) hook_calls = -100;
    tg_set_grad_enabled(prev);
    kt_release_all(s, y);
    hook_calls++;
    return NULL;
}

Test(autograd_engine, nested_backward_from_a_hook)
{
    tg_tensor *a = en_leaf(EN_VEC(1)), *x = en_leaf(EN_VEC(3));
    tg_tensor *c = en_mul(a, a), *s = en_sum(c);
    cr_assert_eq(tg_tensor_register_hook(c, hook_nested, x), 0);
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    cr_expect_eq(hook_calls, 1);
    EN_EXPECT_GRAD(a, 2);
    EN_EXPECT_GRAD(x, 6);
    kt_release_all(s, c, a, x);
}

Test(autograd_engine, create_graph_gives_grad_with_history)
{
    tg_tensor *a = en_leaf(EN_VEC(2));
    tg_tensor *c = en_mul(a, a), *s = en_sum(c);
    cr_assert_eq(tg_backward(s, .create_graph = true), 0, "%s", tg_last_error());
    tg_tensor *g = tg_tensor_grad(a);
    EN_EXPECT(g, 4);
    cr_expect(tg_tensor_requires_grad(g) && !tg_tensor_is_leaf(g));
    tg_release(g);
    tg_tensor_set_grad(a, NULL); /* .grad -> graph -> a: break the cycle */
    kt_release_all(s, c, a);
}
