#!/bin/bash
# link-graph-exactly-once.sh - the failpoint crash suite against a graph
# target fed by lua/examples/graph_fanout.lua: for every failpoint of the
# link protocol, produce support tickets (some not JSON, some without an id,
# some whose fan-out the graph refuses), crash a serve process there,
# produce the rest (the restarted run's chunks end elsewhere), restart, let
# the link catch up, and check that the graph's nodes and edges equal the
# set computed here from the source records exactly, that every bad record
# was dead-lettered once (record by record by partition and offset), and
# that node, neighbors, khop and path answers equal a straightforward
# computation over the records.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=${LOAMS_TEST_RECORDS:-400}
points=(link.after_read link.after_decode link.after_transform link.after_target_write
  link.after_dead_letter link.before_commit link.after_commit store.write)
[ $# -gt 0 ] && points=("$@")

# graph_fanout.lua, found as a named script in LOAMS_PLUGIN_PATH
mkdir -m 700 "$plugin_home/scripts"
cp "$src/lua/examples/graph_fanout.lua" "$plugin_home/scripts/"
export LOAMS_PLUGIN_PATH="$plugin_home/scripts"

# The source: the sample's tickets (string ids), keyed by customer so that
# each customer's versions are applied in file order.
# Every 97th line is not JSON, every 89th has no id (the script fails it),
# every 83rd has a tag so long that its node id is refused by the graph.
/usr/bin/python3 - "$src/tests/fixtures/support-tickets.jsonl" "$N" >"$work/keyed.jsonl" <<'PY'
import json, sys
n = int(sys.argv[2])
for i, line in enumerate(open(sys.argv[1])):
    if i >= n:
        break
    r = json.loads(line)
    k = "c%d" % r["customer"]["id"]
    no = i + 1
    if no % 97 == 0:
        print(json.dumps({"k": "bad-%d" % no, "v": '{"id": %d, broken' % no}))
        continue
    if no % 89 == 0:
        del r["id"]
    elif no % 83 == 0:
        r["tags"] = r["tags"] + ["x" * 1100]
    print(json.dumps({"k": k, "v": json.dumps(r)}))
PY

# What the graph must hold, computed from the records like graph_fanout.lua
# does: nodes {id, label, properties} and edges {src, type, dst}.
/usr/bin/python3 - "$work/keyed.jsonl" "$work" <<'PY'
import json, sys
nodes, edges, bad = {}, set(), 0
for line in open(sys.argv[1]):
    v = json.loads(line)["v"]
    try:
        t = json.loads(v)
    except ValueError:
        bad += 1
        continue
    if "id" not in t or any(len("tag:" + g) > 1024 for g in t.get("tags", [])):
        bad += 1
        continue
    ticket = "ticket:%s" % t["id"]
    rows = [(ticket, "Ticket", {k: t[k] for k in ("subject", "priority") if t.get(k) is not None})]
    c = t.get("customer")
    if c and c.get("id") is not None:
        cust = "customer:%d" % c["id"]
        rows.append((cust, "Customer", {k: c[k] for k in ("name", "tier") if c.get(k) is not None}))
        edges.add((cust, "OPENED", ticket))
    for g in dict.fromkeys(t.get("tags", [])):
        rows.append(("tag:" + g, "Tag", {"name": g}))
        edges.add((ticket, "TAGGED", "tag:" + g))
    for nid, label, props in rows:
        nodes[nid] = {"id": nid, "label": label, "properties": props}
w = sys.argv[2]
with open(w + "/expected-nodes.jsonl", "w") as f:
    for k in sorted(nodes):
        f.write(json.dumps(nodes[k], sort_keys=True) + "\n")
with open(w + "/expected-edges.jsonl", "w") as f:
    for s, ty, d in sorted(edges):
        f.write(json.dumps({"src": s, "type": ty, "dst": d}, sort_keys=True) + "\n")
open(w + "/bad", "w").write(str(bad))
PY
bad=$(cat "$work/bad")
good=$(($(wc -l <"$work/keyed.jsonl") - bad))
nodes_want=$(wc -l <"$work/expected-nodes.jsonl")
edges_want=$(wc -l <"$work/expected-edges.jsonl")

graph() { "$host" graph t.g --data-dir "$data" "${plugin_args[@]}" "$@"; }

# A bad record, as dlq_exact reads it: not JSON, no id, or a tag too long.
bad_record='not is_json(r["value"]) or "id" not in json.loads(r["value"]) or
  any(len("tag:" + g) > 1024 for g in json.loads(r["value"]).get("tags", []))'

normalize() { # normalize FILE: sorted canonical JSON lines (properties kept, no extras)
  /usr/bin/python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out = sorted(json.dumps(r, sort_keys=True) for r in rows)
print("\n".join(out))' "$1"
}

run_point() { # run_point FAILPOINT
  local fp=$1
  rm -rf "$data" "$work"/*.log
  sql "CREATE STREAM t.tickets WITH (partitions = 3);
       CREATE LINK t.l FROM STREAM t.tickets FORMAT json INTO GRAPH t.g
         TRANSFORM LUA 'graph_fanout'
         WITH (batch_bytes = '16KiB', batch_interval = '200ms', on_error = 'dead_letter');" \
    >/dev/null || die "$fp: CREATE failed"
  local half=$(($(wc -l <"$work/keyed.jsonl") * 2 / 3))
  head -n "$half" "$work/keyed.jsonl" |
    "$host" produce t.tickets --data-dir "$data" --key-field k --value-field v \
      >/dev/null 2>&1 || die "$fp: produce failed"
  start_node a "LOAMS_FAILPOINTS=$fp=crash@3"
  wait_dead a 60
  grep -q "failpoint.*$fp: crashing" "$work/a.log" || die "$fp: node a died, but not at $fp"
  tail -n +$((half + 1)) "$work/keyed.jsonl" |
    "$host" produce t.tickets --data-dir "$data" --key-field k --value-field v \
      >/dev/null 2>&1 || die "$fp: produce failed"
  start_node b
  wait_caught_up 90
  stop_node b
  "$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
a, d = int(l["applied_records"]), int(l["dead_lettered_records"])
assert (a, d) == (int(sys.argv[1]), int(sys.argv[2])), "counters %d/%d, want %s/%s" % (a, d, sys.argv[1], sys.argv[2])
' "$good" "$bad" || die "$fp: system.links counters are not exact"
  graph nodes >"$work/nodes.raw" || die "$fp: graph nodes failed"
  graph edges >"$work/edges.raw" || die "$fp: graph edges failed"
  normalize "$work/nodes.raw" >"$work/got-nodes.jsonl"
  /usr/bin/python3 -c '
import json, sys
for l in open(sys.argv[1]):
    if l.strip():
        r = json.loads(l)
        print(json.dumps({"src": r["src"], "type": r["type"], "dst": r["dst"]}, sort_keys=True))' \
    "$work/edges.raw" | sort >"$work/got-edges.jsonl"
  normalize "$work/expected-nodes.jsonl" >"$work/want-nodes.jsonl"
  sort "$work/expected-edges.jsonl" >"$work/want-edges.jsonl"
  if ! cmp -s "$work/want-nodes.jsonl" "$work/got-nodes.jsonl"; then
    diff "$work/want-nodes.jsonl" "$work/got-nodes.jsonl" | head -n 6
    die "$fp: nodes differ from the source ($(wc -l <"$work/got-nodes.jsonl"), want $nodes_want)"
  fi
  if ! cmp -s "$work/want-edges.jsonl" "$work/got-edges.jsonl"; then
    diff "$work/want-edges.jsonl" "$work/got-edges.jsonl" | head -n 6
    die "$fp: edges differ from the source ($(wc -l <"$work/got-edges.jsonl"), want $edges_want)"
  fi
  dl=$(dlq_exact t.tickets t.l_dlq t.l "$bad_record") ||
    die "$fp: the dead letters are not exactly the bad records"
  [ "$dl" = "$bad $bad" ] || die "$fp: $dl bad records / dead letters, want $bad $bad"
  "$host" stream read t.l_dlq --json --data-dir "$data" >"$work/dlq.jsonl" ||
    die "$fp: reading the DLQ failed"
  /usr/bin/python3 - "$work/dlq.jsonl" <<'PY' || die "$fp: dead letters do not say why"
import json, sys
errs = " ".join(json.loads(l)["headers"]["loams.error"] for l in open(sys.argv[1]))
assert "the ticket has no id" in errs and "longer than 1024 bytes" in errs, errs[:300]
PY
  ok "$fp: $nodes_want nodes and $edges_want edges exactly once, $bad dead letters exactly once"
}

for fp in "${points[@]}"; do
  run_point "$fp"
done

# Query answers against a computation over the source records (on the
# graph the last run left).
/usr/bin/python3 - "$work/expected-nodes.jsonl" "$work/expected-edges.jsonl" >"$work/queries" <<'PY'
import json, sys
edges = [json.loads(l) for l in open(sys.argv[2])]
custs = sorted({e["src"] for e in edges if e["type"] == "OPENED"})
tags = sorted({e["dst"] for e in edges if e["type"] == "TAGGED"})
tickets = sorted({e["dst"] for e in edges if e["type"] == "OPENED"})
for c in custs[:: max(1, len(custs) // 5)]:
    print("khop", c)
for t in tickets[:: max(1, len(tickets) // 5)]:
    print("neighbors", t)
    print("node", t)
for g in tags[:3]:
    print("neighbors", g)
for c in custs[:3]:
    for g in tags[:2]:
        print("path", c, g)
print("path", tags[0], custs[0])
PY
while read -r kind a b; do
  case $kind in
  khop) graph khop "$a" --depth 2 --limit 100000 --json ;;
  neighbors) graph neighbors "$a" --direction both --json ;;
  node) graph node "$a" --json ;;
  path) # exit status 1: no path (the answer says "found": false, checked below)
    graph path "$a" "$b" --max-depth 4 --json || [ $? -eq 1 ] ;;
  esac >"$work/answer.json" || die "graph $kind $a $b failed"
  /usr/bin/python3 - "$work/expected-nodes.jsonl" "$work/expected-edges.jsonl" "$work/answer.json" \
    "$kind" "$a" "${b:-}" <<'PY' || die "graph $kind $a ${b:-}: answer differs from the source"
import json, sys
from collections import deque
nodes = {json.loads(l)["id"]: json.loads(l) for l in open(sys.argv[1])}
edges = [json.loads(l) for l in open(sys.argv[2])]
ans = json.load(open(sys.argv[3]))
kind, a, b = sys.argv[4], sys.argv[5], sys.argv[6]
out = {}
for e in edges:
    out.setdefault(e["src"], []).append(e)
if kind == "node":
    assert ans["found"] and ans["node"] == nodes[a], (ans, nodes.get(a))
elif kind == "neighbors":
    # out-edges first, then in-edges, each by (type, neighbor); a self-loop is both
    want = sorted([(0, "out", e["type"], e["dst"]) for e in edges if e["src"] == a] +
                  [(1, "in", e["type"], e["src"]) for e in edges if e["dst"] == a])
    want = [w[1:] for w in want]
    got = [(e["direction"], e["type"], e["neighbor"]) for e in ans["edges"]]
    assert got == want and ans["count"] == len(want), (got, want)
else:
    depth, q = {a: 0}, deque([a])
    while q:
        x = q.popleft()
        for e in out.get(x, []):
            if e["dst"] not in depth:
                depth[e["dst"]] = depth[x] + 1
                q.append(e["dst"])
    if kind == "khop":
        want = sorted(((d, i) for i, d in depth.items() if 1 <= d <= 2))
        got = [(n["depth"], n["id"]) for n in ans["nodes"]]
        assert got == want and ans["count"] == len(want), (got[:5], want[:5])
    else:
        if b in depth and depth[b] <= 4:
            assert ans["found"] and ans["length"] == depth[b], (ans, depth[b])
            ids = ans["nodes"]
            assert ids[0] == a and ids[-1] == b
            es = {(e["src"], e["type"], e["dst"]) for e in edges}
            for x, y, e in zip(ids, ids[1:], ans["edges"]):
                assert (e["src"], e["dst"]) == (x, y) and (x, e["type"], y) in es, e
        else:
            assert not ans["found"], ans
PY
done <"$work/queries"
ok "$(wc -l <"$work/queries") node, neighbors, khop and path answers equal the source's"

# The text forms and their exit statuses.
t=$(head -n 1 "$work/expected-edges.jsonl" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["dst"])')
graph node "$t" | grep -q "^$t  Ticket  {" || die "graph node (text) did not print $t"
graph node no-such-node >/dev/null 2>"$work/err" && die "graph node of a missing id exited 0"
grep -q "node 'no-such-node' does not exist in t.g" "$work/err" || die "graph node: $(cat "$work/err")"
graph neighbors "$t" --direction in | grep -q -- "-OPENED-> $t\$" || die "graph neighbors (text)"
graph neighbors "$t" --type NOPE | grep -q "^0 edges (out) of $t" || die "graph neighbors --type"
graph path "$t" no-such-node >/dev/null 2>"$work/err" && die "graph path without a path exited 0"
grep -q "no path from '$t' to 'no-such-node' within 6 hops" "$work/err" || die "graph path: $(cat "$work/err")"
graph khop "$t" 2>"$work/err" && die "graph khop without --depth exited 0"
graph nodex "$t" 2>"$work/err" && die "graph with an unknown query exited 0"
grep -q "unknown query 'nodex'" "$work/err" || die "graph nodex: $(cat "$work/err")"
ok "text answers and exit statuses"

# Upserts and deletes through a link: an inline Lua script turns each record
# into a node or edge upsert or delete; all records share one key (one
# partition, so their order is the file's).  A node crashes after its third
# target write; after recovery the graph equals the state computed here.
/usr/bin/python3 - >"$work/ops.jsonl" <<'PY'
import json, random
rnd = random.Random(7)
for i in range(1500):
    a, b, t = "v%d" % rnd.randrange(30), "v%d" % rnd.randrange(30), rnd.choice("ABC")
    op = rnd.choice(["node", "node", "edge", "edge", "edge", "del_node", "del_edge"])
    r = {"op": op, "id": a, "label": "L" + t, "src": a, "dst": b, "type": t, "v": i}
    print(json.dumps({"k": "all", "v": json.dumps(r)}))
PY
/usr/bin/python3 - "$work/ops.jsonl" "$work" <<'PY'
import json, sys
nodes, edges = {}, {}
for line in open(sys.argv[1]):
    r = json.loads(json.loads(line)["v"])
    if r["op"] == "node":
        nodes[r["id"]] = {"id": r["id"], "label": r["label"], "properties": {"v": r["v"]}}
    elif r["op"] == "del_node":
        nodes.pop(r["id"], None)
    elif r["op"] == "edge":
        edges[(r["src"], r["type"], r["dst"])] = {"src": r["src"], "type": r["type"], "dst": r["dst"], "properties": {"v": r["v"]}}
    else:
        edges.pop((r["src"], r["type"], r["dst"]), None)
with open(sys.argv[2] + "/want-h.jsonl", "w") as f:
    for x in sorted(json.dumps(v, sort_keys=True) for v in list(nodes.values()) + list(edges.values())):
        f.write(x + "\n")
PY
sql "CREATE STREAM t.ops WITH (partitions = 2);
     CREATE LINK t.lh FROM STREAM t.ops INTO GRAPH t.h
       TRANSFORM LUA \$\$
         function transform(rec)
           local r = loams.json_decode(rec.value)
           if r.op == 'node' then return { _node = r.id, _label = r.label, v = r.v } end
           if r.op == 'edge' then return { _src = r.src, _type = r.type, _dst = r.dst, v = r.v } end
           if r.op == 'del_node' then return { _node = r.id, _deleted = true } end
           return { _src = r.src, _type = r.type, _dst = r.dst, _deleted = true }
         end
       \$\$
       WITH (batch_bytes = '8KiB', batch_interval = '100ms');" >/dev/null ||
  die "ops: CREATE failed"
"$host" produce t.ops --data-dir "$data" --key-field k --value-field v <"$work/ops.jsonl" \
  >/dev/null 2>&1 || die "ops: produce failed"
rm -f "$work"/*.log
start_node a "LOAMS_FAILPOINTS=link.after_target_write=crash@3"
wait_dead a 60
start_node b
wait_caught_up 90
stop_node b
"$host" graph t.h nodes --data-dir "$data" "${plugin_args[@]}" >"$work/h.raw" || die "ops: nodes failed"
"$host" graph t.h edges --data-dir "$data" "${plugin_args[@]}" >>"$work/h.raw" || die "ops: edges failed"
normalize "$work/h.raw" >"$work/got-h.jsonl"
if ! cmp -s "$work/want-h.jsonl" "$work/got-h.jsonl"; then
  diff "$work/want-h.jsonl" "$work/got-h.jsonl" | head -n 6
  die "ops: the graph differs from the upserts and deletes of the source"
fi
ok "upserts and deletes through a link: $(wc -l <"$work/want-h.jsonl") live nodes and edges after a crash"
