#!/bin/bash
# link-exactly-once.sh - for every failpoint of the link protocol: produce
# records (some invalid), crash a serve process there, produce the rest
# (so the restarted run reads chunks of other bounds than the crashed one:
# its first commit covers less than the crashed run read), restart, let
# the link catch up, and check that the collection holds every valid
# source record's output exactly once (full set of _pk and the content) and
# the dead-letter stream every invalid record exactly once, record by
# record by (partition, offset).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=${LOAMS_TEST_RECORDS:-1200}
points=(link.after_read link.after_decode link.after_transform link.after_target_write
  link.after_dead_letter link.before_commit link.after_commit store.write)
[ $# -gt 0 ] && points=("$@")

# The source: tickets with ids; every 97th line is not JSON.
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" |
  awk 'NR % 97 == 0 { print "{\"id\":\"BAD-" NR "\", broken"; next } { print }' >"$work/input.jsonl"
bad=$(grep -c '^{"id":"BAD-' "$work/input.jsonl")
good=$((N - bad))

# What the collection must hold: _pk, subject, body of every valid record.
/usr/bin/python3 - "$work/input.jsonl" >"$work/expected.jsonl" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    rows.append({"_pk": r["id"], "subject": r["subject"], "body": r["body"]})
for r in sorted(rows, key=lambda r: r["_pk"]):
    print(json.dumps(r, sort_keys=True))
PY

run_point() { # run_point FAILPOINT
  local fp=$1
  rm -rf "$data" "$work"/*.log
  sql "CREATE STREAM t.tickets WITH (partitions = 3);
       CREATE LINK t.l FROM STREAM t.tickets FORMAT json INTO COLLECTION t.c
         TRANSFORM (SELECT key AS _pk, subject, body)
         WITH (batch_bytes = '16KiB', batch_interval = '200ms', on_error = 'dead_letter');" \
    >/dev/null || die "$fp: CREATE failed"
  # the key of a broken line is its BAD-n id, parsed here because the line is not JSON
  /usr/bin/python3 - "$work/input.jsonl" >"$work/keyed.jsonl" <<'PY'
import json, re, sys
for line in open(sys.argv[1]):
    m = re.match(r'\{"id":"([^"]+)"', line)
    print(json.dumps({"k": m.group(1), "v": line.rstrip("\n")}))
PY
  head -n $((N * 2 / 3)) "$work/keyed.jsonl" |
    "$host" produce t.tickets --data-dir "$data" --key-field k --value-field v \
      >/dev/null 2>&1 || die "$fp: produce failed"
  start_node a "LOAMS_FAILPOINTS=$fp=crash@3"
  wait_dead a 60
  grep -q "failpoint.*$fp: crashing" "$work/a.log" || die "$fp: node a died, but not at $fp"
  tail -n +$((N * 2 / 3 + 1)) "$work/keyed.jsonl" |
    "$host" produce t.tickets --data-dir "$data" --key-field k --value-field v \
      >/dev/null 2>&1 || die "$fp: produce failed"
  start_node b
  wait_caught_up 90
  stop_node b
  # the counters of system.links move only with commits: exact too
  "$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
a, d = int(l["applied_records"]), int(l["dead_lettered_records"])
assert (a, d) == (int(sys.argv[1]), int(sys.argv[2])), "counters %d/%d, want %s/%s" % (a, d, sys.argv[1], sys.argv[2])
' "$good" "$bad" || die "$fp: system.links counters are not exact"
  "$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.raw" ||
    die "$fp: collection dump failed"
  /usr/bin/python3 - "$work/dump.raw" >"$work/got.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in sorted(rows, key=lambda r: r["_pk"]):
    print(json.dumps({k: r.get(k) for k in ("_pk", "subject", "body")}, sort_keys=True))
PY
  if ! cmp -s "$work/expected.jsonl" "$work/got.jsonl"; then
    diff "$work/expected.jsonl" "$work/got.jsonl" | head -n 10
    die "$fp: collection differs from the source ($(wc -l <"$work/got.jsonl") docs, want $good)"
  fi
  # dead letters: each broken record once, with its error
  dl=$(dlq_exact t.tickets t.l_dlq t.l 'not is_json(r["value"])') ||
    die "$fp: dead letters are not exactly the broken records"
  [ "$dl" = "$bad $bad" ] || die "$fp: $dl broken records / dead letters, want $bad"
  "$host" stream read t.l_dlq --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)["headers"]["loams.error"]
    assert "JSON" in e, e' || die "$fp: a dead letter does not say why its record failed"
  ok "$fp: $good documents exactly once, $bad dead letters exactly once"
}

for fp in "${points[@]}"; do
  run_point "$fp"
done
