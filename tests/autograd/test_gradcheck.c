/* Runs every registered gradcheck case (the GC_REGISTER tables of gc_cases_<family>.c) in its
 * own process, with the second derivatives of the cases marked gradgrad, and fails the suite when an
 * operator that has a derivative (generated/tg_grad_op_list.h, from specs/derivatives.yaml) has no case.
 *
 * Metric: PyTorch's gradcheck, |analytical - numerical| <= 1e-5 + 1e-3 |numerical| per
 * Jacobian entry, central differences with eps 1e-6, float64 (gradcheck.h). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "kt_util.h"
#include "gc_run.h"
#include "gradcheck.h"
#include "tg_cover.h"
#include "tg_grad_op_list.h"

static void run_case(int index)
{
    gc_run r;
    gc_run_begin(&r, index);
    const gc_case *c = r.c;
    bool ok = gc_gradcheck(r.f, r.in, r.n, &r.o, r.msg, sizeof r.msg);
    if (c->expect_error) {
        cr_expect(!ok, "%s [%s]: expected a failure mentioning \"%s\", but gradcheck passed", c->op,
                  c->label, c->expect_error);
        cr_expect(ok || strstr(r.msg, c->expect_error),
                  "%s [%s]: expected an error mentioning \"%s\", got: %s", c->op, c->label,
                  c->expect_error, r.msg);
    } else {
        cr_expect(ok, "gradcheck %s [%s]: %s", c->op, c->label, r.msg);
        if (ok && c->gradgrad) {
            ok = gc_gradgradcheck(r.f, r.in, r.n, &r.o, r.msg, sizeof r.msg);
            cr_expect(ok, "gradgradcheck %s [%s]: %s", c->op, c->label, r.msg);
        }
    }
    gc_run_end(&r);
}

/* One process per case: the parameter is the case's index among the registered cases. */
ParameterizedTestParameters(gradcheck, op) { return kt_index_params(gc_num_cases()); }

ParameterizedTest(int *index, gradcheck, op) { run_case(*index); }

/* ------------------------------------------------------------------ coverage */

static bool has_case(const char *op)
{
    for (int i = 0; i < gc_num_cases(); i++)
        if (strcmp(gc_case_at(i)->op, op) == 0) return true;
    return false;
}

Test(gradcheck, every_differentiable_operator_has_a_case)
{
    static const cover_op ops[] = { TG_DIFFERENTIABLE_OP_LIST(COVER_OP){ 0 } };
    int total, missing = cover_report_missing(ops, has_case, "gradcheck case", NULL, &total);
    cr_expect_eq(missing, 0,
                 "%d of %d differentiable operators have no gradcheck case (listed on stderr)",
                 missing, total);
}

Test(gradcheck, cases_name_real_operators)
{
    for (int i = 0; i < gc_num_cases(); i++)
        cr_expect(cover_is_operator(gc_case_at(i)->op),
                  "gradcheck case %d names '%s', which is not an operator in the spec", i,
                  gc_case_at(i)->op);
}

/* The harness itself must catch a wrong gradient: d/dx of detach(x) * x is x (the detached
 * factor is a constant to autograd), while the function's values are x^2, whose derivative
 * is 2x. */
static int wrong_grad(tg_tensor *const *in, tg_tensor **out)
{
    tg_tensor *d = tg_tensor_detach(in[0]);
    out[0] = tg_mul(d, in[0]);
    tg_release(d);
    return 1;
}

Test(gradcheck, harness_detects_a_wrong_gradient)
{
    static const gc_case wrong = { .op = "mul.Tensor", .label = "detach(x) * x", .fn = wrong_grad };
    uint64_t seed = 1;
    gc_input spec = POS(3, 2);
    tg_tensor *x = gc_make_input(&spec, &seed);
    char msg[512];
    cr_expect(!gc_gradcheck(gc_case_func(&wrong), &x, 1, NULL, msg, sizeof msg));
    cr_expect(strstr(msg, "analytical") != NULL, "message: %s", msg);
    tg_release(x);
    cr_expect_eq(tg_live_tensors(), 0);
}
