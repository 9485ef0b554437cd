/* Scratch directories for tests that run `tgen --gen`: make one, read a file from it, remove
 * it. For Criterion tests (the helpers assert); tgen_run.h runs tgen and compiles what it
 * wrote (tgen_compile_errors). */
#ifndef TG_TESTS_GEN_DIR_H
#define TG_TESTS_GEN_DIR_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/tgen_run.h"

/* A new directory /tmp/tgen_<tag>_XXXXXX (free with tgen_rmdir). */
static inline char *tgen_tmpdir(const char *tag)
{
    char tmpl[256];
    snprintf(tmpl, sizeof tmpl, "/tmp/tgen_%s_XXXXXX", tag);
    char *dir = strdup(tmpl);
    cr_assert(dir && mkdtemp(dir), "cannot create a temporary directory");
    return dir;
}

/* Removes dir and everything in it, and frees the string. */
static inline void tgen_rmdir(char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", dir);
    free(dir);
}

/* The text of dir/file (free it); fails the test when tgen wrote no such file. */
static inline char *tgen_read_out(const char *dir, const char *file)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = tgen_slurp(path);
    cr_assert(text, "tgen wrote no %s", path);
    return text;
}

/* Every shard of a sharded kind of file, `<stem>.c` (one shard) or `<stem>_<k>.c`, one after
 * the other (free it); fails the test when there is none. */
static inline char *tgen_read_shards(const char *dir, const char *stem)
{
    char pattern[600];
    snprintf(pattern, sizeof pattern, "%s/%s.c", dir, stem);
    char *text = tgen_slurp(pattern);
    for (int k = 0; k < 4096; k++) {
        snprintf(pattern, sizeof pattern, "%s/%s_%d.c", dir, stem, k);
        char *shard = tgen_slurp(pattern);
        if (!shard) break;
        size_t a = text ? strlen(text) : 0, b = strlen(shard);
        char *both = realloc(text, a + b + 1);
        cr_assert(both, "out of memory");
        memcpy(both + a, shard, b + 1);
        text = both;
        free(shard);
    }
    cr_assert(text, "tgen wrote no %s/%s.c nor its shards", dir, stem);
    return text;
}

/* Runs tgen with args (NULL-terminated) and fails the test, naming `what` and quoting tgen's
 * stderr, unless it exits 0. */
static inline void tgen_run_ok(const char *const *args, const char *what)
{
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "%s failed:\n%s", what, r.err ? r.err : "");
    tgen_result_free(&r);
}

/* Writes text to dir/name (a user of the generated code, compiled beside it). */
static inline void tgen_write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Every string of want[0..n) occurs in text, the contents of `file` (non-fatal checks). */
static inline void tgen_expect_each(const char *text, const char *const *want, size_t n,
                                    const char *file)
{
    for (size_t i = 0; i < n; i++)
        cr_expect(strstr(text, want[i]) != NULL, "%s lacks `%s`", file, want[i]);
}

#endif
