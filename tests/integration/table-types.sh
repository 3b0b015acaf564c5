#!/bin/bash
# table-types.sh - the types a data engineer expects from the seed's own
# link statement (SELECT key AS id, timestamp AS ts, ...) into a table that
# was not declared first:
#  1. a stream's key_type: 'string' by default, 'bytes' on request, shown
#     by stream describe (text and JSON) and system.streams;
#  2. INTO TABLE: key -> string, timestamp -> timestamptz in the table's
#     schema; DuckDB reads VARCHAR and TIMESTAMP WITH TIME ZONE, every key
#     and every microsecond equal to the stream's records;
#  3. a key that is not UTF-8 in a string-key stream fails its record
#     through on_error (one dead letter that says why), nothing mangled;
#  4. a bytes-key stream gives a binary column (DuckDB BLOB, bytes exact);
#  5. a table made before (declared with ts long, id binary) keeps its
#     types: no silent change; DuckDB reads BIGINT microseconds and BLOB.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$src/tests/integration/duckdb-env.sh"
loams_duckdb_install || die "DuckDB (@duckdb/node-api) cannot be installed"

N=${LOAMS_TEST_RECORDS:-100}
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" >"$work/input.jsonl"

# 1. key_type
sql "CREATE STREAM d.tickets WITH (partitions = 2);
     CREATE STREAM d.raw WITH (key_type = 'bytes');" >"$work/create.txt" ||
  die "CREATE STREAM failed"
grep -q "created stream d.tickets (.*key_type string)" "$work/create.txt" &&
  grep -q "created stream d.raw (.*key_type bytes)" "$work/create.txt" ||
  die "CREATE STREAM said: $(cat "$work/create.txt")"
out=$(sql "CREATE STREAM d.bad WITH (key_type = 'text')" 2>&1) && die "key_type = 'text' accepted"
echo "$out" | grep -q "key_type must be 'string' (keys are UTF-8 text) or 'bytes'" ||
  die "key_type = 'text': $out"
"$host" stream describe d.tickets --data-dir "$data" | grep -q "^  key_type string$" ||
  die "stream describe does not show key_type string"
"$host" stream describe d.raw --json --data-dir "$data" | grep -q '"key_type":"bytes"' ||
  die "stream describe --json does not show key_type bytes"
"$host" sql --data-dir "$data" --json "SELECT * FROM system.streams" | /usr/bin/python3 -c '
import json, sys
rows = {r["stream"]: r["key_type"] for r in json.loads(sys.stdin.read())}
assert rows == {"d.raw": "bytes", "d.tickets": "string"}, rows' ||
  die "system.streams does not show the key types"
ok "key_type: string by default, bytes on request, shown by describe and system.streams"

# 2. + 3. the seed's statement into a new table; one key that is not UTF-8
SELECT="SELECT key AS id, timestamp AS ts, json_get_str(value, '\$.subject') AS subject"
sql "CREATE LINK d.l FROM STREAM d.tickets INTO TABLE d.tab TRANSFORM ($SELECT)
       WITH (batch_interval = '200ms', on_error = 'dead_letter');
     CREATE LINK d.lr FROM STREAM d.raw INTO TABLE d.rawtab TRANSFORM ($SELECT)
       WITH (batch_interval = '200ms');
     CREATE TABLE d.old (id binary, ts long, subject string);
     CREATE LINK d.lo FROM STREAM d.tickets INTO TABLE d.old TRANSFORM ($SELECT)
       WITH (batch_interval = '200ms', on_error = 'skip');" >/dev/null || die "CREATE LINK failed"
"$host" produce d.tickets --data-dir "$data" --key-field id <"$work/input.jsonl" >/dev/null ||
  die "produce failed"
bad_key=$(printf 'T-\377\376' | base64)
printf '%s\t%s\n' "$bad_key" "$(printf '{"subject":"bad key"}' | base64)" |
  "$host" produce d.tickets --data-dir "$data" --key-encoding base64 --encoding base64 \
    >/dev/null || die "produce of the bad key failed"
"$host" produce d.raw --data-dir "$data" --key-field id <"$work/input.jsonl" >/dev/null ||
  die "produce raw failed"
printf '%s\t%s\n' "$bad_key" "$(printf '{"subject":"bad key"}' | base64)" |
  "$host" produce d.raw --data-dir "$data" --key-encoding base64 --encoding base64 \
    >/dev/null || die "produce of the bad key (raw) failed"
start_node a
wait_caught_up 90
stop_node a
"$host" stream read d.tickets --json --data-dir "$data" >"$work/src.jsonl" || die "stream read failed"
"$host" stream read d.raw --json --data-dir "$data" >"$work/raw.jsonl" || die "stream read failed"

types() { # types TABLE: "name type" per field of the table's schema
  "$host" table describe "$1" --json --data-dir "$data" "${plugin_args[@]}" |
    /usr/bin/python3 -c '
import json, sys
for f in json.load(sys.stdin)["schema"]["fields"]:
    print(f["name"], f["type"])'
}
[ "$(types d.tab | tr '\n' ' ')" = "id string ts timestamptz subject string " ] ||
  die "d.tab has the schema $(types d.tab | tr '\n' ' ')"
[ "$(types d.rawtab | tr '\n' ' ')" = "id binary ts timestamptz subject string " ] ||
  die "d.rawtab has the schema $(types d.rawtab | tr '\n' ' ')"
[ "$(types d.old | tr '\n' ' ')" = "id binary ts long subject string " ] ||
  die "d.old changed its schema: $(types d.old | tr '\n' ' ')"
ok "schemas: string key and timestamptz by default; binary for a bytes stream; a declared table keeps long"

cat >"$work/read.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
const files = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l)
  .map((f) => `'${f.replace(/^file:\/\//, '')}'`).join(',');
const con = await (await DuckDBInstance.create(':memory:', { threads: '1' })).connect();
const ts = process.argv[3] === 'long' ? 'ts' : 'epoch_us(ts)';
const r = await con.runAndReadAll(`SELECT typeof(id) AS id_type, typeof(ts) AS ts_type,
  CASE WHEN typeof(id) = 'BLOB' THEN to_base64(id::BLOB) ELSE id::VARCHAR END AS id,
  CAST(${ts} AS VARCHAR) AS us, subject FROM read_parquet([${files}]) ORDER BY id`);
for (const row of r.getRowObjectsJson()) process.stdout.write(JSON.stringify(row) + '\n');
JS
expect() { # expect SOURCE ID_TYPE TS_TYPE BASE64_IDS: the good records as DuckDB rows
  /usr/bin/python3 - "$@" <<'PY'
import base64, json, sys
# ids: 0 text, 1 base64 (bytes stream: every key), 2 base64 (string stream)
src, id_type, ts_type, ids = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
b64 = ids != "0"
rows = []
for l in open(src):
    r = json.loads(l)
    key = bytes.fromhex(r["key_hex"]) if "key_hex" in r else r["key"].encode()
    value = bytes.fromhex(r["value_hex"]) if "value_hex" in r else r["value"].encode()
    try:
        key.decode("utf-8")
    except UnicodeDecodeError:
        if ids != "1":
            continue  # dead-lettered / skipped
    rows.append({"id_type": id_type, "ts_type": ts_type,
                 "id": base64.b64encode(key).decode() if b64 else key.decode(),
                 "us": str(r["timestamp"]), "subject": json.loads(value)["subject"]})
for row in sorted(rows, key=lambda x: x["id"]):
    print(json.dumps(row, separators=(",", ":")))
PY
}
check_table() { # check_table NAME DIR SOURCE ID_TYPE TS_TYPE B64 [long]
  /usr/bin/python3 "$src/tests/integration/table-files.py" "$data/objects/d/$2" >"$work/files.txt" \
    2>/dev/null || die "$1: python3-avro cannot follow the table"
  loams_duckdb_node "$work/read.mjs" "$work/files.txt" "${7:-}" >"$work/duck.jsonl" \
    2>"$work/duck.err" || { cat "$work/duck.err"; die "$1: DuckDB cannot read the files"; }
  expect "$work/$3.jsonl" "$4" "$5" "$6" >"$work/want.jsonl"
  cmp -s "$work/want.jsonl" "$work/duck.jsonl" || {
    diff "$work/want.jsonl" "$work/duck.jsonl" | head -n 6
    die "$1: DuckDB reads other types or values than the stream's records"
  }
  ok "$1: DuckDB reads $4 and $5, $(wc -l <"$work/duck.jsonl") rows exact to the microsecond"
}
head -n 1 "$work/src.jsonl" | grep -q '"timestamp":' || die "stream read --json: no timestamp"
check_table d.tab tab src VARCHAR "TIMESTAMP WITH TIME ZONE" 0
check_table d.rawtab rawtab raw BLOB "TIMESTAMP WITH TIME ZONE" 1
check_table d.old old src BLOB BIGINT 2 long

# 3. the bad key: one dead letter that says why
"$host" stream read d.l_dlq --json --data-dir "$data" >"$work/dlq.jsonl" || die "reading the DLQ failed"
/usr/bin/python3 - "$work/dlq.jsonl" <<'PY' || die "the bad key was not dead-lettered once, with its reason"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(rows) == 1, rows
r = rows[0]
assert bytes.fromhex(r["key_hex"]) == b"T-\xff\xfe", r
err = r["headers"]["loams.error"]
assert "key is not valid UTF-8 text, and stream d.tickets has key_type = 'string'" in err, err
PY
ok "a key that is not UTF-8 in a string-key stream: one dead letter that says why"
