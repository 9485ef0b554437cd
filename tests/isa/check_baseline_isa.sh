#!/usr/bin/env bash
# Fails when an object compiled for the baseline (every library object outside the
# per-capability directories cap-avx2/ and cap-avx512/) contains an AVX instruction: a VEX or
# EVEX encoded one (AT&T mnemonics starting with "v") or any use of a ymm/zmm register. Such an
# instruction would kill the library with SIGILL on a CPU without AVX. Also checks that the
# per-capability objects exist and that the AVX2 ones do use ymm registers (the flags reached
# them).
#   usage: tests/isa/check_baseline_isa.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
command -v objdump >/dev/null || { echo "objdump not found (binutils)" >&2; exit 1; }
case "$(${CC:-gcc} -dumpmachine)" in x86_64* | i?86*) ;; *)
    echo "check_baseline_isa: not x86, nothing to check"
    exit 0
    ;;
esac
bad=0 n=0
while IFS= read -r -d '' o; do
    n=$((n + 1))
    hits=$(objdump -d --no-show-raw-insn "$o" | awk -F'\t' 'NF >= 2 && ($2 ~ /^v/ || $2 ~ /%[yz]mm/) && c++ < 3 {print "    " $2}')
    if [ -n "$hits" ]; then
        echo "AVX instructions in the baseline object $o:" >&2
        echo "$hits" >&2
        bad=1
    fi
done < <(find "$build/obj" -name '*.o' -not -path '*/cap-avx2/*' -not -path '*/cap-avx512/*' \
    -not -path "$build/obj/codegen/*" -not -path "$build/obj/bench/*" -print0)
[ "$n" -gt 0 ] || { echo "no objects under $build/obj" >&2; exit 1; }
avx2=$(find "$build/obj/cap-avx2" -name '*.o' | head -1)
[ -n "$avx2" ] || { echo "no per-capability objects under $build/obj/cap-avx2" >&2; exit 1; }
if [ "$(objdump -d "$build/obj/cap-avx2/generated/ufunc/unary_cap.o" | grep -c "%ymm")" = 0 ]; then
    echo "cap-avx2/generated/ufunc/unary_cap.o has no ymm code: were the AVX2 flags applied?" >&2
    bad=1
fi
[ "$bad" = 0 ] && echo "check_baseline_isa: $n baseline objects free of AVX instructions"
exit $bad
