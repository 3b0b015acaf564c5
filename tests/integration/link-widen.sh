#!/bin/bash
# link-widen.sh - a collection field first given ints and then floats
# through a link widens from int to float (DESIGN §8): the link keeps
# running, every value is stored (old splits' ints, new floats, later ints
# as float64), the manifest maps the field as float.  A string for it later
# is an incompatible change: the link fails with the field and both types,
# and `loams-host links` shows that error without a record position (there
# is none).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

produce() { # produce LINES...: one JSON record per argument
  printf '%s\n' "$@" | "$host" produce t.s --data-dir "$data" --key-field id >/dev/null 2>&1 ||
    die "produce failed"
}
newest_manifest() {
  find "$data/objects/t/c/manifest" -name '*.json' | sort | tail -n 1
}

sql "CREATE STREAM t.s WITH (partitions = 1);
     CREATE LINK t.l FROM STREAM t.s INTO COLLECTION t.c
       TRANSFORM (SELECT key AS _pk, p, s, n) WITH (batch_interval = '100ms');" \
  >/dev/null || die "CREATE failed"
produce '{"id":"a","p":1,"s":"w","n":1796113394144433}' '{"id":"b","p":2,"s":"w"}'
start_node a
wait_caught_up 30
/usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); t=[f["type"] for f in m["mapping"] if f["name"]=="p"]; assert t==["int"], t' \
  "$(newest_manifest)" || die "the first commit does not map p as int"
produce '{"id":"c","p":2.5,"s":"w"}'
wait_caught_up 30
# a new run (a new transform) gives d's p as INT64: the target converts it
stop_node a
produce '{"id":"d","p":9007199254740993,"s":"w"}'
start_node a
wait_caught_up 30
stop_node a
grep -q "field 'p' widens from int to float" "$work/a.log" || die "the widening was not logged"
/usr/bin/python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); t=[f["type"] for f in m["mapping"] if f["name"]=="p"]; assert t==["float"], t' \
  "$(newest_manifest)" || die "the newest manifest does not map p as float"
# the stored documents, as the plugin answers and as collection dump prints
# them (exact numbers: a 16-digit integer too)
"$host" search t.c w --k 10 --json --data-dir "$data" "${plugin_args[@]}" >"$work/search.json" ||
  die "search failed"
/usr/bin/python3 - "$work/search.json" <<'PY' || die "stored values are not what was produced"
import json, sys
got = {h["_pk"]: h["doc"]["p"] for h in json.load(open(sys.argv[1]))["hits"]}
# d's int went in after the widening: stored as float64 (2^53 + 1 rounds)
want = {"a": 1, "b": 2, "c": 2.5, "d": 9007199254740992}
assert got == want, got
assert [h["doc"].get("n") for h in json.load(open(sys.argv[1]))["hits"] if h["_pk"] == "a"] == \
    [1796113394144433]
PY
"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl" ||
  die "collection dump failed"
/usr/bin/python3 - "$work/dump.jsonl" <<'PY' || { cat "$work/dump.jsonl"; die "collection dump does not print the numbers exactly"; }
import json, sys
docs = {d["_pk"]: d for d in map(json.loads, open(sys.argv[1]))}
assert {k: d["p"] for k, d in docs.items()} == {"a": 1, "b": 2, "c": 2.5, "d": 9007199254740992}
assert docs["a"]["n"] == 1796113394144433, docs["a"]
PY
grep -q '"n":1796113394144433' "$work/dump.jsonl" || die "dump prints n as $(grep -o '"n":[^,}]*' "$work/dump.jsonl")"
"$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
assert l["state"] == "running" and int(l["applied_records"]) == 4, l' ||
  die "the link did not apply all 4 records and keep running"
ok "p widened from int to float: old ints, 2.5 and a later int (as float64) stored, link running"

# a string for the float field: the link fails, with no record position
produce '{"id":"e","p":"high"}'
start_node a
for i in $(seq 1 100); do
  st=$("$host" links --json --data-dir "$data" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])')
  [ "$st" = failed ] && break
  sleep 0.2
done
stop_node a
[ "$st" = failed ] || die "the link did not fail on the incompatible change (state $st)"
"$host" links --data-dir "$data" >"$work/links.txt" || die "links failed"
grep -q "^    error: .*field 'p' is float in the mapping but a record gives it text" "$work/links.txt" ||
  { cat "$work/links.txt"; die "links does not show the schema error"; }
! grep -q "partition -1\|offset -1" "$work/links.txt" ||
  { cat "$work/links.txt"; die "links shows a position for an error that has none"; }
"$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
assert l["error_partition"] is None and l["error_offset"] is None, l
assert int(l["applied_records"]) == 4, l' || die "links --json shows a position or a wrong count"
ok "text for a float field: link failed, '$(grep -o "error: .*" "$work/links.txt" | cut -c1-90)...'"
