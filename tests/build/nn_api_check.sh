#!/usr/bin/env bash
# nn/ stands on the library's public API only, as torch.nn stands on ATen (docs/nn.md,
# docs/architecture.md): its files may include the installed headers (tensorgen.h, tg_core.h,
# tg_io.h, tg_op_types.h and the per-operator ops/<op>.h, which nn/ uses rather than the
# umbrella so that a new operator recompiles none of it), nn/'s own public headers (tg_nn*.h)
# and nn/'s private ones (nn_private.h and the *_internal.h of its subfolders), and nothing of
# runtime/'s, kernels/' or generated/'s internals. Prints the offending lines and fails when
# one includes anything else.
set -euo pipefail
cd "$(dirname "$0")/../.."
allowed='^"(\.\./)?(tensorgen\.h|tg_core\.h|tg_io\.h|tg_op_types\.h|ops/[a-z0-9_]+\.h|tg_nn[a-z_]*\.h|nn_private\.h|[a-z]+_internal\.h)"'
bad=$(grep -rn --include='*.c' --include='*.h' '^#include "' nn |
      awk -F'#include ' '{ print $0 "\t" $2 }' | while IFS=$'\t' read -r line inc; do
        [[ $inc =~ $allowed ]] || echo "$line"; done)
if [ -n "$bad" ]; then
  echo "nn-api-check: nn/ includes headers beyond the public API:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "nn-api-check: nn/ includes only the public API ($(ls nn/*.c nn/*/*.c | wc -l) files)"
