#!/usr/bin/env bash
# The selective build's test (make test-select; select.mk, docs/generated-code.md "Selective
# builds"): select tests/build/select/ops.txt (add.Tensor, mul.Tensor, sum.dim_IntList, relu),
# build $BUILD/select/libtensorgen.{a,so}, run a program using those operators forward and
# backward against each, and check that operators outside the closure are absent from both
# libraries while the selected ones are there. Reuses the full build's objects (the Makefile
# target depends on them), so with them built it compiles only the few generated sources.
#
#   tests/build/select_check.sh BUILD CUDA      (CC and MAKE from the environment)
set -euo pipefail
build=${1:?usage: select_check.sh BUILD CUDA}
cuda=${2:-0}
cc=${CC:-gcc}
mk() { ${MAKE:-make} --no-print-directory BUILD="$build" CUDA="$cuda" CC="$cc" "$@"; }
sel=$build/select
fail() { echo "select_check: $*" >&2; exit 1; }

mk select SELECT=tests/build/select/ops.txt > "$build/select.log" 2>&1 || { cat "$build/select.log" >&2; fail "the selective build failed"; }
grep -A5 '^selective build' "$build/select.log"
grep '^tgen: selected' "$build/select.log"

libs=$(mk -s print-libs)
flags="-std=c11 -Wall -Wextra -Werror -Iruntime -Inn -I$sel/gen"
# shellcheck disable=SC2086
$cc $flags -o "$sel/select_demo" tests/build/select/select_demo.c "$sel/libtensorgen.a" $libs
# shellcheck disable=SC2086
$cc $flags -o "$sel/select_demo_shared" tests/build/select/select_demo.c -L"$sel" -l:libtensorgen.so \
  -Wl,-rpath,"$(cd "$sel" && pwd)" -lm
want="sum 12 grad 3 0 3"
for prog in select_demo select_demo_shared; do
  got=$("$sel/$prog") || fail "$prog failed: $got"
  [ "$got" = "$want" ] || fail "$prog printed '$got', expected '$want'"
done

# What the libraries define: the selected operators' functions and kernels are there; an
# operator nothing selected calls is not (conv2d, softmax, embedding, ... and nn/).
for lib in "$sel/libtensorgen.a" "$sel/libtensorgen.so"; do
  defined=$(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u)
  for sym in tg_relu tg_mul tg_add_fn tg_sum_fn tg__generated_ops; do
    grep -qx "$sym" <<<"$defined" || fail "$lib lacks $sym, which the selection needs"
  done
  for sym in tg_conv2d_fn tg_softmax_fn tg_embedding_fn tg_layer_norm_fn tg_cross_entropy_fn tg_nn_linear_fn; do
    ! grep -qx "$sym" <<<"$defined" || fail "$lib defines $sym, which nothing selected calls"
  done
done

# Without autograd (no derivatives: no formula's operators, no engine's): smaller, and the
# forward still runs.
mk select SELECT=tests/build/select/ops.txt SELECT_AUTOGRAD=0 > "$build/select.log" 2>&1 || { cat "$build/select.log" >&2; fail "the selective build without autograd failed"; }
grep '^tgen: selected' "$build/select.log"
# shellcheck disable=SC2086
$cc $flags -o "$sel/select_demo" tests/build/select/select_demo.c "$sel/libtensorgen.a" $libs
got=$("$sel/select_demo" forward) || fail "select_demo forward failed: $got"
[ "$got" = "sum 12" ] || fail "select_demo forward printed '$got', expected 'sum 12'"
echo "select_check: the selected library runs tests/build/select/select_demo.c (static and shared; without autograd, forward); unselected operators absent"
