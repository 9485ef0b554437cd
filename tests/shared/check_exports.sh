#!/usr/bin/env bash
# What libtensorgen.so exports is the public API and nothing else (runtime/exports.sh makes
# the version script; this checks the library that came out of the link):
#   - every exported symbol of node TENSORGEN_<soversion> is declared in an installed header
#     (BUILD/exports/public.txt), and every one declared there is exported;
#   - node TENSORGEN_PRIVATE_<version> holds exactly what libtensorgen_cuda.so imports from
#     the core (BUILD/exports/private.txt; empty without CUDA), and none of it is declared in an
#     installed header;
#   - nothing else is exported; the soname is libtensorgen.so.<soversion>; the library needs no
#     CUDA library and carries no STATIC_TLS flag (it must load with dlopen);
#   - libtensorgen_cuda.so exports nothing and needs libtensorgen.so.<soversion>.
#   tests/shared/check_exports.sh BUILD_DIR SOVERSION VERSION
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR SOVERSION VERSION}
soversion=${2:?} version=${3:?}
so=$build/libtensorgen.so.$version
cuda_so=$build/libtensorgen_cuda.so.$version
public=$build/exports/public.txt private=$build/exports/private.txt
fail=0
bad() { echo "check_exports: $*" >&2; fail=1; }

# `name@@NODE` for every defined dynamic symbol (the node's own symbol excepted).
exported() { nm -D --defined-only "$1" | awk '$3 !~ /^TENSORGEN/ {print $3}' | sort -u; }
exported "$so" > "$build/exports/exported.txt"

while IFS=@ read -r name _ node; do
  case "$node" in
  "TENSORGEN_$soversion") grep -qx "$name" "$public" || bad "$name is exported but no installed header declares it" ;;
  "TENSORGEN_PRIVATE_$version")
    grep -qx "$name" "$private" || bad "$name is in the private node but the CUDA backend does not use it"
    grep -qx "$name" "$public" && bad "$name is private but an installed header declares it" ;;
  *) bad "$name is exported outside tensorgen's version nodes (node '$node')" ;;
  esac
done < "$build/exports/exported.txt"
while read -r name; do
  grep -q "^$name@@TENSORGEN_$soversion\$" "$build/exports/exported.txt" ||
    bad "$name is declared in an installed header but not exported"
done < "$public"

dyn=$(readelf -d "$so")
grep -q "Library soname: \[libtensorgen.so.$soversion\]" <<< "$dyn" || bad "the soname is not libtensorgen.so.$soversion"
if grep -E 'NEEDED.*(cuda|cublas|nvrtc|stdc\+\+)' <<< "$dyn"; then bad "the core library needs the libraries above"; fi
if grep -q STATIC_TLS <<< "$dyn"; then bad "the library is marked STATIC_TLS: dlopen can refuse it"; fi

if [ -f "$cuda_so" ]; then
  n=$(nm -D --defined-only "$cuda_so" | awk '$3 !~ /^(_init|_fini)$/' | wc -l)
  [ "$n" = 0 ] || bad "libtensorgen_cuda.so exports $n symbols: $(nm -D --defined-only "$cuda_so" | head -3)"
  readelf -d "$cuda_so" | grep -q "NEEDED.*\[libtensorgen.so.$soversion\]" || bad "libtensorgen_cuda.so does not link libtensorgen.so.$soversion"
fi

if [ "$fail" = 0 ]; then
  echo "check_exports: $(grep -c "@@TENSORGEN_$soversion\$" "$build/exports/exported.txt") public symbols" \
       "(every one declared in an installed header), $(grep -c "@@TENSORGEN_PRIVATE" "$build/exports/exported.txt" || true)" \
       "private ones for libtensorgen_cuda (node TENSORGEN_PRIVATE_$version), nothing else; soname" \
       "libtensorgen.so.$soversion, no CUDA dependency, no STATIC_TLS"
fi
exit $fail
