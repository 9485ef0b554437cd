/* Fuzz harness: tgen end to end. The input is a native_functions.yaml, optionally followed by
 * a line `#@derivatives` and a derivatives.yaml (a YAML comment, so the whole input is still
 * one valid YAML file to look at). The entries of gen_prelude.yaml (the operators the autograd
 * engine calls) go before the native part, each unless the input defines that function
 * itself. tgen --gen writes with the real templates/ into a scratch directory; when it exits
 * 0, every generated .c and .h file must compile (the oracle). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static const char separator[] = "#@derivatives\n";

/* Where the separator line starts (at the input's start or after a newline), or NULL. */
static const uint8_t *find_separator(const uint8_t *data, size_t size)
{
    size_t n = sizeof separator - 1;
    for (size_t i = 0; i + n <= size; i++)
        if ((i == 0 || data[i - 1] == '\n') && !memcmp(data + i, separator, n)) return data + i;
    return NULL;
}

/* gen_prelude.yaml's entries, each a `- func: NAME(...` line and the lines after it. */
typedef struct entry {
    char *text, *key; /* key: "- func: NAME(" as an entry of the input would start */
} entry;
static entry g_prelude[16];
static int g_nprelude;

static void load_prelude(void)
{
    char *path = fuzz_path("tests/fuzz/gen_prelude.yaml");
    FILE *f = fopen(path, "rb");
    if (!f) fuzz_fail("cannot read %s", path);
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "- func: ", 8) && g_nprelude < 16) {
            entry *e = &g_prelude[g_nprelude++];
            size_t n = strcspn(line + 8, "(");
            e->key = fuzz_strndup((const uint8_t *)line, n + 9);
            e->text = strdup("");
        }
        if (g_nprelude && line[0] != '#') {
            entry *e = &g_prelude[g_nprelude - 1];
            char *t = malloc(strlen(e->text) + strlen(line) + 1);
            if (!t) fuzz_fail("out of memory");
            strcat(strcpy(t, e->text), line);
            free(e->text);
            e->text = t;
        }
    }
    fclose(f);
    free(path);
}

/* Whether the native part has an entry starting with key, at the start of a line (a comment
 * that mentions the function does not count). */
static int defines(const uint8_t *data, size_t n, const char *key)
{
    size_t k = strlen(key);
    for (const uint8_t *p = data; (p = memmem(p, n - (size_t)(p - data), key, k)); p++)
        if (p == data || p[-1] == '\n') return 1;
    return 0;
}

/* Writes the prelude entries the native part does not define, then the native part. */
static void write_native(const char *path, const uint8_t *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) fuzz_fail("cannot write %s", path);
    for (int i = 0; i < g_nprelude && !fuzz_raw(); i++)
        if (!defines(data, n, g_prelude[i].key)) fputs(g_prelude[i].text, f);
    if (fwrite(data, 1, n, f) != n || fclose(f) != 0) fuzz_fail("cannot write %s", path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char *native, *derivs, *out, *docs, *templates, *runtime;
    if (!native) {
        native = fuzz_tmp_path("native_functions.yaml");
        derivs = fuzz_tmp_path("derivatives.yaml");
        out = fuzz_tmp_path("generated");
        docs = fuzz_tmp_path("docs");
        templates = fuzz_path("templates");
        runtime = fuzz_path("runtime");
        load_prelude();
    }
    const uint8_t *sep = find_separator(data, size);
    size_t nnative = sep ? (size_t)(sep - data) : size;
    write_native(native, data, nnative);
    if (sep) {
        const uint8_t *d = sep + sizeof separator - 1;
        fuzz_write(derivs, d, size - (size_t)(d - data));
    }
    /* A fresh output directory: files left by the previous input must not be compiled. */
    fuzz_clear_dir(out);
    /* --runtime as `make gen` runs it: the C names must avoid the runtime's, which the
     * compile below includes (`c_name: item` is then tgen's error, not a clash in C). */
    int status = fuzz_tgen((const char *const[]){
        "--gen", "--native", native, "--templates", templates, "--out", out, "--docs", docs,
        "--runtime", runtime, sep ? "--derivatives" : NULL, derivs, NULL });
    if (status == 0) fuzz_check_compiles(out);
    return 0;
}
