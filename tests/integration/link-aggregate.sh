#!/bin/bash
# link-aggregate.sh - an aggregate link (GROUP BY into a collection) is
# exactly once whatever crashes: 200,000 records of 1,000 groups arrive in
# eight parts; after each part a serve process is SIGKILLed at a link
# failpoint (each failpoint once, at its 3rd hit) and the next one takes
# over from the committed states; a last process catches up.  Then every
# group's document, read back through `collection dump`, equals a Python
# computation over the source: count, sum, min, max, avg and the
# third-party sum_squares() (tests/plugins/agg-functions) exactly,
# approx_count_distinct within 3 x 0.81 % and approx_quantile within 1 %
# (docs/AGGREGATES.md).  One record in 1,000 is not JSON and goes to the
# dead letters; the states never show in the dump.
# LOAMS_AGG_RECORDS changes the number of records (200,000).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=${LOAMS_AGG_RECORDS:-200000}
NGROUPS=1000
points=(link.after_read link.after_decode link.after_transform link.after_target_write
  link.after_dead_letter link.before_commit link.after_commit store.write)
agg_dir="$build/tests/plugins/agg-functions/.libs"
[ -f "$agg_dir/agg-functions.so" ] || die "the test plugin $agg_dir/agg-functions.so is not built"
plugin_args+=(--plugin-dir "$agg_dir")

sql "CREATE STREAM t.s WITH (partitions = 4);
     CREATE LINK t.l FROM STREAM t.s INTO COLLECTION t.c
       TRANSFORM (SELECT json_get_str(value, '\$.c') AS _pk, count(*) AS n,
                         sum(json_get_int(value, '\$.x')) AS total,
                         min(json_get_int(value, '\$.x')) AS lo,
                         max(json_get_int(value, '\$.x')) AS hi,
                         avg(json_get_int(value, '\$.x')) AS mean,
                         sum_squares(json_get_int(value, '\$.x')) AS sq,
                         approx_count_distinct(json_get_str(value, '\$.u')) AS users,
                         approx_quantile(json_get_float(value, '\$.lat'), 0.99) AS p99
                  GROUP BY json_get_str(value, '\$.c'))
       WITH (batch_bytes = '256KiB', batch_interval = '300ms', on_error = 'dead_letter');" \
  >/dev/null || die "CREATE failed"
out=$(sql "CREATE LINK t.bad FROM STREAM t.s INTO COLLECTION t.c2
             TRANSFORM (SELECT json_get_str(value, '\$.c') AS _pk, value AS v, count(*) AS n
                        GROUP BY json_get_str(value, '\$.c'))" 2>&1) &&
  die "a column neither aggregated nor in GROUP BY passed CREATE LINK"
echo "$out" | grep -q "line 2, column 67: in the transform: 'value' is neither aggregated nor in GROUP BY" ||
  die "CREATE LINK error: $out"

/usr/bin/python3 - "$N" "$NGROUPS" >"$work/input.jsonl" <<'PY'
import json, random, sys
n, groups = int(sys.argv[1]), int(sys.argv[2])
rnd = random.Random(15)
for i in range(n):
    if i % 1000 == 999:
        print(json.dumps({"k": str(i), "v": "{\"c\": broken"}))
        continue
    c = "c%04d" % rnd.randrange(groups)
    r = {"c": c, "x": rnd.randrange(-1000, 100000), "u": "u%d" % rnd.randrange(400),
         "lat": round(rnd.lognormvariate(3, 1), 3)}
    print(json.dumps({"k": str(i), "v": json.dumps(r)}))
PY
ok "$N records of $NGROUPS groups generated"

part=$((N / ${#points[@]} + 1))
i=0
for fp in "${points[@]}"; do
  tail -n +$((i * part + 1)) "$work/input.jsonl" | head -n "$part" |
    "$host" produce t.s --data-dir "$data" --key-field k --value-field v >/dev/null 2>&1 ||
    die "produce failed"
  i=$((i + 1))
  start_node "n$i" "LOAMS_FAILPOINTS=$fp=crash@3"
  wait_dead "n$i" 60
  grep -q "failpoint.*$fp: crashing" "$work/n$i.log" || die "node n$i died, but not at $fp"
done
ok "SIGKILLed at ${points[*]}"
start_node last
wait_caught_up 120
stop_node last

"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl" ||
  die "collection dump failed"
grep -q 'loams_agg' "$work/dump.jsonl" && die "the dump shows the states"
"$host" stream read t.s --limit 1000000000 --json --data-dir "$data" >"$work/src.jsonl" ||
  die "reading the source failed"
"$host" links --json --data-dir "$data" >"$work/links.json" || die "links failed"
/usr/bin/python3 - "$work" <<'PY' >"$work/check.txt" || die "the groups differ: $(cat "$work/check.txt")"
import json, math, sys
w = sys.argv[1]
want, bad = {}, 0
for line in open(w + "/src.jsonl"):
    try:
        r = json.loads(json.loads(line)["value"])
    except ValueError:
        bad += 1
        continue
    want.setdefault(r["c"], []).append(r)
got = {d["_pk"]: d for d in map(json.loads, open(w + "/dump.jsonl"))}
errors = []
if set(got) != set(want):
    errors.append("groups: %d got, %d want" % (len(got), len(want)))
worst_d = worst_q = 0.0
for c, rows in want.items():
    d = got.get(c)
    if d is None:
        continue
    xs = [r["x"] for r in rows]
    exact = {"n": len(rows), "total": sum(xs), "lo": min(xs), "hi": max(xs),
             "mean": sum(xs) / len(xs), "sq": sum(x * x for x in xs)}
    for k, v in exact.items():
        if d.get(k) != v:
            errors.append("%s %s: %r, want %r" % (c, k, d.get(k), v))
    distinct = len({r["u"] for r in rows})
    worst_d = max(worst_d, abs(d["users"] - distinct) / distinct)
    lats = sorted(r["lat"] for r in rows)
    q = lats[int(0.99 * (len(lats) - 1))]
    worst_q = max(worst_q, abs(d["p99"] - q) / q)
    if set(d) != {"_pk", "n", "total", "lo", "hi", "mean", "sq", "users", "p99"}:
        errors.append("%s: fields %s" % (c, sorted(d)))
if worst_d > 3 * 1.04 / math.sqrt(16384):
    errors.append("distinct count error %.4f" % worst_d)
if worst_q > 0.01 + 1e-9:
    errors.append("quantile error %.4f" % worst_q)
l = json.load(open(w + "/links.json"))[0]
applied, dead = int(l["applied_records"]), int(l["dead_lettered_records"])
if (applied, dead) != (sum(map(len, want.values())), bad):
    errors.append("counters %d applied / %d dead-lettered, want %d / %d" % (
        applied, dead, sum(map(len, want.values())), bad))
print("; ".join(errors[:10]) if errors else
      "%d groups exact, distinct error <= %.4f, p99 error <= %.4f, %d dead letters" % (
          len(got), worst_d, worst_q, bad))
sys.exit(1 if errors else 0)
PY
dl=$(dlq_exact t.s t.l_dlq t.l 'not is_json(r["value"])') ||
  die "the dead letters are not exactly the broken records"
ok "after ${#points[@]} SIGKILLs: $(cat "$work/check.txt"); dead letters $dl"
