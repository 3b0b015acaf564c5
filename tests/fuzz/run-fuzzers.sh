#!/bin/bash
# run-fuzzers.sh BUILD_DIR [SECONDS] - runs every libFuzzer target built in
# BUILD_DIR/tests/fuzz for a bounded time each, from its seed corpus.
# A target that fails prints its report (the input that broke it is kept in
# BUILD_DIR/tests/fuzz/artifacts/) and the script exits non-zero after
# running the others.
set -uo pipefail
build=${1:?usage: run-fuzzers.sh BUILD_DIR [SECONDS]}
# 30 s a target keeps the whole run (12 targets) near 6 minutes in CI.
secs=${2:-${LOAMS_FUZZ_SECONDS:-30}}
# A fixed seed makes a run repeat the same inputs (CI checks for
# regressions on a known path, so a red run is reproducible);
# LOAMS_FUZZ_SEED=0 explores with a random seed, as a long run should.
seed=${LOAMS_FUZZ_SEED:-1}
src=$(cd "$(dirname "$0")" && pwd)
make -C "$build" -j"$(nproc)" >/dev/null || exit 1
# Undefined behaviour fails a target (for targets built without
# -fno-sanitize-recover too).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
artifacts="$build/tests/fuzz/artifacts"
mkdir -p "$artifacts"
n=0
bad=""
for f in "$build"/tests/fuzz/fuzz-*; do
  [ -x "$f" ] || continue
  name=$(basename "$f")
  corpus=$(mktemp -d)
  out=$(mktemp)
  [ -d "$src/corpus/$name" ] && cp -r "$src/corpus/$name/." "$corpus/"
  echo "fuzzing $name for ${secs}s"
  if "$f" -max_total_time="$secs" -seed="$seed" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$name-" "$corpus" >"$out" 2>&1; then
    tail -n 5 "$out"
  else
    echo "FAILED: $name (input kept under $artifacts)"
    grep -a -v '^#[0-9]' "$out" | tail -n 40
    bad="$bad $name"
  fi
  rm -rf "$corpus" "$out"
  n=$((n + 1))
done
echo "$n fuzz targets ran"
if [ -n "$bad" ]; then
  echo "failed:$bad"
  exit 1
fi
