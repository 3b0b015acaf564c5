#!/bin/bash
# retention-hold.sh - retention and the links that read a stream
# (docs/OPERATIONS.md, "Retention and links").  A stream with a retention
# of 1 s and retention_max_hold '12s' feeds three links: t.fast applies
# everything, t.slow is paused, t.bad fails on its first record.
#   - Past their retention, the records stay: the paused and the failed
#     link hold them (retention holds from the lowest offset any link is
#     owed, whatever its state).
#   - Past retention + retention_max_hold they go; retention's log names
#     the links and counts them (60); system.links shows them per partition
#     as lost_pending for t.slow and t.bad, none for t.fast.
#   - RESUME LINK t.slow: it records the gap (lost_records 60, gaps with
#     the partition and offsets) in a commit of its own, logs it, goes on
#     from the first offset left, and applies what comes next (40) exactly:
#     its collection holds those 40 only, and a restart counts nothing twice.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

fail_sql="SELECT key AS _pk, abs(-9223372036854775807 - 1) AS boom"
sql "CREATE STREAM t.s WITH (partitions = 2, retention = '1s', retention_max_hold = '12s');
     CREATE LINK t.fast FROM STREAM t.s INTO COLLECTION t.cf
       TRANSFORM (SELECT key AS _pk, subject) WITH (batch_interval = '200ms');
     CREATE LINK t.slow FROM STREAM t.s INTO COLLECTION t.cs
       TRANSFORM (SELECT key AS _pk, subject) WITH (batch_interval = '200ms');
     CREATE LINK t.bad FROM STREAM t.s INTO COLLECTION t.cb
       TRANSFORM ($fail_sql) WITH (batch_interval = '200ms', on_error = 'fail');
     PAUSE LINK t.slow;" >/dev/null || die "CREATE failed"
"$host" stream describe t.s --json --data-dir "$data" | grep -q '"retention_max_hold_ms":12000' ||
  die "stream describe does not show retention_max_hold"

head -n 100 "$src/tests/fixtures/support-tickets.jsonl" >"$work/all.jsonl"
head -n 60 "$work/all.jsonl" >"$work/a.jsonl"
tail -n 40 "$work/all.jsonl" >"$work/b.jsonl"
"$host" produce t.s --data-dir "$data" --key-field id <"$work/a.jsonl" >/dev/null ||
  die "produce failed"
produced=$(date +%s%N)
elapsed_ms() { echo $((($(date +%s%N) - produced) / 1000000)); }

links_py() { # links_py PYTHON: runs PYTHON with `l` = system.links by link name
  "$host" links --json --data-dir "$data" >"$work/links.json" || die "links --json failed"
  /usr/bin/python3 -c "
import json, sys
l = {x['link']: x for x in json.load(open('$work/links.json'))}
$1"
}
wait_for() { # wait_for SECONDS WHAT PYTHON-CONDITION
  local t=0
  until links_py "sys.exit(0 if ($3) else 1)" 2>/dev/null; do
    sleep 0.5
    t=$((t + 1))
    [ "$t" -lt $(($1 * 2)) ] || { cat "$work/links.json"; die "no $2 within $1 s"; }
  done
}
lows() { # the low offsets of t.s, "L0 L1"
  "$host" stream describe t.s --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
print(" ".join(str(p["low_offset"]) for p in json.load(sys.stdin)["partition_state"]))'
}
passes() { grep -c "retention task=retention .* pass done" "$work/a.log"; }

start_node a LOAMS_RETENTION_INTERVAL=1s
wait_for 30 "t.fast caught up, t.bad failed" \
  "int(l['t.fast']['applied_records']) == 60 and l['t.bad']['state'] == 'failed'"

# ---- held past the retention ----
# The records are due 1 s after they were produced; wait for two more
# passes after that, then they must all still be there.
sleep 1.2
p0=$(passes)
t=0
until [ "$(passes)" -ge $((p0 + 2)) ]; do
  sleep 0.3
  t=$((t + 1))
  [ "$t" -lt 40 ] || die "retention did not run twice within 12 s"
done
held=$(lows)
at=$(elapsed_ms)
[ "$at" -lt 12000 ] || die "the held check came $at ms after the records (the hold is 12 s)"
[ "$held" = "0 0" ] || die "retention deleted records the paused and failed links need: lows $held"
ok "held past their retention ($at ms after they were produced): lows $held"

# ---- past the cap ----
t=0
until [ "$(lows)" = "$(
  "$host" stream describe t.s --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
print(" ".join(str(p["high_offset"]) for p in json.load(sys.stdin)["partition_state"]))')" ]; do
  sleep 0.5
  t=$((t + 1))
  [ "$t" -lt 60 ] || die "retention did not delete the held records within 30 s past the cap"
done
[ "$(elapsed_ms)" -ge 12000 ] || die "the held records went $(elapsed_ms) ms after they came, before the 12 s cap"
lost_logged=$(grep "WARN  retention stream t.s partition" "$work/a.log" |
  sed -n 's/.*: deleted \([0-9]*\) records (offsets.*/\1/p' | awk '{s += $1} END {print s + 0}')
[ "$lost_logged" = 60 ] || die "retention logged $lost_logged records lost, want 60"
[ "$(grep -c "WARN  retention stream t.s partition .* that link(s) t.bad, t.slow had not applied" \
  "$work/a.log")" = 2 ] ||
  die "retention's warning does not name the links: $(grep 'had not applied' "$work/a.log" | head -n 1)"
links_py "
s, b, f = l['t.slow'], l['t.bad'], l['t.fast']
assert s['state'] == 'paused' and b['state'] == 'failed', (s['state'], b['state'])
for x in (s, b):
    assert int(x['lost_pending_records']) == 60, x
    assert sum(int(p['lost_pending']) for p in x['partitions']) == 60, x['partitions']
    assert int(x['lost_records']) == 0 and x['gaps'] == [], x
assert int(f['lost_pending_records']) == 0 and int(f['lost_records']) == 0, f
" || die "system.links does not show what retention deleted under the links"
"$host" links --data-dir "$data" | grep -q "deleted by retention before the link applied them" ||
  die "the links table does not show the deleted records"
ok "deleted past retention + retention_max_hold: 60 logged, 60 pending for t.slow and t.bad"

# ---- the paused link goes on, records the gap ----
sql "RESUME LINK t.slow" >/dev/null || die "RESUME failed"
wait_for 30 "t.slow records its gap" "int(l['t.slow']['lost_records']) == 60"
links_py "
s = l['t.slow']
assert s['state'] == 'running', s
assert int(s['lost_pending_records']) == 0 and int(s['applied_records']) == 0, s
parts = {p['partition']: p for p in s['partitions']}
assert sorted((g['partition'], g['first_offset'], g['last_offset'], g['count']) for g in s['gaps']) \
    == sorted((p, 0, parts[p]['high_water_mark'] - 1, parts[p]['high_water_mark'])
              for p in parts if parts[p]['high_water_mark'] > 0), (s['gaps'], parts)
" || die "t.slow's gap is not recorded with its partitions, offsets and count"
grep "link task=link/t/slow" "$work/a.log" | grep -q "were deleted by retention before the link applied them" ||
  die "t.slow's log does not say what it lost"
"$host" links --data-dir "$data" | grep -q "^    LOST 60 records: deleted by retention before the link applied them; newest gaps: partition" ||
  die "the links table does not show t.slow's loss: $("$host" links --data-dir "$data")"
ok "t.slow: lost_records 60, one gap per partition, logged"

"$host" produce t.s --data-dir "$data" --key-field id <"$work/b.jsonl" >/dev/null ||
  die "produce failed"
wait_for 30 "t.slow and t.fast apply the next records" \
  "int(l['t.slow']['applied_records']) == 40 and int(l['t.fast']['applied_records']) == 100"
stop_node a
start_node a LOAMS_RETENTION_INTERVAL=1s
sleep 2
stop_node a
links_py "
s, f = l['t.slow'], l['t.fast']
assert (int(s['applied_records']), int(s['lost_records'])) == (40, 60), s
assert (int(f['applied_records']), int(f['lost_records'])) == (100, 0), f
" || die "after a restart the counters moved"
"$host" collection dump t.cs --data-dir "$data" "${plugin_args[@]}" >"$work/cs.jsonl" ||
  die "dump t.cs failed"
/usr/bin/python3 - "$work/b.jsonl" "$work/cs.jsonl" <<'PY' || die "t.cs does not hold exactly the records after the gap"
import json, sys
want = sorted(json.loads(l)["id"] for l in open(sys.argv[1]))
got = sorted(json.loads(l)["_pk"] for l in open(sys.argv[2]))
assert got == want, (len(got), len(want))
PY
ok "t.slow goes on after the gap: 40 applied, 60 lost, counted once across a restart"
