/* Sectioned and older specs read as data (issue 35): op-plugin's sections and versions
 * (--torch-version), PyTorch 1.5's and vendors' fields counted in the summary, files mixing
 * namespaces (--only-namespace), and Tensor? in a returned tuple. The malformed forms are in
 * errors.tsv. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "codegen/tgen_run.h"

#define GOOD "tests/codegen/good/"

static void expect_check(const char *const *args, const char *out)
{
    tgen_result r = tgen_run(args);
    cr_expect_eq(r.status, 0, "status %d:\n%s", r.status, r.err ? r.err : "");
    cr_expect_str_eq(r.out ? r.out : "", out);
    tgen_result_free(&r);
}

/* Each version takes the entries its fields name: `scale` has one schema up to v2.2, another
 * from v2.3; npu_thing and its derivative start at v2.2; the symint: entry restates it. */
Test(tgen_sections, versions_choose_entries)
{
    const char *v21[] = { "--check",
                          "--strict",
                          "--torch-version",
                          "v2.1",
                          GOOD "sectioned.yaml",
                          GOOD "sectioned_derivs.yaml",
                          NULL };
    expect_check(v21, "ok: 4 functions, 1 derivatives, 1/1 formulas parsed\n"
                      "not used: 3 fields read as data (op_api 3, acl_op 2, exposed 1)\n"
                      "versions: entries for PyTorch v2.1; 3 entries of other versions skipped\n");
    const char *newest[] = { "--check", "--strict", GOOD "sectioned.yaml",
                             GOOD "sectioned_derivs.yaml", NULL };
    expect_check(newest,
                 "ok: 3 functions, 2 derivatives, 2/2 formulas parsed\n"
                 "not used: 4 fields read as data (op_api 4, acl_op 1, exposed 1, gen_opapi 1)\n"
                 "versions: entries for PyTorch v2.3; 2 entries of other versions skipped\n"
                 "restated: 1 'symint:'/'autograd:' entry naming a definition of the file\n");
}

Test(tgen_sections, old_fields_are_data)
{
    const char *args[] = { "--check", "--strict", GOOD "old_fields.yaml", NULL };
    expect_check(args, "ok: 2 functions, 0 derivatives\n"
                       "not used: 6 fields read as data (use_c10_dispatcher 2, "
                       "supports_named_tensor 1, requires_tensor 1, named_guard 1, npu_dispatch 1, "
                       "npu_dispatch_only 1)\n");
}

/* An unqualified entry of a mixed file is aten's; a library's entries generate as
 * --namespace NS. */
Test(tgen_sections, only_namespace_takes_one)
{
    const char *aten[] = { "--check", "--strict",           "--only-namespace",
                           "aten",    GOOD "ns_mixed.yaml", NULL };
    expect_check(aten, "ok: 1 functions, 0 derivatives\n"
                       "namespaces: entries of 'aten' taken; 3 of other namespaces skipped "
                       "(myops 2, other 1)\n");
    const char *myops[] = { "--check",
                            "--strict",
                            "--only-namespace",
                            "myops",
                            "--import",
                            "generated/tensorgen_api.yaml",
                            GOOD "ns_mixed.yaml",
                            NULL };
    expect_check(myops, "ok: 2 functions, 0 derivatives\n"
                        "namespaces: entries of 'myops' taken; 2 of other namespaces skipped "
                        "(aten 1, other 1)\n");
}

/* `-> (Tensor, Tensor?)`: the struct's field is NULL when absent, boxed as None. */
Test(tgen_sections, optional_tensor_in_tuple)
{
    char dir[] = "/tmp/tgen_opt_ret_XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *args[] = { "--gen",
                           "--namespace",
                           "audio",
                           "--import",
                           "generated/tensorgen_api.yaml",
                           "--native",
                           GOOD "opt_tensor_return.yaml",
                           "--out",
                           dir,
                           NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "status %d:\n%s", r.status, r.err ? r.err : "");
    tgen_result_free(&r);
    char path[256];
    snprintf(path, sizeof path, "%s/audio_op_types.h", dir);
    char *types = tgen_slurp(path);
    snprintf(path, sizeof path, "%s/audio_boxed.c", dir);
    char *boxed = tgen_slurp(path);
    cr_expect(types && strstr(types, "} audio_tuple_tensor_opttensor;"), "%s", types ? types : "");
    cr_expect(boxed && strstr(boxed, "tg__push_opt_tensor(tg_s, tg_r.r1);"), "%s",
              boxed ? boxed : "");
    free(types);
    free(boxed);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* --base: a file checked against the spec it extends. Its formulas call the base's operators
 * (mH, not restated; add.Scalar beside the restated add.Tensor); its restating entries (tril
 * with int for SymInt and another argument name) are not counted as its functions. Alone, the
 * same file's formulas name unknown operators. The restatement with another default is in
 * errors.tsv (base_restate_other). */
Test(tgen_sections, base_operators_are_known_not_counted)
{
    const char *args[] = { "--check",
                           "--strict",
                           "--base",
                           GOOD "base_native.yaml",
                           GOOD "base_extends.yaml",
                           GOOD "base_extends_derivs.yaml",
                           NULL };
    expect_check(args, "ok: 1 functions, 2 derivatives, 3/3 formulas parsed\n"
                       "base: 5 operators of tests/codegen/good/base_native.yaml known; 2 entries "
                       "restating one of them, not counted as functions\n");
    const char *alone[] = { "--check", "--strict", GOOD "base_extends.yaml",
                            GOOD "base_extends_derivs.yaml", NULL };
    tgen_result r = tgen_run(alone);
    cr_expect_eq(r.status, 1);
    cr_expect(r.err && strstr(r.err, "base_extends_derivs.yaml:2:18: error: unknown method 'mH'"),
              "%s", r.err ? r.err : "");
    tgen_result_free(&r);
    /* a --check option, of aten's files */
    const char *gen[] = {
        "--gen", "--base", GOOD "base_native.yaml", "--native", GOOD "base_extends.yaml", "--out",
        "/tmp",  NULL
    };
    const char *ns[] = { "--check", "--namespace",           "myops",
                         "--base",  GOOD "base_native.yaml", GOOD "base_extends.yaml",
                         NULL };
    const char *const *bad[] = { gen, ns };
    for (int i = 0; i < 2; i++) {
        r = tgen_run(bad[i]);
        cr_expect_eq(r.status, 2, "case %d: status %d", i, r.status);
        cr_expect(r.err && strstr(r.err, "--base"), "%s", r.err ? r.err : "");
        tgen_result_free(&r);
    }
}
