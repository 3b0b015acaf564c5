#!/bin/bash
# link-on-error.sh - a stream mixing valid records with three kinds of
# failing ones - invalid JSON (decode), a transform error (integer overflow
# in the SELECT) and a row the target refuses (no _pk) - under each on_error
# mode gives exactly the documented result:
#   skip: every valid record applied, every failing one counted as skipped;
#   fail: the link stops failed at the first failing record, with the error
#         and the record's partition and offset in system.links; another
#         link on the same stream keeps running;
#   dead_letter: every failing record appended once to the dead-letter
#         stream (named by dead_letter_stream), checked record by record
#         against the source: key, value bytes and timestamp, and the headers
#         loams.link, loams.partition, loams.offset and loams.error with the
#         error of its kind; every valid record applied; and still once when
#         a node dies right after appending them and the next node's first
#         commit covers less than the dead node read.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=300
# line NR: every 50th is not JSON (offsets 49, 99, ... on one partition);
# NR % 100 == 70 overflows in the transform, NR % 100 == 85 has no _pk.
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" |
  /usr/bin/python3 -c '
import json, sys
for nr, line in enumerate(sys.stdin, 1):
    r = json.loads(line)
    if nr % 50 == 0:
        v = "not json %d" % nr
    else:
        if nr % 100 == 70:
            r["kind"] = "boom"
        elif nr % 100 == 85:
            r["kind"] = "nopk"
        v = json.dumps(r)
    print(json.dumps({"k": "r%d" % nr, "v": v}))
' >"$work/keyed.jsonl"
bad=$(grep -c '"v": "not json' "$work/keyed.jsonl")
boom=$(grep -c '\\"kind\\": \\"boom' "$work/keyed.jsonl")
nopk=$(grep -c '\\"kind\\": \\"nopk' "$work/keyed.jsonl")
failing=$((bad + boom + nopk))
good=$((N - failing))
[ "$bad/$boom/$nopk" = "6/3/3" ] || die "the input has $bad/$boom/$nopk failing records, want 6/3/3"
select="SELECT CASE WHEN json_get_str(value, '\$.kind') = 'nopk' THEN NULL ELSE key END AS _pk,
               subject,
               abs(CASE WHEN json_get_str(value, '\$.kind') = 'boom'
                        THEN -9223372036854775807 - 1 ELSE 0 END) AS zero"
sql "CREATE STREAM t.s WITH (partitions = 1);
     CREATE STREAM t.s3 WITH (partitions = 3);
     CREATE LINK t.skipper FROM STREAM t.s INTO COLLECTION t.c1
       TRANSFORM ($select) WITH (batch_interval = '200ms', on_error = 'skip');
     CREATE LINK t.failer FROM STREAM t.s INTO COLLECTION t.c2
       TRANSFORM ($select) WITH (batch_interval = '200ms', on_error = 'fail');
     CREATE LINK t.dl FROM STREAM t.s3 INTO COLLECTION t.c3
       TRANSFORM ($select)
       WITH (batch_bytes = '8KiB', batch_interval = '200ms', on_error = 'dead_letter',
             dead_letter_stream = 't.errors');" \
  >/dev/null || die "CREATE failed"
for s in t.s t.s3; do
  "$host" produce "$s" --data-dir "$data" --key-field k --value-field v <"$work/keyed.jsonl" \
    >/dev/null 2>&1 || die "produce to $s failed"
done
start_node a
wait_caught_up 60
stop_node a
"$host" links --json --data-dir "$data" >"$work/links.json"
/usr/bin/python3 - "$work/links.json" "$good" "$failing" <<'PY' || die "system.links is not as documented"
import json, sys
links = {l["link"]: l for l in json.load(open(sys.argv[1]))}
good, failing = int(sys.argv[2]), int(sys.argv[3])
s = links["t.skipper"]
assert s["state"] == "running", s
assert (int(s["applied_records"]), int(s["skipped_records"])) == (good, failing), s
f = links["t.failer"]
assert f["state"] == "failed", f
assert int(f["error_partition"]) == 0 and int(f["error_offset"]) == 49, f
assert "partition 0 offset 49" in f["error"] and "JSON" in f["error"], f["error"]
assert int(f["applied_records"]) == 0, f   # nothing of the failing batch applied
d = links["t.dl"]
assert d["state"] == "running", d
assert (int(d["applied_records"]), int(d["dead_lettered_records"]), int(d["skipped_records"])) \
    == (good, failing, 0), d
PY
"$host" links --data-dir "$data" >"$work/links.txt"
grep -q "^    error at partition 0 offset 49: .*JSON" "$work/links.txt" ||
  { cat "$work/links.txt"; die "the links table does not show the failer's error and position"; }
for c in t.c1 t.c3; do
  "$host" collection dump "$c" --data-dir "$data" "${plugin_args[@]}" >"$work/$c.jsonl" ||
    die "dump $c failed"
  /usr/bin/python3 - "$work/keyed.jsonl" "$work/$c.jsonl" <<'PY' || die "$c: documents differ from the valid records"
import json, sys
want = {}
for l in open(sys.argv[1]):
    kv = json.loads(l)
    try:
        r = json.loads(kv["v"])
    except ValueError:
        continue
    if r.get("kind") in ("boom", "nopk"):
        continue
    want[kv["k"]] = {"_pk": kv["k"], "subject": r["subject"], "zero": 0}
got = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == len(want), (len(got), len(want))
assert {d["_pk"]: d for d in got} == want
PY
done
ok "skip: $good applied, $failing skipped; fail: failed at offset 49 with its error; dead_letter: $good applied"

# The dead letters, record by record against the source.
for p in 0 1 2; do
  "$host" stream read t.s3 --partition $p --from 0 --limit 1000 --json --data-dir "$data" ||
    die "reading t.s3 failed"
done >"$work/source.jsonl"
parts=$("$host" sql --data-dir "$data" --json "SELECT * FROM system.streams" |
  /usr/bin/python3 -c '
import json, sys
print("".join(str(s["partitions"]) for s in json.load(sys.stdin) if s["stream"] == "t.errors"))')
[ -n "$parts" ] || die "the dead-letter stream t.errors does not exist"
for p in $(seq 0 $((parts - 1))); do
  "$host" stream read t.errors --partition "$p" --from 0 --limit 1000 --json --data-dir "$data" ||
    die "reading t.errors failed"
done >"$work/dlq.jsonl"
/usr/bin/python3 - "$work/source.jsonl" "$work/dlq.jsonl" <<'PY' || die "dead letters differ from the source"
import json, sys
src = {(r["partition"], r["offset"]): r for r in map(json.loads, open(sys.argv[1]))}
dlq = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
def kind(r):
    try:
        return {"boom": "transform", "nopk": "target"}.get(json.loads(r["value"]).get("kind"))
    except ValueError:
        return "decode"
want = {pos: kind(r) for pos, r in src.items() if kind(r)}
seen = set()
for d in dlq:
    h = d["headers"]
    pos = (int(h["loams.partition"]), int(h["loams.offset"]))
    assert pos in want, ("a dead letter for a record that did not fail", pos, d)
    assert pos not in seen, ("dead-lettered twice", pos)
    seen.add(pos)
    s = src[pos]
    assert h["loams.link"] == "t.dl", h
    assert (d["key"], d["value"], d["timestamp"]) == (s["key"], s["value"], s["timestamp"]), (d, s)
    err = h["loams.error"]
    assert err.startswith("partition %d offset %d: " % pos), err
    k = want[pos]
    if k == "decode":
        assert "JSON" in err, err
    elif k == "transform":
        assert "integer overflow" in err, err
    else:
        assert "collection t.c3: the row has no _pk" in err, err
assert seen == set(want), ("missing dead letters", sorted(set(want) - seen))
PY
ok "dead_letter: every failing record once in t.errors with its key, value, timestamp and headers"

# Dead letters after a crash (issue 17): 18 good and 8 bad records over 4
# partitions; the first node dies right after appending the 8 dead letters
# (one chunk, uncommitted); larger good records arrive, so the next node's
# first chunks end early in partition 0 and its first commits cover only
# part of what the dead node read.  The 8 dead letters stay 8.
rm -rf "$data" "$work"/*.log
sql "CREATE STREAM t.s4 WITH (partitions = 4);
     CREATE LINK t.dl4 FROM STREAM t.s4 FORMAT json INTO COLLECTION t.c4
       TRANSFORM (SELECT key AS _pk, n)
       WITH (batch_bytes = '8KiB', batch_interval = '200ms', on_error = 'dead_letter');" \
  >/dev/null || die "CREATE t.dl4 failed"
gen() { # gen FROM TO PAD BAD: records rFROM..rTO-1, every 3rd below 24 not JSON when BAD=1
  /usr/bin/python3 -c '
import json, sys
a, b, pad, bad = map(int, sys.argv[1:])
for i in range(a, b):
    v = "not json %d" % i if bad and i % 3 == 0 and i < 24 else json.dumps({"n": i, "pad": "x" * pad})
    print(json.dumps({"k": "r%d" % i, "v": v}))' "$@"
}
gen 0 26 100 1 | "$host" produce t.s4 --data-dir "$data" --key-field k --value-field v \
  >/dev/null 2>&1 || die "produce to t.s4 failed"
start_node a "LOAMS_FAILPOINTS=link.after_dead_letter=crash"
wait_dead a 60
grep -q "failpoint link.after_dead_letter: crashing" "$work/a.log" ||
  die "node a died, but not after its dead letters"
gen 100 220 1000 0 | "$host" produce t.s4 --data-dir "$data" --key-field k --value-field v \
  >/dev/null 2>&1 || die "produce to t.s4 failed"
start_node b
wait_caught_up 60
stop_node b
grep -q "8 dead letters of an uncommitted run are already in the DLQ" "$work/b.log" ||
  die "node b did not find the 8 dead letters node a appended"
[ "$(grep -c ' committed ' "$work/b.log")" -ge 2 ] ||
  die "node b committed everything at once: the test needs commits that cover less"
dl=$(dlq_exact t.s4 t.dl4_dlq t.dl4 'r["value"].startswith("not json")') ||
  die "the dead letters after a crash are not exactly the 8 bad records"
[ "$dl" = "8 8" ] || die "$dl bad records / dead letters, want 8 8"
"$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
l = {x["link"]: x for x in json.load(sys.stdin)}["t.dl4"]
assert (int(l["applied_records"]), int(l["dead_lettered_records"])) == (138, 8), l' ||
  die "t.dl4's counters are not 138 applied, 8 dead-lettered"
ok "dead letters after a crash: 8 bad records, 8 dead letters (none appended twice), counters exact"
