#!/bin/bash
# bench-http.sh BUILD_DIR [N] - the HTTP API over loopback (docs/BENCHMARKS.md,
# "HTTP API"): N support tickets (~400 bytes, distinct ids, from the shipped
# sample) produced by `loams-host produce --batch 1000` (the reference, in the
# same run, with the node up), then POSTed as NDJSON bodies of 1,000 tickets
# to a real `loams-host serve` from 1, 2, 4 and 8 keep-alive connections
# (bench-http produce): records/s and p50/p99 request latency.  Then text
# searches (k = 10) over HTTP next to the same searches in process (the
# CLI's code, bench-http search-local, also with glibc's trimming off):
# p50/p99.  KEEP=1 keeps the work dir.  Not a test: it prints figures.
set -euo pipefail
build=$(cd "${1:?usage: bench-http.sh BUILD_DIR [N]}" && pwd)
n=${2:-100000}
src=$(cd "$(dirname "$0")/../.." && pwd)
host="$build/core/loams-host"
bench="$build/tests/bench/bench-http"
work=$(mktemp -d /tmp/loams-bench-http.XXXXXX)
echo "work dir: $work"
serve=
trap '[ -n "$serve" ] && kill -KILL $serve 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
args=(--no-default-plugin-dirs)
dirs=()
for d in "$build"/plugins/*/.libs; do args+=(--plugin-dir "$d"); dirs+=("$d"); done
export LOAMS_DATA_DIR="$work/data"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"

/usr/bin/python3 - "$src/tests/fixtures/support-tickets.jsonl" "$n" "$work/tickets.jsonl" <<'PY'
import json, sys
base = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
with open(sys.argv[3], "w") as j:
    for i in range(n):
        r = dict(base[i % len(base)])
        r["id"] = "T-%08d" % i
        j.write(json.dumps(r, separators=(",", ":")) + "\n")
PY
head -n 20000 "$work/tickets.jsonl" > "$work/docs.jsonl"
bytes=$(wc -c < "$work/tickets.jsonl")
"$host" init > /dev/null
"$host" sql "CREATE STREAM b.cli WITH (partitions = 4);
  CREATE STREAM b.h1 WITH (partitions = 4); CREATE STREAM b.h2 WITH (partitions = 4);
  CREATE STREAM b.h4 WITH (partitions = 4); CREATE STREAM b.h8 WITH (partitions = 4);
  CREATE STREAM b.docs;
  CREATE LINK b.l FROM STREAM b.docs INTO COLLECTION b.c
  TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.subject') AS subject,
             json_get_str(value, '\$.body') AS body)
  WITH (batch_interval = '200ms');" "${args[@]}" > /dev/null
token=$("$host" token create --namespace '*' --role admin | head -n 1 | cut -d' ' -f1)
"$host" produce b.docs --key-field id < "$work/docs.jsonl" > /dev/null
LOAMS_LISTEN=127.0.0.1:0 "$host" serve --node-id bench --log-level info "${args[@]}" \
  2> "$work/serve.log" &
serve=$!
until grep -q "HTTP API listening on" "$work/serve.log"; do sleep 0.1; done
url="http://127.0.0.1:$(sed -n 's/.*HTTP API listening on [^ ]*:\([0-9]*\) .*/\1/p' "$work/serve.log")"
until "$host" links --json | grep -q '"lag_records":[[:space:]]*0,'; do sleep 0.2; done

echo "produce: $n tickets, $((bytes / 1000000)) MB, bodies of 1000 tickets, streams of 4 partitions"
t0=$(date +%s.%N)
"$host" produce b.cli --key-field id --batch 1000 < "$work/tickets.jsonl" > /dev/null
t1=$(date +%s.%N)
cli=$(/usr/bin/python3 -c "import sys; print('%.0f' % (float(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2]))))" "$n" "$t0" "$t1")
printf '  %-28s %9s records/s\n' "CLI produce (in process)" "$cli"
for c in 1 2 4 8; do
  line=$("$bench" produce "$url" "$token" "b.h$c" "$work/tickets.jsonl" "$c")
  rate=$(echo "$line" | sed -n 's/.*records\/s \([0-9]*\).*/\1/p')
  p50=$(echo "$line" | sed -n 's/.*p50_ms \([0-9.]*\).*/\1/p')
  p99=$(echo "$line" | sed -n 's/.*p99_ms \([0-9.]*\).*/\1/p')
  printf '  %-28s %9s records/s  %5.0f%% of the CLI  p50 %6s ms  p99 %6s ms\n' \
    "HTTP, $c connection(s)" "$rate" "$(echo "100 * $rate / $cli" | bc -l)" "$p50" "$p99"
done

queries=(printer "vpn connection" password laptop "email sync" invoice screen "network drive")
echo "search: 2000 text queries (k = 10) over 20000 tickets, one connection"
line=$("$bench" search "$url" "$token" b.c 2000 "${queries[@]}")
printf '  %-28s %s\n' "HTTP" "$line"
line=$("$bench" search-local "$LOAMS_DATA_DIR" b.c 2000 "${queries[@]}" -- "${dirs[@]}")
printf '  %-28s %s\n' "in process (the CLI's code)" "$line"
# glibc trims the main arena and unmaps big blocks after each query, so a
# single-threaded process page-faults them in again on the next one (the
# server's handler threads use their own arenas): the same without that
line=$(GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456 \
  "$bench" search-local "$LOAMS_DATA_DIR" b.c 2000 "${queries[@]}" -- "${dirs[@]}")
printf '  %-28s %s\n' "in process, no malloc trim" "$line"
kill -TERM $serve
wait $serve || true
serve=
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
