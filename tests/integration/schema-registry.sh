#!/bin/sh
# schema-registry.sh - the schema registry through SQL and the CLI:
# CREATE SCHEMA, ALTER SCHEMA ... ADD VERSION (compatible evolutions kept,
# incompatible ones refused naming the field and the rule, at the
# schema's position), ALTER SCHEMA ... SET, SHOW SCHEMAS, DROP SCHEMA, and
# `loams-host schema list|show|register [--json]`; ids are global and one
# schema keeps its id across subjects.
set -eu
host="${top_builddir:?}/core/loams-host"
d=$(mktemp -d /tmp/schema-registry.XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
sql() { "$host" sql --data-dir "$d/data" "$@"; }

v1='{"type":"record","name":"User","fields":[{"name":"id","type":"long"}]}'
v2='{"type":"record","name":"User","fields":[{"name":"id","type":"long"},{"name":"email","type":"string","default":""}]}'
bad='{"type":"record","name":"User","fields":[{"name":"id","type":"long"},{"name":"age","type":"int"}]}'

"$host" init --data-dir "$d/data" >/dev/null
sql "CREATE SCHEMA shop.users FORMAT AVRO AS \$\$ $v1 \$\$" >"$d/out" || fail "CREATE SCHEMA"
grep -qx 'created schema subject shop.users: version 1, id 1' "$d/out" || fail "create output: $(cat "$d/out")"
sql "ALTER SCHEMA shop.users ADD VERSION \$\$$v2\$\$" >"$d/out" || fail "compatible version refused"
grep -qx 'added a version to schema subject shop.users: version 2, id 2' "$d/out" || fail "add output"
# BACKWARD (the default) refuses a field without a default, at the schema
if sql "ALTER SCHEMA shop.users
  ADD VERSION \$\$$bad\$\$" 2>"$d/err"; then
  fail "an incompatible version was accepted"
fi
grep -q "line 2, column 17: ALTER SCHEMA: field 'age' added without a default breaks BACKWARD: readers of version 3 cannot read data written with version 2" "$d/err" ||
  fail "refusal: $(cat "$d/err")"
grep -q '^  *\^$' "$d/err" || fail "no caret"
# FORWARD: the same change is fine, removing a field without default is not
sql "ALTER SCHEMA shop.users SET (compatibility = 'FORWARD')" >/dev/null || fail "SET"
sql "ALTER SCHEMA shop.users ADD VERSION '$bad'" >/dev/null || fail "FORWARD refused an added field"
v5='{"type":"record","name":"User","fields":[{"name":"id","type":"long"},{"name":"email","type":"string","default":"none"}]}'
if sql "ALTER SCHEMA shop.users ADD VERSION '$v5'" 2>"$d/err"; then
  fail "FORWARD accepted removing 'age'"
fi
grep -q "field 'age' removed but it has no default breaks FORWARD: readers of version 3 cannot read data written with version 4" "$d/err" ||
  fail "FORWARD refusal: $(cat "$d/err")"
# the same schema in another subject: the same id
sql "CREATE SCHEMA shop.copy FORMAT AVRO WITH (compatibility = 'NONE') AS '$v1'" >"$d/out" ||
  fail "second subject"
grep -qx 'created schema subject shop.copy: version 1, id 1' "$d/out" || fail "id not shared: $(cat "$d/out")"
# options and formats are checked
if sql "CREATE SCHEMA shop.x FORMAT AVRO WITH (compat = 'FULL') AS '\"int\"'" 2>"$d/err"; then
  fail "unknown option accepted"
fi
grep -q "unknown option 'compat' for CREATE SCHEMA" "$d/err" || fail "option msg"
if sql "CREATE SCHEMA shop.x FORMAT XML AS '<a/>'" 2>"$d/err"; then fail "XML accepted"; fi
grep -q "unknown schema format 'xml'" "$d/err" || fail "format msg"
if sql "CREATE SCHEMA shop.x FORMAT AVRO AS '{\"type\":\"record\",\"name\":\"R\"}'" 2>"$d/err"; then
  fail "a record without fields was accepted"
fi
grep -q "not a valid Avro schema: record 'R' needs \"fields\"" "$d/err" || fail "invalid msg: $(cat "$d/err")"

sql --json "SHOW SCHEMAS" >"$d/show.json" || fail "SHOW SCHEMAS"
/usr/bin/python3 - "$d/show.json" <<'PY' || fail "SHOW SCHEMAS rows"
import json, sys
rows = {r["subject"]: r for r in json.load(open(sys.argv[1]))}
assert sorted(rows) == ["shop.copy", "shop.users"], rows
u = rows["shop.users"]
assert u["format"] == "AVRO" and u["compatibility"] == "FORWARD", u
assert [(v["version"], v["id"]) for v in u["versions"]] == [(1, 1), (2, 2), (3, 3)], u
assert rows["shop.copy"]["compatibility"] == "NONE"
PY

# the CLI
"$host" schema list --data-dir "$d/data" >"$d/out" || fail "schema list"
grep -q '^shop.users  *AVRO  *FORWARD  *3  *v3 id 3$' "$d/out" || fail "list: $(cat "$d/out")"
"$host" schema show shop.users --version 2 --json --data-dir "$d/data" >"$d/out" || fail "show"
/usr/bin/python3 - "$d/out" "$v2" <<'PY' || fail "show --json"
import json, sys
got = json.load(open(sys.argv[1]))
assert got["subject"] == "shop.users" and got["version"] == 2 and got["id"] == 2, got
assert json.loads(got["schema"]) == json.loads(sys.argv[2]), got
PY
"$host" schema show --id 3 --data-dir "$d/data" | grep -q '"name":"age"' || fail "show --id"
printf '%s' "$v1" >"$d/v1.avsc"
"$host" schema register shop.fresh --compatibility full --file "$d/v1.avsc" --json \
  --data-dir "$d/data" >"$d/out" || fail "register"
grep -qx '{"subject":"shop.fresh","version":1,"id":1,"existed":false}' "$d/out" || fail "register out: $(cat "$d/out")"
printf '%s' "$v1" | "$host" schema register shop.fresh --data-dir "$d/data" >"$d/out" ||
  fail "register again"
grep -qx 'kept existing schema subject shop.fresh: version 1, id 1' "$d/out" || fail "again: $(cat "$d/out")"
# FULL: a field with a default goes both ways; one without does not
printf '%s' "$v2" | "$host" schema register shop.fresh --data-dir "$d/data" >"$d/out" ||
  fail "FULL refused a field with a default"
grep -qx 'registered in schema subject shop.fresh: version 2, id 2' "$d/out" || fail "v2: $(cat "$d/out")"
if printf '%s' "$bad" | "$host" schema register shop.fresh --data-dir "$d/data" 2>"$d/err"; then
  fail "FULL accepted a field without a default"
fi
grep -q "loams-host schema register: field 'age' added without a default breaks FULL: readers of version 3 cannot read data written with version 2" "$d/err" ||
  fail "FULL refusal: $(cat "$d/err")"
if "$host" schema show shop.nope --data-dir "$d/data" 2>"$d/err"; then fail "show of a missing subject"; fi
grep -q "schema subject shop.nope does not exist" "$d/err" || fail "missing msg"

sql "DROP SCHEMA shop.copy" >"$d/out" || fail "DROP SCHEMA"
grep -qx 'dropped schema subject shop.copy' "$d/out" || fail "drop out"
if sql "DROP SCHEMA shop.copy" 2>"$d/err"; then fail "second DROP succeeded"; fi
sql "DROP SCHEMA IF EXISTS shop.copy" >/dev/null || fail "DROP IF EXISTS"
# the id of a dropped subject's schema stays readable
"$host" schema show --id 1 --data-dir "$d/data" >/dev/null || fail "id 1 gone with its subject"
echo "ok: schema registry DDL and CLI"
