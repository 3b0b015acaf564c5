#!/bin/bash
# bench-kafka-link.sh BUILD_DIR [RECORDS] - one link into a collection and
# one into a table, reading a Kafka topic (librdkafka's mock cluster,
# tests/kafka-mock) and, in the same run, the same records from the
# node's own log.  Prints per source and target the records/s by wall time
# (from the serve's start to the last record applied) and by the serve's
# CPU time, and the mock broker's CPU (it runs on the same cores).
# Records are produced first (python3-confluent-kafka for the topic,
# `loams-host produce` for the log): the figures are of the apply alone.
# Not a timed test: it prints figures (docs/BENCHMARKS.md).
set -u
build=$(cd "${1:?usage: bench-kafka-link.sh BUILD_DIR [RECORDS]}" && pwd)
n=${2:-200000}
src=$(cd "$(dirname "$0")/../.." && pwd)
host="$build/core/loams-host"
work=$(mktemp -d /tmp/loams-bench-kafka.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; [ -n "${LOAMS_BENCH_KEEP:-}" ] || rm -rf "$work"' EXIT
plugin_args=()
for d in "$build"/plugins/*/.libs; do plugin_args+=(--plugin-dir "$d"); done
plugin_args+=(--no-default-plugin-dirs)
export LOAMS_PLUGIN_PATH=""
clk=$(getconf CLK_TCK)

# librdkafka's mock broker keeps about 5 MB per partition (older records
# are deleted as by retention), so the topic gets one partition per 4 MB
# of tickets (~400 bytes each), and the node's log as many.
parts=$(((n * 400 + 4194303) / 4194304))
coproc MOCK { "$build/tests/kafka-mock/kafka-mock" -t "tickets:$parts"; }
read -r line <&"${MOCK[0]}"
bs=${line#bootstrap }
mock_cpu() {
  echo cpu >&"${MOCK[1]}"
  local a u s
  read -r a u s <&"${MOCK[0]}"
  echo "$u $s" | awk '{printf "%.2f", $1 + $2}'
}
# the records: ~400-byte JSON tickets, key = id
/usr/bin/python3 - "$n" >"$work/tickets.jsonl" <<'PY'
import json, random, sys
r = random.Random(7)
words = "refund printer login invoice crash slow password export sync mobile".split()
for i in range(int(sys.argv[1])):
    body = " ".join(r.choice(words) for _ in range(45))
    print(json.dumps({"id": "t-%d" % i, "subject": " ".join(r.choice(words) for _ in range(5)),
                      "body": body, "priority": r.randint(1, 4)}))
PY
/usr/bin/python3 - "$bs" "$work/tickets.jsonl" <<'PY' || exit 1
import json, sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "linger.ms": 50, "batch.num.messages": 10000})
for line in open(sys.argv[2]):
    key = json.loads(line)["id"]
    while True:
        try:
            p.produce("tickets", value=line.rstrip("\n").encode(), key=key.encode())
            break
        except BufferError:
            p.poll(0.05)
assert p.flush(120) == 0
PY
mock0=$(mock_cpu)

run() { # run LABEL STREAM_SQL
  local data="$work/data-$1"
  "$host" sql --data-dir "$data" "${plugin_args[@]}" "$2;
    CREATE LINK b.lc FROM STREAM b.tickets INTO COLLECTION b.c
      TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.subject') AS subject,
                        json_get_str(value, '\$.body') AS body)
      WITH (batch_bytes = '64MiB', batch_interval = '1s');
    CREATE LINK b.lt FROM STREAM b.tickets INTO TABLE b.t
      TRANSFORM (SELECT key AS id, json_get_str(value, '\$.subject') AS subject,
                        json_get_int(value, '\$.priority') AS priority)
      WITH (batch_bytes = '64MiB', batch_interval = '1s');" >/dev/null || exit 1
  if [ "$1" = log ]; then
    "$host" produce b.tickets --data-dir "$data" --key-field id <"$work/tickets.jsonl" >/dev/null ||
      exit 1
  fi
  local m0 t0 t1 pid ticks
  m0=$(mock_cpu)
  t0=$(date +%s.%N)
  LOAMS_LOG_LEVEL=warn "$host" serve --data-dir "$data" "${plugin_args[@]}" --listen 127.0.0.1:0 \
    --poll-interval 100ms 2>"$work/$1.log" &
  pid=$!
  local applied lost deadline=$((SECONDS + 900))
  while :; do
    read -r applied lost < <("$host" links --json --data-dir "$data" |
      /usr/bin/python3 -c 'import json,sys; l = json.load(sys.stdin)
print(sum(int(x["applied_records"]) for x in l), sum(int(x["lost_records"]) for x in l))')
    [ "$applied" -ge $((2 * n)) ] && break
    if [ "$SECONDS" -ge "$deadline" ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "bench-kafka-link: $1: $applied of $((2 * n)) records applied ($lost lost) after 900 s" >&2
      tail -n 5 "$work/$1.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  t1=$(date +%s.%N)
  ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  kill -TERM "$pid"
  wait "$pid"
  local m1
  m1=$(mock_cpu)
  awk -v l="$1" -v n="$n" -v t0="$t0" -v t1="$t1" -v ticks="$ticks" -v clk="$clk" \
    -v m0="$m0" -v m1="$m1" 'BEGIN {
      w = t1 - t0; c = ticks / clk;
      printf "%-6s 2 links x %d records: wall %6.2f s %9.0f records/s | serve CPU %6.2f s %9.0f records/s | mock broker CPU %5.2f s\n",
        l, n, w, 2 * n / w, c, 2 * n / c, m1 - m0 }'
}
echo "bench-kafka-link: $n tickets (~$(($(wc -c <"$work/tickets.jsonl") / n)) bytes) in $parts partition(s), a collection and a table link each; producing to the mock took $mock0 s of its CPU"
run log "CREATE STREAM b.tickets WITH (partitions = $parts)"
run kafka "CREATE STREAM b.tickets USING kafka WITH (bootstrap_servers = '$bs', topic = 'tickets')"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
