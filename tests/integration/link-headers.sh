#!/bin/bash
# link-headers.sh - the `headers` cell a link's SELECT sees is valid JSON for
# every record, as the host API's contract for JSON cells says.  A first
# link dead-letters every third record of the sample tickets (records with
# headers: loams.link, loams.partition, loams.offset, loams.error) into a
# stream of 3 partitions; a second link reads that stream in small chunks
# (batch_bytes = '2KiB': many chunks, each with a first record per
# partition) and keeps json_valid(headers) and the offset the headers name.
# Every document must say valid = 1 and name the position of a record that
# failed, each failing record once.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=300
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" >"$work/input.jsonl"
sql "CREATE STREAM t.s WITH (partitions = 2);
     CREATE STREAM t.errors WITH (partitions = 3);
     CREATE LINK t.first FROM STREAM t.s INTO COLLECTION t.c1
       TRANSFORM (SELECT key AS _pk,
                         CASE WHEN offset % 3 = 0 THEN NULL ELSE 1 END / 1 AS one,
                         abs(CASE WHEN offset % 3 = 0 THEN -9223372036854775807 - 1
                                  ELSE 0 END) AS zero)
       WITH (batch_interval = '100ms', on_error = 'dead_letter',
             dead_letter_stream = 't.errors');
     CREATE LINK t.second FROM STREAM t.errors INTO COLLECTION t.c2
       TRANSFORM (SELECT partition || '/' || offset AS _pk,
                         json_valid(headers) AS valid, partition AS dlq_partition,
                         CASE WHEN json_valid(headers)
                              THEN json_get_str(headers, '\$.\"loams.partition\"') || '/' ||
                                   json_get_str(headers, '\$.\"loams.offset\"') END AS origin)
       WITH (batch_bytes = '2KiB', batch_interval = '100ms', on_error = 'fail');" \
  >/dev/null || die "CREATE failed"
"$host" produce t.s --data-dir "$data" --key-field id <"$work/input.jsonl" >/dev/null 2>&1 ||
  die "produce failed"
start_node a
wait_caught_up 60
stop_node a

"$host" links --json --data-dir "$data" >"$work/links.json" || die "links --json failed"
for p in 0 1; do
  "$host" stream read t.s --partition $p --from 0 --limit 1000 --json --data-dir "$data" ||
    die "reading t.s failed"
done >"$work/source.jsonl"
"$host" collection dump t.c2 --data-dir "$data" "${plugin_args[@]}" >"$work/c2.jsonl" ||
  die "dump t.c2 failed"
/usr/bin/python3 - "$work/links.json" "$work/source.jsonl" "$work/c2.jsonl" <<'PY' ||
import json, sys
links = {l["link"]: l for l in json.load(open(sys.argv[1]))}
src = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
want = {"%d/%d" % (r["partition"], r["offset"]) for r in src if r["offset"] % 3 == 0}
docs = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
assert links["t.first"]["state"] == "running", links["t.first"]
assert int(links["t.first"]["dead_lettered_records"]) == len(want), (links["t.first"], len(want))
s = links["t.second"]
assert s["state"] == "running", s
assert int(s["applied_records"]) == len(want), (s, len(want))
assert len(docs) == len(want), (len(docs), len(want))
bad = [d for d in docs if d.get("valid") != 1]
assert not bad, ("headers that are not valid JSON", len(bad), bad[:3])
got = [d["origin"] for d in docs]
assert sorted(got) == sorted(want), (sorted(set(want) - set(got))[:5], sorted(set(got) - set(want))[:5])
parts = {d["dlq_partition"] for d in docs}
assert len(parts) > 1, ("the dead letters went to one partition only", parts)
print(len(docs), "documents, dead-letter partitions", sorted(parts))
PY
  die "the headers cell is not valid JSON for every record"
ok "json_valid(headers) for every dead letter read through a link, in chunks of 2 KiB"
