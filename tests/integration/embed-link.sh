#!/bin/bash
# embed-link.sh - embed() end to end against a mock OpenAI-compatible
# server (tests/integration/mock_embed_server.py, 127.0.0.1 only):
#   1. the seed's statement (DESIGN §09 §1) is refused at CREATE LINK while
#      the namespace has no provider, with the statement to run; an API key
#      given in clear is refused without being shown;
#   2. after CREATE EMBEDDING PROVIDER it runs as written: the mock answers
#      429 (Retry-After: 1) and 500 first, the node is SIGKILLed right after
#      its third answered request (failpoint embed.after_response) and
#      restarted; then every document's vector equals the mock's (l2 score
#      1), every request carried at most max_batch_inputs texts, no text was
#      answered twice (the cache), the retry after the 429 waited >= 1 s,
#      and system.embedding_cache counts the hits of the restart;
#   3. a provider that stays down pauses a link with on_error = fail with
#      the provider's message; after RESUME every record is applied;
#   4. a missing key, a refused key (api_key_file) and a wrong dimension
#      count each fail the link with their documented message;
#   5. tokens_per_minute is kept: in the request log no window of time
#      carries more tokens than the bucket allows;
#   6. no API key appears in any output of the run.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "$(dirname "$0")/link-lib.sh"
. "$(dirname "$0")/http-lib.sh"

KEY="sk-loams-test-7f3a9c1e5b"
WRONG="sk-wrong-key-0d2e4f6a8c"
export OPENAI_API_KEY="$KEY"
mock_pid=""
mock_log="$work/mock.jsonl"
/usr/bin/python3 "$src/tests/integration/mock_embed_server.py" --port-file "$work/port" \
  --log "$mock_log" --key "$KEY" --dims 8 2>"$work/mock.log" &
mock_pid=$!
pid[mock]=$mock_pid
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || die "the mock server did not start"
port=$(cat "$work/port")
base="http://127.0.0.1:$port"
control() { /usr/bin/python3 -c '
import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/control", data=sys.argv[2].encode(),
    headers={"Content-Type": "application/json"})).read()' "$base" "$1" || die "control $1"; }
link_field() { # link_field LINK FIELD
  "$host" links --json --data-dir "$data" | /usr/bin/python3 -c '
import json, sys
print({l["link"]: l for l in json.load(sys.stdin)}[sys.argv[1]][sys.argv[2]])' "$1" "$2"
}
wait_state() { # wait_state LINK STATE SECONDS
  local t=0
  until [ "$(link_field "$1" state)" = "$2" ]; do
    sleep 0.3
    t=$((t + 1))
    [ "$t" -lt $(($3 * 10 / 3)) ] || die "$1 did not become $2 within $3 s ($(link_field "$1" error))"
  done
}

# ---- 1. refused without a provider -------------------------------------
N=120
head -n "$N" "$src/tests/fixtures/support-tickets.jsonl" >"$work/tickets.jsonl"
sql "CREATE STREAM support_tickets WITH (partitions = 2)" >/dev/null || die "CREATE STREAM"
seed="CREATE LINK tickets_search
  FROM STREAM support_tickets
  INTO COLLECTION tickets
  TRANSFORM (
    SELECT key AS _pk,
           json_get_str(value, '\$.subject') AS subject,
           json_get_str(value, '\$.body')    AS body,
           embed('endpoint:text-embedding-3', json_get_str(value, '\$.body')) AS body_vec,
           timestamp AS ts
  )
  WITH (batch_bytes = '64MiB', batch_interval = '2s', on_error = 'dead_letter');"
out=$(sql "$seed" 2>&1) && die "the seed's link was created without a provider"
echo "$out" | grep -q "no embedding provider default.endpoint: create it first, e.g. CREATE EMBEDDING PROVIDER default.endpoint USING openai" ||
  die "the refusal does not give the statement to run: $out"
out=$(sql "CREATE EMBEDDING PROVIDER endpoint USING openai WITH (model = 'm', dimensions = 8,
             api_key = '$WRONG')" 2>&1) && die "a key in clear was accepted"
echo "$out" | grep -q "an API key is never stored" || die "key in clear: $out"
case "$out" in *"$WRONG"*) die "the refusal shows the key" ;; esac
ok "CREATE LINK refused with the statement to run; a key in clear refused unseen"

# ---- 2. the seed's link ---------------------------------------------------
sql "CREATE EMBEDDING PROVIDER endpoint USING openai WITH (base_url = '$base',
       model = 'text-embedding-3', dimensions = 8, api_key_env = 'OPENAI_API_KEY',
       max_batch_inputs = 16, max_concurrent_requests = 1)" >/dev/null || die "CREATE EMBEDDING PROVIDER"
sql "$seed" >/dev/null || die "the seed's CREATE LINK failed after CREATE EMBEDDING PROVIDER"
sql "SELECT * FROM system.embedding_providers" >"$work/providers.txt" || die "system.embedding_providers"
grep -q "default.endpoint.*embed-openai.*text-embedding-3.*env OPENAI_API_KEY" "$work/providers.txt" ||
  die "system.embedding_providers: $(cat "$work/providers.txt")"
"$host" produce support_tickets --data-dir "$data" --key-field id <"$work/tickets.jsonl" >/dev/null 2>&1 ||
  die "produce"
control '{"faults": ["429:1", "500"]}'
start_node a LOAMS_FAILPOINTS=embed.after_response=crash@3
wait_dead a 60
sent_before=$(grep -c '"status": 200' "$mock_log")
start_node b
wait_caught_up 60
stop_node b
[ "$(link_field default.tickets_search applied_records)" = "$N" ] || die "not every ticket applied"
/usr/bin/python3 - "$mock_log" "$work/tickets.jsonl" "$sent_before" <<'PY' || die "the request log is wrong"
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
bodies = {json.loads(l)["body"] for l in open(sys.argv[2])}
answered = [e for e in log if e["status"] == 200 and not e.get("malformed")]
assert all(e["n"] <= 16 for e in log), [e["n"] for e in log]
texts = [t for e in answered for t in e["texts"]]
assert len(texts) == len(set(texts)), "a text was answered twice"
assert set(texts) == bodies, (len(set(texts)), len(bodies))
assert all(e["model"] == "text-embedding-3" and e["dims"] == 8 for e in log)
first429 = next(i for i, e in enumerate(log) if e["status"] == 429)
assert log[first429 + 1]["t"] - log[first429]["t"] >= 0.99, "Retry-After not honoured"
assert log[first429 + 1]["status"] == 500, log[first429 + 1]
assert int(sys.argv[3]) >= 3, sys.argv[3]
print("requests %d (answered %d) for %d distinct texts" % (len(log), len(answered), len(bodies)))
PY
ok "seed link: batches <= 16, each text answered once across the crash, Retry-After honoured"
"$host" collection dump tickets --data-dir "$data" "${plugin_args[@]}" >"$work/dump.jsonl" || die "dump"
# Each document's vector, found by a nearest-neighbour search for the
# mock's vector of its body: through the HTTP API of one serve process (a
# CLI process per search would start the host 120 times).
http_start q LOAMS_AUTH=off
/usr/bin/python3 - "$work/dump.jsonl" "$src/tests/integration/mock_embed_server.py" "$url" <<'PY' ||
import json, sys, importlib.util, urllib.parse, urllib.request
spec = importlib.util.spec_from_file_location("mock", sys.argv[2])
mock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mock)
docs = [json.loads(l) for l in open(sys.argv[1])]
assert len(docs) == 120, len(docs)
for d in docs:
    v = mock.vector(d["body"], 8)
    q = urllib.parse.urlencode({"vector": json.dumps(v), "k": 1, "metric": "l2"})
    with urllib.request.urlopen(sys.argv[3] + "/v1/collections/default.tickets/search?" + q) as r:
        hit = json.load(r)["hits"][0]
    assert hit["score"] == 1 and hit["doc"]["body"] == d["body"], (d["_pk"], hit)
PY
  die "a vector differs from the mock's"
stop_node q
sql "SELECT * FROM system.embedding_cache" --json >"$work/cache.json" || die "system.embedding_cache"
/usr/bin/python3 - "$work/cache.json" "$work/tickets.jsonl" <<'PY' || die "system.embedding_cache: $(cat "$work/cache.json")"
import json, sys
c = json.loads(open(sys.argv[1]).read())
bodies = {json.loads(l)["body"] for l in open(sys.argv[2])}
assert c["entries"] == len(bodies) and c["puts"] == len(bodies), c
assert c["hits"] >= 1, c
PY
ok "every vector equals the mock's; the cache holds each text once and served the restart"

# ---- 3. a provider that stays down ---------------------------------------
sql "CREATE STREAM down.s; CREATE EMBEDDING PROVIDER down.p USING openai WITH (base_url = '$base',
       model = 'm-down', dimensions = 8, api_key_env = 'OPENAI_API_KEY', retry_for = '2s',
       max_attempts = 3);
     CREATE LINK down.l FROM STREAM down.s INTO COLLECTION down.c
       TRANSFORM (SELECT key AS _pk, embed('p', CAST(value AS TEXT)) AS v)
       WITH (batch_interval = '100ms', on_error = 'fail')" >/dev/null || die "down: DDL"
for i in 1 2 3 4 5; do echo "{\"id\":\"d$i\",\"x\":$i}"; done |
  "$host" produce down.s --data-dir "$data" --key-field id >/dev/null 2>&1 || die "produce down.s"
control '{"down": true}'
start_node c
wait_state down.l failed 30
err=$(link_field down.l error)
echo "$err" | grep -q "embedding provider down.p is unavailable: 3 attempts" || die "down: $err"
echo "$err" | grep -q "HTTP 503" || die "down: no provider message: $err"
control '{"down": false}'
sql "RESUME LINK down.l" >/dev/null || die "RESUME"
wait_caught_up 30
stop_node c
[ "$(link_field down.l applied_records)" = 5 ] || die "down: records lost after RESUME"
ok "a provider that stays down fails the link with its message; RESUME applies every record"

# ---- 4. missing key, refused key, wrong dimensions -----------------------
printf '%s\n' "$WRONG" >"$work/wrong.key"
chmod 600 "$work/wrong.key"
sql "CREATE STREAM bad.s;
     CREATE EMBEDDING PROVIDER bad.nokey USING openai WITH (base_url = '$base', model = 'm',
       dimensions = 8, api_key_env = 'LOAMS_TEST_UNSET_KEY');
     CREATE EMBEDDING PROVIDER bad.wrongkey USING openai WITH (base_url = '$base', model = 'm',
       dimensions = 8, api_key_file = '$work/wrong.key');
     CREATE EMBEDDING PROVIDER bad.dims USING openai WITH (base_url = '$base', model = 'm-dims',
       dimensions = 8, api_key_env = 'OPENAI_API_KEY');
     CREATE LINK bad.l1 FROM STREAM bad.s INTO COLLECTION bad.c1
       TRANSFORM (SELECT key AS _pk, embed('nokey', CAST(value AS TEXT)) AS v) WITH (on_error = 'fail');
     CREATE LINK bad.l2 FROM STREAM bad.s INTO COLLECTION bad.c2
       TRANSFORM (SELECT key AS _pk, embed('wrongkey', CAST(value AS TEXT)) AS v) WITH (on_error = 'fail')" \
  >/dev/null || die "bad: DDL"
echo '{"id":"b1"}' | "$host" produce bad.s --data-dir "$data" --key-field id >/dev/null 2>&1 || die "produce bad.s"
start_node d
wait_state bad.l1 failed 30
wait_state bad.l2 failed 30
stop_node d
link_field bad.l1 error | grep -q "the environment variable LOAMS_TEST_UNSET_KEY (api_key_env) is not set" ||
  die "missing key: $(link_field bad.l1 error)"
e2=$(link_field bad.l2 error)
echo "$e2" | grep -q "HTTP 401 .*Incorrect API key provided: \*\*\*\* (check the API key: api_key_file)" ||
  die "refused key: $e2"
control '{"faults": ["dims:3"]}'
sql "CREATE LINK bad.l3 FROM STREAM bad.s INTO COLLECTION bad.c3
       TRANSFORM (SELECT key AS _pk, embed('dims', CAST(value AS TEXT)) AS v) WITH (on_error = 'fail')" \
  >/dev/null || die "bad.l3"
start_node e
wait_state bad.l3 failed 30
stop_node e
link_field bad.l3 error | grep -q "vector 0 has 3 dimensions, expected 8 (the provider is configured with dimensions = 8)" ||
  die "wrong dims: $(link_field bad.l3 error)"
ok "missing key, refused key and wrong dimensions fail the link with their messages"

# ---- 5. tokens per minute --------------------------------------------------
sql "CREATE STREAM rl.s WITH (partitions = 2);
     CREATE EMBEDDING PROVIDER rl.p USING openai WITH (base_url = '$base', model = 'rl-model',
       dimensions = 8, api_key_env = 'OPENAI_API_KEY', max_batch_inputs = 8,
       tokens_per_minute = 12000, max_concurrent_requests = 4);
     CREATE LINK rl.l FROM STREAM rl.s INTO COLLECTION rl.c
       TRANSFORM (SELECT key AS _pk, embed('p', json_get_str(value, '\$.body')) AS v)
       WITH (batch_interval = '100ms')" >/dev/null || die "rl: DDL"
/usr/bin/python3 -c '
import json
for i in range(150):
    print(json.dumps({"id": "r%d" % i, "body": "rate limited text number %d " % i + "x" * 40}))' |
  "$host" produce rl.s --data-dir "$data" --key-field id >/dev/null 2>&1 || die "produce rl.s"
start_node f
wait_caught_up 90
stop_node f
/usr/bin/python3 - "$mock_log" <<'PY' || die "tokens_per_minute was not kept"
import json, sys
log = [json.loads(l) for l in open(sys.argv[1])]
rl = sorted((e for e in log if e["model"] == "rl-model" and e["status"] == 200), key=lambda e: e["t"])
tpm = 12000.0
cap = tpm / 60  # one second's worth
biggest = max(e["tokens"] for e in rl)
total = sum(e["tokens"] for e in rl)
for i in range(len(rl)):
    s = 0
    for j in range(i, len(rl)):
        s += rl[j]["tokens"]
        allowed = cap + (rl[j]["t"] - rl[i]["t"]) * tpm / 60 + biggest
        assert s <= allowed + 1e-6, (i, j, s, allowed)
span = rl[-1]["t"] - rl[0]["t"]
assert span >= (total - cap - biggest) / (tpm / 60) - 0.5, (total, span)
print("%d requests, %d tokens over %.1f s (budget %.0f tokens/s)" % (len(rl), total, span, tpm / 60))
PY
ok "tokens_per_minute kept in every window of the request log"

# ---- 6. no key anywhere ----------------------------------------------------
"$host" --list-plugins --verbose "${plugin_args[@]}" >"$work/list.log" 2>&1
for f in "$work"/*.log "$work"/*.txt "$work"/*.json "$work"/*.jsonl; do
  [ -f "$f" ] || continue
  if grep -q -e "$KEY" -e "$WRONG" "$f"; then die "an API key appears in $(basename "$f")"; fi
done
if grep -a -r -q -e "$KEY" -e "$WRONG" "$data"; then die "an API key is stored in the data dir"; fi
ok "no API key in any log, listing, view or the data dir"
