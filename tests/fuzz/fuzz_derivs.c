/* Fuzz harness: a derivatives.yaml checked against the project's own native_functions.yaml, as
 * `tgen --check --strict specs/native_functions.yaml <input>` does, so that formulas meet real
 * schemas and reach the type checker. The input is the derivatives file. */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char *native, *derivs;
    if (!native) {
        native = fuzz_path("specs/native_functions.yaml");
        derivs = fuzz_tmp_path("derivatives.yaml");
    }
    fuzz_write(derivs, data, size);
    fuzz_tgen((const char *const[]){ "--check", "--strict", native, derivs, NULL });
    return 0;
}
