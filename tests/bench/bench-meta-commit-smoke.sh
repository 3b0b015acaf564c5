#!/bin/bash
# bench-meta-commit-smoke.sh - the commit latency benchmark runs end to end
# on LMDB and on a real etcd (etcd-lib.sh) with tiny counts and prints a
# row of figures for each (no timing goal).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
: "${top_builddir:?}"
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d /tmp/loams-bench-commit.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/integration/etcd-lib.sh
. "$src/tests/integration/etcd-lib.sh"
etcd_start "$work/etcd" || exit 1
out=$("$top_builddir/tests/bench/bench-meta-commit" --smoke --dir "$work" \
  --etcd "etcd://$etcd_endpoint/bench") || { echo "FAIL: bench-meta-commit failed: $out"; exit 1; }
echo "$out"
rows=$(echo "$out" | grep -cE '^(lmdb|etcd) +20( +[0-9]+\.[0-9]+){5} +[0-9]+$')
[ "$rows" = 2 ] || { echo "FAIL: expected 2 result rows, got $rows"; exit 1; }
echo "ok: bench-meta-commit printed its rows"
