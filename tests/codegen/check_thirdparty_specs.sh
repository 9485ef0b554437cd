#!/usr/bin/env bash
# `make check-thirdparty-specs` (issue 35): every spec file of ../shared/thirdparty-specs/, the
# forms PyTorch's neighbours write (backend YAML, kernel-library YAML, sectioned and 1.5-era
# specs, operator libraries), checked as tests/codegen/thirdparty_specs.tsv says it must give:
#   ok      `tgen --check FLAGS NATIVE [DERIVATIVES]` exits 0 with no error; where the row names
#           a core spec, `tgen --gen FLAGS --native NATIVE [--derivatives DERIVATIVES]` writes
#           its sources into a scratch directory and every generated .c compiles with
#           -Wall -Wextra -Werror against the runtime's headers and the generated headers of
#           that core spec (`tg`: the project's generated/; a PyTorch release: generated here
#           once; `self`: the row's own output), syntax and types only;
#   errors  tgen exits 1 and prints exactly tests/codegen/thirdparty/<name>.expected: the errors
#           that are truly in the file, each at its entry (TensorPlay's C++ types, ...).
# The time of the checks of all rows together is printed (issue 35 asks for under 0.5 s);
# CHECK_ONLY=1 runs the checks only, no generation, as bench/run.sh does to time them.
#   [CHECK_ONLY=1] tests/codegen/check_thirdparty_specs.sh TGEN [CC]
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
check_ns=0  # wall time of the `tgen --check` runs, all rows
check_cpu=0 # their CPU time (user + system), milliseconds: on a shared machine wall time
            # measures the neighbours too
n=0
# The CPU time this shell's finished children have used, in milliseconds, from bash's `times`
# written to a file (in a $(...) subshell, `times` would report the subshell's children).
children_cpu_ms() {
  tail -1 "$1" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] }
                        printf "%d", t * 1000 }'
}
# A row's paths: @T/ is the third-party folder, @S/ ../shared/ (PyTorch's releases).
expand() { sed -e "s|@T/|$specs/|g" -e "s|@S/|../shared/|g" <<<"$1"; }
# core_headers CORE: the directory of generated headers a row's output compiles against.
core_headers() {
  case $1 in
    tg) echo generated ;;
    self) echo "$scratch/none" ;;
    *)
      local dir=$scratch/core-$1
      if [ ! -d "$dir" ]; then
        "$TGEN" --gen --native "../shared/pytorch-$1/native_functions.yaml" --runtime runtime \
          --templates templates --out "$dir" > /dev/null
      fi
      echo "$dir" ;;
  esac
}
while IFS=$'\t' read -r name want core flags native derivs; do
  case $name in '#'* | '') continue ;; esac
  n=$((n + 1))
  read -ra fl <<<"$(expand "$flags")"
  native=$(expand "$native")
  derivs=$(expand "${derivs:--}")
  files=("$native")
  gen_files=(--native "$native")
  if [ "$derivs" != - ]; then
    files+=("$derivs")
    gen_files+=(--derivatives "$derivs")
  fi
  if [ "$want" = gen ]; then
    n=$((n - 1)) # checked by another row
    [ "${CHECK_ONLY:-0}" = 1 ] && continue
  else
    t0=$(date +%s%N)
    times > "$scratch/cpu0"
    rc=0
    "$TGEN" --check "${fl[@]}" "${files[@]}" > "$scratch/out.txt" 2> "$scratch/err.txt" || rc=$?
    times > "$scratch/cpu1"
    check_ns=$((check_ns + $(date +%s%N) - t0))
    row_cpu=$(($(children_cpu_ms "$scratch/cpu1") - $(children_cpu_ms "$scratch/cpu0")))
    check_cpu=$((check_cpu + row_cpu))
  fi
  case $want in
    gen) : > "$scratch/out.txt" ;;
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
      echo "check-thirdparty-specs: $name: $(grep -c ': error: ' "$scratch/err.txt") errors, as listed in" \
           "$expected ($row_cpu ms)"
      continue ;;
    *) echo "check-thirdparty-specs: $name: bad expectation '$want'" >&2; exit 2 ;;
  esac
  # The first line; for kernel-library files the line about the selection, or their count.
  nsel=$(grep -c '^selection' "$scratch/out.txt" || true)
  if [ "$want" = gen ]; then
    summary="checked in the row of its neighbours"
  elif [ "$nsel" -gt 1 ]; then
    summary="$nsel kernel-library files checked in one run"
  else
    summary=$(grep -m1 '^selection' "$scratch/out.txt" || head -1 "$scratch/out.txt")
    summary=$(sed "s/^selection [^:]*: //" <<<"$summary" | cut -c1-130)
  fi
  if [ "$core" != - ] && [ "${CHECK_ONLY:-0}" != 1 ]; then
    out=$scratch/$name
    headers=$(core_headers "$core")
    read -ra gen_fl <<<"$(sed 's/--strict//' <<<"${fl[*]}")" # --gen checks formulas always
    if ! "$TGEN" --gen "${gen_fl[@]}" "${gen_files[@]}" --runtime runtime --templates templates --out "$out" \
         > /dev/null 2> "$scratch/gen.txt"; then
      echo "check-thirdparty-specs: $name: tgen --gen fails:" >&2
      head -10 "$scratch/gen.txt" >&2
      status=1
      continue
    fi
    for f in "$out"/*.c; do
      if ! $CC -std=c11 -Wall -Wextra -Werror -fsyntax-only -Iruntime -I"$out" -I"$headers" "$f" \
           > "$scratch/cc.txt" 2>&1; then
        echo "check-thirdparty-specs: $name: generated $(basename "$f") does not compile:" >&2
        head -20 "$scratch/cc.txt" >&2
        status=1
      fi
    done
    summary="$summary; $(ls "$out"/*.c | wc -l) generated C files compile"
  fi
  [ "$want" = gen ] || summary="$summary ($row_cpu ms)"
  echo "check-thirdparty-specs: $name: $summary"
done < tests/codegen/thirdparty_specs.tsv
ms=$((check_ns / 1000000))
# Printed, not asserted (timing is the benchmarks' job: bench/run.sh's
# tgen_check_thirdparty_specs; issue 35 asks for under 0.5 s).
echo "check-thirdparty-specs: $n checks of every file took $check_cpu ms of CPU time," \
     "$ms ms of wall time"
exit $status
