#!/bin/bash
# link-flush.sh - a link commits at batch_bytes or batch_interval, whichever
# comes first:
#   bytes first: batch_bytes = 1000, batch_interval = 1h, 200 records of
#     exactly 100 payload bytes each (5-byte key + 71-byte value + the 24
#     bytes a batch row counts): commits come as soon as the staged payload
#     reaches 1000 bytes, each holding at least 1000 and at most one read
#     chunk more; the tail below 1000 bytes stays uncommitted (its interval
#     is an hour away);
#   interval first: batch_bytes = 64MiB, batch_interval = 700ms: a single
#     record is committed about 700 ms after it was produced (not before,
#     and well before anything else could trigger it).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=200 B=1000
/usr/bin/python3 -c '
import json
for i in range(200):
    print(json.dumps({"k": "k%04d" % i, "v": json.dumps({"s": "%063d" % i}, separators=(",", ":"))}))
' >"$work/records.jsonl"
sql "CREATE STREAM t.small WITH (partitions = 1);
     CREATE STREAM t.slow WITH (partitions = 1);
     CREATE LINK t.bytes FROM STREAM t.small INTO COLLECTION t.cb
       TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.s') AS s)
       WITH (batch_bytes = '$B', batch_interval = '1h');
     CREATE LINK t.interval FROM STREAM t.slow INTO COLLECTION t.ci
       TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.s') AS s)
       WITH (batch_bytes = '64MiB', batch_interval = '700ms');" \
  >/dev/null || die "CREATE failed"
"$host" produce t.small --data-dir "$data" --key-field k --value-field v <"$work/records.jsonl" \
  >/dev/null 2>&1 || die "produce failed"
start_node a

applied() { # applied LINK
  "$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
print([l for l in json.load(sys.stdin) if l["link"] == sys.argv[1]][0]["applied_records"])' "$1"
}
# bytes first: wait until less than batch_bytes is left (100 bytes a record)
for i in $(seq 1 60); do
  last=$(applied t.bytes)
  [ $(((N - last) * 100)) -lt "$B" ] && break
  sleep 0.5
done
[ $(((N - last) * 100)) -lt "$B" ] || die "t.bytes applied only $last of $N records in 30 s"
sleep 2 # two more seconds: the tail must stay staged
a=$(applied t.bytes)
[ "$a" = "$last" ] || die "t.bytes committed its tail below batch_bytes ($last -> $a)"
grep "task=link/t/bytes/.* committed " "$work/a.log" |
  sed 's/.*: \([0-9]*\) records applied.* (\([0-9]*\) records, \([0-9]*\) bytes;.*/\1 \2 \3/' \
    >"$work/commits.txt"
/usr/bin/python3 - "$work/commits.txt" "$a" "$N" "$B" <<'PY' || die "t.bytes did not commit at batch_bytes"
import sys
commits = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
applied, n, b = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
assert commits, "no commit"
assert sum(c[0] for c in commits) == applied, (commits, applied)
for recs, read, kv in commits:
    payload = kv + 24 * read
    assert kv == 76 * read, ("records are 76 key + value bytes", recs, read, kv)
    assert payload >= b, ("committed below batch_bytes", recs, read, kv)
    assert kv <= b + 76, ("more than one read chunk of batch_bytes per commit", recs, read, kv)
tail = n - applied
assert 0 < tail and tail * 100 < b, ("the uncommitted tail is not below batch_bytes", tail)
print(len(commits), "commits of", sorted({c[0] for c in commits}), "records; tail", tail)
PY
ok "bytes first: $(wc -l <"$work/commits.txt") commits at >= $B payload bytes, $((N - a)) records left staged (interval 1h)"

# interval first: one record, committed ~700 ms later
for i in 1 2; do
  t0=$(date +%s.%N)
  echo "{\"k\":\"x$i\",\"v\":\"{\\\"s\\\":\\\"one\\\"}\"}" |
    "$host" produce t.slow --data-dir "$data" --key-field k --value-field v >/dev/null 2>&1 ||
    die "produce failed"
  for j in $(seq 1 50); do
    [ "$(applied t.interval)" = "$i" ] && break
    sleep 0.1
  done
  [ "$(applied t.interval)" = "$i" ] || die "record $i was not committed within 5 s"
  line=$(grep "task=link/t/interval/.* committed " "$work/a.log" | sed -n "${i}p")
  /usr/bin/python3 - "$t0" "$line" >>"$work/delays.txt" <<'PY' || die "the interval commit came at the wrong time"
import datetime, sys
t0 = float(sys.argv[1])
stamp = sys.argv[2].split()[0]
t = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
    tzinfo=datetime.timezone.utc).timestamp()
assert " 1 records applied" in sys.argv[2], sys.argv[2]
delay = t - t0
assert 0.69 <= delay <= 3.0, "committed %.3f s after the produce started (interval 0.7 s)" % delay
print("%.3f" % delay)
PY
done
stop_node a
ok "interval first: single records committed $(tr '\n' ' ' <"$work/delays.txt")s after produce (batch_interval 700ms, batch_bytes 64MiB)"
