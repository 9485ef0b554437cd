/* Selections (tgen --select, docs/generated-code.md "Selective builds"):
 * - kernel_library_checks: ExecuTorch's kernel-library form (tests/codegen/good/kernel_lib.yaml)
 *   checks against the project's spec, with the summary lines saying what was read, how the
 *   custom operators generate and what is kept as data;
 * - several_selections_in_one_run: --check takes --select several times, one summary per file
 *   that checks, each file's errors at its own lines; --gen takes one;
 * - gen_writes_the_closure_only: --gen --select writes only the selected operators and what
 *   the spec says they need (structured delegate, derivative formulas, the engine's
 *   operators), and nothing for the others;
 * - gen_writes_custom_libraries: the file's custom operators are an operator library per
 *   namespace (aten's: aten_custom) beside the selection, whose CPU kernels are the entries'
 *   `arg_meta: null` kernel names with '::' as '_' (an overloaded name: '__' and the C name
 *   appended), and every generated file compiles.
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
    cr_expect(strstr(r.out, "selection tests/codegen/good/kernel_lib.yaml: 6 entries: 3 core "
                            "operators (1 declared with 'func:'), 3 custom operators; with what "
                            "they call: "),
              "%s", r.out);
    cr_expect(strstr(r.out, "custom operators, one library each: myops 2, aten_custom 1 (aten's); "
                            "CPU kernel: the 'arg_meta: null' kernel_name, '::' as '_'; 2 named "
                            "for operators of other C types (overloads): each symbol gets '__' "
                            "and its operator's C name\n"),
              "%s", r.out);
    cr_expect(strstr(r.out, "not compiled: 3 kernels named by core operators (tensorgen's serve "
                            "them); 1 kernels with arg_meta (by dtype and dim order: tensorgen "
                            "selects kernels by device only), 2 aliases\n"),
              "%s", r.out);
    cr_expect(strstr(r.out, "not used: 3 fields read as data (tags 1, variants 2)\n"), "%s", r.out);
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

Test(tgen_select, several_selections_in_one_run)
{
    const char *args[] = { "--check",
                           "--select",
                           "tests/codegen/good/kernel_lib.yaml",
                           "--select",
                           "tests/codegen/bad/kl_unknown_op.yaml",
                           "--select",
                           "tests/build/select/ops.txt",
                           "specs/native_functions.yaml",
                           NULL };
    tgen_result r = tgen_run(args);
    cr_expect_eq(r.status, 1, "stdout: %s", r.out);
    /* the files that check are summarised, in order; the core's own lines wait for all */
    const char *first = strstr(r.out, "selection tests/codegen/good/kernel_lib.yaml: 6 entries");
    const char *third = strstr(r.out, "selection tests/build/select/ops.txt: 4 entries");
    cr_expect(first && third && first < third, "%s", r.out);
    cr_expect(!strstr(r.out, "kl_unknown_op") && !strstr(r.out, "ok: "), "%s", r.out);
    cr_expect(strstr(r.err, "tests/codegen/bad/kl_unknown_op.yaml:6:7: error: 'add.Tenser' is not "
                            "an operator of the core spec; the nearest is 'add.Tensor'\n"),
              "%s", r.err);
    cr_expect(!strstr(r.err, "kernel_lib.yaml") && !strstr(r.err, "ops.txt"), "%s", r.err);
    tgen_result_free(&r);

    const char *gen[] = { "--gen",
                          "--select",
                          "tests/codegen/good/kernel_lib.yaml",
                          "--select",
                          "tests/build/select/ops.txt",
                          "--native",
                          "specs/native_functions.yaml",
                          "--out",
                          "/tmp/tgen_select_never_written",
                          NULL };
    r = tgen_run(gen);
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "--gen takes one --select"), "%s", r.err);
    tgen_result_free(&r);
}

/* Whether `text` declares `symbol` as a function: "<symbol>(" after a space or '*'. */
static bool declares(const char *text, const char *symbol)
{
    size_t n = strlen(symbol);
    for (const char *p = strstr(text, symbol); p; p = strstr(p + 1, symbol))
        if (p > text && (p[-1] == '*' || p[-1] == ' ') && p[n] == '(') return true;
    return false;
}

Test(tgen_select, gen_writes_custom_libraries)
{
    char *dir = tgen_tmpdir("select_custom");
    const char *args[] = { "--gen",
                           "--select",
                           "tests/codegen/good/kernel_lib.yaml",
                           "--native",
                           "specs/native_functions.yaml",
                           "--runtime",
                           "runtime",
                           "--templates",
                           "templates",
                           "--out",
                           dir,
                           NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect(strstr(r.out, "tgen: selected 3 operators: "), "%s", r.out);
    cr_expect(strstr(r.out, "tgen: 3 custom operators, one library each: myops 2, aten_custom 1 "
                            "(aten's) (their files: <ns>_*.c, <ns>/ in "),
              "%s", r.out);
    /* the selection holds tensorgen's operators only */
    char *list = tgen_read_out(dir, "tg_op_list.h");
    cr_expect(has_row(list, "add.out") && has_row(list, "relu") && has_row(list, "mul.Tensor"));
    cr_expect(!strstr(list, "scale") && !strstr(list, "nearly_equal"));
    free(list);
    /* the custom operators: their libraries' tables and the kernels the file names */
    char *mylist = tgen_read_out(dir, "myops_op_list.h");
    cr_expect(has_row(mylist, "myops::scale.out") && has_row(mylist, "myops::scale.Tensor_out"),
              "%s", mylist);
    free(mylist);
    char *scale = tgen_read_out(dir, "myops/kernels/scale.h");
    cr_expect(declares(scale, "myops_scale_out__scale_out"), "%s", scale);
    cr_expect(declares(scale, "myops_scale_out__scale_tensor_out"), "%s", scale);
    cr_expect(!strstr(scale, "scale_out_float"), "an arg_meta kernel was declared: %s", scale);
    free(scale);
    char *near = tgen_read_out(dir, "aten_custom/kernels/nearly_equal.h");
    cr_expect(declares(near, "torch_executor_nearly_equal_out"), "%s", near);
    free(near);
    char *reg = tgen_read_out(dir, "aten_custom_op_list.h");
    cr_expect(has_row(reg, "aten_custom::nearly_equal.out"), "%s", reg);
    free(reg);
    const char *files[] = { "*.c" };
    cr_expect_eq(tgen_compile_errors(dir, files, 1), 0, "generated C does not compile");
    tgen_result_free(&r);
    tgen_rmdir(dir);
}
