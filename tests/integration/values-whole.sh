#!/bin/bash
# values-whole.sh - stored values are printed whole: a string holding an
# escaped NUL ("a\u0000b"), quotes, a backslash, a tab and characters
# outside ASCII, and integers of 16 digits and more, come out of
# `collection dump`, `table scan`, `search` and `graph` (as JSON lines and
# as text) exactly as they went in.  cJSON, which keeps strings
# NUL-terminated and numbers as doubles, printed "a" for the first,
# 9007199254740992 for 2^53 + 1, and 1.79614543008643e+15 for a timestamp
# in microseconds; `links --json` printed 2e+15 records, and
# system.embedding_providers 1e+15 tokens per minute.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

cat >"$work/in.jsonl" <<'EOF'
{"id":"n1","v":"a\u0000b","n":9007199254740993}
{"id":"n2","v":"tab\there \"quoted\" back\\slash \u00e9 \ud83d\ude00","n":1796145430086430}
{"id":"n3","v":"\u0000","n":-9223372036854775808}
{"id":"n4","v":"plain","n":9223372036854775807}
EOF

sql "CREATE STREAM t.s WITH (partitions = 1);
     CREATE LINK t.lc FROM STREAM t.s INTO COLLECTION t.c
       TRANSFORM (SELECT key AS _pk, v, n) WITH (batch_interval = '100ms');
     CREATE LINK t.lt FROM STREAM t.s INTO TABLE t.t
       TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, v, n)
       WITH (batch_interval = '100ms');
     CREATE LINK t.lg FROM STREAM t.s INTO GRAPH t.g
       TRANSFORM (SELECT json_get_str(value, '\$.id') AS _node, 'rec' AS _label, v, n)
       WITH (batch_interval = '100ms');" \
  >/dev/null 2>"$work/create.err" || die "CREATE failed: $(cat "$work/create.err")"
"$host" produce t.s --data-dir "$data" --key-field id <"$work/in.jsonl" >/dev/null 2>&1 ||
  die "produce failed"
start_node a
wait_caught_up 60
stop_node a
"$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
for l in json.load(sys.stdin):
    assert l["state"] == "running" and int(l["applied_records"]) == 4, l' ||
  die "a link did not apply the 4 records"

# check_lines FILE ID_FIELD PREFIX WHAT: every JSON line of FILE holds the
# values v and n of its record exactly (under PREFIX: "" or "properties.";
# Python reads integers exactly).
check_lines() {
  /usr/bin/python3 - "$work/in.jsonl" "$1" "$2" "$3" <<'PY' || die "$4: values differ"
import json, sys
want = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    want[r["id"]] = (r["v"], r["n"])
got = {}
for l in open(sys.argv[2]):
    if not l.strip():
        continue
    r = json.loads(l)
    o = r
    for k in sys.argv[4].split(".")[:-1]:
        o = o[k]
    got[r[sys.argv[3]]] = (o["v"], o["n"])
for k in want:
    assert got.get(k) == want[k], "%s: got %r, want %r" % (k, got.get(k), want[k])
    assert type(got[k][1]) is int, "%s: n is not an integer: %r" % (k, got[k][1])
assert len(got) == len(want), "%d values, want %d" % (len(got), len(want))
PY
}

"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl" ||
  die "collection dump failed"
check_lines "$work/dump.jsonl" _pk "" "collection dump"
grep -qF '"a\u0000b"' "$work/dump.jsonl" || die "collection dump: no escaped NUL in $(cat "$work/dump.jsonl")"
ok "collection dump prints every value whole"

"$host" table scan t.t --data-dir "$data" "${plugin_args[@]}" >"$work/scan.jsonl" ||
  die "table scan failed"
check_lines "$work/scan.jsonl" id "" "table scan"
"$host" table scan t.t --json --data-dir "$data" "${plugin_args[@]}" >"$work/scan.json" ||
  die "table scan --json failed"
grep -qF '"a\u0000b"' "$work/scan.json" || die "table scan --json: no escaped NUL"
ok "table scan prints every value whole (lines and --json)"

"$host" search t.c a --data-dir "$data" "${plugin_args[@]}" >"$work/search.txt" ||
  die "search failed"
grep -qF 'n1                   {"v":"a\u0000b","n":9007199254740993}' "$work/search.txt" ||
  { cat "$work/search.txt"; die "search: the document of n1 is not shown whole"; }
"$host" search t.c a --json --data-dir "$data" "${plugin_args[@]}" >"$work/search.json" ||
  die "search --json failed"
/usr/bin/python3 -c '
import json, sys
hits = json.load(open(sys.argv[1]))["hits"]
assert [h["doc"] for h in hits if h["_pk"] == "n1"] == [{"v": "a\0b", "n": 9007199254740993}], hits
' "$work/search.json" || die "search --json: the document of n1 is not whole"
ok "search shows the document whole (text and --json)"

"$host" graph t.g nodes --data-dir "$data" "${plugin_args[@]}" >"$work/nodes.jsonl" ||
  die "graph nodes failed"
check_lines "$work/nodes.jsonl" id properties. "graph nodes"
"$host" graph t.g node n1 --data-dir "$data" "${plugin_args[@]}" >"$work/node.txt" ||
  die "graph node failed"
[ "$(cat "$work/node.txt")" = 'n1  rec  {"v":"a\u0000b","n":9007199254740993}' ] ||
  die "graph node n1 shows: $(cat "$work/node.txt")"
ok "graph nodes and graph node print every value whole"

# links --json: a counter of 2*10^15 records (set in the target's pointer)
# is an integer, not 2e+15.
poke="$build/tests/integration/store-poke"
"$poke" meta-get "$data" target/t/c >"$work/pointer" || die "store-poke meta-get"
"$poke" meta-put "$data" target/t/c "$(/usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
p["applied_records"] = 2000000000000000
print(json.dumps(p))' "$work/pointer")" || die "store-poke meta-put"
"$host" links --json --data-dir "$data" >"$work/links.json" || die "links --json failed"
/usr/bin/python3 -c '
import json, sys
links = {l["link"]: l for l in json.load(open(sys.argv[1]))}
n = links["t.lc"]["applied_records"]
assert type(n) is int and n == 2000000000000000, repr(n)
' "$work/links.json" || die "links --json: applied_records is not exact: $(grep applied "$work/links.json")"
ok "links --json writes counters with every digit"

# sql --json: a provider's tokens_per_minute of 10^15 is an integer, not 1e+15.
sql "CREATE EMBEDDING PROVIDER t.p USING openai WITH (model = 'm', dimensions = 8,
       api_key_env = 'NO_KEY', tokens_per_minute = 1000000000000000)" >/dev/null ||
  die "CREATE EMBEDDING PROVIDER failed"
sql --json "SELECT * FROM system.embedding_providers" >"$work/providers.json" ||
  die "system.embedding_providers failed"
/usr/bin/python3 -c '
import json, sys
p = {r["provider"]: r for r in json.load(open(sys.argv[1]))}["t.p"]
assert type(p["tokens_per_minute"]) is int and p["tokens_per_minute"] == 10**15, p
assert p["dimensions"] == 8 and p["requests_per_minute"] == 0, p
' "$work/providers.json" || die "system.embedding_providers: $(cat "$work/providers.json")"
ok "sql --json writes a provider's numbers with every digit"
