#!/bin/sh
# run-test.sh - the test wrapper (LOG_COMPILER): runs a test program or
# script; with LOAMS_VALGRIND=1 compiled tests run under valgrind and any
# error fails the test.  The last line of each test's log says how long it
# took ("# took N s"), so that scripts/test-all.sh can name the slowest.
set -u
prog="$1"
shift
t0=$(date +%s)
took() { echo "# took $(($(date +%s) - t0)) s"; }
case "$prog" in
*.sh)
  sh "$prog" "$@"
  rc=$?
  took
  exit $rc
  ;;
esac
if [ "${LOAMS_VALGRIND:-0}" = 1 ]; then
  if [ -x "$(dirname "$prog")/.libs/$(basename "$prog")" ]; then
    "$(dirname "$prog")/../libtool" --mode=execute valgrind --quiet \
      --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
      "$prog" "$@"
  else
    valgrind --quiet --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite "$prog" "$@"
  fi
  rc=$?
  took
  exit $rc
fi
"$prog" "$@"
rc=$?
took
exit $rc
