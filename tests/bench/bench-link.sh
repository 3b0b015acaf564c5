#!/bin/bash
# bench-link.sh BUILD_DIR [N] - end to end: N support tickets (~400 bytes,
# made from the shipped sample with distinct ids) through the seed's SELECT
# (without embed) into a collection by a real `loams-host serve`; prints
# records/s and MB/s for produce and for the link (from the first record to
# the commit that catches up), the serve process's peak RSS, and, in the
# same run, the reference: the same documents bulk-inserted into an SQLite
# FTS5 table by the sqlite3 shell.  Not a test: it prints figures.
set -euo pipefail
build=$(cd "${1:?usage: bench-link.sh BUILD_DIR [N]}" && pwd)
n=${2:-200000}
src=$(cd "$(dirname "$0")/../.." && pwd)
host="$build/core/loams-host"
work=$(mktemp -d /tmp/loams-bench-link.XXXXXX)
trap 'kill -KILL $serve 2>/dev/null; rm -rf "$work"' EXIT
serve=
args=(--no-default-plugin-dirs)
for d in "$build"/plugins/*/.libs; do args+=(--plugin-dir "$d"); done
export LOAMS_DATA_DIR="$work/data"

/usr/bin/python3 - "$src/tests/fixtures/support-tickets.jsonl" "$n" "$work/tickets.jsonl" "$work/tickets.tsv" <<'PY'
import json, sys
base = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
with open(sys.argv[3], "w") as j, open(sys.argv[4], "w") as t:
    for i in range(n):
        r = dict(base[i % len(base)])
        r["id"] = "T-%08d" % i
        j.write(json.dumps(r, separators=(",", ":")) + "\n")
        t.write("%s\t%s\t%s\n" % (r["id"], r["subject"], r["body"]))
PY
bytes=$(wc -c <"$work/tickets.jsonl")
now() { date +%s.%N; }
elapsed() { /usr/bin/python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$1" "$2"; }
rate() { /usr/bin/python3 -c "import sys; n,b,s=float(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3]); print('%10.0f records/s %8.1f MB/s (%.2f s)' % (n/s, b/s/1e6, s))" "$@"; }

"$host" sql "CREATE STREAM b.tickets WITH (partitions = 1);
  CREATE LINK b.l FROM STREAM b.tickets INTO COLLECTION b.c
  TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.subject') AS subject,
             json_get_str(value, '\$.body') AS body, timestamp AS ts)
  WITH (batch_bytes = '64MiB', batch_interval = '2s', on_error = 'dead_letter');" "${args[@]}" >/dev/null
t0=$(now)
"$host" produce b.tickets --key-field id --batch 10000 <"$work/tickets.jsonl" >/dev/null
t1=$(now)
"$host" serve --node-id bench --log-level warn "${args[@]}" &
serve=$!
t2=$(now)
while :; do
  lag=$("$host" links --json | sed -n 's/.*"lag_records":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)
  [ "$lag" = 0 ] && break
  sleep 0.2
done
t3=$(now)
rss=$(awk '/VmHWM/ {print $2 " " $3}' /proc/$serve/status)
kill -TERM $serve; wait $serve; serve=
printf '%-44s' "produce ($n records, $((bytes / 1000000)) MB)"; rate "$n" "$bytes" "$(elapsed $t0 $t1)"
printf '%-44s' "link apply end to end (1 task)"; rate "$n" "$bytes" "$(elapsed $t2 $t3)"
echo "serve peak RSS: $rss"
t4=$(now)
sqlite3 "$work/fts.db" <<SQL
CREATE VIRTUAL TABLE docs USING fts5(pk UNINDEXED, subject, body);
.mode tabs
.import $work/tickets.tsv docs
SQL
t5=$(now)
printf '%-44s' "reference: sqlite3 FTS5 bulk insert"; rate "$n" "$bytes" "$(elapsed $t4 $t5)"
