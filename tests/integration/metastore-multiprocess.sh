#!/bin/sh
# metastore-multiprocess.sh - several processes share one LMDB metastore.
#  1. 4 processes x 10,000 compare-and-increment transactions on one key
#     end with exactly 40,000 (and counter == the sum of each process's own
#     count, written in the same transactions).
#  2. A process SIGKILLed in the middle of its load leaves the store
#     consistent and readable; the other processes run to the end, and a
#     new process can write afterwards.  Repeated 3 times, killing at
#     different points.
#  3. A writer killed while it holds LMDB's write lock (mid-transaction)
#     blocks nobody, and its uncommitted write never shows.
#  4. With fsync on commit, 2 processes x 100 increments = 200.
set -eu

: "${top_builddir:?}"
prog="$top_builddir/tests/integration/meta-counter"
work=$(mktemp -d "${TMPDIR:-/tmp}/loams-meta-mp-XXXXXX")
pids=""
cleanup() {
  for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- 1. exact count under contention ----
d="$work/count"
mkdir -p "$d"
pids=""
for i in 1 2 3 4; do
  "$prog" incr "$d" "p$i" 10000 >"$work/count.$i.out" &
  pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "an incrementing process failed"; done
pids=""
cat "$work"/count.*.out
total=$("$prog" get "$d" counter)
[ "$total" = 40000 ] || fail "counter is $total, want 40000"
"$prog" check "$d" || fail "store inconsistent after the concurrent run"
echo "ok: 4 x 10000 increments = $total"

# ---- 2. SIGKILL mid-load ----
for round in 1 2 3; do
  d="$work/kill$round"
  mkdir -p "$d"
  pids=""
  for i in 1 2 3; do
    "$prog" incr "$d" "p$i" 3000 >"$work/kill.$i.out" &
    pids="$pids $!"
  done
  "$prog" incr "$d" victim 1000000 >/dev/null &
  victim=$!
  # kill once the victim is well into its load (a different point each round)
  want=$((round * 300))
  n=0
  tries=0
  while [ "$n" -lt "$want" ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 3000 ] || fail "victim made no progress"
    n=$("$prog" get "$d" done/victim)
  done
  kill -9 "$victim"
  wait "$victim" 2>/dev/null && fail "victim was not killed"
  for p in $pids; do wait "$p" || fail "a process failed after the kill (round $round)"; done
  pids=""
  out=$("$prog" check "$d") || fail "store inconsistent after SIGKILL (round $round): $out"
  for i in 1 2 3; do
    v=$("$prog" get "$d" "done/p$i")
    [ "$v" = 3000 ] || fail "p$i committed $v of 3000 (round $round)"
  done
  killed_at=$("$prog" get "$d" done/victim)
  [ "$killed_at" -ge "$want" ] || fail "victim count went back to $killed_at"
  # the store still takes writes from a new process
  "$prog" incr "$d" after 100 >/dev/null || fail "write after the kill failed"
  "$prog" check "$d" >/dev/null || fail "store inconsistent after the new writes"
  echo "ok: round $round: victim killed after $killed_at increments; $out"
done

# ---- 3. a writer killed holding the write lock ----
d="$work/held"
mkdir -p "$d"
"$prog" incr "$d" before 10 >/dev/null || fail "setup writes failed"
"$prog" hold-write "$d" >"$work/held.out" &
holder=$!
pids="$holder"
tries=0
until grep -q holding "$work/held.out" 2>/dev/null; do
  tries=$((tries + 1))
  [ "$tries" -lt 200 ] || fail "hold-write never took the write lock"
  sleep 0.05
done
kill -9 "$holder"
wait "$holder" 2>/dev/null || true
pids=""
timeout 30 "$prog" incr "$d" after 100 >/dev/null || fail "writers blocked by a dead writer"
[ "$("$prog" get "$d" counter)" = 110 ] || fail "counter wrong after a dead writer"
[ "$("$prog" get "$d" held)" = 0 ] || fail "the dead writer's uncommitted write is visible"
"$prog" check "$d" >/dev/null || fail "store inconsistent after a dead writer"
echo "ok: a writer killed holding the write lock blocked nobody"

# ---- 4. with fsync on commit ----
d="$work/sync"
mkdir -p "$d"
pids=""
for i in 1 2; do
  "$prog" incr "$d" "s$i" 100 --sync >/dev/null &
  pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "a synced process failed"; done
pids=""
[ "$("$prog" get "$d" counter)" = 200 ] || fail "synced counter is not 200"
echo "ok: 2 x 100 synced increments = 200"
