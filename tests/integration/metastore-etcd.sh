#!/bin/bash
# metastore-etcd.sh - the metastore and lease contract tests, and the etcd
# backend's own tests, run against a real etcd started on 127.0.0.1: the
# same test binaries as on LMDB, pointed at etcd by LOAMS_TEST_META
# (tests/unit/meta_under_test.h).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
build=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
work=$(mktemp -d /tmp/loams-etcd-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/integration/etcd-lib.sh
. "$src/tests/integration/etcd-lib.sh"
etcd_start "$work/etcd" || exit 1

fail=0
for t in test_metastore test_lease test_metastore_etcd; do
  if LOAMS_TEST_META="etcd://$etcd_endpoint/contract" CK_DEFAULT_TIMEOUT=120 \
    "$build/tests/unit/$t" >"$work/$t.out" 2>&1; then
    echo "ok: $t on etcd: $(grep -E '^[0-9]+%' "$work/$t.out")"
  else
    echo "FAIL: $t on etcd:"
    cat "$work/$t.out"
    fail=1
  fi
done
exit $fail
