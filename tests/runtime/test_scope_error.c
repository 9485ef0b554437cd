/* Scopes and errors: tensors released at scope end, kept ones moved out, nesting; the first
 * error wins; NULL in, NULL out. */
#include "rt_test.h"
#include "kt_util.h"

#include <pthread.h>

TestSuite(rt_scope, .fini = rt_leak_check);

static tg_tensor *make(void)
{
    return tg_tensor_from_data(NULL, (int64_t[]){ 2 }, 1, TG_FLOAT32); /* public: tracked */
}

Test(rt_scope, releases_at_end)
{
    tg_scope_begin();
    make();
    make();
    tg_tensor *a = make();
    cr_expect_eq(tg_live_tensors(), 3);
    tg_tensor *b = rt_add(a, a, NULL, TG_ITER_PROMOTE_INPUTS);
    tg_scope_track(b); /* what a generated stub does with results */
    tg_scope_end();
    cr_expect_eq(tg_live_tensors(), 0);
}

Test(rt_scope, keep_moves_out_and_nests)
{
    tg_tensor *kept;
    tg_scope_begin();
    tg_tensor *outer = make();
    tg_scope_begin();
    make();
    kept = tg_scope_keep(make());
    tg_scope_end(); /* kept now belongs to the outer scope */
    cr_expect_eq(tg_live_tensors(), 2);
    tg_scope_keep(kept);
    (void)outer;
    tg_scope_end(); /* outer released; kept handed to us */
    cr_expect_eq(tg_live_tensors(), 1);
    tg_release(kept);
}

Test(rt_scope, retained_tensors_survive)
{
    tg_scope_begin();
    tg_tensor *a = tg_retain(make());
    tg_scope_end();
    cr_expect_eq(tg_live_tensors(), 1);
    tg_release(a);
}

Test(rt_scope, no_scope_tracking_is_a_no_op)
{
    tg_tensor *a = make();
    cr_expect_eq(tg_scope_keep(a), a);
    tg_scope_end(); /* unbalanced end: ignored */
    cr_expect_eq(tg_live_tensors(), 1);
    tg_release(a);
}

Test(rt_scope, many_tensors)
{
    tg_scope_begin();
    for (int i = 0; i < 10000; i++) make();
    cr_expect_eq(tg_live_tensors(), 10000);
    tg_scope_end();
}

TestSuite(rt_error, .fini = rt_leak_check);

Test(rt_error, first_error_wins)
{
    cr_expect_null(tg_last_error());
    cr_expect_null(tg__error("add", "first %d", 1));
    tg__error("mul", "second");
    cr_expect_str_eq(tg_last_error(), "add: first 1");
    cr_expect(tg__has_error());
    tg_clear_error();
    cr_expect_null(tg_last_error());
    tg__error(NULL, "no op");
    cr_expect_str_eq(tg_last_error(), "no op");
    tg_clear_error();
}

Test(rt_error, null_in_null_out_keeps_first_error)
{
    tg_tensor *a = rt_arange((int64_t[]){ 3 }, 1, TG_FLOAT32);
    tg_tensor *b = rt_arange((int64_t[]){ 4 }, 1, TG_FLOAT32);
    tg_tensor *c = rt_add(a, b, NULL, TG_ITER_PROMOTE_INPUTS); /* fails */
    cr_expect_null(c);
    cr_expect_null(tg_tensor_to_string(c));
    cr_expect_eq(tg_tensor_numel(c), 0);
    tg_release(c);
    cr_expect_str_eq(tg_last_error(), "add: The size of tensor a (3) must match the size of "
                                      "tensor b (4) at non-singleton dimension 0");
    tg_clear_error();
    kt_release_all(a, b);
}

static void *other_thread(void *arg)
{
    (void)arg;
    tg__error("thread", "boom");
    return (void *)(uintptr_t)(tg_last_error() != NULL);
}

Test(rt_error, errors_are_per_thread)
{
    pthread_t t;
    void *r;
    pthread_create(&t, NULL, other_thread, NULL);
    pthread_join(t, &r);
    cr_expect(r != NULL);
    cr_expect_null(tg_last_error());
}

static char warned[256];
static int nwarn;
static void handler(const char *msg, void *user)
{
    (void)user;
    nwarn++;
    snprintf(warned, sizeof warned, "%s", msg);
}

Test(rt_error, warnings)
{
    tg_set_warning_handler(handler, NULL);
    tg__warn("deprecated %s", "thing");
    cr_expect_str_eq(warned, "deprecated thing");
    tg__warn_once("k", "once");
    tg__warn_once("k", "once");
    cr_expect_eq(nwarn, 2);
    tg_set_warning_handler(NULL, NULL);
}

TestSuite(rt_grad, .fini = rt_leak_check);

Test(rt_grad, grad_mode_is_thread_local)
{
    cr_expect(tg_is_grad_enabled());
    cr_expect(tg_set_grad_enabled(false));
    cr_expect(!tg_is_grad_enabled());
    tg_set_grad_enabled(true);
}
