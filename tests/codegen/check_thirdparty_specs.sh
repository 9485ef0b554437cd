#!/usr/bin/env bash
# `make check-thirdparty-specs` (issue 35): every spec file of ../shared/thirdparty-specs/, the
# forms PyTorch's neighbours write (backend YAML, kernel-library YAML, sectioned and 1.5-era
# specs, operator libraries), checked as tests/codegen/thirdparty_specs.tsv says it must give:
#   ok      `tgen --check` exits 0 with no error; where the row says `gen`, `tgen --gen` writes
#           its sources into a scratch directory and every generated .c compiles with
#           -Wall -Wextra -Werror against the runtime's headers (syntax and types only);
#   errors  tgen exits 1 and prints exactly tests/codegen/thirdparty/<name>.expected: the errors
#           that are truly in the file, each at its entry (TensorPlay's C++ types, ...).
# The checks of all rows together must take under 0.5 s (issue 35; bench/run.sh times them too).
#   tests/codegen/check_thirdparty_specs.sh TGEN [CC]
set -euo pipefail
TGEN=$1
CC=${2:-${CC:-cc}}
cd "$(dirname "$0")/../.."
specs=../shared/thirdparty-specs
if [ ! -d "$specs" ]; then
  echo "check-thirdparty-specs: $specs is absent; skipped"
  exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
check_ns=0 # nanoseconds spent in `tgen --check`, all rows
n=0
# A row's arguments: @T/ is the third-party folder, @P/ PyTorch 2.15.0's.
expand() { sed -e "s|@T/|$specs/|g" -e "s|@P/|../shared/pytorch-2.15.0/|g" <<<"$1"; }
while IFS=$'\t' read -r name want gen args; do
  case $name in '#'* | '') continue ;; esac
  n=$((n + 1))
  read -ra argv <<<"$(expand "$args")"
  t0=$(date +%s%N)
  rc=0
  "$TGEN" --check "${argv[@]}" > "$scratch/out.txt" 2> "$scratch/err.txt" || rc=$?
  check_ns=$((check_ns + $(date +%s%N) - t0))
  case $want in
    ok)
      if [ $rc != 0 ] || grep -q ': error: ' "$scratch/err.txt"; then
        echo "check-thirdparty-specs: $name: expected to check cleanly, got exit $rc:" >&2
        head -10 "$scratch/err.txt" >&2
        status=1
        continue
      fi ;;
    errors)
      expected=tests/codegen/thirdparty/$name.expected
      if [ $rc != 1 ] || ! diff -u "$expected" "$scratch/err.txt" > "$scratch/diff.txt"; then
        echo "check-thirdparty-specs: $name: exit $rc, errors differ from $expected:" >&2
        head -30 "$scratch/diff.txt" >&2
        status=1
      fi
      echo "check-thirdparty-specs: $name: $(grep -c ': error: ' "$scratch/err.txt") errors, as listed in $expected"
      continue ;;
    *) echo "check-thirdparty-specs: $name: bad expectation '$want'" >&2; exit 2 ;;
  esac
  summary=$(tail -1 "$scratch/out.txt" | cut -c1-110)
  if [ "$gen" = gen ]; then
    out=$scratch/$name
    if ! "$TGEN" --gen "${argv[@]}" --runtime runtime --templates templates --out "$out" \
         > /dev/null 2> "$scratch/gen.txt"; then
      echo "check-thirdparty-specs: $name: tgen --gen fails:" >&2
      head -10 "$scratch/gen.txt" >&2
      status=1
      continue
    fi
    for f in "$out"/*.c; do
      if ! $CC -std=c11 -Wall -Wextra -Werror -fsyntax-only -Iruntime -I"$out" "$f" \
           > "$scratch/cc.txt" 2>&1; then
        echo "check-thirdparty-specs: $name: generated $(basename "$f") does not compile:" >&2
        head -20 "$scratch/cc.txt" >&2
        status=1
      fi
    done
    summary="$summary; $(ls "$out"/*.c | wc -l) generated C files compile"
  fi
  echo "check-thirdparty-specs: $name: $summary"
done < tests/codegen/thirdparty_specs.tsv
ms=$((check_ns / 1000000))
echo "check-thirdparty-specs: $n checks took $ms ms in all (limit 500 ms)"
if [ $ms -ge 500 ]; then
  echo "check-thirdparty-specs: over the limit" >&2
  status=1
fi
exit $status
