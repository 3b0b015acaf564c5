#!/bin/bash
# link-on-error.sh - a stream mixing valid and invalid JSON under on_error
# = skip and = fail gives exactly the documented result (dead_letter is
# checked record by record by link-exactly-once.sh):
#   skip: every valid record applied, every invalid one counted as skipped;
#   fail: the link stops failed at the first invalid record, with the error
#         and the record's partition and offset in system.links; another
#         link on the same stream keeps running.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=300
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" |
  awk 'NR % 50 == 0 { print "not json " NR; next } { print }' >"$work/input.txt"
bad=$(grep -c '^not json' "$work/input.txt")
good=$((N - bad))
sql "CREATE STREAM t.s WITH (partitions = 1);
     CREATE LINK t.skipper FROM STREAM t.s INTO COLLECTION t.c1
       TRANSFORM (SELECT offset AS _pk, subject) WITH (batch_interval = '200ms', on_error = 'skip');
     CREATE LINK t.failer FROM STREAM t.s INTO COLLECTION t.c2
       TRANSFORM (SELECT offset AS _pk, subject) WITH (batch_interval = '200ms', on_error = 'fail');" \
  >/dev/null || die "CREATE failed"
"$host" produce t.s --data-dir "$data" <"$work/input.txt" >/dev/null 2>&1 || die "produce failed"
start_node a
wait_caught_up 60
stop_node a
"$host" links --json --data-dir "$data" >"$work/links.json"
/usr/bin/python3 - "$work/links.json" "$good" "$bad" <<'PY' || die "system.links is not as documented"
import json, sys
links = {l["link"]: l for l in json.load(open(sys.argv[1]))}
good, bad = int(sys.argv[2]), int(sys.argv[3])
s = links["t.skipper"]
assert s["state"] == "running", s
assert (int(s["applied_records"]), int(s["skipped_records"])) == (good, bad), s
f = links["t.failer"]
assert f["state"] == "failed", f
assert int(f["error_partition"]) == 0 and int(f["error_offset"]) == 49, f
assert "partition 0 offset 49" in f["error"] and "JSON" in f["error"], f["error"]
assert int(f["applied_records"]) == 0, f   # nothing of the failing batch applied
PY
n=$("$host" collection dump t.c1 --data-dir "$data" "${plugin_args[@]}" | wc -l)
[ "$n" = "$good" ] || die "skip: the collection holds $n documents, want $good"
ok "on_error = skip: $good applied, $bad skipped; on_error = fail: link failed at offset 49 with its error"
