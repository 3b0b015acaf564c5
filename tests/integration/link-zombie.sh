#!/bin/bash
# link-zombie.sh - two nodes; node a is frozen (SIGSTOP) in the middle of a
# chunk, past its lease TTL; node b takes the link over and catches up;
# after SIGCONT, a's work is rejected (stale epoch) and logged, and the
# collection holds every valid record exactly once (the full set of _pk
# and the content: subject, body) and the dead-letter stream every broken
# record exactly once, record by record by (partition, offset).  a is
# frozen at three points of the protocol:
#   link.after_target_write  before its dead letters: b dead-letters the
#                            chunk; a's append is rejected (the DLQ fence);
#   link.after_dead_letter   after them: b finds them and does not append
#                            them again; a's commit is rejected;
#   link.before_commit       likewise, with the commit prepared.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=600
points=(link.after_target_write link.after_dead_letter link.before_commit)
[ $# -gt 0 ] && points=("$@")

# Every 7th record is not JSON (the chunk a is frozen in has some).
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" |
  /usr/bin/python3 -c '
import json, sys
for nr, line in enumerate(sys.stdin, 1):
    r = json.loads(line)
    print(json.dumps({"k": r["id"], "v": "broken %d" % nr if nr % 7 == 0 else line.rstrip("\n")}))
' >"$work/keyed.jsonl"
bad=$((N / 7))
good=$((N - bad))
/usr/bin/python3 - "$work/keyed.jsonl" >"$work/expected.jsonl" <<'PY'
import json, sys
rows = []
for l in open(sys.argv[1]):
    kv = json.loads(l)
    if not kv["v"].startswith("broken"):
        rows.append(json.loads(kv["v"]))
for r in sorted(rows, key=lambda r: r["id"]):
    print(json.dumps({"_pk": r["id"], "subject": r["subject"], "body": r["body"]}, sort_keys=True))
PY

# freeze NAME: SIGSTOP the node, but not inside a metastore write: a
# process stopped there stalls every writer of the data dir until it
# continues (docs/OPERATIONS.md, "Limits"), and the node taking over would
# wait forever.  The freeze holds when another process can write; else the
# node continues and the freeze is tried once more.
freeze() {
  local try
  for try in 1 2; do
    kill -STOP "${pid[$1]}"
    if timeout 1 "$host" token create --namespace t --role read --data-dir "$data" \
      >/dev/null 2>&1; then
      return 0
    fi
    kill -CONT "${pid[$1]}"
    sleep 0.05
  done
  die "node $1 was stopped inside a metastore write twice"
}

zombie_at() { # zombie_at FAILPOINT PATTERN: freeze a at FAILPOINT; its log must show PATTERN
  local fp=$1 rejected=$2
  rm -rf "$data" "$work"/*.log
  sql "CREATE STREAM t.tickets WITH (partitions = 2);
       CREATE LINK t.l FROM STREAM t.tickets FORMAT json INTO COLLECTION t.c
         TRANSFORM (SELECT key AS _pk, subject, body)
         WITH (batch_bytes = '16KiB', batch_interval = '200ms', on_error = 'dead_letter');" \
    >/dev/null || die "$fp: CREATE failed"
  "$host" produce t.tickets --data-dir "$data" --key-field k --value-field v \
    <"$work/keyed.jsonl" >/dev/null 2>&1 || die "$fp: produce failed"

  # a sleeps 3 s at the point of its 2nd chunk: freeze it there
  start_node a "LOAMS_FAILPOINTS=$fp=sleep:3000@2"
  for i in $(seq 1 100); do
    grep -q "$fp: sleeping" "$work/a.log" 2>/dev/null && break
    sleep 0.1
  done
  grep -q "$fp: sleeping" "$work/a.log" || die "$fp: node a never got there"
  freeze a
  start_node b
  wait_caught_up 60
  grep -q "claimed" "$work/b.log" || die "$fp: node b never took the link over"
  kill -CONT "${pid[a]}"
  for i in $(seq 1 100); do
    grep -q -- "$rejected" "$work/a.log" && break
    sleep 0.1
  done
  grep -q -- "$rejected" "$work/a.log" || die "$fp: the zombie's work was not rejected and logged"
  ok "$fp: zombie rejected: $(grep -m1 -o -- "$rejected.*" "$work/a.log" | cut -c1-110)"
  stop_node a
  wait_caught_up 30
  stop_node b

  "$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl" ||
    die "$fp: collection dump failed"
  /usr/bin/python3 - "$work/dump.jsonl" >"$work/got.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in sorted(rows, key=lambda r: r["_pk"]):
    print(json.dumps({k: r.get(k) for k in ("_pk", "subject", "body")}, sort_keys=True))
PY
  if ! cmp -s "$work/expected.jsonl" "$work/got.jsonl"; then
    diff "$work/expected.jsonl" "$work/got.jsonl" | head -n 10
    die "$fp: the collection differs from the source ($(wc -l <"$work/got.jsonl") docs, want $good)"
  fi
  dl=$(dlq_exact t.tickets t.l_dlq t.l 'r["value"].startswith("broken")') ||
    die "$fp: the dead letters are not exactly the broken records"
  [ "$dl" = "$bad $bad" ] || die "$fp: $dl broken records / dead letters, want $bad $bad"
  "$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
got = (int(l["applied_records"]), int(l["dead_lettered_records"]))
assert got == (int(sys.argv[1]), int(sys.argv[2])), got' "$good" "$bad" ||
    die "$fp: the counters are not $good applied, $bad dead-lettered (counted once)"
  ok "$fp: $good documents and $bad dead letters exactly once after the zombie, counters exact"
}

for fp in "${points[@]}"; do
  case $fp in
  link.after_target_write) zombie_at "$fp" "dead-letter append of .* rejected" ;;
  *) zombie_at "$fp" "commit to t.c rejected: lease .* is stale" ;;
  esac
done
