/* Operator libraries loaded at run time, against the shared library as a user's program links
 * it (libtensorgen.so.0, the public API only): tg_load_library of the test library
 * (build/tests/libtestops.so, tests/library/testops/), calls by name, its autograd, loading it
 * again, a second library with the same operators, files that are no operator library, and a
 * library unloaded with dlclose, whose destructor takes its operators out. The paths come from
 * tests/shared/run.sh: TESTOPS_LIB, TESTOPS_COPY_LIB, NOTOPS_LIB. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorgen.h"

static void leak_check(void)
{
    cr_expect_eq(tg_live_tensors(), 0, "leaked %lld tensors", (long long)tg_live_tensors());
}
TestSuite(load_library, .fini = leak_check);

static const char *path(const char *var)
{
    const char *p = getenv(var);
    cr_assert(p && *p, "%s is not set (run tests/shared/run.sh)", var);
    return p;
}

/* scale(x, factor) by name: 0 and the values in want, or the error. */
static int call_scale(double factor, const double *want)
{
    tg_tensor *x = tg_tensor_from_data((double[]){ 1, 2, 3 }, (int64_t[]){ 3 }, 1, TG_FLOAT64);
    tg_boxed_stack s = { .n = 0 };
    tg_boxed_push_tensor(&s, x);
    tg_boxed_push_double(&s, factor);
    int rc = tg_call_boxed("testops::scale", &s);
    if (rc == 0) {
        double got[3];
        cr_assert_eq(tg_tensor_to_doubles(s.v[0].v.t, got, 3), 0);
        for (int i = 0; i < 3; i++) cr_expect_eq(got[i], want[i]);
        tg_boxed_clear(&s);
    }
    tg_release(x);
    return rc;
}

Test(load_library, loads_and_calls_by_name)
{
    cr_expect_eq(call_scale(2, NULL), -1, "not loaded yet");
    cr_expect_str_eq(tg_last_error(), "op_find: unknown operator 'testops::scale'");
    tg_clear_error();
    cr_assert_eq(tg_load_library(path("TESTOPS_LIB")), 0, "%s", tg_last_error());
    cr_expect_eq(call_scale(2, (double[]){ 2, 4, 6 }), 0, "%s", tg_last_error());
    cr_expect_eq(tg_load_library(path("TESTOPS_LIB")), 0, "loading again does nothing: %s",
                 tg_last_error());
    cr_expect_eq(call_scale(-1, (double[]){ -1, -2, -3 }), 0, "%s", tg_last_error());
}

/* The library's derivative (scale's: scale(grad, factor)), reached through a call by name. */
Test(load_library, autograd_through_a_loaded_library)
{
    cr_assert_eq(tg_load_library(path("TESTOPS_LIB")), 0, "%s", tg_last_error());
    tg_tensor *x = tg_tensor_set_requires_grad(
        tg_tensor_from_data((double[]){ 1, 2 }, (int64_t[]){ 2 }, 1, TG_FLOAT64), true);
    tg_boxed_stack s = { .n = 0 };
    tg_boxed_push_tensor(&s, x);
    tg_boxed_push_double(&s, 3);
    cr_assert_eq(tg_call_boxed("testops::scaled_square", &s), 0, "%s", tg_last_error());
    tg_tensor *loss = tg_sum(s.v[0].v.t);
    cr_assert_eq(tg_backward(loss), 0, "%s", tg_last_error());
    tg_tensor *g = tg_tensor_grad(x); /* d/dx 3 x^2 = 6x */
    double got[2];
    cr_assert_eq(tg_tensor_to_doubles(g, got, 2), 0);
    cr_expect(fabs(got[0] - 6) < 1e-12 && fabs(got[1] - 12) < 1e-12, "%g %g", got[0], got[1]);
    tg_release(g);
    tg_release(loss);
    tg_boxed_clear(&s);
    tg_release(x);
}

Test(load_library, errors)
{
    cr_expect_eq(tg_load_library("/no/such/libfoo.so"), -1);
    cr_expect(strstr(tg_last_error(), "load_library: cannot load '/no/such/libfoo.so': ") &&
                  strstr(tg_last_error(), "No such file or directory"),
              "%s", tg_last_error());
    tg_clear_error();
    cr_expect_eq(tg_load_library(path("NOTOPS_LIB")), -1);
    char want[1024];
    snprintf(want, sizeof want,
             "load_library: '%s' is not an operator library: it registers no operators when "
             "loaded (generate one with tgen --gen --namespace NS)",
             path("NOTOPS_LIB"));
    cr_expect_str_eq(tg_last_error(), want);
    tg_clear_error();
    cr_expect_eq(tg_load_library(NULL), -1);
    cr_expect_str_eq(tg_last_error(), "load_library: no path given");
    tg_clear_error();
    /* a second library with the same operators: refused, unloaded, the first one stays */
    cr_assert_eq(tg_load_library(path("TESTOPS_LIB")), 0, "%s", tg_last_error());
    cr_expect_eq(tg_load_library(path("TESTOPS_COPY_LIB")), -1);
    cr_expect_str_eq(tg_last_error(), "library_register: operator testops::scale is already "
                                      "registered");
    tg_clear_error();
    cr_expect_eq(call_scale(2, (double[]){ 2, 4, 6 }), 0, "%s", tg_last_error());
}

/* dlopen / dlclose without tg_load_library: the constructor registers, the destructor takes
 * the operators out again, and loading it once more registers them anew. */
Test(load_library, unloading_unregisters)
{
    for (int round = 0; round < 2; round++) {
        void *h = dlopen(path("TESTOPS_LIB"), RTLD_NOW | RTLD_LOCAL);
        cr_assert(h, "%s", dlerror());
        cr_expect_eq(call_scale(2, (double[]){ 2, 4, 6 }), 0, "round %d: %s", round,
                     tg_last_error());
        cr_assert_eq(dlclose(h), 0);
        cr_expect_null(tg_op_find("testops::scale"), "round %d: still registered", round);
        tg_clear_error();
    }
}
