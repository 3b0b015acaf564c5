#!/bin/bash
# bench-aggregate-link.sh BUILD_DIR [RECORDS] - an aggregate link (GROUP BY
# customer, docs/AGGREGATES.md) over RECORDS tickets of ticket_gen.h
# (1,000,000 by default; customer ids 0..99,999, so about 100,000 groups)
# into a collection, one link task on one stream partition, next to DuckDB's
# GROUP BY with the same functions over the same JSON lines on one thread.
# Prints records/s by wall time (from the serve's start to the last record
# applied) and by the serve's CPU time, the commits and the bytes of the
# stored states per group, and DuckDB's figures.  Records are produced
# first: the figures are of the apply alone.  Not a timed test
# (docs/BENCHMARKS.md).
set -u
build=$(cd "${1:?usage: bench-aggregate-link.sh BUILD_DIR [RECORDS]}" && pwd)
n=${2:-1000000}
src=$(cd "$(dirname "$0")/../.." && pwd)
host="$build/core/loams-host"
work=$(mktemp -d /tmp/loams-bench-agg.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -n "${LOAMS_BENCH_KEEP:-}" ] || rm -rf "$work"' EXIT
plugin_args=()
for d in "$build"/plugins/*/.libs; do plugin_args+=(--plugin-dir "$d"); done
plugin_args+=(--no-default-plugin-dirs)
export LOAMS_PLUGIN_PATH=""
clk=$(getconf CLK_TCK)
top_builddir=$build
. "$src/tests/integration/duckdb-env.sh"
loams_duckdb_install || exit 1

"$build/tests/bench/ticket-jsonl" "$n" >"$work/tickets.jsonl" || exit 1
data="$work/data"
"$host" sql --data-dir "$data" "${plugin_args[@]}" "CREATE STREAM b.tickets WITH (partitions = 1);
  CREATE LINK b.agg FROM STREAM b.tickets INTO COLLECTION b.customers
    TRANSFORM (SELECT json_get_int(value, '\$.customer.id') AS _pk, count(*) AS n,
                      sum(CAST(json_get_str(value, '\$.priority') AS INTEGER)) AS prio_sum,
                      min(json_get_int(value, '\$.ts')) AS first_ts,
                      max(json_get_int(value, '\$.ts')) AS last_ts,
                      avg(CAST(json_get_str(value, '\$.priority') AS INTEGER)) AS prio_avg,
                      approx_count_distinct(json_get_str(value, '\$.subject')) AS subjects,
                      approx_quantile(length(json_get_str(value, '\$.body')), 0.9) AS body_p90
               GROUP BY json_get_int(value, '\$.customer.id'))
    WITH (batch_bytes = '${LOAMS_BENCH_BATCH:-64MiB}', batch_interval = '5s');" >/dev/null || exit 1
"$host" produce b.tickets --data-dir "$data" <"$work/tickets.jsonl" >/dev/null || exit 1

t0=$(date +%s.%N)
LOAMS_LOG_LEVEL=info "$host" serve --data-dir "$data" "${plugin_args[@]}" --listen 127.0.0.1:0 \
  --poll-interval 100ms 2>"$work/serve.log" &
pid=$!
deadline=$((SECONDS + 1800))
while :; do
  applied=$("$host" links --json --data-dir "$data" |
    /usr/bin/python3 -c 'import json,sys; print(sum(int(x["applied_records"]) for x in json.load(sys.stdin)))')
  [ "$applied" -ge "$n" ] && break
  if [ "$SECONDS" -ge "$deadline" ] || ! kill -0 "$pid" 2>/dev/null; then
    echo "bench-aggregate-link: $applied of $n records applied" >&2
    tail -n 5 "$work/serve.log" >&2
    exit 1
  fi
  sleep 0.2
done
t1=$(date +%s.%N)
ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
kill -TERM "$pid"
wait "$pid"
"$host" collection dump b.customers --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl" ||
  exit 1
groups=$(wc -l <"$work/dump.jsonl")
commits=$(grep -c 'committed .*records applied' "$work/serve.log")
# per commit: "merged G groups (S bytes of states)"
read -r sgroups sbytes < <(grep -o 'merged [0-9]* groups ([0-9]* bytes of states)' "$work/serve.log" |
  awk '{g += $2; b += substr($4, 2)} END {print g + 0, b + 0}')
awk -v n="$n" -v t0="$t0" -v t1="$t1" -v ticks="$ticks" -v clk="$clk" -v g="$groups" \
  -v c="$commits" -v sg="$sgroups" -v sb="$sbytes" 'BEGIN {
    w = t1 - t0; cpu = ticks / clk;
    printf "loams aggregate link: %d records -> %d groups in %d commits: wall %.2f s %.0f records/s | serve CPU %.2f s %.0f records/s | states %.0f bytes per group (%.1f MiB for %d groups)\n",
      n, g, c, w, n / w, cpu, n / cpu, sb / (sg ? sg : 1), sb / (sg ? sg : 1) * g / 1048576, g }'
/usr/bin/python3 - "$work/dump.jsonl" "$n" <<'PY' || exit 1
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
total = sum(d["n"] for d in docs)
assert total == int(sys.argv[2]), "the groups count %d records, not %s" % (total, sys.argv[2])
PY
out=$(loams_duckdb_node "$src/tests/bench/bench-aggregate-duckdb.mjs" "$work/tickets.jsonl" 1) ||
  exit 1
echo "$out" | awk -v n="$n" '/^result/ {
  for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  printf "duckdb GROUP BY, 1 thread: %d records -> %d groups: wall %.2f s %.0f records/s | CPU %.2f s\n",
    v["records"], v["groups"], v["wall_s"], n / v["wall_s"], v["cpu_s"] }'
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
