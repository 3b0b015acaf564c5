#!/bin/bash
# table-metrics.sh - the column metrics of the manifest entries the table
# target writes, checked value by value against an independent reader.
# A link (a Lua transform, so that every type and edge value can be made:
# NaN, -0.0, infinity, empty and null lists, strings of U+10FFFF, bytes of
# 0xFF) writes a declared table of every column type into several small
# files of several row groups; then for every ADDED entry of the current
# snapshot (python3-avro), DuckDB reads its data file and table-metrics.py
# compares
#   record_count, file_size_in_bytes, split_offsets (row group starts),
#   column_sizes (sum of the column chunks' total_compressed_size),
#   value_counts (num_values), null_value_counts (the rows DuckDB reads as
#   NULL, and the chunks' null counts), nan_value_counts (float columns),
#   lower_bounds / upper_bounds: DuckDB's min / max of the non-null,
#   non-NaN values in Iceberg's single-value serialization (spec Appendix
#   D), strings and binary truncated to 16 code points / bytes and an upper
#   bound rounded up (the last code point / byte that can grow incremented,
#   the rest dropped; none when nothing can grow), zero float bounds -0.0 /
#   +0.0; no bounds for list columns;
# and that the edge cases were met (a rounded-up upper bound that dropped
# code points, one skipping the surrogates, missing upper bounds, NaNs).
# DuckDB comes from npm (duckdb-env.sh): the test fails when it cannot.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$src/tests/integration/duckdb-env.sh"
loams_duckdb_install || die "DuckDB (@duckdb/node-api) cannot be installed"

N=${LOAMS_TEST_RECORDS:-400}
tab="$data/objects/m/tab"
/usr/bin/python3 -c '
import json, sys
for n in range(1, int(sys.argv[1]) + 1):
    print(json.dumps({"k": "r-%05d" % n, "n": n, "subject": "Ticket %d: the printer on floor %d is out of toner" % (n, n % 7)}))
' "$N" >"$work/input.jsonl"

sql "CREATE STREAM m.src WITH (partitions = 2);
CREATE TABLE m.tab (id string NOT NULL, flag boolean, i int, l long, f float, d double,
  z double, zn double, dt date, ts timestamptz, s_ascii string, s_uni string, s_maxcp string,
  s_allmax string, s_short string, s_surr string, b_bin binary, b_allff binary,
  vec list<float>, nothing string);
CREATE LINK m.l FROM STREAM m.src FORMAT json INTO TABLE m.tab
  TRANSFORM LUA \$\$
    columns = { 'id string', 'flag bool', 'i int64', 'l int64', 'f float64', 'd float64',
      'z float64', 'zn float64', 'dt string', 'ts timestamp', 's_ascii string', 's_uni string',
      's_maxcp string', 's_allmax string', 's_short string', 's_surr string', 'b_bin bytes',
      'b_allff bytes', 'vec vector' }
    local get, U = loams.json_get, utf8.char
    local uni = { U(0xe9), U(0x4e2d), U(0x1f600), 'a', U(0xdf), U(0x7ff), U(0xffff), U(0x10000) }
    local MAX = U(0x10ffff)
    function transform(rec)
      local n = get(rec.value, '\$.n')
      local r = { id = get(rec.value, '\$.k') }
      if n % 3 ~= 0 then r.flag = n % 2 == 0 end
      r.i = (n * 7919) % 200001 - 100000
      r.l = n * 1000000007 * 1000 - 400000000000000
      if n % 10 ~= 0 then r.f = (n % 400) * 0.25 - 50.0 end
      if n % 11 == 0 then r.d = 0.0 / 0.0
      elseif n % 13 == 0 then r.d = -0.0
      elseif n == 7 then r.d = math.huge
      elseif n % 17 ~= 0 then r.d = n * 1.1 - 300.0 end
      r.z = n % 4 == 0 and 0.0 or n * 0.5
      r.zn = n % 4 == 0 and -0.0 or n * -0.5
      r.dt = os.date('!%Y-%m-%d', 1600000000 + n * 86400 * 3)
      r.ts = 1700000000000000 + n * 1000003
      r.s_ascii = get(rec.value, '\$.subject')
      local t = {}
      for k = 1, 20 do t[k] = uni[(n + k) % #uni + 1] end
      r.s_uni = table.concat(t)
      r.s_maxcp = string.char(97 + n % 20) .. string.rep(MAX, 15) .. 'tail' .. n
      r.s_allmax = string.rep(MAX, 17 + n % 3)
      if n % 6 ~= 0 then r.s_short = 's' .. (n % 1000) end
      r.s_surr = string.format('%015d', n) .. U(0xd7ff) .. 'zz'
      if n % 7 == 0 then r.b_bin = string.char(n % 256)
      else r.b_bin = string.char(200 + n % 50) .. string.rep('\\255', 15) .. string.char(n % 256, 1, 2) end
      r.b_allff = string.rep('\\255', 17 + n % 2)
      if n % 9 == 1 then r.vec = nil
      elseif n % 9 == 2 then r.vec = loams.array()
      elseif n % 5 == 0 then r.vec = { 1.5, 0.0 / 0.0, n }
      else r.vec = { n * 0.5, -n, 2.25 } end
      return r
    end
  \$\$
  WITH (batch_bytes = '6KiB', batch_interval = '200ms', row_group_bytes = '4KiB');" \
  >"$work/create.txt" 2>&1 || { cat "$work/create.txt"; die "CREATE failed"; }
"$host" produce m.src --data-dir "$data" --key-field k <"$work/input.jsonl" >/dev/null ||
  die "produce failed"
start_node a
wait_caught_up 90
stop_node a
"$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
assert int(l["applied_records"]) == int(sys.argv[1]) and int(l["dead_lettered_records"]) == 0, l
' "$N" || die "the link did not apply all $N records"

/usr/bin/python3 "$src/tests/integration/table-files.py" "$tab" >"$work/files.txt" \
  2>"$work/summary.txt" || { tail -n 3 "$work/summary.txt"; die "python3-avro cannot follow the table"; }
loams_duckdb_node "$src/tests/integration/table-metrics.mjs" "$work/files.txt" \
  >"$work/duck.json" 2>"$work/duck.err" || { cat "$work/duck.err"; die "DuckDB cannot read the data files"; }
/usr/bin/python3 "$src/tests/integration/table-metrics.py" "$tab" "$work/duck.json" ||
  die "manifest entry metrics differ from what DuckDB reads in the data files"
ok "manifest metrics of $(wc -l <"$work/files.txt") data files equal DuckDB's reading of them"
