#!/bin/sh
# selfcheck.sh - `loams-host selfcheck` passes with the plugins built in
# the tree (store-fs and decoder-json through the real registry and host
# API), leaves no temporary directory behind, and fails, naming what is
# missing, when the plugin path has neither plugin.
set -u
host="$top_builddir/core/loams-host"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }

set --
for d in "$top_builddir"/plugins/*/.libs; do
  [ -d "$d" ] && set -- "$@" --plugin-dir "$d"
done
TMPDIR="$tmp" "$host" selfcheck --no-default-plugin-dirs "$@" >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || fail "selfcheck exit status $rc"
grep -q "^selfcheck: store-fs: put, head, get (whole and a range), streamed write, list, delete and a refused key in $tmp/loams-selfcheck-[A-Za-z0-9]*/objects: ok$" \
  "$tmp/out" || fail "store-fs step"
grep -q '^selfcheck: decoder-json: record 0 gave id = 7, name = "ada"; record 1 failed alone: partition 0 offset 1: .*byte [0-9]*.*: ok$' \
  "$tmp/out" || fail "decoder-json step"
grep -q '^selfcheck: all checks passed$' "$tmp/out" || fail "summary line"
[ -z "$(ls "$tmp" | grep loams-selfcheck)" ] || fail "selfcheck left its temporary directory"

"$host" selfcheck --no-default-plugin-dirs >"$tmp/none" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "selfcheck without plugins: exit status $rc, expected 1"
grep -q '^selfcheck: store-fs: FAILED: no store plugin named store-fs in the plugin path$' \
  "$tmp/none" || fail "missing store-fs not reported"
grep -q '^selfcheck: decoder-json: FAILED: no decoder plugin named decoder-json in the plugin path$' \
  "$tmp/none" || fail "missing decoder-json not reported"
"$host" selfcheck --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option must be a usage error"
echo "selfcheck: all checks passed"
