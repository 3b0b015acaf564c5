#!/bin/bash
# table-relocate.sh - a data dir copied elsewhere (cp -a) keeps its Iceberg
# table through `loams-host table relocate`:
#  1. a table link (small batches, compaction and expiry every second, so
#     the metadata holds append and replace snapshots and DELETED entries)
#     over 2 partitions; the data dir is copied to a longer path;
#  2. at the copy, before relocating: the link fails, and its error (in
#     the log and in `links`) and `table scan` name the command to run
#     (they failed on every retry);
#  3. relocate refuses a wrong --from or --to, and a table whose link runs
#     (its lease is held); then moves every name: a new commit through the
#     core's fenced transaction (the old metadata, lists and manifests stay
#     as they were, now obsolete for GC), here through a server's API
#     (`--server`: an admin token, the link paused); a second run on the
#     data dir has nothing to do;
#  4. the link continues at the copy with more records; python3-avro
#     follows version-hint -> metadata -> manifest list -> manifests (every
#     field id, length and count checked by table-files.py), every name is
#     under the copy, and DuckDB reads exactly the produced rows there;
#     the original data dir still reads as before.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/http-lib.sh"
. "$src/tests/integration/duckdb-env.sh"
loams_duckdb_install || die "DuckDB (@duckdb/node-api) cannot be installed"

N1=240
N2=160
head -n $((N1 + N2)) "$src/tests/fixtures/support-tickets.jsonl" >"$work/all.jsonl"
head -n $N1 "$work/all.jsonl" >"$work/first.jsonl"
tail -n $N2 "$work/all.jsonl" >"$work/second.jsonl"

sql "CREATE STREAM t.s WITH (partitions = 2);
     CREATE LINK t.l FROM STREAM t.s FORMAT json INTO TABLE t.tab
       TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, subject)
       WITH (batch_bytes = '8KiB', batch_interval = '100ms', maintenance_interval = '1s',
             snapshot_keep = '3', snapshot_max_age = '1s');" >/dev/null || die "CREATE failed"
"$host" produce t.s --data-dir "$data" --key-field id --batch 20 <"$work/first.jsonl" >/dev/null ||
  die "produce failed"
start_node a
wait_caught_up 60
sleep 2.5 # a maintenance pass after the last commit
stop_node a
grep -q "maintained t.tab" "$work/a.log" || die "no maintenance commit of t.tab"

# --- 1. copy ---
moved="$work/restored/at/another/path/data"
mkdir -p "$(dirname "$moved")"
cp -a "$data" "$moved"
old_root="file://$data/objects"
new_root="file://$moved/objects"
scan_ids() { # scan_ids DIR: the ids of the table's rows, sorted
  "$host" table scan t.tab --limit 100000 --data-dir "$1" "${plugin_args[@]}" |
    /usr/bin/python3 -c 'import json,sys; [print(json.loads(l)["id"]) for l in sys.stdin]' | sort
}
scan_ids "$data" >"$work/before.ids"
[ "$(wc -l <"$work/before.ids")" -eq $N1 ] || die "the original table holds $(wc -l <"$work/before.ids") rows, not $N1"

# --- 2. at the copy, the link and the reader say what to run ---
if "$host" table scan t.tab --data-dir "$moved" "${plugin_args[@]}" 2>"$work/scan.err" >/dev/null; then
  die "table scan at the copy read the original's files"
fi
grep -qF "loams-host table relocate t.tab --from $old_root --to $new_root" "$work/scan.err" ||
  { cat "$work/scan.err"; die "table scan does not name the command"; }
data_a=$data
data=$moved
start_node b
wait_log b "loams-host table relocate t.tab --from $old_root --to $new_root --data-dir DIR'" 20 \
  "link error naming table relocate"
# the link's error, as `links` shows it while the link retries, names it too
"$host" links --json --data-dir "$moved" >"$work/links.json" || die "links --json failed"
/usr/bin/python3 - "$work/links.json" "loams-host table relocate t.tab --from $old_root --to $new_root" <<'PY' ||
import json, sys
l = {r["link"]: r for r in json.load(open(sys.argv[1]))}["t.l"]
assert l["state"] == "running" and sys.argv[2] + " --data-dir DIR'" in (l["error"] or ""), l
PY
  { cat "$work/links.json"; die "links does not show the error naming table relocate"; }
"$host" links --data-dir "$moved" | grep -qF "loams-host table relocate t.tab --from $old_root --to $new_root --data-dir DIR" ||
  die "the links table does not show the error naming table relocate"
stop_node b
ok "at a copy, the link and table scan fail naming: loams-host table relocate t.tab --from $old_root --to $new_root"

# --- 3. relocate ---
relocate() { "$host" table relocate t.tab --data-dir "$moved" "${plugin_args[@]}" "$@"; }
sum_meta() { (cd "$moved/objects/t/tab/metadata" && md5sum -- * | sort); }
sum_meta >"$work/meta-before"
ptr_before=$("$host" table describe t.tab --data-dir "$data_a" "${plugin_args[@]}" | sed -n 's/^metadata  //p')
relocate --from "file:///elsewhere/objects" >"$work/out" 2>"$work/err" && die "a wrong --from was taken"
grep -qF "its files are named under '$old_root'" "$work/err" || { cat "$work/err"; die "wrong --from: $(cat "$work/err")"; }
relocate --to "/elsewhere/objects" >"$work/out" 2>"$work/err" && die "a wrong --to was taken"
grep -qF "object store is at '$new_root'" "$work/err" || { cat "$work/err"; die "wrong --to: $(cat "$work/err")"; }
cmp -s <(sum_meta) "$work/meta-before" || die "a refused relocate wrote files"
# a link that runs holds its lease: relocate waits for it to stop
data=$data_a
start_node c
sleep 1.5
"$host" table relocate t.tab --data-dir "$data_a" "${plugin_args[@]}" >"$work/out" 2>"$work/err" &&
  die "relocate ran while the link ran"
grep -q "runs now" "$work/err" || { cat "$work/err"; die "relocate beside a running link: $(cat "$work/err")"; }
stop_node c
data=$moved
# through the server of the copy: its link fails until the relocation,
# so it is paused first (the relocation takes the link's lease)
admin=$(make_token '*' admin)
reader=$(make_token t read)
http_start e
"$host" sql --server "$url" --token "$admin" "PAUSE LINK t.l" >/dev/null || die "PAUSE LINK"
rrelocate() { "$host" table relocate t.tab --server "$url" "$@"; }
rrelocate --token "$reader" >"$work/out" 2>"$work/err" && die "relocate with a read token"
grep -q "403 forbidden" "$work/err" || die "relocate, read token: $(cat "$work/err")"
for i in $(seq 1 50); do
  rrelocate --token "$admin" --from "$data_a/objects/" --to "$moved/objects" >"$work/out" \
    2>"$work/err" && break
  grep -q "runs now" "$work/err" || { cat "$work/err"; die "relocate through the server failed"; }
  sleep 0.2 # the paused link's run is stopping
done
grep -q "^relocated t.tab: commit t/tab/metadata/.*metadata.json" "$work/out" || die "relocate said: $(cat "$work/out")"
# file-based readers follow version-hint.text: the relocation announces
# its commit there at once, not at the link's next run
meta_dir="$moved/objects/t/tab/metadata"
ver=$(sed -n 's|^relocated t.tab: commit t/tab/metadata/0*\([0-9][0-9]*\)-.*|\1|p' "$work/out")
[ "$(cat "$meta_dir/version-hint.text")" = "$ver" ] ||
  die "version-hint.text says $(cat "$meta_dir/version-hint.text") after the relocation to version $ver"
grep -qF "$old_root/" "$meta_dir/v$ver.metadata.json" && die "v$ver.metadata.json names the old root"
grep -qF "$new_root/t/tab" "$meta_dir/v$ver.metadata.json" || die "v$ver.metadata.json does not name the copy"
"$host" sql --server "$url" --token "$admin" "RESUME LINK t.l" >/dev/null || die "RESUME LINK"
stop_node e
# nothing was edited in place: every file there before is unchanged but
# the hint (the one file a commit rewrites)
grep -v " version-hint.text\$" "$work/meta-before" >"$work/meta-before.x" && mv "$work/meta-before.x" "$work/meta-before"
join -v1 -1 2 -2 2 <(sort -k2 "$work/meta-before") <(sum_meta | sort -k2) | grep . &&
  die "relocate changed or removed files in place"
while read -r sum name; do
  [ "$(md5sum <"$moved/objects/t/tab/metadata/$name" | cut -d' ' -f1)" = "$sum" ] ||
    die "relocate rewrote $name in place"
done <"$work/meta-before"
relocate >"$work/out" 2>"$work/err" || { cat "$work/err"; die "a second relocate failed"; }
grep -q "nothing to do" "$work/out" || die "a second relocate said: $(cat "$work/out")"
"$host" gc status --data-dir "$moved" >"$work/gc" || die "gc status failed"
ok "relocate refuses a wrong --from/--to and a running link, commits once (through the API), edits nothing in place"

# --- 4. the link continues at the copy ---
"$host" produce t.s --data-dir "$moved" --key-field id --batch 20 <"$work/second.jsonl" >/dev/null ||
  die "produce at the copy failed"
start_node d
wait_caught_up 60
stop_node d
! grep -q "relocate" "$work/d.log" || die "the link at the copy still fails: $(grep relocate "$work/d.log" | tail -n 1)"
tab="$moved/objects/t/tab"
/usr/bin/python3 "$src/tests/integration/table-files.py" "$tab" "$work/codecs.txt" \
  >"$work/files.txt" 2>"$work/summary.txt" ||
  { tail -n 3 "$work/summary.txt"; die "python3-avro cannot follow the relocated table"; }
grep -v "^file://$moved/objects/t/tab/" "$work/files.txt" && die "a data file is named outside the copy"
cut -d' ' -f2 "$work/codecs.txt" | grep -v "^file://$moved/objects/t/tab/" &&
  die "a manifest or list is named outside the copy"
loams_duckdb_node "$src/tests/integration/table-duckdb.mjs" "$work/files.txt" id \
  >"$work/duck.jsonl" 2>"$work/duck.err" || { cat "$work/duck.err"; die "DuckDB cannot read the relocated table"; }
/usr/bin/python3 - "$work/all.jsonl" "$work/duck.jsonl" <<'PY' || die "DuckDB's rows differ from the source"
import json, sys
want = sorted((r["id"], r["subject"]) for r in map(json.loads, open(sys.argv[1])))
got = sorted((r["id"], r["subject"]) for r in map(json.loads, open(sys.argv[2])))
if got != want:
    print("rows: %d, distinct ids %d, want %d" % (len(got), len({g[0] for g in got}), len(want)))
    sys.exit(1)
PY
scan_ids "$data_a" | cmp -s - "$work/before.ids" || die "the original data dir's table changed"
ok "after relocate the link continues; DuckDB reads all $((N1 + N2)) rows at the copy; the original is intact"
