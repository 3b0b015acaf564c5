#!/bin/bash
# target-plugin.sh - a third-party target plugin (tests/plugins/target-jsonl)
# built out of tree with nothing but `pkg-config loams-plugin` against a
# staged install, used by a link INTO jsonl ... USING target-jsonl, holds
# every source record exactly once after a crash at link.before_commit:
# the newest commit's manifest (system.links "commit") lists JSON-lines
# objects whose (partition, offset) are each source record once, with the
# record's values, while the crashed attempt's objects are in no manifest.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/plugin-stage.sh"

N=${LOAMS_TEST_RECORDS:-1200}
stage_install "$plugin_home/stage" || die "staging the install"
cp -R "$src/tests/plugins/target-jsonl" "$plugin_home/src"
chmod -R u+w "$plugin_home/src"
make -C "$plugin_home/src" >"$work/build.log" 2>&1 || { cat "$work/build.log"; die "plugin build"; }
grep -q -- "-I$plugin_home/stage/" "$work/build.log" || die "not compiled against the staged headers"
mkdir -m 0755 "$plugin_home/plugins"
make -C "$plugin_home/src" install PLUGINDIR="$plugin_home/plugins" >>"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; die "plugin install"; }
host=$stage_host
plugin_args=(--no-default-plugin-dirs --plugin-dir "$stage_plugindir" --plugin-dir "$plugin_home/plugins")

# CREATE LINK checks the plugin's kind and options.
sql "CREATE STREAM t.tickets WITH (partitions = 3)" >/dev/null || die "CREATE STREAM"
out=$(sql "CREATE LINK t.l FROM STREAM t.tickets INTO jsonl t.x USING decoder-json
  TRANSFORM (SELECT 1 AS one)" 2>&1) && die "a decoder was accepted as a target"
echo "$out" | grep -q "USING decoder-json: 'decoder-json' is a decoder plugin, not a target" ||
  die "wrong-kind message: $out"
echo "$out" | grep -q "^DETAIL: Targets loaded: .*target-jsonl" || die "wrong-kind detail: $out"
out=$(sql "CREATE LINK t.l FROM STREAM t.tickets INTO jsonl t.x USING jsonl
  TRANSFORM (SELECT 1 AS one) WITH (offset_fld = 'o')" 2>&1) && die "an unknown option was accepted"
echo "$out" | grep -q "unknown option 'offset_fld': it is neither a link option (.*) nor an option of the target plugin target-jsonl (partition_field, offset_field)" ||
  die "unknown WITH option: $out"
sql "CREATE LINK t.l FROM STREAM t.tickets FORMAT json INTO jsonl t.x USING jsonl
  TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, subject, priority)
  WITH (batch_bytes = '16KiB', batch_interval = '200ms', offset_field = 'off')" >/dev/null ||
  die "CREATE LINK ... USING jsonl"

head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" >"$work/input.jsonl"
"$host" produce t.tickets --data-dir "$data" --key-field id <"$work/input.jsonl" >/dev/null ||
  die "produce"
start_node a "LOAMS_FAILPOINTS=link.before_commit=crash@3"
wait_dead a 60
grep -q "failpoint.*link.before_commit: crashing" "$work/a.log" ||
  die "node a died, but not at link.before_commit"
start_node b
wait_caught_up 90
stop_node b

# The source records, read back from the log with their positions.
for p in 0 1 2; do
  "$host" stream read t.tickets --partition "$p" --json --data-dir "$data" || die "stream read"
done >"$work/source.jsonl"
"$host" links --json --data-dir "$data" >"$work/links.json" || die "links --json"
/usr/bin/python3 - "$work/source.jsonl" "$work/links.json" "$data/objects" "$N" <<'PY' ||
import json, os, sys
source, links, objects, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
want = {}
for line in open(source):
    r = json.loads(line)
    v = json.loads(r["value"])
    want[(r["partition"], r["offset"])] = {"id": v["id"], "subject": v["subject"],
                                           "priority": v.get("priority")}
assert len(want) == n, "%d source records, want %d" % (len(want), n)
link = json.load(open(links))[0]
assert link["target_kind"] == "jsonl" and link["target_plugin"] == "target-jsonl", link
assert link["applied_records"] == n, link
ref = link["commit"]
# Follow the manifest the pointer names; list every manifest it reaches.
manifest = open(os.path.join(objects, ref)).read().splitlines()
assert manifest[0] == "loams-jsonl 1", manifest[:2]
applied = {int(l.split()[1]): int(l.split()[2]) for l in manifest if l.startswith("applied ")}
hwm = {}
for p, o in want:
    hwm[p] = max(hwm.get(p, 0), o + 1)
assert applied == hwm, "applied %s, want %s" % (applied, hwm)
data = [l.split(" ", 1)[1] for l in manifest if l.startswith("object ")]
got = {}
for key in data:
    for line in open(os.path.join(objects, key)):
        r = json.loads(line)
        pos = (r.pop("_partition"), r.pop("off"))
        assert pos not in got, "record %s twice" % (pos,)
        got[pos] = r
missing = set(want) - set(got)
extra = set(got) - set(want)
assert not missing and not extra, "%d missing, %d extra" % (len(missing), len(extra))
for pos, r in want.items():
    g = {k: got[pos].get(k) for k in ("id", "subject", "priority")}
    assert g == r, "record %s: %s, want %s" % (pos, g, r)
# The crash left the attempt's objects behind, in no manifest (GC's to delete).
reachable = set(data)
chain, seen = ref, set()
while chain != "-":
    seen.add(chain)
    lines = open(os.path.join(objects, chain)).read().splitlines()
    chain = [l.split(" ", 1)[1] for l in lines if l.startswith("parent ")][0]
on_disk = set()
for d, _, files in os.walk(os.path.join(objects, "t", "x")):
    for f in files:
        on_disk.add(os.path.relpath(os.path.join(d, f), objects))
orphans = on_disk - reachable - seen
assert orphans, "no object of the crashed attempt is left: did the crash happen after prepare?"
print("ok: %d records exactly once in %d objects; %d commits in the chain; %d objects of "
      "the crashed attempt in no manifest" % (len(got), len(data), len(seen), len(orphans)))
PY
  die "the jsonl target does not hold every record exactly once"
ok "target-jsonl: built out of tree, INTO jsonl ... USING jsonl, exactly once after a crash at link.before_commit"
