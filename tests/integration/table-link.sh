#!/bin/bash
# table-link.sh - a link INTO TABLE, checked by independent readers:
#  1. tickets -> table; python3-avro follows version-hint -> metadata ->
#     manifest list -> manifests (field ids, header keys, summary), avro-c
#     lists the same data files, DuckDB reads those Parquet files and the
#     rows equal the source exactly; `table describe` / `table scan` work;
#     manifests and manifest lists are deflate (manifest_codec's default);
#  2. exactly once: a stream with invalid records (broken JSON, a priority
#     that json_get_int refuses) and on_error = 'dead_letter'; a node
#     crashed at every failpoint of the link protocol (link-exactly-once.sh's
#     list), the rest of the records produced, then a restart; the rows
#     DuckDB reads from the current snapshot equal the valid source records
#     exactly, the dead-letter stream holds every invalid record once
#     (record by record by partition and offset), system.links counts both
#     exactly;
#  3. schema evolution: a new output column gets a new field id and schema
#     id (old and new files read together by DuckDB, old rows NULL there),
#     written with manifest_codec = 'null' (a table of deflate and null
#     manifests, read by both readers); an incompatible type change fails
#     the link with a message naming the column and both types.
# DuckDB comes from npm (duckdb-env.sh): the test fails when it cannot.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$src/tests/integration/duckdb-env.sh"
loams_duckdb_install || die "DuckDB (@duckdb/node-api) cannot be installed"

N=${LOAMS_TEST_RECORDS:-600}
points=(link.after_read link.after_decode link.after_transform link.after_target_write
  link.after_dead_letter link.before_commit link.after_commit store.write)
[ $# -gt 0 ] && points=("$@")
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" >"$work/input.jsonl"
tab="$data/objects/t/tab"

# expected rows: id, subject, body, priority, customer
/usr/bin/python3 - "$work/input.jsonl" >"$work/expected.jsonl" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    rows.append({"id": r["id"], "subject": r["subject"], "body": r["body"],
                 "priority": int(r["priority"]) if r.get("priority") is not None else None,
                 "customer": r["customer"]["name"]})
for r in sorted(rows, key=lambda r: r["id"]):
    print(json.dumps(r, sort_keys=True))
PY

# link_sql PRIORITY_EXPR [EXTRA_COLUMNS] [EXTRA_OPTIONS]
link_sql() {
  echo "CREATE LINK t.l FROM STREAM t.tickets FORMAT json INTO TABLE t.tab
  TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, subject, body, $1 AS priority,
             json_get_str(value, '\$.customer.name') AS customer ${2:-})
  WITH (batch_bytes = '16KiB', batch_interval = '200ms'${3:-})"
}
PRIO="CAST(json_get_int(value, '\$.priority') AS INTEGER)"
LINK_SQL=$(link_sql "$PRIO")

# check_table LABEL EXPECTED [LIST_CODEC]: readers agree with the expected
# rows; the manifest list is LIST_CODEC (deflate), every manifest deflate or
# null (the codecs seen are left in $work/codecs.txt)
check_table() {
  local label=$1 expected=$2 list_codec=${3:-deflate}
  /usr/bin/python3 "$src/tests/integration/table-files.py" "$tab" "$work/codecs.txt" \
    >"$work/files.txt" 2>"$work/summary.txt" ||
    { tail -n 3 "$work/summary.txt"; die "$label: python3-avro cannot follow the table's metadata"; }
  [ "$(head -n 1 "$work/codecs.txt" | cut -d' ' -f1)" = "$list_codec" ] ||
    die "$label: the manifest list is $(head -n 1 "$work/codecs.txt"), not $list_codec"
  ! cut -d' ' -f1 "$work/codecs.txt" | grep -qvx 'deflate\|null' ||
    die "$label: an Avro file with another codec: $(cat "$work/codecs.txt")"
  "$build/tests/integration/avro_read_avroc" --paths \
    "$(/usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1]+"/metadata/v"+open(sys.argv[1]+"/metadata/version-hint.text").read().strip()+".metadata.json")); c=[s for s in m["snapshots"] if s["snapshot-id"]==m["current-snapshot-id"]][0]; print(c["manifest-list"][7:])' "$tab")" \
    >"$work/avroc-list.txt" || die "$label: avro-c cannot read the manifest list"
  local mans
  mans=$(sed -n 's|^manifest file://||p' "$work/avroc-list.txt")
  # shellcheck disable=SC2086
  "$build/tests/integration/avro_read_avroc" --paths $mans | sed -n 's/^data //p' | sort \
    >"$work/avroc-files.txt" || die "$label: avro-c cannot read the manifests"
  sort "$work/files.txt" | cmp -s - "$work/avroc-files.txt" ||
    die "$label: avro-c and python3-avro list different data files"
  loams_duckdb_node "$src/tests/integration/table-duckdb.mjs" "$work/files.txt" id \
    >"$work/duck.jsonl" 2>"$work/duck.err" || { cat "$work/duck.err"; die "$label: DuckDB cannot read the data files"; }
  /usr/bin/python3 -c '
import json, sys
# JavaScript prints 6.0 as 6: whole floats compare as integers
n = lambda v: int(v) if isinstance(v, float) and v.is_integer() else v
for l in open(sys.argv[1]):
    print(json.dumps({k: n(v) for k, v in json.loads(l).items()}, sort_keys=True))' "$work/duck.jsonl" >"$work/got.jsonl"
  if ! cmp -s "$expected" "$work/got.jsonl"; then
    diff "$expected" "$work/got.jsonl" | head -n 6
    diff "$expected" "$work/got.jsonl" | sed -n "/^>/p" | head -n 2; die "$label: DuckDB reads $(wc -l <"$work/got.jsonl") rows, not the $(wc -l <"$expected") source rows"
  fi
  ok "$label: $(wc -l <"$work/files.txt") data files, $(wc -l <"$work/got.jsonl") rows equal the source (python3-avro, avro-c, DuckDB)"
}

setup() {
  rm -rf "$data" "$work"/*.log
  sql "CREATE STREAM t.tickets WITH (partitions = 3); $LINK_SQL;" >/dev/null || die "CREATE failed"
  "$host" produce t.tickets --data-dir "$data" --key-field id <"$work/input.jsonl" >/dev/null ||
    die "produce failed"
}

# 1. the plain run
setup
start_node a
wait_caught_up 90
stop_node a
check_table "plain run" "$work/expected.jsonl"
[ "$(cut -d' ' -f1 "$work/codecs.txt" | sort -u)" = deflate ] ||
  die "plain run: manifest_codec's default is not deflate everywhere: $(cat "$work/codecs.txt")"
grep -q '"loams.link": "t.l"' "$work/summary.txt" || die "the summary lacks loams.link"
/usr/bin/python3 -c 'import json,sys; s=json.loads(open(sys.argv[1]).read().splitlines()[-1]); o=json.loads(s["loams.applied-offsets"]); assert sum(o.values())==int(sys.argv[2]), o; assert s["total-records"]==sys.argv[2]' \
  "$work/summary.txt" "$N" || die "summary offsets/total-records do not cover the $N records"
"$host" table describe t.tab --data-dir "$data" "${plugin_args[@]}" >"$work/describe.txt" ||
  die "table describe failed"
grep -q "priority  *long" "$work/describe.txt" || die "describe does not show the schema"
grep -q "append" "$work/describe.txt" || die "describe does not show the snapshots"
# every snapshot id with every digit (63-bit random: through a double the
# text lost its last digits), the same in the text and in --json
"$host" table describe t.tab --json --data-dir "$data" "${plugin_args[@]}" >"$work/describe.json" ||
  die "table describe --json failed"
ids=$(grep -o '"snapshot_id":[0-9]*' "$work/describe.json" | cut -d: -f2)
[ -n "$ids" ] || die "describe --json shows no snapshot ids"
for id in $ids; do
  grep -q "^  $id  seq " "$work/describe.txt" || die "describe shows snapshot $id otherwise: $(grep seq "$work/describe.txt")"
done
cur=$(grep -o '"current_snapshot_id":[0-9]*' "$work/describe.json" | cut -d: -f2)
grep -qx "current snapshot $cur" "$work/describe.txt" || die "describe shows the current snapshot $cur otherwise"
"$host" table scan t.tab --limit 5 --data-dir "$data" "${plugin_args[@]}" >"$work/scan.jsonl" ||
  die "table scan failed"
[ "$(wc -l <"$work/scan.jsonl")" = 5 ] || die "table scan --limit 5 printed $(wc -l <"$work/scan.jsonl") rows"
"$host" table scan t.tab --limit 100000 --data-dir "$data" "${plugin_args[@]}" |
  /usr/bin/python3 -c '
import json, sys
rows = sorted((json.loads(l) for l in sys.stdin), key=lambda r: r["id"])
for r in rows: print(json.dumps(r, sort_keys=True))' >"$work/scan-all.jsonl"
cmp -s "$work/expected.jsonl" "$work/scan-all.jsonl" || die "table scan (our reader) differs from the source"
ok "table describe and table scan read the table back through our own reader"

# 2. exactly once across crashes, with invalid records dead-lettered.
# Every 37th line is not JSON (the decoder fails it), every 53rd other one
# has a priority json_get_int refuses (the transform fails it).
awk 'NR % 37 == 0 { print "{\"id\":\"BAD-" NR "\", broken"; next }
     NR % 53 == 0 { sub(/"priority": *[^,}]*/, "\"priority\": \"urgent\""); print; next }
     { print }' "$work/input.jsonl" >"$work/input-bad.jsonl"
/usr/bin/python3 - "$work/input-bad.jsonl" "$work/keyed-bad.jsonl" "$work/expected-bad.jsonl" \
  "$work/dead.txt" <<'PY'
import json, re, sys
keyed, rows, dead = open(sys.argv[2], "w"), [], open(sys.argv[4], "w")
for line in open(sys.argv[1]):
    # the key of a broken line is its BAD-n id, parsed because it is not JSON
    k = re.match(r'\{"id": *"([^"]+)"', line).group(1)
    keyed.write(json.dumps({"k": k, "v": line.rstrip("\n")}) + "\n")
    try:
        r = json.loads(line)
    except ValueError:
        dead.write("%s decode\n" % k)
        continue
    if not isinstance(r["priority"], int):
        dead.write("%s transform\n" % k)
        continue
    rows.append({"id": r["id"], "subject": r["subject"], "body": r["body"],
                 "priority": r["priority"], "customer": r["customer"]["name"]})
with open(sys.argv[3], "w") as out:
    for r in sorted(rows, key=lambda r: r["id"]):
        out.write(json.dumps(r, sort_keys=True) + "\n")
PY
good=$(wc -l <"$work/expected-bad.jsonl")
bad=$(wc -l <"$work/dead.txt")
grep -q ' decode$' "$work/dead.txt" && grep -q ' transform$' "$work/dead.txt" ||
  die "the crash input lacks records that fail in the decoder and in the transform"
for fp in "${points[@]}"; do
  rm -rf "$data" "$work"/*.log
  sql "CREATE STREAM t.tickets WITH (partitions = 3);
       $(link_sql "$PRIO" "" ", on_error = 'dead_letter'");" >/dev/null || die "$fp: CREATE failed"
  half=$(($(wc -l <"$work/keyed-bad.jsonl") * 2 / 3))
  head -n "$half" "$work/keyed-bad.jsonl" |
    "$host" produce t.tickets --data-dir "$data" --key-field k --value-field v \
      >/dev/null 2>&1 || die "$fp: produce failed"
  start_node a "LOAMS_FAILPOINTS=$fp=crash@3"
  wait_dead a 60
  grep -q "failpoint.*$fp: crashing" "$work/a.log" || die "$fp: node a died, but not at $fp"
  tail -n +$((half + 1)) "$work/keyed-bad.jsonl" |
    "$host" produce t.tickets --data-dir "$data" --key-field k --value-field v \
      >/dev/null 2>&1 || die "$fp: produce failed"
  start_node b
  wait_caught_up 90
  stop_node b
  check_table "crash at $fp" "$work/expected-bad.jsonl"
  "$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
got = (int(l["applied_records"]), int(l["dead_lettered_records"]))
assert got == (int(sys.argv[1]), int(sys.argv[2])), "counters %r, want %s/%s" % (got, sys.argv[1], sys.argv[2])
' "$good" "$bad" || die "$fp: system.links counters are not exact"
  "$host" stream read t.l_dlq --partition 0 --from 0 --limit 100000 --json --data-dir "$data" \
    >"$work/dlq.jsonl" || die "$fp: reading the DLQ failed"
  /usr/bin/python3 - "$work/dlq.jsonl" "$work/dead.txt" <<'PY' || die "$fp: dead letters wrong"
import json, sys
want = dict(l.split() for l in open(sys.argv[2]))
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
got = {}
for r in recs:
    h = r["headers"]
    assert h["loams.link"] == "t.l", h
    k = r["key"]
    assert k not in got, "dead letter %s twice" % k
    err = h["loams.error"]
    ok = "JSON" in err if want.get(k) == "decode" else "json_get_int" in err
    assert ok, "%s (%s): %s" % (k, want.get(k), err)
    got[k] = (h["loams.partition"], h["loams.offset"])
assert set(got) == set(want), "dead letters %d, want %d: missing %s, extra %s" % (
    len(got), len(want), sorted(set(want) - set(got))[:3], sorted(set(got) - set(want))[:3])
assert len(set(got.values())) == len(got), "two dead letters name one record"
PY
  dl=$(dlq_exact t.tickets t.l_dlq t.l \
    'not is_json(r["value"]) or not isinstance(json.loads(r["value"])["priority"], int)') ||
    die "$fp: the dead letters are not exactly the invalid records"
  [ "$dl" = "$bad $bad" ] || die "$fp: $dl invalid records / dead letters, want $bad $bad"
  ok "crash at $fp: $good rows in the table exactly once, $bad dead letters exactly once"
done

# 3. schema evolution: a new column, then an incompatible change
setup
start_node a
wait_caught_up 90
stop_node a
sql "DROP LINK t.l; $(link_sql "$PRIO" ", $PRIO * 1.5 AS score" ", manifest_codec = 'null', resume = 'offsets'");" \
  >/dev/null || die "re-creating the link with a new column failed"
head -n 50 "$work/input.jsonl" | sed 's/"id": *"\([^"]*\)"/"id":"NEW-\1"/' >"$work/more.jsonl"
"$host" produce t.tickets --data-dir "$data" --key-field id <"$work/more.jsonl" >/dev/null || die "produce 2 failed"
start_node a
wait_caught_up 90
stop_node a
/usr/bin/python3 - "$work/input.jsonl" "$work/more.jsonl" >"$work/expected2.jsonl" <<'PY'
import json, sys
rows = []
for i, path in enumerate(sys.argv[1:]):
    for line in open(path):
        r = json.loads(line)
        p = int(r["priority"])
        rows.append({"id": r["id"], "subject": r["subject"], "body": r["body"], "priority": p,
                     "customer": r["customer"]["name"], "score": p * 1.5 if i == 1 else None})
        if rows[-1]["score"] is not None and rows[-1]["score"].is_integer():
            rows[-1]["score"] = int(rows[-1]["score"])
for r in sorted(rows, key=lambda r: r["id"]):
    print(json.dumps(r, sort_keys=True))
PY
check_table "new column" "$work/expected2.jsonl" null
grep -q '^null ' "$work/codecs.txt" && grep -q '^deflate ' "$work/codecs.txt" ||
  die "new column: the table should hold deflate and null manifests: $(cat "$work/codecs.txt")"
ok "manifest_codec = 'null': the new list and manifest are null, the older manifests deflate"
"$host" table describe t.tab --json --data-dir "$data" "${plugin_args[@]}" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
f = {x["name"]: x for x in d["schema"]["fields"]}
assert f["score"]["id"] == 6 and f["score"]["type"] == "double", f
assert d["schema"]["schema-id"] == 1 and d["schemas"] == 2, d["schema"]' ||
  die "the new column did not get field id 6 in schema 1"
ok "a new output column became field 6 of schema 1"
sql "DROP LINK t.l; $(link_sql "json_get_str(value, '\$.subject')" ", $PRIO * 1.5 AS score" ", resume = 'offsets'");" >/dev/null ||
  die "re-creating the link with a changed type failed"
"$host" produce t.tickets --data-dir "$data" --key-field id <"$work/more.jsonl" >/dev/null || die "produce 3 failed"
start_node a
t=0
until "$host" links --json --data-dir "$data" | grep -q '"state":[[:space:]]*"failed"'; do
  sleep 0.5
  t=$((t + 1))
  [ "$t" -lt 120 ] || die "an incompatible type change did not fail the link"
done
stop_node a
"$host" links --json --data-dir "$data" >"$work/links.json"
grep -q "column 'priority' is long in the table but the link's output is string" "$work/links.json" ||
  { cat "$work/links.json"; die "the failed link's message does not name the column and both types"; }
check_table "after the refused change" "$work/expected2.jsonl" null
ok "an incompatible type change pauses the link with the column and both types"
