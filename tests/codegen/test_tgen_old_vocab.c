/* PyTorch 1.5's autograd vocabulary (issue 35): a 1.5-style derivatives file
 * (tests/codegen/emit/old_vocab*.yaml) calls helpers by names PyTorch has since renamed
 * (codegen/formula/formula_renames.c: resolved by tgen, counted in --check's summary) and with
 * signatures that have since changed (specs/autograd_functions-1.5.yaml, stacked over today's
 * vocabulary with a second --autograd-functions); and writes C++ that still compiles in
 * today's PyTorch: a MemoryFormat where TensorOptions stands, `{}` for a Tensor?,
 * std::vector<int64_t>{...}, `indices: TensorList()`. Tests run from the repository root with
 * $TGEN. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "codegen/gen_dir.h"

#define SPEC "tests/codegen/emit/old_vocab.yaml"
#define DERIVS "tests/codegen/emit/old_vocab_derivs.yaml"
#define TODAY "specs/autograd_functions.yaml"
#define V1_5 "specs/autograd_functions-1.5.yaml"

static const char renamed_line[] = "older names of autograd helpers resolved: "
                                   "index_select_backward 1 (now "
                                   "value_selecting_reduction_backward)\n";

/* Today's vocabulary alone: the rename resolves, the 1.5-only signature does not. */
Test(tgen_old_vocab, today_vocabulary_lacks_the_1_5_signature)
{
    const char *args[] = {
        "--check", "--strict", "--autograd-functions", TODAY, SPEC, DERIVS, NULL
    };
    tgen_result r = tgen_run(args);
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err ? r.err : "", DERIVS ":9:9: error: 'var_backward' takes 5 arguments, "
                                                "not 3\n");
    tgen_result_free(&r);
}

Test(tgen_old_vocab, stacked_vocabulary_checks_and_counts_the_renames)
{
    const char *args[] = {
        "--check", "--strict", "--autograd-functions", TODAY, "--autograd-functions", V1_5, SPEC,
        DERIVS,    NULL
    };
    tgen_result r = tgen_run(args);
    cr_expect_eq(r.status, 0, "%s", r.err ? r.err : "");
    char want[512];
    snprintf(want, sizeof want,
             "ok: 8 functions, 5 derivatives, 5/5 formulas parsed\n"
             "not used: 1 field read as data (supports_named_tensor 2)\n%s",
             renamed_line);
    cr_expect_str_eq(r.out ? r.out : "", want);
    tgen_result_free(&r);
}

/* What the forms compile to: today's helper under its new name, the 1.5 overload's own C
 * function, the memory format in the options struct's memory_format (the TensorOptions group
 * keeps its defaults), NULL for `{}`, the brace-initialized vector as a list. */
Test(tgen_old_vocab, generates_compilable_c)
{
    char *dir = tgen_tmpdir("old_vocab");
    const char *args[] = { "--gen",     "--native",
                           SPEC,        "--derivatives",
                           DERIVS,      "--autograd-functions",
                           TODAY,       "--autograd-functions",
                           V1_5,        "--templates",
                           "templates", "--out",
                           dir,         NULL };
    tgen_run_ok(args, "tgen --gen");
    char *c = tgen_read_shards(dir, "tg_autograd");
    const char *const want[] = {
        "tg__grad_value_selecting_reduction_backward(grads[0], n->dim, s_result1, "
        "tg__saved_sizes_list(&n->self_sizes), n->keepdim)",
        "tg__grad_var_backward_v1_5(grads[0], s_self, n->unbiased)",
        "tg_zeros_like_fn(grads[0], (tg_zeros_like_opts){ .dtype = TG_DTYPE_NONE, .layout = "
        "TG_LAYOUT_NONE, .device = { TG_DEVICE_NONE, -1 }, .pin_memory = TG_NONE_BOOL, "
        ".memory_format = TG_PRESERVE_FORMAT })",
        "tg_conv_double(grads[0], s_other, NULL, grads[0], (tg_int_list){ .len = 2, .data = "
        "(const int64_t[]){ n->sizes.data[INT64_C(0)], INT64_C(1) } })",
    };
    tgen_expect_each(c, want, sizeof want / sizeof want[0], "tg_autograd.c");
    const char *const files[] = { "tg_autograd*.c" };
    cr_expect_eq(tgen_compile_errors(dir, files, 1), 0,
                 "generated C does not compile (commands above)");
    free(c);
    tgen_rmdir(dir);
}

/* Files stack: a later one's entry replaces an earlier one's of the same name.overload. */
Test(tgen_old_vocab, later_vocabulary_replaces_an_entry)
{
    char *dir = tgen_tmpdir("old_vocab_stack");
    tgen_write_file(dir, "one.yaml", "- func: helper(Tensor x) -> Tensor\n");
    tgen_write_file(dir, "two.yaml", "- func: helper(Tensor x, int k) -> Tensor\n");
    tgen_write_file(dir, "derivs.yaml",
                    "- name: relu(Tensor self) -> Tensor\n"
                    "  self: helper(grad)\n");
    char one[300], two[300], derivs[300];
    snprintf(one, sizeof one, "%s/one.yaml", dir);
    snprintf(two, sizeof two, "%s/two.yaml", dir);
    snprintf(derivs, sizeof derivs, "%s/derivs.yaml", dir);
    const char *one_two[] = {
        "--check", "--strict", "--autograd-functions", one, "--autograd-functions", two, SPEC,
        derivs,    NULL
    };
    tgen_result r = tgen_run(one_two);
    cr_expect_eq(r.status, 1);
    cr_expect(r.err && strstr(r.err, "error: 'helper' takes 2 arguments, not 1"), "%s",
              r.err ? r.err : "");
    tgen_result_free(&r);
    const char *two_one[] = {
        "--check", "--strict", "--autograd-functions", two, "--autograd-functions", one, SPEC,
        derivs,    NULL
    };
    r = tgen_run(two_one);
    cr_expect_eq(r.status, 0, "%s", r.err ? r.err : "");
    tgen_result_free(&r);
    tgen_rmdir(dir);
}
