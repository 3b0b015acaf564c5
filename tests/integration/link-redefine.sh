#!/bin/bash
# link-redefine.sh - a link redefined while a node applies it: the node's
# run holds the old definition, and no commit of that run may land once
# the definition changed.
#
# The recipe of the report: `serve` runs throughout; DROP LINK + CREATE
# LINK of the same name, back to back, with a transform that adds a
# column; then more records.  Every record produced after the
# re-creation must carry the new column, every one before it must be in
# the collection exactly once.  Before incarnations the running task never
# noticed the new definition and committed every later record with the
# old transform.  The same with CREATE OR REPLACE LINK and ALTER LINK.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=2000
gen() { # gen FROM COUNT: records {"id","n","component"}
  /usr/bin/python3 -c '
import json, sys
a, n = int(sys.argv[1]), int(sys.argv[2])
for i in range(a, a + n):
    print(json.dumps({"id": "r%05d" % i, "n": i, "component": "c%d" % (i % 7)}))' "$1" "$2"
}
produce() { "$host" produce t.s --data-dir "$data" --key-field id >/dev/null 2>&1 || die "produce failed"; }
link_sql() { # link_sql VERB EXTRA_COLUMNS EXTRA_WITH
  echo "$1 t.l FROM STREAM t.s INTO COLLECTION t.c
    TRANSFORM (SELECT key AS _pk, json_get_int(value, '\$.n') AS n$2)
    WITH (batch_interval = '100ms'$3)"
}
# check FROM: the collection holds records 0..total-1 once each; those at
# FROM and after carry `component` (the new definition's), those before
# carry none (the old one's, committed before the change).
check() {
  "$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl" ||
    die "collection dump failed"
  /usr/bin/python3 - "$work/dump.jsonl" "$1" "$2" <<'PY' || die "$3: the collection is not exact"
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
start, total = int(sys.argv[2]), int(sys.argv[3])
by_pk = {}
for d in docs:
    by_pk.setdefault(d["_pk"], []).append(d)
dups = [k for k, v in by_pk.items() if len(v) > 1]
want = {"r%05d" % i for i in range(total)}
lost = sorted(want - set(by_pk))
old = sorted(k for k in want & set(by_pk) if int(k[1:]) >= start and "component" not in by_pk[k][0])
wrong = [k for k in want & set(by_pk) if by_pk[k][0].get("component") not in (None, "c%d" % (int(k[1:]) % 7))]
print("%d documents, %d duplicated, %d lost, %d after the change without the new column" % (
    len(docs), len(dups), len(lost), len(old)))
if dups or lost or old or wrong:
    print("duplicated %s lost %s old transform %s wrong %s" % (dups[:5], lost[:5], old[:5], wrong[:5]))
    sys.exit(1)
PY
}

sql "CREATE STREAM t.s WITH (partitions = 2); $(link_sql "CREATE LINK" "" "")" >/dev/null ||
  die "CREATE failed"
gen 0 500 | produce
start_node a
wait_caught_up 60
total=500

# 1. DROP + CREATE back to back, serve running: the new incarnation goes
# on from the target's offsets (resume = 'offsets').
sql "DROP LINK t.l; $(link_sql "CREATE LINK" \
  ", json_get_str(value, '\$.component') AS component" ", resume = 'offsets'")" >/dev/null ||
  die "DROP + CREATE failed"
gen $total $N | produce
start=$total
total=$((total + N))
wait_caught_up 60
r=$(check $start $total "DROP + CREATE") || { echo "$r"; die "DROP + CREATE: $r"; }
ok "DROP + CREATE under a running node: $r"

# 2. CREATE OR REPLACE (resume = 'offsets') back to the old transform and
# to the new one again: each change applies from where the target stands.
sql "$(link_sql "CREATE OR REPLACE LINK" "" ", resume = 'offsets'")" >/dev/null ||
  die "CREATE OR REPLACE failed"
gen $total 300 | produce
total=$((total + 300))
wait_caught_up 60
sql "$(link_sql "CREATE OR REPLACE LINK" \
  ", json_get_str(value, '\$.component') AS component" ", resume = 'offsets'")" >/dev/null ||
  die "CREATE OR REPLACE failed"
gen $total $N | produce
start=$total
total=$((total + N))
wait_caught_up 60
"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl"
r=$(check $start $total "CREATE OR REPLACE") || { echo "$r"; die "CREATE OR REPLACE: $r"; }
ok "CREATE OR REPLACE under a running node: $r"

# 3. ALTER LINK: the running node stops its run and the next one takes the
# new batch_interval (the log of the next run says so).
sql "ALTER LINK t.l SET (batch_interval = '150ms', on_error = 'skip')" >/dev/null ||
  die "ALTER LINK failed"
wait_log a "definition changed" 10 "stop of the run holding the old definition"
gen $total 200 | produce
total=$((total + 200))
wait_caught_up 60
"$host" links --json --data-dir "$data" >"$work/links.json" || die "links failed"
/usr/bin/python3 - "$work/links.json" $total <<'PY' || die "system.links after ALTER"
import json, sys
l = json.load(open(sys.argv[1]))[0]
assert l["definition_version"] == 4, l
assert l["applied_records"] == int(sys.argv[2]), l
PY
stop_node a
ok "ALTER LINK: the run stopped and the next one applied $total records in all"

# 4. A plain CREATE into a target that holds another link's commits must
# say what to do with them.
sql "DROP LINK t.l" >/dev/null || die "DROP failed"
if sql "$(link_sql "CREATE LINK" "" "")" >"$work/refused.txt" 2>&1; then
  die "CREATE LINK into a target with commits was not refused"
fi
grep -q "resume = 'offsets'" "$work/refused.txt" && grep -q "resume = 'start'" "$work/refused.txt" ||
  { cat "$work/refused.txt"; die "the refusal does not name both choices"; }
ok "a plain CREATE into a target holding commits is refused, naming resume = 'offsets' and 'start'"
