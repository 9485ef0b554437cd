#!/usr/bin/env bash
# The rebuild cost of adding an operator (`make check-rebuild-cost`). In a scratch copy of this
# tree: build, add the example operator of docs/adding-an-operator.md (its spec entry and its
# kernel, the page's own commands, so that the page and this check agree), rebuild, and count
# the translation units make compiled; then add its derivative (the page's derivatives.yaml
# entry), rebuild and count again. Fails when the operator compiled more than MAX_UNITS
# (default 5: the kernel, tg_register.c and one shard each of tg_ops_<k>.c, tg_boxed_<k>.c and
# tg_autograd_<k>.c), the derivative
# more than 1 (its tg_autograd_<k>.c), or when either would compile a CUDA file:
#   CUDA=0 (default, fast): the .cu files' dependencies, as the preprocessor finds them
#          (g++ -MM -MG, which lists a missing CUDA header instead of failing), must name none
#          of the files the change wrote;
#   CUDA=1 (needs nvcc): the CUDA objects are built too, and the rebuild must run no nvcc.
# The example programs (build/examples/*) are compiled and linked in one step against the
# static library, so they are rebuilt after any change to it; they are listed, not counted.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cuda=${CUDA:-0}
max=${MAX_UNITS:-5}
doc=docs/adding-an-operator.md
# The caller's make variables (BUILD, CUDA) must not reach the scratch builds.
unset MAKEFLAGS MFLAGS MAKELEVEL

scratch=$(mktemp -d "${TMPDIR:-/tmp}/tg-rebuild-cost.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cd "$root"
# The working tree as it is (tracked and untracked files, not ignored ones such as build/).
git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$scratch"
cd "$scratch"
build=build-rc
logs=$scratch/$build
fail() {
    echo "check-rebuild-cost: $*" >&2
    exit 1
}

echo "check-rebuild-cost: full build (CUDA=$cuda) in $scratch"
start=$SECONDS
make CUDA="$cuda" BUILD=$build -j2 all >build.log 2>&1 || { tail -30 build.log; fail "the full build failed"; }
echo "check-rebuild-cost: full build took $((SECONDS - start)) s"

# The page's commands: each ```sh block that starts with `cat >> <file>` or `cat > <file>`,
# for the files named by the pattern $1.
# (Up to the section "A pointwise operator", which check-pointwise-op replays.)
extract() {
    awk -v pat="$1" '/^## A pointwise operator/ { exit }
        /^```sh$/ { inblock = 1; first = 1; keep = 0; next }
        /^```$/ { inblock = 0; next }
        inblock && first { first = 0; keep = ($0 ~ ("^cat >>? " pat)) }
        inblock && keep' "$doc"
}

status=0
# Rebuilds after step $1 and checks it compiled at most $2 units and no .cu file. $3: the files
# the step wrote by hand.
rebuild_and_count() {
    local step=$1 max=$2 added=$3 start=$SECONDS log=$logs/rebuild-$1.log
    make CUDA="$cuda" BUILD=$build -j2 all >"$log" 2>&1 ||
        { tail -30 "$log"; fail "the rebuild after adding the $step failed"; }
    local units n programs changed
    units=$(grep -oE ' -c [^ ]+\.(c|cu) ' "$log" | awk '{ print $2 }' || true)
    n=$(printf '%s' "$units" | grep -c . || true)
    echo "check-rebuild-cost: $step: rebuild took $((SECONDS - start)) s," \
        "$n translation units recompiled (at most $max):"
    printf '%s\n' "$units" | sed '/^$/d;s/^/  /'
    programs=$(grep -oE -- '-o [^ ]*/examples/[^ ]+' "$log" | awk '{ print $2 }' || true)
    [ -z "$programs" ] || echo "  example programs relinked (not counted): $(echo $programs)"
    if [ "$n" -gt "$max" ]; then
        echo "check-rebuild-cost: $step: more than $max units recompiled" >&2
        status=1
    fi
    if printf '%s\n' "$units" | grep -q '\.cu$'; then
        echo "check-rebuild-cost: $step: a CUDA file was recompiled" >&2
        status=1
    fi
    [ "$cuda" != 1 ] || return 0
    # The files the step wrote: by hand, and what tgen rewrote.
    changed=$( (printf '%s\n' "$added"; sed -n 's/^tgen: wrote //p' "$log") | sed '/^$/d' | sort -u)
    local cu deps hit bad=0
    for cu in kernels/cuda/*.cu; do
        deps=$(g++ -std=c++17 -MM -MG -DTG_WITH_CUDA -Iruntime -Inn -Igenerated -Ikernels/common \
            -Ikernels -Ikernels/cuda -x c++ "$cu" | tr ' \\' '\n\n' | sed '/^$/d;1d' | sort -u)
        hit=$(comm -12 <(printf '%s\n' "$changed") <(printf '%s\n' "$deps"))
        if [ -n "$hit" ]; then
            echo "check-rebuild-cost: $step: $cu would recompile: it includes $(echo $hit)" >&2
            status=1
            bad=1
        fi
    done
    [ $bad -ne 0 ] || echo "  no .cu file includes what changed ($(echo $changed))"
}

extract 'specs/native_functions.yaml|kernels/' >"$logs/add_op.sh"
grep -q '^cat >> specs/' "$logs/add_op.sh" && grep -q '^cat > kernels/' "$logs/add_op.sh" ||
    fail "$doc has no spec entry or no kernel to add (\`cat >> specs/...\`, \`cat > kernels/...\`)"
bash "$logs/add_op.sh"
rebuild_and_count operator "$max" "$(sed -n 's/^cat > \(kernels\/[^ ]*\) .*/\1/p' "$logs/add_op.sh")"

extract 'specs/derivatives.yaml' >"$logs/add_deriv.sh"
grep -q '^cat >> specs/derivatives.yaml' "$logs/add_deriv.sh" ||
    fail "$doc has no derivative to add (\`cat >> specs/derivatives.yaml\`)"
bash "$logs/add_deriv.sh"
rebuild_and_count derivative 1 ""

[ $status -ne 0 ] || echo "check-rebuild-cost: ok"
exit $status
