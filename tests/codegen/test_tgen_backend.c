/* Backend files (torchgen's backend YAML, torch_mlu's sectioned form; docs/extending.md, "A
 * backend of your own"): `tgen --check --backend` checks their names against a native spec and
 * summarises what it read; `tgen --gen --backend` writes the registration and the kernels'
 * prototypes, and each custom section as an operator library, all compiling -Werror.
 * The real files of ../shared/thirdparty-specs give what docs/extending.md says (skipped when
 * absent). Error cases are rows of tests/codegen/errors.tsv (backend_*). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "codegen/gen_dir.h"

#define DEMO "tests/codegen/good/backend_demo.yaml"
#define THIRD "../shared/thirdparty-specs"
#define PT "../shared/pytorch-"

static void expect_in(const char *text, const char *want)
{
    cr_expect(text && strstr(text, want), "missing:\n%s\n--- in:\n%s", want, text ? text : "");
}

Test(tgen_backend, check_summarises_every_list)
{
    const char *args[] = { "--check", "--backend", DEMO, "specs/native_functions.yaml", NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(
        r.out,
        "ok: backend Demo (demo_backend_register): 4 kernels (1 of custom operators), a fallback "
        "for the rest\n"
        "not registered: 1 autograd kernel (tensorgen's Autograd key is one for every device)\n"
        "not compiled: lazy-tensor lists, names checked (full_codegen 1, ir_gen 1, symint 1)\n"
        "custom operators, one library each: demo (custom:) 2\n"
        "vendor fields, kept as data: op_api 1, exposed 1, vendor_section: 1\n");
    tgen_result_free(&r);
}

Test(tgen_backend, generates_registration_prototypes_and_library)
{
    char *dir = tgen_tmpdir("backend");
    const char *args[] = {
        "--gen",       "--backend", DEMO,    "--native", "specs/native_functions.yaml",
        "--templates", "templates", "--out", dir,        NULL
    };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    tgen_result_free(&r);
    char *h = tgen_read_out(dir, "demo_backend.h"),
         *c = tgen_read_out(dir, "demo_backend_register.c");
    expect_in(h,
              "int demo_backend_register(const tg_device_hooks *hooks, tg_boxed_kernel fallback, "
              "void *ctx);");
    expect_in(h, "/* add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor */\n"
                 "tg_tensor *demo_native_add(tg_tensor *self, tg_tensor *other, double alpha);");
    expect_in(h,
              "tg_values_indices demo_native_max_dim(tg_tensor *self, int64_t dim, bool keepdim);");
    expect_in(h, "tg_tensor *demo_native_demo_scale(tg_tensor *self, double factor);");
    expect_in(h, "#include \"demo_op_types.h\"");
    cr_expect_null(strstr(h, "demo_native_neg"), "full_codegen gives no kernel");
    expect_in(c, "{ \"add.Tensor\", (tg_fnptr)demo_native_add },");
    expect_in(c, "{ \"mul.Tensor\", (tg_fnptr)demo_native_mul },");
    expect_in(c, "{ \"demo::demo_scale\", (tg_fnptr)demo_native_demo_scale },");
    expect_in(c, "Not registered: the autograd kernels the file gives for mul.Tensor.");
    expect_in(c, "int key = tg_backend_register(\"demo\", hooks);");
    expect_in(c, "if (fallback && tg_register_fallback(key, fallback, ctx) != 0) return -1;");
    free(h);
    free(c);
    /* the custom operators: a library whose demo_scale has no CPU kernel (its kernel is the
     * backend's), and demo_info the composite one its dispatch names */
    char *k = tgen_read_out(dir, "demo/kernels/demo_info.h");
    expect_in(k, "int64_t demo__composite_demo_info(tg_tensor *self);");
    free(k);
    const char *files[] = { "demo_backend_register.c", "demo_ops.c",
                            "demo_register.c",         "demo_boxed.c",
                            "demo_structured.c",       "demo_autograd.c" };
    cr_expect_eq(
        tgen_compile_errors_with(dir, files, sizeof files / sizeof *files, "-Igenerated -Inn"), 0);
    tgen_rmdir(dir);
}

/* ---- the real files ---- */

static bool have(const char *path)
{
    if (access(path, R_OK) == 0) return true;
    cr_log_warn("%s is absent: skipped", path);
    return false;
}

/* XLA's file targets PyTorch 2.9: every name is there. 2.15 removed cholesky and qr (the
 * file's target, not tgen: torch.linalg has them). */
Test(tgen_backend, xla)
{
    if (!have(THIRD "/xla/xla_native_functions.yaml") || !have(PT "2.15.0")) return;
    const char *ok[] = { "--check", "--backend", THIRD "/xla/xla_native_functions.yaml",
                         PT "2.9.1/native_functions.yaml", NULL };
    tgen_result r = tgen_run(ok);
    cr_expect_eq(r.status, 0, "%s", r.err);
    expect_in(r.out, "ok: backend XLA (xla_backend_register): 289 kernels");
    expect_in(r.out, "(full_codegen 95, ir_gen 10, symint 12)");
    tgen_result_free(&r);
    const char *newer[] = { "--check", "--backend", THIRD "/xla/xla_native_functions.yaml",
                            PT "2.15.0/native_functions.yaml", NULL };
    r = tgen_run(newer);
    cr_expect_eq(r.status, 1);
    expect_in(r.err, "xla_native_functions.yaml:35:5: error: unknown operator 'cholesky' (not in "
                     "../shared/pytorch-2.15.0/native_functions.yaml); did you mean "
                     "'linalg_cholesky'?\n");
    expect_in(r.err,
              "xla_native_functions.yaml:307:5: error: unknown operator 'qr' (not in "
              "../shared/pytorch-2.15.0/native_functions.yaml); did you mean 'linalg_qr'?\n");
    tgen_result_free(&r);
}

/* torch_npu's file checks against 2.15; its custom operators generate as library npu, which
 * compiles -Werror (the backend's own files need the target spec's generated types). */
Test(tgen_backend, torch_npu)
{
    const char *file = THIRD "/torch_npu/npu_native_functions.yaml";
    if (!have(file) || !have(PT "2.15.0")) return;
    const char *check[] = { "--check", "--backend", file, PT "2.15.0/native_functions.yaml", NULL };
    tgen_result r = tgen_run(check);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "ok: backend NPU (npu_backend_register): 49 kernels (2 of custom "
                            "operators), a fallback for the rest\n"
                            "not compiled: lazy-tensor lists, names checked (full_codegen 0, "
                            "ir_gen 0, symint 2)\n"
                            "custom operators, one library each: npu (custom:) 14\n"
                            "vendor fields, kept as data: op_api 2, internal_format_opapi 1, "
                            "device_check 2, exposed 5\n");
    tgen_result_free(&r);
    char *dir = tgen_tmpdir("npu");
    const char *gen[] = {
        "--gen",       "--backend", file,    "--native", PT "2.15.0/native_functions.yaml",
        "--templates", "templates", "--out", dir,        NULL
    };
    r = tgen_run(gen);
    cr_assert_eq(r.status, 0, "%s", r.err);
    tgen_result_free(&r);
    const char *files[] = { "npu_ops.c", "npu_register.c", "npu_boxed.c", "npu_structured.c",
                            "npu_autograd.c" };
    cr_expect_eq(tgen_compile_errors_with(dir, files, sizeof files / sizeof *files,
                                          "-Igenerated -Inn -fsyntax-only"),
                 0);
    tgen_rmdir(dir);
}

/* torch_mlu's file names no backend (--backend-name). Its in-place custom operator with
 * `self` second (mask_softmax_dropout_bprop_(Tensor input, Tensor(a!) self, ...)) is
 * accepted, as torchgen accepts it; what is left are the file's own errors: `bernoulli_.p` is
 * an overload no PyTorch release has (bernoulli_.float and .Tensor are), and `logical_or.out`
 * is listed twice in its `aten:` section. */
Test(tgen_backend, torch_mlu)
{
    const char *file = THIRD "/torch_mlu/mlu_functions.yaml";
    if (!have(file) || !have(PT "2.15.0")) return;
    const char *check[] = { "--check", "--backend",
                            file,      "--backend-name",
                            "MLU",     PT "2.15.0/native_functions.yaml",
                            NULL };
    tgen_result r = tgen_run(check);
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, "../shared/thirdparty-specs/torch_mlu/mlu_functions.yaml:996:11: "
                            "error: unknown operator 'bernoulli_.p' (not in "
                            "../shared/pytorch-2.15.0/native_functions.yaml); did you mean "
                            "'bernoulli_.float'?\n"
                            "../shared/thirdparty-specs/torch_mlu/mlu_functions.yaml:811:11: "
                            "error: 'logical_or.out' appears twice in 'aten'\n"
                            "../shared/thirdparty-specs/torch_mlu/mlu_functions.yaml:736:11: "
                            "note: 'logical_or.out' was given here\n");
    tgen_result_free(&r);
}

/* CPU seconds the children of this process used so far. */
static double child_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/* The suggestions of unknown names stay cheap: 400 unknown names against PyTorch's 2,600
 * overloads cost under 0.1 s of CPU beyond checking the spec alone. */
Test(tgen_backend, suggestions_are_fast)
{
    if (!have(PT "2.15.0")) return;
    char path[] = "/tmp/tgen_backend_many_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "backend: Many\nsupported:\n");
    for (int i = 0; i < 400; i++) fprintf(f, "  - no_such_operator_number_%d.overload_%d\n", i, i);
    fclose(f);
    const char *plain[] = { "--check", PT "2.15.0/native_functions.yaml", NULL };
    const char *args[] = { "--check", "--backend", path, PT "2.15.0/native_functions.yaml", NULL };
    double t0 = child_seconds();
    tgen_result r = tgen_run(plain);
    double t1 = child_seconds();
    tgen_result_free(&r);
    r = tgen_run(args);
    double t2 = child_seconds();
    unlink(path);
    cr_expect_eq(r.status, 1);
    cr_expect((t2 - t1) - (t1 - t0) < 0.1, "400 unknown names took %.3f s more than the spec alone",
              (t2 - t1) - (t1 - t0));
    tgen_result_free(&r);
}
