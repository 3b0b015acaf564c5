#!/bin/bash
# http-read.sh - the read endpoints of collections, graphs and tables on a
# real node, against the CLI given the same query: GET and POST
# /v1/collections/{c}/search answer what `search --json` prints, a
# document by _pk what `collection dump` holds; /v1/graphs/{g}/nodes,
# neighbors, path and khop what `graph ... --json` prints; /v1/tables/{t}
# and its scan what `table describe|scan --json` print (timings aside).
# Each with a token of the namespace (read, and write, which covers it),
# of another namespace (403) and none (401); unknown objects, documents
# and nodes are 404, a target of another kind or a bad request 400.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/http-lib.sh"

"$host" init --data-dir "$data" > /dev/null || die "init"
admin=$(make_token '*' admin)
reader=$(make_token t read)
writer=$(make_token t write)
stranger=$(make_token u read)
http_start a
A=(-H "$(auth "$admin")")
R=(-H "$(auth "$reader")")

expect 200 POST /v1/sql "${A[@]}" --data-binary "CREATE STREAM t.tickets WITH (partitions = 2);
  CREATE STREAM t.ops;
  CREATE LINK t.lc FROM STREAM t.tickets INTO COLLECTION t.c
    TRANSFORM (SELECT key AS _pk, subject, body) WITH (batch_interval = '100ms');
  CREATE LINK t.lt FROM STREAM t.tickets INTO TABLE t.tab
    TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, subject, body)
    WITH (batch_interval = '100ms');
  CREATE LINK t.lg FROM STREAM t.ops INTO GRAPH t.g
    TRANSFORM LUA \$\$
      function transform(rec)
        local r = loams.json_decode(rec.value)
        if r.op == 'node' then return { _node = r.id, _label = r.label, n = r.n } end
        return { _src = r.src, _type = r.type, _dst = r.dst, w = r.w }
      end
    \$\$ WITH (batch_interval = '100ms')"
cat > "$work/tickets.ndjson" <<'JSON'
{"id":"t1","subject":"printer jam","body":"the printer jams every morning","n":12345678901234567}
{"id":"t2","subject":"vpn down","body":"vpn drops after the update"}
{"id":"t3","subject":"printer toner","body":"replace the toner of the printer"}
{"id":"t4","subject":"laptop","body":"screen flickers"}
{"id":"t5","subject":"caf\u00e9 machine","body":"no coffee \u2615"}
JSON
expect 200 POST "/v1/streams/t.tickets/records?key_field=id" -H "$(auth "$writer")" \
  -H 'Content-Type: application/x-ndjson' --data-binary @"$work/tickets.ndjson"
cat > "$work/ops.ndjson" <<'JSON'
{"op":"node","id":"a","label":"person","n":1}
{"op":"node","id":"b","label":"person","n":2}
{"op":"node","id":"c","label":"person","n":3}
{"op":"node","id":"d","label":"place","n":4}
{"op":"edge","src":"a","type":"knows","dst":"b","w":1}
{"op":"edge","src":"b","type":"knows","dst":"c","w":2}
{"op":"edge","src":"c","type":"visits","dst":"d","w":3}
JSON
expect 200 POST "/v1/streams/t.ops/records" -H "$(auth "$writer")" \
  -H 'Content-Type: application/x-ndjson' --data-binary @"$work/ops.ndjson"
# caught up: every link's lag is 0 (over HTTP)
for i in $(seq 1 150); do
  call GET /v1/links "${R[@]}" > /dev/null
  [ "$(jbody 'sum(l["lag_records"] for l in d) == 0 and all(l.get("last_commit_ms") for l in d)')" = true ] && break
  sleep 0.2
done
[ "$(jbody 'sum(l["lag_records"] for l in d)')" = 0 ] || die "links did not catch up: $(cat "$work/body")"

# same JSON documents, timings aside
same() { # same HTTP-FILE CLI-FILE WHAT
  /usr/bin/python3 - "$1" "$2" <<'PY' || die "$3: HTTP and CLI differ"
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("took_us",)}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a = strip(json.load(open(sys.argv[1])))
b = strip(json.loads(open(sys.argv[2]).read()))
assert a == b, (a, b)
PY
}
q() { "$host" "$@" --data-dir "$data" "${plugin_args[@]}"; }

# ---- collections ----
expect 200 GET "/v1/collections/t.c/search?q=printer&k=5" "${R[@]}"
cp "$work/body" "$work/s1.json"
q search t.c printer --k 5 --json > "$work/s1.cli" || die "search"
same "$work/s1.json" "$work/s1.cli" "search"
[ "$(jbody 'sorted(h["_pk"] for h in d["hits"])')" = '["t1", "t3"]' ] || die "hits: $(cat "$work/body")"
expect 200 GET "/v1/collections/t.c/search?q=printer+jam&field=subject&field=body&k=1" "${R[@]}"
q search t.c "printer jam" --field subject --field body --k 1 --json > "$work/s2.cli" || die "search"
same "$work/body" "$work/s2.cli" "search with fields"
expect 200 POST /v1/collections/t.c/search "${R[@]}" -H 'Content-Type: application/json' \
  --data-binary '{"q": "vpn", "k": 2}'
q search t.c vpn --k 2 --json > "$work/s3.cli" || die "search"
same "$work/body" "$work/s3.cli" "POST search"
expect 400 POST /v1/collections/t.c/search "${R[@]}" -H 'Content-Type: application/json' \
  --data-binary $'{"q": "vpn",\n "k": }'
is_error bad_json
[ "$(jbody 'd["error"]["detail"]["line"]')" = 2 ] || die "bad search body: $(cat "$work/body")"
expect 400 POST /v1/collections/t.c/search "${R[@]}" -H 'Content-Type: application/json' \
  --data-binary '{"q": "vpn", "kk": 2}'
is_error bad_request
expect 400 GET "/v1/collections/t.c/search?k=3" "${R[@]}"
expect 200 GET /v1/collections/t.c/docs/t5 "${R[@]}"
q collection dump t.c > "$work/dump.jsonl" || die "dump"
/usr/bin/python3 - "$work/body" "$work/dump.jsonl" <<'PY' || die "doc t5"
import json, sys
doc = json.load(open(sys.argv[1]))["doc"]
dump = {d["_pk"]: d for d in map(json.loads, open(sys.argv[2]))}
assert doc == dump["t5"], (doc, dump["t5"])
assert doc["subject"] == "caf\u00e9 machine"
PY
q collection get t.c t5 --json > "$work/get.cli" || die "collection get"
same "$work/body" "$work/get.cli" "collection get"
q collection get t.c t5 > "$work/get.line" || die "collection get (a line)"
grep -qx "$(grep '"_pk":"t5"' "$work/dump.jsonl")" "$work/get.line" || die "get t5: $(cat "$work/get.line")"
expect 404 GET /v1/collections/t.c/docs/t9 "${R[@]}"
if q collection get t.c t9 2> "$work/get.err"; then die "get t9 succeeded"; fi
grep -q "no live document of t.c has the _pk 't9'" "$work/get.err" || die "get t9: $(cat "$work/get.err")"
is_error not_found
expect 404 GET "/v1/collections/t.nope/search?q=x" "${R[@]}"
expect 400 GET "/v1/collections/t.tab/search?q=x" "${R[@]}"   # a table
expect 200 GET "/v1/collections/t.c/search?q=printer" -H "$(auth "$writer")"
expect 403 GET "/v1/collections/t.c/search?q=printer" -H "$(auth "$stranger")"
is_error forbidden
expect 401 GET "/v1/collections/t.c/docs/t1"
ok "collections: search GET and POST and a document by _pk, as the CLI answers; 400/401/403/404"

# ---- graphs ----
graph_same() { # graph_same PATH CLI-ARGS...
  local path=$1
  shift
  expect 200 GET "$path" "${R[@]}"
  q graph t.g "$@" --json > "$work/g.cli" || die "graph $*"
  same "$work/body" "$work/g.cli" "graph $*"
}
graph_same /v1/graphs/t.g/nodes/a node a
[ "$(jbody 'd["node"]["label"]')" = person ] || die "node a: $(cat "$work/body")"
graph_same "/v1/graphs/t.g/neighbors/b?direction=both" neighbors b --direction both
graph_same "/v1/graphs/t.g/neighbors/a?type=knows&limit=5" neighbors a --type knows --limit 5
graph_same "/v1/graphs/t.g/path?from=a&to=d" path a d
graph_same "/v1/graphs/t.g/path?from=a&to=d&max_depth=3" path a d --max-depth 3
graph_same "/v1/graphs/t.g/khop/a?depth=2" khop a --depth 2
expect 404 GET /v1/graphs/t.g/nodes/zz "${R[@]}"
is_error not_found
expect 400 GET "/v1/graphs/t.g/path?from=a" "${R[@]}"
expect 400 GET "/v1/graphs/t.g/neighbors/a?direction=up" "${R[@]}"
expect 400 GET "/v1/graphs/t.g/khop/a?depth=99" "${R[@]}"
expect 403 GET /v1/graphs/t.g/nodes/a -H "$(auth "$stranger")"
expect 401 GET /v1/graphs/t.g/nodes/a
ok "graphs: node, neighbors, path, khop as the CLI answers; 400/401/403/404"

# ---- tables ----
expect 200 GET /v1/tables/t.tab "${R[@]}"
q table describe t.tab --json > "$work/t.cli" || die "describe"
same "$work/body" "$work/t.cli" "table describe"
expect 200 GET "/v1/tables/t.tab/scan?limit=3" "${R[@]}"
q table scan t.tab --limit 3 --json > "$work/ts.cli" || die "scan"
same "$work/body" "$work/ts.cli" "table scan"
expect 400 GET "/v1/tables/t.tab/scan?limit=0" "${R[@]}"
expect 400 GET /v1/tables/t.c "${R[@]}"   # a collection
expect 404 GET /v1/tables/t.none "${R[@]}"
expect 403 GET /v1/tables/t.tab -H "$(auth "$stranger")"
expect 401 GET /v1/tables/t.tab
ok "tables: describe and scan as the CLI answers; 400/401/403/404"
stop_node a
