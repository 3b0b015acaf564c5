#!/bin/sh
# serve-test-tasks.sh - the test task source lives in the test binary
# tests/loams-host-test only: the daemon loams-host has none of its code
# (no symbol, no string of it), refuses its settings from the environment
# and from a config file with a message naming the test binary, while the
# test binary has the source and serves with it.
set -u
host="$top_builddir/core/loams-host"
test_host="$top_builddir/tests/loams-host-test"
tmp=$(mktemp -d /tmp/loams-serve-test-tasks.XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The binaries themselves (libtool may wrap a program in a script).
real() {
  if [ -x "$(dirname "$1")/.libs/$(basename "$1")" ]; then
    echo "$(dirname "$1")/.libs/$(basename "$1")"
  else
    echo "$1"
  fi
}
daemon=$(real "$host")
tester=$(real "$test_host")

# 1. No code of the test source in the daemon; all of it in the test binary
#    (so that the checks below could fail).
for sym in loams_test_tasks_source; do
  nm "$daemon" | grep -q " $sym\$" && fail "loams-host has the symbol $sym"
  nm "$tester" | grep -q " T $sym\$" || fail "loams-host-test lacks the symbol $sym"
done
for text in 'test/progress/' 'TEST task source'; do
  strings "$daemon" | grep -qF "$text" && fail "loams-host holds the string '$text'"
  strings "$tester" | grep -qF "$text" || fail "loams-host-test lacks the string '$text'"
done

# 2. The daemon refuses the settings, naming the test binary.
mkdir "$tmp/data"
LOAMS_TEST_TASKS=2 "$host" serve --data-dir "$tmp/data" --node-id n1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "LOAMS_TEST_TASKS: exit status $rc, expected 2"
grep -q "environment variable LOAMS_TEST_TASKS: 'test_tasks' is a setting of the test task source, which only the test binary tests/loams-host-test has" "$tmp/err" ||
  { fail "LOAMS_TEST_TASKS: no message naming the test binary"; cat "$tmp/err"; }
printf '[host]\ntest_journal = /tmp/j\n' >"$tmp/loams.conf"
"$host" serve --data-dir "$tmp/data" --config "$tmp/loams.conf" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "test_journal in a config file: exit status $rc, expected 2"
grep -q "loams.conf:2: 'test_journal' is a setting of the test task source" "$tmp/err" ||
  { fail "test_journal in a config file: no message naming the test binary"; cat "$tmp/err"; }

# 3. The test binary serves with the source: a test task writes its progress.
LOAMS_TEST_TASKS=1 LOAMS_TEST_JOURNAL="$tmp/journal" LOAMS_TEST_TASK_DURATION=200ms \
  LOAMS_TEST_WRITE_INTERVAL=20ms \
  "$test_host" serve --data-dir "$tmp/data" --node-id n1 --poll-interval 50ms \
  --no-default-plugin-dirs 2>"$tmp/serve.err" &
pid=$!
i=0
while [ ! -s "$tmp/journal" ] && [ $i -lt 100 ]; do
  sleep 0.1
  i=$((i + 1))
done
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || { fail "loams-host-test serve: exit status $rc"; cat "$tmp/serve.err"; }
grep -q '^test/0 [0-9]* n1 ' "$tmp/journal" || fail "the test task journaled no write"
grep -q "TEST task source enabled (1 tasks)" "$tmp/serve.err" ||
  fail "loams-host-test did not say that the test source is on"
"$test_host" serve --data-dir "$tmp/data" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && grep -q "LOAMS_TEST_TASKS: '' is not a task count" "$tmp/err" ||
  fail "loams-host-test without LOAMS_TEST_TASKS: exit status $rc"

[ "$failures" = 0 ] || exit 1
echo "serve-test-tasks: ok"
