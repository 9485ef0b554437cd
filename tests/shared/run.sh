#!/usr/bin/env bash
# `make test-shared`: the shared library as users and bindings load it.
#   1. exports (check_exports.sh): the public API only, soname, no CUDA dependency, no
#      STATIC_TLS;
#   2. dlopen from a C program after libgomp and OpenBLAS, and from python3's ctypes (glibc's
#      default settings);
#   3. operator libraries loaded at run time (shared_load_library.c, against libtensorgen.so.0);
#   4. with the CUDA libraries out of reach (each soname the CUDA backend needs, and the
#      driver's, shadowed by a file that is no library in a directory put first on
#      LD_LIBRARY_PATH: the dynamic loader stops there with "invalid ELF header", so no process
#      can load them; cuda_hidden proves it): the examples, linked to libtensorgen.so.0, and the
#      whole CPU suite, built without CUDA and linked to a build of the core library from the
#      same objects that also exports the internals the suite calls (BUILD/tests/nocuda/).
#   tests/shared/run.sh BUILD_DIR SOVERSION VERSION
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR SOVERSION VERSION}
soversion=${2:?} version=${3:?}
cd "$(dirname "$0")/../.."
so=$build/libtensorgen.so.$soversion
say() { echo "test-shared: $*"; }

tests/shared/check_exports.sh "$build" "$soversion" "$version"

# The loaded libgomp and OpenBLAS, as the dynamic loader resolves them for libtensorgen.
lib_of() { ldd "$so" | awk -v n="$1" '$1 ~ n {print $3; exit}'; }
"$build/tests/dlopen_after_deps" "$so" "$(lib_of libgomp)" "$(lib_of libopenblas)"
/usr/bin/python3 - "$so" <<'EOF'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])               # glibc's default dlopen, as every binding does
lib.tg_tensor_from_data.restype = ctypes.c_void_p
lib.tg_tensor_from_data.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64, ctypes.c_int]
lib.tg_mul_scalar.restype = ctypes.c_void_p
lib.tg_mul_scalar.argtypes = [ctypes.c_void_p, ctypes.c_double]
lib.tg_item.restype = ctypes.c_double
lib.tg_item.argtypes = [ctypes.c_void_p]
lib.tg_release.argtypes = [ctypes.c_void_p]
one = (ctypes.c_double * 1)(21.0)
x = lib.tg_tensor_from_data(one, (ctypes.c_int64 * 1)(1), 1, 9)   # TG_FLOAT64
y = lib.tg_mul_scalar(x, 2.0)
v = lib.tg_item(y)
lib.tg_release(y); lib.tg_release(x)
assert v == 42.0, v
print("test-shared: python3 ctypes.CDLL loads libtensorgen.so.0 and computes 21 * 2 =", v)
EOF

TESTOPS_LIB=$build/tests/libtestops.so TESTOPS_COPY_LIB=$build/tests/libtestops_copy.so \
  NOTOPS_LIB=$build/tests/libnotops.so "$build/tests/tg_tests_shared" -j2

# CUDA out of reach: every CUDA soname shadowed by a stub that cannot load.
stubs=$build/tests/cuda-stubs
rm -rf "$stubs"
mkdir -p "$stubs"
cuda_sonames=(libcuda.so libcuda.so.1 libcudart.so libcublas.so libcublasLt.so)
if [ -f "$build/libtensorgen_cuda.so.$soversion" ]; then
  mapfile -t -O ${#cuda_sonames[@]} cuda_sonames < <(readelf -d "$build/libtensorgen_cuda.so.$soversion" |
    sed -n 's/.*NEEDED.*\[\(libcu[a-zA-Z]*\.so[.0-9]*\)\].*/\1/p')
fi
for n in "${cuda_sonames[@]}"; do echo "a stand-in that cannot be loaded" > "$stubs/$n"; done
hidden() { LD_LIBRARY_PATH=$stubs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"; }
hidden "$build/tests/cuda_hidden" "${cuda_sonames[@]}"
for ex in "$build"/examples/*; do
  hidden "$ex" > "$build/tests/$(basename "$ex").hidden.log"
  say "$(basename "$ex") ran with the CUDA libraries out of reach"
done
log=$build/tests/nocuda.log
if ! TGEN=$build/tgen hidden "$build/tests/tg_tests_nocuda" -j2 > "$log" 2>&1; then
  grep -E '^\[(FAIL|----)\]' "$log" | head -40 >&2
  echo "test-shared: the CPU suite failed with the CUDA libraries out of reach ($log)" >&2
  exit 1
fi
say "the CPU suite passed with the CUDA libraries out of reach: $(grep -o 'Tested: .*' "$log")"
