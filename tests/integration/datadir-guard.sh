#!/bin/bash
# datadir-guard.sh - a data dir whose parts are damaged, missing or of
# another data dir is refused with a message, never mapped or taken as new;
# the read commands change nothing:
#  1. meta.mdb and log/data.mdb truncated inside their meta pages and past
#     them: links, stream read, sql and serve exit 1 naming the file, its
#     size and the size expected (they died of SIGBUS, rc 135);
#  2. `: > meta.mdb` beside the log, then serve: refused at once, the log
#     untouched (serve purged the streams and retention deleted the data);
#     meta.mdb removed, then CREATE STREAM: refused (it reused stream id 1
#     and showed the old records); the log emptied or removed: refused; the metastore
#     of another data dir: refused naming both ids; with the right
#     meta.mdb back, every record is there;
#  3. read-only: links, stream read/list/describe, collection dump, table
#     describe/scan, search and gc status on a copy create and change no
#     file (every file's checksum and mtime; without the LMDB lock files,
#     also those), and work for an unprivileged user on a copy nobody may
#     write (they failed creating meta.mdb-gate);
#  4. init creates a data dir only where nothing is, once; sql does not
#     create one in a directory that holds other files.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"

N=200
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" >"$work/input.jsonl"
sql "CREATE STREAM t.s WITH (partitions = 2);
     CREATE LINK t.lc FROM STREAM t.s FORMAT json INTO COLLECTION t.c
       TRANSFORM (SELECT json_get_str(value, '\$.id') AS _pk, subject, body)
       WITH (batch_interval = '100ms');
     CREATE LINK t.lt FROM STREAM t.s FORMAT json INTO TABLE t.tab
       TRANSFORM (SELECT json_get_str(value, '\$.id') AS id, subject)
       WITH (batch_interval = '100ms');" >/dev/null || die "CREATE failed"
"$host" produce t.s --data-dir "$data" --key-field id <"$work/input.jsonl" >/dev/null ||
  die "produce failed"
start_node a
wait_caught_up 60
stop_node a
[ "$("$host" stream read t.s --data-dir "$data" --partition 0 | wc -l)" -gt 0 ] || die "no records"

# --- 1. truncated LMDB files ---
# run_refused LABEL PATTERN CMD...: CMD must exit 1 (not a signal) and say PATTERN
run_refused() {
  local label=$1 pattern=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq 1 ] || { cat "$work/err"; die "$label: exit status $rc, not 1 (135 is SIGBUS)"; }
  grep -qF -- "$pattern" "$work/err" || { cat "$work/err"; die "$label: no '$pattern' in the message"; }
}
# serve_refused LABEL PATTERN DIR: serve exits 1 within 10 s, saying PATTERN
serve_refused() {
  local label=$1 pattern=$2 dir=$3 t=0
  "$host" serve --data-dir "$dir" --node-id x "${plugin_args[@]}" 2>"$work/serve.err" &
  local p=$!
  while kill -0 "$p" 2>/dev/null && [ $t -lt 50 ]; do
    sleep 0.2
    t=$((t + 1))
  done
  if kill -0 "$p" 2>/dev/null; then
    kill -KILL "$p"
    wait "$p" 2>/dev/null
    tail -n 5 "$work/serve.err"
    die "$label: serve still running after 10 s"
  fi
  wait "$p"
  local rc=$?
  [ "$rc" -eq 1 ] || { tail -n 5 "$work/serve.err"; die "$label: serve exited $rc, not 1"; }
  grep -qF -- "$pattern" "$work/serve.err" ||
    { tail -n 5 "$work/serve.err"; die "$label: serve did not say '$pattern'"; }
}

# Sizes inside the two meta pages, and 4 pages (the metastore's tables and
# the log's records lie past them); the log also at half its size (its
# newest records, which an append-only log keeps at the end).
for file in meta.mdb log/data.mdb; do
  whole=$(stat -c %s "$data/$file")
  [ "$whole" -ge 40960 ] || die "$file is only $whole bytes: the cuts below would not cut it"
  sizes="100 4096 8191 16384"
  [ "$file" = log/data.mdb ] && sizes="$sizes $((whole / 2))"
  for size in $sizes; do
    cut="$work/cut"
    rm -rf "$cut"
    cp -a "$data" "$cut"
    truncate -s "$size" "$cut/$file"
    msg="$cut/$file is truncated: it is $size bytes"
    run_refused "$file at $size: links" "$msg" "$host" links --data-dir "$cut"
    run_refused "$file at $size: stream read" "$msg" "$host" stream read t.s --data-dir "$cut"
    run_refused "$file at $size: sql" "$msg" "$host" sql --data-dir "$cut" "CREATE STREAM t.x"
    serve_refused "$file at $size: serve" "$msg" "$cut"
    [ "$(stat -c %s "$cut/$file")" -eq "$size" ] || die "$file at $size: the file was changed"
  done
  grep -q "expected\|says it holds" "$work/serve.err" || die "$file: no size expected in the message"
done
ok "truncated meta.mdb and log/data.mdb (100, 4096, 8191, 16384 bytes; the log at half) refused by links, stream read, sql, serve"

# --- 2. parts that disagree ---
sum_log() { md5sum <"$1/log/data.mdb"; }
cut="$work/cut"
rm -rf "$cut"
cp -a "$data" "$cut"
before=$(sum_log "$cut")
: >"$cut/meta.mdb"
serve_refused "emptied meta.mdb" "meta.mdb is empty" "$cut"
grep -qF "$cut/log/data.mdb" "$work/serve.err" || die "the message does not name the log"
[ "$(sum_log "$cut")" = "$before" ] || die "serve changed the log beside an emptied metastore"
[ ! -s "$cut/meta.mdb" ] || die "serve wrote the emptied meta.mdb"
run_refused "emptied meta.mdb: CREATE STREAM" "meta.mdb is empty" \
  "$host" sql --data-dir "$cut" "CREATE STREAM t.other"
rm "$cut/meta.mdb"
run_refused "removed meta.mdb: CREATE STREAM" "meta.mdb is missing" \
  "$host" sql --data-dir "$cut" "CREATE STREAM t.s WITH (partitions = 2)"
[ ! -e "$cut/meta.mdb" ] || die "CREATE STREAM made a new meta.mdb beside the old log"
cp -p "$data/meta.mdb" "$cut/meta.mdb"
n=$(for p in 0 1; do "$host" stream read t.s --data-dir "$cut" --partition $p; done | wc -l)
[ "$n" -eq "$N" ] || die "with meta.mdb restored, t.s holds $n records, not $N"
: >"$cut/log/data.mdb"
serve_refused "emptied log" "log/data.mdb is empty" "$cut"
[ ! -s "$cut/log/data.mdb" ] || die "serve wrote the emptied log"
run_refused "emptied log: stream read" "log/data.mdb is empty" \
  "$host" stream read t.s --data-dir "$cut"
rm -r "$cut/log"
serve_refused "removed log" "log/data.mdb is missing" "$cut"
[ ! -e "$cut/log" ] || die "serve made a new log beside the old metastore"
other="$work/other"
"$host" init --data-dir "$other" >"$work/init.out" || die "init failed"
rm -rf "$cut"
cp -a "$data" "$cut"
cp "$other/meta.mdb" "$cut/meta.mdb"
run_refused "meta.mdb of another data dir" "different data dirs" "$host" links --data-dir "$cut"
grep -qF "$(sed -n 's/.*data dir id \([0-9a-f-]*\)).*/\1/p' "$work/init.out")" "$work/err" ||
  die "the message does not name the other data dir's id"
ok "emptied, removed or foreign meta.mdb and an emptied or removed log refused; nothing changed"

# --- 3. read-only ---
snapshot() { # every entry with size, mode and mtime; every file's checksum
  (cd "$1" && find . ! -name "${2:-.nothing}" -printf '%p %s %m %T@\n' | sort &&
    find . -type f ! -name "${2:-.nothing}" -exec md5sum {} + | sort)
}
read_all() { # read_all DIR [RUNNER...]: every read command, each must print something
  # (only the commands that load plugins take the plugin options)
  local d=$1
  shift
  local c extra
  while IFS= read -r c; do
    case $c in links* | gc* | stream*) extra=() ;; *) extra=("${plugin_args[@]}") ;; esac
    # shellcheck disable=SC2086
    "$@" "$host" $c --data-dir "$d" "${extra[@]}" >"$work/ro.out" 2>"$work/ro.err" ||
      { cat "$work/ro.err"; die "read-only: '$c' failed"; }
    [ -s "$work/ro.out" ] || die "read-only: '$c' printed nothing"
  done <<'EOF'
links
links --json
stream read t.s --json
stream list
stream describe t.s
collection dump t.c
table describe t.tab
table scan t.tab
search t.c printer
gc status
EOF
}
# In place (a copy elsewhere would need its table relocated: the Iceberg
# metadata names its files by absolute path); no process has it open.
ro="$data"
rm -f "$ro/meta.mdb-lock" "$ro/meta.mdb-gate" "$ro/log/lock.mdb"
snapshot "$ro" >"$work/before"
sleep 1.1 # an mtime written now would differ
read_all "$ro"
snapshot "$ro" >"$work/after"
diff "$work/before" "$work/after" || die "read-only commands created or changed files"
ok "read commands create and change no file (without lock files: every file identical)"
"$host" links --data-dir "$ro" >/dev/null || die "links failed" # lock files are back
[ -e "$ro/log/lock.mdb" ] || "$host" sql --data-dir "$ro" "SELECT * FROM system.links" >/dev/null
[ -e "$ro/log/lock.mdb" ] && [ -e "$ro/meta.mdb-lock" ] || die "no LMDB lock files"
snapshot "$ro" lock.mdb | grep -v 'meta.mdb-lock' >"$work/before"
sleep 1.1
read_all "$ro"
snapshot "$ro" lock.mdb | grep -v 'meta.mdb-lock' >"$work/after"
diff "$work/before" "$work/after" || die "read-only commands created or changed data files"
ok "read commands beside LMDB's lock files change no other file"
chmod -R a+rX,a-w "$ro"
chmod 755 "$work"
if [ "$(id -u)" -eq 0 ]; then
  command -v setpriv >/dev/null || die "setpriv (util-linux) is needed to read as another user"
  read_all "$ro" setpriv --reuid=65534 --regid=65534 --clear-groups
  who="user 65534"
else
  read_all "$ro"
  who="$(id -un)"
fi
chmod -R u+w "$ro"
ok "read commands work for $who on a data dir nobody may write"

# --- 4. init ---
new="$work/new"
"$host" init --data-dir "$new" >"$work/init.out" || die "init in a missing directory failed"
grep -q "created data dir $new (data dir id [0-9a-f-]\{36\})" "$work/init.out" ||
  die "init said: $(cat "$work/init.out")"
run_refused "init twice" "is a data dir already" "$host" init --data-dir "$new"
mkdir "$work/home"
echo notes >"$work/home/notes.txt"
run_refused "sql in a foreign directory" "is not empty" \
  "$host" sql --data-dir "$work/home" "CREATE STREAM t.s"
[ ! -e "$work/home/meta.mdb" ] || die "sql made a metastore in a foreign directory"
run_refused "links in an empty directory" "loams-host init" "$host" links --data-dir "$new/../home"
ok "init once where nothing is; no data dir made in a foreign directory"
