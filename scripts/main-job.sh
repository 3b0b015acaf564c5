#!/bin/bash
# main-job.sh PREFIX - the main job on the embedded default (LMDB metastore
# + local object store), run with the loams-host installed under PREFIX
# (scripts/setup.sh run installs it in build/prefix):
#   1. the version and every installed plugin (a rejected one fails the job)
#      and the host's self-check;
#   2. the seed's link: a stream of support tickets, the seed statement with
#      embed() (refused: no embedding provider yet), the same link without
#      the embed column, the shipped sample of tickets produced into the
#      stream, a daemon that applies the link until it has caught up (with
#      progress), a search, system.links, what GC holds, and a clean stop.
set -euo pipefail
prefix=${1:?usage: main-job.sh PREFIX}
host="$prefix/bin/loams-host"
samples="$prefix/share/loams-host/samples"
[ -x "$host" ] || { echo "main-job: $host is not installed (run scripts/setup.sh run)" >&2; exit 1; }
say() { printf '\n==> %s\n' "$*"; }

"$host" --version
echo
"$host" --list-plugins
echo
"$host" selfcheck

data=$(mktemp -d /tmp/loams-main-job.XXXXXX)
serve_pid=
cleanup() {
  [ -n "$serve_pid" ] && kill -KILL "$serve_pid" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT
export LOAMS_DATA_DIR="$data/data"

say "CREATE STREAM support.tickets"
"$host" sql "CREATE STREAM support.tickets WITH (partitions = 4, retention = '7d');"

say "the seed's link, as written (embed() needs a provider: refused at CREATE time)"
if "$host" sql "CREATE LINK support.tickets_search
  FROM STREAM support.tickets
  INTO COLLECTION support.tickets
  TRANSFORM (
    SELECT key AS _pk,
           json_get_str(value, '\$.subject') AS subject,
           json_get_str(value, '\$.body')    AS body,
           embed('endpoint:text-embedding-3', json_get_str(value, '\$.body')) AS body_vec,
           timestamp AS ts
  )
  WITH (batch_bytes = '64MiB', batch_interval = '2s', on_error = 'dead_letter');"; then
  echo "main-job: the link with embed() was accepted, but no provider exists" >&2
  exit 1
fi

say "the same link without the embed column"
"$host" sql "CREATE LINK support.tickets_search
  FROM STREAM support.tickets
  INTO COLLECTION support.tickets
  TRANSFORM (
    SELECT key AS _pk,
           json_get_str(value, '\$.subject') AS subject,
           json_get_str(value, '\$.body')    AS body,
           timestamp AS ts
  )
  WITH (batch_bytes = '64MiB', batch_interval = '2s', on_error = 'dead_letter');"

say "produce the sample tickets"
"$host" produce support.tickets --key-field id --progress <"$samples/support-tickets.jsonl"

say "serve (the worker applies the link)"
"$host" serve --node-id main-job --log-level warn &
serve_pid=$!
total=$(wc -l <"$samples/support-tickets.jsonl")
for i in $(seq 1 120); do
  lag=$("$host" links --json | sed -n 's/.*"lag_records":[[:space:]]*\([0-9]*\).*/\1/p' | head -n 1)
  echo "  applied $((total - ${lag:-$total})) of $total records"
  [ "${lag:-1}" = 0 ] && break
  sleep 1
done
[ "${lag:-1}" = 0 ] || { echo "main-job: the link did not catch up" >&2; exit 1; }

say "search support.tickets \"printer password\""
"$host" search support.tickets "printer password" --k 5

say "system.links"
"$host" links

say "what GC holds (files no commit references wait gc_grace, 1h, before deletion)"
"$host" gc status

say "stop the daemon (SIGTERM)"
kill -TERM "$serve_pid"
wait "$serve_pid"
serve_pid=
echo "stopped cleanly"
