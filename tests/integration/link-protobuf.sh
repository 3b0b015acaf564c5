#!/bin/bash
# link-protobuf.sh - FORMAT protobuf end to end: messages written by
# python3-protobuf (descriptors from protoc's FileDescriptorSet, built at
# run time) with scalars of every wire type, an enum, repeated packed
# fields, a map, repeated and single nested messages, a oneof, proto3
# `optional`, Timestamp, Duration and wrappers flow through links into an
# Iceberg table (Confluent framing, both forms of the message indexes) and
# a second table (bare messages written with a newer version of the
# schema: its fields unknown to the registered version are skipped) and a
# collection; `protoc --decode` reads every message as python3-protobuf
# wrote it, and DuckDB reads every cell back equal to those values; a
# record not in the wire format and one with a field in the wrong wire
# type are dead-lettered alone, naming why (byte, field, wire type).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$src/tests/integration/duckdb-env.sh"
loams_duckdb_install || die "DuckDB (@duckdb/node-api) cannot be installed"
N=${LOAMS_TEST_RECORDS:-40}

cat >"$work/v1.proto" <<'PROTO'
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
message Ticket {
  enum Color { RED = 0; GREEN = 1; BLUE = 2; }
  message Line { string sku = 1; int32 qty = 2; Color color = 3; }
  int64 id = 1;
  bool flag = 2;
  sint32 delta = 3;
  uint32 small = 4;
  fixed64 big = 5;
  float ratio = 6;
  double score = 7;
  string name = 8;
  bytes payload = 9;
  Color color = 10;
  repeated int32 tags = 11;
  map<string, int64> counts = 12;
  repeated Line lines = 13;
  oneof pay { string card = 14; int64 cash = 15; }
  google.protobuf.Timestamp at = 16;
  google.protobuf.Duration took = 17;
  google.protobuf.Int64Value maybe = 18;
  google.protobuf.StringValue label = 19;
  optional string note = 20;
  Line main = 21;
}
PROTO
sed -e 's/^  Line main = 21;$/  Line main = 21;\n  string extra = 30;\n  repeated int64 extras = 31;\n  Line more = 32;/' \
  "$work/v1.proto" >"$work/v2.proto"
grep -q "extras = 31" "$work/v2.proto" || die "v2.proto"
(cd "$work" && protoc --include_imports --descriptor_set_out=v1.desc v1.proto &&
  protoc --include_imports --descriptor_set_out=v2.desc v2.proto) || die "protoc failed"

out=$(sql "CREATE SCHEMA shop.bad FORMAT PROTOBUF AS \$\$ syntax = \"proto3\";
message M { int32 a = 1 } \$\$" 2>&1) && die "a .proto that does not parse was registered"
echo "$out" | grep -q "not a valid Protobuf schema: line 2, column 25: expected ';', found '}'" ||
  die "parse error: $out"
sql "CREATE SCHEMA shop.tickets FORMAT PROTOBUF AS \$\$ $(cat "$work/v1.proto") \$\$;" \
  >"$work/schemas.txt" || die "registering the schema failed"
id=$(sed -n 's/.*version 1, id \([0-9]*\).*/\1/p' "$work/schemas.txt")
[ -n "$id" ] || die "schemas: $(cat "$work/schemas.txt")"
ok "CREATE SCHEMA ... FORMAT PROTOBUF parses the text and names line and column when it cannot"

/usr/bin/python3 "$src/tests/integration/protobuf-records.py" "$work/v1.desc" "$work/v2.desc" \
  "$id" "$N" "$work/all.b64" "$work/expected.jsonl" "$work/text.txt" ||
  die "python3-protobuf could not write the messages"
grep -v '^B' "$work/all.b64" >"$work/framed.b64"
sed -n 's/^B//p' "$work/all.b64" >"$work/bare.b64"

# protoc --decode reads every message as python3-protobuf wrote it
: >"$work/decoded.txt"
while read -r bin; do
  echo "$bin" | base64 -d | (cd "$work" && protoc --decode=shop.Ticket v1.proto) >>"$work/decoded.txt" ||
    die "protoc --decode failed"
  echo "#--" >>"$work/decoded.txt"
done <"$work/text.txt"
/usr/bin/python3 "$src/tests/integration/protobuf-records.py" --check "$work/v1.desc" \
  "$work/text.txt" "$work/decoded.txt" || die "protoc --decode reads other values"
ok "protoc --decode reads all $N framed messages as python3-protobuf wrote them"

cols="id, flag, delta, small, big, ratio, score, name, payload, color, tags, counts, lines, card,
      cash, at, took, maybe, label, note, main"
sql "CREATE STREAM shop.s WITH (partitions = 2);
     CREATE STREAM shop.sb WITH (partitions = 1);
     CREATE LINK shop.to_table FROM STREAM shop.s FORMAT protobuf (subject = 'shop.tickets')
       INTO TABLE shop.t TRANSFORM (SELECT $cols)
       WITH (batch_interval = '200ms', on_error = 'dead_letter', dead_letter_stream = 'shop.bad');
     CREATE LINK shop.bare_table FROM STREAM shop.sb
       FORMAT protobuf (subject = 'shop.tickets', message = 'shop.Ticket', wire_format = 'bare')
       INTO TABLE shop.tb TRANSFORM (SELECT $cols)
       WITH (batch_interval = '200ms', on_error = 'dead_letter', dead_letter_stream = 'shop.badb');
     CREATE LINK shop.to_coll FROM STREAM shop.s FORMAT protobuf (subject = 'shop.tickets')
       INTO COLLECTION shop.c TRANSFORM (SELECT CAST(id AS TEXT) AS _pk, name, color, small)
       WITH (batch_interval = '200ms', on_error = 'skip');" >/dev/null || die "CREATE failed"

"$host" produce shop.s --encoding base64 --data-dir "$data" <"$work/framed.b64" >/dev/null ||
  die "produce failed"
"$host" produce shop.sb --encoding base64 --data-dir "$data" <"$work/bare.b64" >/dev/null ||
  die "produce (bare) failed"
start_node a
wait_caught_up 90
stop_node a

cat >"$work/read.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
const files = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l)
  .map((f) => `'${f.replace(/^file:\/\//, '')}'`).join(',');
const con = await (await DuckDBInstance.create(':memory:', { threads: '1' })).connect();
const r = await con.runAndReadAll(`SELECT id, flag, delta, small, big, ratio, score, name,
  to_base64(payload) AS payload, color, tags, counts, lines, card, cash,
  epoch_us("at")::VARCHAR AS "at", took, maybe, label, note, main,
  typeof(flag) || ',' || typeof(small) || ',' || typeof(ratio) || ',' || typeof(payload) || ',' ||
  typeof("at") AS types
  FROM read_parquet([${files}]) ORDER BY id`);
for (const row of r.getRowObjectsJson()) process.stdout.write(JSON.stringify(row) + '\n');
JS
check_table() { # table expected-lines
  /usr/bin/python3 "$src/tests/integration/table-files.py" "$data/objects/shop/$1" >"$work/files.txt" ||
    die "python3-avro cannot follow table $1"
  loams_duckdb_node "$work/read.mjs" "$work/files.txt" >"$work/duck.jsonl" 2>"$work/duck.err" ||
    { cat "$work/duck.err"; die "DuckDB cannot read table $1"; }
  /usr/bin/python3 - "$2" "$work/duck.jsonl" <<'PY' || die "DuckDB reads other values in $1 than python3-protobuf wrote"
import json, struct, sys
want = [json.loads(l) for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == len(want), (len(got), len(want))
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
for w, g in zip(want, got):
    assert g["types"] == "BOOLEAN,BIGINT,DOUBLE,BLOB,TIMESTAMP WITH TIME ZONE", g["types"]
    for k in ("flag", "name", "payload", "color", "card", "label", "note"):
        assert g[k] == w[k], (k, g[k], w[k])
    for k in ("id", "delta", "small", "big", "cash", "at", "took", "maybe"):
        assert (None if g[k] is None else int(g[k])) == w[k], (k, g[k], w[k])
    assert g["ratio"] == f32(w["ratio"]) and g["score"] == w["score"], (g["ratio"], g["score"], w)
    for k in ("tags", "counts", "lines", "main"):
        assert (None if g[k] is None else json.loads(g[k])) == w[k], (k, g[k], w[k])
print("ok: %d rows equal" % len(got))
PY
}
head -n "$N" "$work/expected.jsonl" >"$work/expected-framed.jsonl"
tail -n "$N" "$work/expected.jsonl" >"$work/expected-bare.jsonl"
check_table t "$work/expected-framed.jsonl"
ok "the table: $N Confluent-framed messages equal python3-protobuf's values, cell by cell"
check_table tb "$work/expected-bare.jsonl"
ok "the bare table: $N messages of a newer writer read with v1, its new fields skipped"

"$host" collection dump shop.c --data-dir "$data" "${plugin_args[@]}" >"$work/c.jsonl" ||
  die "dump shop.c failed"
/usr/bin/python3 - "$work/expected-framed.jsonl" "$work/c.jsonl" <<'PY' || die "the collection differs"
import json, sys
want = {str(w["id"]): w for w in map(json.loads, open(sys.argv[1]))}
got = {d["_pk"]: d for d in map(json.loads, open(sys.argv[2]))}
assert sorted(got) == sorted(want), (len(got), len(want))
for k, d in got.items():
    for f in ("name", "color", "small"):
        assert d[f] == want[k][f], (k, f, d[f], want[k][f])
PY
ok "the collection: every document"

"$host" stream read shop.bad --json --data-dir "$data" >"$work/dlq.jsonl" || die "reading shop.bad failed"
[ "$(wc -l <"$work/dlq.jsonl")" = 2 ] || die "dead letters: $(cat "$work/dlq.jsonl")"
grep -q "not in the Confluent wire format: byte 0 is 0x7b, not the magic byte 0" "$work/dlq.jsonl" ||
  die "the dead letter does not say why: $(cat "$work/dlq.jsonl")"
grep -q "schema id $id: at byte 6: field 1 (id, int64) has wire type 2 (length-delimited), not 0 (varint)" \
  "$work/dlq.jsonl" || die "the dead letter does not name the field: $(cat "$work/dlq.jsonl")"
ok "a record not in the wire format and one with a field of the wrong wire type are dead-lettered alone, with why"
