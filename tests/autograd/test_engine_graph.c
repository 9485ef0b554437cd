/* The autograd engine on larger and odder graphs: multi-output nodes, invalid and cast
 * gradients, failing nodes, a million-node chain (built, backwarded and freed without deep
 * recursion), deep graphs freed without a backward, and backwards on several threads. */
#include <pthread.h>
#include <time.h>

#include "engine_nodes.h"
#include "kt_util.h"

static void leak_check(void)
{
    cr_expect_eq(tg_live_tensors(), 0, "leaked %lld tensors", (long long)tg_live_tensors());
    cr_expect_eq(tg_live_storages(), 0, "leaked %lld storages", (long long)tg_live_storages());
}

TestSuite(autograd_graph, .fini = leak_check);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int ident_apply(tg_node *n, tg_tensor *const *g, tg_tensor **out)
{
    out[0] = tg_retain(g[0]);
    return 0;
}

/* ------------------------------------------------------------------ multi-output nodes */

/* Split2Backward0: two outputs, each a copy of the input; d/da = g0 + g1. Records what it
 * was given so the test can check the zeros the engine materialised. */
static double seen_g1[2];
static int split_apply(tg_node *n, tg_tensor *const *g, tg_tensor **out)
{
    cr_assert_eq(tg_tensor_numel(g[1]), 2);
    cr_assert_eq(tg_tensor_to_doubles(g[1], seen_g1, 2), 0);
    out[0] = EN_BELOW(tg_add(g[0], g[1]));
    return out[0] ? 0 : -1;
}
static const tg_node_vtable split_vt = { "Split2Backward0", split_apply, NULL };

Test(autograd_graph, missing_gradients_become_zeros)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2));
    tg_node *n = tg_autograd_node_new(sizeof(tg_node), &split_vt, 2, 1);
    tg_autograd_node_set_next_edge(n, 0, a);
    tg_tensor *r0 = EN_BELOW(tg_add_scalar(a, 0.0)), *r1 = EN_BELOW(tg_add_scalar(a, 0.0));
    tg_autograd_set_history(r0, n, 0);
    tg_autograd_set_history(r1, n, 1);
    tg_autograd_node_release(n);
    seen_g1[0] = seen_g1[1] = -1;
    tg_tensor *s = en_sum(r0); /* r1 unused: its gradient is zeros */
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    cr_expect(seen_g1[0] == 0 && seen_g1[1] == 0);
    EN_EXPECT_GRAD(a, 1, 1);
    int nr = -1;
    cr_expect_eq(tg_tensor_grad_fn(r1), tg_tensor_grad_fn(r0));
    tg_node_next(tg_tensor_grad_fn(s), 0, &nr);
    cr_expect_eq(nr, 0);
    kt_release_all(s, r0, r1, a);
}

/* ------------------------------------------------------------------ gradient checks */

static int wrong_shape_apply(tg_node *n, tg_tensor *const *g, tg_tensor **out)
{
    out[0] = EN_VEC(1, 2, 3);
    return 0;
}
static int float64_apply(tg_node *n, tg_tensor *const *g, tg_tensor **out)
{
    out[0] = EN_BELOW(tg__to_copy(g[0], .dtype = TG_FLOAT64));
    return 0;
}
static int failing_apply(tg_node *n, tg_tensor *const *g, tg_tensor **out)
{
    out[0] = tg_retain(g[0]); /* half-filled out[]: the engine frees it */
    tg__error("FailBackward", "something went wrong");
    return -1;
}

Test(autograd_graph, invalid_gradient_shape)
{
    float v[6] = { 0 };
    tg_tensor *a = en_leaf(tg_tensor_from_data(v, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32));
    tg_tensor *p = en_unary_fn(a, wrong_shape_apply), *s = en_sum(p);
    cr_expect_eq(tg_backward(s), -1);
    cr_expect_str_eq(tg_last_error(),
                     "Function ProbeBackward0 returned an invalid gradient "
                     "at index 0 - got [3] but expected shape compatible with [2, 3]");
    tg_clear_error();
    cr_expect_null(tg_tensor_grad(a));
    kt_release_all(s, p, a);
}

Test(autograd_graph, gradient_cast_to_input_dtype)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2));
    tg_tensor *p = en_unary_fn(a, float64_apply), *s = en_sum(p);
    cr_assert_eq(tg_backward(s), 0, "%s", tg_last_error());
    tg_tensor *g = tg_tensor_grad(a);
    cr_assert_not_null(g);
    cr_expect_eq(tg_tensor_dtype(g), TG_FLOAT32);
    EN_EXPECT(g, 1, 1);
    kt_release_all(g, s, p, a);
}

Test(autograd_graph, failing_node_propagates_without_leaks)
{
    tg_tensor *a = en_leaf(EN_VEC(1, 2)), *b = EN_VEC(3, 4);
    tg_tensor *c = en_mul(a, b), *p = en_unary_fn(c, failing_apply), *d = en_add(p, c);
    tg_tensor *s = en_sum(d);
    cr_expect_eq(tg_backward(s), -1);
    cr_expect_str_eq(tg_last_error(), "FailBackward: something went wrong");
    tg_clear_error();
    cr_expect_null(tg_tensor_grad(a));
    kt_release_all(s, d, p, c, a, b);
}

/* ------------------------------------------------------------------ deep graphs */

#define CHAIN 1000000

Test(autograd_graph, million_node_chain, .timeout = 60)
{
    tg_tensor *x = en_leaf(EN_VEC(1));
    tg_tensor *y = tg_retain(x);
    double t0 = now_s();
    for (int i = 0; i < CHAIN; i++) {
        tg_tensor *z = en_unary_fn(y, ident_apply);
        cr_assert_not_null(z);
        tg_release(y);
        y = z;
    }
    double t1 = now_s();
    cr_assert_eq(tg_backward(y), 0, "%s", tg_last_error());
    double t2 = now_s();
    EN_EXPECT_GRAD(x, 1);
    tg_release(y); /* frees the chain: must not recurse */
    double t3 = now_s();
    cr_log_info("million-node chain: build %.3f s, backward %.3f s, free %.3f s", t1 - t0, t2 - t1,
                t3 - t2);
    tg_release(x);
}

Test(autograd_graph, deep_graph_with_saved_tensors_freed_without_backward, .timeout = 60)
{
    /* Each node saves its input, whose grad_fn is the previous node: freeing the head goes
     * node -> saved tensor -> meta -> grad_fn -> ... two hundred thousand times. */
    tg_tensor *x = en_leaf(EN_VEC(1)), *k = EN_VEC(1);
    tg_tensor *y = tg_retain(x);
    for (int i = 0; i < 200000; i++) {
        tg_tensor *z = en_mul(y, k);
        tg_release(y);
        y = z;
    }
    kt_release_all(y, x, k);
}

/* ------------------------------------------------------------------ threads */

#define THREADS 4
#define ITERS 200

typedef struct {
    tg_tensor *shared;
    double x;
    int ok;
} thread_arg;

static void *thread_main(void *p)
{
    thread_arg *t = p;
    tg_tensor *a = en_leaf(EN_VEC(t->x)), *b = en_leaf(EN_VEC(2 * t->x));
    for (int i = 0; i < ITERS; i++) {
        tg_tensor *c = en_mul(a, b), *d = en_mul(c, t->shared), *s = en_sum(d);
        if (tg_backward(s) != 0) return NULL;
        kt_release_all(s, d, c);
    }
    tg_tensor *ga = tg_tensor_grad(a);
    /* d = a*b*shared (shared = 1): da = b, summed over ITERS */
    t->ok = ga && fabs(tg_item(ga) - ITERS * 2 * t->x) < 1e-3;
    kt_release_all(ga, a, b);
    return NULL;
}

Test(autograd_graph, backward_on_several_threads)
{
    tg_tensor *shared = en_leaf(EN_VEC(1));
    pthread_t th[THREADS];
    thread_arg args[THREADS];
    double want = 0;
    for (int i = 0; i < THREADS; i++) {
        args[i] = (thread_arg){ shared, (double)(i + 1), 0 };
        want += ITERS * (double)(i + 1) * 2 * (i + 1); /* d(shared) = a*b */
        cr_assert_eq(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < THREADS; i++) cr_expect(args[i].ok, "thread %d", i);
    /* every thread accumulated into the one shared leaf */
    EN_EXPECT_GRAD(shared, want);
    tg_release(shared);
}
