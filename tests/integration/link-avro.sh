#!/bin/bash
# link-avro.sh - FORMAT avro end to end: Avro records written by
# python3-avro in the Confluent wire format under two compatible versions
# of a subject (v2 adds a field with a default and widens an int to a
# long) flow through links into an Iceberg table and a collection; DuckDB
# reads every row of the table back equal to the source, value by value,
# for every Avro type (boolean, int, long, float, double, bytes, string,
# enum, fixed, decimal on bytes and on fixed, date, time-millis,
# time-micros, timestamp-millis, timestamp-micros, a union with null,
# arrays, maps, a nested record); a record that is not in the wire format
# is dead-lettered alone, naming what is wrong; DROP SCHEMA is refused
# while a link reads the subject.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$src/tests/integration/duckdb-env.sh"
loams_duckdb_install || die "DuckDB (@duckdb/node-api) cannot be installed"
N=${LOAMS_TEST_RECORDS:-60}

cat >"$work/v1.avsc" <<'JSON'
{"type":"record","name":"Ticket","namespace":"shop","fields":[
 {"name":"id","type":"long"},
 {"name":"flag","type":"boolean"},
 {"name":"qty","type":"int"},
 {"name":"big","type":"long"},
 {"name":"ratio","type":"float"},
 {"name":"score","type":"double"},
 {"name":"payload","type":"bytes"},
 {"name":"name","type":"string"},
 {"name":"color","type":{"type":"enum","name":"Color","symbols":["RED","GREEN","BLUE"]}},
 {"name":"md5","type":{"type":"fixed","name":"Md5","size":4}},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"rate","type":{"type":"fixed","name":"Rate","size":8,"logicalType":"decimal","precision":12,"scale":3}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"at_ms","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"at_us","type":{"type":"long","logicalType":"time-micros"}},
 {"name":"ts_ms","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"ts_us","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"tags","type":{"type":"array","items":"int"}},
 {"name":"attrs","type":{"type":"map","values":"string"}},
 {"name":"addr","type":{"type":"record","name":"Addr","fields":[
   {"name":"city","type":"string"},{"name":"zip","type":"int"}]}}
]}
JSON
# v2: qty widened to long, email added with a default
sed -e 's/{"name":"qty","type":"int"}/{"name":"qty","type":"long"}/' \
  -e 's/^]}$/,{"name":"email","type":"string","default":"none"}]}/' "$work/v1.avsc" >"$work/v2.avsc"
grep -q '"email"' "$work/v2.avsc" && grep -q '"qty","type":"long"' "$work/v2.avsc" || die "v2.avsc"

sql "CREATE SCHEMA shop.tickets FORMAT AVRO AS \$\$ $(cat "$work/v1.avsc") \$\$;
     ALTER SCHEMA shop.tickets ADD VERSION \$\$ $(cat "$work/v2.avsc") \$\$;" >"$work/schemas.txt" ||
  die "registering the schemas failed"
grep -q 'version 2, id 2' "$work/schemas.txt" || die "schemas: $(cat "$work/schemas.txt")"
/usr/bin/python3 "$src/tests/integration/avro-records.py" "$work/v1.avsc" "$work/v2.avsc" "$N" \
  "$work/records.b64" "$work/expected.jsonl" || die "python3-avro could not write the records"

cols="id, flag, qty, big, ratio, score, payload, name, color, md5, price, rate, day, at_ms, at_us,
      ts_ms, ts_us, note, tags, attrs, addr, email"
sql "CREATE STREAM shop.s WITH (partitions = 2);
     CREATE LINK shop.to_table FROM STREAM shop.s FORMAT avro (subject = 'shop.tickets')
       INTO TABLE shop.t TRANSFORM (SELECT $cols)
       WITH (batch_interval = '200ms', on_error = 'dead_letter', dead_letter_stream = 'shop.bad');
     CREATE LINK shop.to_coll FROM STREAM shop.s FORMAT avro (subject = 'shop.tickets')
       INTO COLLECTION shop.c TRANSFORM (SELECT CAST(id AS TEXT) AS _pk, name, color, email, qty)
       WITH (batch_interval = '200ms', on_error = 'skip');" >/dev/null || die "CREATE failed"
# a subject that does not exist is refused at CREATE LINK, where it is written
out=$(sql "CREATE LINK shop.x FROM STREAM shop.s FORMAT avro (subject = 'shop.nope')
  INTO COLLECTION shop.x TRANSFORM (SELECT 1 AS _pk)" 2>&1) && die "a missing subject was accepted"
echo "$out" | grep -q "line 1, column .*schema subject shop.nope does not exist" || die "missing subject: $out"
out=$(sql "DROP SCHEMA shop.tickets" 2>&1) && die "DROP SCHEMA of a subject in use succeeded"
echo "$out" | grep -q "schema subject shop.tickets is used by link shop.to_" || die "drop: $out"

"$host" produce shop.s --encoding base64 --data-dir "$data" <"$work/records.b64" >/dev/null ||
  die "produce failed"
start_node a
wait_caught_up 90
stop_node a

# the table: DuckDB reads every value back
/usr/bin/python3 "$src/tests/integration/table-files.py" "$data/objects/shop/t" >"$work/files.txt" ||
  die "python3-avro cannot follow the table"
cat >"$work/read.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
const files = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l)
  .map((f) => `'${f.replace(/^file:\/\//, '')}'`).join(',');
const con = await (await DuckDBInstance.create(':memory:', { threads: '1' })).connect();
const r = await con.runAndReadAll(`SELECT id, flag, qty, big, ratio, score, to_base64(payload) AS payload,
  name, color, to_base64(md5) AS md5, price, rate, epoch_us(day)::VARCHAR AS day, at_ms, at_us,
  epoch_us(ts_ms)::VARCHAR AS ts_ms, epoch_us(ts_us)::VARCHAR AS ts_us, note, tags, attrs, addr, email,
  typeof(flag) || ',' || typeof(qty) || ',' || typeof(ratio) || ',' || typeof(payload) || ',' ||
  typeof(day) AS types
  FROM read_parquet([${files}]) ORDER BY id`);
for (const row of r.getRowObjectsJson()) process.stdout.write(JSON.stringify(row) + '\n');
JS
loams_duckdb_node "$work/read.mjs" "$work/files.txt" >"$work/duck.jsonl" 2>"$work/duck.err" ||
  { cat "$work/duck.err"; die "DuckDB cannot read the table"; }
/usr/bin/python3 - "$work/expected.jsonl" "$work/duck.jsonl" <<'PY' || die "DuckDB reads other values than python3-avro wrote"
import json, struct, sys
want = [json.loads(l) for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == len(want), (len(got), len(want))
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
for w, g in zip(want, got):
    assert g["types"] == "BOOLEAN,BIGINT,DOUBLE,BLOB,TIMESTAMP WITH TIME ZONE", g["types"]
    for k in ("flag", "payload", "name", "color", "md5", "price", "rate", "note", "email"):
        assert g[k] == w[k], (k, g[k], w[k])
    for k in ("id", "qty", "big", "at_ms", "at_us"):
        assert int(g[k]) == w[k], (k, g[k], w[k])
    for k in ("day", "ts_ms", "ts_us"):
        assert int(g[k]) == w[k], (k, g[k], w[k])
    assert g["ratio"] == f32(w["ratio"]) and g["score"] == w["score"], (g["ratio"], g["score"], w)
    for k in ("tags", "attrs", "addr"):
        assert json.loads(g[k]) == w[k], (k, g[k], w[k])
print("ok: %d rows equal, every type" % len(got))
PY
ok "the table: $(wc -l <"$work/duck.jsonl") rows of two schema versions equal python3-avro's values"

# the collection
"$host" collection dump shop.c --data-dir "$data" "${plugin_args[@]}" >"$work/c.jsonl" ||
  die "dump shop.c failed"
/usr/bin/python3 - "$work/expected.jsonl" "$work/c.jsonl" <<'PY' || die "the collection differs"
import json, sys
want = {str(w["id"]): w for w in map(json.loads, open(sys.argv[1]))}
got = {d["_pk"]: d for d in map(json.loads, open(sys.argv[2]))}
assert sorted(got) == sorted(want), (len(got), len(want))
for k, d in got.items():
    for f in ("name", "color", "email", "qty"):
        assert d[f] == want[k][f], (k, f, d[f], want[k][f])
PY
ok "the collection: every document"

# the record that is not Avro in the wire format: one dead letter saying why
"$host" stream read shop.bad --json --data-dir "$data" >"$work/dlq.jsonl" || die "reading shop.bad failed"
[ "$(wc -l <"$work/dlq.jsonl")" = 1 ] || die "dead letters: $(cat "$work/dlq.jsonl")"
grep -q "not in the Confluent wire format: byte 0 is 0x7b, not the magic byte 0" "$work/dlq.jsonl" ||
  die "the dead letter does not say why: $(cat "$work/dlq.jsonl")"
ok "a record not in the wire format is dead-lettered alone, with why"
