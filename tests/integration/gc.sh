#!/bin/bash
# gc.sh - GC deletes exactly the object-store files that no commit
# references (core/gc/gc.c, core/gc/write_journal.c): after nodes crash with
# files written but not committed (link.before_commit, store.write), a
# node that resumes the link and runs GC with no grace period leaves a
# collection whose files are exactly those of its newest manifest, every
# document there once; maintenance (maintenance_interval) merges splits
# and GC removes the replaced ones; a table's maintenance commit is a
# replace snapshot whose rows equal the source; a graph's compacts its
# segments into one.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=300
gc_json() { "$host" gc status --json --data-dir "$data"; }
gc_count() { # gc_count KIND
  gc_json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$1']['count'])"
}

sql "CREATE STREAM t.s WITH (partitions = 2);
     CREATE LINK t.l FROM STREAM t.s INTO COLLECTION t.c
       TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.body') AS body)
       WITH (batch_bytes = '2KiB', batch_interval = '100ms', maintenance_interval = '0s')" \
  >/dev/null || die "CREATE failed"
for i in $(seq 1 $N); do echo "{\"id\":\"k$i\",\"body\":\"record number $i of the gc test\"}"; done |
  "$host" produce t.s --data-dir "$data" --key-field id >/dev/null || die "produce failed"

# 1. Crashes with files written and not committed.
start_node a LOAMS_FAILPOINTS=link.before_commit=crash@3
wait_dead a 20
[ "$(gc_count intent)" -gt 0 ] || die "no write intents after a crash before the commit"
start_node b LOAMS_FAILPOINTS=store.write=crash@9
wait_dead b 20
intents=$(gc_count intent)
ok "two crashes left $intents write intents"

# 2. A node resumes the link; GC (no grace) turns the crashed runs' intents
# into orphans and deletes them, and deletes the superseded manifests.
start_node c LOAMS_GC_GRACE=0s LOAMS_GC_INTERVAL=300ms
wait_caught_up 30
t=0
while :; do
  j=$(gc_json)
  left=$(echo "$j" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["intent"]["count"]+d["orphan"]["count"]+d["obsolete"]["count"])')
  [ "$left" = 0 ] && break
  sleep 0.3
  t=$((t + 1))
  [ "$t" -lt 50 ] || die "GC records left after 15 s: $j"
done
grep -q "pass done: [1-9][0-9]* object(s) deleted" "$work/c.log" || die "GC deleted nothing"
ok "GC emptied its records"

# check_collection: the files of t/c are exactly the newest manifest and
# what it references, and the collection holds every record once.
check_collection() {
  /usr/bin/python3 - "$data/objects" "$1" <<'PY' || die "collection files: see above"
import json, os, sys
root, want_merged = sys.argv[1], sys.argv[2] == "merged"
base = os.path.join(root, "t", "c")
files = set()
for d, _, names in os.walk(base):
    for n in names:
        files.add(os.path.relpath(os.path.join(d, n), root))
manifests = sorted(f for f in files if "/manifest/" in f)
if len(manifests) != 1:
    sys.exit("expected one manifest after GC, found %s" % manifests)
m = json.load(open(os.path.join(root, manifests[0])))
refs = {manifests[0]}
for s in m["splits"]:
    refs.add(s["key"])
    if s.get("deletes"):
        refs.add(s["deletes"] if isinstance(s["deletes"], str) else s["deletes"]["key"])
if files != refs:
    sys.exit("files on the store %s != files the manifest references %s"
             % (sorted(files - refs), sorted(refs - files)))
if want_merged and len(m["splits"]) > 2:
    sys.exit("maintenance left %d splits" % len(m["splits"]))
print("ok: %d files, all referenced by %s" % (len(files), manifests[0]))
PY
  local docs
  docs=$("$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" | counts _pk)
  [ "$docs" = "$N $N" ] || die "collection holds '$docs' documents (all, distinct), want $N $N"
}
check_collection any
splits_before=$(ls "$data/objects/t/c/splits" | wc -l)
stop_node c

# 3. Maintenance: merges the splits in a commit of its own; GC deletes the
# splits it replaced.
sql "DROP LINK t.l;
     CREATE LINK t.l FROM STREAM t.s INTO COLLECTION t.c
       TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.body') AS body)
       WITH (batch_bytes = '2KiB', batch_interval = '100ms', maintenance_interval = '1s',
             resume = 'offsets')" \
  >/dev/null || die "re-CREATE failed"
# A maintenance that fails after writing its files (link.after_maintain =
# error) changes nothing, is tried again one interval later (not at every
# turn of the run), and its files become orphans.
start_node m LOAMS_FAILPOINTS=link.after_maintain=error LOAMS_GC_GRACE=0s LOAMS_GC_INTERVAL=300ms
sleep 3.5
stop_node m
fails=$(grep -c "maintenance of t.c failed" "$work/m.log")
[ "$fails" -ge 1 ] && [ "$fails" -le 5 ] ||
  die "a failing maintenance ran $fails times in 3.5 s at maintenance_interval 1s (want 1-5)"
grep -q "maintained t.c" "$work/m.log" && die "a failed maintenance was committed"
ok "a failed maintenance: $fails tries in 3.5 s, nothing committed"
start_node d LOAMS_GC_GRACE=0s LOAMS_GC_INTERVAL=300ms
wait_log d "maintained t.c" 15 "maintenance commit ($splits_before splits)"
sleep 1.5
check_collection merged
ok "maintenance merged $splits_before splits; GC deleted the replaced ones"
stop_node d

# 4. A table: maintenance rewrites the small files of many commits into a
# replace snapshot; the rows stay those of the source.
sql "CREATE STREAM t.ts WITH (partitions = 1);
     CREATE LINK t.tl FROM STREAM t.ts INTO TABLE t.tab
       TRANSFORM (SELECT key AS id, json_get_str(value, '\$.body') AS body)
       WITH (batch_bytes = '1KiB', batch_interval = '100ms', maintenance_interval = '2s')" \
  >/dev/null || die "CREATE table link failed"
for i in $(seq 1 $N); do echo "{\"id\":\"r$i\",\"body\":\"row $i\"}"; done |
  "$host" produce t.ts --data-dir "$data" --key-field id --batch 20 >/dev/null || die "produce"
start_node e LOAMS_GC_GRACE=0s LOAMS_GC_INTERVAL=300ms
wait_caught_up 30
wait_log e "maintained t.tab" 15 "table maintenance commit"
"$host" table describe t.tab --json --data-dir "$data" "${plugin_args[@]}" >"$work/describe.json" || die "describe"
grep -q '"replace"' "$work/describe.json" || die "no replace snapshot in: $(head -c 400 "$work/describe.json")"
rows=$("$host" table scan t.tab --limit 1000000 --data-dir "$data" "${plugin_args[@]}" | counts id)
[ "$rows" = "$N $N" ] || die "table holds '$rows' rows (all, distinct), want $N $N"
ok "table maintenance: replace snapshot, $N rows"
stop_node e

# 5. A graph: maintenance compacts the segments of many commits into one;
# GC leaves the newest manifest and its one segment; every node is there.
sql "CREATE STREAM t.gs WITH (partitions = 1);
     CREATE LINK t.gl FROM STREAM t.gs INTO GRAPH t.g
       TRANSFORM (SELECT CAST(key AS TEXT) AS _node, 'row' AS _label,
                         json_get_str(value, '\$.body') AS body)
       WITH (batch_bytes = '1KiB', batch_interval = '100ms', maintenance_interval = '1s')" \
  >/dev/null || die "CREATE graph link failed"
for i in $(seq 1 $N); do echo "{\"id\":\"n$i\",\"body\":\"node $i\"}"; done |
  "$host" produce t.gs --data-dir "$data" --key-field id --batch 20 >/dev/null || die "produce"
start_node f LOAMS_GC_GRACE=0s LOAMS_GC_INTERVAL=300ms
wait_caught_up 30
wait_log f "maintained t.g:" 15 "graph maintenance commit"
sleep 1.5
stop_node f
manifests=$(ls "$data/objects/t/g/manifest" | wc -l)
segments=$(ls "$data/objects/t/g/segments" | wc -l)
[ "$manifests" = 1 ] && [ "$segments" = 1 ] ||
  die "after compaction and GC the graph has $manifests manifests and $segments segments (want 1 and 1)"
nodes=$("$host" graph t.g nodes --data-dir "$data" "${plugin_args[@]}" | grep -c .)
[ "$nodes" = "$N" ] || die "the graph holds $nodes nodes, want $N"
ok "graph maintenance: one segment, $N nodes; GC deleted the compacted segments"
exit 0
