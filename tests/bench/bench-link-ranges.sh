#!/bin/bash
# bench-link-ranges.sh BUILD_DIR [RECORDS] [PARTITIONS] - one link over a
# stream of PARTITIONS partitions (4 by default) of the node's own log,
# into a collection and, separately, into an Iceberg table, run as 1 task
# and as 2 tasks (WITH (tasks = N)) by one `loams-host serve`.  Prints per
# target and task count the records/s by wall time (from the serve's start
# to the last record applied), the serve's CPU time and the rebased
# commits; the speedup of 2 tasks over 1 comes from the same run.
# Records are produced first: the figures are of the apply alone.
# Not a timed test: it prints figures (docs/BENCHMARKS.md).
set -u
build=$(cd "${1:?usage: bench-link-ranges.sh BUILD_DIR [RECORDS] [PARTITIONS]}" && pwd)
n=${2:-400000}
parts=${3:-4}
host="$build/core/loams-host"
work=$(mktemp -d /tmp/loams-bench-ranges.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -n "${LOAMS_BENCH_KEEP:-}" ] || rm -rf "$work"' EXIT
plugin_args=()
for d in "$build"/plugins/*/.libs; do plugin_args+=(--plugin-dir "$d"); done
plugin_args+=(--no-default-plugin-dirs)
export LOAMS_PLUGIN_PATH=""
clk=$(getconf CLK_TCK)

/usr/bin/python3 - "$n" >"$work/tickets.jsonl" <<'PY'
import json, random, sys
r = random.Random(7)
words = "refund printer login invoice crash slow password export sync mobile".split()
for i in range(int(sys.argv[1])):
    body = " ".join(r.choice(words) for _ in range(45))
    print(json.dumps({"id": "t-%d" % i, "subject": " ".join(r.choice(words) for _ in range(5)),
                      "body": body, "priority": r.randint(1, 4)}))
PY

declare -A rate=()
run() { # run KIND TASKS
  local kind=$1 tasks=$2 data="$work/data-$1-$2" into select
  if [ "$kind" = collection ]; then
    into="INTO COLLECTION b.out"
    select="SELECT key AS _pk, json_get_str(value, '\$.subject') AS subject,
                   json_get_str(value, '\$.body') AS body"
  else
    into="INTO TABLE b.out"
    select="SELECT key AS id, json_get_str(value, '\$.subject') AS subject,
                   json_get_int(value, '\$.priority') AS priority"
  fi
  "$host" sql --data-dir "$data" "${plugin_args[@]}" "CREATE STREAM b.tickets WITH (partitions = $parts);
    CREATE LINK b.l FROM STREAM b.tickets $into TRANSFORM ($select)
      WITH (tasks = $tasks, batch_bytes = '16MiB', batch_interval = '1s')" >/dev/null || exit 1
  "$host" produce b.tickets --data-dir "$data" --key-field id <"$work/tickets.jsonl" >/dev/null ||
    exit 1
  local t0 t1 pid ticks applied deadline=$((SECONDS + 900))
  t0=$(date +%s.%N)
  LOAMS_LOG_LEVEL=info "$host" serve --data-dir "$data" "${plugin_args[@]}" --listen 127.0.0.1:0 \
    --poll-interval 100ms 2>"$work/$kind-$tasks.log" &
  pid=$!
  while :; do
    applied=$("$host" links --json --data-dir "$data" |
      /usr/bin/python3 -c 'import json,sys; print(sum(int(x["applied_records"]) for x in json.load(sys.stdin)))')
    [ "$applied" -ge "$n" ] && break
    if [ "$SECONDS" -ge "$deadline" ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "bench-link-ranges: $kind, $tasks task(s): $applied of $n applied after 900 s" >&2
      tail -n 5 "$work/$kind-$tasks.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  t1=$(date +%s.%N)
  ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  kill -TERM "$pid"
  wait "$pid"
  local rebased
  rebased=$(grep -c "rebased on it" "$work/$kind-$tasks.log")
  rate[$kind-$tasks]=$(awk -v n="$n" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f", n / (t1 - t0) }')
  awk -v k="$kind" -v t="$tasks" -v n="$n" -v t0="$t0" -v t1="$t1" -v ticks="$ticks" -v clk="$clk" \
    -v rb="$rebased" 'BEGIN { w = t1 - t0; c = ticks / clk;
      printf "%-10s %d task(s): wall %6.2f s %9.0f records/s | serve CPU %6.2f s | %d rebased commits\n",
        k, t, w, n / w, c, rb }'
}
echo "bench-link-ranges: $n tickets (~$(($(wc -c <"$work/tickets.jsonl") / n)) bytes) in $parts partitions, $(nproc) cores"
for kind in collection table; do
  run "$kind" 1
  run "$kind" 2
  awk -v k="$kind" -v a="${rate[$kind-1]}" -v b="${rate[$kind-2]}" \
    'BEGIN { printf "%-10s 2 tasks / 1 task: %.2fx\n", k, b / a }'
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
