#!/bin/bash
# cli-damaged.sh - every command that reads stored data fails loudly on data
# it cannot read: exit status 1 and a message that says what is damaged and
# where (object key, document, node, partition and offset, metastore key),
# never a silent exit 0 with partial or no output.  A stream feeds a
# collection (stored blocks uncompressed, so a document can be damaged), a
# table and a graph; then, each time from a pristine copy, one piece of
# stored data is damaged (tests/integration/damage.py for objects,
# store-poke for the metastore and the log) and each command that reads it
# is run:
#   collection dump, search (text, --json)   a stored document that does not
#                                            parse, its checksums intact
#   graph nodes, graph node ID (text, --json) node properties that do not
#                                            parse, checksums intact
#   table describe, scan (text, --json)      the metadata file, a data file
#   stream read                              a record of the log
#   links (text, --json), system.links       the stream's catalog entry; the
#                                            record at a link's applied offset
#   gc status (text, --json)                 gc/last_run; a GC key without
#                                            its time
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

poke="$build/tests/integration/store-poke"
damage() { /usr/bin/python3 "$src/tests/integration/damage.py" "$@" || die "damage.py $* failed"; }
[ -x "$poke" ] || die "$poke is not built"

# plugin_home is under the build tree: plugins in /tmp are refused.
mkdir -m 755 "$plugin_home/scripts"
cp "$src/lua/examples/graph_fanout.lua" "$plugin_home/scripts/"
chmod 644 "$plugin_home/scripts/graph_fanout.lua"
plugin_args+=(--plugin-dir "$plugin_home/scripts")

sql "CREATE STREAM d.s WITH (partitions = 2);
     CREATE LINK d.lc FROM STREAM d.s INTO COLLECTION d.c
       TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.subject') AS subject)
       WITH (compression = 'none', batch_interval = '100ms');
     CREATE LINK d.lt FROM STREAM d.s INTO TABLE d.t
       TRANSFORM (SELECT key AS id, json_get_str(value, '\$.subject') AS subject)
       WITH (batch_interval = '100ms');
     CREATE LINK d.lg FROM STREAM d.s INTO GRAPH d.g TRANSFORM LUA 'graph_fanout'
       WITH (batch_interval = '100ms');" >/dev/null || die "CREATE failed"
head -n 200 "$src/tests/fixtures/support-tickets.jsonl" |
  "$host" produce d.s --data-dir "$data" --key-field id >/dev/null || die "produce failed"
start_node a
wait_caught_up 60
stop_node a

# What the pristine data holds, to name in the messages.
first_doc=$("$host" collection dump d.c --data-dir "$data" "${plugin_args[@]}" | head -n 1)
pk=$(echo "$first_doc" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["_pk"])')
subject=$(echo "$first_doc" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["subject"])')
node=$("$host" graph d.g nodes --data-dir "$data" "${plugin_args[@]}" | head -n 1 |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
[ -n "$pk" ] && [ -n "$node" ] || die "the pristine data is not as expected"
objects="$data/objects"
split=$(cd "$objects" && ls d/c/splits/*.split)
segment=$(cd "$objects" && ls d/g/segments/*.seg)
parquet=$(cd "$objects" && ls d/t/data/*.parquet | head -n 1)
metadata=$("$poke" meta-get "$data" target/d/t |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["ref"])')
cp -a "$data" "$work/pristine"
restore() { rm -rf "$data" && cp -a "$work/pristine" "$data"; }

# expect_fail WHAT TEXT COMMAND...: exit status 1 and TEXT in the message.
expect_fail() {
  local what=$1 text=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq 1 ] || die "$what: exit status $rc, want 1 (stderr: $(head -c 300 "$work/err"))"
  grep -qF -- "$text" "$work/err" ||
    die "$what: the message does not say '$text': $(head -c 400 "$work/err")"
  ok "$what: exit 1, $(head -c 160 "$work/err")"
}
q() { "$host" "$@" --data-dir "$data" "${plugin_args[@]}"; }

# ---- collection: a stored document that does not parse ----
restore
damage split-doc "$objects/$split"
want="split $split: stored document 0 (_pk '$pk') is not a JSON object that parses"
expect_fail "collection dump" "$want" q collection dump d.c
expect_fail "search" "$want" q search d.c "$subject"
expect_fail "search --json" "$want" q search d.c "$subject" --json

# ---- graph: node properties that do not parse ----
restore
damage graph-props "$objects/$segment"
want="the properties of node '$node' are not a JSON object that parses"
expect_fail "graph nodes" "$want" q graph d.g nodes
expect_fail "graph node" "$want" q graph d.g node "$node"
expect_fail "graph node --json" "$want" q graph d.g node "$node" --json

# ---- table: the metadata file, a data file ----
restore
damage cut "$objects/$metadata"
expect_fail "table describe" "metadata '$metadata' is not JSON" q table describe d.t
expect_fail "table describe --json" "metadata '$metadata' is not JSON" q table describe d.t --json
restore
damage cut "$objects/$parquet"
expect_fail "table scan" "$parquet: not a Parquet file" q table scan d.t
expect_fail "table scan --json" "$parquet: not a Parquet file" q table scan d.t --json

# ---- the stream log: one record ----
restore
"$poke" log-damage "$data" d.s 1 5 || die "log-damage failed"
expect_fail "stream read" "the record at partition 1, offset 5 of stream id" \
  "$host" stream read d.s --partition 1 --data-dir "$data"

# ---- links: the stream's catalog entry; the record at an applied offset ----
restore
"$poke" meta-put "$data" stream/d/s '{"id": 1' || die "meta-put failed"
want="link d.lc: its stream d.s: the catalog entry stream/d/s is damaged"
expect_fail "links" "$want" "$host" links --data-dir "$data"
expect_fail "links --json" "$want" "$host" links --json --data-dir "$data"
expect_fail "SELECT * FROM system.links" "$want" sql "SELECT * FROM system.links"
restore
"$poke" log-damage "$data" d.s 1 5 || die "log-damage failed"
ptr=$("$poke" meta-get "$data" target/d/c | /usr/bin/python3 -c '
import json, sys
p = json.load(sys.stdin)
p["applied"]["1"] = 5
print(json.dumps(p))')
"$poke" meta-put "$data" target/d/c "$ptr" || die "meta-put failed"
expect_fail "links (lag)" "link d.lc: reading its next record (partition 1, offset 5) of d.s" \
  "$host" links --data-dir "$data"

# ---- gc status: gc/last_run, a key without its time ----
restore
"$poke" meta-put "$data" gc/last_run yesterday || die "meta-put failed"
expect_fail "gc status" "gc/last_run holds 'yesterday', not a time in milliseconds" \
  "$host" gc status --data-dir "$data"
restore
"$poke" meta-put "$data" gc/orphan/soon/x '{}' || die "meta-put failed"
expect_fail "gc status --json" "gc/orphan/soon/x has no time in its key" \
  "$host" gc status --json --data-dir "$data"

# ---- and the pristine data reads ----
restore
q collection dump d.c >/dev/null || die "dump of the pristine collection failed"
"$host" links --data-dir "$data" >/dev/null || die "links on the pristine data failed"
"$host" gc status --data-dir "$data" >/dev/null || die "gc status on the pristine data failed"
ok "every command fails loudly on damaged data and reads the pristine data"
