/* tgen must accept PyTorch 1.13.1's own spec files (kept beside the checkout in
 * ../shared/pytorch-1.13.1; skipped when absent), type-check every derivative formula of
 * 1.13.1, 2.9.1 and 2.15.0, accept the project's spec, and its command line must behave as
 * documented. Tests run from the repository root. */
#include <criterion/criterion.h>

#include "codegen/gen_dir.h"

#define PT_DIR "../shared/pytorch-1.13.1"

Test(tgen_pytorch, checks_pytorch_files)
{
    if (access(PT_DIR "/native_functions.yaml", R_OK) || access(PT_DIR "/derivatives.yaml", R_OK))
        cr_skip_test("PyTorch's spec files are not in " PT_DIR);
    const char *args[] = { "--check", PT_DIR "/native_functions.yaml", PT_DIR "/derivatives.yaml",
                           NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "tgen --check failed (status %d):\n%s", r.status, r.err ? r.err : "");
    cr_expect_str_empty(r.err);
    /* Every formula parses, the C++ ones included (std::get<0>(...), std::tuple<...>(),
     * lambdas, `->`, `&`, `*dtype`: docs/autograd.md, "C++ forms"). */
    cr_expect(
        r.out &&
            !strncmp(r.out, "ok: 2493 functions, 639 derivatives, 1154/1154 formulas parsed\n",
                     strlen("ok: 2493 functions, 639 derivatives, 1154/1154 formulas parsed\n")),
        "unexpected summary: %s", r.out ? r.out : "");
    /* The keys tensorgen does not compile are data, counted once in the summary. */
    cr_expect(r.out && strstr(r.out, "\nnot compiled: kernels under 15 dispatch keys (MPS 260, "
                                     "SparseCPU 154, SparseCUDA 154, "),
              "no line of keys not compiled in: %s", r.out ? r.out : "");
    tgen_result_free(&r);
}

/* A misspelt key is not an error (PyTorch adds keys with each release) but it is visible: the
 * summary names it, and its entry gets stub kernels (tgen --gen). */
Test(tgen_pytorch, reports_keys_it_does_not_compile)
{
    const char *args[] = { "--check", "tests/codegen/good/misspelt_key.yaml", NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "status %d:\n%s", r.status, r.err ? r.err : "");
    cr_expect_str_eq(r.out, "ok: 2 functions, 0 derivatives\n"
                            "not compiled: kernels under 2 dispatch keys (Cuda 2, CPUU 1)\n");
    tgen_result_free(&r);
}

/* Issue 10: every derivative formula of each PyTorch release, backward and forward-mode
 * (`result:` keys), parses and type-checks under --check --strict. The native files still have errors of their own (dispatch keys, types
 * without a C mapping) that --strict reports too, so the assertion is on the lines that point
 * into derivatives.yaml, and on the formulas --verbose lists as unparsed. */
static void check_release(const char *dir)
{
    char native[256], derivs[256];
    snprintf(native, sizeof native, "%s/native_functions.yaml", dir);
    snprintf(derivs, sizeof derivs, "%s/derivatives.yaml", dir);
    if (access(native, R_OK) || access(derivs, R_OK)) {
        cr_log_warn("PyTorch's spec files are not in %s: skipped", dir);
        return;
    }
    const char *args[] = { "--check", "--strict", "--verbose", native, derivs, NULL };
    tgen_result r = tgen_run(args);
    cr_assert(r.status == 0 || r.status == 1, "%s: tgen exited %d", dir, r.status);
    int formula_errors = 0;
    const char *first = NULL;
    for (const char *p = r.err; p && (p = strstr(p, "derivatives.yaml:")); p++) {
        if (!first) first = p;
        formula_errors++;
    }
    cr_expect_eq(formula_errors, 0, "%s: %d errors in derivatives.yaml, the first:\n%.300s", dir,
                 formula_errors, first ? first : "");
    cr_expect(r.out && !strstr(r.out, "does not parse"), "%s: unparsed formulas:\n%.600s", dir,
              r.out ? r.out : "");
    tgen_result_free(&r);
}

Test(tgen_pytorch, every_formula_type_checks)
{
    check_release("../shared/pytorch-1.13.1");
    check_release("../shared/pytorch-2.9.1");
    check_release("../shared/pytorch-2.15.0");
}

/* --verbose names each formula that does not parse, at its position, with the reason. */
Test(tgen_pytorch, lists_unparsed_formulas)
{
    const char *args[] = { "--check", "--verbose", "tests/codegen/bad/formula_native.yaml",
                           "tests/codegen/bad/formula_lambda.yaml", NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "tgen --check --verbose failed:\n%s", r.err ? r.err : "");
    cr_expect_str_eq(r.out, "tests/codegen/bad/formula_lambda.yaml:2:11: formula for 'self' of "
                            "'mul.Tensor' does not parse: expected ']' (lambdas capture nothing), "
                            "found '&'\n"
                            "ok: 9 functions, 1 derivatives, 0/1 formulas parsed\n");
    tgen_result_free(&r);
}

Test(tgen_pytorch, checks_project_spec)
{
    /* --strict: the project's formulas must also type-check, as `make gen` needs. */
    bool have_derivs = access("specs/derivatives.yaml", R_OK) == 0;
    const char *args[] = { "--check", "--strict", "specs/native_functions.yaml",
                           have_derivs ? "specs/derivatives.yaml" : NULL, NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "specs/ do not check clean (status %d):\n%s", r.status,
                 r.err ? r.err : "");
    cr_expect_str_empty(r.err);
    cr_expect(r.out && !strncmp(r.out, "ok: ", 4), "unexpected summary: %s", r.out ? r.out : "");
    /* Every entry of the project's own spec is checked and generates a node (none past the
     * limits of generated nodes, which would become nodes failing in backward). */
    cr_expect(r.out && !strstr(r.out, "not checked"), "unchecked formulas: %s", r.out ? r.out : "");
    cr_expect(r.out && !strstr(r.out, "not generatable"), "entries past the limits: %s",
              r.out ? r.out : "");
    tgen_result_free(&r);
}

/* Forward-mode formulas in each form: <arg>_p, <arg>_t (a Tensor[] one too), original_self_t,
 * result, auto_linear, auto_element_wise, a joint key, not_implemented. */
Test(tgen_pytorch, checks_forward_formulas)
{
    const char *args[] = { "--check", "--strict", "tests/codegen/bad/formula_native.yaml",
                           "tests/codegen/good/forward_formulas.yaml", NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "forward_formulas.yaml does not check clean (status %d):\n%s",
                 r.status, r.err ? r.err : "");
    cr_expect_str_empty(r.err);
    cr_expect_str_eq(r.out, "ok: 9 functions, 7 derivatives, 17/17 formulas parsed\n");
    tgen_result_free(&r);
}

/* Issue 35's bugs 1, 2 and 4 in their smallest forms, which PyTorch's tools accept: a qualified
 * kernel name, gradients numbered over the differentiable outputs, an unquoted condition in
 * output_differentiability. They check clean with --strict, and what --gen writes compiles
 * (the node of add_norm hands x2 the gradient of output 3, grads[1] in PyTorch's numbering). */
Test(tgen_pytorch, accepts_what_pytorch_accepts)
{
    const char *args[] = { "--check", "--strict", "tests/codegen/good/pytorch_rules.yaml",
                           "tests/codegen/good/pytorch_rules_derivs.yaml", NULL };
    tgen_result r = tgen_run(args);
    cr_expect_eq(r.status, 0, "pytorch_rules.yaml does not check clean (status %d):\n%s", r.status,
                 r.err ? r.err : "");
    cr_expect_str_empty(r.err ? r.err : "");
    cr_expect_str_eq(r.out ? r.out : "", "ok: 3 functions, 3 derivatives, 4/4 formulas parsed\n");
    tgen_result_free(&r);

    char *dir = tgen_tmpdir("pytorch_rules");
    const char *gen[] = { "--gen",
                          "--native",
                          "tests/codegen/good/pytorch_rules.yaml",
                          "--derivatives",
                          "tests/codegen/good/pytorch_rules_derivs.yaml",
                          "--templates",
                          "templates",
                          "--out",
                          dir,
                          NULL };
    tgen_run_ok(gen, "tgen --gen");
    char *k = tgen_read_out(dir, "kernels/add_norm.h");
    cr_expect(strstr(k, "tg__cpu_legacy_cpu_add_norm(tg_tensor *x1, tg_tensor *x2);"),
              "no C symbol for legacy::cpu::add_norm:\n%s", k);
    free(k);
    char *ag = tgen_read_shards(dir, "tg_autograd");
    cr_expect(strstr(ag, "/* x2: grads[1] */\n") &&
                  strstr(strstr(ag, "/* x2: grads[1] */\n"), "tg_retain(grads[3])"),
              "x2's formula does not read output 3's gradient:\n%s", ag);
    free(ag);
    const char *const files[] = { "tg_ops.c", "tg_register.c", "tg_boxed.c", "tg_autograd.c" };
    cr_expect_eq(tgen_compile_errors(dir, files, sizeof files / sizeof files[0]), 0,
                 "generated C does not compile (commands above)");
    tgen_rmdir(dir);
}

Test(tgen_pytorch, checks_unusual_but_valid_spellings)
{
    const char *args[] = { "--check", "tests/codegen/good/edge_cases.yaml", NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "edge_cases.yaml does not check clean (status %d):\n%s", r.status,
                 r.err ? r.err : "");
    cr_expect_str_eq(r.out, "ok: 8 functions, 0 derivatives\n"
                            "not compiled: kernels under 1 dispatch key (Meta 1)\n");
    tgen_result_free(&r);
}

Test(tgen_cli, help_and_usage)
{
    const char *help[] = { "--help", NULL };
    tgen_result r = tgen_run(help);
    cr_expect_eq(r.status, 0);
    cr_expect(r.out && strstr(r.out, "tgen --check"), "no usage on stdout");
    tgen_result_free(&r);

    const char *bad[] = { "--frobnicate", NULL };
    r = tgen_run(bad);
    cr_expect_eq(r.status, 2, "a bad command line must exit 2, got %d", r.status);
    cr_expect(r.err && strstr(r.err, "usage:"), "no usage on stderr");
    tgen_result_free(&r);

    const char *gen_missing[] = { "--gen", "--native", "specs/native_functions.yaml", NULL };
    r = tgen_run(gen_missing);
    cr_expect_eq(r.status, 2, "--gen without --templates/--out must exit 2, got %d", r.status);
    tgen_result_free(&r);
}

/* A bad --namespace value is a bad command line (exit 2, one line naming the rule), with
 * --check and --gen alike, before any spec is read (issue 35, bug 6). */
Test(tgen_cli, bad_namespace_exits_2)
{
    const char *expected = "tgen: --namespace 'My-ops': a namespace is a lower-case C identifier "
                           "not ending in '_', other than 'aten' and 'tg'\n";
    const char *check[] = { "--check", "--namespace", "My-ops", "tests/codegen/bad/ns_native.yaml",
                            NULL };
    tgen_result r = tgen_run(check);
    cr_expect_eq(r.status, 2, "--check --namespace My-ops must exit 2, got %d", r.status);
    cr_expect_str_eq(r.err ? r.err : "", expected);
    tgen_result_free(&r);

    const char *gen[] = {
        "--gen", "--namespace",      "aten", "--native", "tests/codegen/bad/ns_native.yaml",
        "--out", "/nonexistent/out", NULL
    };
    r = tgen_run(gen);
    cr_expect_eq(r.status, 2, "--gen --namespace aten must exit 2, got %d", r.status);
    cr_expect(r.err && strstr(r.err, "--namespace 'aten'"), "no reason on stderr: %s", r.err);
    tgen_result_free(&r);
}
