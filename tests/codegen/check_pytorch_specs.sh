#!/usr/bin/env bash
# `make check-pytorch-specs`: tgen takes PyTorch's whole spec (issue 10). For each release in
# ../shared/pytorch-<v>/ (native_functions.yaml, tags.yaml, derivatives.yaml):
#   1. `tgen --check --strict` exits 0 with no diagnostics;
#   2. `tgen --gen` writes the full surface into a scratch directory;
#   3. every generated C file (the CUDA backend's table tg_register_cuda.c too) compiles with
#      -Wall -Wextra -Werror against the runtime's headers (syntax and types only: nothing
#      links, since the project has kernels for a few hundred of these operators; the rest are
#      stubs), and none is over 25,000 lines (the shards keep them small).
# Then a sample of at least 50 entries of 2.15.0, of every type and dispatch form, is copied
# verbatim after the project's own spec (tests/codegen/sample_pytorch_entries.py), which must
# check, generate with the project's derivatives and compile the same way.
# A release whose files are absent is skipped with a note.
#   tests/codegen/check_pytorch_specs.sh TGEN [CC]
set -euo pipefail
TGEN=$1
CC=${2:-${CC:-cc}}
cd "$(dirname "$0")/../.."
status=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# compile_all DIR LABEL: every generated .c of DIR; 1 when one fails.
compile_all() {
  local f failed=0
  for f in "$1"/*.c; do
    if ! $CC -std=c11 -Wall -Wextra -Werror -fsyntax-only -Iruntime -I"$1" "$f" \
         > "$scratch/cc.txt" 2>&1; then
      echo "check-pytorch-specs: $2: $(basename "$f") does not compile:" >&2
      head -20 "$scratch/cc.txt" >&2
      failed=1
    fi
  done
  return $failed
}

for v in 1.13.1 2.9.1 2.15.0; do
  dir=../shared/pytorch-$v
  if [ ! -f "$dir/native_functions.yaml" ] || [ ! -f "$dir/derivatives.yaml" ]; then
    echo "check-pytorch-specs: $dir is absent; skipped"
    continue
  fi
  out=$scratch/$v
  mkdir -p "$out"
  if ! "$TGEN" --check --strict --runtime runtime "$dir/native_functions.yaml" \
       "$dir/derivatives.yaml" > "$out/check.txt" 2>&1 || [ "$(grep -c ': error: ' "$out/check.txt")" != 0 ]; then
    echo "check-pytorch-specs: tgen --check --strict fails on PyTorch $v:" >&2
    head -20 "$out/check.txt" >&2
    status=1
    continue
  fi
  start=$(date +%s.%N)
  if ! "$TGEN" --gen --native "$dir/native_functions.yaml" --derivatives "$dir/derivatives.yaml" \
       --runtime runtime --templates templates --out "$out/gen" --docs "$out/docs" > /dev/null 2> "$out/gen.txt"; then
    echo "check-pytorch-specs: tgen --gen fails on PyTorch $v:" >&2
    head -20 "$out/gen.txt" >&2
    status=1
    continue
  fi
  gen_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  nfun=$(sed -n 's/^ok: \([0-9]*\) functions.*/\1/p' "$out/check.txt")
  compile_all "$out/gen" "PyTorch $v" || { status=1; continue; }
  # Sharded: no generated source grows with the surface (docs/generated-code.md, "Shards").
  tests/build/check_gen_sizes.sh "$out/gen" 25000 "PyTorch $v" || { status=1; continue; }
  echo "check-pytorch-specs: PyTorch $v: $nfun functions checked, generated in ${gen_s} s," \
       "$(ls "$out"/gen/*.c | wc -l) C files compile with -Wall -Wextra -Werror (CPU and CUDA)"
  grep -E '^(not compiled|not checked|checked, but)' "$out/check.txt" | cut -c1-150 || true
done

p215=../shared/pytorch-2.15.0/native_functions.yaml
if [ -f "$p215" ]; then
  out=$scratch/sample
  mkdir -p "$out"
  summary=$(python3 tests/codegen/sample_pytorch_entries.py "$p215" specs/native_functions.yaml \
            "$out/native_functions.yaml" --min 50)
  if "$TGEN" --gen --native "$out/native_functions.yaml" --derivatives specs/derivatives.yaml \
       --tags specs/tags.yaml --runtime runtime --templates templates --out "$out/gen" \
       > /dev/null 2> "$out/gen.txt" && compile_all "$out/gen" "sample of 2.15.0"; then
    echo "check-pytorch-specs: $summary, after the project's spec: generated and compiled"
  else
    echo "check-pytorch-specs: the sample of 2.15.0 ($summary) does not generate:" >&2
    head -20 "$out/gen.txt" >&2
    status=1
  fi
fi
exit $status
