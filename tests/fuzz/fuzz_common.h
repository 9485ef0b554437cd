/* What the tgen fuzz harnesses (tests/fuzz/fuzz_*.c) share: a private scratch directory, the
 * repository's paths, tgen's pipeline run in-process, and the oracles that turn a wrong answer
 * into an abort() that libFuzzer (or the regression replay) reports. */
#ifndef TESTS_FUZZ_COMMON_H
#define TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* The repository root: $TG_FUZZ_ROOT, else the directory the harness was built in. The
 * harness never changes directory (libFuzzer writes its corpus and crashes relative to it). */
const char *fuzz_root(void);
/* root/rel, malloc'd: harnesses build their paths once and keep them for the process. */
char *fuzz_path(const char *rel);
/* This process's scratch directory (created once, removed at exit), and dir/name in it
 * (malloc'd, kept like fuzz_path's). */
const char *fuzz_tmp(void);
char *fuzz_tmp_path(const char *name);
/* Writes n bytes to path; aborts when it cannot (a harness that cannot write tests nothing). */
void fuzz_write(const char *path, const uint8_t *data, size_t n);
/* A NUL-terminated malloc'd copy of data (the caller frees it). */
char *fuzz_strndup(const uint8_t *data, size_t n);

/* Runs tgen's command line (args NULL-terminated, without the program name) in-process and
 * returns its exit status. Aborts when the status contradicts the diagnostics: 1 without an
 * `error:` counted, 0 with one, or 2 (a harness always passes a good command line). */
int fuzz_tgen(const char *const *args);

/* For the regression replay only (replay_main.c): with `on`, fuzz_tgen also aborts when tgen
 * exits 0, for inputs tgen must refuse (files named *.reject.*: a wrong value it accepted). */
void fuzz_expect_rejection(int on);
/* For the regression replay only: with `on`, fuzz_gen takes its input as it is, without the
 * engine's operators before it (files named *.raw.*). */
void fuzz_set_raw(int on);
int fuzz_raw(void);

/* The output oracle: compiles every .c and .h file in dir with `cc -fsyntax-only -Iruntime
 * -Idir` ($TG_FUZZ_CC overrides cc) and aborts, naming the command, when one does not compile.
 * Output already seen to compile (same files, same text) is not compiled again. */
void fuzz_check_compiles(const char *dir);
/* Removes the regular files in dir (the generated output of the previous input). */
void fuzz_clear_dir(const char *dir);

/* Aborts with a message on stderr: the harness's way to report a wrong answer. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
