#!/bin/sh
# task-journal-check-selftest.sh - the journal checker used by
# worker-serve.sh finds what it must find: overlapping epochs, one epoch on
# two nodes, a late or missing resumption, and no false alarm on a good
# journal.
set -u
build=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
check="$build/tests/integration/task-journal-check"
work=$(mktemp -d /tmp/loams-journal-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
expect() { # expect STATUS DESCRIPTION COMMAND...
  want=$1
  what=$2
  shift 2
  "$@" >"$work/out" 2>&1
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"
    cat "$work/out"
    fail=1
  else
    echo "ok: $what"
  fi
}

printf '%s\n' "t/0 1 a 100 200" "t/0 1 a 100 300" "t/0 2 b 300 500" "t/1 1 b 100 400" \
  "t/1 3 a 450 600" >"$work/good"
expect 0 "a journal with hand-offs only" "$check" overlap "$work/good"

printf '%s\n' "t/0 1 a 100 300" "t/0 2 b 250 400" >"$work/overlap"
expect 1 "two epochs overlapping" "$check" overlap "$work/overlap"

printf '%s\n' "t/0 1 a 100 200" "t/0 1 b 150 210" >"$work/twonodes"
expect 1 "one epoch on two nodes" "$check" overlap "$work/twonodes"

printf 'bogus line\n' >"$work/bad"
expect 2 "a malformed line" "$check" overlap "$work/bad"

printf '%s\n' "t/0 1" "t/1 1" >"$work/held"
printf '%s\n' "t/0 1 a 100 200" "t/0 2 b 1400 1500" "t/1 1 a 100 200" "t/1 2 c 1100 1200" \
  >"$work/resumed"
expect 0 "resumed within the bound" "$check" resumed "$work/resumed" "$work/held" a 250 1200
expect 1 "resumed too late" "$check" resumed "$work/resumed" "$work/held" a 250 1000
printf '%s\n' "t/0 1 a 100 200" >"$work/never"
expect 1 "never resumed" "$check" resumed "$work/never" "$work/held" a 250 1000
: >"$work/none"
expect 1 "nothing held proves nothing" "$check" resumed "$work/resumed" "$work/none" a 250 1000
expect 0 "moved while stopped" "$check" moved "$work/resumed" "$work/held" a 250 1450
expect 1 "not moved while stopped" "$check" moved "$work/resumed" "$work/held" a 250 1300
exit $fail
