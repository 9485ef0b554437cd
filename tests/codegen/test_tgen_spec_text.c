/* Spec text inside the generated C: schemas, defaults, docs, formulas and the spec's path are
 * copied into comments and string literals, so `*` `/`, `/` `*`, quotes, backslashes and
 * trigraphs in them must come out escaped. tgen generates a spec made of such text, read from
 * a directory whose name ends in `*` (the path goes into every file's first comment), and the
 * output must compile warning-free. Tests run from the repository root with $TGEN. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "codegen/tgen_run.h"

/* Writes the concatenation of files a and b to path. */
static void concat(const char *path, const char *a, const char *b)
{
    char *ta = tgen_slurp(a), *tb = b ? tgen_slurp(b) : NULL;
    cr_assert(ta && (!b || tb), "cannot read %s or %s", a, b ? b : "");
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fprintf(f, "%s\n%s", ta, tb ? tb : "");
    fclose(f);
    free(ta);
    free(tb);
}

Test(tgen_spec_text, comments_and_strings_compile)
{
    char dir[] = "/tmp/tgen_spec_text_XXXXXX";
    cr_assert(mkdtemp(dir), "cannot create a temporary directory");
    char in[600], native[700], derivs[700], out[600];
    snprintf(in, sizeof in, "%s/in*", dir);
    cr_assert(mkdir(in, 0700) == 0, "cannot create %s", in);
    snprintf(native, sizeof native, "%s/native.yaml", in);
    snprintf(derivs, sizeof derivs, "%s/derivs.yaml", in);
    snprintf(out, sizeof out, "%s/out", dir);
    cr_assert(mkdir(out, 0700) == 0, "cannot create %s", out);
    concat(native, "tests/codegen/emit/autograd.yaml", "tests/codegen/emit/spec_text.yaml");
    concat(derivs, "tests/codegen/emit/spec_text_derivs.yaml", NULL);

    const char *gen[] = { "--gen",     "--native", native, "--derivatives", derivs, "--templates",
                          "templates", "--out",    out,    "--docs",        out,    NULL };
    tgen_result r = tgen_run(gen);
    cr_assert_eq(r.status, 0, "tgen failed:\n%s", r.err ? r.err : "");
    tgen_result_free(&r);

    const char *const files[] = { "tg_autograd*.c", "tg_register.c", "tg_ops*.c",
                                  "tg_structured*.c", "tg_boxed*.c" };
    cr_expect_eq(tgen_compile_errors(out, files, sizeof files / sizeof files[0]), 0,
                 "generated C does not compile (commands above)");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
}
