#!/bin/bash
# bench-store.sh BUILD_DIR [COUNT] [SIZE] [THREADS] - bench-store on
# store-fs (a temp dir, fsync on) and on store-s3 against s3rver on
# 127.0.0.1 (tests/integration/s3rver-env.sh), same objects, same
# threads.  Prints the figures of each (docs/BENCHMARKS.md, "Object
# stores").
set -u
build=$(cd "${1:?usage: bench-store.sh BUILD_DIR [COUNT] [SIZE] [THREADS]}" && pwd)
count=${2:-2000}
size=${3:-65536}
threads=${4:-8}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/s3rver-env.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/loams-bench-store.XXXXXX")
trap 'loams_s3rver_stop; rm -rf "$work"' EXIT
bench="$build/tests/bench/bench-store"
# both store plugins in one dir under the build tree (the registry
# refuses a plugin dir others could write, as /tmp is)
plugdir=$(mktemp -d "$build/tests/bench-store-plugins.XXXXXX")
cp "$build"/plugins/store-fs/.libs/store-fs.so "$build"/plugins/store-s3/.libs/store-s3.so \
  "$plugdir/" || exit 1
trap 'loams_s3rver_stop; rm -rf "$work" "$plugdir"' EXIT
"$bench" "$plugdir" "file://$work/fs" - "$count" "$size" "$threads" || exit 1
loams_s3rver_install || exit 1
loams_s3rver_start "$work/s3rver" bench || exit 1
"$bench" "$plugdir" "s3://bench/run" "$loams_s3rver_endpoint" "$count" "$size" "$threads" ||
  exit 1
echo "s3rver CPU: $(ps -o cputime= -p "$loams_s3rver_pid")"
