#!/bin/bash
# link-ranges.sh - a link that runs as two tasks (WITH (tasks = 2)), one per
# range of a 4-partition stream, into an Iceberg table and into a
# collection, served by two processes:
#   1. each range is a task of its own ("link/<ns>/<l>/0-1" and "2-3") and
#      the table's commits rebase on each other's (the log says so);
#   2. a node crashes at link.rebase_after_conflict, the next at
#      link.rebase_before_commit; of two nodes sharing the ranges one is
#      SIGKILLed while it applies and the other takes its ranges over;
#   3. afterwards the table and the collection hold every good record
#      exactly once, each link's dead-letter stream every broken one
#      exactly once (both ranges dead-letter into it), and system.links
#      counts each once;
#   4. ALTER LINK ... SET (tasks = 1) re-splits at a commit boundary: the
#      link goes on as one task, still exactly once.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=${LOAMS_TEST_RECORDS:-6000} # at least: more when the crashes take long
sql "CREATE STREAM r.s WITH (partitions = 4);
     CREATE LINK r.tl FROM STREAM r.s FORMAT json INTO TABLE r.tab
       TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, json_get_int(value, '\$.n') AS n)
       WITH (tasks = 2, batch_interval = '100ms', batch_bytes = '8KiB',
             on_error = 'dead_letter');
     CREATE LINK r.cl FROM STREAM r.s FORMAT json INTO COLLECTION r.c
       TRANSFORM (SELECT key AS _pk, json_get_int(value, '\$.n') AS n)
       WITH (tasks = 2, batch_interval = '100ms', batch_bytes = '8KiB',
             on_error = 'dead_letter')" >/dev/null ||
  die "CREATE"
out=$(sql "CREATE LINK r.bad FROM STREAM r.s FORMAT json INTO COLLECTION r.c2
       TRANSFORM (SELECT key AS _pk) WITH (tasks = 0)" 2>&1) && die "tasks = 0 accepted"
echo "$out" | grep -q "tasks: the number of tasks the link runs as, one per range of partitions: 1 to 1024, not '0'" ||
  die "tasks = 0: $out"

# produce_part FROM TO: records FROM..TO-1, keyed by id; one in 97 is
# broken JSON (dead-lettered by both links)
produce_part() {
  /usr/bin/python3 -c '
import json, sys
for i in range(int(sys.argv[1]), int(sys.argv[2])):
    k = "r%06d" % i
    v = "{broken " + k if i % 97 == 13 else json.dumps({"id": k, "n": i})
    print(json.dumps({"id": k, "v": v}))' "$1" "$2" |
    "$host" produce r.s --data-dir "$data" --key-field id --value-field v >/dev/null 2>&1 ||
    die "produce $1-$2"
}

# feed NAME: produces records (next from $next) in small parts while node
# NAME lives, until it has crashed or 3000 records went by
next=0
feed() {
  local stop=$((next + 3000)) t=0
  while kill -0 "${pid[$1]}" 2>/dev/null && [ "$next" -lt "$stop" ]; do
    produce_part "$next" $((next + 100))
    next=$((next + 100))
    sleep 0.2
  done
  wait_dead "$1" 60
}

# ---- 1, 2: crashes in the rebase path, then two nodes and a SIGKILL ----
# A node alone runs all four tasks: its two ranges of r.tl race.
start_node a LOAMS_FAILPOINTS=link.rebase_after_conflict=crash@1
feed a
grep -q "failpoint.*link.rebase_after_conflict: crashing" "$work/a.log" ||
  die "node a died, but not in the rebase: $(tail -3 "$work/a.log")"
start_node b LOAMS_FAILPOINTS=link.rebase_before_commit=crash@1
feed b
grep -q "failpoint.*link.rebase_before_commit: crashing" "$work/b.log" ||
  die "node b died, but not in the rebase: $(tail -3 "$work/b.log")"
# Two nodes share the ranges; c is SIGKILLed while it applies, d takes
# its ranges over.
start_node c
start_node d
produce_part "$next" $((next + 1000))
next=$((next + 1000))
sleep 1
kill -KILL "${pid[c]}"
wait "${pid[c]}" 2>/dev/null
unset "pid[c]"
[ "$next" -lt "$N" ] || N=$((next + 1000))
produce_part "$next" "$N"
wait_caught_up 90
for k in "0-1" "2-3"; do
  grep -q "task=link/r/tl/$k " "$work/d.log" || die "d never ran range $k of r.tl"
done
rebased=$(cat "$work"/*.log | grep -c "a sibling task committed .*: rebased on it")
[ "$rebased" -gt 0 ] || die "no commit was rebased on a sibling's"
ok "two range tasks per link on two nodes; crashes at both rebase failpoints and a SIGKILL; $rebased rebased commits"

# ---- 3: exactly once ----
check_exact() { # check_exact WHAT
  "$host" table scan r.tab --limit 100000000 --data-dir "$data" "${plugin_args[@]}" >"$work/scan.jsonl" ||
    die "$1: table scan"
  "$host" collection dump r.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl" ||
    die "$1: collection dump"
  "$host" links --json --data-dir "$data" >"$work/links.json" || die "$1: links"
  for l in tl cl; do
    "$host" stream read "r.${l}_dlq" --limit 100000000 --json --data-dir "$data" \
      >"$work/$l-dlq.jsonl" || die "$1: stream read r.${l}_dlq"
  done
  /usr/bin/python3 - "$work/scan.jsonl" "$work/dump.jsonl" "$work/links.json" "$N" \
    "$work/tl-dlq.jsonl" "$work/cl-dlq.jsonl" <<'PY' || die "$1: not exactly once"
import collections, json, sys
n = int(sys.argv[4])
want = {"r%06d" % i: i for i in range(n) if i % 97 != 13}
broken = sorted("r%06d" % i for i in range(n) if i % 97 == 13)
for path, l in ((sys.argv[5], "r.tl"), (sys.argv[6], "r.cl")):
    letters = [json.loads(x) for x in open(path) if x.strip()]
    keys = collections.Counter(x["key"] for x in letters)
    twice = [k for k, c in keys.items() if c > 1]
    assert not twice, "%s: dead letters twice: %s" % (l, twice[:3])
    assert sorted(keys) == broken, "%s: %d dead letters, want %d" % (l, len(keys), len(broken))
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ids = collections.Counter(r["id"] for r in rows)
dup = [k for k, c in ids.items() if c > 1]
assert not dup, "table: %d ids twice, e.g. %s" % (len(dup), dup[:3])
assert set(ids) == set(want), "table: %d ids, want %d" % (len(ids), len(want))
assert all(r["n"] == want[r["id"]] for r in rows), "table: a row's n differs"
docs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
assert sorted(d["_pk"] for d in docs) == sorted(want), "collection: %d docs, want %d" % (len(docs), len(want))
assert all(d["n"] == want[d["_pk"]] for d in docs), "collection: a document's n differs"
links = {l["link"]: l for l in json.load(open(sys.argv[3]))}
for l in ("r.tl", "r.cl"):
    assert int(links[l]["applied_records"]) == len(want), (l, links[l]["applied_records"])
    assert int(links[l]["dead_lettered_records"]) == len(broken), (l, links[l]["dead_lettered_records"])
print("table %d rows, collection %d documents, %d dead letters each" % (len(rows), len(docs), len(broken)))
PY
}
check_exact "after the crashes"
ok "the table and the collection hold each good record of $N once, both ranges' dead letters are in each DLQ once; system.links counts each once"

# ---- 4: ALTER LINK ... SET (tasks = 1) ----
sql "ALTER LINK r.tl SET (tasks = 1); ALTER LINK r.cl SET (tasks = 1)" >/dev/null || die "ALTER LINK"
produce_part "$N" $((N + 500))
N=$((N + 500))
wait_caught_up 60
stop_node d
grep -q "task=link/r/tl/0-3 " "$work/d.log" ||
  die "r.tl did not run as one task after ALTER"
check_exact "after ALTER LINK ... SET (tasks = 1)"
ok "ALTER LINK ... SET (tasks = 1): one task goes on from the ranges' offsets, exactly once"

