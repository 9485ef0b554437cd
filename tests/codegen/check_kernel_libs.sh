#!/usr/bin/env bash
# `make check-kernel-libs`: ExecuTorch's kernel-library files (../shared/thirdparty-specs/
# executorch/*.yaml) against PyTorch 2.15.0's native_functions.yaml (issue 35):
#   1. all of them check in one run (`tgen --check --select F1 --select F2 ...`: the spec is
#      read once), with a summary per file and no error;
#   2. each generates (`tgen --gen --select F`: the selected core operators, and the file's
#      custom operators as an operator library per namespace) into a scratch directory, where
#      every generated .c compiles with -Wall -Wextra -Werror against the runtime's headers
#      (syntax and types only, as check_pytorch_specs.sh compiles).
# Absent files are skipped with a note.
#   tests/codegen/check_kernel_libs.sh TGEN [CC]
set -euo pipefail
TGEN=$1
CC=${2:-${CC:-cc}}
cd "$(dirname "$0")/../.."
dir=../shared/thirdparty-specs/executorch
spec=../shared/pytorch-2.15.0/native_functions.yaml
if ! ls "$dir"/*.yaml > /dev/null 2>&1 || [ ! -f "$spec" ]; then
  echo "check-kernel-libs: $dir or $spec is absent; skipped"
  exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
args=()
for f in "$dir"/*.yaml; do args+=(--select "$f"); done
t0=$(date +%s%N)
if ! "$TGEN" --check "${args[@]}" "$spec" > "$scratch/check.txt" 2> "$scratch/err.txt"; then
  echo "check-kernel-libs: tgen --check fails:" >&2
  head -20 "$scratch/err.txt" >&2
  exit 1
fi
ms=$((($(date +%s%N) - t0) / 1000000))
echo "check-kernel-libs: $(grep -c '^selection ' "$scratch/check.txt") files checked in one run, $ms ms"
for f in "$dir"/*.yaml; do
  name=$(basename "$f" .yaml)
  out=$scratch/$name
  mkdir -p "$out"
  if ! "$TGEN" --gen --select "$f" --native "$spec" --runtime runtime --templates templates \
       --out "$out/gen" > "$out/gen.txt" 2> "$out/err.txt"; then
    echo "check-kernel-libs: $name: tgen --gen fails:" >&2
    head -20 "$out/err.txt" >&2
    status=1
    continue
  fi
  failed=0
  for c in "$out"/gen/*.c; do
    if ! $CC -std=c11 -Wall -Wextra -Werror -fsyntax-only -Iruntime -I"$out/gen" "$c" \
         > "$out/cc.txt" 2>&1; then
      echo "check-kernel-libs: $name: $(basename "$c") does not compile:" >&2
      head -20 "$out/cc.txt" >&2
      failed=1
    fi
  done
  [ $failed = 0 ] || { status=1; continue; }
  libs=$(sed -n 's/^tgen: [0-9]* custom operators, one library each: \(.*\) (their files.*/\1/p' "$out/gen.txt")
  echo "check-kernel-libs: $name: $(ls "$out"/gen/*.c | wc -l) C files compile${libs:+; libraries: $libs}"
done
exit $status
