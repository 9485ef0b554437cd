/* tgen's error table: every malformed spec in tests/codegen/bad/ must fail with exactly the
 * diagnostics in its .expected file (file:line:col included) and exit status 1. The table is
 * tests/codegen/errors.tsv (an optional fourth column holds extra --check flags, such as
 * --strict for formula type errors or `--runtime runtime`); tests run from the repository
 * root. */
#include <criterion/criterion.h>

#include "codegen/tgen_run.h"

#define TABLE "tests/codegen/errors.tsv"

/* Checks one row; returns false after reporting a mismatch. `flags` (space-separated words,
 * modified in place) go before the files: `--check --strict --runtime runtime native derivs`. */
static bool check_case(const char *name, const char *native, const char *derivs, char *flags)
{
    const char *args[12] = { "--check" };
    int n = 1;
    for (char *save, *w = strtok_r(flags, " ", &save); w && n < 8; w = strtok_r(NULL, " ", &save))
        args[n++] = w;
    args[n++] = native;
    args[n++] = strcmp(derivs, "-") ? derivs : NULL;
    char expected_path[512];
    snprintf(expected_path, sizeof expected_path, "tests/codegen/bad/%s.expected", name);
    char *expected = tgen_slurp(expected_path);
    cr_expect(expected != NULL, "%s: cannot read %s", name, expected_path);
    tgen_result r = tgen_run(args);
    bool ok = expected && r.err && r.out && r.status == 1 && !strcmp(r.err, expected) && !*r.out;
    cr_expect_eq(r.status, 1, "%s: exit status %d, expected 1", name, r.status);
    if (expected && r.err)
        cr_expect_str_eq(r.err, expected, "%s: stderr differs\n--- expected:\n%s--- got:\n%s", name,
                         expected, r.err);
    if (r.out) cr_expect_str_empty(r.out, "%s: unexpected stdout: %s", name, r.out);
    free(expected);
    tgen_result_free(&r);
    return ok;
}

Test(tgen_errors, table)
{
    cr_assert(access(tgen_path(), X_OK) == 0, "no tgen binary at %s (set TGEN)", tgen_path());
    char *table = tgen_slurp(TABLE);
    cr_assert(table != NULL, "cannot read " TABLE);
    int rows = 0, failed = 0;
    for (char *line = strtok(table, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || !line[0]) continue;
        char name[128], native[256], derivs[256], flags[128] = "";
        int n =
            sscanf(line, "%127[^\t]\t%255[^\t]\t%255[^\t]\t%127[^\t]", name, native, derivs, flags);
        cr_assert(n == 3 || n == 4, TABLE ": malformed row '%s'", line);
        rows++;
        failed += !check_case(name, native, derivs, flags);
    }
    free(table);
    cr_expect_geq(rows, 30, TABLE " has only %d cases", rows);
    cr_expect_eq(failed, 0, "%d of %d error cases failed", failed, rows);
}
