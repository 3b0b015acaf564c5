#!/bin/bash
# http-api.sh - the endpoints of the HTTP API that write and read streams,
# run SQL and show links, on a real node, each with a token of the right
# role, of the wrong role or namespace, and none: POST /v1/sql (results,
# a syntax error with line and column, a conflict naming the statement and
# what was applied, JSON bodies, a bad JSON body, 415, namespaces); POST
# /v1/streams/{s}/records (NDJSON keyed by a field, a JSON array, text,
# raw bytes; a malformed line or element is 400 naming it and nothing is
# appended; 404, 415; a body over http_max_body is 413 declared or
# chunked, and nothing is appended); GET /v1/streams, /v1/streams/{s},
# /v1/streams/{s}/records (what produce appended, byte for byte); GET
# /v1/links and /v1/links/{l}.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/http-lib.sh"

"$host" init --data-dir "$data" > /dev/null || die "init"
admin=$(make_token '*' admin)
shop_admin=$(make_token shop admin)
shop_writer=$(make_token shop write)
shop_reader=$(make_token shop read)
other_writer=$(make_token other write)
http_start a LOAMS_HTTP_MAX_BODY=64KiB
A=(-H "$(auth "$admin")")

# ---- SQL ----
expect 200 POST /v1/sql "${A[@]}" -H 'Content-Type: text/plain' \
  --data-binary $'CREATE STREAM shop.orders WITH (partitions = 4);\nCREATE STREAM other.s'
[ "$(jbody '[r["statement"] for r in d["results"]]')" = '["CREATE STREAM", "CREATE STREAM"]' ] ||
  die "sql results: $(cat "$work/body")"
[ "$(jbody 'd["results"][0]["partitions"]')" = 4 ] || die "sql result: $(cat "$work/body")"
expect 400 POST /v1/sql "${A[@]}" --data-binary $'CREATE STREAM shop.a;\nCREATE LINK l FROM STREAM s INT TABLE t'
is_error bad_sql
[ "$(jbody '[d["error"]["detail"]["line"], d["error"]["detail"]["column"]]')" = '[2, 29]' ] ||
  die "bad_sql position: $(cat "$work/body")"
expect 404 GET /v1/streams/shop.a "${A[@]}"   # a syntax error runs nothing
expect 409 POST /v1/sql "${A[@]}" -H 'Content-Type: application/sql' \
  --data-binary 'CREATE STREAM shop.b; CREATE STREAM shop.orders'
is_error conflict
[ "$(jbody 'd["error"]["detail"]["statement"]')" = 2 ] || die "conflict: $(cat "$work/body")"
[ "$(jbody 'd["error"]["detail"]["applied"][0]["stream"]')" = shop.b ] ||
  die "conflict applied: $(cat "$work/body")"
expect 200 POST /v1/sql "${A[@]}" -H 'Content-Type: application/json' \
  --data-binary '{"sql": "DROP STREAM shop.b"}'
expect 400 POST /v1/sql "${A[@]}" -H 'Content-Type: application/json' \
  --data-binary $'{"sql":\n  "DROP STREAM x",}'
is_error bad_json
[ "$(jbody '[d["error"]["detail"]["line"], d["error"]["detail"]["column"]]')" = '[2, 19]' ] ||
  die "bad_json position: $(cat "$work/body")"
expect 415 POST /v1/sql "${A[@]}" -H 'Content-Type: application/xml' --data-binary 'x'
is_error unsupported_media_type
expect 200 POST /v1/sql -H "$(auth "$shop_admin")" --data-binary 'CREATE STREAM shop.c'
expect 403 POST /v1/sql -H "$(auth "$shop_admin")" --data-binary 'CREATE STREAM shop.d; DROP STREAM other.s'
is_error forbidden
[ "$(jbody 'd["error"]["detail"]["statement"]')" = 2 ] || die "403 detail: $(cat "$work/body")"
expect 404 GET /v1/streams/shop.d "${A[@]}"   # refused before anything ran
expect 403 POST /v1/sql -H "$(auth "$shop_admin")" --data-binary 'SELECT * FROM system.streams'
expect 403 POST /v1/sql -H "$(auth "$shop_admin")" --data-binary 'CREATE STREAM shop.f; SHOW SCHEMAS'
jbody 'd["error"]["message"]' | grep -qF "statement 2: SHOW SCHEMAS shows every namespace: it needs a token of namespace '*'" ||
  die "SHOW SCHEMAS, namespace token: $(cat "$work/body")"
expect 200 POST /v1/sql "${A[@]}" --data-binary 'SHOW SCHEMAS'
expect 403 POST /v1/sql -H "$(auth "$shop_writer")" --data-binary 'CREATE STREAM shop.e'
expect 401 POST /v1/sql --data-binary 'CREATE STREAM shop.e'
expect 200 POST /v1/sql "${A[@]}" --data-binary 'SELECT * FROM system.streams'
[ "$(jbody '[s["stream"] for s in d["results"][0]]')" = '["other.s", "shop.c", "shop.orders"]' ] ||
  die "system.streams: $(cat "$work/body")"
ok "POST /v1/sql: results, bad_sql with line and column, 409 naming the statement, JSON bodies, 415, 401/403"

# ---- produce ----
/usr/bin/python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
recs = [{"id": "k%d" % i, "n": i, "big": 12345678901234567, "s": "caf\u00e9 \u0000 x"} for i in range(50)]
with open(w + "/good.ndjson", "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
    f.write("\r\n\n")
with open(w + "/bad.ndjson", "w") as f:
    for r in recs[:3]:
        f.write(json.dumps(r) + "\n")
    f.write('{"id": "k3", "n": }\n')
    f.write(json.dumps(recs[4]) + "\n")
with open(w + "/array.json", "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(r) for r in recs[:5]) + "\n]")
with open(w + "/bad-array.json", "w") as f:
    f.write('[{"id": "a"},\n {"id": "b"},\n 7]')
with open(w + "/big.ndjson", "w") as f:
    for i in range(1500):
        f.write(json.dumps({"id": "x%d" % i, "pad": "y" * 40}) + "\n")
with open(w + "/huge.ndjson", "w") as f:
    for i in range(6000):
        f.write(json.dumps({"id": "x%d" % i, "pad": "y" * 40}) + "\n")
PY
P=/v1/streams/shop.orders/records
ND=(-H 'Content-Type: application/x-ndjson')
expect 200 POST "$P?key_field=id" -H "$(auth "$shop_writer")" "${ND[@]}" --data-binary @"$work/good.ndjson"
[ "$(jbody 'd["count"]')" = 50 ] || die "produce count: $(cat "$work/body")"
[ "$(jbody 'sum(p["count"] for p in d["partitions"])')" = 50 ] || die "produce partitions"
[ "$(jbody 'all(p["first_offset"] == 0 for p in d["partitions"])')" = true ] ||
  die "first offsets: $(cat "$work/body")"
# each key on its FNV-1a partition
/usr/bin/python3 - "$work/body" <<'PY' || die "partitions of keys"
import json, sys
d = json.load(open(sys.argv[1]))
def fnv(b):
    h = 14695981039346656037
    for c in b:
        h = ((h ^ c) * 1099511628211) % 2**64
    return h
want = {}
for i in range(50):
    p = fnv(b"k%d" % i) % 4
    want[p] = want.get(p, 0) + 1
got = {p["partition"]: p["count"] for p in d["partitions"]}
assert got == want, (got, want)
PY
count_records() { # the records of shop.orders
  call GET /v1/streams/shop.orders "${A[@]}" > /dev/null
  jbody 'sum(p["high_offset"] - p["low_offset"] for p in d["partition_state"])'
}
[ "$(count_records)" = 50 ] || die "records after produce: $(count_records)"
expect 400 POST "$P?key_field=id" -H "$(auth "$shop_writer")" "${ND[@]}" --data-binary @"$work/bad.ndjson"
is_error bad_json
[ "$(jbody 'd["error"]["detail"]["line"]')" = 4 ] || die "bad line: $(cat "$work/body")"
grep -q '"message":"line 4: byte 19: expected a value: not valid JSON; nothing was appended"' \
  "$work/body" || die "bad line message: $(cat "$work/body")"
[ "$(count_records)" = 50 ] || die "a bad line appended records: $(count_records)"
expect 200 POST "$P?key_field=id" -H "$(auth "$admin")" -H 'Content-Type: application/json' \
  --data-binary @"$work/array.json"
[ "$(jbody 'd["count"]')" = 5 ] || die "array count: $(cat "$work/body")"
expect 400 POST "$P?key_field=id" -H "$(auth "$admin")" -H 'Content-Type: application/json' \
  --data-binary @"$work/bad-array.json"
[ "$(jbody '[d["error"]["detail"]["record"], d["error"]["detail"]["line"]]')" = '[2, 3]' ] ||
  die "bad element: $(cat "$work/body")"
expect 400 POST "$P" -H "$(auth "$admin")" -H 'Content-Type: application/json' --data-binary '[1, 2'
[ "$(jbody 'd["error"]["detail"]["line"]')" = 1 ] || die "bad array: $(cat "$work/body")"
[ "$(count_records)" = 55 ] || die "bad arrays appended records: $(count_records)"
printf 'plain one\nplain two\n' > "$work/lines.txt"
expect 200 POST "$P?partition=3" -H "$(auth "$admin")" -H 'Content-Type: text/plain' \
  --data-binary @"$work/lines.txt"
[ "$(jbody 'd["partitions"]')" = '[{"partition": 3, "first_offset": '"$(jbody 'd["partitions"][0]["first_offset"]')"', "count": 2}]' ] ||
  die "text lines: $(cat "$work/body")"
printf 'a\0b\377' > "$work/raw.bin"
expect 200 POST "$P?partition=0" -H "$(auth "$admin")" -H 'Content-Type: application/octet-stream' \
  --data-binary @"$work/raw.bin"
raw_offset=$(jbody 'd["partitions"][0]["first_offset"]')
expect 400 POST "$P?partition=9" -H "$(auth "$admin")" --data-binary 'x'
expect 400 POST "$P?key_field=id" -H "$(auth "$admin")" -H 'Content-Type: application/octet-stream' --data-binary 'x'
expect 415 POST "$P" -H "$(auth "$admin")" -H 'Content-Type: application/xml' --data-binary 'x'
expect 404 POST /v1/streams/shop.nope/records -H "$(auth "$admin")" --data-binary 'x'
is_error not_found
expect 400 POST /v1/streams/bad-name/records -H "$(auth "$admin")" --data-binary 'x'
expect 400 POST "/v1/streams/shop.orders%zz/records" -H "$(auth "$admin")" --data-binary 'x'
expect 403 POST "$P" -H "$(auth "$shop_reader")" --data-binary 'x'
is_error forbidden
expect 403 POST "$P" -H "$(auth "$other_writer")" --data-binary 'x'
expect 401 POST "$P" --data-binary 'x'
expect 413 POST "$P?key_field=id" -H "$(auth "$admin")" "${ND[@]}" --data-binary @"$work/big.ndjson"
is_error payload_too_large
expect 413 POST "$P?key_field=id" -H "$(auth "$admin")" "${ND[@]}" -H 'Transfer-Encoding: chunked' \
  --data-binary @"$work/big.ndjson"
is_error payload_too_large
# a chunked body that goes on past twice the limit has its connection closed
got=$(call POST "$P?key_field=id" -H "$(auth "$admin")" "${ND[@]}" -H 'Transfer-Encoding: chunked' \
  --data-binary @"$work/huge.ndjson")
[ "$got" = 000 ] || [ "$got" = 413 ] || die "a chunked body of 4x the limit: $got"
[ "$(count_records)" = 58 ] || die "records after the refusals: $(count_records)"
# base64 values with a fixed key, as produce --encoding base64 --key takes them
printf 'YQpi\nAP8=\n' > "$work/b64.txt"
expect 200 POST "$P?encoding=base64&key=bin" -H "$(auth "$admin")" -H 'Content-Type: text/plain' \
  --data-binary @"$work/b64.txt"
[ "$(jbody 'd["count"]')" = 2 ] || die "base64: $(cat "$work/body")"
expect 400 POST "$P?encoding=base64&key_field=id" -H "$(auth "$admin")" --data-binary 'YQ=='
expect 400 POST "$P?encoding=base64" -H "$(auth "$admin")" --data-binary 'Y*=='
[ "$(count_records)" = 60 ] || die "records after base64: $(count_records)"
# the CLI's produce makes the same records from the same lines
expect 200 POST /v1/sql "${A[@]}" --data-binary 'CREATE STREAM shop.cli WITH (partitions = 4)'
"$host" produce shop.cli --key-field id --data-dir "$data" < "$work/good.ndjson" > /dev/null ||
  die "produce"
expect 200 GET "/v1/streams/shop.cli/records?limit=1000" "${A[@]}"
cp "$work/body" "$work/cli-records.json"
expect 200 GET "$P?limit=1000" "${A[@]}"
/usr/bin/python3 - "$work/cli-records.json" "$work/body" <<'PY' || die "CLI and HTTP records differ"
import json, sys
cli = json.load(open(sys.argv[1]))["records"]
http = json.load(open(sys.argv[2]))["records"]
want = {(r["partition"], r["offset"], r["key"], r["value"]) for r in cli}
got = {(r["partition"], r["offset"], r.get("key"), r.get("value")) for r in http}
assert len(want) == 50 and want <= got, len(want & got)
PY
ok "produce: NDJSON, arrays, text, raw; bad lines and elements named, nothing appended; 400/403/404/413/415"

# ---- reading streams ----
expect 200 GET /v1/streams -H "$(auth "$shop_reader")"
[ "$(jbody '[s["stream"] for s in d]')" = '["shop.c", "shop.cli", "shop.orders"]' ] ||
  die "streams of shop: $(cat "$work/body")"
expect 200 GET /v1/streams "${A[@]}"
[ "$(jbody 'len(d)')" = 4 ] || die "every stream: $(cat "$work/body")"
expect 403 GET /v1/streams/other.s -H "$(auth "$shop_reader")"
expect 200 GET "$P?partition=0&from=$raw_offset&limit=1" -H "$(auth "$shop_reader")"
[ "$(jbody 'd["records"][0]["value_hex"]')" = 610062ff ] || die "raw record: $(cat "$work/body")"
[ "$(jbody 'd["partitions"][0]["next_offset"]')" = $((raw_offset + 1)) ] || die "next_offset"
# every record, read back over HTTP, against what the CLI reads
"$host" stream read shop.orders --limit 1000 --json --data-dir "$data" > "$work/cli.jsonl" ||
  die "stream read"
expect 200 GET "$P?limit=1000" -H "$(auth "$shop_reader")"
/usr/bin/python3 - "$work/body" "$work/cli.jsonl" "$work/good.ndjson" <<'PY' || die "read back"
import json, sys
got = json.load(open(sys.argv[1]))["records"]
cli = [json.loads(l) for l in open(sys.argv[2])]
assert got == cli, (len(got), len(cli))
good = [l.rstrip("\n") for l in open(sys.argv[3]) if l.strip()]
keyed = [r for r in got if (r.get("key") or "").startswith("k")]
assert len(keyed) == 55, len(keyed)
assert {r["value"] for r in keyed} == set(good), "the values are not the lines sent"
assert {r["key"] for r in keyed} == {"k%d" % i for i in range(50)}
PY
expect 400 GET "$P?limit=abc" -H "$(auth "$shop_reader")"
expect 400 GET "$P?partition=7" -H "$(auth "$shop_reader")"
expect 404 GET /v1/streams/shop.none/records -H "$(auth "$shop_reader")"
ok "GET streams: the namespace's list, describe, records as the CLI reads them, 400/403/404"

# ---- links ----
expect 200 POST /v1/sql "${A[@]}" --data-binary "CREATE LINK shop.l FROM STREAM shop.orders INTO COLLECTION shop.docs
  TRANSFORM (SELECT key AS _pk, json_get_int(value, '\$.n') AS n) WITH (batch_interval = '100ms')"
[ "$(jbody 'd["results"][0]["link"]')" = shop.l ] || die "create link: $(cat "$work/body")"
expect 200 GET /v1/links -H "$(auth "$shop_reader")"
[ "$(jbody '[l["link"] for l in d]')" = '["shop.l"]' ] || die "links: $(cat "$work/body")"
expect 200 GET /v1/links -H "$(auth "$other_writer")"
[ "$(jbody 'd')" = '[]' ] || die "links of other: $(cat "$work/body")"
expect 200 GET /v1/links/shop.l -H "$(auth "$shop_reader")"
[ "$(jbody '[d["link"], d["stream"], d["target"]]')" = '["shop.l", "shop.orders", "shop.docs"]' ] ||
  die "link: $(cat "$work/body")"
expect 404 GET /v1/links/shop.nope -H "$(auth "$shop_reader")"
expect 403 GET /v1/links/shop.l -H "$(auth "$other_writer")"
expect 401 GET /v1/links
ok "GET /v1/links and /v1/links/{l}: system.links rows of the token's namespace, 401/403/404"
stop_node a
