#!/usr/bin/env bash
# Packs what a GPU machine needs to run tensorgen's suite, examples and GPU benchmarks without
# building anything there (tests/gpu/README.md): the CUDA build's binaries and libraries, the
# shared libraries they load that are not part of glibc or the CUDA toolkit (OpenBLAS, SLEEF,
# cJSON, Criterion and their dependencies), the digits train_cnn reads and the licence texts
# train_gpt reads. The device machine has the CUDA 13 runtime, cuBLAS and cuDNN of its own.
#
#   tests/gpu/pack.sh [BUILD] [OUT]     default: build, .dev/bundle.tar.xz
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
OUT=${2:-.dev/bundle.tar.xz}
bins=("$BUILD/tgen" "$BUILD/tests/tg_tests" "$BUILD/bench/tg_bench" "$BUILD"/examples/*)
for f in "${bins[@]}"; do [ -x "$f" ] || { echo "pack: $f missing: build first" >&2; exit 1; }; done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/data"
# Every library the binaries load, less glibc's, the C++ runtime's and CUDA's (the device has
# its own, newer ones).
ldd "${bins[@]}" "$BUILD"/libtensorgen*.so.*.*.* 2>/dev/null | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so|/libcu|/libnv|/libtensorgen' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
cp /usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz "$stage/data/"
cp -rL /usr/share/common-licenses "$stage/data/licenses"
mkdir -p "$(dirname "$OUT")"
tar -cf - "${bins[@]}" "$BUILD"/libtensorgen*.so* -C "$stage" lib data | xz -T2 -6 > "$OUT"
echo "pack: $OUT $(du -h "$OUT" | cut -f1)"
