/* The fuzz harnesses' shared helpers (see fuzz_common.h). */
#include "fuzz_common.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "base/diag.h"

#ifndef TG_FUZZ_ROOT
#define TG_FUZZ_ROOT "."
#endif

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz oracle: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) fuzz_fail("out of memory");
    return s;
}

const char *fuzz_root(void)
{
    const char *r = getenv("TG_FUZZ_ROOT");
    return r && *r ? r : TG_FUZZ_ROOT;
}

char *fuzz_path(const char *rel) { return xasprintf("%s/%s", fuzz_root(), rel); }

/* ------------------------------------------------------------------ scratch directory */

static char g_tmp[4096];

/* Empties dir, and with `self` removes it too; one level is all the harnesses create. */
static void remove_files(const char *dir, int self)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) remove_files(path, 1);
            else unlink(path);
        }
        closedir(d);
    }
    if (self) rmdir(dir);
}

static void remove_tmp(void)
{
    if (g_tmp[0]) remove_files(g_tmp, 1);
}

const char *fuzz_tmp(void)
{
    if (!g_tmp[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(g_tmp, sizeof g_tmp, "%s/tgfuzz.XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(g_tmp)) fuzz_fail("mkdtemp %s: %s", g_tmp, strerror(errno));
        atexit(remove_tmp);
    }
    return g_tmp;
}

char *fuzz_tmp_path(const char *name) { return xasprintf("%s/%s", fuzz_tmp(), name); }

void fuzz_clear_dir(const char *dir) { remove_files(dir, 0); }

void fuzz_write(const char *path, const uint8_t *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0)
        fuzz_fail("cannot write %s: %s", path, strerror(errno));
}

char *fuzz_strndup(const uint8_t *data, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) fuzz_fail("out of memory");
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

/* ------------------------------------------------------------------ tgen in-process */

static int g_expect_rejection;

void fuzz_expect_rejection(int on) { g_expect_rejection = on; }

static int g_raw;

void fuzz_set_raw(int on) { g_raw = on; }
int fuzz_raw(void) { return g_raw; }

int fuzz_tgen(const char *const *args)
{
    char *argv[32] = { "tgen" };
    int argc = 1;
    for (; args[argc - 1]; argc++) {
        if (argc == 31) fuzz_fail("too many arguments for tgen");
        argv[argc] = (char *)args[argc - 1];
    }
    int before = tgm_error_count();
    int status = tgen_main(argc, argv);
    int errors = tgm_error_count() - before;
    /* The exit status is the user's only summary: it must agree with what was printed. */
    if (status == 2) fuzz_fail("tgen rejected the harness's command line");
    if (status == 1 && errors == 0) fuzz_fail("tgen exited 1 without printing an error");
    if (status == 0 && errors > 0) fuzz_fail("tgen exited 0 after printing %d error(s)", errors);
    if (status == 0 && g_expect_rejection) fuzz_fail("tgen accepted an input it must refuse");
    return status;
}

/* ------------------------------------------------------------------ the compile oracle */

/* FNV-1a over each file's name and text: which output has already compiled. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static int is_source(const char *name)
{
    size_t n = strlen(name);
    return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of dir's .c and .h files (at most cap) and a hash of their text. */
static int list_sources(const char *dir, char **names, int cap, uint64_t *hash)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d) fuzz_fail("cannot open %s: %s", dir, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)) && n < cap)
        if (is_source(e->d_name)) names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++) {
        h = fnv(h, names[i], strlen(names[i]) + 1);
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        if (!f) fuzz_fail("cannot read %s", path);
        char buf[65536];
        size_t k;
        while ((k = fread(buf, 1, sizeof buf, f)) > 0) h = fnv(h, buf, k);
        fclose(f);
    }
    *hash = h;
    return n;
}

/* Hashes of outputs that compiled: a small open-addressing set, forgetting everything when
 * full (recompiling is only slower). */
enum { SEEN_CAP = 4096 };
static uint64_t g_seen[SEEN_CAP];
static int g_nseen;

static int seen(uint64_t h, int add)
{
    h |= 1; /* 0 marks an empty slot */
    size_t i = (size_t)(h % SEEN_CAP);
    while (g_seen[i] && g_seen[i] != h) i = (i + 1) % SEEN_CAP;
    if (g_seen[i]) return 1;
    if (add) {
        if (g_nseen >= SEEN_CAP / 2) {
            memset(g_seen, 0, sizeof g_seen);
            g_nseen = 0;
            return seen(h, add);
        }
        g_seen[i] = h;
        g_nseen++;
    }
    return 0;
}

void fuzz_check_compiles(const char *dir)
{
    char *names[64];
    uint64_t hash;
    int n = list_sources(dir, names, 64, &hash);
    if (n > 0 && !seen(hash, 0)) {
        const char *cc = getenv("TG_FUZZ_CC");
        size_t cap = 8192;
        char *cmd = malloc(cap);
        if (!cmd) fuzz_fail("out of memory");
        int len = snprintf(cmd, cap, "%s -std=c11 -fsyntax-only -I'%s/runtime' -I'%s'",
                           cc && *cc ? cc : "cc", fuzz_root(), dir);
        for (int i = 0; i < n && len < (int)cap; i++)
            len += snprintf(cmd + len, cap - (size_t)len, " '%s/%s'", dir, names[i]);
        if (len >= (int)cap) fuzz_fail("compile command too long");
        int ws = system(cmd);
        if (ws == -1 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
            fuzz_fail("tgen exited 0 but its output does not compile: %s", cmd);
        seen(hash, 1);
        free(cmd);
    }
    for (int i = 0; i < n; i++) free(names[i]);
}
