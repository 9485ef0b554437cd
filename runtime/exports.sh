#!/usr/bin/env bash
# What libtensorgen.so exports (the Makefile runs this; tests/shared/check_exports.sh checks the
# result). The public API is exactly what the installed headers declare, so the export list is
# computed from them rather than kept by hand:
#
#   exports.sh public HEADER...          the functions the headers declare (gcc -aux-info lists
#                                        every prototype a translation unit sees; static inline
#                                        helpers are left out) and their extern variables
#   exports.sh private PUBLIC "CORE_OBJS" "BACKEND_OBJS"
#                                        the core's symbols that the CUDA backend's objects call
#                                        and no public header declares (empty without CUDA)
#   exports.sh map SOVERSION VERSION PUBLIC PRIVATE
#                                        the linker version script: the public names in node
#                                        TENSORGEN_<SOVERSION>, the private ones in node
#                                        TENSORGEN_PRIVATE_<VERSION>, everything else local
set -euo pipefail
cmd=${1:?usage: exports.sh public|private|map ...}
shift

case "$cmd" in
public)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  for h in "$@"; do printf '#include "%s"\n' "$h"; done > "$tmp/all.c"
  # Each aux-info line is `/* FILE:LINE:KIND */ [extern|static] DECL;`: keep the names of the
  # non-static declarations made in the project's headers (relative paths; the system's are
  # absolute).
  ${CC:-cc} -std=c11 -D_GNU_SOURCE -I. -Iruntime -Inn -Igenerated -fsyntax-only -aux-info "$tmp/aux.txt" "$tmp/all.c"
  {
    grep -E '^/\* [^/ ][^:]*:[0-9]+:' "$tmp/aux.txt" | sed -E 's|^/\*[^*]*\*/ ||' |
      sed -nE 's/^extern [^(]*[ *]([A-Za-z_][A-Za-z0-9_]*) \(.*$/\1/p'
    # Variables: `extern TYPE name;` or `extern TYPE name[];` (the generated defaults of int[]
    # arguments, tg__default_conv2d_stride) at the start of a line in the headers.
    # The per-operator headers (generated/ops/) come in through generated/tg_ops.h.
    sed -nE 's/^extern [A-Za-z_][A-Za-z0-9_ *]*[ *]([A-Za-z_][A-Za-z0-9_]*)(\[[^]]*\])?;.*$/\1/p' \
      "$@" $(for h in "$@"; do case $h in */tg_ops.h) ls "$(dirname "$h")"/ops/*.h ;; esac; done)
  } | sort -u
  ;;
private)
  public=$1 core=$2 backend=$3
  [ -n "$backend" ] || exit 0
  # shellcheck disable=SC2086
  comm -12 <(nm -u --format=just-symbols $backend | sort -u) \
           <(nm --defined-only --extern-only --format=just-symbols $core | sort -u) |
    comm -23 - "$public"
  ;;
map)
  soversion=$1 version=$2 public=$3 private=$4
  echo "TENSORGEN_$soversion {"
  echo "  global:"
  sed 's/^/    /; s/$/;/' "$public"
  echo "  local: *;"
  echo "};"
  if [ -s "$private" ]; then
    echo "TENSORGEN_PRIVATE_$version {"
    echo "  global:"
    sed 's/^/    /; s/$/;/' "$private"
    echo "} TENSORGEN_$soversion;"
  fi
  ;;
*)
  echo "exports.sh: unknown command '$cmd'" >&2
  exit 2
  ;;
esac
