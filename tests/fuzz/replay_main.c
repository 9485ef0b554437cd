/* A main() for the fuzz harnesses without libFuzzer: runs LLVMFuzzerTestOneInput once on each
 * file named on the command line. `make test` builds every harness with it under ASan and
 * UBSan to replay tests/fuzz/regressions/ with any C compiler, fast and without fuzzing. A file
 * named *.reject.* holds an input tgen once accepted but must refuse: tgen must exit 1 on it;
 * one named *.raw.* is given to fuzz_gen without the engine's operators (gen_prelude.yaml). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16;
    unsigned char *buf = malloc(cap);
    *n = 0;
    size_t k;
    while (buf && (k = fread(buf + *n, 1, cap - *n, f)) > 0) {
        if ((*n += k) < cap) continue;
        unsigned char *bigger = realloc(buf, cap *= 2);
        if (!bigger) free(buf);
        buf = bigger;
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        size_t n;
        unsigned char *data = slurp(argv[i], &n);
        if (!data) {
            fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
            return 2;
        }
        const char *base = strrchr(argv[i], '/');
        fuzz_expect_rejection(strstr(base ? base + 1 : argv[i], ".reject.") != NULL);
        fuzz_set_raw(strstr(base ? base + 1 : argv[i], ".raw.") != NULL);
        LLVMFuzzerTestOneInput(data, n);
        free(data);
    }
    return 0;
}
