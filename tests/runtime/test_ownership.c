/* Ownership misuse is an error, not a crash (docs/c-api.md, "What is detected"): a double
 * release and a release of a tensor only a scope holds are reported (error + warning) and
 * ignored, so the scope's end still works; tg_drop drops a result whoever owns it. */
#include "rt_test.h"
#include "kt_util.h"

static char warned[1024];
static int nwarn;
static void on_warning(const char *msg, void *user)
{
    (void)user;
    nwarn++;
    snprintf(warned, sizeof warned, "%s", msg);
}

static void setup(void)
{
    nwarn = 0;
    warned[0] = '\0';
    tg_set_warning_handler(on_warning, NULL);
}

static void teardown(void)
{
    tg_set_warning_handler(NULL, NULL);
    rt_leak_check();
}

TestSuite(rt_ownership, .init = setup, .fini = teardown);

static tg_tensor *make23(void) /* public: recorded by an open scope */
{
    return tg_tensor_from_data(NULL, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
}

/* The recorded error is `want`, and the same text was warned once; both cleared. */
static void expect_reported(const char *want)
{
    cr_expect(tg_last_error() && strcmp(tg_last_error(), want) == 0, "error '%s', want '%s'",
              tg_last_error() ? tg_last_error() : "(none)", want);
    cr_expect_eq(nwarn, 1);
    cr_expect_str_eq(warned, want);
    tg_clear_error();
    nwarn = 0;
}

static void expect_quiet(void)
{
    cr_expect_null(tg_last_error(), "unexpected error '%s'", tg_last_error());
    cr_expect_eq(nwarn, 0, "unexpected warning '%s'", warned);
}

Test(rt_ownership, double_release_is_reported)
{
    tg_tensor *t = make23();
    tg_release(t);
    tg_release(t); /* the block is still cached, untouched: its refcount says dead */
    expect_reported("release: double release of the float32 [2, 3] tensor made by "
                    "tensor_from_data: it was freed already; ignored");
    cr_expect_eq(tg_drop(t), -1);
    tg_clear_error();
    nwarn = 0;
}

Test(rt_ownership, double_release_of_a_view_names_it)
{
    tg_tensor *base = make23();
    tg_tensor *v = tg__make_view(base, (int64_t[]){ 3 }, (int64_t[]){ 1 }, 1, 0);
    tg_release(v);
    tg_release(v); /* the view's header died; base keeps the block alive */
    expect_reported(
        "release: double release of the float32 [3] tensor made by view: it was freed already; "
        "ignored");
    tg_release(base);
    expect_quiet();
}

#if defined(__SANITIZE_ADDRESS__) || defined(TG_DEBUG)
/* Debug builds never reuse a freed block while it is among the last 256 freed: a double
 * release after other tensors were made is still seen. (The release build reuses the newest
 * block first; there ASan, in CI, is what catches this.) */
Test(rt_ownership, double_release_after_reuse_is_reported_in_debug_builds)
{
    tg_tensor *t = make23();
    tg_release(t);
    for (int i = 0; i < 100; i++) tg_release(make23());
    tg_release(t);
    expect_reported("release: double release of the float32 [2, 3] tensor made by "
                    "tensor_from_data: it was freed already; ignored");
}
#endif

Test(rt_ownership, releasing_a_scope_owned_tensor_is_reported_and_scope_end_is_safe)
{
    float v[] = { 1, 2, 3, 4, 5, 6 };
    tg_tensor *a = rt_f32(v, (int64_t[]){ 2, 3 }, 2);
    tg_scope_begin();
    tg_tensor *s = tg_add(a, a); /* the scope's reference */
    tg_release(s);
    expect_reported("release: the float32 [2, 3] tensor made by add belongs to an open scope, "
                    "not to the caller, who holds no reference of its own; ignored "
                    "(tg_scope_end releases it; tg_scope_keep keeps it)");
    rt_expect_values(s, (double[]){ 2, 4, 6, 8, 10, 12 }, 6); /* still intact */
    cr_expect_eq(tg_live_tensors(), 2);
    tg_scope_end(); /* releases s once: no crash, nothing leaks */
    cr_expect_eq(tg_live_tensors(), 1);
    tg_release(a);
    expect_quiet();
}

Test(rt_ownership, a_kept_tensor_belongs_to_the_enclosing_scope)
{
    tg_scope_begin();
    tg_scope_begin();
    tg_tensor *t = tg_scope_keep(make23());
    tg_scope_end(); /* t moves to the outer scope, which still owns it */
    tg_release(t);
    cr_expect(tg_last_error() && strstr(tg_last_error(), "belongs to an open scope"));
    tg_clear_error();
    nwarn = 0;
    tg_scope_end();
    cr_expect_eq(tg_live_tensors(), 0);
}

Test(rt_ownership, legitimate_releases_are_quiet)
{
    tg_scope_begin();
    tg_tensor *mine = tg_retain(make23()); /* one reference of my own, one the scope's */
    tg_tensor *kept = tg_scope_keep(make23());
    tg_tensor *twice = make23();
    tg_retain(twice);
    tg_release(twice);
    tg_release(mine); /* my own reference: fine, the scope's remains */
    cr_expect_eq(tg_live_tensors(), 3);
    tg_scope_end();
    tg_release(kept); /* kept with no enclosing scope: the caller's */
    expect_quiet();
}

Test(rt_ownership, a_scope_owned_list_is_not_released_by_hand)
{
    tg_tensor *x = make23();
    tg_scope_begin();
    tg_tensor_list parts = tg_chunk(x, 3, .dim = 1);
    cr_assert_eq(parts.len, 3);
    tg_tensor_list_release(parts);
    expect_reported("tensor_list_release: the list of 3 tensors (the first is the float32 "
                    "[2, 1] tensor made by view) belongs to an open scope, not to the caller; "
                    "ignored (tg_scope_end releases it; tg_scope_keep_list keeps it)");
    tg_tensor_list kept = tg_scope_keep_list(tg_chunk(x, 2, .dim = 1));
    tg_scope_end();               /* frees the first list (its array too) once */
    tg_tensor_list_release(kept); /* kept: the caller's */
    tg_release(x);
    expect_quiet();
}

/* The trap tg_drop avoids (docs/c-api.md): releasing an in-place result inside a scope uses up
 * the caller's own reference to a tensor made before the scope. Not detectable then (the scope
 * still holds one); the caller's later release is the double release that is reported. */
Test(rt_ownership, releasing_an_in_place_result_in_a_scope_surfaces_as_a_double_release)
{
    tg_tensor *w = make23();
    tg_scope_begin();
    tg_release(tg_uniform_(w, .from = -1, .to = 1));
    expect_quiet();
    tg_scope_end(); /* frees w */
    cr_expect_eq(tg_live_tensors(), 0);
    tg_release(w);
    expect_reported("release: double release of the float32 [2, 3] tensor made by "
                    "tensor_from_data: it was freed already; ignored");
}

Test(rt_ownership, drop_releases_the_callers_reference_outside_a_scope)
{
    tg_tensor *w = make23();
    cr_expect_eq(tg_drop(tg_uniform_(w, .from = -1, .to = 1)), 0);
    cr_expect_eq(tg_drop(tg_add(w, w)), 0);
    cr_expect_eq(tg_live_tensors(), 1);
    tg_release(w); /* the last reference: nothing leaked, nothing over-released */
    expect_quiet();
}

Test(rt_ownership, drop_leaves_a_scope_owned_result_to_the_scope)
{
    tg_tensor *w = make23(); /* made outside: the caller's */
    tg_scope_begin();
    tg_tensor *h = make23(); /* the scope's */
    cr_expect_eq(tg_drop(tg_uniform_(w, .from = -1, .to = 1)), 0);
    cr_expect_eq(tg_drop(tg_uniform_(h, .from = -1, .to = 1)), 0);
    cr_expect_eq(tg_drop(tg_add(w, h)), 0);
    cr_expect_eq(tg_live_tensors(), 3);
    tg_scope_end();
    cr_expect_eq(tg_live_tensors(), 1); /* w survives the scope: the caller still owns it */
    tg_release(w);
    expect_quiet();
}

Test(rt_ownership, drop_inside_a_kernel_releases)
{
    tg_tensor *w = make23();
    tg_scope_begin();
    int token = tg_scope_suspend(); /* as a stub does around a kernel */
    cr_expect_eq(tg_drop(tg_uniform_(w, .from = -1, .to = 1)), 0); /* not recorded: released */
    cr_expect_eq(tg_drop(tg_add(w, w)), 0);
    tg_scope_resume(token);
    cr_expect_eq(tg_live_tensors(), 1);
    tg_scope_end();
    tg_release(w);
    expect_quiet();
}

Test(rt_ownership, drop_of_a_failed_call_is_minus_one_and_keeps_its_error)
{
    tg_tensor *a = make23();
    tg_tensor *b = tg_tensor_from_data(NULL, (int64_t[]){ 4 }, 1, TG_FLOAT32);
    cr_expect_eq(tg_drop(tg_add_(a, b)), -1);
    cr_expect(tg_last_error() && strstr(tg_last_error(), "The size of tensor a (3) must match"),
              "got '%s'", tg_last_error());
    tg_clear_error();
    cr_expect_eq(tg_drop(NULL), -1);
    cr_expect_str_eq(tg_last_error(), "drop: argument 't' is NULL");
    tg_clear_error();
    kt_release_all(a, b);
    expect_quiet();
}
