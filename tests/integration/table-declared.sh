#!/bin/bash
# table-declared.sh - CREATE TABLE: a declared Iceberg schema that a link
# INTO TABLE gives the table at its first commit.
#  1. statement errors with line, column and caret (an unsupported type, a
#     second CREATE TABLE), IF NOT EXISTS, and a link refused at CREATE LINK
#     when its SELECT lacks a NOT NULL column of the table;
#  2. the first commit takes the declared schema (field ids, int, float,
#     NOT NULL -> required), checked in metadata.json and in DuckDB's
#     parquet_schema of the data file;
#  3. widening: the link re-created with a priority out of int range and a
#     score that is not a float; the table's int -> long and float ->
#     double (schema 1), and DuckDB reads old (INT32/FLOAT) and new
#     (INT64/DOUBLE) files together, every row equal to the source.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$src/tests/integration/duckdb-env.sh"
loams_duckdb_install || die "DuckDB (@duckdb/node-api) cannot be installed"

N=${LOAMS_TEST_RECORDS:-200}
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" >"$work/input.jsonl"
head -n 40 "$work/input.jsonl" | sed 's/"id": *"\([^"]*\)"/"id":"NEW-\1"/' >"$work/more.jsonl"
tab="$data/objects/d/tab"

# 1. statements
out=$(sql "CREATE TABLE d.bad (id string NOT NULL,
  price decimal(9, 2))" 2>&1) && die "a decimal column was accepted"
echo "$out" | grep -q "line 2, column 3: column 'price': tables cannot hold type decimal" ||
  die "the unsupported type error lacks its position: $out"
echo "$out" | grep -q '^ *\^' || die "the error has no caret: $out"
DECL="CREATE TABLE d.tab (id string NOT NULL, subject string, priority int, score float,
  emb list<float>, at timestamp)"
sql "CREATE STREAM d.tickets WITH (partitions = 2); $DECL;" >"$work/create.txt" ||
  die "CREATE TABLE failed"
grep -q "created table d.tab (6 columns)" "$work/create.txt" || die "CREATE TABLE said: $(cat "$work/create.txt")"
out=$(sql "$DECL" 2>&1) && die "a second CREATE TABLE was accepted"
echo "$out" | grep -q "line 1, column 14: table d.tab already exists" || die "second CREATE TABLE: $out"
sql "CREATE TABLE IF NOT EXISTS d.tab (x int)" | grep -q "kept existing table d.tab" ||
  die "IF NOT EXISTS did not keep the table"
out=$(sql "CREATE LINK d.bad FROM STREAM d.tickets INTO TABLE d.tab
  TRANSFORM (SELECT subject)" 2>&1) && die "a link without the NOT NULL id was accepted"
echo "$out" | grep -q "line 2, column 14: table d.tab declares column 'id' NOT NULL, but the transform's output has no column 'id'" ||
  die "the NOT NULL check: $out"
ok "CREATE TABLE errors carry line, column and caret; IF NOT EXISTS; CREATE LINK checks NOT NULL columns"

# link_sql PRIORITY_EXPR SCORE_EXPR
link_sql() { # link_sql PRIORITY SCORE [VERB [EXTRA_WITH]]
  echo "${3:-CREATE LINK} d.l FROM STREAM d.tickets FORMAT json INTO TABLE d.tab
  TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, subject, $1 AS priority, $2 AS score)
  WITH (batch_bytes = '16KiB', batch_interval = '200ms'${4:-})"
}
P="CAST(json_get_int(value, '\$.priority') AS INTEGER)"
sql "$(link_sql "$P" "$P * 0.5")" >/dev/null || die "CREATE LINK failed"
"$host" produce d.tickets --data-dir "$data" --key-field id <"$work/input.jsonl" >/dev/null ||
  die "produce failed"
start_node a
wait_caught_up 90
stop_node a

# 2. the declared schema
"$host" table describe d.tab --json --data-dir "$data" "${plugin_args[@]}" >"$work/d1.json" ||
  die "table describe failed"
/usr/bin/python3 - "$work/d1.json" <<'PY' || die "the table does not have the declared schema"
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["name"]: x for x in d["schema"]["fields"]}
assert [x["name"] for x in d["schema"]["fields"]] == ["id", "subject", "priority", "score", "emb", "at"], f
assert f["id"]["id"] == 1 and f["id"]["required"] is True and f["id"]["type"] == "string", f["id"]
assert f["priority"]["id"] == 3 and f["priority"]["type"] == "int", f["priority"]
assert f["score"]["id"] == 4 and f["score"]["type"] == "float", f["score"]
assert f["emb"]["type"]["type"] == "list" and f["emb"]["type"]["element-id"] == 6, f["emb"]
assert f["at"]["id"] == 7 and f["at"]["type"] == "timestamptz", f["at"]
assert d["schema"]["schema-id"] == 0, d["schema"]
PY
/usr/bin/python3 "$src/tests/integration/table-files.py" "$tab" >"$work/files1.txt" 2>/dev/null ||
  die "python3-avro cannot follow the table"
cat >"$work/types.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
const files = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l).map((f) => `'${f.replace(/^file:\/\//, '')}'`);
const con = await (await DuckDBInstance.create(':memory:')).connect();
const r = await con.runAndReadAll(`SELECT DISTINCT name, type, repetition_type, field_id FROM parquet_schema([${files.join(',')}]) WHERE name IN ('id', 'priority', 'score') ORDER BY name`);
for (const row of r.getRowObjectsJson()) process.stdout.write(`${row.name} ${row.type} ${row.repetition_type} ${row.field_id}\n`);
JS
loams_duckdb_node "$work/types.mjs" "$work/files1.txt" >"$work/types1.txt" || die "DuckDB parquet_schema failed"
printf 'id BYTE_ARRAY REQUIRED 1\npriority INT32 OPTIONAL 3\nscore FLOAT OPTIONAL 4\n' |
  cmp -s - "$work/types1.txt" || { cat "$work/types1.txt"; die "DuckDB sees other Parquet types than the declared ones"; }
ok "the first commit took the declared schema (ids, NOT NULL, int, float; DuckDB: INT32, FLOAT, REQUIRED)"

# 3. widening through the declared table
sql "$(link_sql "$P * 3000000000" "$P / 3.0" "CREATE OR REPLACE LINK" ", resume = 'offsets'")" >/dev/null ||
  die "re-creating the link failed"
"$host" produce d.tickets --data-dir "$data" --key-field id <"$work/more.jsonl" >/dev/null ||
  die "produce 2 failed"
start_node a
wait_caught_up 90
stop_node a
"$host" table describe d.tab --json --data-dir "$data" "${plugin_args[@]}" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
f = {x["name"]: x for x in d["schema"]["fields"]}
assert f["priority"]["type"] == "long" and f["priority"]["id"] == 3, f["priority"]
assert f["score"]["type"] == "double" and f["score"]["id"] == 4, f["score"]
assert d["schema"]["schema-id"] == 1, d["schema"]' || die "int/float did not widen to long/double in schema 1"
/usr/bin/python3 "$src/tests/integration/table-files.py" "$tab" >"$work/files2.txt" 2>/dev/null ||
  die "python3-avro cannot follow the widened table"
loams_duckdb_node "$work/types.mjs" "$work/files2.txt" >"$work/types2.txt" || die "DuckDB parquet_schema failed"
grep -q "priority INT32" "$work/types2.txt" && grep -q "priority INT64" "$work/types2.txt" &&
  grep -q "score FLOAT" "$work/types2.txt" && grep -q "score DOUBLE" "$work/types2.txt" ||
  { cat "$work/types2.txt"; die "the table does not hold old (INT32/FLOAT) and new (INT64/DOUBLE) files"; }
/usr/bin/python3 - "$work/input.jsonl" "$work/more.jsonl" >"$work/expected.jsonl" <<'PY'
import json, sys
rows = []
for i, path in enumerate(sys.argv[1:]):
    for line in open(path):
        r = json.loads(line)
        p = int(r["priority"])
        row = {"id": r["id"], "subject": r["subject"],
               "priority": p * 3000000000 if i else p, "score": p / 3.0 if i else p * 0.5,
               "emb": None, "at": None}
        if isinstance(row["score"], float) and row["score"].is_integer():
            row["score"] = int(row["score"])
        rows.append(row)
for r in sorted(rows, key=lambda r: r["id"]):
    print(json.dumps(r, sort_keys=True))
PY
loams_duckdb_node "$src/tests/integration/table-duckdb.mjs" "$work/files2.txt" id \
  >"$work/duck.jsonl" 2>"$work/duck.err" || { cat "$work/duck.err"; die "DuckDB cannot read the files"; }
/usr/bin/python3 -c '
import json, sys
n = lambda v: int(v) if isinstance(v, float) and v.is_integer() else v
for l in open(sys.argv[1]):
    print(json.dumps({k: n(v) for k, v in json.loads(l).items()}, sort_keys=True))' "$work/duck.jsonl" >"$work/got.jsonl"
cmp -s "$work/expected.jsonl" "$work/got.jsonl" ||
  { diff "$work/expected.jsonl" "$work/got.jsonl" | head -n 6; die "DuckDB reads other rows than the source across old and new files"; }
ok "int -> long and float -> double widened (schema 1); DuckDB reads $(wc -l <"$work/got.jsonl") rows across old and new files equal to the source"
