#!/bin/bash
# link-etcd.sh - a link run by `serve --meta etcd://...` against a real
# etcd on 127.0.0.1 (etcd-lib.sh): the node is SIGKILLed several times
# while applying and started again; then, while it applies more, etcd is
# stopped for longer than the lease TTL and started again.  Afterwards
# the collection holds every record exactly once and the link's counters
# are exact (no commit lost or duplicated); while etcd was down the run
# was cancelled before its lease could expire (from the node's log and
# /metrics), and the node resumed by itself, without a restart.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
# shellcheck source=tests/integration/etcd-lib.sh
. "$src/tests/integration/etcd-lib.sh"
etcd_start "$work/etcd" || die "cannot start etcd"

# Every command opens the metastore in etcd: serve and one sql by --meta,
# the others through LOAMS_META.  Short timeouts: a renewal gives up well
# within a quarter of the 2 s TTL.
meta="etcd://$etcd_endpoint/loams-test?timeout=200&deadline=300"
export LOAMS_META=$meta
export LOAMS_LISTEN=${LOAMS_LISTEN:-127.0.0.1:0}
N=900
t0=$SECONDS

"$host" sql --data-dir "$data" --meta "$meta" "${plugin_args[@]}" \
  "CREATE STREAM t.tickets WITH (partitions = 3);
   CREATE LINK t.l FROM STREAM t.tickets FORMAT json INTO COLLECTION t.c
     TRANSFORM (SELECT key AS _pk, subject, body)
     WITH (batch_bytes = '8KiB', batch_interval = '150ms');" >/dev/null || die "CREATE failed"
[ ! -e "$data/meta.mdb" ] || die "a metastore file was made in the data dir: $data/meta.mdb"

head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" |
  /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(json.dumps({"k": r["id"], "v": line.rstrip("\n")}))' >"$work/keyed.jsonl"
/usr/bin/python3 - "$work/keyed.jsonl" >"$work/expected.jsonl" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    r = json.loads(json.loads(line)["v"])
    rows.append({"_pk": r["id"], "subject": r["subject"], "body": r["body"]})
for r in sorted(rows, key=lambda r: r["_pk"]):
    print(json.dumps(r, sort_keys=True))
PY
produce() { # produce FIRST COUNT
  tail -n +"$1" "$work/keyed.jsonl" | head -n "$2" |
    "$host" produce t.tickets --data-dir "$data" --key-field k --value-field v \
      >/dev/null 2>&1 || die "produce failed"
}

node() { # node NAME: serve on etcd, TTL 2 s, commits slowed so kills land mid-apply
  LOAMS_FAILPOINTS="link.before_commit=sleep:60" LOAMS_LOG_LEVEL=info LOAMS_METRICS_PUBLIC=on \
    "$host" serve --data-dir "$data" --meta "$meta" --node-id "$1" "${plugin_args[@]}" \
    --lease-ttl 2000ms --poll-interval 200ms --stop-timeout 5000ms 2>>"$work/$1.log" &
  pid[$1]=$!
}

# 1. SIGKILL while applying, three times.
produce 1 600
for i in 1 2 3; do
  node "k$i"
  wait_log "k$i" "committed" 30 "commit by node k$i"
  sleep 0.$((RANDOM % 5 + 2))
  kill -KILL "${pid[k$i]}"
  wait "${pid[k$i]}" 2>/dev/null
  unset "pid[k$i]"
done
ok "node killed 3 times while applying"

# 2. etcd restarted while the node applies, then stopped for longer than
# the TTL while its run holds the lease.
node n
produce 601 150
wait_log n "task=link/t/l/[^ ]* epoch=[0-9]* claimed" 30 "claim of the link by node n"
wait_log n "committed" 30 "commit by node n"
etcd_stop
sleep 1
etcd_start "$work/etcd" || die "cannot restart etcd"
wait_caught_up 40
ok "etcd restarted while node n applied; it caught up"
etcd_stop
down_at=$SECONDS
wait_log n "lease renewals failing" 10 "cancel while etcd is down"
sleep 3 # > the 2 s TTL
etcd_start "$work/etcd" || die "cannot restart etcd"
ok "etcd was down for $((SECONDS - down_at)) s"
line=$(grep -m1 "lease renewals failing" "$work/n.log")
before=$(sed -n 's/.*cancelling the run \([0-9-]*\) ms before its lease could expire.*/\1/p' <<<"$line")
[ -n "$before" ] && [ "$before" -gt 0 ] ||
  die "the run was not cancelled before its lease deadline: $line"
ok "the run was cancelled $before ms before its lease could expire"
produce 751 150
wait_caught_up 40
kill -0 "${pid[n]}" 2>/dev/null || die "node n died while etcd was down"
grep -q "task=link/.* claimed" <(sed -n "/lease renewals failing/,\$p" "$work/n.log") ||
  die "node n did not claim the link again after etcd came back"
port_n=$(sed -n 's/.*HTTP API listening on [^ ]*:\([0-9]*\) .*/\1/p' "$work/n.log" | head -n 1)
cancels=$(curl -fsS "http://127.0.0.1:$port_n/metrics" |
  sed -n 's/^loams_lease_expiry_cancels_total \([0-9]*\).*/\1/p')
[ "${cancels:-0}" -ge 1 ] || die "loams_lease_expiry_cancels_total is '${cancels:-}', want >= 1"
stop_node n
ok "node n resumed by itself and caught up ($cancels expiry cancels in /metrics)"

# 3. Every record exactly once; the counters moved only with commits.
"$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
assert int(l["applied_records"]) == int(sys.argv[1]), "applied_records %s, want %s" % (l["applied_records"], sys.argv[1])
' "$N" || die "system.links counters are not exact"
"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.raw" ||
  die "collection dump failed"
/usr/bin/python3 - "$work/dump.raw" >"$work/got.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in sorted(rows, key=lambda r: r["_pk"]):
    print(json.dumps({k: r.get(k) for k in ("_pk", "subject", "body")}, sort_keys=True))
PY
if ! cmp -s "$work/expected.jsonl" "$work/got.jsonl"; then
  diff "$work/expected.jsonl" "$work/got.jsonl" | head -n 10
  die "collection differs from the source ($(wc -l <"$work/got.jsonl") docs, want $N)"
fi
ok "$N documents exactly once after 3 kills and an etcd outage ($((SECONDS - t0)) s)"
