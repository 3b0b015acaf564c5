#!/bin/bash
# link-pause-resume.sh - PAUSE LINK stops a running link: the node applying
# it stops, system.links says paused, and records produced while it is
# paused are not applied (its counters, its lag and the collection stay
# put).  RESUME LINK catches up from the applied offsets: the collection
# then holds every record's output exactly once (_pk, subject and body
# compared with the source) and applied_records counts each record once.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N1=200 N2=150
head -n $((N1 + N2)) "$src/tests/fixtures/support-tickets.jsonl" >"$work/all.jsonl"
head -n "$N1" "$work/all.jsonl" >"$work/first.jsonl"
tail -n "$N2" "$work/all.jsonl" >"$work/second.jsonl"

link_field() { # link_field FIELD: the link's FIELD in links --json
  "$host" links --json --data-dir "$data" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0][sys.argv[1]])' "$1"
}
docs() { "$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" | wc -l; }

sql "CREATE STREAM t.s WITH (partitions = 2);
     CREATE LINK t.l FROM STREAM t.s INTO COLLECTION t.c
       TRANSFORM (SELECT key AS _pk, subject, body) WITH (batch_interval = '100ms');" \
  >/dev/null || die "CREATE failed"
"$host" produce t.s --data-dir "$data" --key-field id <"$work/first.jsonl" >/dev/null 2>&1 ||
  die "produce failed"
start_node a
wait_caught_up 30
[ "$(link_field applied_records)" = "$N1" ] || die "before the pause: applied_records is not $N1"

out=$(sql "PAUSE LINK t.l") || die "PAUSE LINK failed"
echo "$out" | grep -q "paused" || die "PAUSE LINK said: $out"
for i in $(seq 1 50); do
  grep -q "link is paused: stopping" "$work/a.log" && break
  sleep 0.1
done
grep -q "link is paused: stopping" "$work/a.log" || die "the node did not stop the paused link"
[ "$(link_field state)" = paused ] || die "system.links does not say paused"
"$host" links --data-dir "$data" >"$work/links.txt" || die "links failed"
grep -Eq "^t\.l +paused +t\.c +$N1 " "$work/links.txt" ||
  { cat "$work/links.txt"; die "the links table does not show t.l paused with $N1 applied"; }

"$host" produce t.s --data-dir "$data" --key-field id <"$work/second.jsonl" >/dev/null 2>&1 ||
  die "produce while paused failed"
sleep 2 # 20 batch intervals, 2 definition re-reads: a running link would have applied them
[ "$(link_field applied_records)" = "$N1" ] || die "records were applied while the link was paused"
[ "$(link_field lag_records)" = "$N2" ] || die "a paused link's lag is $(link_field lag_records), want $N2"
[ "$(docs)" = "$N1" ] || die "the collection changed while the link was paused"
! grep -q "claimed" <(grep "link/t/l" "$work/a.log" | sed -n '2,$p') ||
  die "the node claimed the paused link again"
ok "paused: $N2 records produced, none applied (applied $N1, lag $N2)"

out=$(sql "RESUME LINK t.l") || die "RESUME LINK failed"
echo "$out" | grep -q "resumed" || die "RESUME LINK said: $out"
wait_caught_up 30
stop_node a
[ "$(link_field state)" = running ] || die "the resumed link is not running"
[ "$(link_field applied_records)" = $((N1 + N2)) ] ||
  die "after RESUME applied_records is $(link_field applied_records), want $((N1 + N2))"
/usr/bin/python3 - "$work/all.jsonl" >"$work/expected.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in sorted(rows, key=lambda r: r["id"]):
    print(json.dumps({"_pk": r["id"], "subject": r["subject"], "body": r["body"]}, sort_keys=True))
PY
"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" |
  /usr/bin/python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
for r in sorted(rows, key=lambda r: r["_pk"]):
    print(json.dumps({k: r.get(k) for k in ("_pk", "subject", "body")}, sort_keys=True))
' >"$work/got.jsonl"
cmp -s "$work/expected.jsonl" "$work/got.jsonl" ||
  { diff "$work/expected.jsonl" "$work/got.jsonl" | head; die "the collection differs from the source"; }
ok "resumed: $((N1 + N2)) documents exactly once, equal to the source"
