#!/bin/bash
# valgrind-cli.sh BUILD_DIR - the CLI paths that load plugins run
# valgrind-clean (no errors, no definite leaks).
set -euo pipefail
build=${1:?usage: valgrind-cli.sh BUILD_DIR}
host="$build/core/loams-host"
vg() {
  "$build/libtool" --mode=execute valgrind --quiet --error-exitcode=99 \
    --leak-check=full --errors-for-leak-kinds=definite "$@"
}
vg "$host" --version >/dev/null
if "$host" --help 2>/dev/null | grep -q -- --list-plugins; then
  out=$(vg "$host" --list-plugins --plugin-dir "$build/plugins" 2>&1) || rc=$?
  rc=${rc:-0}
  [ "$rc" -eq 99 ] && { echo "$out"; echo "valgrind found errors"; exit 1; }
fi
echo "valgrind clean"
