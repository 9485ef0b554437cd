/* Fuzz harness: a whole native_functions.yaml, parsed and validated as `tgen --check --strict`
 * does. The input is the file. tgen may reject it (exit 1 with `error:` lines) but must not
 * crash, leak, or let its exit status disagree with its diagnostics. */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char *native;
    if (!native) native = fuzz_tmp_path("native_functions.yaml");
    fuzz_write(native, data, size);
    fuzz_tgen((const char *const[]){ "--check", "--strict", native, NULL });
    return 0;
}
