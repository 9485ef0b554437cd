/* tgen's back end: errors found while emitting (unsupported types, C-name and kernel-symbol
 * collisions, structured entries without a backend kernel), the corner cases of the emitted C
 * (every argument defaulted, list/str/ident defaults, C keywords as argument names, unnamed
 * multiple returns, structured and autogen glue, CUDA rows), and rewriting only changed files.
 * Tests run from the repository root with $TGEN (default build/tgen). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/gen_dir.h"

static tgen_result gen(const char *spec, const char *out)
{
    const char *args[] = {
        "--gen", "--native", spec, "--templates", "templates", "--out", out, NULL
    };
    return tgen_run(args);
}

/* gen(), failing the test unless tgen succeeds. */
static void gen_ok(const char *spec, const char *out)
{
    tgen_result r = gen(spec, out);
    cr_assert_eq(r.status, 0, "tgen failed:\n%s", r.err ? r.err : "");
    tgen_result_free(&r);
}

static bool have(const char *cc)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", cc);
    return system(cmd) == 0;
}

Test(tgen_emit, errors_name_the_entry_and_write_nothing)
{
    char *dir = tgen_tmpdir("emit");
    char *expected = tgen_slurp("tests/codegen/emit/emit_errors.expected");
    cr_assert(expected, "cannot read tests/codegen/emit/emit_errors.expected");
    tgen_result r = gen("tests/codegen/emit/emit_errors.yaml", dir);
    cr_expect_eq(r.status, 1, "exit status %d, expected 1", r.status);
    cr_expect_str_eq(r.err ? r.err : "", expected, "stderr differs:\n%s", r.err ? r.err : "");
    char path[512];
    snprintf(path, sizeof path, "%s/tg_ops.h", dir);
    cr_expect(access(path, F_OK) != 0, "tgen wrote %s despite errors", path);
    tgen_result_free(&r);
    free(expected);
    tgen_rmdir(dir);
}

/* A user of the edge-case operators, compiled against the generated header. */
static const char *const edge_user =
    "#include \"tg_ops.h\"\n"
    "tg_tensor *edge_user(tg_tensor *x);\n"
    "tg_tensor *edge_user(tg_tensor *x) {\n"
    "    tg_tensor *a = tg_edge_all_defaults();\n"
    "    tg_tensor *b = tg_edge_all_defaults(.n = 4, .device = TG_DEVICE_CPU);\n"
    "    tg_tensor *c = tg_edge_lists(x, .stride = TG_INTS(2, 2), .mode = \"sum\", .flag = false);\n"
    "    tg_tensor *d = tg_edge_lists(x);\n"
    "    tg_tensors2 e = tg_edge_multi(x);\n"
    "    tg_tensor *f = tg_edge_keyword(x, 1, .double_ = 3);\n"
    "    tg_tensor *g = tg_edge_fn(x, .other = x);\n"
    "    tg_tensor *h = tg_edge_sc_out(x, 2.0, g);\n"
    "    tg_release(a); tg_release(b); tg_release(c); tg_release(d); tg_release(e.r0);\n"
    "    tg_release(e.r1); tg_release(f); tg_release(h);\n"
    "    return g;\n"
    "}\n";

Test(tgen_emit, edge_cases_compile_warning_free)
{
    char *dir = tgen_tmpdir("emit");
    gen_ok("tests/codegen/emit/edge.yaml", dir);

    tgen_write_file(dir, "edge_user.c", edge_user);

    const char *const sources[] = { "edge_user.c", "tg_ops.c", "tg_register.c", "tg_structured.c",
                                    "tg_boxed.c" };
    cr_expect_eq(tgen_compile_errors(dir, sources, sizeof sources / sizeof sources[0]), 0);
    tgen_rmdir(dir);
}

/* The generated sources every emit test compiles. */
static const char *const generated_sources[] = { "tg_ops.c", "tg_register.c", "tg_structured.c",
                                                 "tg_boxed.c", "tg_register_cuda.c" };

/* The clashes PyTorch's spec makes in C resolve by the naming and kernel rules, the result
 * compiles warning-free against the real runtime (whose tg_item the operator `item` must
 * avoid), and entries with no compiled kernel get stubs that fail naming the backend. */
Test(tgen_emit, clashing_names_and_kernels_resolve)
{
    char *dir = tgen_tmpdir("emit");
    const char *args[] = { "--gen",       "--native",  "tests/codegen/emit/clashes.yaml",
                           "--templates", "templates", "--out",
                           dir,           "--runtime", "runtime",
                           NULL };
    tgen_run_ok(args, "tgen");
    char path[512];
    char *h = tgen_slurp_public(dir);
    cr_assert(h, "no tg_ops.h in %s", dir);
    const char *const names[] = {
        "tg_tensor *tg_clamp_fn(",
        "tg_tensor *tg_clamp_tensor_fn(",
        "tg_tensor *tg_isin_tensor_scalar(",
        "tg_tensor *tg_isin_scalar_tensor(",
        "tg_tensor *tg_range_out_fn(",
        "tg_tensor *tg_range_out_(",
        "double tg_item_op(",
        "Kernel: tg__cpu_bar. */\ntg_tensor *tg_baz(tg_tensor *self);",
        "tg_tensor *tg_baz_op(",
        "tg_tensor *tg_sparse_only(",
        /* issue 35, bug 3: the `.` written `__` where nothing else tells the two apart */
        "tg_tensor *tg_relu_per_tensor__out(tg_tensor *self, tg_tensor *out);",
        "tg_tensor *tg_relu__per_tensor_out(tg_tensor *self, int64_t zero_point, tg_tensor *out);",
    };
    tgen_expect_each(h, names, sizeof names / sizeof names[0], "tg_ops.h");
    free(h);
    char *k = tgen_slurp_headers(dir, "tg_kernels.h", "kernels");
    cr_assert(k, "no tg_kernels.h in %s", dir);
    cr_expect(strstr(k, "tg__cpu_clamp__clamp(") && strstr(k, "tg__cpu_clamp__clamp_tensor("),
              "the two types of kernel `clamp` do not get a symbol each");
    /* issue 35, bug 1: qualified kernel names make C symbols; at::native::qualified_cpu and
     * qualified_cpu are one kernel, as in PyTorch. */
    const char *const kernels[] = {
        "tg_tensor *tg__cpu_qualified_cpu(tg_tensor *self);",
        "tg_tensor *tg__cuda_legacy_cuda__th_qualified(tg_tensor *self);",
        "Kernel: tg__cpu_qualified_cpu. */\ntg_tensor *tg_qualified_twin(",
    };
    tgen_expect_each(k, kernels, 2, "kernels/");
    cr_expect(!strstr(k, "::"), "a kernel symbol keeps a '::'");
    free(k);
    h = tgen_slurp_public(dir);
    tgen_expect_each(h, kernels + 2, 1, "tg_ops.h");
    free(h);
    snprintf(path, sizeof path, "%s/tg_structured.c", dir);
    char *g = tgen_slurp(path);
    cr_assert(g, "no %s", path);
    cr_expect(strstr(g, "tg__missing_cpu_sparse_only(") &&
                  strstr(g, "\"'%s' is not implemented for CPU (%s)\", \"sparse_only\", "
                            "\"its kernels are for SparseCPU, SparseCsrXPU\""),
              "no stub for sparse_only's CPU kernel:\n%s", g);
    cr_expect(strstr(g, "tg__structured_cpu_qux("), "no glue from qux to qux.out's kernel");
    free(g);
    /* CUDA's glue and stubs are the CUDA backend's */
    g = tgen_read_out(dir, "tg_register_cuda.c");
    cr_expect(strstr(g, "tg__missing_cuda_qux_out(") &&
                  strstr(g, "{ \"qux.out\", TG_KEY_CUDA, (tg_fnptr)tg__missing_cuda_qux_out },"),
              "no CUDA stub for qux.out, or not in the CUDA table:\n%s", g);
    free(g);
    cr_expect_eq(tgen_compile_errors(dir, generated_sources, 5), 0);
    tgen_rmdir(dir);
}

/* Autogen glue: the functional variant of an in-place entry (clone, run in place), of a
 * mutable one (its written argument returned as a second result), and out= variants with one
 * and two results. */
Test(tgen_emit, autogen_forms_compile)
{
    char *dir = tgen_tmpdir("emit");
    gen_ok("tests/codegen/emit/autogen_forms.yaml", dir);
    char path[512];
    snprintf(path, sizeof path, "%s/tg_structured.c", dir);
    char *g = tgen_slurp(path);
    cr_assert(g, "no %s", path);
    cr_expect(strstr(g, "tg_tensor *tg_c_self = tg_tensor_copy(\"relu\", self);") &&
                  strstr(g, "tg_tensor *tg_r = tg__cpu_relu_(tg_c_self);"),
              "relu is not relu_ on a clone:\n%s", g);
    cr_expect(strstr(g, "tg_tensor *tg_r = tg__functional_cpu_relu(self);"),
              "relu.out does not wrap relu's glue");
    cr_expect(strstr(g, "tg_tensor *tg_o1 = tg_copy_to_out(\"minmax\", out1, tg_r.max);") &&
                  strstr(g, "return (tg_min_max){ tg_o0, tg_o1 };"),
              "minmax.out does not copy both results");
    cr_expect(strstr(g, "return (tg_tensors2){ tg_r, tg_c_running_mean };"),
              "update_stats_functional does not return the updated running_mean");
    free(g);
    cr_expect_eq(tgen_compile_errors(dir, generated_sources, 5), 0);
    tgen_rmdir(dir);
}

Test(tgen_emit, rewrites_only_changed_files)
{
    char *dir = tgen_tmpdir("emit");
    tgen_result r1 = gen("tests/codegen/emit/edge.yaml", dir);
    cr_assert_eq(r1.status, 0, "tgen failed:\n%s", r1.err ? r1.err : "");
    cr_expect(r1.out && strstr(r1.out, "tg_ops.h"), "first run wrote nothing: %s",
              r1.out ? r1.out : "");
    char path[512];
    snprintf(path, sizeof path, "%s/tg_ops.c", dir);
    struct stat before, after;
    cr_assert(stat(path, &before) == 0);
    tgen_result r2 = gen("tests/codegen/emit/edge.yaml", dir);
    cr_assert_eq(r2.status, 0);
    cr_expect_str_empty(r2.out ? r2.out : "", "second run rewrote files: %s", r2.out ? r2.out : "");
    cr_assert(stat(path, &after) == 0);
    cr_expect(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
                  before.st_mtim.tv_nsec == after.st_mtim.tv_nsec,
              "tg_ops.c was touched");
    tgen_result_free(&r1);
    tgen_result_free(&r2);
    tgen_rmdir(dir);
}

/* The text of a file (NULL when it cannot be read). */
static char *slurp_in(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return tgen_slurp(path);
}

/* Writes the spec edge.yaml, plus `extra` after it, to <dir>/spec.yaml: one path, so that the
 * generated-by line every file starts with stays the same. */
static const char *write_spec(const char *dir, const char *extra)
{
    static char path[512];
    char *spec = tgen_slurp("tests/codegen/emit/edge.yaml");
    cr_assert(spec);
    snprintf(path, sizeof path, "%s/spec.yaml", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "%s%s", spec, extra);
    fclose(f);
    free(spec);
    return path;
}

/* One header per operator (docs/generated-code.md, "Headers"): adding an operator writes its two
 * headers and the files that name every operator, and no other operator's header nor
 * tg_structured.c; removing it again deletes its headers. */
Test(tgen_emit, adding_an_operator_adds_its_headers_only)
{
    char *dir = tgen_tmpdir("emit");
    tgen_result r1 = gen(write_spec(dir, ""), dir);
    cr_assert_eq(r1.status, 0, "tgen failed:\n%s", r1.err ? r1.err : "");
    cr_expect(r1.out && strstr(r1.out, "/ops/edge_lists.h") &&
                  strstr(r1.out, "/kernels/edge_lists.h"),
              "no per-operator headers written: %s", r1.out ? r1.out : "");

    tgen_result r2 = gen(
        write_spec(
            dir, "\n- func: edge_added(Tensor self) -> Tensor\n  dispatch:\n    CPU: edge_added\n"),
        dir);
    cr_assert_eq(r2.status, 0, "tgen failed:\n%s", r2.err ? r2.err : "");
    const char *out = r2.out ? r2.out : "";
    cr_expect(strstr(out, "/ops/edge_added.h") && strstr(out, "/kernels/edge_added.h"),
              "the new operator's headers were not written: %s", out);
    /* Every operator header written is the new operator's. */
    for (const char *p = out; (p = strstr(p, "s/edge_")) != NULL; p++)
        cr_expect(strncmp(p, "s/edge_added.h", 14) == 0, "another operator's header rewritten: %s",
                  out);
    cr_expect(!strstr(out, "tg_structured.c") && !strstr(out, "tg_op_types.h"),
              "tg_structured.c or tg_op_types.h rewritten: %s", out);
    char *kh = slurp_in(dir, "kernels/edge_added.h");
    cr_expect(kh && strstr(kh, "tg_tensor *tg__cpu_edge_added(tg_tensor *self);"),
              "kernels/edge_added.h lacks the prototype: %s", kh ? kh : "(none)");
    char *umbrella = slurp_in(dir, "tg_kernels.h");
    cr_expect(umbrella && strstr(umbrella, "#include \"kernels/edge_added.h\""),
              "tg_kernels.h does not include the new header");

    tgen_result r3 = gen(write_spec(dir, ""), dir);
    cr_assert_eq(r3.status, 0, "tgen failed:\n%s", r3.err ? r3.err : "");
    cr_expect(r3.out && strstr(r3.out, "tgen: removed") && strstr(r3.out, "/ops/edge_added.h"),
              "the removed operator's headers were not deleted: %s", r3.out ? r3.out : "");
    char path[512];
    snprintf(path, sizeof path, "%s/kernels/edge_added.h", dir);
    cr_expect(access(path, F_OK) != 0, "%s still exists", path);

    free(umbrella);
    free(kh);
    tgen_result_free(&r1);
    tgen_result_free(&r2);
    tgen_result_free(&r3);
    tgen_rmdir(dir);
}

/* Each operator header compiles on its own (a kernel file includes only those it needs). */
Test(tgen_emit, operator_headers_are_self_contained)
{
    if (!have("gcc")) return;
    char *dir = tgen_tmpdir("emit");
    gen_ok("tests/codegen/emit/edge.yaml", dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && for h in ops/*.h kernels/*.h tg_op_types.h; do "
             "gcc -std=c11 -Wall -Wextra -Werror -I'%s/runtime' -I. -fsyntax-only -x c \"$h\" "
             "|| exit 1; done",
             dir, getenv("PWD") ? getenv("PWD") : ".");
    cr_expect_eq(system(cmd), 0, "failed: %s", cmd);
    tgen_rmdir(dir);
}

/* A formula calling an autograd vocabulary function: the call compiles to tg__grad_<name>,
 * declared once from the vocabulary's signature before the nodes; functions no formula calls
 * are not declared; the generated file compiles (linking needs the runtime's definition). */
Test(tgen_emit, vocabulary_calls)
{
    char *dir = tgen_tmpdir("emit");
    const char *args[] = { "--gen",
                           "--native",
                           "tests/codegen/bad/formula_native.yaml",
                           "--derivatives",
                           "tests/codegen/emit/vocab_derivs.yaml",
                           "--autograd-functions",
                           "tests/codegen/emit/vocab_functions.yaml",
                           "--templates",
                           "templates",
                           "--out",
                           dir,
                           NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "tgen --gen failed:\n%s", r.err ? r.err : "");
    char path[600];
    snprintf(path, sizeof path, "%s/tg_autograd.c", dir);
    char *c = tgen_slurp(path);
    cr_assert(c, "no %s", path);
    const char *proto =
        strstr(c, "\ntg_tensor *tg__grad_maybe_multiply(tg_tensor *t, double s);\n");
    const char *call = strstr(c, "tg__grad_maybe_multiply(t0, (double)(INT64_C(2)))");
    cr_expect(proto && call && proto < call, "no prototype before the call in:\n%s", c);
    cr_expect(!strstr(c, "tg__grad_norm_backward"), "an uncalled helper is declared");
    free(c);
    const char *const files[] = { "tg_autograd.c" };
    cr_expect_eq(tgen_compile_errors(dir, files, 1), 0, "generated C does not compile");
    tgen_result_free(&r);
    tgen_rmdir(dir);
}

/* tgen --gen --namespace testops: the test operator library (tests/library/testops), with its
 * derivatives file when derivs, importing tensorgen's operators, into dir; fails unless it
 * succeeds. */
static void gen_testops(const char *dir, bool derivs)
{
    const char *args[16] = { "--gen", "--namespace", "testops", "--native",
                             "tests/library/testops/testops.yaml" };
    int n = 5;
    if (derivs) {
        args[n++] = "--derivatives";
        args[n++] = "tests/library/testops/testops_derivatives.yaml";
    }
    const char *const rest[] = {
        "--import", "generated/tensorgen_api.yaml", "--templates", "templates", "--out", dir, NULL
    };
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) args[n++] = rest[i];
    tgen_run_ok(args, "tgen --gen --namespace");
}

/* An operator library (tgen --namespace, docs/extending.md): the test library's spec generates
 * files, names and a registration of its own prefix, with no name of tensorgen's own table or
 * engine, and every source compiles warning-free against tensorgen's headers, with and without
 * its CUDA kernel table. */
Test(tgen_emit, operator_library)
{
    char *dir = tgen_tmpdir("lib");
    gen_testops(dir, true);
    /* Its per-operator headers live under testops/: its `scale` must not shadow a core
     * operator's ops/scale.h on an include path holding both. */
    char *h = tgen_slurp_headers(dir, "testops_ops.h", "testops/ops");
    cr_assert(h, "no testops_ops.h in %s", dir);
    char path[600];
    snprintf(path, sizeof path, "%s/ops", dir);
    cr_expect(access(path, F_OK) != 0, "a library wrote %s", path);
    const char *const decls[] = {
        "#include \"testops/ops/scale.h\"",
        "TESTOPS_OP_SCALE,",
        "tg_tensor *testops_scale_fn(tg_tensor *self, testops_scale_opts opts);",
        "#define testops_scale(self, ...)",
        "tg_tensor *testops_clamp_max(tg_tensor *self, double limit);",
    };
    tgen_expect_each(h, decls, sizeof decls / sizeof decls[0], "testops_ops.h");
    cr_expect(!strstr(h, "tg_scale") && !strstr(h, "TG_OP_"), "a name with tensorgen's prefix");
    free(h);
    char *types = tgen_read_out(dir, "testops_op_types.h");
    cr_expect(strstr(types, "typedef struct testops_above_below {"), "result struct:\n%s", types);
    free(types);
    /* The rows beside the operators' functions (one shard for a small library), the table
     * of pointers to them in op order, and the library's registration. */
    char *reg = tgen_read_out(dir, "testops_register.c");
    cr_expect(strstr(reg, "tg_op_entry *const testops__ops[TESTOPS_NUM_OPS] = {") &&
                  strstr(reg, "&testops__row_scale_out,") &&
                  strstr(reg, "TG_LIBRARY_ABI, \"testops\", testops__ops, TESTOPS_NUM_OPS") &&
                  strstr(reg, "__attribute__((constructor))") && !strstr(reg, "tg__generated_ops"),
              "registration:\n%s", reg);
    free(reg);
    char *rows = tgen_read_out(dir, "testops_ops.c");
    cr_expect(strstr(rows, "tg_op_entry testops__row_scale_out = {") &&
                  strstr(rows, ".name = \"testops::scale.out\","),
              "the rows:\n%s", rows);
    free(rows);
    char *ag = tgen_read_out(dir, "testops_autograd.c");
    cr_expect(strstr(ag, "testops__autograd_kernel_scale(") && !strstr(ag, "tg__autograd_zeros"),
              "autograd kernels of the library's prefix and no engine calls");
    /* mul_scaled_(Tensor other, Tensor(a!) self, ...): the runtime is told where self is. */
    cr_expect(strstr(ag, "&MulScaledBackward0_entry, true, 1 };"), "in place, self second:\n%s",
              ag);
    free(ag);
    const char *const sources[] = { "testops_ops.c",      "testops_register.c",
                                    "testops_boxed.c",    "testops_structured.c",
                                    "testops_autograd.c", "testops_register_cuda.c" };
    cr_expect_eq(tgen_compile_errors_with(dir, sources, 6, "-Igenerated"), 0);
    cr_expect_eq(tgen_compile_errors_with(dir, sources, 6, "-Igenerated -DTG_WITH_CUDA"), 0);
    tgen_rmdir(dir);
}

/* A library without a derivatives file: its operators still get autograd kernels, which
 * record NotImplemented nodes (backward fails naming the operator) instead of silently
 * cutting the graph. */
Test(tgen_emit, operator_library_without_derivatives)
{
    char *dir = tgen_tmpdir("libnd");
    gen_testops(dir, false);
    char *ag = tgen_read_out(dir, "testops_autograd.c");
    /* Its operator records the runtime's NotImplemented node (no vtable of its own), which names
     * it at backward. */
    cr_expect(strstr(ag, "tg_tensor *testops__autograd_kernel_scale(") &&
                  strstr(ag, "{ \"testops::scale\", \"testops::scale\", &tg__ni_scale_entry, "
                             "false, 0 }") &&
                  strstr(ag, "tg__ni_scale_entry = {\n    .inputs = "),
              "autograd kernels recording NotImplemented nodes:\n%s", ag);
    free(ag);
    const char *const sources[] = { "testops_ops.c", "testops_register.c", "testops_autograd.c" };
    cr_expect_eq(tgen_compile_errors_with(dir, sources, 3, "-Igenerated"), 0);
    tgen_rmdir(dir);
}
