/* Fuzz harness: a file that extends a spec, checked against the project's own
 * native_functions.yaml: a backend file (`backend:`, or torch_mlu's `aten:` sections, named on
 * the command line; `tgen --check --backend FILE`) or a kernel library / operator list
 * (`tgen --check --select FILE`), told apart by a line that starts with `backend:` or `aten:`.
 * When the check passes, --gen writes the backend's registration or the selection (with the
 * custom operators' libraries) into a scratch directory. A selection's output holds every
 * header it includes, so it must compile (the oracle); a backend's registration includes the
 * target spec's generated headers, so only its writing is exercised (a crash, a leak or an exit
 * status that contradicts the diagnostics is still a finding). */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"

/* Whether some line of the input starts with `key`. */
static int has_line(const uint8_t *data, size_t n, const char *key)
{
    size_t k = strlen(key);
    for (size_t i = 0; i + k <= n; i++)
        if ((i == 0 || data[i - 1] == '\n') && !memcmp(data + i, key, k)) return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char *native, *file, *out, *templates, *runtime;
    if (!native) {
        native = fuzz_path("specs/native_functions.yaml");
        file = fuzz_tmp_path("extends.yaml");
        out = fuzz_tmp_path("out");
        templates = fuzz_path("templates");
        runtime = fuzz_path("runtime");
    }
    fuzz_write(file, data, size);
    int mlu = !has_line(data, size, "backend:") && has_line(data, size, "aten:");
    int backend = mlu || has_line(data, size, "backend:");
    /* --backend FILE [--backend-name NAME], or --select FILE */
    const char *which[4] = { backend ? "--backend" : "--select", file, "--backend-name", "Fuzz" };
    int nwhich = mlu ? 4 : 2;
    const char *check[8] = { "--check" }, *gen[16] = { "--gen" };
    int nc = 1, ng = 1;
    for (int i = 0; i < nwhich; i++) check[nc++] = gen[ng++] = which[i];
    check[nc] = native;
    const char *rest[] = { "--native",    native,    "--runtime", runtime,
                           "--templates", templates, "--out",     out };
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++) gen[ng++] = rest[i];
    if (fuzz_tgen(check) != 0) return 0;
    fuzz_clear_dir(out);
    if (fuzz_tgen(gen) == 0 && !backend) fuzz_check_compiles(out);
    return 0;
}
