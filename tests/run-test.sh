#!/bin/sh
# run-test.sh - the test wrapper (LOG_COMPILER): runs a test program or
# script; with LOAMS_VALGRIND=1 compiled tests run under valgrind and any
# error fails the test.
set -u
prog="$1"
shift
case "$prog" in
*.sh) exec sh "$prog" "$@" ;;
esac
if [ "${LOAMS_VALGRIND:-0}" = 1 ]; then
  real="$prog"
  [ -x "$(dirname "$prog")/.libs/$(basename "$prog")" ] && \
    exec "$(dirname "$prog")/../libtool" --mode=execute valgrind --quiet \
      --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
      "$prog" "$@"
  exec valgrind --quiet --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite "$real" "$@"
fi
exec "$prog" "$@"
