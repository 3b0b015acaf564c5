#!/bin/bash
# valgrind-cli.sh BUILD_DIR - the CLI paths that load plugins run
# valgrind-clean (no errors, no definite leaks): --version, --help, and
# --list-plugins (table and JSON) over every plugin built in BUILD_DIR plus
# the bad test plugins (when `make check` built them), so that loading,
# rejecting and unloading are all covered.
set -euo pipefail
build=${1:?usage: valgrind-cli.sh BUILD_DIR}
host="$build/core/loams-host"
vg() {
  "$build/libtool" --mode=execute valgrind --quiet --error-exitcode=99 \
    --leak-check=full --errors-for-leak-kinds=definite "$@"
}
vg "$host" --version >/dev/null
vg "$host" --help >/dev/null
dirs=()
for d in "$build"/plugins/*/.libs "$build"/tests/plugins/*/.libs; do
  [ -d "$d" ] && dirs+=(--plugin-dir "$d")
done
for mode in "" --json; do
  rc=0
  out=$(vg "$host" --list-plugins $mode --no-default-plugin-dirs "${dirs[@]}" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
    echo "$out"
    echo "valgrind found errors in --list-plugins $mode (exit status $rc)"
    exit 1
  fi
done
vg "$host" selfcheck --no-default-plugin-dirs "${dirs[@]}" >/dev/null || {
  echo "selfcheck failed or valgrind found errors (exit status $?)"
  exit 1
}
echo "valgrind clean (${#dirs[@]} plugin dir arguments)"
