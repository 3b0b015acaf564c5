#!/bin/bash
# store-s3.sh - the store-s3 plugin against an S3-compatible server and an
# independent signer: starts s3rver and sigv4-server.py (botocore checks
# every signature) on 127.0.0.1, runs tests/unit/test_store_s3 against
# them, reads back with boto3 what the plugin wrote (multipart included)
# and checks that no multipart upload was left behind, that every signed
# request passed the botocore check and that the SlowDown answers were
# retried.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/s3rver-env.sh"
top_builddir=${top_builddir:-$(pwd)}
die() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

work=$(mktemp -d "${TMPDIR:-/tmp}/loams-store-s3.XXXXXX") || die "mktemp"
sig_pid=
cleanup() {
  loams_s3rver_stop
  [ -n "$sig_pid" ] && kill "$sig_pid" 2>/dev/null && wait "$sig_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

loams_s3rver_install || die "s3rver is not installed"
loams_s3rver_start "$work/s3rver" loams-test || die "s3rver did not start"
ok "s3rver on $loams_s3rver_endpoint"

# a session token as long as STS's (over 1000 bytes)
token="FQoGZXIvYXdzE+session/token==$(printf 'Ab9/%.0s' $(seq 1 300))"
/usr/bin/python3 "$here/sigv4-server.py" "$work/sig.port" AKIDTEST "sig-secret/+=" eu-west-3 \
  "$token" >"$work/sig.log" 2>&1 &
sig_pid=$!
for _ in $(seq 1 100); do [ -s "$work/sig.port" ] && break; sleep 0.2; done
[ -s "$work/sig.port" ] || { cat "$work/sig.log"; die "sigv4-server.py did not start"; }

LOAMS_TEST_S3_ENDPOINT=$loams_s3rver_endpoint LOAMS_TEST_S3_BUCKET=loams-test \
  LOAMS_TEST_SIGV4_ENDPOINT="http://127.0.0.1:$(cat "$work/sig.port")" \
  LOAMS_TEST_SIGV4_TOKEN=$token \
  "$top_builddir/tests/unit/test_store_s3" || die "test_store_s3 failed"

/usr/bin/python3 "$here/store-s3-readback.py" "$loams_s3rver_endpoint" loams-test \
  "http://127.0.0.1:$(cat "$work/sig.port")" "$token" ||
  die "boto3 read-back"

good=$(grep -c '^ok ' "$work/sig.log")
bad=$(grep '^bad ' "$work/sig.log" | grep -vc 'signature differs' || true)
wrong=$(grep -c '^bad .*signature differs' "$work/sig.log")
[ "$bad" = 0 ] || { grep '^bad ' "$work/sig.log"; die "requests failed the botocore check"; }
grep -q '^ok DELETE /sig/p/mp/aborted?uploadId=' "$work/sig.log" ||
  die "the aborted writer did not abort its multipart upload"
grep -q '^ok DELETE /sig/p/mp/failpart-1?uploadId=' "$work/sig.log" ||
  die "a writer whose part was refused did not abort its multipart upload"
grep -q '^ok PUT /sig/file/from-file' "$work/sig.log" ||
  die "no request signed with the shared credentials file's profile"
[ "$good" -ge 8 ] || die "only $good signed requests passed the botocore check"
# the wrong-secret test: its request (and its retries: none for a 403) fail
[ "$wrong" -ge 1 ] || die "a wrong secret passed the botocore check"
grep -q '^ok GET /sig/?continuation-token=' "$work/sig.log" ||
  die "no continued listing was checked"
[ "$(grep -c '^ok PUT /sig/p/flaky-1' "$work/sig.log")" = 3 ] ||
  die "flaky-1 was not sent three times (two 503 SlowDown, then success)"
ok "$good requests passed botocore's SigV4 check (session token, query strings); a wrong secret did not"
