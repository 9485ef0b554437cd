#!/usr/bin/env bash
# nn/ stands on the library's public API only, as torch.nn stands on ATen (docs/nn.md,
# docs/architecture.md): its files may include the public headers (tensorgen.h, tg_core.h,
# tg_op_types.h), nn/'s own public headers (tg_nn*.h) and nn/'s private ones (nn_private.h and
# the *_internal.h of its subfolders), and nothing of runtime/'s, kernels/' or generated/'s
# internals. Prints the offending lines and fails when one includes anything else.
set -euo pipefail
cd "$(dirname "$0")/../.."
allowed='^"(\.\./)?(tensorgen\.h|tg_core\.h|tg_op_types\.h|tg_nn[a-z_]*\.h|nn_private\.h|[a-z]+_internal\.h)"'
bad=$(grep -rn --include='*.c' --include='*.h' '^#include "' nn |
      awk -F'#include ' '{ print $0 "\t" $2 }' | while IFS=$'\t' read -r line inc; do
        [[ $inc =~ $allowed ]] || echo "$line"; done)
if [ -n "$bad" ]; then
  echo "nn-api-check: nn/ includes headers beyond the public API:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "nn-api-check: nn/ includes only the public API ($(ls nn/*.c nn/*/*.c | wc -l) files)"
