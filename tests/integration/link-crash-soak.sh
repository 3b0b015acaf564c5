#!/bin/bash
# link-crash-soak.sh - SIGKILL at random, then check everything record by
# record.  Two serve nodes run three links with on_error = 'dead_letter'
# over one stream of 4 partitions: into a collection (SQL), a table (SQL)
# and a graph (Lua).  Records arrive in batches while the nodes run; some
# fail for every link (not JSON, a transform error) and some for one link
# only (a row without _pk the collection refuses, a value json_get_int
# refuses in the table's SELECT, a node id the graph refuses).  At random
# moments one of the nodes is killed with SIGKILL and started again (its
# leases expire and the other node, or itself, takes the links over), at
# least LOAMS_SOAK_KILLS times (50).  Then the links catch up and every
# target and every dead-letter stream is checked record by record: each
# valid record once in each target (rows by id in the table, documents by
# _pk in the collection, nodes by id in the graph), each failed record
# once in its link's dead-letter stream (by partition and offset, with the
# source's key, value and timestamp), and the links' counters exact.
# Prints the kills, records, bad records, dead letters, duplicates, losses
# and the duration.  LOAMS_SOAK_SEED makes a run repeatable.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

kills_want=${LOAMS_SOAK_KILLS:-50}
seed=${LOAMS_SOAK_SEED:-$$}
batch=${LOAMS_SOAK_BATCH:-150}
RANDOM=$seed
t0=$SECONDS

sql "CREATE STREAM t.s WITH (partitions = 4);
     CREATE LINK t.lc FROM STREAM t.s INTO COLLECTION t.c
       TRANSFORM (SELECT CASE WHEN json_get_str(value, '\$.kind') = 'nopk' THEN NULL
                              ELSE json_get_str(value, '\$.id') END AS _pk,
                         json_get_int(value, '\$.n') AS n,
                         abs(CASE WHEN json_get_str(value, '\$.kind') = 'boom'
                                  THEN -9223372036854775807 - 1 ELSE 0 END) AS zero)
       WITH (batch_bytes = '8KiB', batch_interval = '150ms', on_error = 'dead_letter');
     CREATE LINK t.lt FROM STREAM t.s INTO TABLE t.t
       TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, json_get_int(value, '\$.n') AS n,
                         json_get_int(value, '\$.m') AS m,
                         abs(CASE WHEN json_get_str(value, '\$.kind') = 'boom'
                                  THEN -9223372036854775807 - 1 ELSE 0 END) AS zero)
       WITH (batch_bytes = '16KiB', batch_interval = '250ms', on_error = 'dead_letter');
     CREATE LINK t.lg FROM STREAM t.s INTO GRAPH t.g
       TRANSFORM LUA \$\$
         function transform(rec)
           local r = loams.json_decode(rec.value)
           if r.kind == 'boom' then error('boom record ' .. r.id) end
           local id = r.id
           if r.kind == 'longid' then id = id .. string.rep('x', 1100) end
           return { _node = 'rec:' .. id, _label = 'Rec', n = r.n }
         end
       \$\$
       WITH (batch_bytes = '8KiB', batch_interval = '200ms', on_error = 'dead_letter');" \
  >/dev/null || die "CREATE failed"

# Batch b of records: ids b-0.., about one in nine fails somewhere.
gen() { # gen BATCH SEED
  /usr/bin/python3 -c '
import json, random, sys
b, rnd = int(sys.argv[1]), random.Random(int(sys.argv[2]))
for i in range(int(sys.argv[3])):
    rid = "%d-%d" % (b, i)
    kind = rnd.choice(["ok"] * 40 + ["notjson", "boom", "nopk", "str", "longid"])
    if kind == "notjson":
        v = "{\"id\": \"%s\", broken" % rid
    else:
        r = {"id": rid, "n": rnd.randrange(1000), "m": 7, "kind": kind, "pad": "p" * rnd.randrange(200)}
        if kind == "str":
            r["m"] = "seven"
        v = json.dumps(r)
    print(json.dumps({"k": rid if rnd.random() < 0.8 else "hot", "v": v}))' "$1" "$2" "$batch"
}
produce_batch() { # produce_batch BATCH
  gen "$1" $((seed + $1)) | "$host" produce t.s --data-dir "$data" --key-field k --value-field v \
    >/dev/null 2>>"$work/produce.log"
}

# Every kill: wait a random 0.2-1.4 s while a batch arrives, SIGKILL one
# node at random (the other keeps running), start it again.
kills=0
batches=0
start_node a
start_node b
while [ "$kills" -lt "$kills_want" ]; do
  produce_batch "$batches" &
  producer=$!
  ms=$((200 + RANDOM % 1200))
  sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
  victim=$([ $((RANDOM % 2)) -eq 0 ] && echo a || echo b)
  kill -KILL "${pid[$victim]}" 2>/dev/null && kills=$((kills + 1))
  wait "${pid[$victim]}" 2>/dev/null
  wait "$producer" || die "producing batch $batches failed: $(tail -n 3 "$work/produce.log")"
  batches=$((batches + 1))
  start_node "$victim"
done
wait_caught_up 150
stop_node a
stop_node b
# Each start of a link run claims its lease: the links moved again and again.
claims=$(cat "$work"/a.log "$work"/b.log | grep -c "claimed (source links")
[ "$claims" -gt $((kills / 4)) ] || die "only $claims link runs in $kills kills"

# Targets, record by record.
"$host" collection dump t.c --data-dir "$data" "${plugin_args[@]}" >"$work/c.jsonl" ||
  die "collection dump failed"
"$host" table scan t.t --limit 100000000 --data-dir "$data" "${plugin_args[@]}" >"$work/t.jsonl" ||
  die "table scan failed"
"$host" graph t.g nodes --data-dir "$data" "${plugin_args[@]}" >"$work/g.jsonl" ||
  die "graph nodes failed"
"$host" stream read t.s --limit 1000000000 --json --data-dir "$data" >"$work/src.jsonl" ||
  die "reading the source failed"
"$host" links --json --data-dir "$data" >"$work/links.json" || die "links failed"
/usr/bin/python3 - "$work" >"$work/targets.txt" <<'PY' || die "a target is not exact: $(cat "$work/targets.txt")"
import json, sys
w = sys.argv[1]
def val(r):
    try:
        return json.loads(r["value"])
    except ValueError:
        return None
src = [val(json.loads(l)) for l in open(w + "/src.jsonl")]
fails_all = lambda v: v is None or v["kind"] == "boom"
good = {
    "t.lc": [v for v in src if not fails_all(v) and v["kind"] != "nopk"],
    "t.lt": [v for v in src if not fails_all(v) and v["kind"] != "str"],
    "t.lg": [v for v in src if not fails_all(v) and v["kind"] != "longid"],
}
got = {
    "t.lc": [(d["_pk"], d["n"]) for d in map(json.loads, open(w + "/c.jsonl"))],
    "t.lt": [(r["id"], r["n"]) for r in map(json.loads, open(w + "/t.jsonl"))],
    "t.lg": [(n["id"][4:], n["properties"]["n"]) for n in map(json.loads, open(w + "/g.jsonl"))],
}
links = {l["link"]: l for l in json.load(open(w + "/links.json"))}
bad_out, report = 0, []
for link in ("t.lc", "t.lt", "t.lg"):
    want = {(v["id"], v["n"]) for v in good[link]}
    ids = [i for i, _ in got[link]]
    dups = len(ids) - len(set(ids))
    lost = len(want - set(got[link]))
    extra = len(set(got[link]) - want)
    l = links[link]
    counters = (int(l["applied_records"]), int(l["dead_lettered_records"]))
    exact = counters == (len(good[link]), len(src) - len(good[link]))
    report.append("%s %d rows, %d duplicated, %d lost, %d unexpected, counters %s" % (
        link, len(ids), dups, lost, extra, "exact" if exact else "%r" % (counters,)))
    bad_out += dups + lost + extra + (not exact)
print("; ".join(report))
sys.exit(1 if bad_out else 0)
PY
ok "targets: $(cat "$work/targets.txt")"

# Dead letters, record by record.
total_bad=0
total_dl=0
for link in lc lt lg; do
  case $link in
  lc) also='json.loads(r["value"])["kind"] == "nopk"' ;;
  lt) also='json.loads(r["value"])["kind"] == "str"' ;;
  lg) also='json.loads(r["value"])["kind"] == "longid"' ;;
  esac
  dl=$(dlq_exact t.s "t.${link}_dlq" "t.$link" \
    "not is_json(r[\"value\"]) or json.loads(r[\"value\"])[\"kind\"] == \"boom\" or $also") ||
    die "t.$link: the dead letters are not exactly the failed records"
  set -- $dl
  [ "$1" = "$2" ] || die "t.$link: $1 failed records but $2 dead letters"
  total_bad=$((total_bad + $1))
  total_dl=$((total_dl + $2))
done
records=$(wc -l <"$work/src.jsonl")
ok "soak (seed $seed): $kills SIGKILLs of serve, $records records in $batches batches," \
  "$total_bad failed records over 3 links, $total_dl dead letters, 0 duplicated, 0 lost," \
  "$claims link runs, $((SECONDS - t0)) s"
