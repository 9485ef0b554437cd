/* Selections (tgen --select, docs/generated-code.md "Selective builds"):
 * - kernel_library_checks: ExecuTorch's kernel-library form (tests/codegen/good/kernel_lib.yaml)
 *   checks against the project's spec, with the summary lines saying what was read and what
 *   is kept as data;
 * - gen_writes_the_closure_only: --gen --select writes only the selected operators and what
 *   the spec says they need (structured delegate, derivative formulas, the engine's
 *   operators), and nothing for the others;
 * - gen_leaves_out_custom_operators: a selection picks tensorgen's operators; the file's custom
 *   ones are left out, said once with how to generate them.
 * Malformed selections are rows of tests/codegen/errors.tsv (kl_*). The build itself
 * (make SELECT=) is tests/build/select_check.sh. */
#include <criterion/criterion.h>

#include "codegen/gen_dir.h"

Test(tgen_select, kernel_library_checks)
{
    const char *args[] = { "--check", "--select", "tests/codegen/good/kernel_lib.yaml",
                           "specs/native_functions.yaml", NULL };
    tgen_result r = tgen_run(args);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "selection tests/codegen/good/kernel_lib.yaml: 4 entries: 3 core "
                            "operators (1 declared with 'func:'), 1 custom operators (myops 1)"),
              "%s", r.out);
    cr_expect(strstr(r.out, "not compiled: 5 kernels named (C symbols: '::' becomes '__'; "
                            "tensorgen's kernels serve the core operators), 1 with arg_meta, 2 "
                            "aliases; the custom operators; fields kept as data: tags 1, "
                            "variants 2\n"),
              "%s", r.out);
    tgen_result_free(&r);
}

/* Whether the generated op table names the operator `name` (its row's schema name). */
static bool has_row(const char *op_list, const char *name)
{
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\")", name);
    return strstr(op_list, quoted) != NULL;
}

Test(tgen_select, gen_writes_the_closure_only)
{
    char *dir = tgen_tmpdir("select");
    const char *args[] = { "--gen",
                           "--select",
                           "tests/build/select/ops.txt",
                           "--native",
                           "specs/native_functions.yaml",
                           "--derivatives",
                           "specs/derivatives.yaml",
                           "--runtime",
                           "runtime",
                           "--templates",
                           "templates",
                           "--out",
                           dir,
                           NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "tgen: selected 4 operators: "), "%s", r.out);
    char *list = tgen_read_out(dir, "tg_op_list.h");
    /* selected; the delegate of add.Tensor; what mul's and relu's formulas call; the engine's */
    const char *present[] = { "add.Tensor", "mul.Tensor", "sum.dim_IntList",
                              "relu",       "add.out",    "threshold_backward",
                              "zeros",      "ones_like",  "clone" };
    for (size_t i = 0; i < sizeof present / sizeof *present; i++)
        cr_expect(has_row(list, present[i]), "'%s' is missing from the selection", present[i]);
    const char *absent[] = { "conv2d", "softmax.int", "embedding", "matmul", "layer_norm" };
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
        cr_expect(!has_row(list, absent[i]), "'%s' is in the selection", absent[i]);
    free(list);
    char path[600];
    snprintf(path, sizeof path, "%s/ops/conv2d.h", dir);
    cr_expect(access(path, F_OK) != 0, "%s was written", path);
    tgen_result_free(&r);
    tgen_rmdir(dir);
}

Test(tgen_select, gen_leaves_out_custom_operators)
{
    char *dir = tgen_tmpdir("select_custom");
    const char *args[] = { "--gen",
                           "--select",
                           "tests/codegen/good/kernel_lib.yaml",
                           "--native",
                           "specs/native_functions.yaml",
                           "--templates",
                           "templates",
                           "--out",
                           dir,
                           NULL };
    tgen_result r = tgen_run(args);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "tgen: selected 3 operators: "), "%s", r.out);
    cr_expect(strstr(r.out, "tgen: left out 1 custom operators (myops 1): generate them as an "
                            "operator library (tgen --namespace)\n"),
              "%s", r.out);
    char *list = tgen_read_out(dir, "tg_op_list.h");
    cr_expect(has_row(list, "add.out") && has_row(list, "relu") && has_row(list, "mul.Tensor"));
    cr_expect(!strstr(list, "scale"));
    free(list);
    tgen_result_free(&r);
    tgen_rmdir(dir);
}
