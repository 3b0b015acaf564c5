# http-lib.sh - shared helpers of the HTTP API tests (sourced after
# link-lib.sh, which sets build, host, work, data and the plugin args).
# Nodes listen on a free port of 127.0.0.1 (LOAMS_LISTEN, as make check
# sets it); their port is read from the log line "HTTP API listening on".
export LOAMS_LISTEN=${LOAMS_LISTEN:-127.0.0.1:0}
declare -A port=()

# http_start NAME [ENV=VALUE...] [-- SERVE-OPTION...]: starts a node and
# waits until it listens; $port[NAME] and $url (of the last node started)
# are set.
http_start() {
  local name=$1 t=0
  shift
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    envs+=("$1")
    shift
  done
  [ "${1:-}" = "--" ] && shift
  : > "$work/$name.log"
  env "${envs[@]}" LOAMS_LOG_LEVEL=${LOAMS_LOG_LEVEL:-info} "$host" serve --data-dir "$data" \
    --node-id "$name" "${plugin_args[@]}" --lease-ttl 1000ms --poll-interval 200ms \
    --stop-timeout 5000ms "$@" 2>>"$work/$name.log" &
  pid[$name]=$!
  until grep -q "HTTP API listening on" "$work/$name.log"; do
    kill -0 "${pid[$name]}" 2>/dev/null || die "node $name exited: $(tail -3 "$work/$name.log")"
    sleep 0.1
    t=$((t + 1))
    [ "$t" -lt 100 ] || die "node $name does not listen within 10 s"
  done
  port[$name]=$(sed -n 's/.*HTTP API listening on [^ ]*:\([0-9]*\) .*/\1/p' "$work/$name.log" |
    tail -1)
  url="http://127.0.0.1:${port[$name]}"
}

# call METHOD PATH [CURL-ARGS...]: prints the status; the body goes to
# $work/body, the headers to $work/headers.
call() {
  local method=$1 path=$2
  shift 2
  curl -s -o "$work/body" -D "$work/headers" -w '%{http_code}' -X "$method" "$@" "$url$path"
}

# expect STATUS METHOD PATH [CURL-ARGS...]: the call must answer STATUS.
expect() {
  local want=$1 got
  shift
  got=$(call "$@")
  [ "$got" = "$want" ] || die "$1 $2: status $got, not $want: $(head -c 600 "$work/body")"
}

# auth TOKEN: the curl argument of a bearer token.
auth() { printf 'Authorization: Bearer %s' "$1"; }

# jbody EXPR: a Python expression over d, the JSON of $work/body, printed.
jbody() {
  /usr/bin/python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
v=eval(sys.argv[2])
print(json.dumps(v) if isinstance(v,(dict,list,bool)) or v is None else v)' "$work/body" "$1"
}

# is_error CODE: $work/body is the one error shape with that code.
is_error() {
  /usr/bin/python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert list(d)==["error"], d
e=d["error"]
assert sorted(e)==["code","detail","message"], e
assert e["code"]==sys.argv[2], e
assert isinstance(e["message"],str) and e["message"], e' "$work/body" "$1" ||
    die "not a $1 error: $(head -c 600 "$work/body")"
}

# make_token NS ROLE [--expires D]: a new token, printed.
make_token() {
  local ns=$1 role=$2
  shift 2
  "$host" token create --namespace "$ns" --role "$role" "$@" --data-dir "$data" 2>/dev/null ||
    die "token create $ns $role"
}
