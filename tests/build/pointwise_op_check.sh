#!/usr/bin/env bash
# Adding a pointwise operator (`make check-pointwise-op`). In a scratch copy of this tree: build,
# add the example operator of docs/adding-an-operator.md's section "A pointwise operator" with
# the page's own commands (its spec entry, its scalar function, its derivative), and check
#   - that the page's commands write at most MAX_FILES (3) files, and that, once `make` has
#     run, no other hand-written file changed (only generated/ and docs/ops.md);
#   - that it builds (the generated CPU kernel, its loops per CPU capability, its CUDA kernel)
#     and that the page's program gives the right values and gradients on the CPU under every
#     capability this machine has (TG_CPU_CAPABILITY=default, avx2, avx512);
#   - and on the CUDA backend run by the CPU emulator (tests/cuda_emu: the CUDA=emu build).
# Honours CC, CXX (ccache works: CCACHE_BASEDIR is set to the scratch copy) and EMU=0 (skip the
# emulator). Both builds start from this tree's own when there are ones (CI runs this check
# after `make test`): build/ (the CPU library, and with nvcc the CUDA one: the operator's
# generated .cu is compiled too) and build/cuda-emu (test-cuda-emu's), copied with their times,
# so that only what the operator changes is compiled; else each builds the whole library.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
max=${MAX_FILES:-3}
emu=${EMU:-1}
cc=${CC:-gcc}
cxx=${CXX:-g++}
doc=docs/adding-an-operator.md
unset MAKEFLAGS MFLAGS MAKELEVEL

scratch=$(mktemp -d "${TMPDIR:-/tmp}/tg-pointwise-op.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export CCACHE_BASEDIR=$scratch
cd "$root"
git ls-files -z --cached --others --exclude-standard |
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$scratch"
cd "$scratch"
fail() {
    echo "check-pointwise-op: $*" >&2
    exit 1
}

# The page's pointwise section: its ```sh blocks that write a file (`cat >> f` / `cat > f`),
# and its program (the block that writes /tmp/my_softsign_demo.c).
section() { awk '/^## A pointwise operator/ { on = 1 } on && /^## / && !/^## A pointwise/ { exit } on' "$doc"; }
blocks() {
    section | awk -v pat="$1" '/^```sh$/ { inblock = 1; first = 1; keep = 0; next }
        /^```$/ { inblock = 0; next }
        inblock && first { first = 0; keep = ($0 ~ ("^cat >>? " pat)) }
        inblock && keep'
}
blocks '(specs|kernels)/' >add_op.sh
blocks '/tmp/my_softsign_demo.c' | sed '/^EOF$/q' >demo.sh # the heredoc only
[ -s add_op.sh ] && [ -s demo.sh ] ||
    fail "$doc has no section 'A pointwise operator' with the operator's files and its program"

# Hand-written files before the change (what the operator may touch besides generated/).
snapshot() {
    find specs kernels runtime codegen templates -type f -newer "$1" 2>/dev/null | sort
}
# A copy of the tree's build dir `sub` (its libraries, objects and dependency files, under the
# same path so that they apply), when it has one; not the test, sanitizer and other builds
# inside it.
seed() {
    [ -f "$root/$1/libtensorgen.a" ] && [ -f "$root/$1/gen.stamp" ] || return 1
    mkdir -p "$1"
    (cd "$root/$1" && tar --exclude=./tests --exclude=./bench --exclude=./san --exclude=./cuda-emu \
        --exclude=./aarch64 --exclude=./fuzz --exclude=./fuzz-replay --exclude=./testops -cf - .) |
        tar -xf - -C "$1"
    echo "check-pointwise-op: starting from $1"
}
# The CPU build: the tree's build/ as it was made (CUDA as the Makefile decides), else CPU only.
if seed build; then
    cpu=(BUILD=build)
else
    cpu=(CUDA=0 BUILD=build-po)
fi
echo "check-pointwise-op: build (${cpu[*]}) in $scratch"
start=$SECONDS
make CC="$cc" CXX="$cxx" "${cpu[@]}" -j2 all >build.log 2>&1 || { tail -30 build.log; fail "the full build failed"; }
echo "check-pointwise-op: build took $((SECONDS - start)) s"

touch stamp && sleep 1
bash add_op.sh
written=$(sed -n 's/^cat >>\{0,1\} \([^ ]*\) .*/\1/p' add_op.sh | sort -u)
n=$(printf '%s\n' "$written" | grep -c .)
echo "check-pointwise-op: the page writes $n files (at most $max): $(echo $written)"
[ "$n" -le "$max" ] || fail "more than $max hand-written files for one pointwise operator"

start=$SECONDS
make CC="$cc" CXX="$cxx" "${cpu[@]}" -j2 all >rebuild.log 2>&1 || { tail -30 rebuild.log; fail "the rebuild failed"; }
units=$(grep -oE ' -c [^ ]+\.(c|cu) ' rebuild.log | awk '{ print $2 }' | sort | uniq -c | awk '{ print $2 ($1 > 1 ? " (x" $1 ")" : "") }')
echo "check-pointwise-op: rebuild took $((SECONDS - start)) s, compiled: $(echo $units)"
changed=$(snapshot stamp)
extra=$(comm -23 <(printf '%s\n' "$changed") <(printf '%s\n' "$written") | sed '/^$/d')
[ -z "$extra" ] || fail "files other than the page's changed: $(echo $extra)"

bash demo.sh # writes /tmp/my_softsign_demo.c; it is built here against this build
prog=$scratch/my_softsign_demo
lib=$(make -s CC="$cc" "${cpu[@]}" print-libs)
$cc -std=c11 -O2 -Iruntime -Inn -Igenerated -o "$prog" /tmp/my_softsign_demo.c "${cpu[-1]#BUILD=}"/libtensorgen.a $lib
have() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
for cap in default avx2 avx512; do
    case $cap in
    avx2) have avx2 && have fma || continue ;;
    avx512) have avx512f && have avx512dq && have avx512vl && have avx512bw || continue ;;
    esac
    TG_CPU_CAPABILITY=$cap "$prog" | sed 's/^/  /' || fail "wrong results on the CPU ($cap)"
done

if [ "$emu" = 1 ]; then
    echo "check-pointwise-op: the CUDA backend on the emulator (CUDA=emu build)"
    start=$SECONDS
    emu_build=build/cuda-emu # test-cuda-emu's (the same flags), so its dependency files apply
    seed "$emu_build" || true
    make CC="$cc" CXX="$cxx" CUDA=emu BUILD=$emu_build OPT=-O1 -j2 all >emu.log 2>&1 ||
        { tail -30 emu.log; fail "the emulator build failed"; }
    echo "check-pointwise-op: emulator build took $((SECONDS - start)) s," \
        "compiled $(grep -cE ' -c [^ ]+\.(c|cu|cpp) ' emu.log) units"
    san="-fsanitize=address,undefined -fno-omit-frame-pointer"
    $cc -std=c11 -O1 $san -Iruntime -Inn -Igenerated -o "$prog-emu" /tmp/my_softsign_demo.c \
        -Wl,--whole-archive $emu_build/libtensorgen_cuda.a -Wl,--no-whole-archive \
        $emu_build/libcudaemu.a -lstdc++ $emu_build/libtensorgen.a \
        $(make -s CC="$cc" CUDA=emu BUILD=$emu_build print-libs)
    ASAN_OPTIONS=detect_leaks=1:handle_segv=0 "$prog-emu" | sed 's/^/  /' ||
        fail "wrong results on the emulated CUDA device"
    "$prog-emu" | grep -q '^cuda' || fail "the emulated build saw no CUDA device"
fi
echo "check-pointwise-op: ok"
