#!/bin/sh
# bench-link-table-smoke.sh - the table mode of bench-link-apply runs end to
# end with tiny counts: one link task, then two at once, each into its own
# Iceberg table (no timing goal, no DuckDB).  The program itself checks each
# target's pointer and current snapshot (total-records, total-files-size
# against the data files); this checks that both runs report every record.
set -eu
: "${top_builddir:?}"
out=$("$top_builddir/tests/bench/bench-link-apply" -t table -j 1,2 -n 3000 -R -i 100ms)
echo "$out"
for tasks in "1 task," "2 tasks at once,"; do
  echo "$out" | grep -q "^link apply, $tasks 3000 records in [0-9]* commits" ||
    { echo "FAIL: no 'link apply, $tasks 3000 records' line" >&2; exit 1; }
done
files=$(echo "$out" | grep -cE '^  output: [1-9][0-9]* data files, [1-9][0-9]* bytes')
[ "$files" = 2 ] || { echo "FAIL: expected 2 output lines with data files, got $files" >&2; exit 1; }
# The same tickets as Avro (-f avro: Confluent framing, the schema
# registered by CREATE SCHEMA, FORMAT avro): every record reaches the table.
out=$("$top_builddir/tests/bench/bench-link-apply" -t table -f avro -j 1 -n 3000 -R -i 100ms)
echo "$out"
echo "$out" | grep -q "^bench-link-apply: 3000 Avro records into a table" ||
  { echo "FAIL: the Avro run did not say so" >&2; exit 1; }
echo "$out" | grep -q "^link apply, 1 task, 3000 records in [0-9]* commits" ||
  { echo "FAIL: no 'link apply, 1 task, 3000 records' line for Avro" >&2; exit 1; }
echo "$out" | grep -qE '^  output: [1-9][0-9]* data files, [1-9][0-9]* bytes' ||
  { echo "FAIL: no data files for Avro" >&2; exit 1; }
