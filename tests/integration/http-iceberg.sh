#!/bin/bash
# http-iceberg.sh - the Iceberg REST catalog (read side) at /iceberg/v1 on
# a real node with a table a link wrote: config, namespaces (list, get,
# HEAD), tables (list, loadTable, HEAD) checked strictly against the
# response schemas of the spec (rest-catalog-open-api.yaml: CatalogConfig,
# ListNamespacesResponse, GetNamespaceResponse, ListTablesResponse,
# LoadTableResult with a v2 TableMetadata, ErrorModel); the metadata is
# the file at metadata-location; errors in the spec's shape (404
# NoSuchTable/NoSuchNamespace, 401 without a token, 403 for another
# namespace and for every write); then independent readers load the table
# the catalog points at: iceberg-conformance.py checks it against the
# table spec, python3-avro follows its metadata to the data files
# (table-files.py) and DuckDB reads every row.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/http-lib.sh"
. "$src/tests/integration/duckdb-env.sh"
loams_duckdb_install || die "DuckDB (@duckdb/node-api) cannot be installed"

"$host" init --data-dir "$data" > /dev/null || die "init"
admin=$(make_token '*' admin)
reader=$(make_token t read)
other=$(make_token other read)
http_start a
A=(-H "$(auth "$admin")")
expect 200 POST /v1/sql "${A[@]}" --data-binary "CREATE STREAM t.tickets WITH (partitions = 2);
CREATE LINK t.l FROM STREAM t.tickets INTO TABLE t.tab
  TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, json_get_int(value, '\$.n') AS n)
  WITH (batch_interval = '100ms')"
seq 1 250 | sed 's/.*/{"id":"r&","n":&}/' > "$work/rows.jsonl"
expect 200 POST "/v1/streams/t.tickets/records?key_field=id" "${A[@]}" \
  -H 'Content-Type: application/x-ndjson' --data-binary @"$work/rows.jsonl"
t=0
while :; do
  expect 200 GET /v1/links/t.l "${A[@]}"
  [ "$(jbody 'd["lag_records"]')" = 0 ] && break
  t=$((t + 1))
  [ "$t" -lt 120 ] || die "the table link does not catch up in 30 s"
  sleep 0.25
done

/usr/bin/python3 - "$url" "$reader" "$other" "$work" "$admin" <<'PY' || die "the catalog does not follow the spec"
import json, re, sys, urllib.request, urllib.error
url, reader, other, work, admin = sys.argv[1:6]
base = url + "/iceberg/v1"

def call(method, path, token=reader, body=None):
    h = {"Authorization": "Bearer " + token} if token else {}
    req = urllib.request.Request(base + path, data=body, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
            return r.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, (json.loads(raw) if raw else None)

def strict(doc, required, optional=()):
    assert isinstance(doc, dict), doc
    keys = set(doc)
    assert set(required) <= keys, ("missing", set(required) - keys, doc)
    assert keys <= set(required) | set(optional), ("unexpected", keys - set(required) - set(optional))

def error(st, doc, code, type_):
    assert st == code, (st, doc)
    strict(doc, ["error"])
    strict(doc["error"], ["message", "type", "code"], ["stack"])
    e = doc["error"]
    assert isinstance(e["message"], str) and e["message"], e
    assert e["type"] == type_ and e["code"] == code, e

def namespace(v):
    assert isinstance(v, list) and v and all(isinstance(x, str) for x in v), v

# CatalogConfig
st, d = call("GET", "/config")
assert st == 200, (st, d)
strict(d, ["defaults", "overrides"], ["endpoints"])
for k in ("defaults", "overrides"):
    assert all(isinstance(a, str) and isinstance(b, str) for a, b in d[k].items()), d
for e in d.get("endpoints", []):
    assert re.fullmatch(r"(GET|HEAD|POST|DELETE) /v1/\{prefix\}/\S+", e), e
# ListNamespacesResponse
st, d = call("GET", "/namespaces")
assert st == 200, (st, d)
strict(d, ["namespaces"], ["next-page-token"])
for n in d["namespaces"]:
    namespace(n)
assert d["namespaces"] == [["t"]], d
st, d = call("GET", "/namespaces?parent=t")
assert st == 200 and d == {"namespaces": []}, d
st, d = call("GET", "/namespaces", token=other)
assert st == 200 and d == {"namespaces": []}, d
# GetNamespaceResponse, HEAD
st, d = call("GET", "/namespaces/t")
assert st == 200, (st, d)
strict(d, ["namespace"], ["properties"])
namespace(d["namespace"])
assert d["namespace"] == ["t"] and d.get("properties", {}) == {}, d
assert call("HEAD", "/namespaces/t")[0] == 204
assert call("HEAD", "/namespaces/nope", token=admin)[0] == 404
error(*call("GET", "/namespaces/nope", token=admin), 404, "NoSuchNamespaceException")
error(*call("GET", "/namespaces/nope"), 403, "ForbiddenException")  # not the token's
error(*call("GET", "/namespaces/a%1Fb"), 404, "NoSuchNamespaceException")
# ListTablesResponse
st, d = call("GET", "/namespaces/t/tables")
assert st == 200, (st, d)
strict(d, ["identifiers"], ["next-page-token"])
for i in d["identifiers"]:
    strict(i, ["namespace", "name"])
    namespace(i["namespace"])
assert d["identifiers"] == [{"namespace": ["t"], "name": "tab"}], d
# LoadTableResult
st, d = call("GET", "/namespaces/t/tables/tab")
assert st == 200, (st, d)
strict(d, ["metadata"], ["metadata-location", "config", "storage-credentials"])
loc = d["metadata-location"]
assert isinstance(loc, str) and loc.startswith("file:///") and loc.endswith(".metadata.json"), loc
assert all(isinstance(a, str) and isinstance(b, str) for a, b in d.get("config", {}).items())
m = d["metadata"]
for k in ("format-version", "table-uuid", "location", "last-updated-ms", "last-column-id",
          "schemas", "current-schema-id", "partition-specs", "default-spec-id",
          "last-partition-id", "sort-orders", "default-sort-order-id", "last-sequence-number"):
    assert k in m, ("TableMetadata lacks", k)
assert m["format-version"] == 2, m["format-version"]
assert m == json.load(open(loc[len("file://"):])), "metadata differs from metadata-location"
assert call("HEAD", "/namespaces/t/tables/tab")[0] == 204
assert call("HEAD", "/namespaces/t/tables/nope")[0] == 404
error(*call("GET", "/namespaces/t/tables/nope"), 404, "NoSuchTableException")
# tokens
error(*call("GET", "/namespaces/t/tables/tab", token=None), 401, "NotAuthorizedException")
error(*call("GET", "/namespaces/t/tables/tab", token="loams_0000000000000000_x"), 401,
      "NotAuthorizedException")
error(*call("GET", "/namespaces/t/tables/tab", token=other), 403, "ForbiddenException")
# writes are refused
for method, path, body in [("POST", "/namespaces", b'{"namespace":["x"]}'),
                           ("DELETE", "/namespaces/t", None),
                           ("POST", "/namespaces/t/tables", b'{"name":"u","schema":{}}'),
                           ("POST", "/namespaces/t/tables/tab", b'{"requirements":[],"updates":[]}'),
                           ("DELETE", "/namespaces/t/tables/tab", None),
                           ("POST", "/tables/rename", b'{}'),
                           ("POST", "/transactions/commit", b'{}')]:
    error(*call(method, path, body=body), 403, "ForbiddenException")
open(work + "/location", "w").write(loc)
print("catalog: config, namespaces, tables, loadTable, HEAD, errors and writes as the spec says")
PY
ok "the REST catalog's answers follow the spec's schemas; errors and refused writes in its shape"

# ---- an independent reader loads the table the catalog points at ----
loc=$(cat "$work/location")
meta=${loc#file://}
tab=$(dirname "$(dirname "$meta")")
hint=$(cat "$tab/metadata/version-hint.text")
cmp -s "$meta" "$tab/metadata/v$hint.metadata.json" ||
  die "metadata-location is not the table's current version v$hint"
iceberg_conformance "$tab" >"$work/conformance.txt" 2>&1 ||
  { tail -n 5 "$work/conformance.txt"; die "the table at metadata-location does not conform"; }
/usr/bin/python3 "$src/tests/integration/table-files.py" "$tab" >"$work/files.txt" 2>"$work/summary.txt" ||
  { tail -n 3 "$work/summary.txt"; die "python3-avro cannot follow the metadata"; }
loams_duckdb_node "$src/tests/integration/table-duckdb.mjs" "$work/files.txt" id >"$work/duck.jsonl" \
  2>"$work/duck.err" || { cat "$work/duck.err"; die "DuckDB cannot read the data files"; }
/usr/bin/python3 - "$work/duck.jsonl" <<'PY' || die "DuckDB does not read the 250 rows"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
got = sorted((r["id"], int(r["n"])) for r in rows)
assert got == sorted(("r%d" % i, i) for i in range(1, 251)), got[:5]
PY
ok "the table at metadata-location conforms; python3-avro and DuckDB read all 250 rows"
stop_node a
