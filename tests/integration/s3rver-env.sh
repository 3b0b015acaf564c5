# s3rver-env.sh - sourced by the tests and benchmarks that need an
# S3-compatible server: npm's s3rver (pinned), installed on first use into
# the same npm folder as DuckDB (duckdb-env.sh: $LOAMS_TEST_NPM_DIR, default
# ~/.cache/loams-test-npm).  s3rver keeps objects in a directory; it is
# started on 127.0.0.1 on a free port with its own directory, and stopped
# by its PID.
#
#   loams_s3rver_install            fails loudly (never skips)
#   loams_s3rver_start DIR BUCKET   sets loams_s3rver_pid, loams_s3rver_port
#                                   and loams_s3rver_endpoint
#   loams_s3rver_stop
#
# s3rver 3.7.1 implements no AbortMultipartUpload, ListMultipartUploads or
# DeleteObjects (sigv4-server.py serves those to the tests).
# Credentials: s3rver accepts the pair S3RVER / S3RVER, exported here as
# AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY for the clients of the test.

. "$(dirname "${BASH_SOURCE[0]}")/duckdb-env.sh"

LOAMS_S3RVER_VERSION=3.7.1

loams_s3rver_install() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "FAIL: node and npm are needed to install s3rver (apt-get install nodejs npm)." >&2
    return 1
  fi
  local pkg="$loams_duckdb_dir/node_modules/s3rver/package.json"
  if [ -f "$pkg" ] && grep -q "\"version\": \"$LOAMS_S3RVER_VERSION\"" "$pkg"; then
    return 0
  fi
  mkdir -p "$loams_duckdb_dir" || return 1
  (
    command -v flock >/dev/null 2>&1 && flock 9
    if [ -f "$pkg" ] && grep -q "\"version\": \"$LOAMS_S3RVER_VERSION\"" "$pkg"; then
      exit 0
    fi
    [ -f "$loams_duckdb_dir/package.json" ] ||
      echo '{"name":"loams-test-npm","private":true}' >"$loams_duckdb_dir/package.json"
    echo "installing s3rver@$LOAMS_S3RVER_VERSION into $loams_duckdb_dir" >&2
    cd "$loams_duckdb_dir" && npm install --no-audit --no-fund "s3rver@$LOAMS_S3RVER_VERSION" >&2
  ) 9>"$loams_duckdb_dir/.install-lock"
  if [ ! -f "$pkg" ]; then
    echo "FAIL: npm install s3rver failed in $loams_duckdb_dir (see above)." >&2
    return 1
  fi
}

# A free TCP port on 127.0.0.1.
loams_free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

loams_s3rver_start() {
  local dir=$1 bucket=$2
  mkdir -p "$dir" || return 1
  loams_s3rver_port=$(loams_free_port) || return 1
  # s3rver's continuation tokens use DES, which Node 18's OpenSSL 3 keeps
  # in its legacy provider
  node --openssl-legacy-provider "$loams_duckdb_dir/node_modules/s3rver/bin/s3rver.js" -d "$dir" -a 127.0.0.1 \
    -p "$loams_s3rver_port" --silent --configure-bucket "$bucket" >"$dir.log" 2>&1 &
  loams_s3rver_pid=$!
  loams_s3rver_endpoint="http://127.0.0.1:$loams_s3rver_port"
  export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
  local i
  for i in $(seq 1 150); do
    if curl -s -o /dev/null "$loams_s3rver_endpoint/$bucket" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$loams_s3rver_pid" 2>/dev/null; then
      echo "FAIL: s3rver exited at start:" >&2
      cat "$dir.log" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "FAIL: s3rver did not answer on $loams_s3rver_endpoint within 30 s" >&2
  return 1
}

loams_s3rver_stop() {
  if [ -n "${loams_s3rver_pid:-}" ]; then
    kill "$loams_s3rver_pid" 2>/dev/null
    wait "$loams_s3rver_pid" 2>/dev/null
    loams_s3rver_pid=
  fi
}
