#!/bin/bash
# link-yield.sh - more running links in a namespace than the node's
# max_per_namespace: the runs that hold the slots are asked to yield after
# task_slice (at a point where everything read is committed), so every link
# gets turns and all of them catch up, each record applied exactly once.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

L=5
N=200
for i in $(seq 1 $L); do
  sql "CREATE STREAM t.s$i WITH (partitions = 1);
       CREATE LINK t.l$i FROM STREAM t.s$i INTO COLLECTION t.c$i
         TRANSFORM (SELECT key AS _pk, json_get_str(value, '\$.body') AS body)
         WITH (batch_interval = '100ms')" >/dev/null || die "CREATE $i failed"
done
start_node a LOAMS_MAX_PER_NAMESPACE=2 LOAMS_TASK_SLICE=1s
# Records keep arriving in every stream while the node runs.
for round in 1 2 3 4; do
  for i in $(seq 1 $L); do
    for j in $(seq 1 $((N / 4))); do
      echo "{\"id\":\"r$round-$j\",\"body\":\"link $i round $round record $j\"}"
    done | "$host" produce "t.s$i" --data-dir "$data" --key-field id >/dev/null ||
      die "produce to t.s$i failed"
  done
  sleep 1
done
wait_caught_up 60
grep -q "asked to yield" "$work/a.log" || die "no run was asked to yield"
grep -q "yielding the slot to a waiting task" "$work/a.log" || die "no link yielded"
stop_node a
for i in $(seq 1 $L); do
  got=$("$host" collection dump "t.c$i" --data-dir "$data" "${plugin_args[@]}" | counts _pk)
  [ "$got" = "$N $N" ] || die "t.c$i holds '$got' documents (all, distinct), want $N $N"
done
ok "$L links, 2 slots: every link caught up, $N documents each, once"
exit 0
