/* Forward-mode gradcheck (gc_fwgradcheck, PyTorch's gradcheck with check_forward_ad) of every
 * registered gradcheck case, each in its own process, on the same inputs as the reverse-mode
 * check (gc_case_inputs). Cases with expect_error are skipped: they test reverse-mode errors.
 * An operator without a forward formula must fail with "forward AD is not implemented for",
 * and only the operators listed in no_forward_formula[] below may; every other case must pass.
 *
 * Metric: PyTorch's gradcheck, |forward-mode - numerical| <= 1e-5 + 1e-3 |numerical| per
 * Jacobian entry, central differences with eps 1e-6 (or the case's eps), float64. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "kt_util.h"
#include "gc_run.h"
#include "gradcheck.h"
#include "tg_cover.h"

#define NO_FORWARD "forward AD is not implemented for"

/* The cases (by the operator they cover, or one case by its label) that fail for want of a
 * forward formula, each with the reason: the operator has no `result:` formula, or tgen does not
 * compile the one it has, or the case's function calls an operator in that state. Every
 * operator of specs/derivatives.yaml has one; only the test library's operators are left. A
 * case listed here that passes fails the suite, so the list cannot go stale. */
static const struct {
    const char *op;
    const char *label; /* NULL: every case of op */
    const char *reason;
} no_forward_formula[] = {
    /* The test operator library (tests/library/testops): its testops_derivatives.yaml gives
     * backward formulas only, so these check the not-implemented error of an extension's
     * operator. */
    { "testops::scale", NULL, "testops_derivatives.yaml has no `result:` for it" },
    { "testops::split_sign", NULL, "testops_derivatives.yaml has no `result:` for it" },
    { "testops::scaled_square", NULL, "calls testops::scale, which has no `result:`" },
    { NULL, NULL, NULL },
};

static bool listed(int i, const gc_case *c)
{
    return strcmp(no_forward_formula[i].op, c->op) == 0 &&
           (!no_forward_formula[i].label || strcmp(no_forward_formula[i].label, c->label) == 0);
}

static const char *no_forward_reason(const gc_case *c)
{
    for (int i = 0; no_forward_formula[i].op; i++)
        if (listed(i, c)) return no_forward_formula[i].reason;
    return NULL;
}

static void run_case(int index)
{
    const gc_case *c = gc_case_at(index);
    if (c->expect_error) cr_skip_test("%s [%s] tests a reverse-mode error", c->op, c->label);
    gc_run r;
    gc_run_begin(&r, index);
    bool ok = gc_fwgradcheck(r.f, r.in, r.n, &r.o, r.msg, sizeof r.msg);
    const char *reason = no_forward_reason(c);
    if (reason) {
        cr_expect(!ok, "%s [%s] is listed without a forward formula (%s), but fwgradcheck passed",
                  c->op, c->label, reason);
        cr_expect(ok || strstr(r.msg, NO_FORWARD), "%s [%s]: expected \"" NO_FORWARD "\", got: %s",
                  c->op, c->label, r.msg);
    } else {
        cr_expect(ok, "fwgradcheck %s [%s]: %s", c->op, c->label, r.msg);
    }
    gc_run_end(&r);
}

/* One process per case: the parameter is the case's index among the registered cases. */
ParameterizedTestParameters(fwgradcheck, op) { return kt_index_params(gc_num_cases()); }

ParameterizedTest(int *index, fwgradcheck, op) { run_case(*index); }

/* The list stays honest: every entry names a real operator with a case it covers. */
Test(fwgradcheck, no_forward_formula_names_operators_with_cases)
{
    for (int i = 0; no_forward_formula[i].op; i++) {
        const char *op = no_forward_formula[i].op;
        cr_expect(cover_is_operator(op), "no_forward_formula names '%s', not an operator", op);
        bool has_case = false;
        for (int k = 0; k < gc_num_cases() && !has_case; k++)
            has_case = listed(i, gc_case_at(k)) && !gc_case_at(k)->expect_error;
        cr_expect(has_case, "no_forward_formula names '%s' [%s], which has no gradcheck case", op,
                  no_forward_formula[i].label ? no_forward_formula[i].label : "any");
    }
}

/* ------------------------------------------------------------------ the harness itself */

/* d/dx of detach(x) * x in forward mode is v x (detach drops the tangent, as in PyTorch),
 * while the values are x^2, whose derivative is 2 x v: the check must fail. */
static int wrong_tangent(tg_tensor *const *in, tg_tensor **out)
{
    tg_tensor *d = tg_tensor_detach(in[0]);
    out[0] = tg_mul(d, in[0]);
    tg_release(d);
    return 1;
}

/* An output rebuilt from the input's values has no tangent: counted as zero, so the check
 * must fail for it too (its values depend on x). */
static int no_tangent(tg_tensor *const *in, tg_tensor **out)
{
    double v[6];
    if (tg_tensor_to_doubles(in[0], v, 6) != 0) return -1;
    out[0] = tg_tensor_from_data(v, tg_tensor_sizes(in[0]), tg_tensor_dim(in[0]), TG_FLOAT64);
    return 1;
}

/* An output that does not depend on x: no tangent is the right answer. */
static int constant_output(tg_tensor *const *in, tg_tensor **out)
{
    out[0] = tg_mul(in[1], in[1]);
    out[1] = tg_sin(in[0]);
    return 2;
}

/* The innermost dual level entered, or -1: one more is entered and exited to find it. */
static int innermost_level(void)
{
    int lv = tg_fw_dual_level_enter();
    if (lv >= 0) tg_fw_dual_level_exit(lv);
    else tg_clear_error(); /* all TG_MAX_DUAL_LEVELS in use */
    return lv < 0 ? TG_MAX_DUAL_LEVELS - 1 : lv - 1;
}

/* x * y with the tangent tx y + x ty assembled by hand from the inputs' tangents (either may
 * be absent), so that the harness is checked against a right answer that does not depend on
 * any generated formula. */
static int hand_made_tangent(tg_tensor *const *in, tg_tensor **out)
{
    int lv = innermost_level();
    if (lv < 0) {
        out[0] = tg_mul(in[0], in[1]);
        return out[0] ? 1 : -1;
    }
    tg_dual x = tg_unpack_dual(in[0], lv), y = tg_unpack_dual(in[1], lv);
    tg_tensor *p = tg_mul(x.primal, y.primal);
    tg_tensor *a = x.tangent ? tg_mul(x.tangent, y.primal) : NULL;
    tg_tensor *b = y.tangent ? tg_mul(x.primal, y.tangent) : NULL;
    tg_tensor *t = a && b ? tg_add(a, b) : tg_retain(a ? a : b);
    out[0] = t ? tg_make_dual(p, t, lv) : tg_retain(p);
    tg_tensor *all[] = { x.primal, x.tangent, y.primal, y.tangent, p, a, b, t };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tg_release(all[k]);
    return out[0] ? 1 : -1;
}

static bool check_fn(gc_fn fn, const gc_input *specs, int n, char *msg, size_t size)
{
    gc_case c = { .op = "harness", .label = "harness", .fn = fn };
    uint64_t seed = 7;
    tg_tensor *in[GC_MAX_INPUTS] = { NULL };
    for (int i = 0; i < n; i++) in[i] = gc_make_input(&specs[i], &seed);
    bool ok = gc_fwgradcheck(gc_case_func(&c), in, n, NULL, msg, size);
    for (int i = 0; i < n; i++) tg_release(in[i]);
    return ok;
}

Test(fwgradcheck, harness_detects_a_wrong_tangent)
{
    char msg[512];
    gc_input x = POS(3, 2);
    cr_expect(!check_fn(wrong_tangent, &x, 1, msg, sizeof msg));
    cr_expect(strstr(msg, "forward-mode") && strstr(msg, "input element"), "message: %s", msg);
    cr_expect(!check_fn(no_tangent, &x, 1, msg, sizeof msg));
    cr_expect(strstr(msg, "(no tangent)"), "message: %s", msg);
    tg_clear_error();
    cr_expect_eq(tg_live_tensors(), 0);
}

Test(fwgradcheck, harness_accepts_outputs_without_tangent_that_do_not_depend_on_the_input)
{
    char msg[512];
    gc_input specs[2] = { REAL(2, 3), CONST(2, 3) };
    cr_expect(check_fn(constant_output, specs, 2, msg, sizeof msg), "%s", msg);
    cr_expect_eq(tg_live_tensors(), 0);
}

Test(fwgradcheck, harness_accepts_a_right_tangent)
{
    char msg[512];
    gc_input one[2] = { REAL(3, 4), CONST(3, 4) }, both[2] = { REAL(3, 4), REAL_T(3, 4) };
    cr_expect(check_fn(hand_made_tangent, one, 2, msg, sizeof msg), "x dual, y plain: %s", msg);
    cr_expect(check_fn(hand_made_tangent, both, 2, msg, sizeof msg), "both dual: %s", msg);
    cr_expect_eq(tg_live_tensors(), 0);
}

/* The inputs are left as they were (values, no .grad, still requiring grad), with two strided
 * inputs both differentiated (so the all-inputs-at-once direction runs too). */
Test(fwgradcheck, harness_leaves_inputs_unchanged)
{
    uint64_t seed = 3;
    gc_input spec = REAL_S(4, 5);
    tg_tensor *in[2] = { gc_make_input(&spec, &seed), gc_make_input(&spec, &seed) };
    double before[20], after[20];
    cr_assert_eq(tg_tensor_to_doubles(in[0], before, 20), 0);
    gc_case c = { .op = "harness", .label = "y * y, sin(x)", .fn = constant_output };
    char msg[512];
    cr_expect(gc_fwgradcheck(gc_case_func(&c), in, 2, NULL, msg, sizeof msg), "%s", msg);
    cr_assert_eq(tg_tensor_to_doubles(in[0], after, 20), 0);
    cr_expect_arr_eq(before, after, sizeof before);
    for (int i = 0; i < 2; i++) {
        cr_expect(tg_tensor_requires_grad(in[i]));
        tg_tensor *g = tg_tensor_grad(in[i]);
        cr_expect_null(g);
        kt_release_all(g, in[i]);
    }
    cr_expect_eq(tg_live_tensors(), 0);
}
