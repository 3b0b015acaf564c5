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
# Then the CLI with --server (and LOAMS_SERVER, LOAMS_TOKEN): search,
# collection get, graph, table, stream list|describe|read, links, sql and
# produce print what they print on the data dir (timings aside); a bad,
# missing or foreign token, an unknown object and an unreachable server
# are clear errors that never print the token.
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
# the query language: the same parser answers the HTTP API and the CLI
expect 200 GET "/v1/collections/t.c/search?q=%2Bprinter+-toner" "${R[@]}"
[ "$(jbody '[h["_pk"] for h in d["hits"]]')" = '["t1"]' ] || die "+printer -toner: $(cat "$work/body")"
expect 200 GET "/v1/collections/t.c/search?q=%22jams+every%22" "${R[@]}"
[ "$(jbody '[h["_pk"] for h in d["hits"]]')" = '["t1"]' ] || die "a phrase: $(cat "$work/body")"
expect 400 GET "/v1/collections/t.c/search?q=printer+%22jam" "${R[@]}"
jbody 'd["error"]["message"]' | grep -q 'query column 9: this phrase is never closed' ||
  die "an unclosed phrase: $(cat "$work/body")"
q search t.c 'printer "jam' >/dev/null 2>"$work/q.err" && die "the CLI took an unclosed phrase"
grep -q 'query column 9: this phrase is never closed' "$work/q.err" &&
  grep -q '^ *\^$' "$work/q.err" || die "the CLI's query error: $(cat "$work/q.err")"
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
# pages of GET .../docs (limit 2: three pages), then .../nodes and .../edges,
# followed by their "next" as JSON text, hold what the dump and the graph
# scans hold, each item once
/usr/bin/python3 - "$url" "$reader" "$work/dump.jsonl" <<'PY' || die "pages of docs"
import json, sys, urllib.parse, urllib.request
url, tok, dump = sys.argv[1], sys.argv[2], sys.argv[3]
def pages(path, items, limit):
    out, after, n = [], None, 0
    while True:
        q = "?limit=%d" % limit
        if after is not None:
            q += "&after=" + urllib.parse.quote(json.dumps(after))
        r = urllib.request.Request(url + path + q, headers={"Authorization": "Bearer " + tok})
        a = json.load(urllib.request.urlopen(r))
        n += 1
        assert len(a[items]) <= limit, (path, a)
        out += a[items]
        after = a.get("next")
        if after is None:
            return out, n
docs, n = pages("/v1/collections/t.c/docs", "docs", 2)
want = [json.loads(l) for l in open(dump)]
assert n == 3 and sorted(d["_pk"] for d in docs) == sorted(d["_pk"] for d in want), (n, docs)
assert {d["_pk"]: d for d in docs} == {d["_pk"]: d for d in want}
nodes, n = pages("/v1/graphs/t.g/nodes", "nodes", 3)
assert n == 2 and sorted(x["id"] for x in nodes) == ["a", "b", "c", "d"], (n, nodes)
edges, n = pages("/v1/graphs/t.g/edges", "edges", 2)
assert n == 2 and len(edges) == 3, (n, edges)
PY
expect 400 GET "/v1/collections/t.c/docs?limit=0" "${R[@]}"
expect 400 GET "/v1/collections/t.c/docs?after=%7Bnot%20json" "${R[@]}"
is_error bad_request
expect 400 GET "/v1/collections/t.c/docs?after=%22x%22" "${R[@]}" # not a cursor
expect 400 GET "/v1/graphs/t.g/edges?limit=100001" "${R[@]}"
expect 403 GET /v1/graphs/t.g/nodes -H "$(auth "$stranger")"
ok "collections: search GET and POST and a document by _pk, as the CLI answers; pages of docs, nodes and edges; 400/401/403/404"

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
# ---- the CLI through the server: the same output as on the data dir ----
# norm FILE: timings and the names a pair of commands differ by, made equal
norm() {
  sed -E 's/"took_us":[0-9]+/"took_us":T/g; s/in [0-9]+ us/in T us/g;
    s/in [0-9.]+ s: [0-9]+ records\/s, [0-9.]+ MB\/s/in T/; s/_(local|remote)\b/_X/g' "$1"
}
# both CMD ARGS...: the command on the data dir and with --server print the
# same and exit the same
both() {
  local l=0 r=0 pa=()
  case $1 in search | collection | graph | table | sql) pa=("${plugin_args[@]}") ;; esac
  "$host" "$@" --data-dir "$data" "${pa[@]}" > "$work/local.out" 2> "$work/local.err" || l=$?
  "$host" "$@" --server "$url" --token "$admin" > "$work/remote.out" 2> "$work/remote.err" || r=$?
  [ "$l" = "$r" ] || die "$*: exit $l on the data dir, $r through the server: $(cat "$work/local.err" "$work/remote.err")"
  diff <(norm "$work/local.out") <(norm "$work/remote.out") > "$work/diff" ||
    die "$*: the outputs differ: $(head -20 "$work/diff")"
  [ -s "$work/local.out" ] || [ "$l" != 0 ] || die "$*: printed nothing"
}
both search t.c printer --k 5
both search t.c printer --k 5 --json
both search t.c "printer jam" --field subject --k 1 --json
both collection get t.c t5
both collection get t.c t5 --json
both collection get t.c t9
grep -q "404 not_found: no live document of t.c has the _pk 't9'" "$work/remote.err" ||
  die "get t9: $(cat "$work/remote.err")"
both collection dump t.c
both graph t.g nodes
both graph t.g edges
both graph t.g node a
both graph t.g node a --json
both graph t.g neighbors b --direction both
both graph t.g neighbors a --type knows --limit 5 --json
both graph t.g path a d
both graph t.g path a d --max-depth 2 --json
both graph t.g khop a --depth 2
both graph t.g khop a --depth 2 --json
both table describe t.tab
both table describe t.tab --json
both table scan t.tab --limit 3
both table scan t.tab --limit 3 --json
both stream list
both stream list --json
both stream describe t.tickets
both stream describe t.tickets --json
both stream read t.tickets
both stream read t.tickets --json
both stream read t.tickets --partition 1 --from 1 --limit 2 --json
both stream read t.ops --limit 5 --json
both stream read t.tickets --partition 7
both links
both links --json
ok "search, collection get and dump, graph, table, stream, links: the same output through the server"

# sql: text and JSON, a statement that fails after one that took effect
sql "CREATE STREAM t.s1_local WITH (partitions = 3)" > "$work/local.out" || die "sql"
"$host" sql --server "$url" --token "$admin" "CREATE STREAM t.s1_remote WITH (partitions = 3)" \
  > "$work/remote.out" || die "sql through the server"
diff <(norm "$work/local.out") <(norm "$work/remote.out") || die "sql: the outputs differ"
sql "CREATE STREAM t.s2_local; CREATE STREAM t.s1_local" > "$work/local.out" 2> /dev/null &&
  die "a second CREATE STREAM t.s1_local succeeded"
"$host" sql --server "$url" --token "$admin" "CREATE STREAM t.s2_remote; CREATE STREAM t.s1_remote" \
  > "$work/remote.out" 2> "$work/remote.err" && die "a second CREATE STREAM t.s1_remote succeeded"
diff <(norm "$work/local.out") <(norm "$work/remote.out") || die "sql that fails: the outputs differ"
[ -s "$work/remote.out" ] || die "sql that fails: the first statement printed nothing"
grep -q "409 conflict: statement 2" "$work/remote.err" || die "sql that fails: $(cat "$work/remote.err")"
sql --json "CREATE STREAM t.s3_local" > "$work/local.out" || die "sql --json"
"$host" sql --json --server "$url" --token "$admin" "CREATE STREAM t.s3_remote" \
  > "$work/remote.out" || die "sql --json through the server"
diff <(norm "$work/local.out") <(norm "$work/remote.out") || die "sql --json: the outputs differ"
both sql "SELECT * FROM system.streams"
ok "sql through the server: the same text and JSON, and what ran before a failure"

# produce: the same records, summary and partitions
seq 1 2500 | sed 's/.*/{"id":"k&","n":&}/' > "$work/p.ndjson"
"$host" produce t.s1_local --key-field id --batch 1000 --data-dir "$data" < "$work/p.ndjson" \
  > "$work/local.out" || die "produce"
"$host" produce t.s1_remote --key-field id --batch 1000 --server "$url" --token "$writer" \
  < "$work/p.ndjson" > "$work/remote.out" || die "produce through the server"
diff <(norm "$work/local.out") <(norm "$work/remote.out") || die "produce: the summaries differ"
grep -q "^produced 2500 records" "$work/remote.out" || die "produce: $(cat "$work/remote.out")"
for p in 0 1 2; do
  "$host" stream read t.s1_local --partition $p --data-dir "$data" > "$work/l.$p" || die "read"
  "$host" stream read t.s1_remote --partition $p --data-dir "$data" > "$work/r.$p" || die "read"
  cmp "$work/l.$p" "$work/r.$p" || die "partition $p: the records differ"
done
printf 'a\nb\n' | "$host" produce t.s1_remote --partition 5 --server "$url" --token "$writer" \
  2> "$work/remote.err" && die "produce to partition 5 of 3 succeeded"
grep -q "partitions 0 to 2" "$work/remote.err" || die "partition 5: $(cat "$work/remote.err")"
printf '{"id":"x"}\nnot json\n' | "$host" produce t.s1_remote --key-field id --server "$url" \
  --token "$writer" 2> "$work/remote.err" && die "a bad line was produced"
grep -q "stdin lines 1 to 2: .*400.*line 2" "$work/remote.err" || die "bad line: $(cat "$work/remote.err")"
ok "produce through the server: the same summary and records; bad partition and line"

# env, tokens, errors
LOAMS_SERVER=$url LOAMS_TOKEN=$reader "$host" stream describe t.tickets > "$work/remote.out" ||
  die "LOAMS_SERVER, LOAMS_TOKEN"
"$host" stream describe t.tickets --data-dir "$data" > "$work/local.out" || die "describe"
cmp "$work/local.out" "$work/remote.out" || die "LOAMS_SERVER: the outputs differ"
# --data-dir wins over LOAMS_SERVER; both flags are an error
LOAMS_SERVER=http://127.0.0.1:1 "$host" stream list --data-dir "$data" > /dev/null ||
  die "--data-dir with LOAMS_SERVER set"
"$host" stream list --data-dir "$data" --server "$url" 2> "$work/err" && die "--server and --data-dir"
grep -q "exclude each other" "$work/err" || die "--server and --data-dir: $(cat "$work/err")"
# a token is loams_<id>_<secret>; the secret (base64url) may hold "_" itself
secret=${stranger#loams_*_}
reader_secret=${reader#loams_*_}
[ ${#secret} -eq 43 ] && [ ${#reader_secret} -eq 43 ] || die "token secrets: ${#secret}, ${#reader_secret} characters"
for t in "" "$stranger" "${reader}x"; do
  if [ -n "$t" ]; then targs=(--token "$t"); else targs=(); fi
  "$host" search t.c printer --server "$url" "${targs[@]}" > "$work/out" 2> "$work/err" &&
    die "search with token '$t' succeeded"
  [ ! -s "$work/out" ] || die "a refused search printed: $(cat "$work/out")"
  grep -Eq "answered (401 unauthorized|403 forbidden): " "$work/err" || die "token '$t': $(cat "$work/err")"
  ! grep -qF "$reader_secret" "$work/err" && ! grep -qF "$secret" "$work/err" ||
    die "the token was printed: $(cat "$work/err")"
done
"$host" produce t.s1_remote --server "$url" --token "$reader" < "$work/p.ndjson" 2> "$work/err" &&
  die "produce with a read token"
grep -q "403 forbidden" "$work/err" || die "produce, read token: $(cat "$work/err")"
"$host" search t.nope printer --server "$url" --token "$reader" 2> "$work/err" && die "t.nope"
grep -q "404 not_found" "$work/err" || die "t.nope: $(cat "$work/err")"
"$host" graph t.g khop a --depth 2 --server "http://127.0.0.1:1" --token "$reader" 2> "$work/err" &&
  die "an unreachable server answered"
grep -q "cannot reach the server http://127.0.0.1:1" "$work/err" || die "unreachable: $(cat "$work/err")"
"$host" links --server "http://user:pw@127.0.0.1:1" 2> "$work/err" && die "unreachable"
! grep -q "pw" "$work/err" || die "the password was printed: $(cat "$work/err")"
"$host" collection dump t.c --server "$url" --token "$stranger" > "$work/out" 2> "$work/err" &&
  die "dump --server with another namespace's token"
grep -q "403 forbidden" "$work/err" && [ ! -s "$work/out" ] || die "dump --server: $(cat "$work/err")"
ok "--server: LOAMS_SERVER and LOAMS_TOKEN, no/bad/foreign token (never printed), 404, unreachable"
stop_node a
