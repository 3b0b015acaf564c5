#!/bin/sh
# bench-metastore-smoke.sh - the metastore benchmark runs end to end with
# tiny counts and prints a row with a rate for every case (no timing goal).
set -eu
: "${top_builddir:?}"
out=$("$top_builddir/tests/bench/bench-metastore" --smoke)
echo "$out"
rows=$(echo "$out" | grep -cE '^(loams_meta_txn|reference: raw LMDB) +[0-9]+ +(yes|no) +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$')
[ "$rows" = 8 ] || { echo "FAIL: expected 8 result rows, got $rows" >&2; exit 1; }
