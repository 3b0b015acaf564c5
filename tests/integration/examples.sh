#!/bin/bash
# examples.sh - every shipped example runs against the shipped sample
# (tests/fixtures/support-tickets.jsonl, installed as samples/) and gives
# what it promises:
#   - each script of lua/examples/, through the CREATE LINK of its header;
#   - each block of docs/*.md and README.md marked <!-- example: NAME -->.
# Each runs in a fresh data dir: the stream support_tickets (4 partitions),
# the sample produced keyed by id, the example's statements, a node until
# every link has caught up; every link must be running with every record
# applied (none skipped or dead-lettered), and the targets' content (and
# the stream's records) go to tests/integration/examples/NAME.py, which
# checks them against the sample.  A script without a check, a check without
# an example, and a CREATE LINK block in the docs with neither marker
# (<!-- example: NAME --> or <!-- not run: WHY -->) fail the test, so a new
# example cannot be forgotten.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

top=$(cd "$src" && pwd)
sample="$top/tests/fixtures/support-tickets.jsonl"
checks="$top/tests/integration/examples"
total=$(wc -l <"$sample")

# The named scripts, in a plugin directory only their owner may write (and
# none above it: plugin_home is under the build tree, not in /tmp).
mkdir -m 755 "$plugin_home/scripts"
cp "$src"/lua/examples/*.lua "$plugin_home/scripts/" || die "no example scripts"
chmod 644 "$plugin_home"/scripts/*.lua
plugin_args+=(--plugin-dir "$plugin_home/scripts")

# The examples: NAME.sql and "NAME<TAB>where" lines in $work/examples.txt.
mkdir "$work/sql"
/usr/bin/python3 - "$src" "$work/sql" "$checks" >"$work/examples.txt" <<'PY' ||
import glob, os, re, sys
src, out, checks = sys.argv[1:4]
found, errors = {}, []

def add(name, where, text):
    if name in found:
        errors.append("%s: example %s is also at %s" % (where, name, found[name]))
    found[name] = where
    with open(os.path.join(out, name + ".sql"), "w") as f:
        f.write(text)

for path in sorted(glob.glob(os.path.join(src, "lua/examples/*.lua"))):
    name = os.path.basename(path)[:-4]
    rel = os.path.relpath(path, src)
    stmt, taking = [], False
    for line in open(path):
        if not line.startswith("--"):
            break
        text = line[2:].strip()
        if text.startswith("CREATE LINK"):
            taking = True
        if taking:
            stmt.append(text)
            if text.endswith(";"):
                break
    if not stmt or not stmt[-1].endswith(";") or ("'%s'" % name) not in " ".join(stmt):
        errors.append("%s: its header comment has no '-- CREATE LINK ... TRANSFORM LUA '%s';'"
                      % (rel, name))
        continue
    add(name, rel, "\n".join(stmt) + "\n")

docs = sorted(glob.glob(os.path.join(src, "docs/*.md"))) + [os.path.join(src, "README.md")]
for path in docs:
    rel = os.path.relpath(path, src)
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        block = "\n".join(lines[i + 1:j])
        k = i - 1
        while k >= 0 and lines[k].strip() == "":
            k -= 1
        marker = lines[k].strip() if k >= 0 else ""
        m = re.match(r"<!-- example: ([a-z0-9_]+) -->$", marker)
        if m:
            add(m.group(1), "%s:%d" % (rel, i + 1), block + "\n")
        elif "CREATE LINK" in block and not re.match(r"<!-- not run: .+ -->$", marker):
            errors.append("%s:%d: a block with CREATE LINK and neither <!-- example: NAME --> "
                          "nor <!-- not run: WHY --> before it" % (rel, i + 1))
        i = j + 1

have = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(checks, "*.py"))}
have -= {"sample", "check"}
for name in sorted(set(found) - have):
    errors.append("%s: example %s has no check tests/integration/examples/%s.py"
                  % (found[name], name, name))
for name in sorted(have - set(found)):
    errors.append("tests/integration/examples/%s.py checks an example that does not exist"
                  % name)
for e in errors:
    print("FAIL: " + e, file=sys.stderr)
for name in sorted(found):
    print("%s\t%s" % (name, found[name]))
sys.exit(1 if errors else 0)
PY
  die "the examples are not all runnable and checked (above)"
[ -s "$work/examples.txt" ] || die "no examples found"

dump_targets() { # dump_targets OUT.json: the stream, the targets of system.links
  "$host" links --json --data-dir "$data" >"$work/links.json" || die "links --json failed"
  /usr/bin/python3 - "$work/links.json" "$total" <<'PY' || die "a link did not apply every record"
import json, sys
for l in json.load(open(sys.argv[1])):
    assert l["state"] == "running", (l["link"], l["state"], l.get("error"))
    counts = tuple(int(l[k]) for k in ("applied_records", "skipped_records",
                                        "dead_lettered_records"))
    assert counts == (int(sys.argv[2]), 0, 0), (l["link"], "applied/skipped/dead-lettered", counts)
PY
  for p in 0 1 2 3; do
    "$host" stream read support_tickets --partition $p --from 0 --limit 100000 --json \
      --data-dir "$data" || die "stream read failed"
  done >"$work/records.jsonl"
  rm -rf "$work/dump" && mkdir "$work/dump"
  /usr/bin/python3 -c '
import json, sys
for l in json.load(open(sys.argv[1])):
    print(l["target"], l["target_kind"])' "$work/links.json" | sort -u >"$work/targets.txt"
  while read -r target kind; do
    case $kind in
    collection)
      "$host" collection dump "$target" --data-dir "$data" "${plugin_args[@]}" \
        >"$work/dump/$target.docs" || die "$target: collection dump failed" ;;
    graph)
      "$host" graph "$target" nodes --data-dir "$data" "${plugin_args[@]}" \
        >"$work/dump/$target.nodes" || die "$target: graph nodes failed"
      "$host" graph "$target" edges --data-dir "$data" "${plugin_args[@]}" \
        >"$work/dump/$target.edges" || die "$target: graph edges failed" ;;
    table)
      "$host" table scan "$target" --limit 1000000 --data-dir "$data" "${plugin_args[@]}" \
        >"$work/dump/$target.rows" || die "$target: table scan failed" ;;
    *) die "$target: unknown target kind $kind" ;;
    esac
  done <"$work/targets.txt"
  /usr/bin/python3 - "$work/links.json" "$work/records.jsonl" "$work/dump" "$1" "$total" <<'PY' ||
import glob, json, os, sys
links, records, dump, out, total = sys.argv[1:6]
targets = {}
for path in sorted(glob.glob(os.path.join(dump, "*"))):
    target, part = os.path.basename(path).rsplit(".", 1)
    t = targets.setdefault(target, {})
    t["kind"] = {"docs": "collection", "rows": "table"}.get(part, "graph")
    t[part] = [json.loads(l) for l in open(path) if l.strip()]
json.dump({"partitions": 4, "records": [json.loads(l) for l in open(records) if l.strip()],
           "targets": targets}, open(out, "w"))
PY
    die "the content of the targets could not be read"
}

n=0
while IFS=$'\t' read -r name where; do
  data="$work/$name"
  sql "CREATE STREAM support_tickets WITH (partitions = 4)" >/dev/null ||
    die "$name: CREATE STREAM failed"
  "$host" produce support_tickets --data-dir "$data" --key-field id <"$sample" >/dev/null ||
    die "$name: produce failed"
  out=$(sql -f "$work/sql/$name.sql" 2>&1) || die "$name ($where): the statements failed: $out"
  start_node "$name"
  wait_caught_up 60
  stop_node "$name"
  dump_targets "$work/$name.json"
  res=$(cd "$checks" && /usr/bin/python3 -B check.py "$name" "$sample" "$work/$name.json" 2>&1) ||
    die "$name ($where): $res"
  ok "$name ($where): $res"
  n=$((n + 1))
done <"$work/examples.txt"
ok "$n examples run against the $total sample tickets"
