# etcd-lib.sh - a real etcd for a test (sourced): started on 127.0.0.1 with
# free ports and its own data dir under the test's work dir, waited for
# until healthy, stopped by its PID when the test exits.
#
#   etcd_start DIR     starts etcd with data in DIR; sets etcd_port, etcd_pid,
#                      etcd_endpoint (127.0.0.1:PORT)
#   etcd_stop          stops it (SIGTERM, then SIGKILL after 10 s); the data
#                      dir stays, so etcd_start DIR starts the same cluster
#   etcd_restart       etcd_stop, then etcd_start on the same ports and dir
#
# Debian's etcd-server installs /usr/bin/etcd (scripts/setup.sh installs
# it for the tests): without it the test fails, saying so.
[ -n "${BASH_VERSION:-}" ] || { echo "etcd-lib.sh needs bash" >&2; exit 1; }

etcd_bin=${LOAMS_TEST_ETCD:-/usr/bin/etcd}
if [ ! -x "$etcd_bin" ]; then
  echo "FAIL: $etcd_bin is missing: install Debian's etcd-server (scripts/setup.sh deps does)"
  exit 1
fi

etcd_pid=""
etcd_port=""
etcd_peer_port=""
etcd_dir=""

# A free TCP port of 127.0.0.1 (the kernel's pick; released at once).
etcd_free_port() {
  /usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

etcd_start() {
  etcd_dir=$1
  mkdir -p "$etcd_dir"
  [ -n "$etcd_port" ] || etcd_port=$(etcd_free_port)
  [ -n "$etcd_peer_port" ] || etcd_peer_port=$(etcd_free_port)
  etcd_endpoint="127.0.0.1:$etcd_port"
  "$etcd_bin" --name loams-test --data-dir "$etcd_dir/data" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "loams-test=http://127.0.0.1:$etcd_peer_port" \
    --max-txn-ops "${etcd_max_txn_ops:-1024}" \
    --log-level warn >>"$etcd_dir/etcd.log" 2>&1 &
  etcd_pid=$!
  local i
  for i in $(seq 1 200); do
    if curl -fsS "http://127.0.0.1:$etcd_port/health" 2>/dev/null | grep -q '"health":"true"'; then
      return 0
    fi
    if ! kill -0 "$etcd_pid" 2>/dev/null; then
      echo "FAIL: etcd exited at start (port $etcd_port); its log:"
      tail -n 20 "$etcd_dir/etcd.log"
      return 1
    fi
    sleep 0.05
  done
  echo "FAIL: etcd on 127.0.0.1:$etcd_port not healthy after 10 s"
  tail -n 20 "$etcd_dir/etcd.log"
  return 1
}

etcd_stop() {
  [ -n "$etcd_pid" ] || return 0
  kill -TERM "$etcd_pid" 2>/dev/null
  local i
  for i in $(seq 1 200); do
    kill -0 "$etcd_pid" 2>/dev/null || break
    sleep 0.05
  done
  kill -KILL "$etcd_pid" 2>/dev/null
  wait "$etcd_pid" 2>/dev/null
  etcd_pid=""
}

etcd_restart() {
  etcd_stop
  etcd_start "$etcd_dir"
}

etcd_cleanup() {
  etcd_stop
}

# Stops etcd on exit, then runs the EXIT trap that was set before (the
# link tests' cleanup), with the test's exit status.
etcd_prev_trap=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
# shellcheck disable=SC2064
trap "etcd_rc_=\$?; etcd_cleanup; (exit \$etcd_rc_); ${etcd_prev_trap:-exit \$etcd_rc_}" EXIT
