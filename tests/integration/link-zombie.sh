#!/bin/bash
# link-zombie.sh - two nodes; node a is frozen (SIGSTOP) just before a
# commit, past its lease TTL; node b takes the link over and catches up;
# after SIGCONT, a's commit is rejected (stale epoch) and logged, and the
# collection holds every record exactly once: the full set of _pk and the
# content (subject, body) equal the source's.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=600
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" >"$work/input.jsonl"
sql "CREATE STREAM t.tickets WITH (partitions = 2);
     CREATE LINK t.l FROM STREAM t.tickets INTO COLLECTION t.c
       TRANSFORM (SELECT key AS _pk, subject, body) WITH (batch_bytes = '16KiB', batch_interval = '200ms');" \
  >/dev/null || die "CREATE failed"
"$host" produce t.tickets --data-dir "$data" --key-field id <"$work/input.jsonl" >/dev/null 2>&1 ||
  die "produce failed"

# a sleeps 3 s before its 2nd commit: freeze it there
start_node a "LOAMS_FAILPOINTS=link.before_commit=sleep:3000@2"
for i in $(seq 1 100); do
  grep -q "link.before_commit: sleeping" "$work/a.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "link.before_commit: sleeping" "$work/a.log" || die "node a never reached its 2nd commit"
kill -STOP "${pid[a]}"
start_node b
wait_caught_up 60
grep -q "claimed" "$work/b.log" || die "node b never took the link over"
kill -CONT "${pid[a]}"
for i in $(seq 1 100); do
  grep -q "commit to t.c rejected: lease .* is stale" "$work/a.log" && break
  sleep 0.1
done
grep -q "commit to t.c rejected: lease .* is stale" "$work/a.log" ||
  die "the zombie's commit was not rejected and logged"
ok "zombie commit rejected: $(grep -m1 -o 'commit to t.c rejected.*' "$work/a.log" | cut -c1-120)"
stop_node a
wait_caught_up 30
stop_node b
/usr/bin/python3 - "$work/input.jsonl" >"$work/expected.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in sorted(rows, key=lambda r: r["id"]):
    print(json.dumps({"_pk": r["id"], "subject": r["subject"], "body": r["body"]}, sort_keys=True))
PY
"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl" ||
  die "collection dump failed"
/usr/bin/python3 - "$work/dump.jsonl" >"$work/got.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in sorted(rows, key=lambda r: r["_pk"]):
    print(json.dumps({k: r.get(k) for k in ("_pk", "subject", "body")}, sort_keys=True))
PY
if ! cmp -s "$work/expected.jsonl" "$work/got.jsonl"; then
  diff "$work/expected.jsonl" "$work/got.jsonl" | head -n 10
  die "the collection differs from the source ($(wc -l <"$work/got.jsonl") docs, want $N)"
fi
applied=$("$host" links --json --data-dir "$data" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["applied_records"])')
[ "$applied" = "$N" ] || die "applied_records is $applied, want $N (counted once)"
ok "collection exact after the zombie: $N documents equal to the source (_pk, subject, body), applied_records $applied"
