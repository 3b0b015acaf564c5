#!/bin/bash
# run-fuzzers.sh BUILD_DIR [SECONDS] - runs every libFuzzer target built in
# BUILD_DIR/tests/fuzz for a bounded time each, from its seed corpus.
set -euo pipefail
build=${1:?usage: run-fuzzers.sh BUILD_DIR [SECONDS]}
secs=${2:-${LOAMS_FUZZ_SECONDS:-60}}
src=$(cd "$(dirname "$0")" && pwd)
make -C "$build" -j"$(nproc)" >/dev/null
n=0
for f in "$build"/tests/fuzz/fuzz-*; do
  [ -x "$f" ] || continue
  name=$(basename "$f")
  corpus=$(mktemp -d)
  [ -d "$src/corpus/$name" ] && cp -r "$src/corpus/$name/." "$corpus/"
  echo "fuzzing $name for ${secs}s"
  "$f" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 "$corpus" \
    2>&1 | tail -n 5
  rm -rf "$corpus"
  n=$((n + 1))
done
echo "$n fuzz targets ran"
