#!/bin/sh
# bench-log-smoke.sh - the stream log benchmark runs end to end with tiny
# counts: every case appends its records and reads each of them back twice
# (bench-log fails a case whose read-back count differs), and prints a row
# of rates with the expected record count (no timing goal).
set -eu
: "${top_builddir:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$("$top_builddir/tests/bench/bench-log" --smoke) || { echo "$out"; fail "bench-log --smoke"; }
echo "$out"
n='[0-9]+'
f='[0-9]+\.[0-9]'
for c in "100 1 200" "100 100 2000" "100 10000 20000" "1024 1 200" "1024 100 2000" \
  "1024 10000 20000"; do
  set -- $c
  echo "$out" | grep -Eq "^$1 B x $2 +$3 +$n +$f +$n +$f +$n +$f \| +$n +$n +$f MiB$" ||
    fail "no result row for $1-byte records in batches of $2 ($3 records)"
done
echo "$out" | grep -Eq "^ref: file I/O +- +- +$n +- +$n +- +- \| +- +- +$f MiB$" ||
  fail "no reference row"
echo "$out" | grep -Eq "^load average at end: " || fail "no closing load average"
