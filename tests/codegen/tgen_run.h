/* Running the tgen binary from a Criterion test: path from $TGEN (default build/tgen), run
 * from the repository root, stdout and stderr captured whole, exit status returned. Static
 * inline so that each test file that includes it gets its own copy without warnings. */
#ifndef TESTS_CODEGEN_TGEN_RUN_H
#define TESTS_CODEGEN_TGEN_RUN_H

#include <glob.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static inline const char *tgen_path(void)
{
    const char *p = getenv("TGEN");
    return p && *p ? p : "build/tgen";
}

/* The whole file as a NUL-terminated string (the caller frees it), or NULL. */
static inline char *tgen_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0, n;
    char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

/* <dir>/<umbrella> followed by every header <dir>/<sub>/<op>.h, as one string (the caller frees it), or
 * NULL when the umbrella is missing: tgen writes one header per operator under ops/ (public,
 * included by tg_ops.h) and kernels/ (included by tg_kernels.h), docs/generated-code.md,
 * "Headers". */
static inline char *tgen_slurp_headers(const char *dir, const char *umbrella, const char *sub)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, umbrella);
    char *all = tgen_slurp(path);
    if (!all) return NULL;
    size_t len = strlen(all);
    glob_t g;
    snprintf(path, sizeof path, "%s/%s/*.h", dir, sub);
    if (glob(path, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && all; i++) {
            char *one = tgen_slurp(g.gl_pathv[i]);
            if (!one) continue;
            size_t n = strlen(one);
            char *grown = realloc(all, len + n + 1);
            if (grown) {
                memcpy(grown + len, one, n + 1);
                len += n;
            } else {
                free(all);
            }
            all = grown;
            free(one);
        }
        globfree(&g);
    }
    return all;
}

/* Everything the public API declares: tg_op_types.h (result structs), tg_ops.h and ops/<op>.h. */
static inline char *tgen_slurp_public(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tg_op_types.h", dir);
    char *types = tgen_slurp(path);
    char *ops = tgen_slurp_headers(dir, "tg_ops.h", "ops");
    char *all = types && ops ? malloc(strlen(types) + strlen(ops) + 1) : NULL;
    if (all) strcat(strcpy(all, types), ops);
    free(types);
    free(ops);
    return all;
}

typedef struct tgen_result {
    int status;      /* exit status, or -1 when tgen could not be run */
    char *out, *err; /* captured stdout / stderr (free with tgen_result_free) */
} tgen_result;

/* Runs `tgen args...` (args NULL-terminated). */
static inline tgen_result tgen_run(const char *const *args)
{
    tgen_result r = { -1, NULL, NULL };
    char out_path[] = "/tmp/tgen_test_out_XXXXXX", err_path[] = "/tmp/tgen_test_err_XXXXXX";
    int fo = mkstemp(out_path), fe = mkstemp(err_path);
    if (fo < 0 || fe < 0) return r;
    const char *argv[32] = { tgen_path() };
    int argc = 1;
    for (; args[argc - 1] && argc < 31; argc++) argv[argc] = args[argc - 1];
    argv[argc] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fo, 1);
    posix_spawn_file_actions_adddup2(&fa, fe, 2);
    pid_t pid;
    if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ) == 0) {
        int ws;
        if (waitpid(pid, &ws, 0) == pid && WIFEXITED(ws)) r.status = WEXITSTATUS(ws);
    }
    posix_spawn_file_actions_destroy(&fa);
    close(fo);
    close(fe);
    r.out = tgen_slurp(out_path);
    r.err = tgen_slurp(err_path);
    unlink(out_path);
    unlink(err_path);
    return r;
}

static inline void tgen_result_free(tgen_result *r)
{
    free(r->out);
    free(r->err);
}

/* Compiles each generated file dir/files[i] against runtime/ with gcc and clang (those
 * installed) at -Wall -Wextra -Werror, with `flags` added (include directories, defines);
 * returns how many compilations failed, each reported on stderr with its command. */
static inline int tgen_compile_errors_with(const char *dir, const char *const *files, size_t nfiles,
                                           const char *flags)
{
    const char *const ccs[] = { "gcc", "clang" };
    int failed = 0;
    for (size_t i = 0; i < 2; i++) {
        char probe[64];
        snprintf(probe, sizeof probe, "command -v %s >/dev/null 2>&1", ccs[i]);
        if (system(probe) != 0) continue;
        for (size_t f = 0; f < nfiles; f++) {
            /* files[f] may be a pattern: every shard of a kind, tg_ops*.c */
            char cmd[1600];
            snprintf(cmd, sizeof cmd,
                     "for f in '%s'/%s; do %s -std=c11 -Wall -Wextra -Werror -Iruntime -I'%s' %s "
                     "-c \"$f\" -o /dev/null || exit 1; done",
                     dir, files[f], ccs[i], dir, flags);
            if (system(cmd) != 0) {
                fprintf(stderr, "failed: %s\n", cmd);
                failed++;
            }
        }
    }
    return failed;
}

static inline int tgen_compile_errors(const char *dir, const char *const *files, size_t nfiles)
{
    return tgen_compile_errors_with(dir, files, nfiles, "");
}

#endif
