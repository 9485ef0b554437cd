#!/usr/bin/env bash
# Fails when a generated C source of DIR is over MAX lines, naming each (docs/generated-code.md,
# "Shards": the operator-wide sources are sharded so that none grows with the operator count).
#   tests/build/check_gen_sizes.sh DIR MAX [LABEL]
set -euo pipefail
dir=$1 max=$2 label=${3:-$1}
largest=$(wc -l "$dir"/*.c | grep -v " total$" | sort -n | tail -1 | awk '{ print $2 " (" $1 " lines)" }')
over=$(wc -l "$dir"/*.c | grep -v ' total$' | awk -v m="$max" '$1 > m')
if [ -n "$over" ]; then
  echo "generated sources of $label over $max lines:" >&2
  echo "$over" >&2
  exit 1
fi
echo "check-gen-sizes: $label: $(ls "$dir"/*.c | wc -l) generated sources, the largest $largest, at most $max"
