#!/bin/bash
# link-graph-merge.sh - merge upserts and _replace_edges through a real
# link, crashed at every failpoint of the link protocol: package records
# (several versions each, keyed by package) go through an inline Lua script
# that emits, like a Debian package graph does, the package's node with its
# properties and _replace_edges = {'depends'}, a bare node row per
# dependency (so that edges never dangle) and a depends edge per
# dependency; some records are not JSON (dead-lettered).  After a crash and a restart the graph must equal the one
# computed here: every package keeps its properties however often it is
# someone's dependency, a property a version leaves out keeps its older
# value, one it lists under "drop" is gone (_unset), and each package's
# depends edges are exactly those of its last version.  Then the same
# source into a graph WITH (node_upsert = 'replace') shows the trap the
# default avoids, and graph node / path exit 1 with and without --json
# when nothing is found.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=${LOAMS_TEST_RECORDS:-400}
points=(link.after_read link.after_decode link.after_transform link.after_target_write
  link.after_dead_letter link.before_commit link.after_commit store.write)
[ $# -gt 0 ] && points=("$@")

/usr/bin/python3 - "$N" "$work" <<'PY'
import json, random, sys
n, w = int(sys.argv[1]), sys.argv[2]
rnd = random.Random(18)
pkgs = ["p%d" % i for i in range(60)]
with open(w + "/src.jsonl", "w") as f:
    for i in range(n):
        p = rnd.choice(pkgs)
        r = {"pkg": p, "version": i,
             "depends": sorted(rnd.sample([q for q in pkgs if q != p], rnd.randrange(0, 5)))}
        if rnd.random() < 0.6:
            r["section"] = rnd.choice(["libs", "devel", "net"])
        if rnd.random() < 0.1:
            r["drop"] = ["section"]
        v = json.dumps(r)
        if i % 37 == 36:  # not JSON: the script fails it, it is dead-lettered
            v = v[:-3]
        f.write(json.dumps({"k": p, "v": v}) + "\n")
# The graph the records make: merge semantics for nodes, the last
# version's depends for edges.
nodes, deps = {}, {}
for line in open(w + "/src.jsonl"):
    try:
        r = json.loads(json.loads(line)["v"])
    except ValueError:
        continue
    node = nodes.setdefault(r["pkg"], {"id": r["pkg"], "label": None, "properties": {}})
    node["label"] = "Package"
    for k in r.get("drop", []):
        node["properties"].pop(k, None)
    node["properties"]["version"] = r["version"]
    if "section" in r:
        node["properties"]["section"] = r["section"]
    for d in r["depends"]:
        nodes.setdefault(d, {"id": d, "label": None, "properties": {}})
    deps[r["pkg"]] = r["depends"]
with open(w + "/want.jsonl", "w") as f:
    rows = list(nodes.values()) + [{"src": s, "type": "depends", "dst": d}
                                   for s, ds in deps.items() for d in ds]
    for x in sorted(json.dumps(v, sort_keys=True) for v in rows):
        f.write(x + "\n")
# how many packages that are someone's dependency have properties
print(sum(1 for p in nodes if any(p in ds for ds in deps.values()) and nodes[p]["properties"]),
      file=open(w + "/deps-with-props", "w"))
PY

script='
function transform(rec)
  local r = loams.json_decode(rec.value)
  local rows = { { _node = r.pkg, _label = "Package", version = r.version,
                   section = r.section, _unset = r.drop,
                   _replace_edges = { "depends" } } }
  for _, d in ipairs(r.depends) do
    rows[#rows + 1] = { _node = d }
    rows[#rows + 1] = { _src = r.pkg, _type = "depends", _dst = d }
  end
  return rows
end'

normalize() { # normalize: sorted canonical JSON lines of stdin
  /usr/bin/python3 -c '
import json, sys
print("\n".join(sorted(json.dumps(json.loads(l), sort_keys=True) for l in sys.stdin if l.strip())))'
}

dump() { # dump GRAPH: its nodes and edges (src, type, dst), normalized
  {
    "$host" graph "$1" nodes --data-dir "$data" "${plugin_args[@]}" || die "$1: nodes failed"
    "$host" graph "$1" edges --data-dir "$data" "${plugin_args[@]}" |
      /usr/bin/python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    print(json.dumps({"src": r["src"], "type": r["type"], "dst": r["dst"]}))' ||
      die "$1: edges failed"
  } | normalize
}

run_point() { # run_point FAILPOINT
  local fp=$1
  rm -rf "$data" "$work"/*.log
  sql "CREATE STREAM t.pkgs WITH (partitions = 3);
       CREATE LINK t.l FROM STREAM t.pkgs INTO GRAPH t.g
         TRANSFORM LUA \$\$ $script \$\$
         WITH (batch_bytes = '4KiB', batch_interval = '100ms', on_error = 'dead_letter');" \
    >/dev/null ||
    die "$fp: CREATE failed"
  local half=$(($(wc -l <"$work/src.jsonl") / 2))
  head -n "$half" "$work/src.jsonl" |
    "$host" produce t.pkgs --data-dir "$data" --key-field k --value-field v \
      >/dev/null 2>&1 || die "$fp: produce failed"
  start_node a "LOAMS_FAILPOINTS=$fp=crash@3"
  wait_dead a 60
  grep -q "failpoint.*$fp: crashing" "$work/a.log" || die "$fp: node a died, but not at $fp"
  tail -n +$((half + 1)) "$work/src.jsonl" |
    "$host" produce t.pkgs --data-dir "$data" --key-field k --value-field v \
      >/dev/null 2>&1 || die "$fp: produce failed"
  start_node b
  wait_caught_up 90
  stop_node b
  dump t.g >"$work/got.jsonl"
  if ! cmp -s "$work/want.jsonl" "$work/got.jsonl"; then
    diff "$work/want.jsonl" "$work/got.jsonl" | head -n 8
    die "$fp: the graph differs from the merges and edge replacements of the source"
  fi
  ok "$fp: $(wc -l <"$work/want.jsonl") nodes and edges exactly as merged and replaced"
}

for fp in "${points[@]}"; do
  run_point "$fp"
done

# The same records with node_upsert = 'replace': a package that is also a
# dependency loses its properties to the bare rows (the trap merge avoids).
sql "CREATE LINK t.lr FROM STREAM t.pkgs INTO GRAPH t.r
       TRANSFORM LUA \$\$ $script \$\$
       WITH (node_upsert = 'replace', on_error = 'skip');" >/dev/null ||
  die "CREATE with node_upsert failed"
sql "CREATE LINK t.lx FROM STREAM t.pkgs INTO GRAPH t.x TRANSFORM LUA \$\$ $script \$\$
       WITH (node_upsert = 'upsert');" \
  >/dev/null 2>"$work/err" && die "CREATE LINK with node_upsert = 'upsert' succeeded"
grep -q "merge" "$work/err" || die "node_upsert = 'upsert': $(cat "$work/err")"
start_node c
wait_caught_up 90
stop_node c
bare=$(dump t.r | /usr/bin/python3 -c '
import json, sys
print(sum(1 for l in sys.stdin if "id" in json.loads(l) and not json.loads(l)["properties"]))')
deps_with_props=$(cat "$work/deps-with-props")
[ "$bare" -gt 0 ] && [ "$deps_with_props" -gt 0 ] ||
  die "replace: $bare nodes without properties, want some ($deps_with_props under merge keep theirs)"
ok "node_upsert = 'replace': $bare nodes lost their properties; merge kept $deps_with_props"

# Exit statuses: a lookup that finds nothing exits 1, text or JSON.
g() { "$host" graph t.g --data-dir "$data" "${plugin_args[@]}" "$@"; }
g node p0 --json >/dev/null || die "graph node p0 --json failed"
g node no-such --json >"$work/ans" && die "graph node of a missing id --json exited 0"
grep -q '"found":false' "$work/ans" || die "graph node --json printed $(cat "$work/ans")"
g node no-such >/dev/null 2>&1 && die "graph node of a missing id exited 0"
g path p0 no-such --json >"$work/ans" && die "graph path without a path --json exited 0"
grep -q '"found":false' "$work/ans" || die "graph path --json printed $(cat "$work/ans")"
g neighbors no-such --json >/dev/null || die "graph neighbors of a missing id --json exited non-zero"
ok "graph node and path exit 1 when nothing is found, with and without --json"
