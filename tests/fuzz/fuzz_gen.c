/* Fuzz harness: tgen end to end. The input is a native_functions.yaml, optionally followed by
 * a line `#@derivatives` and a derivatives.yaml (a YAML comment, so the whole input is still
 * one valid YAML file to look at). tgen --gen writes with the real templates/ into a scratch
 * directory; when it exits 0, every generated .c and .h file must compile (the oracle). */
#include <stdint.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char *native, *derivs, *out, *docs, *templates;
    if (!native) {
        native = fuzz_tmp_path("native_functions.yaml");
        derivs = fuzz_tmp_path("derivatives.yaml");
        out = fuzz_tmp_path("generated");
        docs = fuzz_tmp_path("docs");
        templates = fuzz_path("templates");
    }
    const uint8_t *sep = find_separator(data, size);
    size_t nnative = sep ? (size_t)(sep - data) : size;
    fuzz_write(native, data, nnative);
    if (sep) {
        const uint8_t *d = sep + sizeof separator - 1;
        fuzz_write(derivs, d, size - (size_t)(d - data));
    }
    /* A fresh output directory: files left by the previous input must not be compiled. */
    fuzz_clear_dir(out);
    int status = fuzz_tgen((const char *const[]){ "--gen", "--native", native, "--templates",
                                                  templates, "--out", out, "--docs", docs,
                                                  sep ? "--derivatives" : NULL, derivs, NULL });
    if (status == 0) fuzz_check_compiles(out);
    return 0;
}
