#!/bin/bash
# link-redefine-failpoints.sh - a link's definition changes while its run
# stands at each failpoint of the commit protocol, and the table it writes
# stays exact: no record lost, none applied twice, and every record
# applied by the definition in force when its commit was made.
#
# For each way to change a definition - ALTER LINK, CREATE OR REPLACE LINK
# with resume = 'offsets' and with resume = 'start', DROP + CREATE LINK
# with each - and for each failpoint (link.after_read ... link.after_commit,
# link.after_maintain), one step:
#   1. a node starts with the failpoint set to wait for a file (the first
#      time it is reached), records are produced, the node's run reaches
#      the failpoint and is held there
#      (link.after_maintain: once their commit made two files to compact,
#      one maintenance_interval after the run started);
#   2. while it is held there: the applied offsets are read (what was
#      committed before the change), then the definition changes;
#   3. the file appears and the run goes on: none of its commits may land
#      any more; more
#      records are produced; the node catches up and stops;
#   4. the table (`table scan`) is checked record by record against the
#      source: a record at or past the offsets read in 2 is applied by the
#      new definition; before them, by the one that committed it, as found
#      by the earlier steps; after resume = 'start' every record by the new
#      one (the table is rebuilt).  applied + skipped records = the stream.
# After the rebuilds, GC (grace 0) leaves exactly the files of the table's
# current snapshot, and file-based readers still find it: the
# version-hint.text and v<N>.metadata.json the rebuilt table wrote again are
# kept, though they were under the table's prefix when the rebuild began.
#
# Each definition is a Lua transform that writes its tag; ALTER LINK cannot
# change the transform, so it alternates lua_instruction_limit instead: a
# "heavy" record fails (and is skipped) under the low limit and is applied
# under the high one.  Broken JSON is skipped by every definition.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

FAILPOINTS="link.after_read link.after_decode link.after_transform link.after_target_write
  link.after_dead_letter link.before_commit link.after_commit link.after_maintain"
# link-redefine-rebuild.sh runs the kinds that rebuild (in parallel with this one).
KINDS=${LOAMS_REDEFINE_KINDS:-"alter replace_offsets drop_create_offsets"}
LOW=100000 HIGH=10000000
seq_no=0

transform() { # transform TAG: the Lua transform writing TAG
  echo "TRANSFORM LUA \$\$
    local get = loams.json_get
    function transform(rec)
      if get(rec.value, '\$.heavy') then
        local x = 0
        for i = 1, 300000 do x = x + i end
      end
      return { id = rec.key, tag = '$1', n = get(rec.value, '\$.n') }
    end
  \$\$"
}
link_sql() { # link_sql VERB TAG LIMIT EXTRA_WITH
  echo "$1 t.l FROM STREAM t.s INTO TABLE t.tab $(transform "$2")
    WITH (batch_interval = '100ms', maintenance_interval = '1s', on_error = 'skip',
          lua_instruction_limit = $3$4)"
}
produce() { # produce COUNT: COUNT records; every 10th heavy, every 13th broken JSON
  local first=$seq_no
  seq_no=$((seq_no + $1))
  /usr/bin/python3 -c '
import json, sys
a, n = int(sys.argv[1]), int(sys.argv[2])
for i in range(a, a + n):
    k = "r%05d" % i
    if i % 13 == 5:
        print(json.dumps({"key": k, "value": "{broken " + k}))
    else:
        print(json.dumps({"key": k, "value": json.dumps({"n": i, "heavy": i % 10 == 3})}))' \
    "$first" "$1" >"$work/batch.jsonl"
  "$host" produce t.s --data-dir "$data" --key-field key --value-field value <"$work/batch.jsonl" >/dev/null 2>&1 ||
    die "produce failed"
}

# The source and what each record must be: expect.json maps a record's key
# to the definition that applied it, {"tag": T, "limit": L}.
expect_update() { # expect_update KIND OLD_TAG OLD_LIMIT NEW_TAG NEW_LIMIT APPLIED_JSON
  "$host" stream read t.s --limit 1000000000 --json --data-dir "$data" >"$work/src.jsonl" ||
    die "stream read failed"
  /usr/bin/python3 - "$work/src.jsonl" "$work/expect.json" "$@" <<'PY'
import json, os, sys
src, path, kind, otag, olim, ntag, nlim, applied = sys.argv[1:9]
applied = {int(p["partition"]): int(p["applied"]) for p in json.loads(applied)}
exp = json.load(open(path)) if os.path.exists(path) else {}
for r in map(json.loads, open(src)):
    k = r["key"]
    if kind.endswith("start") or r["offset"] >= applied.get(r["partition"], 0):
        exp[k] = {"tag": ntag, "limit": int(nlim)}
    elif k not in exp:
        exp[k] = {"tag": otag, "limit": int(olim)}
json.dump(exp, open(path, "w"))
PY
}
check_table() { # check_table LABEL
  "$host" table scan t.tab --limit 1000000000 --data-dir "$data" "${plugin_args[@]}" \
    >"$work/scan.jsonl" || die "$1: table scan failed"
  "$host" links --json --data-dir "$data" >"$work/links.json" || die "$1: links failed"
  /usr/bin/python3 - "$work/src.jsonl" "$work/expect.json" "$work/scan.jsonl" \
    "$work/links.json" "$HIGH" <<'PY' || die "$1: the table is not exact"
import json, sys
src = [json.loads(l) for l in open(sys.argv[1])]
exp = json.load(open(sys.argv[2]))
rows = [json.loads(l) for l in open(sys.argv[3])]
link = json.load(open(sys.argv[4]))[0]
high = int(sys.argv[5])
want = {}
for r in src:
    k = r["key"]
    try:
        v = json.loads(r["value"])
    except ValueError:
        continue  # broken: skipped by every definition
    e = exp[k]
    if v["heavy"] and e["limit"] != high:
        continue  # over the low instruction limit: skipped
    want[k] = e["tag"]
got = {}
for row in rows:
    got.setdefault(row["id"], []).append(row["tag"])
dup = sorted(k for k, v in got.items() if len(v) > 1)
lost = sorted(set(want) - set(got))
extra = sorted(set(got) - set(want))
wrong = sorted(k for k in set(want) & set(got) if got[k][0] != want[k])
counted = link["applied_records"] + link["skipped_records"]
print("%d rows: %d duplicated, %d lost, %d unexpected, %d by another definition; "
      "applied + skipped = %d of %d records" % (len(rows), len(dup), len(lost), len(extra),
                                                len(wrong), counted, len(src)))
if dup or lost or extra or wrong or counted != len(src):
    print("duplicated %s lost %s unexpected %s wrong %s" % (
        dup[:5], lost[:5], extra[:5], [(k, got[k], want[k]) for k in wrong[:5]]), file=sys.stderr)
    sys.exit(1)
PY
}

run_kind() { # run_kind KIND: a data dir of its own, one step per failpoint
  local kind=$1 tag=T0 limit=$HIGH step=0
  rm -rf "$data" "$work/expect.json"
  seq_no=0
  sql "CREATE STREAM t.s WITH (partitions = 2); $(link_sql "CREATE LINK" "$tag" "$limit" "")" \
    >/dev/null || die "$kind: CREATE failed"
  produce 40
  start_node "$kind-0"
  wait_caught_up 60
  stop_node "$kind-0"
  expect_update "$kind" "$tag" "$limit" "$tag" "$limit" "[]"
  check_table "$kind, first records" >/dev/null
  for fp in $FAILPOINTS; do
    step=$((step + 1))
    local node="$kind-$step" ntag=$tag nlimit=$limit stmt
    case $kind in
    alter)
      nlimit=$([ "$limit" = "$HIGH" ] && echo $LOW || echo $HIGH)
      stmt="ALTER LINK t.l SET (lua_instruction_limit = $nlimit)"
      ;;
    replace_*)
      ntag="T$step"
      stmt=$(link_sql "CREATE OR REPLACE LINK" "$ntag" "$limit" ", resume = '${kind#replace_}'")
      ;;
    drop_create_*)
      ntag="T$step"
      stmt="DROP LINK t.l; $(link_sql "CREATE LINK" "$ntag" "$limit" ", resume = '${kind#drop_create_}'")"
      ;;
    esac
    local go="$work/go-$node"
    start_node "$node" LOAMS_FAILPOINTS="$fp=wait:$go@1"
    produce 30
    wait_log "$node" "$fp: waiting for" 30 "$fp reached ($kind)"
    local applied
    applied=$("$host" links --json --data-dir "$data" |
      /usr/bin/python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)[0]["partitions"]))') ||
      die "$kind $fp: links failed"
    sql "$stmt" >/dev/null || die "$kind $fp: the change failed: $stmt"
    touch "$go"
    produce 20
    wait_caught_up 60
    stop_node "$node"
    # The run held there made no commit once it went on (at
    # link.after_commit: but the one it had made, logged after the point).
    local late
    late=$(awk -v fp="$fp: waiting for" '
      index($0, fp) { seen = 1; next }
      !seen && match($0, /epoch=[0-9]+/) { e = substr($0, RSTART, RLENGTH) }
      seen && index($0, e " committed") { n++ }
      seen && index($0, e " maintained") { n++ }
      END { print n + 0 }' "$work/$node.log")
    [ "$late" -le "$([ "$fp" = link.after_commit ] && echo 1 || echo 0)" ] ||
      die "$kind $fp: the run holding the old definition committed $late times after the change"
    expect_update "$kind" "$tag" "$limit" "$ntag" "$nlimit" "$applied"
    local r
    r=$(check_table "$kind $fp") || { echo "$r"; die "$kind $fp: $r"; }
    ok "$kind at $fp: $r"
    tag=$ntag
    limit=$nlimit
  done
  case $kind in *_start) gc_check "$kind" ;; esac
}

gc_check() { # gc_check KIND: after rebuilds, GC leaves the current snapshot's files
  start_node "$1-gc" LOAMS_GC_GRACE=0s LOAMS_GC_INTERVAL=300ms
  local t=0 left
  while :; do
    "$host" table describe t.tab --json --data-dir "$data" "${plugin_args[@]}" \
      >"$work/describe.json" || die "$1: table describe failed"
    left=$(/usr/bin/python3 - "$work/describe.json" "$data/objects/t/tab/data" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
live = {f["path"].rsplit("/", 1)[1] for f in d["files"]}
disk = set(os.listdir(sys.argv[2]))
print(len(disk - live) if live <= disk else -1)
PY
)
    [ "$left" = 0 ] && break
    [ "$left" != -1 ] || die "$1: a data file of the current snapshot is gone"
    sleep 0.5
    t=$((t + 1))
    [ "$t" -lt 60 ] || die "$1: $left data files of replaced snapshots are still there after 30 s"
  done
  "$host" gc status --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
g = json.load(sys.stdin)
assert g["replaced"]["count"] == 0 and g["obsolete"]["count"] == 0, g' ||
    die "$1: GC records are left"
  stop_node "$1-gc"
  local hint
  hint=$(cat "$data/objects/t/tab/metadata/version-hint.text") || die "$1: version-hint.text is gone"
  [ -f "$data/objects/t/tab/metadata/v$hint.metadata.json" ] ||
    die "$1: version-hint.text names v$hint.metadata.json, which GC deleted"
  local r
  r=$(check_table "$1 after GC") || { echo "$r"; die "$1 after GC: $r"; }
  ok "$1: GC kept only the current snapshot's data files and v$hint.metadata.json; $r"
}

for kind in $KINDS; do
  run_kind "$kind"
done
