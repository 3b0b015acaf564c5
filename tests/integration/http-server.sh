#!/bin/bash
# http-server.sh - the HTTP server of `serve` (core/http/server.c) and its
# tokens: /healthz without a token, /readyz with one; 401 for no token, a
# malformed, unknown, revoked or expired one (WWW-Authenticate), 403 for a
# role or namespace that does not cover the route; 404 and 405 in the one
# error shape; `token create|list|revoke`; auth = off refused on an
# address other machines reach; a busy port refused; headers over the
# limit refused; a silent connection closed after http_idle_timeout, a
# connection over http_max_connections waits for a free one; ten slow
# clients (a byte a second) do not slow another client's requests; a stop
# lets a request in progress finish and answers 503 to a new one.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/http-lib.sh"
now_ms() { date +%s%3N; }

"$host" init --data-dir "$data" > /dev/null || die "init"
admin=$(make_token '*' admin)
reader=$(make_token shop read)
writer=$(make_token shop write)
[ ${#admin} -eq 66 ] && [ "${admin#loams_}" != "$admin" ] || die "token text: $admin"
"$host" token list --data-dir "$data" > "$work/list" || die "token list"
[ "$(grep -c '^[0-9a-f]\{16\} ' "$work/list")" = 3 ] || die "token list: $(cat "$work/list")"
grep -q "${admin:6:16}  \*  *admin" "$work/list" || die "list shows the admin token"
if grep -qF -- "${admin:23}" "$work/list" "$data"/meta.mdb; then die "a secret is stored"; fi
ok "token create prints the token once; list shows ids; only hashes are stored"

http_start a
expect 200 GET /healthz
[ "$(jbody 'd["status"]')" = ok ] || die "healthz body"
expect 401 GET /readyz
is_error unauthorized
grep -qi '^WWW-Authenticate: Bearer realm="loams"' "$work/headers" || die "WWW-Authenticate"
expect 200 GET /readyz -H "$(auth "$reader")"
[ "$(jbody 'd["ready"]')" = true ] || die "readyz: $(cat "$work/body")"
[ "$(jbody 'sorted(d["checks"])')" = '["metastore", "object_store", "plugins", "stream_log"]' ] ||
  die "readyz checks: $(cat "$work/body")"
expect 401 GET /readyz -H "Authorization: Basic YTpi"
is_error unauthorized
expect 401 GET /readyz -H "$(auth not-a-token)"
grep -q 'error="invalid_token"' "$work/headers" || die "invalid_token"
expect 401 GET /readyz -H "$(auth "${reader%?}x")"
is_error unauthorized
ok "healthz needs nothing; readyz 200 with a token, 401 without or with a bad one"

expect 404 GET /v1/nothing -H "$(auth "$admin")"
is_error not_found
expect 405 POST /healthz
is_error method_not_allowed
grep -qi '^Allow: GET, HEAD' "$work/headers" || die "Allow header"
ok "404, 405 (with Allow) in the error shape"

# Revoked and expired tokens.
# 5 s: long enough for the first use under a sanitizer on a busy machine.
short=$(make_token '*' read --expires 5s)
expect 200 GET /readyz -H "$(auth "$short")"
"$host" token revoke "${reader:6:16}" --data-dir "$data" > /dev/null || die "revoke"
expect 401 GET /readyz -H "$(auth "$reader")"
if "$host" token revoke "${reader:6:16}" --data-dir "$data" 2> "$work/err"; then
  die "revoked twice"
fi
grep -q "no token has the id" "$work/err" || die "revoke message"
sleep 5.2
expect 401 GET /readyz -H "$(auth "$short")"
grep -q "expired at" "$work/body" || die "expired message: $(cat "$work/body")"
if grep -qF -e "${short:23}" -e "${reader:23}" "$work"/*.log; then die "a token is in the log"; fi
ok "revoked and expired tokens are 401; no token in the log"

# Headers past http_max_header_bytes (16 KiB) are refused before any
# handler: in the error shape up to twice the limit, by libmicrohttpd past.
big=$(head -c 17000 /dev/zero | tr '\0' x)
expect 431 GET /healthz -H "X-Big: $big"
is_error headers_too_large
big=$(head -c 60000 /dev/zero | tr '\0' x)
got=$(call GET /healthz -H "X-Big: $big")
[ "$got" = 431 ] || die "60 kB of headers: status $got"
expect 200 GET /healthz -H "X-Big: ${big:0:15000}"
ok "headers over http_max_header_bytes are 431"

stop_node a
# The stop: a request in progress finishes, a new one on an open
# connection is 503, and the node exits 0.
http_start b LOAMS_FAILPOINTS=http.before_handler=sleep:2000@2
/usr/bin/python3 "$src/tests/integration/http-stop.py" 127.0.0.1 "${port[b]}" "${pid[b]}" \
  > "$work/stop.out" || die "stop: $(cat "$work/stop.out")"
cat "$work/stop.out"
wait "${pid[b]}" || die "node b exited $? after SIGTERM"
unset "pid[b]"
ok "SIGTERM: the request in progress finishes, a new one is 503, the node exits 0"

# auth = off is for loopback only; a busy port is refused.
if LOAMS_AUTH=off "$host" serve --data-dir "$data" --listen 0.0.0.0:0 "${plugin_args[@]}" \
  2> "$work/err"; then
  die "auth = off on 0.0.0.0 accepted"
fi
grep -q "auth = off is refused with listen = 0.0.0.0:0" "$work/err" || die "$(cat "$work/err")"
http_start d
LOAMS_AUTH=off "$host" serve --data-dir "$data" --listen "127.0.0.1:${port[d]}" \
  "${plugin_args[@]}" 2> "$work/err"
rc=$?
[ "$rc" = 1 ] || die "a second node on a busy port exited $rc"
grep -q "cannot listen on 127.0.0.1:${port[d]}" "$work/err" || die "$(cat "$work/err")"
stop_node d
ok "auth = off refused on 0.0.0.0; a busy port is an error"

# Slow clients: 10 connections that send a byte a second, and a silent
# one; another client's requests keep their latency.
http_start e LOAMS_HTTP_IDLE_TIMEOUT=2s LOAMS_HTTP_MAX_CONNECTIONS=14
/usr/bin/python3 "$src/tests/integration/http-slow-clients.py" 127.0.0.1 "${port[e]}" \
  > "$work/slow.out" || die "slow clients: $(cat "$work/slow.out")"
cat "$work/slow.out"
stop_node e
ok "slow clients do not hold the server"

# At most http_max_connections are open: with 4 held by silent clients, a
# fifth waits in the listen backlog until the idle timeout closes one.
http_start f LOAMS_HTTP_IDLE_TIMEOUT=2s LOAMS_HTTP_MAX_CONNECTIONS=4 LOAMS_HTTP_THREADS=1
/usr/bin/python3 "$src/tests/integration/http-slow-clients.py" 127.0.0.1 "${port[f]}" \
  --limit 4 > "$work/limit.out" || die "connection limit: $(cat "$work/limit.out")"
cat "$work/limit.out"
stop_node f
ok "a connection over http_max_connections waits for a free one"
