#!/bin/bash
# link-memory-budget.sh - a task that needs more memory than its class's
# budget fails cleanly and is retried; the node keeps serving other links;
# raising the budget lets it catch up exactly once.
#
# Two links on one node with memory_budget_link = 8MiB (LOAMS_MEMORY_BUDGET_LINK):
# t.ls applies ordinary tickets; t.lb's stream holds one ticket with a
# 6 MiB body among ordinary ones, and applying that record takes more than
# 8 MiB through the host (its input and output batches, the document the
# target builds).  Then:
#   - t.lb's run fails with the message that names the budget, its value and
#     the task; the worker retries it with backoff; system.links shows the
#     message as t.lb's error while the link stays running, and `links`
#     shows each link's peak memory;
#   - the node stays up and t.ls applies records produced meanwhile;
#   - restarted with memory_budget_link = 256MiB the node applies t.lb to the
#     end: every ticket exactly once (the big one whole), no error left.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

tickets="$src/tests/fixtures/support-tickets.jsonl"
head -n 100 "$tickets" >"$work/small1.jsonl"
sed -n '101,200p' "$tickets" >"$work/small2.jsonl"
/usr/bin/python3 - "$tickets" >"$work/big.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])][200:300]
rows[50]["body"] = "printer jam " * (6 * 1024 * 1024 // 12)
for r in rows:
    print(json.dumps(r))
PY

link_row() { # link_row LINK FIELD: FIELD of LINK's row in links --json
  "$host" links --json --data-dir "$data" |
    /usr/bin/python3 -c '
import json, sys
row = [l for l in json.load(sys.stdin) if l["link"] == sys.argv[1]][0]
v = row[sys.argv[2]]
print("" if v is None else v)' "$1" "$2"
}

wait_field() { # wait_field LINK FIELD PATTERN SECONDS WHAT
  local t=0
  until link_row "$1" "$2" | grep -q -- "$3"; do
    sleep 0.5
    t=$((t + 1))
    [ "$t" -lt $(($4 * 2)) ] || die "no $5 within $4 s ($1 $2: $(link_row "$1" "$2"))"
  done
}

sql "CREATE STREAM t.small;
     CREATE STREAM t.big;
     CREATE LINK t.ls FROM STREAM t.small INTO COLLECTION t.cs
       TRANSFORM (SELECT key AS _pk, subject, body) WITH (batch_interval = '100ms');
     CREATE LINK t.lb FROM STREAM t.big INTO COLLECTION t.cb
       TRANSFORM (SELECT key AS _pk, subject, body) WITH (batch_interval = '100ms');" \
  >/dev/null || die "CREATE failed"
"$host" produce t.small --data-dir "$data" --key-field id <"$work/small1.jsonl" >/dev/null 2>&1 ||
  die "produce t.small failed"
"$host" produce t.big --data-dir "$data" --key-field id <"$work/big.jsonl" >/dev/null 2>&1 ||
  die "produce t.big failed"

start_node a LOAMS_MEMORY_BUDGET_LINK=8MiB
want="task link/t/lb/0-0 would exceed the link apply memory budget (memory_budget_link = 8MiB): "
wait_field t.lb error "$want" 60 "budget error in system.links"
wait_field t.ls lag_records '^0$' 30 "catch-up of t.ls"
err=$(link_row t.lb error)
echo "$err" | grep -Eq "asked for [0-9.]+ [KM]iB more at [0-9.]+ [KM]iB in use; raise memory_budget_link or lower the link's batch_bytes$" ||
  die "the budget message does not say who asked and what to do: $err"
[ "$(link_row t.lb state)" = running ] || die "a budget failure must leave the link running"
[ "$(link_row t.lb applied_records)" = 0 ] || die "t.lb applied records past its budget"
ok "t.lb fails on its budget: $err"

# Retried with backoff, the node still up, the other link still served.
wait_log a "task=link/t/lb/0-0 epoch=2 failed after .*${want}.*retrying in" 30 "retry of t.lb"
grep -q "task=link/t/lb/0-0 epoch=1 failed after .*resource budget exceeded: ${want}.*retrying in [0-9]* ms; peak memory" \
  "$work/a.log" || die "the worker's failure line does not give the status, the message and the peak"
kill -0 "${pid[a]}" 2>/dev/null || die "the node went down"
"$host" produce t.small --data-dir "$data" --key-field id <"$work/small2.jsonl" >/dev/null 2>&1 ||
  die "produce t.small failed"
wait_field t.ls applied_records '^200$' 30 "t.ls applying new records while t.lb fails"
[ "$(link_row t.ls error)" = "" ] || die "t.ls shows an error: $(link_row t.ls error)"
peak=$(link_row t.ls memory_peak_bytes)
budget=$(link_row t.ls memory_budget_bytes)
[ "$budget" = 8388608 ] || die "t.ls: memory_budget_bytes is '$budget', want 8388608"
[ -n "$peak" ] && [ "$peak" -gt 0 ] && [ "$peak" -le 8388608 ] ||
  die "t.ls: memory_peak_bytes '$peak' is not within the budget"
"$host" links --data-dir "$data" >"$work/links.txt" || die "links failed"
grep -Eq "^    memory: peak [0-9.]+ [KM]iB of the run \(budget 8MiB\)$" "$work/links.txt" ||
  { cat "$work/links.txt"; die "the links table does not show the peak memory"; }
grep -q "^    error: ${want}" "$work/links.txt" ||
  { cat "$work/links.txt"; die "the links table does not show t.lb's error"; }
ok "node up, t.ls applied 200 (peak $peak bytes of 8 MiB) while t.lb failed"

stop_node a
start_node b LOAMS_MEMORY_BUDGET_LINK=256MiB
wait_field t.lb lag_records '^0$' 60 "catch-up of t.lb under 256 MiB"
wait_field t.lb applied_records '^100$' 10 "t.lb's counters"
[ "$(link_row t.lb error)" = "" ] || die "the budget error stayed after a commit: $(link_row t.lb error)"
peak=$(link_row t.lb memory_peak_bytes)
[ "$peak" -gt 8388608 ] && [ "$peak" -le 268435456 ] ||
  die "t.lb: memory_peak_bytes $peak is not between the two budgets"
grep -q "task=link/t/lb/0-0 epoch=[0-9]* committed .*peak memory [0-9.]* MiB)" "$work/b.log" ||
  die "the commit line does not give the peak memory"
stop_node b
grep -q "task=link/t/lb/0-0 epoch=[0-9]* run ends: .*; peak memory [0-9.]* MiB$" "$work/b.log" ||
  die "the run's end line does not give the peak memory"

"$host" collection dump t.cb --data-dir "$data" "${plugin_args[@]}" >"$work/cb.jsonl" ||
  die "collection dump t.cb failed"
read -r all distinct < <(counts _pk <"$work/cb.jsonl")
[ "$all" = 100 ] && [ "$distinct" = 100 ] ||
  die "t.cb holds $all documents ($distinct distinct), want 100 exactly once"
/usr/bin/python3 - "$work/big.jsonl" "$work/cb.jsonl" <<'PY' || die "t.cb differs from its source"
import json, sys
want = {r["id"]: (r["subject"], r["body"]) for r in map(json.loads, open(sys.argv[1]))}
got = {d["_pk"]: (d["subject"], d["body"]) for d in map(json.loads, open(sys.argv[2]))}
sys.exit(0 if want == got else 1)
PY
ok "256 MiB: t.lb caught up, 100 documents exactly once (the 6 MiB one whole), peak $peak bytes"
