#!/usr/bin/env bash
# `make test-install`: tensorgen installs like a library package, and an operator library
# builds against the installed package alone. In a scratch prefix: `make install`, then the
# example operator library examples/visionops/ built with its own Makefile (pkg-config and the
# installed tgen only, nothing from this tree) and its tests run; the walkthrough of
# docs/extending.md followed verbatim (tests/docs/doc_check.py --installed); then `make uninstall`,
# which must leave no file behind.
#   tests/build/install_check.sh BUILD_DIR        (run from the repository root)
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
make --no-print-directory -s install BUILD="$build" PREFIX="$prefix"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
echo "test-install: tgen is $(pkg-config --variable=tgen tensorgen), templates in $(pkg-config --variable=templatesdir tensorgen)"
# The example reads nothing of the tree: a copy of it, built elsewhere.
cp -r examples/visionops "$scratch/visionops"
make --no-print-directory -C "$scratch/visionops" BUILD="$scratch/visionops-build" test
# docs/extending.md, followed as written in an empty folder against the package.
python3 tests/docs/doc_check.py --installed "$prefix" docs/extending.md
make --no-print-directory -s uninstall BUILD="$build" PREFIX="$prefix"
left=$(find "$prefix" -type f -o -type l)
if [ -n "$left" ]; then
  echo "test-install: make uninstall left files behind:" >&2
  echo "$left" >&2
  exit 1
fi
echo "test-install: installed, built and tested visionops against the package, uninstalled (no file left)"
