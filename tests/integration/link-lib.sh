# link-lib.sh - shared helpers of the link integration tests (sourced).
# Sets: build, src, host, work, data, plugin_home; functions to run the daemon and wait.
[ -n "${BASH_VERSION:-}" ] || { echo "link-lib.sh needs bash" >&2; exit 1; }

build=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
host="$build/core/loams-host"
work=$(mktemp -d /tmp/loams-link-test.XXXXXX)
# Plugins and scripts a test installs go here, under the build tree: the
# host refuses a plugin path others could change, and /tmp is writable by
# everyone.
plugin_home=$(mktemp -d "$build/tests/loams-link-plugins.XXXXXX")
data="$work/data"
fail=0
declare -A pid=()

# Every plugin of the build tree, and nothing installed.
plugin_args=()
for d in "$build"/plugins/*/.libs; do
  plugin_args+=(--plugin-dir "$d")
done
plugin_args+=(--no-default-plugin-dirs)
export LOAMS_PLUGIN_PATH=""

# iceberg_conformance DIR...: every Iceberg table under DIR (metadata files,
# manifest lists, manifests) read by the independent strict reader
# tests/integration/iceberg-conformance.py against the table spec.
iceberg_conformance() {
  /usr/bin/python3 "$src/tests/integration/iceberg-conformance.py" "$@"
}

# Tables a test damages on purpose (paths under $work): left unchecked.
conformance_skip=()

link_cleanup() {
  local rc=$?
  for n in "${!pid[@]}"; do
    kill -CONT "${pid[$n]}" 2>/dev/null
    kill -KILL "${pid[$n]}" 2>/dev/null
  done
  wait 2>/dev/null
  # every table a passing test wrote must conform to the Iceberg spec
  if [ "$rc" -eq 0 ] && [ "$fail" -eq 0 ] &&
    find "$work" -name '*.metadata.json' -path '*/metadata/*' | grep -q .; then
    local d roots=()
    for d in "$work"/*; do
      [ -d "$d" ] || continue
      [[ " ${conformance_skip[*]} " == *" $d "* ]] || roots+=("$d")
    done
    if [ "${#roots[@]}" -gt 0 ] && ! iceberg_conformance "${roots[@]}"; then
      echo "FAIL: the Iceberg tables this test wrote do not conform to the spec (above)"
      fail=1
      rc=1
    fi
  fi
  if [ "$fail" -ne 0 ]; then
    for f in "$work"/*.log; do
      [ -f "$f" ] || continue
      echo "----- $f (last 30 lines)"
      tail -n 30 "$f"
    done
  fi
  if [ "$fail" -ne 0 ] && [ -n "${LOAMS_TEST_KEEP:-}" ]; then
    echo "kept the test's work dir for a look: $work"
  else
    rm -rf "$work"
  fi
  rm -rf "$plugin_home"
  exit "$rc"
}
trap link_cleanup EXIT

die() { echo "FAIL: $*"; fail=1; exit 1; }
# ok MESSAGE: a passed check, with the seconds since the test started
# (a slow test's log shows which part takes the time).
ok() { echo "ok [${SECONDS}s]: $*"; }

sql() { "$host" sql --data-dir "$data" "${plugin_args[@]}" "$@"; }

# start_node NAME [ENV=VALUE...]: a serve process with a fast lease TTL.
start_node() {
  local name=$1
  shift
  env "$@" LOAMS_LOG_LEVEL=info "$host" serve --data-dir "$data" --node-id "$name" \
    "${plugin_args[@]}" --lease-ttl 1000ms --poll-interval 200ms --stop-timeout 5000ms \
    2>>"$work/$name.log" &
  pid[$name]=$!
}

stop_node() { # stop_node NAME: SIGTERM, must exit 0
  local p=${pid[$1]}
  kill -TERM "$p" 2>/dev/null
  wait "$p"
  local rc=$?
  unset "pid[$1]"
  [ "$rc" -eq 0 ] || die "node $1 exited $rc on SIGTERM"
}

wait_dead() { # wait_dead NAME SECONDS: the node must die by itself (a crash failpoint)
  local p=${pid[$1]} t=0
  while kill -0 "$p" 2>/dev/null; do
    sleep 0.2
    t=$((t + 1))
    [ "$t" -lt $(($2 * 5)) ] || die "node $1 did not crash within $2 s"
  done
  wait "$p" 2>/dev/null
  unset "pid[$1]"
}

counts() { # counts FIELD: "ALL DISTINCT" values of FIELD in the JSON lines of stdin
  /usr/bin/python3 -c '
import json,sys
v=[json.loads(l)[sys.argv[1]] for l in sys.stdin if l.strip()]
print(len(v), len(set(v)))' "$1"
}

wait_log() { # wait_log NAME PATTERN SECONDS WHAT: node NAME's log must show PATTERN in time
  local t=0
  until grep -q -- "$2" "$work/$1.log"; do
    sleep 0.3
    t=$((t + 1))
    [ "$t" -lt $(($3 * 10 / 3)) ] || die "no $4 within $3 s"
  done
}

# lag: total records not yet applied by running links (from system.links).
lag() {
  "$host" links --json --data-dir "$data" |
    /usr/bin/python3 -c 'import json,sys; print(sum(int(l["lag_records"]) for l in json.load(sys.stdin) if l["state"]=="running"))'
}

wait_caught_up() { # wait_caught_up SECONDS
  local t=0
  while :; do
    local l
    l=$(lag) || die "links --json failed"
    [ "$l" = 0 ] && return 0
    sleep 0.5
    t=$((t + 1))
    [ "$t" -lt $(($1 * 2)) ] || die "links did not catch up within $1 s (lag $l)"
  done
}

# dlq_exact SOURCE DLQ LINK IS_BAD: the dead-letter stream DLQ holds one
# dead letter of LINK for every record of stream SOURCE that failed, and
# nothing else of LINK, checked record by record: by the (partition,
# offset) of its loams.partition and loams.offset headers, with the
# source record's key, value and timestamp.  IS_BAD is a Python
# expression over r, a source record as `stream read --json` prints it
# (is_json(text) is there to use).  Prints "BAD DEAD_LETTERS"; on a
# difference prints the lost, duplicated and unexpected positions to
# stderr and fails.
dlq_exact() {
  "$host" stream read "$1" --limit 1000000000 --json --data-dir "$data" >"$work/dlq-src.jsonl" ||
    return 1
  "$host" stream read "$2" --limit 1000000000 --json --data-dir "$data" >"$work/dlq-got.jsonl" ||
    return 1
  /usr/bin/python3 - "$work/dlq-src.jsonl" "$work/dlq-got.jsonl" "$3" "$4" <<'PY'
import json, sys
def is_json(text):
    try:
        json.loads(text)
        return True
    except ValueError:
        return False
link = sys.argv[3]
is_bad = eval("lambda r: (" + sys.argv[4] + ")", {"json": json, "is_json": is_json})
src = {(r["partition"], r["offset"]): r for r in map(json.loads, open(sys.argv[1]))}
want = {pos for pos, r in src.items() if is_bad(r)}
got = {}
for d in map(json.loads, open(sys.argv[2])):
    h = d.get("headers") or {}
    if h.get("loams.link") != link:
        continue
    pos = (int(h["loams.partition"]), int(h["loams.offset"]))
    got.setdefault(pos, []).append(d)
dups = sorted(p for p, v in got.items() if len(v) > 1)
lost = sorted(want - set(got))
extra = sorted(set(got) - want)
wrong = sorted(p for p, v in got.items() if p in src and any(
    (d.get("key"), d.get("value"), d.get("timestamp")) !=
    (src[p].get("key"), src[p].get("value"), src[p].get("timestamp")) for d in v))
print(len(want), sum(len(v) for v in got.values()))
if dups or lost or extra or wrong:
    print("dead letters of %s: %d duplicated %s, %d lost %s, %d unexpected %s, %d differ %s" % (
        link, len(dups), dups[:8], len(lost), lost[:8], len(extra), extra[:8], len(wrong),
        wrong[:8]), file=sys.stderr)
    sys.exit(1)
PY
}
