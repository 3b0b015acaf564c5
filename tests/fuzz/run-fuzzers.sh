#!/bin/bash
# run-fuzzers.sh BUILD_DIR [SECONDS] - runs every libFuzzer target built in
# BUILD_DIR/tests/fuzz for a bounded time each, from its seed corpus.
# A target that fails prints its report (the input that broke it is kept in
# BUILD_DIR/tests/fuzz/artifacts/) and the script exits non-zero after
# running the others.
set -uo pipefail
build=${1:?usage: run-fuzzers.sh BUILD_DIR [SECONDS]}
# 8 s a target, one per core, keeps the whole run (20-25 targets) near
# a minute and a half on two cores in CI (every target starts from its
# seed corpus and a fixed seed: a regression check); a long run passes
# more.
secs=${2:-${LOAMS_FUZZ_SECONDS:-8}}
# A fixed seed makes a run repeat the same inputs (CI checks for
# regressions on a known path, so a red run is reproducible);
# LOAMS_FUZZ_SEED=0 explores with a random seed, as a long run should.
seed=${LOAMS_FUZZ_SEED:-1}
src=$(cd "$(dirname "$0")" && pwd)
make -C "$build" -j"$(nproc)" fuzzers >/dev/null || exit 1
# Undefined behaviour fails a target (for targets built without
# -fno-sanitize-recover too).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
artifacts="$build/tests/fuzz/artifacts"
mkdir -p "$artifacts"
# Targets run LOAMS_FUZZ_JOBS at a time (default: one per core), each
# with one core, so the run takes secs * targets / jobs.
jobs=${LOAMS_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
outdir=$(mktemp -d)
trap 'rm -rf "$outdir"' EXIT

fuzz_one() { # fuzz_one TARGET: runs it; its output and status go to $outdir
  local f=$1 name corpus
  name=$(basename "$f")
  corpus=$(mktemp -d)
  [ -d "$src/corpus/$name" ] && cp -r "$src/corpus/$name/." "$corpus/"
  "$f" -max_total_time="$secs" -seed="$seed" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$name-" "$corpus" >"$outdir/$name.out" 2>&1
  echo $? >"$outdir/$name.rc"
  rm -rf "$corpus"
}

targets=()
for f in "$build"/tests/fuzz/fuzz-*; do
  [ -x "$f" ] && targets+=("$f")
done
echo "fuzzing ${#targets[@]} targets for ${secs}s each, $jobs at a time"
running=0
for f in "${targets[@]}"; do
  fuzz_one "$f" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
bad=""
for f in "${targets[@]}"; do
  name=$(basename "$f")
  if [ "$(cat "$outdir/$name.rc" 2>/dev/null)" = 0 ]; then
    echo "$name: $(grep -a -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' \
      "$outdir/$name.out" | sed 's/^stat:://; s/: */ /' | tr '\n' ' ')"
  else
    echo "FAILED: $name (input kept under $artifacts)"
    grep -a -v '^#[0-9]' "$outdir/$name.out" | tail -n 40
    bad="$bad $name"
  fi
done
echo "${#targets[@]} fuzz targets ran"
if [ -n "$bad" ]; then
  echo "failed:$bad"
  exit 1
fi
